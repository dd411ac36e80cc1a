"""Each force's progress through the campaign: its Crusade points and total experience after
every resolved battle it fought.

Nothing new is stored for this. When a battle is resolved, each side keeps the state of its
force just before the battle (``BattleSide.snapshot``, used to revert). So a force's state
after one of its battles is the snapshot taken at its next battle, and after its latest
battle it is the force as it stands now. Decisions answered and requisitions bought between
two battles therefore count towards the earlier one. Four statements whatever the size of
the campaign."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, cast

from sqlmodel import Session, col, select

from app.db.models import Battle, BattleSide, Card, Force
from app.services.convert import card_value

CARD_FIELDS = frozenset(Card.model_fields)
CARD_DEFAULTS = {
    name: field.get_default(call_default_factory=True) for name, field in Card.model_fields.items()
}


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
        select(BattleSide.battle_id, BattleSide.force_id, BattleSide.snapshot).where(
            col(BattleSide.battle_id).in_(battle_ids)
        )
    ).all()
    forces = session.exec(
        select(Force.id, Force.name).where(Force.campaign_id == campaign_id).order_by(col(Force.id))
    ).all()
    cards = session.exec(
        select(Card)
        .join(Force, col(Force.id) == col(Card.force_id))
        .where(Force.campaign_id == campaign_id, col(Card.removed).is_(False))
    ).all()
    now: dict[int, list[Card]] = defaultdict(list)
    for card in cards:
        now[card.force_id].append(card)
    fought: dict[int, list[tuple[int, Mapping[str, Any]]]] = defaultdict(list)
    for battle_id, side_force, snapshot in sides:
        fought[side_force].append((position[battle_id], snapshot))
    result = []
    for force_id, name in forces:
        if force_id is None or not fought[force_id]:
            continue
        battles = sorted(fought[force_id], key=lambda item: item[0])
        # Before the first battle, then after each: the next battle's "before", or now.
        states = [_snapshot_cards(force_id, snap) for _n, snap in battles] + [now[force_id]]
        xs = [battles[0][0] - 1] + [n for n, _snap in battles]
        marks = tuple(Mark(x, *_totals(state)) for x, state in zip(xs, states, strict=True))
        result.append(ForceProgress(force_id=force_id, name=name, marks=marks))
    return Progress(battle_ids, tuple(result))


def _snapshot_cards(force_id: int, snapshot: Mapping[str, Any]) -> list[Card]:
    """The cards as the snapshot recorded them. Plain namespaces stand in for rows: building
    SQLModel table objects (attribute instrumentation on every field) was most of
    the dashboard's time, and these are only read by ``card_value``."""
    cards = []
    for card_id, state in (snapshot.get("cards") or {}).items():
        fields = {k: v for k, v in state.items() if k in CARD_FIELDS}
        card = SimpleNamespace(
            **{**CARD_DEFAULTS, **fields, "id": int(card_id), "force_id": force_id}
        )
        if not card.removed:
            cards.append(cast(Card, card))
    return cards


def _totals(cards: Iterable[Card]) -> tuple[int, int]:
    values = [card_value(c) for c in cards]
    return sum(v.crusade_points for v in values), sum(v.xp for v in values)
