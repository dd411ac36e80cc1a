"""Battle Honours (rules: Ranks and Battle Honours, Battle Traits, Weapon Enhancements,
Psychic Fortitudes, Crusade Relics). Each test names the rule it checks."""

from __future__ import annotations

import copy
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Literal

import pytest

from app.rules.aftermath import BattleHonourDecision, answer_battle_honour
from app.rules.cards import BattleHonour, BattleScar, CrusadeCard, Upgrade
from app.rules.data import HonourCategory
from app.rules.dice import DieRoll, EnteredDice
from app.rules.errors import RuleError
from app.rules.honours import (
    HonourRequest,
    WeaponChoice,
    gain_battle_honour,
    open_categories,
    relics_open,
    weapon_enhancements_to_choose,
    weapons_to_enhance,
)
from tests.factories import book, card, character, force

TRAIT = HonourCategory.BATTLE_TRAIT
FORTITUDE = HonourCategory.PSYCHIC_FORTITUDE
WEAPON = HonourCategory.WEAPON_ENHANCEMENT
RELIC = HonourCategory.CRUSADE_RELIC

# The four Battle Trait tables, in D6 order, as printed in the rules (lines 212-246).
CHARACTER_TRAITS = (
    "swift_and_agile",
    "heroic_constitution",
    "resilient",
    "deadly_charge",
    "inspiring_hero",
    "tactical_experience",
)
VEHICLE_TRAITS = (
    "enhanced_engines",
    "elite_crew",
    "improved_shielding",
    "armourbane",
    "repair_systems",
    "blessed_hull",
)
MONSTER_TRAITS = (
    "unstoppable",
    "apex_predator",
    "thickened_hide",
    "frenzied",
    "regenerates",
    "terrifying",
)
OTHER_TRAITS = (
    "fleet_of_foot",
    "veteran_warriors",
    "grizzled",
    "headhunters",
    "cool_headed",
    "battle_tested",
)
# The Weapon Enhancement tables (lines 260-276).
RANGED = (
    "auto_loader",
    "armour_piercing",
    "high_calibre",
    "improved_sights",
    "accelerator",
    "master_worked",
)
MELEE = ("heirloom", "razor_edged", "brutal", "finely_balanced", "shredder", "fleshbane")
# Psychic Fortitudes (lines 283-287): 1-2, 3-4, 5-6.
FORTITUDES = {
    1: "psychic_might",
    2: "psychic_might",
    3: "adamantium_will",
    4: "adamantium_will",
    5: "master_of_lore",
    6: "master_of_lore",
}

WeaponType = Literal["ranged", "melee", "both"]

INFANTRY = {"IMPERIUM", "INFANTRY"}
CHARACTER_KW = {"IMPERIUM", "INFANTRY", "CHARACTER"}
VEHICLE_KW = {"IMPERIUM", "VEHICLE"}
MONSTER_KW = {"TYRANIDS", "MONSTER"}
KNIGHT_KW = {"IMPERIUM", "VEHICLE", "TITANIC"}
PSYKER_KW = {"IMPERIUM", "INFANTRY", "PSYKER"}

SERGEANT_BOLTER = WeaponChoice("Sergeant", "Bolt rifle", "ranged")
CAPTAIN_SWORD = WeaponChoice("Captain", "Power sword", "melee")
CAPTAIN_PISTOL = WeaponChoice("Captain", "Bolt pistol", "ranged")


def gain(
    unit: CrusadeCard,
    category: HonourCategory,
    dice: Sequence[int] = (),
    *,
    choice: Sequence[str] = (),
    weapon: WeaponChoice | None = None,
    relics: Collection[str] = (),
) -> tuple[CrusadeCard, BattleHonour]:
    request = HonourRequest(category, tuple(choice), weapon)
    return gain_battle_honour(
        unit, request, book(), EnteredDice(dice), relics_in_order_of_battle=relics
    )


def refused(
    unit: CrusadeCard,
    category: HonourCategory,
    code: str,
    dice: Sequence[int] = (),
    *,
    choice: Sequence[str] = (),
    weapon: WeaponChoice | None = None,
    relics: Collection[str] = (),
) -> RuleError:
    before = copy.deepcopy(unit)
    with pytest.raises(RuleError) as error:
        gain(unit, category, dice, choice=choice, weapon=weapon, relics=relics)
    assert error.value.code == code
    assert unit == before
    return error.value


def held(
    category: HonourCategory, *ids: str, weapon: str | None = None, model: str | None = None
) -> BattleHonour:
    return BattleHonour(category, ids, 1, weapon=weapon, model=model)


def values(rolls: Sequence[DieRoll]) -> list[tuple[int, int]]:
    return [(r.sides, r.value) for r in rolls]


# --- Battle Traits ----------------------------------------------------------------------


