"""Importing a roster from a list builder: preview what it would add (changing nothing),
then add the chosen units as Crusade cards in one transaction, with the same checks as
adding a card by hand. Re-importing a newer roster of the same army shows what is new and,
for each unit already in the Order of Battle, what differs on its card; a difference is
carried over only through the Requisitions that allow it (ruling 52), when the player
asks. Cards the roster no longer has are shown, never removed."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from sqlmodel import Session

from app.db.models import Card
from app.errors import DomainError
from app.rules import cards as card_rules
from app.rules import order_of_battle as oob_rules
from app.rules import packs
from app.rules.data import CharacterStratagem, rulebook
from app.rules.errors import RuleError
from app.rules.requisitions import (
    RequisitionOrder,
    knight_character_stratagem,
    purchase_requisition,
)
from app.rules.roster_update import RosterUpdate, roster_update
from app.services.forces import forces, requisitions
from app.services.packs import rulebooks
from app.services.rosters.roster_parse import (
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
    update: RosterUpdate = field(default_factory=RosterUpdate)  # present: what differs
    update_refused: str | None = None  # why buying the update would be refused now
    problem: str | None = None  # why this new unit cannot join as the file has it (ruling 75)

    @property
    def present(self) -> bool:
        return self.card_id is not None

    @property
    def offered(self) -> tuple[str, ...]:
        """The requisitions the roster asks for on this unit: Warlord Trait, Relic, and
        Specialist Reinforcements for a knight the roster makes a CHARACTER by its Lance
        option (in Crusade only that Requisition can)."""
        return tuple(
            r
            for r, v in (
                ("warlord_trait", self.unit.warlord_trait),
                ("relic", self.unit.relic),
                ("specialist_reinforcements", self.knight_stratagem),
            )
            if v
        )

    @property
    def knight_stratagem(self) -> CharacterStratagem | None:
        if not self.unit.character_option or "CHARACTER" in self.unit.keywords:
            return None
        return knight_character_stratagem(self.unit.keywords, rulebook())


@dataclass(frozen=True)
class RosterPreview:
    roster: ParsedRoster
    lines: tuple[RosterLine, ...]
    supply_limit: int
    supply_used: int
    requisition_points: int
    missing: tuple[Card, ...] = ()  # cards of the force this roster does not have

    @property
    def updatable(self) -> tuple[RosterLine, ...]:
        return tuple(line for line in self.lines if line.update.orders)

    @property
    def new(self) -> tuple[RosterLine, ...]:
        return tuple(line for line in self.lines if not line.present)

    @property
    def addable(self) -> tuple[RosterLine, ...]:
        """The new units that can join as the file has them: what an import adds unless
        the player chooses otherwise (ruling 75)."""
        return tuple(line for line in self.new if line.problem is None)

    @property
    def new_power(self) -> int:
        return sum(line.unit.power_rating for line in self.new)


@dataclass(frozen=True)
class RosterAdded:
    preview: RosterPreview
    cards: tuple[Card, ...]
    requisitions: tuple[str, ...]  # "unit key:requisition" bought
    updated: tuple[int, ...] = ()  # ids of the cards a newer roster changed


def preview(session: Session, *, force_id: int, data: bytes) -> RosterPreview:
    """What the roster would add to the force; nothing is written."""
    view = forces.load_force(session, force_id)
    roster = parse_roster(data)
    live = [c for c in view.cards if not c.removed]
    window = requisitions.purchase_window(session, force_id)
    book = rulebooks.book_of(session, view.force)
    lines = tuple(
        _with_problem(_with_update(line, view.value, window), view.value, book)
        for line in _match(roster, live)
    )
    matched = {line.card_id for line in lines}
    return RosterPreview(
        roster=roster,
        lines=lines,
        supply_limit=view.value.supply_limit,
        supply_used=view.value.supply_used,
        requisition_points=view.value.requisition_points,
        missing=tuple(c for c in live if c.id not in matched),
    )


def _with_update(line: RosterLine, force: Any, window: Any) -> RosterLine:
    """A present unit with what differs on its card, and whether the Requisitions that
    carry it over would be accepted now (run on the force's value: nothing is written)."""
    if line.card_id is None:
        return line
    card = force.card(str(line.card_id))
    details = _card_details(line.unit)
    update = roster_update(
        card,
        power_rating=line.unit.power_rating,
        wargear=details["wargear"],
        psychic_powers=details["psychic_powers"],
        keywords=line.unit.keywords,
    )
    refused = None
    try:
        for order in update.orders:
            force, _ = purchase_requisition(force, order, window, rulebook())
    except RuleError as error:
        refused = error.message
    return replace(line, update=update, update_refused=refused)


def _with_problem(line: RosterLine, force: Any, book: Any) -> RosterLine:
    """A new unit that could not join this force whatever else is chosen - the file gives
    it no keywords, or not the force's faction - says why, so the rest can be added
    without it (ruling 75). The Supply Limit depends on what else is ticked: not here."""
    if line.present:
        return line
    if not line.unit.keywords:
        return replace(line, problem="The roster gives this unit no keywords at all.")
    try:
        unit = line.unit
        card = card_rules.new_card(
            id="roster",
            name=unit.name,
            power_rating=unit.power_rating,
            keywords=list(unit.keywords),
            points=unit.points,
        )
        oob_rules.check_joins(force, card, book)
    except RuleError as refused:
        return replace(line, problem=refused.message)
    return line


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
    update: list[str] | None = None,
) -> RosterAdded:
    """Add the chosen new units (``units``: roster keys; default every new unit, or none
    when ``update`` is given), buy the requisitions asked for in ``buy``
    (``"<key>:warlord_trait"`` / ``"<key>:relic"``, as the roster names them), and carry a
    newer roster's changes onto the cards of the present units in ``update`` through their
    Requisitions. All or nothing: the first refusal names its unit and the caller's
    transaction rolls everything back."""
    shown = preview(session, force_id=force_id, data=data)
    updating = _updating(shown, update or [])
    chosen = _chosen(shown, units) if units is not None or not updating else []
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
            _buy(session, force_id, card, line, requisition)
            bought.append(f"{line.unit.key}:{requisition}")
    for line in updating:
        for order in line.update.orders:
            try:
                requisitions.purchase(session, force_id=force_id, order=order)
            except RuleError as refused:
                raise _named(refused, line.unit) from None
            bought.append(f"{line.unit.key}:{order.requisition}")
        row = session.get(Card, line.card_id)
        if row is not None and line.unit.points is not None:
            row.points = line.unit.points  # the roster's points follow the new models
            session.add(row)
    updated = tuple(line.card_id for line in updating if line.card_id is not None)
    _propose_army_keywords(session, force_id, [line.unit for line in chosen])
    return RosterAdded(shown, tuple(added), tuple(bought), updated)


