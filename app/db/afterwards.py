"""Work outside the database that must share a transaction's fate (a battle photo's files):
what a rollback takes back is undone (the files of a photo whose row is not written are
removed), and what only a commit may do waits for it (a deleted photo's files are removed
once its row is gone for good). A savepoint's rollback undoes what was done inside it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import event
from sqlalchemy.orm import Session, SessionTransaction

log = logging.getLogger(__name__)

PENDING = "afterwards.pending"


@dataclass(frozen=True)
class _Pending:
    transaction: SessionTransaction
    on_commit: Callable[[], None] | None = None
    on_rollback: Callable[[], None] | None = None


def on_rollback(session: Session, undo: Callable[[], None]) -> None:
    """Run ``undo`` if the transaction (or the savepoint) in progress is rolled back."""
    _pending(session).append(_Pending(_current(session), on_rollback=undo))


def on_commit(session: Session, action: Callable[[], None]) -> None:
    """Run ``action`` once the transaction in progress is committed (never if it, or the
    savepoint in progress, is rolled back)."""
    _pending(session).append(_Pending(_current(session), on_commit=action))


def _current(session: Session) -> SessionTransaction:
    transaction = session.get_nested_transaction() or session.get_transaction()
    assert transaction is not None, "only within a transaction"
    return transaction


def _pending(session: Session) -> list[_Pending]:
    pending: list[_Pending] = session.info.setdefault(PENDING, [])
    return pending


def _run(action: Callable[[], None]) -> None:
    try:
        action()
    except Exception:  # the transaction's outcome stands; a leftover file is logged
        log.exception("work after a transaction failed")


@event.listens_for(Session, "after_commit")
def _committed(session: Session) -> None:
    for pending in session.info.pop(PENDING, []):
        if pending.on_commit is not None:
            _run(pending.on_commit)


@event.listens_for(Session, "after_soft_rollback")
def _rolled_back(session: Session, previous_transaction: SessionTransaction) -> None:
    pending = session.info.get(PENDING)
    if not pending:
        return
    kept = []
    for item in pending:
        if _within(item.transaction, previous_transaction):
            if item.on_rollback is not None:
                _run(item.on_rollback)
        else:
            kept.append(item)
    session.info[PENDING] = kept


def _within(transaction: SessionTransaction | None, outer: SessionTransaction) -> bool:
    while transaction is not None:
        if transaction is outer:
            return True
        transaction = transaction.parent
    return False
