"""Each force's progress through the campaign: its Crusade points and total experience after
every resolved battle it fought.

When a battle is resolved, each side's force totals just before it are kept
(``SideTotals``, app.services.campaigns.kept_totals). So a force's totals after one of its battles
are
those kept at its next battle, and after its latest battle they are its standings line now.
Decisions answered and requisitions bought between two battles therefore count towards the
earlier one. Three statements whatever the size of the campaign or its history."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sqlmodel import Session, col, select

from app.db.models import Battle, Force, ForceStanding, SideTotals


@dataclass(frozen=True)
class Mark:
    """A force's totals at one point: ``battle`` is the position of the battle among the
    campaign's resolved battles (1 = the first shown; 0 = before it)."""

    battle: int
    crusade_points: int
    xp: int


@dataclass(frozen=True)
class ForceProgress:
    force_id: int
    name: str
    marks: tuple[Mark, ...]


@dataclass(frozen=True)
class Progress:
    battle_ids: tuple[int, ...]  # resolved battles in the order they were resolved
    forces: tuple[ForceProgress, ...]  # forces that fought at least one of them


def progress(session: Session, *, campaign_id: int, last: int = 40) -> Progress:
    """The campaign's latest ``last`` resolved battles and every force's totals after each."""
    newest = session.exec(
        select(Battle.id)
        .where(Battle.campaign_id == campaign_id, Battle.status == "resolved")
        .order_by(col(Battle.resolved_at).desc(), col(Battle.id).desc())
        .limit(last)
    ).all()
    battle_ids = tuple(b for b in reversed(newest) if b is not None)
    if not battle_ids:
        return Progress((), ())
    position = {battle_id: n for n, battle_id in enumerate(battle_ids, start=1)}
    sides = session.exec(
        select(
            SideTotals.battle_id, SideTotals.force_id, SideTotals.crusade_points, SideTotals.xp
        ).where(col(SideTotals.battle_id).in_(battle_ids))
    ).all()
    forces = session.exec(
        select(Force.id, Force.name, ForceStanding.crusade_points, ForceStanding.xp)
        .join(ForceStanding, col(ForceStanding.force_id) == col(Force.id))
        .where(Force.campaign_id == campaign_id)
        .order_by(col(Force.id))
    ).all()
    fought: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for battle_id, force_id, points, xp in sides:
        fought[force_id].append((position[battle_id], points, xp))
    result = []
    for row_id, name, points_now, xp_now in forces:
        force_id = row_id or 0
        if not fought[force_id]:
            continue
        battles = sorted(fought[force_id])
        # Before the first battle, then after each: the next battle's "before", or now.
        states = [(p, x) for _n, p, x in battles] + [(points_now, xp_now)]
        xs = [battles[0][0] - 1] + [n for n, _p, _x in battles]
        marks = tuple(Mark(n, *state) for n, state in zip(xs, states, strict=True))
        result.append(ForceProgress(force_id=force_id, name=name, marks=marks))
    return Progress(battle_ids, tuple(result))