class TestBattleTraits:
    @pytest.mark.parametrize(
        ("keywords", "table"),
        [
            (CHARACTER_KW, CHARACTER_TRAITS),
            ({"IMPERIUM", "BIKER", "CHARACTER"}, CHARACTER_TRAITS),
            (VEHICLE_KW, VEHICLE_TRAITS),
            ({"IMPERIUM", "VEHICLE", "CHARACTER"}, VEHICLE_TRAITS),
            ({"IMPERIUM", "VEHICLE", "CHARACTER", "TITANIC"}, VEHICLE_TRAITS),
            (MONSTER_KW, MONSTER_TRAITS),
            ({"TYRANIDS", "MONSTER", "CHARACTER"}, MONSTER_TRAITS),
            (INFANTRY, OTHER_TRAITS),
            ({"IMPERIUM", "BIKER"}, OTHER_TRAITS),
            ({"CHAOS", "CAVALRY"}, OTHER_TRAITS),
        ],
        ids=[
            "character",
            "character_biker",
            "vehicle",
            "character_vehicle_uses_vehicle_table",
            "titanic_character_vehicle",
            "monster",
            "character_monster_uses_monster_table",
            "infantry",
            "biker",
            "cavalry",
        ],
    )
    @pytest.mark.parametrize("roll", [1, 2, 3, 4, 5, 6])
    def test_a_d6_roll_on_the_units_trait_table(
        self, keywords: set[str], table: tuple[str, ...], roll: int
    ) -> None:
        honoured, honour = gain(card(keywords=keywords), TRAIT, [roll])
        assert honour.category == TRAIT
        assert honour.entry_ids == (table[roll - 1],)
        assert values(honour.dice) == [(6, roll)]
        assert honoured.honours == (honour,)

    @pytest.mark.parametrize(
        ("keywords", "table"),
        [
            (CHARACTER_KW, CHARACTER_TRAITS),
            (VEHICLE_KW, VEHICLE_TRAITS),
            ({"IMPERIUM", "VEHICLE", "CHARACTER"}, VEHICLE_TRAITS),
            (MONSTER_KW, MONSTER_TRAITS),
            (INFANTRY, OTHER_TRAITS),
        ],
    )
    @pytest.mark.parametrize("index", range(6))
    def test_or_choose_any_trait_from_the_units_table(
        self, keywords: set[str], table: tuple[str, ...], index: int
    ) -> None:
        _, honour = gain(card(keywords=keywords), TRAIT, choice=[table[index]])
        assert honour.entry_ids == (table[index],)
        assert honour.dice == ()

    @pytest.mark.parametrize(
        ("keywords", "foreign"),
        [
            (INFANTRY, "swift_and_agile"),
            (CHARACTER_KW, "fleet_of_foot"),
            ({"IMPERIUM", "VEHICLE", "CHARACTER"}, "inspiring_hero"),
            (VEHICLE_KW, "unstoppable"),
            (MONSTER_KW, "blessed_hull"),
        ],
    )
    def test_a_trait_from_another_units_table_cannot_be_chosen(
        self, keywords: set[str], foreign: str
    ) -> None:
        refused(card(keywords=keywords), TRAIT, "honour_unknown", choice=[foreign])

    def test_a_duplicate_roll_is_rerolled_and_every_die_recorded(self) -> None:
        unit = card(honours=(held(TRAIT, "grizzled"),))
        honoured, honour = gain(unit, TRAIT, [3, 3, 5])
        assert honour.entry_ids == ("cool_headed",)
        assert values(honour.dice) == [(6, 3), (6, 3), (6, 5)]
        assert [h.entry_ids for h in honoured.honours] == [("grizzled",), ("cool_headed",)]

    def test_rerolls_continue_until_a_different_result(self) -> None:
        unit = card(honours=(held(TRAIT, "grizzled"), held(TRAIT, "cool_headed")))
        dice = EnteredDice([3, 5, 3, 5, 1, 6])
        _, honour = gain_battle_honour(unit, HonourRequest(TRAIT), book(), dice)
        assert honour.entry_ids == ("fleet_of_foot",)
        assert [d.value for d in honour.dice] == [3, 5, 3, 5, 1]
        assert dice.unused == 1

    def test_a_new_result_needs_no_reroll(self) -> None:
        unit = card(honours=(held(TRAIT, "grizzled"),))
        dice = EnteredDice([4, 4])
        _, honour = gain_battle_honour(unit, HonourRequest(TRAIT), book(), dice)
        assert honour.entry_ids == ("headhunters",)
        assert len(honour.dice) == 1
        assert dice.unused == 1

    def test_running_out_of_dice_while_rerolling_is_refused(self) -> None:
        unit = card(honours=(held(TRAIT, "grizzled"),))
        refused(unit, TRAIT, "dice_missing", [3, 3])

    @pytest.mark.parametrize("trait", OTHER_TRAITS)
    def test_a_chosen_duplicate_is_refused(self, trait: str) -> None:
        unit = card(honours=(held(TRAIT, trait),))
        refused(unit, TRAIT, "honour_duplicate", choice=[trait])

    def test_a_unit_can_have_more_than_one_trait(self) -> None:
        unit, _ = gain(card(), TRAIT, choice=["grizzled"])
        unit, _ = gain(unit, TRAIT, choice=["headhunters"])
        assert unit.honour_ids(TRAIT) == {"grizzled", "headhunters"}

    def test_exactly_one_trait_may_be_chosen(self) -> None:
        refused(card(), TRAIT, "honour_choice_invalid", choice=["grizzled", "headhunters"])

    def test_the_last_open_trait_is_still_found_by_rerolling(self) -> None:
        unit = card(honours=tuple(held(TRAIT, t) for t in OTHER_TRAITS[:5]))
        _, honour = gain(unit, TRAIT, [1, 2, 3, 4, 5, 6])
        assert honour.entry_ids == ("battle_tested",)
        assert len(honour.dice) == 6


# --- Psychic Fortitudes -------------------------------------------------------------------


class TestPsychicFortitudes:
    @pytest.mark.parametrize(
        "keywords",
        [INFANTRY, CHARACTER_KW, VEHICLE_KW, MONSTER_KW],
        ids=["infantry", "character", "vehicle", "monster"],
    )
    def test_only_psyker_units_can_be_given_psychic_fortitudes(self, keywords: set[str]) -> None:
        refused(card(keywords=keywords), FORTITUDE, "psychic_fortitude_requires_psyker", [1])
        refused(
            card(keywords=keywords),
            FORTITUDE,
            "psychic_fortitude_requires_psyker",
            choice=["psychic_might"],
        )

    @pytest.mark.parametrize(("roll", "fortitude"), sorted(FORTITUDES.items()))
    def test_a_d6_roll_on_the_psychic_fortitudes_table(self, roll: int, fortitude: str) -> None:
        _, honour = gain(card(keywords=PSYKER_KW), FORTITUDE, [roll])
        assert honour.entry_ids == (fortitude,)
        assert values(honour.dice) == [(6, roll)]

    @pytest.mark.parametrize(
        "keywords",
        [
            PSYKER_KW,
            {"IMPERIUM", "INFANTRY", "PSYKER", "CHARACTER"},
            {"TYRANIDS", "MONSTER", "PSYKER"},
        ],
    )
    @pytest.mark.parametrize("fortitude", sorted(set(FORTITUDES.values())))
    def test_or_choose_one(self, keywords: set[str], fortitude: str) -> None:
        _, honour = gain(card(keywords=keywords), FORTITUDE, choice=[fortitude])
        assert honour.entry_ids == (fortitude,)
        assert honour.dice == ()

    def test_a_duplicate_roll_is_rerolled_and_every_die_recorded(self) -> None:
        psyker = card(keywords=PSYKER_KW, honours=(held(FORTITUDE, "psychic_might"),))
        _, honour = gain(psyker, FORTITUDE, [1, 2, 4])
        assert honour.entry_ids == ("adamantium_will",)
        assert values(honour.dice) == [(6, 1), (6, 2), (6, 4)]

    def test_a_chosen_duplicate_is_refused(self) -> None:
        psyker = card(keywords=PSYKER_KW, honours=(held(FORTITUDE, "master_of_lore"),))
        refused(psyker, FORTITUDE, "honour_duplicate", choice=["master_of_lore"])

    def test_a_battle_trait_of_the_same_unit_is_no_duplicate(self) -> None:
        psyker = card(keywords=PSYKER_KW, honours=(held(TRAIT, "grizzled"),))
        _, honour = gain(psyker, FORTITUDE, [6])
        assert honour.entry_ids == ("master_of_lore",)

    def test_an_unknown_fortitude_is_refused(self) -> None:
        refused(card(keywords=PSYKER_KW), FORTITUDE, "honour_unknown", choice=["grizzled"])


