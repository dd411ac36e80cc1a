"""A newer roster of a unit already in the Order of Battle: what differs, and which
Requisitions would carry the difference onto its Crusade card.

A unit's details are fixed once it joins (docs/rulings.md, 34); only Requisitions change
them: Fresh Recruits adds models (a higher Power Rating), Rearm and Resupply swaps wargear
at the same Power Rating, Psychic Meditations changes psychic powers. Keywords never change
after the unit's first battle or gain (ruling 40), and no Requisition lowers a Power
Rating, so those differences are shown and not applied (ruling 52)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.rules.cards import CrusadeCard
from app.rules.requisitions import RequisitionOrder


@dataclass(frozen=True)
class Change:
    """One detail that differs: as the card has it, and as the roster has it."""

    field: str
    card: str
    roster: str


@dataclass(frozen=True)
class RosterUpdate:
    changes: tuple[Change, ...] = ()
    orders: tuple[RequisitionOrder, ...] = ()  # bought, in this order, to apply it
    not_applied: tuple[str, ...] = ()  # why some changes cannot be carried over

    @property
    def differs(self) -> bool:
        return bool(self.changes)


def roster_update(
    card: CrusadeCard,
    *,
    power_rating: int,
    wargear: str,
    psychic_powers: str,
    keywords: Iterable[str],
) -> RosterUpdate:
    changes: list[Change] = []
    orders: list[RequisitionOrder] = []
    notes: list[str] = []
    new_wargear = wargear.strip() != card.wargear.strip()
    if power_rating != card.power_rating:
        changes.append(Change("power_rating", str(card.power_rating), str(power_rating)))
    if new_wargear:
        changes.append(Change("wargear", card.wargear, wargear))
    if power_rating > card.power_rating:
        orders.append(
            RequisitionOrder(
                "fresh_recruits", card.id, new_power_rating=power_rating, wargear=wargear
            )
        )
    else:
        if power_rating < card.power_rating:
            notes.append("No Requisition lowers a Power Rating: the lower one is not applied.")
        if new_wargear:
            orders.append(RequisitionOrder("rearm_and_resupply", card.id, wargear=wargear))
    if psychic_powers.strip() != card.psychic_powers.strip():
        changes.append(Change("psychic_powers", card.psychic_powers, psychic_powers))
        orders.append(
            RequisitionOrder("psychic_meditations", card.id, psychic_powers=psychic_powers)
        )
    words = frozenset(k.upper() for k in keywords)
    if words != frozenset(k.upper() for k in card.keywords):
        changes.append(
            Change("keywords", ", ".join(sorted(card.keywords)), ", ".join(sorted(words)))
        )
        notes.append("Keywords are fixed once a unit has joined: they are not applied.")
    return RosterUpdate(tuple(changes), tuple(orders), tuple(notes))
