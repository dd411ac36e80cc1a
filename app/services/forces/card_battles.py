"""A unit's battles, newest first, a page at a time, from the list kept at muster
(``CardBattle``, app.services.campaigns.kept_totals): the cost follows the page, not the unit's
past."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import defer
from sqlmodel import Session, col, select

from app.db.models import Battle, BattleSide, CardBattle, Decision, Force


@dataclass(frozen=True)
class Fought:
    battle: Battle
    side: BattleSide  # the unit's side (neither its report nor its snapshot is loaded)
    opponent: str
    line: dict[str, Any]  # what the unit did there (card_line); empty until a result


def card_line(report: Mapping[str, Any] | None, card_id: int) -> dict[str, Any] | None:
    """One unit's part of its side's report: its own entry (kills, destroyed, Agenda
    tallies, Marked for Greatness), its Out of Action test and Devastating Blow, the XP it
    gained and the ranks it reached. None for a side without a result yet."""
    if not report:
        return None

    def mine(key: str) -> list[dict[str, Any]]:
        return [e for e in report.get(key) or [] if int(e.get("card_id", 0)) == card_id]

    units, tests, blows = mine("units"), mine("tests"), mine("devastating_blows")
    return {
        "unit": units[0] if units else {},
        "xp": (report.get("experience") or {}).get(str(card_id)),
        "test": tests[0] if tests else None,
        "blow": blows[0] if blows else None,
        "promotions": [p["rank"] for p in mine("promotions")],
    }


@dataclass(frozen=True)
class FoughtPage:
    items: list[Fought]
    older: int | None  # the cursor of the next (older) page, if there is one


def card_battles(
    session: Session, *, card_id: int, force_id: int, before: int | None = None, limit: int = 20
) -> FoughtPage:
    """Battles (not reverted) whose roster held the card, newest first; ``before`` is a
    battle id: only older battles are listed."""
    query = select(CardBattle.battle_id, CardBattle.line).where(CardBattle.card_id == card_id)
    if before is not None:
        query = query.where(CardBattle.battle_id < before)
    found = list(session.exec(query.order_by(col(CardBattle.battle_id).desc()).limit(limit + 1)))
    ids = [battle_id for battle_id, _line in found]
    lines = {b: dict(line) if line else {} for b, line in found}
    shown = ids[:limit]
    mine = {
        b.id: (s, b)
        for s, b in session.exec(
            select(BattleSide, Battle)
            .join(Battle, col(Battle.id) == col(BattleSide.battle_id))
            .where(col(BattleSide.battle_id).in_(shown), BattleSide.force_id == force_id)
            .options(
                defer(BattleSide.snapshot, raiseload=True),  # type: ignore[arg-type]
                defer(BattleSide.report, raiseload=True),  # type: ignore[arg-type]
            )
        ).all()
    }
    foes = dict(  # the opponents' names only: not their sides' reports
        session.exec(
            select(BattleSide.battle_id, Force.name)
            .join(Force, col(Force.id) == col(BattleSide.force_id))
            .where(col(BattleSide.battle_id).in_(shown), BattleSide.force_id != force_id)
        ).all()
    )
    items = [
        Fought(mine[i][1], mine[i][0], foes.get(i, "?"), lines.get(i, {}))
        for i in shown
        if i in mine
    ]
    return FoughtPage(items, shown[-1] if len(ids) > limit else None)


def awaits_decision(session: Session, *, card_id: int) -> bool:
    """Whether a choice about this unit (its scar, its honour) is waiting from a battle."""
    waiting = session.exec(
        select(Decision.id).where(Decision.card_id == card_id, Decision.status == "pending")
    ).first()
    return waiting is not None