# --- Weapon Enhancements ------------------------------------------------------------------


class TestWeaponEnhancements:
    @pytest.mark.parametrize(
        ("keywords", "count"),
        [
            (("INFANTRY",), 2),
            (("INFANTRY", "CHARACTER"), 1),
            (("VEHICLE",), 1),
            (("MONSTER",), 1),
            (("VEHICLE", "TITANIC"), 1),
        ],
    )
    def test_how_many_enhancements_a_weapon_gains(
        self, keywords: tuple[str, ...], count: int
    ) -> None:
        assert weapon_enhancements_to_choose(card(keywords=frozenset(keywords))) == count

    # Which model and weapon -----------------------------------------------------------

    def test_a_unit_with_a_champion_must_enhance_the_champions_weapon(self) -> None:
        squad = card(champion="Sergeant")
        refused(
            squad,
            WEAPON,
            "weapon_enhancement_champion_only",
            [1, 2],
            weapon=WeaponChoice("Intercessor", "Bolt rifle"),
        )
        _, honour = gain(squad, WEAPON, [1, 2], weapon=SERGEANT_BOLTER)
        assert (honour.model, honour.weapon) == ("Sergeant", "Bolt rifle")

    def test_the_champion_is_matched_whatever_the_case(self) -> None:
        _, honour = gain(
            card(champion="Sergeant"), WEAPON, [1, 2], weapon=WeaponChoice("SERGEANT", "Bolt rifle")
        )
        assert honour.model == "SERGEANT"

    def test_a_unit_without_a_champion_may_pick_any_model(self) -> None:
        _, honour = gain(card(), WEAPON, [1, 2], weapon=WeaponChoice("Intercessor", "Bolt rifle"))
        assert honour.model == "Intercessor"

    @pytest.mark.parametrize(
        "weapon",
        [None, WeaponChoice("Sergeant", "  "), WeaponChoice("", "Bolt rifle")],
        ids=["none", "blank_weapon", "blank_model"],
    )
    def test_a_model_and_one_of_its_weapons_must_be_selected(
        self, weapon: WeaponChoice | None
    ) -> None:
        refused(card(), WEAPON, "weapon_required", [1, 2], weapon=weapon)

    def test_a_relic_weapon_cannot_be_enhanced(self) -> None:
        refused(
            character(),
            WEAPON,
            "weapon_is_relic",
            [1],
            weapon=WeaponChoice("Captain", "The Burning Blade", "melee", is_relic=True),
        )

    def test_a_weapon_replaced_by_a_relic_requisition_cannot_be_enhanced(self) -> None:
        captain = character(
            upgrades=(
                Upgrade("relic", "The Burning Blade", 1, model="Captain", weapon="Power sword"),
            )
        )
        refused(
            captain,
            WEAPON,
            "weapon_is_relic",
            [1],
            weapon=WeaponChoice("Captain", "POWER SWORD", "melee"),
        )

    def test_an_already_enhanced_weapon_cannot_be_enhanced_again(self) -> None:
        squad = card(
            honours=(held(WEAPON, "brutal", "auto_loader", weapon="Bolt rifle", model="Sergeant"),)
        )
        refused(squad, WEAPON, "weapon_already_enhanced", [1, 2], weapon=SERGEANT_BOLTER)
        refused(
            squad,
            WEAPON,
            "weapon_already_enhanced",
            [1, 2],
            weapon=WeaponChoice("Sergeant", "bolt RIFLE"),
        )

    def test_a_crusade_relic_weapon_cannot_be_enhanced(self) -> None:
        captain = character(
            honours=(held(RELIC, "artificer_weapon", weapon="Power sword", model="Captain"),)
        )
        refused(captain, WEAPON, "weapon_already_enhanced", [1], weapon=CAPTAIN_SWORD)

    def test_another_weapon_of_the_same_model_can_still_be_enhanced(self) -> None:
        captain = character(
            honours=(held(WEAPON, "brutal", weapon="Power sword", model="Captain"),)
        )
        _, honour = gain(captain, WEAPON, [4], weapon=CAPTAIN_PISTOL)
        assert honour.entry_ids == ("improved_sights",)

    # TITANIC models: one D3, or choose from results 1-3 -------------------------------

    @pytest.mark.parametrize(
        ("weapon_type", "table"), [("ranged", RANGED), ("melee", MELEE), ("both", MELEE)]
    )
    @pytest.mark.parametrize("roll", [1, 2, 3])
    def test_titanic_weapon_rolls_a_d3(
        self, weapon_type: WeaponType, table: tuple[str, ...], roll: int
    ) -> None:
        knight = card(keywords=KNIGHT_KW, power_rating=24)
        weapon = WeaponChoice("Knight", "Thermal cannon", weapon_type)
        _, honour = gain(knight, WEAPON, [roll], weapon=weapon)
        assert honour.entry_ids == (table[roll - 1],)
        assert values(honour.dice) == [(3, roll)]

    def test_titanic_weapon_die_is_a_d3_so_a_4_is_refused(self) -> None:
        knight = card(keywords=KNIGHT_KW)
        refused(
            knight, WEAPON, "dice_out_of_range", [4], weapon=WeaponChoice("Knight", "Battle cannon")
        )

    def test_titanic_character_also_rolls_a_d3(self) -> None:
        baron = card(keywords={"IMPERIUM", "VEHICLE", "TITANIC", "CHARACTER"})
        _, honour = gain(
            baron, WEAPON, [2], weapon=WeaponChoice("Baron", "Reaper chainsword", "melee")
        )
        assert honour.entry_ids == ("razor_edged",)
        assert values(honour.dice) == [(3, 2)]

    @pytest.mark.parametrize("enhancement", RANGED[:3])
    def test_titanic_may_choose_results_1_to_3(self, enhancement: str) -> None:
        _, honour = gain(
            card(keywords=KNIGHT_KW),
            WEAPON,
            choice=[enhancement],
            weapon=WeaponChoice("Knight", "Battle cannon"),
        )
        assert honour.entry_ids == (enhancement,)
        assert honour.dice == ()

    @pytest.mark.parametrize("enhancement", RANGED[3:])
    def test_titanic_may_not_choose_results_4_to_6(self, enhancement: str) -> None:
        refused(
            card(keywords=KNIGHT_KW),
            WEAPON,
            "weapon_enhancement_titanic_limit",
            choice=[enhancement],
            weapon=WeaponChoice("Knight", "Battle cannon"),
        )

    def test_titanic_gains_only_one_enhancement(self) -> None:
        refused(
            card(keywords=KNIGHT_KW),
            WEAPON,
            "honour_choice_invalid",
            choice=["auto_loader", "high_calibre"],
            weapon=WeaponChoice("Knight", "Battle cannon"),
        )

    # CHARACTER, VEHICLE, MONSTER models: one D6, or choose any one ----------------------

    @pytest.mark.parametrize(
        "keywords",
        [CHARACTER_KW, VEHICLE_KW, MONSTER_KW, {"IMPERIUM", "VEHICLE", "CHARACTER"}],
        ids=["character", "vehicle", "monster", "character_vehicle"],
    )
    @pytest.mark.parametrize(("weapon_type", "table"), [("ranged", RANGED), ("melee", MELEE)])
    @pytest.mark.parametrize("roll", [1, 2, 3, 4, 5, 6])
    def test_character_vehicle_or_monster_rolls_one_d6(
        self, keywords: set[str], weapon_type: WeaponType, table: tuple[str, ...], roll: int
    ) -> None:
        weapon = WeaponChoice("Model", "Weapon", weapon_type)
        dice = EnteredDice([roll, 1])
        _, honour = gain_battle_honour(
            card(keywords=keywords), HonourRequest(WEAPON, weapon=weapon), book(), dice
        )
        assert honour.entry_ids == (table[roll - 1],)
        assert values(honour.dice) == [(6, roll)]
        assert dice.unused == 1

    @pytest.mark.parametrize("enhancement", RANGED)
    def test_character_vehicle_or_monster_may_choose_any_one(self, enhancement: str) -> None:
        for keywords in (CHARACTER_KW, VEHICLE_KW, MONSTER_KW):
            _, honour = gain(
                card(keywords=keywords),
                WEAPON,
                choice=[enhancement],
                weapon=WeaponChoice("Model", "Gun"),
            )
            assert honour.entry_ids == (enhancement,)

    def test_character_vehicle_or_monster_may_not_choose_two(self) -> None:
        refused(
            character(),
            WEAPON,
            "honour_choice_invalid",
            choice=["auto_loader", "master_worked"],
            weapon=CAPTAIN_PISTOL,
        )

    def test_an_enhancement_from_the_wrong_table_cannot_be_chosen(self) -> None:
        refused(character(), WEAPON, "honour_unknown", choice=["fleshbane"], weapon=CAPTAIN_PISTOL)
        refused(
            character(), WEAPON, "honour_unknown", choice=["master_worked"], weapon=CAPTAIN_SWORD
        )

    # Any other model: a D6 and a D3, two different results ----------------------------

    @pytest.mark.parametrize(
        ("d6", "d3", "weapon_type", "expected"),
        [
            (6, 1, "ranged", ("master_worked", "auto_loader")),
            (4, 2, "ranged", ("improved_sights", "armour_piercing")),
            (1, 3, "ranged", ("auto_loader", "high_calibre")),
            (5, 3, "melee", ("shredder", "brutal")),
            (2, 1, "melee", ("razor_edged", "heirloom")),
            (3, 2, "both", ("brutal", "razor_edged")),
        ],
    )
    def test_other_units_roll_a_d6_and_a_d3(
        self, d6: int, d3: int, weapon_type: WeaponType, expected: tuple[str, str]
    ) -> None:
        weapon = WeaponChoice("Sergeant", "Weapon", weapon_type)
        _, honour = gain(card(), WEAPON, [d6, d3], weapon=weapon)
        assert honour.entry_ids == expected
        assert values(honour.dice) == [(6, d6), (3, d3)]

    def test_other_units_reroll_both_dice_on_a_duplicate(self) -> None:
        _, honour = gain(card(), WEAPON, [2, 2, 5, 1], weapon=SERGEANT_BOLTER)
        assert honour.entry_ids == ("accelerator", "auto_loader")
        assert values(honour.dice) == [(6, 2), (3, 2), (6, 5), (3, 1)]

    def test_other_units_keep_rerolling_both_dice_until_different(self) -> None:
        _, honour = gain(card(), WEAPON, [1, 1, 3, 3, 2, 2, 6, 3], weapon=SERGEANT_BOLTER)
        assert honour.entry_ids == ("master_worked", "high_calibre")
        assert [d.value for d in honour.dice] == [1, 1, 3, 3, 2, 2, 6, 3]
        assert [d.sides for d in honour.dice] == [6, 3] * 4

    @pytest.mark.parametrize(
        "choice",
        [
            ("auto_loader", "master_worked"),
            ("improved_sights", "armour_piercing"),
            ("high_calibre", "accelerator"),
            ("auto_loader", "armour_piercing"),
        ],
    )
    def test_other_units_may_choose_two_with_one_from_results_1_to_3(
        self, choice: tuple[str, str]
    ) -> None:
        _, honour = gain(card(), WEAPON, choice=choice, weapon=SERGEANT_BOLTER)
        assert honour.entry_ids == choice
        assert honour.dice == ()

    @pytest.mark.parametrize(
        "choice",
        [
            ("improved_sights", "master_worked"),
            ("accelerator", "improved_sights"),
            ("master_worked", "accelerator"),
        ],
    )
    def test_other_units_must_choose_one_from_results_1_to_3(self, choice: tuple[str, str]) -> None:
        refused(
            card(),
            WEAPON,
            "weapon_enhancement_choice_limit",
            choice=choice,
            weapon=SERGEANT_BOLTER,
        )

    @pytest.mark.parametrize(
        "choice",
        [
            ("auto_loader",),
            ("auto_loader", "auto_loader"),
            ("auto_loader", "high_calibre", "accelerator"),
        ],
        ids=["one", "the_same_twice", "three"],
    )
    def test_other_units_must_choose_two_different_enhancements(
        self, choice: tuple[str, ...]
    ) -> None:
        refused(card(), WEAPON, "honour_choice_invalid", choice=choice, weapon=SERGEANT_BOLTER)

    # Weapons with more than one profile -------------------------------------------------

    @pytest.mark.parametrize("roll", [1, 2, 3, 4, 5, 6])
    def test_a_weapon_with_ranged_and_melee_profiles_uses_the_melee_table(self, roll: int) -> None:
        burna = WeaponChoice("Boss", "Burna", "both")
        _, honour = gain(character(), WEAPON, [roll], weapon=burna)
        assert honour.entry_ids == (MELEE[roll - 1],)

    def test_a_weapon_with_both_profiles_cannot_choose_from_the_ranged_table(self) -> None:
        burna = WeaponChoice("Boss", "Burna", "both")
        refused(character(), WEAPON, "honour_unknown", choice=["master_worked"], weapon=burna)
        _, honour = gain(character(), WEAPON, choice=["fleshbane"], weapon=burna)
        assert honour.entry_ids == ("fleshbane",)

    # What is recorded --------------------------------------------------------------------

    def test_the_honour_records_model_weapon_dice_and_points(self) -> None:
        honoured, honour = gain(card(power_rating=12), WEAPON, [6, 2], weapon=SERGEANT_BOLTER)
        assert honour == BattleHonour(
            WEAPON,
            ("master_worked", "armour_piercing"),
            2,
            weapon="Bolt rifle",
            model="Sergeant",
            dice=(DieRoll(6, 6), DieRoll(3, 2)),
        )
        assert "bolt rifle" in honoured.enhanced_weapons
        assert honoured.crusade_points == 2


