"""The append-only campaign history."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, func, select

from app.db.locks import serialize
from app.db.models import Event
from app.services import webhooks


def record(
    session: Session,
    *,
    campaign_id: int,
    kind: str,
    force_id: int | None = None,
    battle_id: int | None = None,
    **payload: Any,
) -> Event:
    """Append an event in the command's transaction. Its id is drawn while the campaign's
    feed lock is held (until commit), so within a campaign ids become visible in order: a
    bot reading the feed after id N never misses an event that commits later below N."""
    serialize(session, f"feed:{campaign_id}")
    session.info.setdefault("feed_campaigns", set()).add(campaign_id)
    event = Event(
        campaign_id=campaign_id,
        force_id=force_id,
        battle_id=battle_id,
        kind=kind,
        payload=payload,
        actor_id=session.info.get("actor_id"),  # set once per request by the access check
    )
    session.add(event)
    session.flush()
    webhooks.enqueue(session, event)
    return event


def count_events(session: Session, *, campaign_id: int) -> int:
    query = select(func.count()).select_from(Event).where(Event.campaign_id == campaign_id)
    return int(session.exec(query).one())


def list_events(
    session: Session, *, campaign_id: int, offset: int, limit: int
) -> tuple[list[Event], int]:
    query = select(Event).where(Event.campaign_id == campaign_id)
    total = session.exec(select(func.count()).select_from(query.subquery())).one()
    rows = session.exec(query.order_by(col(Event.id)).offset(offset).limit(limit)).all()
    return list(rows), total
