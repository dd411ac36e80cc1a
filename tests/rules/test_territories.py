"""The campaign map's own rules (rulings 53 and 54)."""

from __future__ import annotations

import pytest

from app.rules import territories as rules
from app.rules.territories import (
    Territory,
    TerritoryBonus,
    bonus_requisition_points,
    holder_after,
)

RELAY = Territory("t1", "Hyperia relay", holder="blue")


@pytest.mark.parametrize(
    ("territory", "winner", "holder"),
    [
        (RELAY, "red", "red"),  # taken
        (RELAY, "blue", "blue"),  # held
        (RELAY, None, "blue"),  # a draw changes nothing
        (Territory("t2", "Wastes"), None, None),
        (Territory("t2", "Wastes"), "red", "red"),
    ],
)
def test_who_holds_it_after_the_battle(
    territory: Territory, winner: str | None, holder: str | None
) -> None:
    assert holder_after(territory, winner=winner) == holder


def test_one_rp_per_territory_with_the_bonus_held() -> None:
    rp = TerritoryBonus.REQUISITION_POINT
    held = [
        Territory("a", "A", "blue", rp),
        Territory("b", "B", "blue", rp),
        Territory("c", "C", "blue"),
        Territory("d", "D", "red", rp),
        Territory("e", "E", None, rp),
    ]
    assert bonus_requisition_points(held, "blue") == 2
    assert bonus_requisition_points(held, "red") == 1
    assert bonus_requisition_points(held, "green") == 0


def test_the_drawing_places_each_territory_once_neighbours_near_each_other() -> None:
    ids = ["1", "2", "3", "4", "5", "6"]
    links = {"1": ["6"], "6": ["1", "5"], "5": ["6"], "2": [], "3": ["4"], "4": ["3"]}
    placed = rules.layout(ids, links)
    assert sorted(p.id for p in placed) == ids
    order = [p.id for p in placed]
    assert order == ["1", "6", "5", "2", "3", "4"]  # a walk of the links, then the rest
    assert {(p.x, p.y) for p in placed} == {
        ((n % 3 + 0.5) * rules.CELL_WIDTH, (n // 3 + 0.5) * rules.CELL_HEIGHT) for n in range(6)
    }
    assert rules.layout([], {}) == []