# --- Crusade Relics -------------------------------------------------------------------------


ARTIFICER = (
    "artificer_weapon",
    "artisan_bionics",
    "conversion_field",
    "frenzon_injector",
    "laurels_of_victory",
    "master_crafted_armour",
)
ANTIQUITY = (
    "archeotech_nano_med",
    "blackstone_shard_amulet",
    "dark_age_displacer_belt",
    "xenotech_digital_lasers",
)
LEGENDARY = ("null_field_disruptor", "vortex_grenade")
RANKS = ("battle_ready", "blooded", "battle_hardened", "heroic", "legendary")


def relic_request(relic: str) -> tuple[str, WeaponChoice | None]:
    return relic, (CAPTAIN_SWORD if relic == "artificer_weapon" else None)


class TestCrusadeRelics:
    def test_every_crusade_relic_in_the_rules_is_in_the_table(self) -> None:
        table = {r.id: r.category.value for r in book().honours.crusade_relics}
        assert table == {
            **dict.fromkeys(ARTIFICER, "artificer"),
            **dict.fromkeys(ANTIQUITY, "antiquity"),
            **dict.fromkeys(LEGENDARY, "legendary"),
        }

    @pytest.mark.parametrize(
        "keywords",
        [INFANTRY, VEHICLE_KW, MONSTER_KW, PSYKER_KW, KNIGHT_KW],
        ids=["infantry", "vehicle", "monster", "psyker", "titanic"],
    )
    @pytest.mark.parametrize("relic", ["laurels_of_victory", "master_crafted_armour"])
    def test_only_character_models_can_gain_crusade_relics(
        self, keywords: set[str], relic: str
    ) -> None:
        refused(
            card(keywords=keywords, rank="legendary"),
            RELIC,
            "crusade_relic_requires_character",
            choice=[relic],
        )

    @pytest.mark.parametrize(
        "keywords",
        [CHARACTER_KW, {"IMPERIUM", "VEHICLE", "CHARACTER"}, {"TYRANIDS", "MONSTER", "CHARACTER"}],
    )
    def test_any_character_can_gain_an_artificer_relic(self, keywords: set[str]) -> None:
        _, honour = gain(character(keywords=keywords), RELIC, choice=["laurels_of_victory"])
        assert honour.entry_ids == ("laurels_of_victory",)
        assert honour.dice == ()

    @pytest.mark.parametrize(
        ("relic", "keywords", "allowed"),
        [
            ("conversion_field", {"INFANTRY"}, True),
            ("conversion_field", {"BIKER"}, False),
            ("conversion_field", {"CAVALRY"}, False),
            ("conversion_field", {"MONSTER"}, False),
            ("artisan_bionics", {"INFANTRY"}, True),
            ("artisan_bionics", {"CAVALRY"}, True),
            ("artisan_bionics", {"BIKER"}, True),
            ("artisan_bionics", {"MONSTER"}, False),
            ("artisan_bionics", {"VEHICLE"}, False),
            ("frenzon_injector", {"INFANTRY"}, True),
            ("frenzon_injector", {"CAVALRY"}, True),
            ("frenzon_injector", {"BIKER"}, True),
            ("frenzon_injector", {"MONSTER"}, True),
            ("frenzon_injector", {"VEHICLE"}, False),
            ("archeotech_nano_med", {"INFANTRY"}, True),
            ("archeotech_nano_med", {"BIKER"}, False),
            ("dark_age_displacer_belt", {"INFANTRY"}, True),
            ("dark_age_displacer_belt", {"MONSTER"}, False),
            ("laurels_of_victory", {"VEHICLE"}, True),
            ("master_crafted_armour", {"MONSTER"}, True),
            ("blackstone_shard_amulet", {"BIKER"}, True),
            ("xenotech_digital_lasers", {"VEHICLE"}, True),
            ("null_field_disruptor", {"MONSTER"}, True),
            ("vortex_grenade", {"CAVALRY"}, True),
        ],
    )
    def test_some_relics_are_only_for_models_with_certain_keywords(
        self, relic: str, keywords: set[str], allowed: bool
    ) -> None:
        bearer = character(keywords={"IMPERIUM", "CHARACTER", *keywords}, rank="legendary")
        if allowed:
            _, honour = gain(bearer, RELIC, choice=[relic])
            assert honour.entry_ids == (relic,)
        else:
            refused(bearer, RELIC, "crusade_relic_keywords", choice=[relic])

    @pytest.mark.parametrize("rank", RANKS)
    @pytest.mark.parametrize(
        ("relics", "lowest"),
        [(ARTIFICER, "battle_ready"), (ANTIQUITY, "heroic"), (LEGENDARY, "legendary")],
        ids=["artificer_any_rank", "antiquity_heroic_or_legendary", "legendary_only_legendary"],
    )
    def test_relic_category_sets_the_lowest_rank_of_the_bearer(
        self, rank: str, relics: tuple[str, ...], lowest: str
    ) -> None:
        allowed = RANKS.index(rank) >= RANKS.index(lowest)
        for relic_id in relics:
            relic, weapon = relic_request(relic_id)
            bearer = character(rank=rank)
            if allowed:
                _, honour = gain(bearer, RELIC, choice=[relic], weapon=weapon)
                assert honour.entry_ids == (relic,)
            else:
                refused(bearer, RELIC, "crusade_relic_rank_too_low", choice=[relic], weapon=weapon)

    @pytest.mark.parametrize("relic_id", ARTIFICER + ANTIQUITY + LEGENDARY)
    def test_each_relic_only_once_per_order_of_battle(self, relic_id: str) -> None:
        relic, weapon = relic_request(relic_id)
        refused(
            character(rank="legendary"),
            RELIC,
            "crusade_relic_taken",
            choice=[relic],
            weapon=weapon,
            relics={relic},
        )
        _, honour = gain(
            character(rank="legendary"),
            RELIC,
            choice=[relic],
            weapon=weapon,
            relics={r for r in ARTIFICER + ANTIQUITY + LEGENDARY if r != relic},
        )
        assert honour.entry_ids == (relic,)

    def test_a_character_can_have_several_different_crusade_relics(self) -> None:
        hero, _ = gain(character(rank="heroic"), RELIC, choice=["laurels_of_victory"])
        hero, _ = gain(hero, RELIC, choice=["blackstone_shard_amulet"])
        assert hero.honour_ids(RELIC) == {"laurels_of_victory", "blackstone_shard_amulet"}

    def test_a_character_with_a_codex_relic_can_still_gain_crusade_relics(self) -> None:
        captain = character(upgrades=(Upgrade("relic", "The Armour Indomitus", 1),))
        _, honour = gain(captain, RELIC, choice=["master_crafted_armour"])
        assert honour.entry_ids == ("master_crafted_armour",)

    def test_a_relic_already_in_the_order_of_battle_cannot_be_taken_by_another_character(
        self,
    ) -> None:
        holder = character(id="c1", honours=(held(RELIC, "laurels_of_victory"),))
        other = character(id="c2", name="Chaplain")
        army = force(holder, other)
        before = copy.deepcopy(army)
        with pytest.raises(RuleError) as error:
            answer_battle_honour(
                army,
                BattleHonourDecision("c2", "rank:blooded"),
                HonourRequest(RELIC, ("laurels_of_victory",)),
                book(),
                EnteredDice([]),
            )
        assert error.value.code == "crusade_relic_taken"
        assert army == before

    def test_exactly_one_relic_must_be_selected(self) -> None:
        refused(character(), RELIC, "honour_choice_invalid")
        refused(
            character(),
            RELIC,
            "honour_choice_invalid",
            choice=["laurels_of_victory", "master_crafted_armour"],
        )

    def test_an_unknown_relic_is_refused(self) -> None:
        refused(character(), RELIC, "honour_unknown", choice=["holy_hand_grenade"])

    def test_artificer_weapon_needs_a_weapon(self) -> None:
        refused(character(), RELIC, "weapon_required", choice=["artificer_weapon"])

    def test_artificer_weapon_cannot_be_a_relic_weapon(self) -> None:
        refused(
            character(),
            RELIC,
            "weapon_is_relic",
            choice=["artificer_weapon"],
            weapon=WeaponChoice("Captain", "The Burning Blade", "melee", is_relic=True),
        )
        codex_relic = character(
            upgrades=(
                Upgrade("relic", "The Burning Blade", 1, model="Captain", weapon="Power sword"),
            )
        )
        refused(
            codex_relic, RELIC, "weapon_is_relic", choice=["artificer_weapon"], weapon=CAPTAIN_SWORD
        )

    def test_artificer_weapon_cannot_be_an_enhanced_weapon(self) -> None:
        enhanced = character(
            honours=(held(WEAPON, "brutal", weapon="Power sword", model="Captain"),)
        )
        refused(
            enhanced,
            RELIC,
            "weapon_already_enhanced",
            choice=["artificer_weapon"],
            weapon=CAPTAIN_SWORD,
        )

    def test_artificer_weapon_records_its_weapon_which_can_then_not_be_enhanced(self) -> None:
        honoured, honour = gain(
            character(), RELIC, choice=["artificer_weapon"], weapon=CAPTAIN_SWORD
        )
        assert (honour.model, honour.weapon) == ("Captain", "Power sword")
        assert "power sword" in honoured.enhanced_weapons
        refused(honoured, WEAPON, "weapon_already_enhanced", [1], weapon=CAPTAIN_SWORD)

    @pytest.mark.parametrize("relic", ["laurels_of_victory", "blackstone_shard_amulet"])
    def test_relics_that_select_no_weapon_record_none(self, relic: str) -> None:
        _, honour = gain(character(rank="heroic"), RELIC, choice=[relic], weapon=CAPTAIN_SWORD)
        assert (honour.weapon, honour.model) == (None, None)

    # Paying for a Legendary Relic ---------------------------------------------------------

    def test_a_legendary_relic_costs_one_requisition_point(self) -> None:
        hero = character(id="h", rank="legendary", xp=60)
        army = force(hero, requisition_points=2)
        paid = answer_battle_honour(
            army,
            BattleHonourDecision("h", "rank:legendary"),
            HonourRequest(RELIC, ("vortex_grenade",)),
            book(),
            EnteredDice([]),
        )
        assert paid.requisition_points == 1
        assert paid.card("h").honour_ids(RELIC) == {"vortex_grenade"}
        assert paid.card("h").crusade_points == 3
        assert army.requisition_points == 2

    def test_the_last_requisition_point_can_pay_for_a_legendary_relic(self) -> None:
        army = force(character(id="h", rank="legendary"), requisition_points=1)
        paid = answer_battle_honour(
            army,
            BattleHonourDecision("h", "rank:legendary"),
            HonourRequest(RELIC, ("null_field_disruptor",)),
            book(),
            EnteredDice([]),
        )
        assert paid.requisition_points == 0

    def test_a_legendary_relic_is_refused_without_a_requisition_point(self) -> None:
        army = force(character(id="h", rank="legendary", xp=60), requisition_points=0)
        before = copy.deepcopy(army)
        with pytest.raises(RuleError) as error:
            answer_battle_honour(
                army,
                BattleHonourDecision("h", "rank:legendary"),
                HonourRequest(RELIC, ("vortex_grenade",)),
                book(),
                EnteredDice([]),
            )
        assert error.value.code == "requisition_points_insufficient"
        assert army == before
        assert army.card("h").honours == ()

    @pytest.mark.parametrize("relic", ["laurels_of_victory", "blackstone_shard_amulet"])
    def test_artificer_and_antiquity_relics_cost_no_requisition_points(self, relic: str) -> None:
        army = force(character(id="h", rank="legendary"), requisition_points=0)
        paid = answer_battle_honour(
            army,
            BattleHonourDecision("h", "rank:legendary"),
            HonourRequest(RELIC, (relic,)),
            book(),
            EnteredDice([]),
        )
        assert paid.requisition_points == 0
        assert paid.card("h").honour_ids(RELIC) == {relic}

    def test_other_honours_cost_no_requisition_points(self) -> None:
        army = force(card(id="u"), requisition_points=0)
        paid = answer_battle_honour(
            army,
            BattleHonourDecision("u", "rank:blooded"),
            HonourRequest(TRAIT),
            book(),
            EnteredDice([2]),
        )
        assert paid.requisition_points == 0
        assert paid.card("u").honour_ids(TRAIT) == {"veteran_warriors"}


