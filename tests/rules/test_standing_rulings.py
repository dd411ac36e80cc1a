"""Rulings the engine applied before they were written down (docs/rulings.md)."""

from __future__ import annotations

from app.rules.data import HonourCategory
from app.rules.dice import EnteredDice
from app.rules.honours import HonourRequest, gain_battle_honour
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition
from tests.factories import book, card, force

TRAIT = HonourRequest(HonourCategory.BATTLE_TRAIT, choice=("fleet_of_foot",))
SECOND = HonourRequest(HonourCategory.BATTLE_TRAIT, choice=("grizzled",))


class TestHonourPointsAreFixedWhenGained:
    def test_a_later_power_rating_does_not_revalue_an_old_honour(self) -> None:
        squad, honour = gain_battle_honour(card(power_rating=5), TRAIT, book(), EnteredDice([]))
        assert honour.crusade_points == 1
        grown, _ = purchase_requisition(
            force(squad),
            RequisitionOrder("fresh_recruits", card_id="u1", new_power_rating=12),
            PurchaseWindow(),
            book(),
        )
        bigger = grown.card("u1")
        assert (bigger.power_rating, bigger.crusade_points) == (12, 1)
        _, later = gain_battle_honour(bigger, SECOND, book(), EnteredDice([]))
        assert later.crusade_points == 2
