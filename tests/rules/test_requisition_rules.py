"""The eight Requisitions: timing, targets, RP and what each changes."""

from __future__ import annotations

import pytest

from app.rules.cards import BattleHonour, BattleScar, Upgrade
from app.rules.data import HonourCategory
from app.rules.errors import RuleError
from app.rules.order_of_battle import OrderOfBattle, remove_unit
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition
from tests.factories import book, card, character, force

ANY_TIME = PurchaseWindow()


def buy(army: OrderOfBattle, window: PurchaseWindow = ANY_TIME, **order):  # type: ignore[no-untyped-def]
    return purchase_requisition(army, RequisitionOrder(**order), window, book())


def refused(army: OrderOfBattle, code: str, window: PurchaseWindow = ANY_TIME, **order) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RuleError) as error:
        buy(army, window, **order)
    assert error.value.code == code


class TestEveryRequisition:
    def test_costs_one_rp_and_is_refused_without_it(self) -> None:
        changed, bought = buy(force(), requisition="increase_supply_limit")
        assert (changed.requisition_points, bought.requisition_points_spent) == (4, 1)
        refused(
            force(requisition_points=0),
            "requisition_points_insufficient",
            requisition="increase_supply_limit",
        )

    def test_never_during_a_battle(self) -> None:
        refused(
            force(),
            "requisition_during_battle",
            PurchaseWindow(during_battle=True),
            requisition="increase_supply_limit",
        )

    def test_free_costs_nothing(self) -> None:
        changed, bought = purchase_requisition(
            force(requisition_points=0),
            RequisitionOrder("increase_supply_limit"),
            ANY_TIME,
            book(),
            free=True,
        )
        assert (
            changed.requisition_points,
            changed.supply_limit,
            bought.requisition_points_spent,
        ) == (0, 55, 0)

    def test_unknown(self) -> None:
        refused(force(), "requisition_unknown", requisition="orbital_strike")

    def test_unit_requisitions_need_a_unit(self) -> None:
        refused(
            force(card()),
            "requisition_target_missing",
            requisition="fresh_recruits",
            new_power_rating=8,
        )


class TestIncreaseSupplyLimit:
    def test_plus_five(self) -> None:
        changed, _ = buy(force(), requisition="increase_supply_limit")
        assert changed.supply_limit == 55


class TestFreshRecruits:
    def test_adds_power_within_supply(self) -> None:
        changed, bought = buy(
            force(card(power_rating=5)),
            requisition="fresh_recruits",
            card_id="u1",
            new_power_rating=10,
        )
        assert changed.card("u1").power_rating == 10
        assert bought.crusade_points_gained == 0

    def test_blooded_unit_crossing_ten_gains_a_crusade_point(self) -> None:
        army = force(card(power_rating=9, rank="blooded", xp=7))
        changed, bought = buy(army, requisition="fresh_recruits", card_id="u1", new_power_rating=12)
        assert bought.crusade_points_gained == 1
        assert changed.card("u1").crusade_points == 1

    def test_battle_ready_unit_crossing_ten_gains_nothing(self) -> None:
        _, bought = buy(
            force(card(power_rating=9)),
            requisition="fresh_recruits",
            card_id="u1",
            new_power_rating=12,
        )
        assert bought.crusade_points_gained == 0

    @pytest.mark.parametrize("keyword", ["CHARACTER", "VEHICLE", "MONSTER"])
    def test_not_for_characters_vehicles_monsters(self, keyword: str) -> None:
        refused(
            force(card(keywords={"IMPERIUM", keyword})),
            "requisition_target_invalid",
            requisition="fresh_recruits",
            card_id="u1",
            new_power_rating=9,
        )

    @pytest.mark.parametrize("rank", ["battle_hardened", "heroic", "legendary"])
    def test_not_for_battle_hardened_or_better(self, rank: str) -> None:
        refused(
            force(card(rank=rank)),
            "requisition_rank_too_high",
            requisition="fresh_recruits",
            card_id="u1",
            new_power_rating=9,
        )

    def test_supply_limit_respected(self) -> None:
        refused(
            force(card(power_rating=45)),
            "supply_limit_exceeded",
            requisition="fresh_recruits",
            card_id="u1",
            new_power_rating=51,
        )

    def test_power_must_grow(self) -> None:
        refused(
            force(card(power_rating=5)),
            "power_rating_invalid",
            requisition="fresh_recruits",
            card_id="u1",
            new_power_rating=5,
        )
        refused(
            force(card()), "requisition_detail_missing", requisition="fresh_recruits", card_id="u1"
        )