# --- Crusade points and limits ---------------------------------------------------------------


def any_honour(category: HonourCategory) -> tuple[CrusadeCard, HonourRequest]:
    """A unit able to gain an honour of ``category`` and a request for one."""
    if category == TRAIT:
        return card(), HonourRequest(TRAIT, ("grizzled",))
    if category == FORTITUDE:
        return card(keywords=PSYKER_KW), HonourRequest(FORTITUDE, ("psychic_might",))
    if category == WEAPON:
        return character(), HonourRequest(WEAPON, ("brutal",), CAPTAIN_SWORD)
    return character(), HonourRequest(RELIC, ("laurels_of_victory",))


class TestHonourLimits:
    @pytest.mark.parametrize("category", list(HonourCategory))
    @pytest.mark.parametrize(
        ("power_rating", "points"), [(1, 1), (5, 1), (10, 1), (11, 2), (12, 2), (24, 2)]
    )
    def test_an_honour_is_worth_1_crusade_point_at_power_10_or_less_and_2_at_11_or_more(
        self, category: HonourCategory, power_rating: int, points: int
    ) -> None:
        unit, request = any_honour(category)
        honoured, honour = gain_battle_honour(
            replace(unit, power_rating=power_rating), request, book(), EnteredDice([])
        )
        assert honour.crusade_points == points
        assert honoured.crusade_points == points

    @pytest.mark.parametrize(
        ("relic", "rank", "power_rating", "points"),
        [
            ("laurels_of_victory", "battle_ready", 10, 1),
            ("laurels_of_victory", "battle_ready", 11, 2),
            ("artificer_weapon", "battle_ready", 5, 1),
            ("blackstone_shard_amulet", "heroic", 10, 2),
            ("xenotech_digital_lasers", "heroic", 11, 3),
            ("archeotech_nano_med", "legendary", 4, 2),
            ("null_field_disruptor", "legendary", 10, 3),
            ("vortex_grenade", "legendary", 11, 4),
        ],
    )
    def test_antiquity_relics_add_1_more_and_legendary_relics_2_more(
        self, relic: str, rank: str, power_rating: int, points: int
    ) -> None:
        bearer = character(rank=rank, power_rating=power_rating)
        weapon = CAPTAIN_SWORD if relic == "artificer_weapon" else None
        honoured, honour = gain(bearer, RELIC, choice=[relic], weapon=weapon)
        assert honour.crusade_points == points
        assert honoured.crusade_points == points

    @pytest.mark.parametrize(("before", "after", "points"), [(10, 11, 1), (11, 10, 2), (5, 20, 1)])
    def test_honour_points_stay_fixed_when_power_rating_changes_later(
        self, before: int, after: int, points: int
    ) -> None:
        honoured, _ = gain(card(power_rating=before), TRAIT, [1])
        assert replace(honoured, power_rating=after).crusade_points == points

    def test_a_later_honour_is_worth_points_by_the_power_rating_at_that_time(self) -> None:
        unit, _ = gain(card(power_rating=10), TRAIT, [1])
        unit, second = gain(replace(unit, power_rating=11), TRAIT, [2])
        assert [h.crusade_points for h in unit.honours] == [1, 2]
        assert second.crusade_points == 2
        assert unit.crusade_points == 3

    def test_battle_scars_lower_crusade_points_but_not_an_honours_value(self) -> None:
        honoured, honour = gain(card(scars=(BattleScar("fatigued"),)), TRAIT, [1])
        assert honour.crusade_points == 1
        assert honoured.crusade_points == 0

    @pytest.mark.parametrize("category", list(HonourCategory))
    def test_a_unit_can_have_six_battle_honours(self, category: HonourCategory) -> None:
        unit, request = any_honour(category)
        five = tuple(held(TRAIT, t) for t in ("a", "b", "c", "d", "e"))
        honoured, _ = gain_battle_honour(
            replace(unit, honours=five), request, book(), EnteredDice([])
        )
        assert len(honoured.honours) == 6

    @pytest.mark.parametrize("category", list(HonourCategory))
    def test_a_unit_can_never_have_more_than_six_battle_honours(
        self, category: HonourCategory
    ) -> None:
        unit, request = any_honour(category)
        six = replace(unit, honours=tuple(held(TRAIT, t) for t in "abcdef"))
        refused(
            six,
            request.category,
            "battle_honours_full",
            [1, 2],
            choice=request.choice,
            weapon=request.weapon,
        )

    @pytest.mark.parametrize(
        "unit",
        [
            character(named_character=True),
            card(keywords={"TYRANIDS", "SWARM"}),
            card(keywords={"T'AU EMPIRE", "DRONE"}),
            card(keywords={"IMPERIUM", "BUILDING"}, battlefield_role="Fortifications"),
            card(keywords={"IMPERIUM", "BUILDING"}, battlefield_role="fortifications"),
            card(keywords={"CHAOS", "DAEMON"}, summoned=True),
        ],
        ids=[
            "named_character",
            "swarm",
            "drone",
            "fortification",
            "fortification_lower",
            "summoned",
        ],
    )
    @pytest.mark.parametrize("category", [TRAIT, WEAPON])
    def test_units_that_never_gain_experience_never_gain_battle_honours(
        self, unit: CrusadeCard, category: HonourCategory
    ) -> None:
        refused(
            unit,
            category,
            "unit_never_gains_experience",
            [1, 2],
            weapon=WeaponChoice("Model", "Gun"),
        )

    def test_a_named_character_cannot_gain_a_crusade_relic(self) -> None:
        refused(
            character(named_character=True, rank="legendary"),
            RELIC,
            "unit_never_gains_experience",
            choice=["laurels_of_victory"],
        )

    def test_a_psyker_swarm_cannot_gain_a_psychic_fortitude(self) -> None:
        refused(
            card(keywords={"TYRANIDS", "SWARM", "PSYKER"}),
            FORTITUDE,
            "unit_never_gains_experience",
            [1],
        )

    def test_gaining_an_honour_never_changes_the_card_it_was_given(self) -> None:
        unit = card()
        before = copy.deepcopy(unit)
        honoured, _ = gain(unit, TRAIT, [1])
        assert unit == before
        assert honoured != unit


