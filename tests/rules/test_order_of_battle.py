"""The Order of Battle: RP, Supply Limit, adding and removing units."""

from __future__ import annotations

import pytest

from app.rules.cards import CombatTallies, CrusadeCard, new_card, update_narrative
from app.rules.errors import RuleError
from app.rules.order_of_battle import (
    add_unit,
    gain_requisition_points,
    link_split_unit,
    record_battle_played,
    remove_unit,
    spend_requisition_points,
    split_unit_fixed,
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


class TestSplitUnitsStayWhole:
    """Issue 36: which cards make up a split unit is part of the unit's details, fixed once
    it is added; linking or unlinking is allowed only until the cards fight (ruling 50)."""

    def squadron(self, fought: int = 0) -> tuple[CrusadeCard, CrusadeCard]:
        played = CombatTallies(battles_played=fought)
        return (
            card(id="t1", name="Tank Alpha", split_unit="Squadron", tallies=played),
            card(id="t2", name="Tank Beta", split_unit="Squadron", tallies=played),
        )

    def test_unfought_cards_link_and_unlink(self) -> None:
        alpha, beta = self.squadron()
        lone = card(id="t3", name="Tank Gamma")
        army = force(alpha, beta, lone)
        joined = link_split_unit(army, "t3", "Squadron")
        assert joined.card("t3").split_unit == "Squadron"
        left = link_split_unit(joined, "t1", "")
        assert left.card("t1").split_unit is None
        assert link_split_unit(army, "t1", " Squadron ") is army  # no change at all

    @pytest.mark.parametrize(
        ("card_id", "label"), [("t1", ""), ("t1", "Other"), ("t3", "Squadron")]
    )
    def test_after_a_battle_the_link_is_fixed(self, card_id: str, label: str) -> None:
        alpha, beta = self.squadron(fought=1)
        army = force(alpha, beta, card(id="t3", name="Tank Gamma"))
        with pytest.raises(RuleError) as refused:
            link_split_unit(army, card_id, label)
        assert (refused.value.code, refused.value.field) == ("split_unit_fixed", "split_unit")
        assert "Split Units" in refused.value.message

    def test_a_fought_card_joins_no_split_unit(self) -> None:
        veteran = card(id="v", name="Veteran", tallies=CombatTallies(battles_played=2))
        army = force(veteran, card(id="n", name="New", split_unit="Pair"))
        with pytest.raises(RuleError) as refused:
            link_split_unit(army, "v", "Pair")
        assert refused.value.code == "split_unit_fixed"

    def test_not_while_a_card_is_mustered(self) -> None:
        alpha, beta = self.squadron()
        with pytest.raises(RuleError) as refused:
            link_split_unit(force(alpha, beta), "t1", "", mustered=frozenset({"t2"}))
        assert refused.value.code == "split_unit_fixed_during_battle"
        assert split_unit_fixed(alpha, [beta], mustered=frozenset({"t2"})) is not None
        assert split_unit_fixed(alpha, [beta]) is None

    def test_a_new_card_cannot_join_a_split_unit_that_fought(self) -> None:
        alpha, beta = self.squadron(fought=1)
        new = new_card(
            id="t4", name="Tank Delta", power_rating=4, keywords=["IMPERIUM"], split_unit="Squadron"
        )
        with pytest.raises(RuleError) as refused:
            add_unit(force(alpha, beta), new, book())
        assert refused.value.code == "split_unit_fixed"
        fresh = force(*self.squadron())
        assert add_unit(fresh, new, book()).card("t4").split_unit == "Squadron"