class TestRearmAndResupply:
    def test_changes_wargear(self) -> None:
        changed, _ = buy(
            force(card()),
            requisition="rearm_and_resupply",
            card_id="u1",
            wargear="Auto bolt rifles",
        )
        assert changed.card("u1").wargear == "Auto bolt rifles"

    def test_not_for_characters(self) -> None:
        refused(
            force(character(id="u1")),
            "requisition_target_invalid",
            requisition="rearm_and_resupply",
            card_id="u1",
            wargear="x",
        )

    def test_never_swaps_an_enhanced_weapon(self) -> None:
        enhanced = card(
            honours=(
                BattleHonour(
                    HonourCategory.WEAPON_ENHANCEMENT, ("brutal",), 1, weapon="Bolt rifle"
                ),
            )
        )
        refused(
            force(enhanced),
            "weapon_enhanced_cannot_be_replaced",
            requisition="rearm_and_resupply",
            card_id="u1",
            wargear="x",
            replaced_weapons=("Bolt rifle",),
        )


class TestRepairAndRecuperate:
    def test_removes_a_scar_raising_crusade_points(self) -> None:
        scarred = card(scars=(BattleScar("fatigued"), BattleScar("shell_shock")))
        changed, bought = buy(
            force(scarred), requisition="repair_and_recuperate", card_id="u1", scar="fatigued"
        )
        assert changed.card("u1").scar_ids == {"shell_shock"}
        assert bought.crusade_points_gained == 1

    def test_needs_a_scar(self) -> None:
        refused(
            force(card()),
            "requisition_target_invalid",
            requisition="repair_and_recuperate",
            card_id="u1",
            scar="fatigued",
        )


class TestPsychicMeditations:
    def test_psykers_only(self) -> None:
        refused(
            force(card()),
            "requisition_target_invalid",
            requisition="psychic_meditations",
            card_id="u1",
            psychic_powers="Smite",
        )
        changed, _ = buy(
            force(card(keywords={"IMPERIUM", "PSYKER"})),
            requisition="psychic_meditations",
            card_id="u1",
            psychic_powers="Smite, Veil of Time",
        )
        assert changed.card("u1").psychic_powers == "Smite, Veil of Time"


class TestSpecialistReinforcements:
    def test_only_when_the_card_is_added(self) -> None:
        refused(
            force(card()),
            "requisition_timing",
            requisition="specialist_reinforcements",
            card_id="u1",
            stratagem="Honoured Veteran",
            stratagem_cp=1,
        )

    def test_one_crusade_point_per_command_point(self) -> None:
        changed, bought = buy(
            force(card()),
            PurchaseWindow(card_added="u1"),
            requisition="specialist_reinforcements",
            card_id="u1",
            stratagem="Chapter Master",
            stratagem_cp=3,
        )
        assert bought.crusade_points_gained == 3
        assert changed.card("u1").upgrades == (
            Upgrade("specialist_reinforcements", "Chapter Master", 3),
        )

    def test_stratagem_must_cost_something(self) -> None:
        refused(
            force(card()),
            "stratagem_cp_invalid",
            PurchaseWindow(card_added="u1"),
            requisition="specialist_reinforcements",
            card_id="u1",
            stratagem="x",
            stratagem_cp=0,
        )