class TestWhatIsOpen:
    """Issue 46: what a decision offers is worked out by the rules that check the answer."""

    def test_the_weapons_of_a_card_are_its_wargear_not_enhanced_nor_relics(self) -> None:
        enhanced = BattleHonour(WEAPON, ("heirloom",), 1, weapon="Power sword", model="Captain")
        relic = Upgrade("relic", "The Burning Blade", 1, weapon="Plasma pistol")
        unit = character(
            wargear="2x Bolt pistol\nPower sword; Plasma pistol, Frag grenades",
            honours=(enhanced,),
            upgrades=(relic,),
        )
        assert weapons_to_enhance(unit) == ("Bolt pistol", "Frag grenades")

    def test_a_unit_whose_listed_weapons_are_all_enhanced_takes_no_more(self) -> None:
        enhanced = BattleHonour(WEAPON, ("heirloom",), 1, weapon="Power sword", model="Captain")
        full = character(wargear="Power sword", honours=(enhanced,))
        assert WEAPON not in open_categories(full, (WEAPON, TRAIT), book())
        assert "artificer_weapon" not in [r.id for r in relics_open(full, book())]
        unlisted = character(honours=(enhanced,))  # no wargear: any weapon it carries
        assert WEAPON in open_categories(unlisted, (WEAPON,), book())

    def test_the_weapon_is_one_the_wargear_lists_where_it_lists_any(self) -> None:
        """Ruling 80: another is refused, naming those open; a listed one, however written,
        is kept as the wargear spells it (so it is not offered again); a card that lists
        no wargear takes any weapon its model carries."""
        unit = character(wargear="2x Bolt pistol\nPower sword")
        error = refused(
            unit, WEAPON, "weapon_not_in_wargear", [1], weapon=WeaponChoice("Captain", "Axe")
        )
        assert "(Bolt pistol, Power sword)" in error.message and error.field == "weapon"
        written = WeaponChoice("Captain", "1x  POWER sword", "melee")
        honoured, honour = gain(unit, WEAPON, [1], weapon=written)
        assert honour.weapon == "Power sword" and weapons_to_enhance(honoured) == ("Bolt pistol",)
        refused(honoured, WEAPON, "weapon_already_enhanced", [1], weapon=written)
        _, free = gain(character(), WEAPON, [1], weapon=WeaponChoice("Captain", "Axe"))
        assert free.weapon == "Axe"

    def test_a_crusade_relic_is_open_while_one_is_left_its_order_of_battle_lacks(self) -> None:
        captain = character()
        every = [r.id for r in relics_open(captain, book())]
        assert every and RELIC in open_categories(captain, (RELIC,), book())
        assert relics_open(captain, book(), relics_taken=every) == ()
        assert open_categories(captain, (RELIC,), book(), relics_taken=every) == ()
        assert open_categories(card(), (RELIC,), book()) == ()  # not a CHARACTER
