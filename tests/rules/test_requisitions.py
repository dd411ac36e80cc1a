"""The eight Requisitions (rules: Requisition Points and Requisitions). Every refusal checks
its error code and that the Order of Battle it was given is unchanged."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from app.rules.cards import BattleHonour, BattleScar, Upgrade
from app.rules.data import HonourCategory
from app.rules.errors import RuleError
from app.rules.order_of_battle import OrderOfBattle, remove_unit
from app.rules.requisitions import (
    PurchaseWindow,
    RequisitionOrder,
    RequisitionPurchase,
    knight_character_stratagem,
    purchase_requisition,
)
from tests.factories import book, card, character, force

ANY_TIME = PurchaseWindow()
DURING_BATTLE = PurchaseWindow(during_battle=True)

INFANTRY = {"IMPERIUM", "INFANTRY"}
CHARACTER_KW = {"IMPERIUM", "INFANTRY", "CHARACTER"}
PSYKER_KW = {"IMPERIUM", "INFANTRY", "PSYKER"}
TITANIC_CHARACTER = {"IMPERIUM", "VEHICLE", "TITANIC", "CHARACTER"}


def added(card_id: str) -> PurchaseWindow:
    return PurchaseWindow(card_added=card_id)


def ranked(*card_ids: str) -> PurchaseWindow:
    return PurchaseWindow(rank_gained=frozenset(card_ids))


def buy(
    army: OrderOfBattle,
    window: PurchaseWindow = ANY_TIME,
    *,
    free: bool = False,
    ignore_timing: bool = False,
    **order: Any,
) -> tuple[OrderOfBattle, RequisitionPurchase]:
    return purchase_requisition(
        army, RequisitionOrder(**order), window, book(), free=free, ignore_timing=ignore_timing
    )


def refused(
    army: OrderOfBattle,
    code: str,
    window: PurchaseWindow = ANY_TIME,
    *,
    free: bool = False,
    **order: Any,
) -> RuleError:
    before = copy.deepcopy(army)
    with pytest.raises(RuleError) as error:
        buy(army, window, free=free, **order)
    assert error.value.code == code
    assert army == before
    return error.value


def enhanced(weapon: str, **overrides: Any) -> BattleHonour:
    return BattleHonour(
        HonourCategory.WEAPON_ENHANCEMENT, ("brutal",), 1, weapon=weapon, **overrides
    )


# One valid purchase of each Requisition: (force, order, the moment it is bought in).
Case = tuple[OrderOfBattle, dict[str, Any], PurchaseWindow]


def _supply() -> Case:
    return force(card()), {"requisition": "increase_supply_limit"}, ANY_TIME


def _recruits() -> Case:
    order = {"requisition": "fresh_recruits", "card_id": "u1", "new_power_rating": 8}
    return force(card()), order, ANY_TIME


def _rearm() -> Case:
    order = {"requisition": "rearm_and_resupply", "card_id": "u1", "wargear": "Auto bolt rifles"}
    return force(card()), order, ANY_TIME


def _repair() -> Case:
    scarred = card(scars=(BattleScar("fatigued"),))
    order = {"requisition": "repair_and_recuperate", "card_id": "u1", "scar": "fatigued"}
    return force(scarred), order, ANY_TIME


def _meditations() -> Case:
    order = {"requisition": "psychic_meditations", "card_id": "u1", "psychic_powers": "Smite"}
    return force(card(keywords=PSYKER_KW)), order, ANY_TIME


def _specialists() -> Case:
    order = {
        "requisition": "specialist_reinforcements",
        "card_id": "u1",
        "stratagem": "Honoured Veterans",
        "stratagem_cp": 1,
    }
    return force(card()), order, added("u1")


def _warlord() -> Case:
    order = {"requisition": "warlord_trait", "card_id": "c1", "warlord_trait": "Inspiring Leader"}
    return force(character()), order, added("c1")


def _relic() -> Case:
    order = {"requisition": "relic", "card_id": "c1", "relic": "The Armour Indomitus"}
    return force(character()), order, added("c1")


CASES: dict[str, Callable[[], Case]] = {
    "increase_supply_limit": _supply,
    "fresh_recruits": _recruits,
    "rearm_and_resupply": _rearm,
    "repair_and_recuperate": _repair,
    "psychic_meditations": _meditations,
    "specialist_reinforcements": _specialists,
    "warlord_trait": _warlord,
    "relic": _relic,
}
REQUISITIONS = list(CASES)


class TestEveryRequisition:
    def test_the_rules_have_exactly_these_eight_requisitions(self) -> None:
        assert sorted(r.id for r in book().requisitions) == sorted(REQUISITIONS)

    @pytest.mark.parametrize("requisition", REQUISITIONS)
    def test_costs_one_requisition_point(self, requisition: str) -> None:
        army, order, window = CASES[requisition]()
        changed, bought = buy(army, window, **order)
        assert changed.requisition_points == army.requisition_points - 1 == 4
        assert bought.requisition_points_spent == 1
        assert bought.requisition == requisition

    @pytest.mark.parametrize("requisition", REQUISITIONS)
    def test_the_last_requisition_point_can_be_spent(self, requisition: str) -> None:
        army, order, window = CASES[requisition]()
        changed, _ = buy(replace(army, requisition_points=1), window, **order)
        assert changed.requisition_points == 0

    @pytest.mark.parametrize("requisition", REQUISITIONS)
    def test_refused_without_enough_requisition_points(self, requisition: str) -> None:
        army, order, window = CASES[requisition]()
        refused(
            replace(army, requisition_points=0), "requisition_points_insufficient", window, **order
        )

    @pytest.mark.parametrize("requisition", REQUISITIONS)
    def test_a_free_requisition_costs_nothing(self, requisition: str) -> None:
        army, order, window = CASES[requisition]()
        changed, bought = buy(replace(army, requisition_points=0), window, free=True, **order)
        assert changed.requisition_points == 0
        assert bought.requisition_points_spent == 0

    @pytest.mark.parametrize("requisition", REQUISITIONS)
    @pytest.mark.parametrize(
        "window",
        [
            DURING_BATTLE,
            PurchaseWindow(during_battle=True, card_added="u1"),
            PurchaseWindow(during_battle=True, card_added="c1"),
            PurchaseWindow(during_battle=True, rank_gained=frozenset({"c1"})),
        ],
        ids=["plain", "unit_added", "character_added", "character_ranked"],
    )
    def test_never_during_a_battle(self, requisition: str, window: PurchaseWindow) -> None:
        army, order, _ = CASES[requisition]()
        refused(army, "requisition_during_battle", window, **order)

    @pytest.mark.parametrize("requisition", REQUISITIONS)
    def test_never_during_a_battle_even_when_free(self, requisition: str) -> None:
        army, order, _ = CASES[requisition]()
        refused(army, "requisition_during_battle", DURING_BATTLE, free=True, **order)

    @pytest.mark.parametrize(
        "requisition",
        [
            "increase_supply_limit",
            "fresh_recruits",
            "rearm_and_resupply",
            "repair_and_recuperate",
            "psychic_meditations",
        ],
    )
    @pytest.mark.parametrize(
        "window",
        [ANY_TIME, added("someone_else"), ranked("someone_else")],
        ids=["between_battles", "another_unit_added", "another_unit_ranked"],
    )
    def test_the_others_may_be_bought_at_any_time_outside_a_battle(
        self, requisition: str, window: PurchaseWindow
    ) -> None:
        army, order, _ = CASES[requisition]()
        changed, _ = buy(army, window, **order)
        assert changed.requisition_points == 4

    @pytest.mark.parametrize(
        "requisition",
        [r for r in REQUISITIONS if r != "increase_supply_limit"],
    )
    def test_a_unit_requisition_needs_a_unit(self, requisition: str) -> None:
        army, order, window = CASES[requisition]()
        refused(army, "requisition_target_missing", window, **{**order, "card_id": None})

    @pytest.mark.parametrize(
        "requisition",
        [r for r in REQUISITIONS if r != "increase_supply_limit"],
    )
    def test_the_unit_must_be_in_the_order_of_battle(self, requisition: str) -> None:
        army, order, _ = CASES[requisition]()
        refused(
            army,
            "unit_not_in_order_of_battle",
            added("ghost"),
            **{**order, "card_id": "ghost"},
        )

    def test_an_unknown_requisition_is_refused(self) -> None:
        refused(force(), "requisition_unknown", requisition="orbital_bombardment")

    @pytest.mark.parametrize(
        ("requisition", "missing"),
        [
            ("fresh_recruits", "new_power_rating"),
            ("rearm_and_resupply", "wargear"),
            ("repair_and_recuperate", "scar"),
            ("psychic_meditations", "psychic_powers"),
            ("specialist_reinforcements", "stratagem"),
            ("specialist_reinforcements", "stratagem_cp"),
            ("warlord_trait", "warlord_trait"),
            ("relic", "relic"),
        ],
    )
    def test_the_detail_each_requisition_needs_must_be_given(
        self, requisition: str, missing: str
    ) -> None:
        army, order, window = CASES[requisition]()
        error = refused(army, "requisition_detail_missing", window, **{**order, missing: None})
        assert error.field == missing

    @pytest.mark.parametrize("requisition", REQUISITIONS)
    def test_buying_never_changes_the_force_it_was_given(self, requisition: str) -> None:
        army, order, window = CASES[requisition]()
        before = copy.deepcopy(army)
        changed, _ = buy(army, window, **order)
        assert army == before
        assert changed != army

    def test_requisitions_can_be_bought_repeatedly_while_points_last(self) -> None:
        army = force()
        for expected_rp in (4, 3, 2, 1, 0):
            army, _ = buy(army, requisition="increase_supply_limit")
            assert army.requisition_points == expected_rp
        assert army.supply_limit == 75
        refused(army, "requisition_points_insufficient", requisition="increase_supply_limit")

    def test_a_cards_crusade_points_add_up_everything_bought_for_it(self) -> None:
        army = force(character(keywords=TITANIC_CHARACTER, power_rating=24))
        window = added("c1")
        army, _ = buy(army, window, requisition="warlord_trait", card_id="c1", warlord_trait="X")
        army, _ = buy(army, window, requisition="relic", card_id="c1", relic="Y", model="Baron")
        army, _ = buy(
            army,
            window,
            requisition="specialist_reinforcements",
            card_id="c1",
            stratagem="Honoured Veterans",
            stratagem_cp=1,
        )
        assert army.card("c1").crusade_points == 2 + 2 + 1
        assert army.crusade_points == 5
        assert army.requisition_points == 2


class TestIncreaseSupplyLimit:
    def test_raises_the_supply_limit_by_5(self) -> None:
        changed, bought = buy(force(), requisition="increase_supply_limit")
        assert changed.supply_limit == 55
        assert bought.card_id is None
        assert bought.crusade_points_gained == 0

    def test_the_raised_limit_lets_more_power_in(self) -> None:
        full = force(card(power_rating=50))
        refused(
            full,
            "supply_limit_exceeded",
            requisition="fresh_recruits",
            card_id="u1",
            new_power_rating=51,
        )
        raised, _ = buy(full, requisition="increase_supply_limit")
        changed, _ = buy(raised, requisition="fresh_recruits", card_id="u1", new_power_rating=55)
        assert changed.supply_used == 55 == changed.supply_limit


class TestFreshRecruits:
    def test_adds_models_raising_the_power_rating(self) -> None:
        changed, bought = buy(
            force(card(power_rating=5)),
            requisition="fresh_recruits",
            card_id="u1",
            new_power_rating=10,
            wargear="10 bolt rifles",
        )
        recruited = changed.card("u1")
        assert recruited.power_rating == 10
        assert recruited.wargear == "10 bolt rifles"
        assert changed.supply_used == 10
        assert bought.crusade_points_gained == 0

    def test_wargear_is_kept_when_not_given(self) -> None:
        changed, _ = buy(
            force(card(wargear="Bolt rifles")),
            requisition="fresh_recruits",
            card_id="u1",
            new_power_rating=8,
        )
        assert changed.card("u1").wargear == "Bolt rifles"

    @pytest.mark.parametrize(
        "keywords",
        [
            CHARACTER_KW,
            {"IMPERIUM", "VEHICLE"},
            {"TYRANIDS", "MONSTER"},
            {"IMPERIUM", "VEHICLE", "CHARACTER"},
        ],
        ids=["character", "vehicle", "monster", "character_vehicle"],
    )
    def test_not_for_characters_vehicles_or_monsters(self, keywords: set[str]) -> None:
        refused(
            force(card(keywords=keywords)),
            "requisition_target_invalid",
            requisition="fresh_recruits",
            card_id="u1",
            new_power_rating=8,
        )

    @pytest.mark.parametrize(
        ("rank", "allowed"),
        [
            ("battle_ready", True),
            ("blooded", True),
            ("battle_hardened", False),
            ("heroic", False),
            ("legendary", False),
        ],
    )
    def test_not_for_battle_hardened_heroic_or_legendary_units(
        self, rank: str, allowed: bool
    ) -> None:
        army = force(card(rank=rank))
        order: dict[str, Any] = {
            "requisition": "fresh_recruits",
            "card_id": "u1",
            "new_power_rating": 8,
        }
        if allowed:
            changed, _ = buy(army, **order)
            assert changed.card("u1").power_rating == 8
        else:
            refused(army, "requisition_rank_too_high", **order)

    @pytest.mark.parametrize(
        ("rank", "before", "after", "gained"),
        [
            ("blooded", 10, 11, 1),
            ("blooded", 5, 15, 1),
            ("blooded", 1, 11, 1),
            ("blooded", 8, 10, 0),
            ("blooded", 11, 12, 0),
            ("blooded", 12, 20, 0),
            ("battle_ready", 10, 11, 0),
            ("battle_ready", 5, 15, 0),
        ],
    )
    def test_a_blooded_unit_going_from_power_10_or_less_to_11_or_more_gains_a_crusade_point(
        self, rank: str, before: int, after: int, gained: int
    ) -> None:
        unit = card(rank=rank, power_rating=before)
        changed, bought = buy(
            force(unit), requisition="fresh_recruits", card_id="u1", new_power_rating=after
        )
        assert bought.crusade_points_gained == gained
        assert changed.card("u1").crusade_points == unit.crusade_points + gained
        assert changed.crusade_points == gained

    def test_the_crusade_point_is_kept_when_the_power_rating_changes_again(self) -> None:
        changed, _ = buy(
            force(card(rank="blooded", power_rating=9)),
            requisition="fresh_recruits",
            card_id="u1",
            new_power_rating=12,
        )
        assert replace(changed.card("u1"), power_rating=9).crusade_points == 1

    def test_honours_already_gained_keep_their_crusade_points(self) -> None:
        honour = BattleHonour(HonourCategory.BATTLE_TRAIT, ("grizzled",), 1)
        unit = card(power_rating=9, honours=(honour,))
        changed, bought = buy(
            force(unit), requisition="fresh_recruits", card_id="u1", new_power_rating=12
        )
        assert changed.card("u1").crusade_points == 1
        assert bought.crusade_points_gained == 0

    @pytest.mark.parametrize(("new_power", "allowed"), [(7, True), (8, False)])
    def test_the_supply_limit_is_respected(self, new_power: int, allowed: bool) -> None:
        # Supply used 48 of 50: the unit may grow by 2 Power, no more.
        army = force(card(power_rating=5), card(id="u2", power_rating=43))
        order: dict[str, Any] = {
            "requisition": "fresh_recruits",
            "card_id": "u1",
            "new_power_rating": new_power,
        }
        if allowed:
            changed, _ = buy(army, **order)
            assert changed.supply_used == changed.supply_limit == 50
        else:
            refused(army, "supply_limit_exceeded", **order)

    @pytest.mark.parametrize("new_power", [5, 4, 1])
    def test_the_power_rating_must_go_up(self, new_power: int) -> None:
        refused(
            force(card(power_rating=5)),
            "power_rating_invalid",
            requisition="fresh_recruits",
            card_id="u1",
            new_power_rating=new_power,
        )


class TestRearmAndResupply:
    @pytest.mark.parametrize(
        "keywords",
        [INFANTRY, {"IMPERIUM", "VEHICLE"}, {"TYRANIDS", "MONSTER"}, PSYKER_KW],
        ids=["infantry", "vehicle", "monster", "psyker"],
    )
    def test_changes_the_wargear_of_any_unit_but_a_character(self, keywords: set[str]) -> None:
        changed, bought = buy(
            force(card(keywords=keywords, wargear="Bolt rifles")),
            requisition="rearm_and_resupply",
            card_id="u1",
            wargear="Auto bolt rifles",
            replaced_weapons=("Bolt rifle",),
        )
        assert changed.card("u1").wargear == "Auto bolt rifles"
        assert changed.card("u1").power_rating == 5
        assert bought.crusade_points_gained == 0

    @pytest.mark.parametrize(
        "keywords",
        [CHARACTER_KW, {"IMPERIUM", "VEHICLE", "CHARACTER"}, TITANIC_CHARACTER],
        ids=["character", "character_vehicle", "titanic_character"],
    )
    def test_not_for_characters(self, keywords: set[str]) -> None:
        refused(
            force(card(keywords=keywords)),
            "requisition_target_invalid",
            requisition="rearm_and_resupply",
            card_id="u1",
            wargear="Thunder hammer",
        )

    @pytest.mark.parametrize("replaced", ["Bolt rifle", "BOLT RIFLE", "bolt rifle"])
    def test_never_swaps_out_a_weapon_with_a_weapon_enhancement(self, replaced: str) -> None:
        unit = card(honours=(enhanced("Bolt rifle", model="Sergeant"),))
        refused(
            force(unit),
            "weapon_enhanced_cannot_be_replaced",
            requisition="rearm_and_resupply",
            card_id="u1",
            wargear="Auto bolt rifles",
            replaced_weapons=("Heavy bolter", replaced),
        )

    def test_may_swap_weapons_that_are_not_enhanced(self) -> None:
        unit = card(honours=(enhanced("Bolt rifle", model="Sergeant"),), wargear="Bolt rifles")
        changed, _ = buy(
            force(unit),
            requisition="rearm_and_resupply",
            card_id="u1",
            wargear="Bolt rifles, plasma incinerator",
            replaced_weapons=("Heavy bolter",),
        )
        assert changed.card("u1").wargear == "Bolt rifles, plasma incinerator"
        assert changed.card("u1").honours == unit.honours


class TestRepairAndRecuperate:
    def test_removes_one_chosen_battle_scar(self) -> None:
        scarred = card(scars=(BattleScar("fatigued"), BattleScar("shell_shock")))
        changed, bought = buy(
            force(scarred), requisition="repair_and_recuperate", card_id="u1", scar="shell_shock"
        )
        assert changed.card("u1").scar_ids == {"fatigued"}
        assert bought.crusade_points_gained == 1

    @pytest.mark.parametrize("scars", [1, 2, 6])
    def test_crusade_points_effectively_rise_by_one(self, scars: int) -> None:
        ids = ["walking_wounded", "fatigued", "battle_weary", "shell_shock", "disgraced"]
        ids.append("mark_of_shame")
        honour = BattleHonour(HonourCategory.BATTLE_TRAIT, ("grizzled",), 2)
        scarred = card(honours=(honour,), scars=tuple(BattleScar(s) for s in ids[:scars]))
        changed, bought = buy(
            force(scarred), requisition="repair_and_recuperate", card_id="u1", scar=ids[0]
        )
        assert changed.card("u1").crusade_points == scarred.crusade_points + 1 == 2 - scars + 1
        assert bought.crusade_points_gained == 1

    @pytest.mark.parametrize(
        ("keywords", "scar"),
        [
            (CHARACTER_KW, "lost_leg"),
            ({"IMPERIUM", "VEHICLE"}, "engine_fault"),
            ({"TYRANIDS", "MONSTER"}, "crippled_limb"),
        ],
    )
    def test_any_unit_with_a_scar_may_be_repaired(self, keywords: set[str], scar: str) -> None:
        changed, _ = buy(
            force(card(keywords=keywords, scars=(BattleScar(scar),))),
            requisition="repair_and_recuperate",
            card_id="u1",
            scar=scar,
        )
        assert changed.card("u1").scars == ()

    def test_the_unit_must_have_a_battle_scar(self) -> None:
        refused(
            force(card()),
            "requisition_target_invalid",
            requisition="repair_and_recuperate",
            card_id="u1",
            scar="fatigued",
        )

    def test_the_scar_must_be_one_the_unit_has(self) -> None:
        refused(
            force(card(scars=(BattleScar("fatigued"),))),
            "battle_scar_not_held",
            requisition="repair_and_recuperate",
            card_id="u1",
            scar="disgraced",
        )

    @pytest.mark.parametrize("window", [ANY_TIME, added("u1"), ranked("u1")])
    def test_before_or_after_a_battle(self, window: PurchaseWindow) -> None:
        changed, _ = buy(
            force(card(scars=(BattleScar("fatigued"),))),
            window,
            requisition="repair_and_recuperate",
            card_id="u1",
            scar="fatigued",
        )
        assert changed.card("u1").scars == ()


class TestPsychicMeditations:
    @pytest.mark.parametrize(
        "keywords",
        [
            PSYKER_KW,
            {"IMPERIUM", "INFANTRY", "PSYKER", "CHARACTER"},
            {"TYRANIDS", "MONSTER", "PSYKER"},
        ],
    )
    def test_changes_the_psychic_powers_a_psyker_knows(self, keywords: set[str]) -> None:
        psyker = card(keywords=keywords, psychic_powers="Smite, Veil of Time")
        changed, bought = buy(
            force(psyker),
            requisition="psychic_meditations",
            card_id="u1",
            psychic_powers="Smite, Null Zone",
        )
        assert changed.card("u1").psychic_powers == "Smite, Null Zone"
        assert bought.crusade_points_gained == 0

    @pytest.mark.parametrize(
        "keywords",
        [INFANTRY, CHARACTER_KW, {"IMPERIUM", "VEHICLE"}],
        ids=["infantry", "character", "vehicle"],
    )
    def test_psyker_units_only(self, keywords: set[str]) -> None:
        refused(
            force(card(keywords=keywords)),
            "requisition_target_invalid",
            requisition="psychic_meditations",
            card_id="u1",
            psychic_powers="Smite",
        )


class TestSpecialistReinforcements:
    @pytest.mark.parametrize("stratagem_cp", [1, 2, 3])
    def test_one_crusade_point_per_command_point_the_stratagem_costs(
        self, stratagem_cp: int
    ) -> None:
        changed, bought = buy(
            force(card()),
            added("u1"),
            requisition="specialist_reinforcements",
            card_id="u1",
            stratagem="Honoured Veterans",
            stratagem_cp=stratagem_cp,
        )
        upgraded = changed.card("u1")
        assert upgraded.crusade_points == stratagem_cp
        assert bought.crusade_points_gained == stratagem_cp
        assert upgraded.upgrades == (
            Upgrade("specialist_reinforcements", "Honoured Veterans", stratagem_cp),
        )

    @pytest.mark.parametrize("stratagem_cp", [0, -1])
    def test_the_stratagem_must_cost_command_points(self, stratagem_cp: int) -> None:
        refused(
            force(card()),
            "stratagem_cp_invalid",
            added("u1"),
            requisition="specialist_reinforcements",
            card_id="u1",
            stratagem="Honoured Veterans",
            stratagem_cp=stratagem_cp,
        )

    def test_any_unit_may_be_upgraded_when_added(self) -> None:
        knight = card(
            id="k1", keywords={"IMPERIUM", "IMPERIAL KNIGHT", "VEHICLE", "TITANIC"}, power_rating=24
        )
        changed, _ = buy(
            force(knight),
            added("k1"),
            requisition="specialist_reinforcements",
            card_id="k1",
            stratagem="Auspex Array",
            stratagem_cp=2,
        )
        assert changed.card("k1").crusade_points == 2

    @pytest.mark.parametrize(
        ("stratagem", "cp", "code"),
        [
            ("Knight Baron", 2, "stratagem_cp_invalid"),  # its own cost is 1 CP
            ("Tyrannical Court", 3, "stratagem_cp_invalid"),
            ("Heirlooms of the Household", 1, "stratagem_gives_relic_or_trait"),
            ("Relic of the Chapter", 1, "stratagem_gives_relic_or_trait"),
            ("Exemplary Warlord Trait", 1, "stratagem_gives_relic_or_trait"),
        ],
    )
    def test_the_stratagems_own_cost_and_never_a_relic_or_trait(
        self, stratagem: str, cp: int, code: str
    ) -> None:
        knight = card(
            id="k1", keywords={"IMPERIUM", "IMPERIAL KNIGHTS", "CHAOS KNIGHTS"}, power_rating=24
        )
        army = force(knight)
        with pytest.raises(RuleError) as refusal:
            buy(
                army,
                added("k1"),
                requisition="specialist_reinforcements",
                card_id="k1",
                stratagem=stratagem,
                stratagem_cp=cp,
            )
        assert refusal.value.code == code

    @pytest.mark.parametrize(
        "window",
        [
            ANY_TIME,
            added("u2"),
            ranked("u1"),
            PurchaseWindow(card_added="u2", rank_gained=frozenset({"u1"})),
        ],
        ids=["between_battles", "another_unit_added", "rank_gained", "other_added_this_ranked"],
    )
    def test_only_when_the_units_card_is_added(self, window: PurchaseWindow) -> None:
        refused(
            force(card(), card(id="u2")),
            "requisition_timing",
            window,
            requisition="specialist_reinforcements",
            card_id="u1",
            stratagem="Honoured Veterans",
            stratagem_cp=1,
        )

    def test_a_victor_bonus_may_ignore_timing(self) -> None:
        changed, _ = buy(
            force(card()),
            ANY_TIME,
            ignore_timing=True,
            requisition="specialist_reinforcements",
            card_id="u1",
            stratagem="Honoured Veterans",
            stratagem_cp=1,
        )
        assert changed.card("u1").crusade_points == 1


def _trait(army: OrderOfBattle, card_id: str = "c1", **order: Any) -> OrderOfBattle:
    changed, _ = buy(
        army,
        added(card_id),
        requisition="warlord_trait",
        card_id=card_id,
        **{"warlord_trait": "Inspiring Leader", **order},
    )
    return changed


def _with(requisition: str, detail: str, model: str | None = None, **kw: Any) -> Upgrade:
    return Upgrade(requisition, detail, 1, model=model, **kw)


class TestWarlordTrait:
    @pytest.mark.parametrize(
        ("keywords", "points"),
        [
            (CHARACTER_KW, 1),
            ({"IMPERIUM", "VEHICLE", "CHARACTER"}, 1),
            ({"TYRANIDS", "MONSTER", "CHARACTER"}, 1),
            (TITANIC_CHARACTER, 2),
        ],
        ids=["character", "character_vehicle", "character_monster", "titanic_character"],
    )
    def test_one_crusade_point_or_two_if_titanic(self, keywords: set[str], points: int) -> None:
        changed, bought = buy(
            force(character(keywords=keywords)),
            added("c1"),
            requisition="warlord_trait",
            card_id="c1",
            warlord_trait="Inspiring Leader",
        )
        assert bought.crusade_points_gained == points
        upgrade = changed.card("c1").upgrades[0]
        assert (upgrade.requisition, upgrade.detail, upgrade.crusade_points) == (
            "warlord_trait",
            "Inspiring Leader",
            points,
        )

    @pytest.mark.parametrize(
        "keywords",
        [INFANTRY, {"IMPERIUM", "VEHICLE"}, {"IMPERIUM", "VEHICLE", "TITANIC"}, PSYKER_KW],
        ids=["infantry", "vehicle", "titanic", "psyker"],
    )
    def test_characters_only(self, keywords: set[str]) -> None:
        refused(
            force(card(keywords=keywords)),
            "requisition_target_invalid",
            added("u1"),
            requisition="warlord_trait",
            card_id="u1",
            warlord_trait="Inspiring Leader",
        )

    @pytest.mark.parametrize(
        "window",
        [
            added("c1"),
            ranked("c1"),
            ranked("c2", "c1"),
            PurchaseWindow(card_added="c2", rank_gained=frozenset({"c1"})),
        ],
        ids=["card_added", "rank_gained", "one_of_several_ranked", "ranked_while_another_added"],
    )
    def test_when_the_character_is_added_or_has_just_gained_a_rank(
        self, window: PurchaseWindow
    ) -> None:
        changed, _ = buy(
            force(character(), character(id="c2", name="Chaplain")),
            window,
            requisition="warlord_trait",
            card_id="c1",
            warlord_trait="Inspiring Leader",
        )
        assert changed.card("c1").crusade_points == 1

    @pytest.mark.parametrize(
        "window",
        [ANY_TIME, added("c2"), ranked("c2")],
        ids=["between_battles", "another_character_added", "another_character_ranked"],
    )
    def test_not_at_any_other_time(self, window: PurchaseWindow) -> None:
        refused(
            force(character(), character(id="c2", name="Chaplain")),
            "requisition_timing",
            window,
            requisition="warlord_trait",
            card_id="c1",
            warlord_trait="Inspiring Leader",
        )

    def test_no_model_can_have_more_than_one_warlord_trait(self) -> None:
        army = _trait(force(character()))
        refused(
            army,
            "warlord_trait_one_per_model",
            ranked("c1"),
            requisition="warlord_trait",
            card_id="c1",
            warlord_trait="Master of Ambush",
        )

    def test_another_model_of_the_same_unit_may_have_its_own(self) -> None:
        army = _trait(force(character(name="Command Squad")), model="Captain")
        changed = _trait(army, warlord_trait="Master of Ambush", model="Ancient")
        assert [u.model for u in changed.card("c1").upgrades] == ["Captain", "Ancient"]
        assert changed.card("c1").crusade_points == 2

    @pytest.mark.parametrize(
        "trait", ["Inspiring Leader", "inspiring leader", " INSPIRING LEADER "]
    )
    def test_the_same_trait_only_once_in_the_order_of_battle(self, trait: str) -> None:
        holder = character(upgrades=(_with("warlord_trait", "Inspiring Leader", "Captain"),))
        army = force(holder, character(id="c2", name="Chaplain"))
        refused(
            army,
            "warlord_trait_taken",
            added("c2"),
            requisition="warlord_trait",
            card_id="c2",
            warlord_trait=trait,
        )

    def test_a_different_trait_for_another_character_is_fine(self) -> None:
        holder = character(upgrades=(_with("warlord_trait", "Inspiring Leader", "Captain"),))
        army = force(holder, character(id="c2", name="Chaplain"))
        changed = _trait(army, "c2", warlord_trait="Master of Ambush")
        assert changed.card("c2").crusade_points == 1

    def test_a_removed_models_trait_is_free_for_another_character(self) -> None:
        holder = character(upgrades=(_with("warlord_trait", "Inspiring Leader", "Captain"),))
        army = remove_unit(force(holder, character(id="c2", name="Chaplain")), "c1")
        changed = _trait(army, "c2")
        assert changed.card("c2").upgrades[0].detail == "Inspiring Leader"

    def test_a_relic_does_not_count_as_a_warlord_trait(self) -> None:
        holder = character(upgrades=(_with("relic", "Inspiring Leader", "Captain"),))
        changed = _trait(force(holder))
        assert changed.card("c1").crusade_points == 2


def _relic_order(card_id: str = "c1", **order: Any) -> dict[str, Any]:
    return {"requisition": "relic", "card_id": card_id, "relic": "The Burning Blade", **order}


class TestRelic:
    @pytest.mark.parametrize(
        ("keywords", "first_founding", "points"),
        [
            (CHARACTER_KW, False, 1),
            (CHARACTER_KW, True, 2),
            (TITANIC_CHARACTER, False, 2),
            (TITANIC_CHARACTER, True, 2),
        ],
        ids=["character", "first_founding", "titanic", "titanic_first_founding"],
    )
    def test_one_crusade_point_or_two_if_titanic_or_first_founding(
        self, keywords: set[str], first_founding: bool, points: int
    ) -> None:
        changed, bought = buy(
            force(character(keywords=keywords)),
            added("c1"),
            **_relic_order(first_founding=first_founding),
        )
        assert bought.crusade_points_gained == points
        upgrade = changed.card("c1").upgrades[0]
        assert (upgrade.requisition, upgrade.detail, upgrade.first_founding) == (
            "relic",
            "The Burning Blade",
            first_founding,
        )
        assert upgrade.crusade_points == points

    @pytest.mark.parametrize(
        "keywords",
        [INFANTRY, {"IMPERIUM", "VEHICLE", "TITANIC"}, PSYKER_KW],
        ids=["infantry", "titanic", "psyker"],
    )
    def test_characters_only(self, keywords: set[str]) -> None:
        refused(
            force(card(keywords=keywords)),
            "requisition_target_invalid",
            added("u1"),
            **_relic_order("u1"),
        )

    @pytest.mark.parametrize("window", [added("c1"), ranked("c1")], ids=["added", "ranked"])
    def test_when_the_character_is_added_or_has_just_gained_a_rank(
        self, window: PurchaseWindow
    ) -> None:
        changed, _ = buy(force(character()), window, **_relic_order())
        assert changed.card("c1").crusade_points == 1

    @pytest.mark.parametrize(
        "window",
        [ANY_TIME, added("c2"), ranked("c2")],
        ids=["between_battles", "another_character_added", "another_character_ranked"],
    )
    def test_not_at_any_other_time(self, window: PurchaseWindow) -> None:
        refused(
            force(character(), character(id="c2", name="Chaplain")),
            "requisition_timing",
            window,
            **_relic_order(),
        )

    def test_the_relic_goes_to_the_champion_unless_another_model_is_named(self) -> None:
        squad = character(name="Command Squad", champion="Captain")
        changed, _ = buy(force(squad), added("c1"), **_relic_order())
        assert changed.card("c1").upgrades[0].model == "Captain"
        changed, _ = buy(force(squad), added("c1"), **_relic_order(model="Ancient"))
        assert changed.card("c1").upgrades[0].model == "Ancient"

    def test_no_model_can_have_more_than_one_relic(self) -> None:
        holder = character(upgrades=(_with("relic", "The Burning Blade", "Captain"),))
        refused(
            force(holder),
            "relic_one_per_model",
            ranked("c1"),
            **_relic_order(relic="Armour Indomitus", model="Captain"),
        )

    def test_another_model_of_the_same_unit_may_have_its_own(self) -> None:
        holder = character(upgrades=(_with("relic", "The Burning Blade", "Captain"),))
        changed, _ = buy(
            force(holder),
            ranked("c1"),
            **_relic_order(relic="Standard of the Emperor Ascendant", model="Ancient"),
        )
        assert changed.card("c1").crusade_points == 2

    @pytest.mark.parametrize("relic", ["The Burning Blade", "the burning blade"])
    def test_the_same_relic_only_once_in_the_order_of_battle(self, relic: str) -> None:
        holder = character(upgrades=(_with("relic", "The Burning Blade", "Captain"),))
        army = force(holder, character(id="c2", name="Chaplain"))
        refused(army, "relic_taken", added("c2"), **_relic_order("c2", relic=relic))

    def test_a_warlord_trait_does_not_count_as_a_relic(self) -> None:
        holder = character(upgrades=(_with("warlord_trait", "Rites of War", "Captain"),))
        changed, _ = buy(force(holder), added("c1"), **_relic_order(model="Captain"))
        assert changed.card("c1").crusade_points == 2

    def test_only_one_character_may_have_a_first_founding_relic(self) -> None:
        holder = character(
            upgrades=(_with("relic", "The Burning Blade", "Captain", first_founding=True),)
        )
        army = force(holder, character(id="c2", name="Chaplain"))
        refused(
            army,
            "first_founding_relic_taken",
            added("c2"),
            **_relic_order("c2", relic="Benediction of Fury", first_founding=True),
        )
        _, bought = buy(army, added("c2"), **_relic_order("c2", relic="Benediction of Fury"))
        assert bought.crusade_points_gained == 1

    def test_a_removed_model_frees_its_relic_and_the_first_founding_place(self) -> None:
        holder = character(
            upgrades=(_with("relic", "The Burning Blade", "Captain", first_founding=True),)
        )
        army = remove_unit(force(holder, character(id="c2", name="Chaplain")), "c1")
        changed, bought = buy(army, added("c2"), **_relic_order("c2", first_founding=True))
        assert changed.card("c2").upgrades[0].detail == "The Burning Blade"
        assert bought.crusade_points_gained == 2

    @pytest.mark.parametrize(
        "honour",
        [
            enhanced("Power sword", model="Captain"),
            BattleHonour(
                HonourCategory.CRUSADE_RELIC,
                ("artificer_weapon",),
                1,
                weapon="Power sword",
                model="Captain",
            ),
        ],
        ids=["weapon_enhancement", "artificer_weapon"],
    )
    def test_cannot_replace_a_weapon_upgraded_by_an_enhancement_or_crusade_relic(
        self, honour: BattleHonour
    ) -> None:
        refused(
            force(character(honours=(honour,))),
            "weapon_enhanced_cannot_be_replaced",
            added("c1"),
            **_relic_order(replaces_weapon="power SWORD"),
        )

    def test_may_replace_a_weapon_that_is_not_enhanced(self) -> None:
        captain = character(honours=(enhanced("Bolt pistol", model="Captain"),))
        changed, _ = buy(force(captain), added("c1"), **_relic_order(replaces_weapon="Power sword"))
        relic_bearer = changed.card("c1")
        assert relic_bearer.upgrades[0].weapon == "Power sword"
        assert relic_bearer.relic_weapons == {"power sword"}

    @pytest.mark.parametrize("relic", ["Laurels of Victory", "Vortex Grenade", "artificer weapon"])
    def test_a_crusade_relic_cannot_be_given_by_the_relic_requisition(self, relic: str) -> None:
        # The Relic requisition gives a Relic "excluding Crusade Relics".
        army = force(character(rank="legendary"))
        before = copy.deepcopy(army)
        with pytest.raises(RuleError) as error:
            buy(army, added("c1"), **_relic_order(relic=relic))
        assert error.value.code == "relic_is_crusade_relic"
        assert error.value.field == "relic"
        assert army == before


@pytest.mark.parametrize(
    ("keywords", "stratagem"),
    [
        (["CHAOS", "CHAOS KNIGHTS", "VEHICLE", "WAR DOG-CLASS"], "Tyrannical Court"),
        (["Chaos Knight", "Vehicle"], "Tyrannical Court"),  # a roster's singular, any case
        (["IMPERIUM", "IMPERIAL KNIGHTS", "TITANIC"], "Knight Baron"),
        (["IMPERIUM", "ADEPTUS ASTARTES", "VEHICLE"], None),
    ],
)
def test_the_stratagem_a_knights_lance_stands_for(
    keywords: list[str], stratagem: str | None
) -> None:
    found = knight_character_stratagem(keywords, book())
    assert (found.stratagem if found else None) == stratagem
    assert found is None or found.cp == 1
