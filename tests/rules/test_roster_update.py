"""A newer roster of a unit already in the Order of Battle (ruling 52): what differs, and
the Requisitions that would carry it over."""

from __future__ import annotations

from typing import Any

import pytest

from app.rules.roster_update import Change, roster_update
from tests.factories import card

SQUAD = card(
    id="s",
    name="Necron Warriors",
    power_rating=6,
    keywords={"NECRONS", "INFANTRY"},
    wargear="10x Necron Warrior (Gauss Flayer)",
    psychic_powers="",
)


def update(**changes: Any) -> Any:
    roster = {
        "power_rating": SQUAD.power_rating,
        "wargear": SQUAD.wargear,
        "psychic_powers": SQUAD.psychic_powers,
        "keywords": SQUAD.keywords,
        **changes,
    }
    return roster_update(SQUAD, **roster)


def test_the_same_unit_changes_nothing() -> None:
    same = update(keywords={"necrons", "infantry"})  # any case
    assert (same.changes, same.orders, same.not_applied) == ((), (), ())
    assert not same.differs


@pytest.mark.parametrize(
    ("changes", "fields", "requisitions", "notes"),
    [
        ({"power_rating": 12}, ["power_rating"], ["fresh_recruits"], 0),
        (
            {"power_rating": 12, "wargear": "20x Necron Warrior"},
            ["power_rating", "wargear"],
            ["fresh_recruits"],
            0,
        ),
        ({"wargear": "10x Necron Warrior (Gauss Reaper)"}, ["wargear"], ["rearm_and_resupply"], 0),
        ({"power_rating": 3}, ["power_rating"], [], 1),
        (
            {"power_rating": 3, "wargear": "5x"},
            ["power_rating", "wargear"],
            ["rearm_and_resupply"],
            1,
        ),
        ({"psychic_powers": "Sense of Stone"}, ["psychic_powers"], ["psychic_meditations"], 0),
        ({"keywords": {"NECRONS", "INFANTRY", "CORE"}}, ["keywords"], [], 1),
    ],
)
def test_each_difference_and_its_requisition(
    changes: dict[str, Any], fields: list[str], requisitions: list[str], notes: int
) -> None:
    found = update(**changes)
    assert [c.field for c in found.changes] == fields
    assert [o.requisition for o in found.orders] == requisitions
    assert all(o.card_id == "s" for o in found.orders)
    assert len(found.not_applied) == notes


def test_fresh_recruits_carries_the_new_power_and_wargear() -> None:
    (order,) = update(power_rating=12, wargear="20x Necron Warrior").orders
    assert (order.new_power_rating, order.wargear) == (12, "20x Necron Warrior")
    assert update(power_rating=12).changes[0] == Change("power_rating", "6", "12")
