"""Importing a roster from a list builder: preview what it would add (changing nothing),
then add the chosen units as Crusade cards in one transaction, with the same checks as
adding a card by hand. Re-importing a newer roster of the same army shows only what is new
and never changes a card already in the Order of Battle."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session

from app.db.models import Card
from app.errors import DomainError
from app.rules.errors import RuleError
from app.rules.requisitions import RequisitionOrder
from app.services import forces, requisitions
from app.services.roster_parse import (
    MAX_POWERS,
    MAX_WARGEAR,
    ParsedRoster,
    RosterUnit,
    join_lines,
    parse_roster,
)

OFFERED = ("warlord_trait", "relic")


@dataclass(frozen=True)
class RosterLine:
    """One unit of the roster: new, or already in the Order of Battle as ``card_id``."""

    unit: RosterUnit
    card_id: int | None = None

    @property
    def present(self) -> bool:
        return self.card_id is not None

    @property
    def offered(self) -> tuple[str, ...]:
        """The requisitions the roster asks for on this unit (Warlord Trait, Relic)."""
        return tuple(
            r
            for r, v in (("warlord_trait", self.unit.warlord_trait), ("relic", self.unit.relic))
            if v
        )


@dataclass(frozen=True)
class RosterPreview:
    roster: ParsedRoster
    lines: tuple[RosterLine, ...]
    supply_limit: int
    supply_used: int
    requisition_points: int

    @property
    def new(self) -> tuple[RosterLine, ...]:
        return tuple(line for line in self.lines if not line.present)

    @property
    def new_power(self) -> int:
        return sum(line.unit.power_rating for line in self.new)


@dataclass(frozen=True)
class RosterAdded:
    preview: RosterPreview
    cards: tuple[Card, ...]
    requisitions: tuple[str, ...]  # "unit key:requisition" bought


def preview(session: Session, *, force_id: int, data: bytes) -> RosterPreview:
    """What the roster would add to the force; nothing is written."""
    view = forces.load_force(session, force_id)
    roster = parse_roster(data)
    return RosterPreview(
        roster=roster,
        lines=_match(roster, [c for c in view.cards if not c.removed]),
        supply_limit=view.value.supply_limit,
        supply_used=view.value.supply_used,
        requisition_points=view.value.requisition_points,
    )


def _match(roster: ParsedRoster, cards: list[Card]) -> tuple[RosterLine, ...]:
    """Pair roster units with cards of the same name and datasheet, one card per unit, in
    order: two Intercessor Squads in the roster and one card leave one new squad."""
    free: dict[tuple[str, str], list[int]] = {}
    for card in cards:
        assert card.id is not None
        free.setdefault(_identity(card.name, card.datasheet), []).append(card.id)
    lines = []
    for unit in roster.units:
        waiting = free.get(_identity(unit.name, unit.datasheet), [])
        lines.append(RosterLine(unit, waiting.pop(0) if waiting else None))
    return tuple(lines)


def _identity(name: str, datasheet: str) -> tuple[str, str]:
    return name.strip().casefold(), datasheet.strip().casefold()


def add(
    session: Session,
    *,
    force_id: int,
    data: bytes,
    units: list[str] | None = None,
    buy: list[str] | None = None,
) -> RosterAdded:
    """Add the chosen new units (``units``: roster keys; default every new unit) and buy the
    requisitions asked for in ``buy`` (``"<key>:warlord_trait"`` / ``"<key>:relic"``, as the
    roster names them). All or nothing: the first refusal names its unit and the caller's
    transaction rolls everything back."""
    shown = preview(session, force_id=force_id, data=data)
    chosen = _chosen(shown, units)
    wanted = _wanted(chosen, buy or [])
    added = forces.add_cards(
        session,
        force_id=force_id,
        units=[_card_details(line.unit) for line in chosen],
        labels=[_label(line.unit) for line in chosen],
    )
    bought: list[str] = []
    for line, card in zip(chosen, added, strict=True):
        for requisition in wanted.get(line.unit.key, ()):
            _buy(session, force_id, card, line.unit, requisition)
            bought.append(f"{line.unit.key}:{requisition}")
    return RosterAdded(shown, tuple(added), tuple(bought))


def _chosen(shown: RosterPreview, units: list[str] | None) -> list[RosterLine]:
    if units is None:
        return list(shown.new)
    by_key = {line.unit.key: line for line in shown.lines}
    unknown = [k for k in units if k not in by_key]
    if unknown:
        raise RuleError(
            "roster_unit_unknown",
            f"units: {', '.join(unknown)} is not a unit of this roster.",
            field="units",
        )
    present = [by_key[k].unit.name for k in units if by_key[k].present]
    if present:
        raise DomainError(
            "roster_unit_present",
            f"{', '.join(present)} is already in the Order of Battle; a card added once is "
            "never changed by a newer roster.",
            status=409,
            field="units",
        )
    if not units:
        raise RuleError("roster_nothing_chosen", "Choose at least one unit to add.", field="units")
    repeated = [k for k, n in Counter(units).items() if n > 1]
    if repeated:
        raise RuleError(
            "roster_unit_repeated", f"units: {', '.join(repeated)} is listed twice.", field="units"
        )
    return [by_key[k] for k in units]


def _wanted(chosen: list[RosterLine], buy: list[str]) -> dict[str, list[str]]:
    offered = {line.unit.key: line.offered for line in chosen}
    wanted: dict[str, list[str]] = {}
    for item in buy:
        key, _, requisition = item.partition(":")
        if requisition not in offered.get(key, ()):
            raise RuleError(
                "roster_requisition_not_offered",
                f"buy: '{item}' is not a Warlord Trait or Relic the roster gives a unit being "
                "added.",
                field="buy",
            )
        if requisition not in wanted.setdefault(key, []):
            wanted[key].append(requisition)
    return wanted


def _card_details(unit: RosterUnit) -> dict[str, Any]:
    return {
        "name": unit.name,
        "datasheet": unit.datasheet,
        "power_rating": unit.power_rating,
        "keywords": list(unit.keywords),
        "battlefield_role": unit.battlefield_role,
        "wargear": join_lines(unit.models + unit.wargear, MAX_WARGEAR),
        "psychic_powers": join_lines(unit.psychic_powers, MAX_POWERS),
    }


def _label(unit: RosterUnit) -> str:
    return f"{unit.name} ({unit.key})"


def _buy(session: Session, force_id: int, card: Card, unit: RosterUnit, requisition: str) -> None:
    order = RequisitionOrder(
        requisition=requisition,
        card_id=str(card.id),
        warlord_trait=unit.warlord_trait if requisition == "warlord_trait" else None,
        relic=unit.relic if requisition == "relic" else None,
    )
    try:
        requisitions.purchase(session, force_id=force_id, order=order, card_added=card.id)
    except RuleError as refused:
        raise _named(refused, unit) from None


def _named(refused: RuleError, unit: RosterUnit) -> RuleError:
    """The same refusal, saying which roster unit it is about."""
    message = f"{_label(unit)}: {refused.message}"
    if isinstance(refused, DomainError):
        return DomainError(refused.code, message, status=refused.status, field="units")
    return RuleError(refused.code, message, field="units")
