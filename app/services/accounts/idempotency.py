"""The records behind Idempotency-Key: claimed before a command runs, marked in the
command's own transaction when it commits, and settled with its answer afterwards.

A claim that is never settled (the server failed, or its process died) does not hold the
key for ever: a failed request releases it at once, and an unsettled claim expires after
CLAIM_SECONDS, when a retry may take it over. The attempt that lost its claim cannot
commit any more (``mark_committed`` refuses it), so a request runs to the end at most once.
"""

from __future__ import annotations

import hashlib
import logging
import random
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, delete, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session, col

from app.db.models import IdempotencyRecord, as_utc, utcnow
from app.db.session import session_scope
from app.errors import DomainError

IN_PROGRESS = 0
COMMITTED = 1  # the command's changes are in; its answer is not stored yet
CLAIM_SECONDS = 60
KEPT_FOR = timedelta(days=1)
MAX_KEY = 200
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Claim:
    """This attempt's hold on a key."""

    key: str
    token: str


@dataclass(frozen=True)
class Earlier:
    """What an earlier request with the same key left."""

    status_code: int
    request_hash: str
    body: dict[str, Any]
    age_seconds: float

    @property
    def expired(self) -> bool:
        return self.age_seconds >= CLAIM_SECONDS


def record_key(caller: bytes, key: str) -> str:
    """Keys are the caller's own: another account sending the same key gets its own record."""
    return hashlib.sha256(caller + b"\0" + key.encode()).hexdigest()


def claim(engine: Engine, key: str, target: str, digest: str) -> Claim | Earlier:
    """Hold ``key`` for this attempt, or say what an earlier attempt left."""
    for _ in range(3):  # the earlier holder may release the key between our two steps
        token = secrets.token_hex(16)
        if _insert(engine, key, target[:400], digest, token):
            return Claim(key, token)
        found = _take_over_or_read(engine, key, digest, token)
        if found is not None:
            return found
    raise DomainError(
        "idempotency_request_in_progress",
        "Requests with this Idempotency-Key keep failing at the same time; retry shortly.",
        status=409,
        field="Idempotency-Key",
    )


def _insert(engine: Engine, key: str, target: str, digest: str, token: str) -> bool:
    record = IdempotencyRecord(
        key=key, method_path=target, request_hash=digest, status_code=IN_PROGRESS, claim=token
    )
    try:
        with session_scope(engine) as session:
            if random.random() < 0.01:  # now and then, forget answers older than a day
                _forget_old(session)
            session.add(record)
        return True
    except IntegrityError:
        return False


def _forget_old(session: Session) -> None:
    cutoff = utcnow() - KEPT_FOR
    session.execute(delete(IdempotencyRecord).where(col(IdempotencyRecord.created_at) < cutoff))


def _take_over_or_read(engine: Engine, key: str, digest: str, token: str) -> Claim | Earlier | None:
    with session_scope(engine) as session:
        row = session.get(IdempotencyRecord, key, with_for_update=True)
        if row is None:
            return None
        now = utcnow()
        earlier = Earlier(row.status_code, row.request_hash, row.body, _age(row.created_at, now))
        if row.status_code == IN_PROGRESS and earlier.expired and row.request_hash == digest:
            row.claim, row.created_at = token, now  # its process died: this attempt runs
            session.add(row)
            return Claim(key, token)
        return earlier


def _age(moment: datetime, now: datetime) -> float:
    return (now - as_utc(moment)).total_seconds()


def mark_committed(session: Session, held: Claim) -> None:
    """In the command's own transaction: its changes and 'committed' land together. Refused
    when a retry took the claim over, so the command's changes are rolled back."""
    result = session.execute(
        update(IdempotencyRecord)
        .where(
            col(IdempotencyRecord.key) == held.key,
            col(IdempotencyRecord.claim) == held.token,
            col(IdempotencyRecord.status_code) == IN_PROGRESS,
        )
        .values(status_code=COMMITTED)
    )
    if result.rowcount != 1:  # type: ignore[attr-defined]
        raise DomainError(
            "idempotency_claim_lost",
            f"This request took longer than {CLAIM_SECONDS} s and a retry with the same "
            "Idempotency-Key took over; this attempt changed nothing.",
            status=409,
            field="Idempotency-Key",
        )


def settle(engine: Engine, held: Claim, status: int, answer: dict[str, Any]) -> None:
    """Keep the answer for replay; a failure that committed nothing and may not happen again
    (5xx, 429, and a 409 conflict with the state of the moment) releases the key so a retry
    runs. A conflict is released because its retry is sent after the client caught up (the
    wizard's queue re-sends a tap with the draft's new version and the same key): replaying
    the old conflict, or refusing the new body as a reused key, would lose that tap. Never
    raises: the caller still gets its answer."""
    for attempt in range(3):
        try:
            with session_scope(engine) as session:
                _settle(session, held, status, answer)
            return
        except OperationalError:
            log.warning("settling an idempotency key failed (try %d)", attempt + 1)
            time.sleep(0.05 * (attempt + 1))


def _settle(session: Session, held: Claim, status: int, answer: dict[str, Any]) -> None:
    ours = (
        col(IdempotencyRecord.key) == held.key,
        col(IdempotencyRecord.claim) == held.token,
    )
    if status >= 500 or status in (409, 429):
        session.execute(
            delete(IdempotencyRecord).where(
                *ours, col(IdempotencyRecord.status_code) == IN_PROGRESS
            )
        )
        return
    session.execute(
        update(IdempotencyRecord)
        .where(*ours, col(IdempotencyRecord.status_code).in_((IN_PROGRESS, COMMITTED)))
        .values(status_code=status, body=answer)
    )


def release(engine: Engine, held: Claim) -> None:
    """The request failed before answering: let a retry run (unless it committed)."""
    settle(engine, held, 500, {})
