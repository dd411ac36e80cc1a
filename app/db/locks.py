"""Named locks for the few commands that must take turns whatever rows they touch (two
sign-ups racing to be the first account, to take one username)."""

from __future__ import annotations

import zlib
from typing import TypeVar

from sqlalchemy import select, text
from sqlalchemy.event import listens_for
from sqlmodel import Session

from app.db.models import Battle, Campaign, Force

T = TypeVar("T")


def serialize(session: Session, name: str) -> None:
    """Hold the lock ``name`` until the transaction ends.

    PostgreSQL: a transaction-level advisory lock. SQLite needs none: a writing
    transaction begins IMMEDIATE (app/db/engine.py), so writers already take turns."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _key(name)})


def _key(name: str) -> int:
    return zlib.crc32(f"crusade:{name}".encode())


def for_change(session: Session, model: type[T], row_id: int) -> T | None:
    """The row with ``row_id``, locked for the rest of a writing transaction (PostgreSQL:
    SELECT ... FOR UPDATE), and re-read: a copy loaded earlier in the request, before the
    lock, may be stale once the lock is granted. Reads take no lock. A row this transaction
    already locked is not read again: nobody else could change it since."""
    if not session.info.get("writes"):
        return session.get(model, row_id)
    locked = held(session)
    if (model, row_id) in locked:
        return session.get(model, row_id)
    if _postgresql(session):
        _lock_campaign_of(session, model, row_id)
    row = session.get(model, row_id, with_for_update=True, populate_existing=True)
    if row is not None:
        locked[(model, row_id)] = row
    return row


def lock_campaign(session: Session, campaign_id: int) -> None:
    """PostgreSQL: lock the campaign's row (FOR NO KEY UPDATE: inserting a row that refers
    to it still may) until the transaction ends. Every flush that changes what a campaign
    shows raises its version (app.db.models), which locks the row; a writer that locks one
    of the campaign's rows itself before that takes the campaign's first, so all writers
    in a campaign lock in one order: the campaign, then its rows (issue 50)."""
    if not _postgresql(session) or not session.info.get("writes"):
        return
    campaigns: set[int] = session.info.setdefault(CAMPAIGNS, set())
    if campaign_id in campaigns:
        return
    table = Campaign.__table__  # type: ignore[attr-defined]
    query = select(table.c.id).where(table.c.id == campaign_id)
    session.execute(query.with_for_update(key_share=True))
    campaigns.add(campaign_id)


def _lock_campaign_of(session: Session, model: type, row_id: int) -> None:
    """Lock the campaign a row belongs to, before the row (one statement, through the row's
    campaign, force or battle: the row itself is read once, by the lock that follows)."""
    table = model.__table__  # type: ignore[attr-defined]
    campaigns = Campaign.__table__  # type: ignore[attr-defined]
    if "campaign_id" in table.c:
        path = campaigns.join(table, table.c.campaign_id == campaigns.c.id)
    elif "force_id" in table.c:
        forces = Force.__table__  # type: ignore[attr-defined]
        path = campaigns.join(forces, forces.c.campaign_id == campaigns.c.id)
        path = path.join(table, table.c.force_id == forces.c.id)
    elif "battle_id" in table.c:
        battles = Battle.__table__  # type: ignore[attr-defined]
        path = campaigns.join(battles, battles.c.campaign_id == campaigns.c.id)
        path = path.join(table, table.c.battle_id == battles.c.id)
    else:
        return
    query = select(campaigns.c.id).select_from(path).where(table.c.id == row_id)
    found = session.execute(query.with_for_update(key_share=True, of=campaigns)).scalar()
    if found is not None:
        session.info.setdefault(CAMPAIGNS, set()).add(found)


def _postgresql(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def held(session: Session) -> dict[tuple[type, int], object]:
    """The rows this transaction locked, by model and id. Held, not only named: the identity
    map keeps a row only while something refers to it, and a row dropped from it would be
    read again by the next ``session.get`` (a flush hook's, say) though nobody could have
    changed it (issue 41)."""
    locked: dict[tuple[type, int], object] = session.info.setdefault(LOCKED, {})
    return locked


LOCKED = "locks.for_change"
CAMPAIGNS = "locks.campaigns"


@listens_for(Session, "after_commit")
def _unlocked(session: Session) -> None:
    """Row locks end with the transaction."""
    session.info.pop(LOCKED, None)
    session.info.pop(CAMPAIGNS, None)


@listens_for(Session, "after_soft_rollback")
def _unlocked_by_rollback(session: Session, previous_transaction: object) -> None:
    """A rollback, a savepoint's too (a trial run of a result), releases the locks taken
    within it (PostgreSQL): forget them all, so the next for_change locks and reads again."""
    session.info.pop(LOCKED, None)
    session.info.pop(CAMPAIGNS, None)