def _propose_army_keywords(session: Session, force_id: int, units: list[RosterUnit]) -> None:
    """A force with no army keywords yet takes, from its first imported roster, the faction
    keywords every unit added shares (issue 47): a Sisters roster makes an ADEPTA SORORITAS
    force. A force that has some keeps them; so does one with a battle under way."""
    force = forces.get_force(session, force_id)
    if force.army_keywords or not units:
        return
    known = packs.known_factions(rulebooks.campaign_book(session, force.campaign_id))
    shared: set[str] | None = None
    for unit in units:
        said = (packs.keyword(k) for k in (*unit.keywords, *unit.faction_keywords))
        words = {known[w] for w in said if w in known}
        shared = words if shared is None else shared & words
    proposed = sorted((shared or set()) - {force.crusade_faction})
    if proposed:
        try:
            forces.set_army_keywords(session, force=force, army_keywords=proposed)
        except RuleError:
            return  # a battle under way: the player sets them afterwards


def _updating(shown: RosterPreview, keys: list[str]) -> list[RosterLine]:
    """The present units whose card the player asked to bring up to this roster."""
    by_key = {line.unit.key: line for line in shown.lines}
    wrong = [k for k in keys if k not in by_key or not by_key[k].update.orders]
    if wrong:
        raise RuleError(
            "roster_update_invalid",
            f"update: {', '.join(wrong)} is not a unit of the Order of Battle that this "
            "roster changes through a Requisition.",
            field="update",
        )
    repeated = [k for k, n in Counter(keys).items() if n > 1]
    if repeated:
        raise RuleError(
            "roster_unit_repeated",
            f"update: {', '.join(repeated)} is listed twice.",
            field="update",
        )
    return [by_key[k] for k in keys]


def _chosen(shown: RosterPreview, units: list[str] | None) -> list[RosterLine]:
    if units is None:
        # every new unit that can join; when none can, all of them, so that the refusal
        # names the first (a roster of another army is refused, not silently empty)
        return list(shown.addable or shown.new)
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
            f"{', '.join(present)} is already in the Order of Battle; a newer roster changes "
            "its card only through `update` (its Requisitions).",
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
                f"buy: '{item}' is not a Requisition the roster offers for a unit being added "
                "(its Warlord Trait, Relic, or a knight's Lance).",
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
        "points": unit.points,
        "keywords": list(unit.keywords),
        "battlefield_role": unit.battlefield_role,
        "wargear": join_lines(unit.models + unit.wargear, MAX_WARGEAR),
        "psychic_powers": join_lines(unit.psychic_powers, MAX_POWERS),
    }


def _label(unit: RosterUnit) -> str:
    return f"{unit.name} ({unit.key})"


def _buy(session: Session, force_id: int, card: Card, line: RosterLine, requisition: str) -> None:
    unit = line.unit
    knight = requisition == "specialist_reinforcements"
    order = RequisitionOrder(
        requisition=requisition,
        card_id=str(card.id),
        warlord_trait=unit.warlord_trait if requisition == "warlord_trait" else None,
        relic=unit.relic if requisition == "relic" else None,
        stratagem=line.knight_stratagem.stratagem if knight and line.knight_stratagem else None,
        stratagem_cp=line.knight_stratagem.cp if knight and line.knight_stratagem else None,
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