class TestWarlordTrait:
    ADDED = PurchaseWindow(card_added="c1")

    def test_on_add_or_after_a_rank_only(self) -> None:
        refused(
            force(character()),
            "requisition_timing",
            requisition="warlord_trait",
            card_id="c1",
            warlord_trait="Inspiring Leader",
        )
        after_rank, _ = buy(
            force(character()),
            PurchaseWindow(rank_gained=frozenset({"c1"})),
            requisition="warlord_trait",
            card_id="c1",
            warlord_trait="Inspiring Leader",
        )
        assert after_rank.card("c1").crusade_points == 1

    def test_characters_only(self) -> None:
        refused(
            force(card(id="c1")),
            "requisition_target_invalid",
            self.ADDED,
            requisition="warlord_trait",
            card_id="c1",
            warlord_trait="Inspiring Leader",
        )

    def test_titanic_two_points(self) -> None:
        knight = character(keywords={"IMPERIUM", "CHARACTER", "TITANIC", "VEHICLE"})
        changed, _ = buy(
            force(knight),
            self.ADDED,
            requisition="warlord_trait",
            card_id="c1",
            warlord_trait="Inspiring Leader",
        )
        assert changed.card("c1").crusade_points == 2

    def test_one_per_model_and_unique(self) -> None:
        traited = character(
            upgrades=(Upgrade("warlord_trait", "Inspiring Leader", 1, model="Captain"),)
        )
        refused(
            force(traited),
            "warlord_trait_one_per_model",
            self.ADDED,
            requisition="warlord_trait",
            card_id="c1",
            warlord_trait="Rites of War",
        )
        other = character(id="c2", name="Lieutenant")
        refused(
            force(traited, other),
            "warlord_trait_taken",
            PurchaseWindow(card_added="c2"),
            requisition="warlord_trait",
            card_id="c2",
            warlord_trait="inspiring leader",
        )

    def test_removed_unit_frees_its_trait(self) -> None:
        traited = character(
            upgrades=(Upgrade("warlord_trait", "Inspiring Leader", 1, model="Captain"),)
        )
        army = remove_unit(force(traited, character(id="c2", name="Lieutenant")), "c1")
        changed, _ = buy(
            army,
            PurchaseWindow(card_added="c2"),
            requisition="warlord_trait",
            card_id="c2",
            warlord_trait="Inspiring Leader",
        )
        assert changed.card("c2").crusade_points == 1


class TestRelic:
    ADDED = PurchaseWindow(card_added="c1")

    def test_one_point_two_if_titanic_or_first_founding(self) -> None:
        changed, _ = buy(
            force(character()),
            self.ADDED,
            requisition="relic",
            card_id="c1",
            relic="The Shield Eternal",
        )
        assert changed.card("c1").crusade_points == 1
        founding, _ = buy(
            force(character()),
            self.ADDED,
            requisition="relic",
            card_id="c1",
            relic="Teeth of Terra",
            first_founding=True,
        )
        assert founding.card("c1").crusade_points == 2

    def test_only_one_first_founding_relic(self) -> None:
        holder = character(
            id="c2",
            upgrades=(
                Upgrade("relic", "The Burning Blade", 2, first_founding=True, model="Captain"),
            ),
        )
        refused(
            force(character(), holder),
            "first_founding_relic_taken",
            self.ADDED,
            requisition="relic",
            card_id="c1",
            relic="Teeth of Terra",
            first_founding=True,
        )

    def test_unique_and_one_per_model(self) -> None:
        holder = character(
            id="c2",
            name="Chaplain",
            upgrades=(Upgrade("relic", "Benediction of Fury", 1, model="Chaplain"),),
        )
        refused(
            force(character(), holder),
            "relic_taken",
            self.ADDED,
            requisition="relic",
            card_id="c1",
            relic="Benediction of Fury",
        )
        refused(
            force(holder),
            "relic_one_per_model",
            PurchaseWindow(card_added="c2"),
            requisition="relic",
            card_id="c2",
            relic="Another",
        )

    def test_cannot_replace_an_enhanced_weapon(self) -> None:
        hero = character(
            honours=(
                BattleHonour(
                    HonourCategory.CRUSADE_RELIC, ("artificer_weapon",), 1, weapon="Power sword"
                ),
            )
        )
        refused(
            force(hero),
            "weapon_enhanced_cannot_be_replaced",
            self.ADDED,
            requisition="relic",
            card_id="c1",
            relic="The Burning Blade",
            replaces_weapon="Power sword",
        )

    def test_ignore_timing_for_a_victor_bonus(self) -> None:
        changed, _ = purchase_requisition(
            force(character()),
            RequisitionOrder("warlord_trait", "c1", warlord_trait="Inspiring Leader"),
            ANY_TIME,
            book(),
            free=True,
            ignore_timing=True,
        )
        assert changed.requisition_points == 5
        assert changed.card("c1").crusade_points == 1
