"""View models of the force pages (Order of Battle, Requisitions, a card's battles): what
the rules allow now and what happened, read through the services; the website renders them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from sqlmodel import Session

from app.db.models import Battle, Card
from app.rules.data import Requisition, RequisitionTarget, Rulebook, rulebook
from app.rules.errors import RuleError
from app.rules.order_of_battle import OrderOfBattle
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition
from app.services.campaigns import stories
from app.services.forces import card_battles, requisitions
from app.services.forces.forces import ForceView
from app.services.packs import rulebooks


@dataclass(frozen=True)
class RequisitionOption:
    """A Requisition as this force may (or may not) buy it right now: the ids of the units
    it may be bought for, or why it may not be bought."""

    requisition: Requisition
    card_ids: list[int] = field(default_factory=list)
    reason: str | None = None


def requisition_options(session: Session, view: ForceView) -> list[RequisitionOption]:
    """Every Requisition with the units it may be bought for now, or why it may not (the
    rules tried on the pure value: nothing is written)."""
    assert view.force.id is not None
    book = rulebooks.book_of(session, view.force)
    window = requisitions.purchase_window(session, view.force.id)
    options = []
    for wanted in book.requisitions:
        if wanted.target == RequisitionTarget.FORCE:
            refused = _refusal(view.value, RequisitionOrder(wanted.id), window, book)
            options.append(RequisitionOption(wanted, reason=_message(refused)))
            continue
        targets, refusals = [], []
        for unit in view.value.cards:
            order = RequisitionOrder(wanted.id, card_id=unit.id)
            refused = _refusal(view.value, order, window, book)
            if refused is not None and wanted.id == "warlord_trait":
                refused = _any_unit_trait(view.value, order, window, book, refused)
            if refused is None:
                targets.append(int(unit.id))
            else:
                refusals.append(refused)
        reason = None if targets else _why_no_unit(refusals)
        options.append(RequisitionOption(wanted, targets, reason))
    return options


def _refusal(
    force: OrderOfBattle, order: RequisitionOrder, window: PurchaseWindow, book: Rulebook
) -> RuleError | None:
    """The rules' answer to an order, tried on the pure value (nothing is written). A refusal
    only for a detail not typed yet (a trait's name, a new Power Rating) means the timing,
    target and RP all passed."""
    try:
        purchase_requisition(force, order, window, book)
    except RuleError as refusal:
        return None if refusal.code == "requisition_detail_missing" else refusal
    return None


def _any_unit_trait(
    force: OrderOfBattle,
    order: RequisitionOrder,
    window: PurchaseWindow,
    book: Rulebook,
    refused: RuleError,
) -> RuleError | None:
    """A unit that is no CHARACTER may still take a rule pack's Warlord Trait whose bearer
    is any unit (issue 38): tried with each such trait, it is a target if one passes."""
    for trait in (t for t in book.pack_warlord_traits if t.bearer == "any_unit"):
        if _refusal(force, replace(order, warlord_trait=trait.id), window, book) is None:
            return None
    return refused


def _why_no_unit(refusals: list[RuleError]) -> str:
    """Why no unit can take it: the refusal that got furthest through the rules' checks
    (target, then timing, then RP) speaks for all; otherwise each unit's reason."""
    if not refusals:
        return "There are no units in the Order of Battle."
    for code in (
        "requisition_during_battle",
        "requisition_points_insufficient",
        "requisition_timing",
    ):
        found = next((r for r in refusals if r.code == code), None)
        if found:
            return found.message
    reasons = list(dict.fromkeys(r.message for r in refusals))
    more = " …" if len(reasons) > 3 else ""
    return " ".join(reasons[:3]) + more


def _message(refusal: RuleError | None) -> str | None:
    return refusal.message if refusal else None


# --- a card's battles -----------------------------------------------------------------


@dataclass(frozen=True)
class BattleLine:
    """One battle the unit fought, and what it did there."""

    battle: Battle
    mission: str
    battle_size: str
    result: str
    opponent: str
    report: dict[str, Any]
    agendas: list[tuple[str, int]]
    xp: int | None
    test: dict[str, Any] | None
    blow: dict[str, Any] | None
    promotions: list[str]
    warlord: bool
    note: str = ""  # the line the battle's report gives this unit (issue 23)


RESULTS = {
    "mustered": "Being fought",
    "proposed": "Result awaiting confirmation",
    "disputed": "Result disputed",
}


def battle_history(
    session: Session, row: Card, before: int | None = None
) -> tuple[list[BattleLine], int | None]:
    """A page of the battles whose roster held this unit, newest first (reverted ones are
    gone), and the cursor of the older ones."""
    assert row.id is not None
    page = card_battles.card_battles(session, card_id=row.id, force_id=row.force_id, before=before)
    told = stories.reports_for(session, (f.battle.id for f in page.items if f.battle.id))
    book = (
        rulebooks.campaign_book(session, page.items[0].battle.campaign_id) if page.items else None
    )
    lines = [
        replace(
            _battle_line(row, f, book or rulebook()),
            note=(told[f.battle.id].unit_notes.get(str(row.id), "") if f.battle.id in told else ""),
        )
        for f in page.items
    ]
    return lines, page.older


def _battle_line(row: Card, fought: card_battles.Fought, book: Rulebook) -> BattleLine:
    """The unit's line kept for the battle (card_battles.card_line): no report is read."""
    battle, side, line = fought.battle, fought.side, fought.line
    unit = line.get("unit") or {}
    names = {a.id: a.name for a in book.agendas}
    tallies = unit.get("agenda_tallies") or {}
    if battle.status != "resolved":
        result = RESULTS.get(battle.status, battle.status)
    elif battle.outcome == "draw":
        result = "Draw"
    else:
        result = "Victory" if side.won else "Defeat"
    return BattleLine(
        battle=battle,
        mission=book.mission(battle.mission).name,
        battle_size=book.battle_size(battle.battle_size).name,
        result=result,
        opponent=fought.opponent,
        report=unit,
        agendas=[(names.get(k, k), int(v)) for k, v in tallies.items() if v],
        xp=line.get("xp"),
        test=line.get("test"),
        blow=line.get("blow"),
        promotions=[book.rank(rank).name for rank in line.get("promotions") or []],
        warlord=side.warlord_card_id == row.id,
    )
