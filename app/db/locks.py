"""Named locks for the few commands that must take turns whatever rows they touch (two
sign-ups racing to be the first account, to take one username)."""

from __future__ import annotations

import zlib
from typing import TypeVar

from sqlalchemy import select, text
from sqlalchemy.event import listens_for
from sqlalchemy.orm.util import identity_key
from sqlmodel import Session

from app.db.models import (
    Battle,
    Force,
    campaign_of,
    campaigns_held,
    lock_campaigns_of,
    moves_campaign_version,
)

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
    # A wizard's draft is no part of what the campaign shows: saving one neither moves the
    # campaign's version (its reads stay cached) nor takes the campaign's lock; only the
    # wizard locks drafts, and always first, so no writer waits on a draft holding the
    # campaign.
    if _postgresql(session) and moves_campaign_version(model):
        _lock_campaign_of(session, model, row_id)
    row = session.get(model, row_id, with_for_update=True, populate_existing=True)
    if row is not None:
        locked[(model, row_id)] = row
    return row


def lock_campaigns_of_forces(
    session: Session, force_ids: list[int], *, campaign_id: int | None = None
) -> None:
    """PostgreSQL: lock the forces' campaigns before the forces are locked: see
    ``_lock_campaign_of``. ``campaign_id``: the campaign the caller checked they all play
    in."""
    if not session.info.get("writes") or not _postgresql(session):
        return
    if campaign_id is not None:
        if campaign_id not in campaigns_held(session):
            lock_campaigns_of(session, [campaign_id])
    elif not _held_already(session, Force, force_ids):
        forces = Force.__table__  # type: ignore[attr-defined]
        lock_campaigns_of(session, select(forces.c.campaign_id).where(forces.c.id.in_(force_ids)))


def _lock_campaign_of(session: Session, model: type, row_id: int) -> None:
    """PostgreSQL: lock the campaign a row belongs to before the row (its version is raised
    by any change there, at the flush: app.db.models): all writers in a campaign then lock
    in one order, the campaign first, then its rows, and cannot deadlock (issue 50). One
    statement, through the row's campaign, force or battle: the row itself is read once, by
    the lock that follows. The lock moves no version: a refused command changes nothing."""
    if _held_already(session, model, [row_id]):
        return
    table = model.__table__  # type: ignore[attr-defined]
    if "campaign_id" in table.c:
        query = select(table.c.campaign_id).where(table.c.id == row_id)
    elif "force_id" in table.c:
        forces = Force.__table__  # type: ignore[attr-defined]
        query = select(forces.c.campaign_id).join(table, table.c.force_id == forces.c.id)
        query = query.where(table.c.id == row_id)
    elif "battle_id" in table.c:
        battles = Battle.__table__  # type: ignore[attr-defined]
        query = select(battles.c.campaign_id).join(table, table.c.battle_id == battles.c.id)
        query = query.where(table.c.id == row_id)
    else:
        return
    lock_campaigns_of(session, query)


def _held_already(session: Session, model: type, row_ids: list[int]) -> bool:
    """Whether the rows, all in the identity map, belong to campaigns this transaction has
    locked already: nothing to ask the database then."""
    held_campaigns = campaigns_held(session)
    if not held_campaigns:
        return False
    for row_id in row_ids:
        row = session.identity_map.get(identity_key(model, row_id))
        if row is None or campaign_of(session, row) not in held_campaigns:
            return False
    return True


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


@listens_for(Session, "after_commit")
def _unlocked(session: Session) -> None:
    """Row locks end with the transaction."""
    session.info.pop(LOCKED, None)


@listens_for(Session, "after_soft_rollback")
def _unlocked_by_rollback(session: Session, previous_transaction: object) -> None:
    """A rollback, a savepoint's too (a trial run of a result), releases the locks taken
    within it (PostgreSQL): forget them all, so the next for_change locks and reads again."""
    session.info.pop(LOCKED, None)
