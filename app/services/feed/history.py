"""The append-only campaign history."""

from __future__ import annotations

from typing import Any

from sqlalchemy import insert
from sqlalchemy.event import listens_for
from sqlalchemy.orm import SessionTransaction
from sqlmodel import Session, col, func, select

from app.db.locks import serialize
from app.db.models import Event, insert_values
from app.services.feed import webhooks


def record(
    session: Session,
    *,
    campaign_id: int,
    kind: str,
    force_id: int | None = None,
    battle_id: int | None = None,
    **payload: Any,
) -> None:
    """Append an event to the command's transaction. Events are written together just before
    the commit (`_write_recorded`), so a command costs the same statements however many
    units gained ranks or scars."""
    row = insert_values(
        Event,
        campaign_id=campaign_id,
        force_id=force_id,
        battle_id=battle_id,
        kind=kind,
        payload=payload,
        actor_id=session.info.get("actor_id"),  # set once per request by the access check
    )
    # Kept with the (sub)transaction it belongs to: a savepoint rolled back (a trial run of a
    # result, a refused form) takes its events with it.
    within = session.get_nested_transaction() or session.get_transaction()
    session.info.setdefault(_RECORDED, []).append((within, row))


_RECORDED = "history.recorded"


def mark(session: Session) -> int:
    """How many events this transaction has recorded so far (for ``unwritten``)."""
    return len(session.info.get(_RECORDED, []))


def unwritten(session: Session, *, since: int = 0) -> list[Event]:
    """The events recorded since ``mark`` and not written yet: what a trial run of a command
    says (a result's preview), read before its savepoint is rolled back."""
    return [Event(**row) for _within, row in session.info.get(_RECORDED, [])[since:]]


@listens_for(Session, "before_commit")
def _write_recorded(session: Session) -> None:
    """One INSERT for the transaction's events. Their ids are drawn while each campaign's
    feed lock is held (until commit), so within a campaign ids become visible in order: a
    bot reading the feed after id N never misses an event that commits later below N."""
    rows = [row for _within, row in session.info.pop(_RECORDED, [])]
    if not rows:
        return
    session.flush()  # what the events name (a new battle, a card) exists before they do
    campaigns = {row["campaign_id"] for row in rows}
    for campaign_id in sorted(campaigns):
        serialize(session, f"feed:{campaign_id}")
    # Readers waiting in this process on these feeds are woken after the commit (events.py).
    session.info.setdefault("feed_campaigns", set()).update(campaigns)
    inserted = insert(Event).returning(col(Event.id), col(Event.campaign_id), col(Event.kind))
    inserted = inserted.execution_options(render_nulls=True)  # events with and without a force
    added = [(i, c, k) for i, c, k in session.execute(inserted, rows)]
    heads: dict[int, int] = session.info.setdefault("feed_heads", {})
    for event_id, campaign_id, _ in added:
        heads[campaign_id] = max(heads.get(campaign_id, 0), event_id)
    webhooks.enqueue(session, added)


@listens_for(Session, "after_soft_rollback")
def _forget_recorded(session: Session, previous_transaction: SessionTransaction) -> None:
    """A rolled-back command (or savepoint) leaves no history."""
    recorded = session.info.get(_RECORDED)
    if recorded:
        recorded[:] = [
            (within, row) for within, row in recorded if not _inside(within, previous_transaction)
        ]


def _inside(within: SessionTransaction | None, ended: SessionTransaction) -> bool:
    if within is None:  # recorded before the transaction began: part of the outermost one
        return ended.parent is None
    node: SessionTransaction | None = within
    while node is not None:
        if node is ended:
            return True
        node = node.parent
    return False


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
