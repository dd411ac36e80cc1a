"""Battle Honours: traits, fortitudes, weapon enhancements, Crusade Relics."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.rules.aftermath import BattleHonourDecision, answer_battle_honour
from app.rules.cards import BattleHonour, Upgrade
from app.rules.data import HonourCategory
from app.rules.dice import EnteredDice
from app.rules.errors import RuleError
from app.rules.honours import HonourRequest, WeaponChoice, gain_battle_honour
from tests.factories import book, card, character, force

TRAIT = HonourCategory.BATTLE_TRAIT
FORTITUDE = HonourCategory.PSYCHIC_FORTITUDE
WEAPON = HonourCategory.WEAPON_ENHANCEMENT
RELIC = HonourCategory.CRUSADE_RELIC
BOLTER = WeaponChoice("Sergeant", "Bolt rifle", "ranged")


def gain(unit, category, dice=(), choice=(), weapon=None, relics=()):  # type: ignore[no-untyped-def]
    request = HonourRequest(category, tuple(choice), weapon)
    return gain_battle_honour(
        unit, request, book(), EnteredDice(dice), relics_in_order_of_battle=relics
    )


class TestBattleTraits:
    @pytest.mark.parametrize(
        ("keywords", "trait"),
        [
            ({"CHARACTER", "INFANTRY"}, "swift_and_agile"),
            ({"VEHICLE"}, "enhanced_engines"),
            ({"CHARACTER", "VEHICLE"}, "enhanced_engines"),
            ({"MONSTER"}, "unstoppable"),
            ({"INFANTRY"}, "fleet_of_foot"),
        ],
    )
    def test_table_by_unit_type(self, keywords: set[str], trait: str) -> None:
        _, honour = gain(card(keywords=keywords), TRAIT, [1])
        assert honour.entry_ids == (trait,)

    def test_duplicates_are_rerolled_and_recorded(self) -> None:
        held = card(honours=(BattleHonour(TRAIT, ("grizzled",), 1),))
        _, honour = gain(held, TRAIT, [3, 3, 5])
        assert honour.entry_ids == ("cool_headed",)
        assert [d.value for d in honour.dice] == [3, 3, 5]

    def test_chosen_duplicate_refused(self) -> None:
        held = card(honours=(BattleHonour(TRAIT, ("grizzled",), 1),))
        with pytest.raises(RuleError) as refused:
            gain(held, TRAIT, choice=["grizzled"])
        assert refused.value.code == "honour_duplicate"

    def test_choice_from_another_table_refused(self) -> None:
        with pytest.raises(RuleError) as refused:
            gain(card(), TRAIT, choice=["elite_crew"])
        assert refused.value.code == "honour_unknown"

    def test_two_choices_refused(self) -> None:
        with pytest.raises(RuleError) as refused:
            gain(card(), TRAIT, choice=["grizzled", "headhunters"])
        assert refused.value.code == "honour_choice_invalid"

    def test_every_trait_held_leaves_nothing_to_roll(self) -> None:
        table = book().honours.battle_traits[card().unit_type]
        every = tuple(BattleHonour(TRAIT, (e.id,), 1) for e in table.entries[:5])
        held = card(honours=every)
        _, honour = gain(held, TRAIT, [1, 2, 3, 4, 5, 6])
        assert honour.entry_ids == (table.entries[5].id,)


class TestPsychicFortitudes:
    def test_only_psykers(self) -> None:
        with pytest.raises(RuleError) as refused:
            gain(card(), FORTITUDE, [1])
        assert refused.value.code == "psychic_fortitude_requires_psyker"

    @pytest.mark.parametrize(
        ("roll", "fortitude"), [(2, "psychic_might"), (3, "adamantium_will"), (6, "master_of_lore")]
    )
    def test_d6_ranges(self, roll: int, fortitude: str) -> None:
        _, honour = gain(card(keywords={"PSYKER", "INFANTRY"}), FORTITUDE, [roll])
        assert honour.entry_ids == (fortitude,)


class TestWeaponEnhancements:
    def test_character_rolls_one_d6(self) -> None:
        _, honour = gain(
            character(), WEAPON, [6], weapon=WeaponChoice("Captain", "Master-crafted bolter")
        )
        assert honour.entry_ids == ("master_worked",)
        assert (honour.weapon, honour.model) == ("Master-crafted bolter", "Captain")

    def test_titanic_rolls_a_d3(self) -> None:
        knight = card(keywords={"VEHICLE", "TITANIC"}, power_rating=24)
        _, honour = gain(knight, WEAPON, [3], weapon=WeaponChoice("Knight", "Battle cannon"))
        assert honour.entry_ids == ("high_calibre",)
        assert honour.dice[0].sides == 3
        assert honour.crusade_points == 2

    def test_titanic_may_only_choose_one_to_three(self) -> None:
        knight = card(keywords={"VEHICLE", "TITANIC"})
        with pytest.raises(RuleError) as refused:
            gain(
                knight,
                WEAPON,
                choice=["master_worked"],
                weapon=WeaponChoice("Knight", "Battle cannon"),
            )
        assert refused.value.code == "weapon_enhancement_titanic_limit"
        _, honour = gain(
            knight, WEAPON, choice=["auto_loader"], weapon=WeaponChoice("Knight", "Battle cannon")
        )
        assert honour.entry_ids == ("auto_loader",)

    def test_other_units_roll_d6_and_d3_rerolling_doubles(self) -> None:
        _, honour = gain(card(), WEAPON, [2, 2, 5, 1], weapon=BOLTER)
        assert honour.entry_ids == ("accelerator", "auto_loader")
        assert [(d.sides, d.value) for d in honour.dice] == [(6, 2), (3, 2), (6, 5), (3, 1)]

    def test_other_units_choose_two_one_from_the_first_three(self) -> None:
        _, honour = gain(
            card(), WEAPON, choice=["improved_sights", "armour_piercing"], weapon=BOLTER
        )
        assert honour.entry_ids == ("improved_sights", "armour_piercing")
        with pytest.raises(RuleError) as refused:
            gain(card(), WEAPON, choice=["improved_sights", "master_worked"], weapon=BOLTER)
        assert refused.value.code == "weapon_enhancement_choice_limit"
        with pytest.raises(RuleError):
            gain(card(), WEAPON, choice=["auto_loader"], weapon=BOLTER)

    def test_weapon_with_both_profiles_uses_the_melee_table(self) -> None:
        _, honour = gain(character(), WEAPON, [5], weapon=WeaponChoice("Captain", "Burna", "both"))
        assert honour.entry_ids == ("shredder",)

    def test_champion_only(self) -> None:
        squad = card(champion="Sergeant")
        with pytest.raises(RuleError) as refused:
            gain(squad, WEAPON, [1, 2], weapon=WeaponChoice("Trooper", "Bolt rifle"))
        assert refused.value.code == "weapon_enhancement_champion_only"
        _, honour = gain(squad, WEAPON, [1, 2], weapon=BOLTER)
        assert honour.model == "Sergeant"

    def test_not_an_enhanced_or_relic_weapon(self) -> None:
        enhanced = card(
            honours=(BattleHonour(WEAPON, ("brutal",), 1, weapon="Bolt rifle", model="Sergeant"),)
        )
        with pytest.raises(RuleError) as refused:
            gain(enhanced, WEAPON, [1, 2], weapon=BOLTER)
        assert refused.value.code == "weapon_already_enhanced"
        relic = character(
            upgrades=(Upgrade("relic", "The Burning Blade", 1, weapon="Power sword"),)
        )
        with pytest.raises(RuleError) as refused:
            gain(relic, WEAPON, [1], weapon=WeaponChoice("Captain", "Power sword", "melee"))
        assert refused.value.code == "weapon_is_relic"
        with pytest.raises(RuleError):
            gain(
                card(),
                WEAPON,
                [1, 2],
                weapon=WeaponChoice("Sergeant", "Relic blade", is_relic=True),
            )

    def test_needs_a_weapon(self) -> None:
        with pytest.raises(RuleError) as refused:
            gain(card(), WEAPON, [1, 2])
        assert refused.value.code == "weapon_required"


class TestCrusadeRelics:
    def test_only_characters(self) -> None:
        with pytest.raises(RuleError) as refused:
            gain(card(), RELIC, choice=["laurels_of_victory"])
        assert refused.value.code == "crusade_relic_requires_character"

    def test_keyword_limits(self) -> None:
        biker = character(keywords={"CHARACTER", "BIKER"})
        with pytest.raises(RuleError) as refused:
            gain(biker, RELIC, choice=["conversion_field"])
        assert refused.value.code == "crusade_relic_keywords"
        _, honour = gain(biker, RELIC, choice=["artisan_bionics"])
        assert honour.entry_ids == ("artisan_bionics",)

    @pytest.mark.parametrize(
        ("relic", "too_low", "enough", "points"),
        [
            ("blackstone_shard_amulet", "battle_hardened", "heroic", 2),
            ("null_field_disruptor", "heroic", "legendary", 3),
        ],
    )
    def test_rank_needed_and_extra_points(
        self, relic: str, too_low: str, enough: str, points: int
    ) -> None:
        with pytest.raises(RuleError) as refused:
            gain(character(rank=too_low), RELIC, choice=[relic])
        assert refused.value.code == "crusade_relic_rank_too_low"
        honoured, honour = gain(character(rank=enough), RELIC, choice=[relic])
        assert honour.crusade_points == points
        assert honoured.crusade_points == points

    def test_once_per_order_of_battle(self) -> None:
        with pytest.raises(RuleError) as refused:
            gain(character(), RELIC, choice=["laurels_of_victory"], relics={"laurels_of_victory"})
        assert refused.value.code == "crusade_relic_taken"

    def test_artificer_weapon_needs_an_unenhanced_weapon(self) -> None:
        with pytest.raises(RuleError):
            gain(character(), RELIC, choice=["artificer_weapon"])
        honoured, honour = gain(
            character(),
            RELIC,
            choice=["artificer_weapon"],
            weapon=WeaponChoice("Captain", "Power fist", "melee"),
        )
        assert honour.weapon == "Power fist"
        assert "power fist" in honoured.enhanced_weapons

    def test_unknown_relic(self) -> None:
        with pytest.raises(RuleError) as refused:
            gain(character(), RELIC, choice=["holy_hand_grenade"])
        assert refused.value.code == "honour_unknown"

    def test_legendary_relic_costs_one_rp(self) -> None:
        hero = character(id="h", rank="legendary", xp=60)
        decision = BattleHonourDecision("h", "rank:legendary")
        request = HonourRequest(RELIC, ("vortex_grenade",))
        rich = force(hero, requisition_points=2)
        paid = answer_battle_honour(rich, decision, request, book(), EnteredDice([]))
        assert paid.requisition_points == 1
        assert paid.card("h").crusade_points == 3
        poor = force(hero, requisition_points=0)
        with pytest.raises(RuleError) as refused:
            answer_battle_honour(poor, decision, request, book(), EnteredDice([]))
        assert refused.value.code == "requisition_points_insufficient"

    def test_category_must_be_one_the_decision_allows(self) -> None:
        decision = BattleHonourDecision(None, "victor_bonus", (TRAIT,), eligible=("h",))
        with pytest.raises(RuleError) as refused:
            answer_battle_honour(
                force(character(id="h")),
                decision,
                HonourRequest(RELIC, ("laurels_of_victory",)),
                book(),
                EnteredDice([]),
                card_id="h",
            )
        assert refused.value.code == "honour_category_not_allowed"
        with pytest.raises(RuleError) as refused:
            answer_battle_honour(
                force(character(id="h")), decision, HonourRequest(TRAIT), book(), EnteredDice([1])
            )
        assert refused.value.code == "honour_unit_required"


class TestHonourLimits:
    def test_at_most_six(self) -> None:
        full = card(honours=tuple(BattleHonour(TRAIT, (f"x{i}",), 1) for i in range(6)))
        with pytest.raises(RuleError) as refused:
            gain(full, TRAIT, [1])
        assert refused.value.code == "battle_honours_full"

    @pytest.mark.parametrize(
        "unit",
        [
            character(named_character=True),
            card(keywords={"SWARM"}),
            card(battlefield_role="Fortifications"),
            card(summoned=True),
        ],
    )
    def test_units_that_never_gain_xp_gain_no_honours(self, unit) -> None:  # type: ignore[no-untyped-def]
        with pytest.raises(RuleError) as refused:
            gain(unit, TRAIT, [1])
        assert refused.value.code == "unit_never_gains_experience"

    def test_points_fixed_when_gained(self) -> None:
        honoured, _ = gain(card(power_rating=10), TRAIT, [1])
        assert replace(honoured, power_rating=12).crusade_points == 1
