"""A unit's battles, newest first, a page at a time, from the list kept at muster
(``CardBattle``, app.services.totals): the cost follows the page, not the unit's past."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import defer
from sqlmodel import Session, col, select

from app.db.models import Battle, BattleSide, CardBattle, Force


@dataclass(frozen=True)
class Fought:
    battle: Battle
    side: BattleSide  # the unit's side (its snapshot is not loaded)
    opponent: str


@dataclass(frozen=True)
class FoughtPage:
    items: list[Fought]
    older: int | None  # the cursor of the next (older) page, if there is one


def card_battles(
    session: Session, *, card_id: int, force_id: int, before: int | None = None, limit: int = 20
) -> FoughtPage:
    """Battles (not reverted) whose roster held the card, newest first; ``before`` is a
    battle id: only older battles are listed."""
    query = select(CardBattle.battle_id).where(CardBattle.card_id == card_id)
    if before is not None:
        query = query.where(CardBattle.battle_id < before)
    ids = list(session.exec(query.order_by(col(CardBattle.battle_id).desc()).limit(limit + 1)))
    shown = ids[:limit]
    mine = {
        b.id: (s, b)
        for s, b in session.exec(
            select(BattleSide, Battle)
            .join(Battle, col(Battle.id) == col(BattleSide.battle_id))
            .where(col(BattleSide.battle_id).in_(shown), BattleSide.force_id == force_id)
            .options(defer(BattleSide.snapshot, raiseload=True))  # type: ignore[arg-type]
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
        Fought(battle=mine[i][1], side=mine[i][0], opponent=foes.get(i, "?"))
        for i in shown
        if i in mine
    ]
    return FoughtPage(items, shown[-1] if len(ids) > limit else None)
