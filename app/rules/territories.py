"""The campaign map (issue 23): territories the forces fight over. Not a rule of the
Crusade book; the tracker's own, written down as rulings 53 and 54 in docs/rulings.md.

A battle may be fought over one territory. Its winner takes it, or keeps it; a draw leaves
it with whoever held it. A territory may carry a bonus from a small fixed set until rule
packs bring their own effects: `requisition_point` gives the force that holds it 1 more RP
after each battle it plays (the RP cap still applies), counted from the territories it held
when the battle began."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class TerritoryBonus(StrEnum):
    NONE = "none"
    REQUISITION_POINT = "requisition_point"


@dataclass(frozen=True)
class Territory:
    id: str
    name: str
    holder: str | None = None  # the force that holds it, if any
    bonus: TerritoryBonus = TerritoryBonus.NONE


def holder_after(territory: Territory, *, winner: str | None) -> str | None:
    """Who holds the territory once a battle over it is decided: the winner; after a draw
    (no winner) whoever held it before."""
    return winner if winner is not None else territory.holder


def bonus_requisition_points(territories: Iterable[Territory], force_id: str) -> int:
    """The extra RP a force earns from a battle: one per territory with that bonus it held
    when the battle began."""
    return sum(
        1
        for t in territories
        if t.holder == force_id and t.bonus == TerritoryBonus.REQUISITION_POINT
    )


# --- drawing the map ------------------------------------------------------------------------

CELL_WIDTH = 130  # SVG units per territory; the drawing scales to the screen
CELL_HEIGHT = 100
COLUMNS = 3  # legible at 360 px: the names' text is about 13 px there


@dataclass(frozen=True)
class Placed:
    id: str
    x: float
    y: float


def layout(ids: list[str], neighbours: dict[str, list[str]]) -> list[Placed]:
    """Where each territory is drawn: a grid a few columns wide (it stays legible on a
    phone), filled in a breadth-first walk of the neighbour links so that neighbours sit
    near each other and most links are short."""
    columns = min(COLUMNS, max(1, len(ids)))
    order: list[str] = []
    for start in ids:
        queue = [start]
        while queue:
            here = queue.pop(0)
            if here in order:
                continue
            order.append(here)
            queue.extend(n for n in neighbours.get(here, []) if n not in order)
    return [
        Placed(
            t,
            (n % columns + 0.5) * CELL_WIDTH,
            (n // columns + 0.5) * CELL_HEIGHT,
        )
        for n, t in enumerate(order)
    ]
