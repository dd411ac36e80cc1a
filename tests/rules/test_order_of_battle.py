"""The Order of Battle: RP, Supply Limit, adding and removing units."""

from __future__ import annotations

import pytest

from app.rules.cards import new_card, update_narrative
from app.rules.errors import RuleError
from app.rules.order_of_battle import (
    add_unit,
    gain_requisition_points,
    record_battle_played,
    remove_unit,
    spend_requisition_points,
    start_order_of_battle,
)
from tests.factories import book, card, force


class TestStartingForce:
    def test_starts_with_five_rp_and_supply_fifty(self) -> None:
        started = start_order_of_battle(
            id="f", name="Blood Angels", crusade_faction="imperium", book=book()
        )
        assert started.requisition_points == 5
        assert started.supply_limit == 50
        assert (started.battle_tally, started.victories, started.supply_used) == (0, 0, 0)
        assert started.crusade_faction == "IMPERIUM"

    def test_crusade_faction_must_be_one_of_the_seven(self) -> None:
        with pytest.raises(RuleError) as refused:
            start_order_of_battle(id="f", name="X", crusade_faction="ULTRAMARINES", book=book())
        assert refused.value.code == "crusade_faction_invalid"

    @pytest.mark.parametrize(
        "faction", ["IMPERIUM", "CHAOS", "AELDARI", "TYRANIDS", "ORKS", "NECRONS", "T'AU EMPIRE"]
    )
    def test_every_crusade_faction_is_accepted(self, faction: str) -> None:
        assert (
            start_order_of_battle(
                id="f", name="X", crusade_faction=faction, book=book()
            ).crusade_faction
            == faction
        )


class TestAddingUnits:
    def test_within_supply_limit(self) -> None:
        added = add_unit(force(), card(power_rating=50), book())
        assert added.supply_used == 50

    def test_over_supply_limit_is_refused(self) -> None:
        full = force(card(id="a", power_rating=45))
        with pytest.raises(RuleError) as refused:
            add_unit(full, card(id="b", power_rating=6), book())
        assert refused.value.code == "supply_limit_exceeded"

    def test_needs_the_crusade_faction_keyword(self) -> None:
        with pytest.raises(RuleError) as refused:
            add_unit(force(), card(keywords={"CHAOS", "INFANTRY"}), book())
        assert refused.value.code == "crusade_faction_mismatch"

    def test_unaligned_units_may_join(self) -> None:
        added = add_unit(force(), card(keywords={"UNALIGNED", "BUILDING"}), book())
        assert len(added.cards) == 1

    def test_same_unit_twice_is_refused(self) -> None:
        with pytest.raises(RuleError) as refused:
            add_unit(force(card()), card(), book())
        assert refused.value.code == "unit_already_added"

    def test_new_card_starts_blank(self) -> None:
        fresh = new_card(id="x", name=" Tactical Squad ", power_rating=5, keywords=["imperium"])
        assert (fresh.name, fresh.xp, fresh.rank, fresh.crusade_points) == (
            "Tactical Squad",
            0,
            "battle_ready",
            0,
        )
        assert fresh.keywords == frozenset({"IMPERIUM"})

    def test_new_card_needs_power_and_name(self) -> None:
        with pytest.raises(RuleError) as refused:
            new_card(id="x", name="Squad", power_rating=0)
        assert refused.value.field == "power_rating"
        with pytest.raises(RuleError):
            new_card(id="x", name="  ", power_rating=3)


class TestRemovingUnits:
    def test_removing_frees_supply(self) -> None:
        full = force(card(id="a", power_rating=45))
        emptied = remove_unit(full, "a")
        assert emptied.supply_used == 0
        assert emptied.supply_limit == 50
        assert len(add_unit(emptied, card(id="b", power_rating=50), book()).cards) == 1

    def test_a_removed_unit_can_never_return(self) -> None:
        emptied = remove_unit(force(card(id="a")), "a")
        with pytest.raises(RuleError) as refused:
            add_unit(emptied, card(id="a"), book())
        assert refused.value.code == "unit_removed_for_good"

    def test_removing_an_unknown_unit(self) -> None:
        with pytest.raises(RuleError) as refused:
            remove_unit(force(), "nope")
        assert refused.value.code == "unit_not_in_order_of_battle"


class TestRequisitionPoints:
    def test_never_more_than_five(self) -> None:
        assert (
            gain_requisition_points(force(requisition_points=4), 3, book()).requisition_points == 5
        )

    def test_spending_more_than_held_is_refused(self) -> None:
        with pytest.raises(RuleError) as refused:
            spend_requisition_points(force(requisition_points=0), 1, "Fresh Recruits")
        assert refused.value.code == "requisition_points_insufficient"

    def test_battle_played_adds_tally_and_one_rp(self) -> None:
        played = record_battle_played(
            force(requisition_points=1), won=False, extra_requisition_points=0, book=book()
        )
        assert (played.battle_tally, played.victories, played.requisition_points) == (1, 0, 2)


class TestCardDetailsAreFixed:
    def test_only_name_and_narrative_change(self) -> None:
        renamed = update_narrative(card(), name="Veteran Squad", narrative="Held the gate.")
        assert (renamed.name, renamed.narrative, renamed.power_rating) == (
            "Veteran Squad",
            "Held the gate.",
            5,
        )

    def test_blank_name_refused(self) -> None:
        with pytest.raises(RuleError):
            update_narrative(card(), name=" ")
