"""The append-only campaign history."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, func, select

from app.db.models import Event


def record(
    session: Session,
    *,
    campaign_id: int,
    kind: str,
    force_id: int | None = None,
    battle_id: int | None = None,
    **payload: Any,
) -> Event:
    event = Event(
        campaign_id=campaign_id,
        force_id=force_id,
        battle_id=battle_id,
        kind=kind,
        payload=payload,
        actor_id=session.info.get("actor_id"),  # set once per request by the access check
    )
    session.add(event)
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


def page_events(
    session: Session,
    *,
    campaign_id: int,
    limit: int,
    cursor: int | None = None,
    newest_first: bool = False,
) -> tuple[list[Event], int | None]:
    """A page of the history by key: after event ``cursor`` (oldest first) or before it
    (newest first), and the cursor of the next page."""
    query = select(Event).where(Event.campaign_id == campaign_id)
    if cursor is not None:
        query = query.where(col(Event.id) < cursor if newest_first else col(Event.id) > cursor)
    order = col(Event.id).desc() if newest_first else col(Event.id)
    found = list(session.exec(query.order_by(order).limit(limit + 1)).all())
    rows = found[:limit]
    return rows, rows[-1].id if len(found) > limit else None
