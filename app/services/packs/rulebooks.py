"""The rulebook a campaign plays with (issue 22): the core's, with the campaign's active
rule packs applied. Every service that applies a rule asks here, with the campaign's id,
instead of reading the core rulebook."""

from __future__ import annotations

import json
import threading

from cachetools import LRUCache
from sqlalchemy.event import listens_for
from sqlmodel import Session, col, select

from app.db.models import Force, RulePack
from app.rules import packs
from app.rules.data import Rulebook, rulebook

# Rulebooks built from the same pack versions are the same: keep a few (they are frozen).
# The lock: requests run on several threads, and the cache is not thread-safe.
# Keyed by the documents themselves: an id may come back (another database, a test's).
_BOOKS: LRUCache[tuple[str, ...], Rulebook] = LRUCache(maxsize=64)
_LOCK = threading.Lock()


def active_packs(session: Session, campaign_id: int) -> list[RulePack]:
    return list(
        session.exec(
            select(RulePack)
            .where(RulePack.campaign_id == campaign_id, RulePack.active == True)  # noqa: E712
            .order_by(col(RulePack.position), col(RulePack.id))
        )
    )


def campaign_book(session: Session, campaign_id: int) -> Rulebook:
    """The rulebook this campaign plays with: the core, with its active packs applied. Read
    once per transaction (a command asks several times); attaching a pack forgets it."""
    memo: dict[int, Rulebook] = session.info.setdefault(MEMO, {})
    if campaign_id not in memo:
        memo[campaign_id] = _built(session, campaign_id)
    return memo[campaign_id]


MEMO = "rulebooks.campaign_book"


def force_book(session: Session, force_id: int) -> Rulebook:
    """The rulebook of the campaign the force plays in."""
    force = session.get(Force, force_id)
    return campaign_book(session, force.campaign_id) if force else rulebook()


def forget(session: Session) -> None:
    session.info.pop(MEMO, None)
    session.info.pop(VERSIONS, None)


def _built(session: Session, campaign_id: int) -> Rulebook:
    rows = active_packs(session, campaign_id)
    session.info.setdefault(VERSIONS, {})[campaign_id] = _versions(rows)
    if not rows:
        return rulebook()
    key = tuple(json.dumps(r.document, sort_keys=True) for r in rows)
    with _LOCK:
        book = _BOOKS.get(key)
    if book is None:
        book = packs.apply(rulebook(), [packs.RulePack.model_validate(r.document) for r in rows])
        with _LOCK:
            _BOOKS[key] = book
    return book


def versions_in_play(session: Session, campaign_id: int) -> dict[str, str]:
    """What a battle records: the id and version of each active pack (read with the
    campaign's rulebook when the transaction asked for it already)."""
    memo: dict[int, dict[str, str]] = session.info.setdefault(VERSIONS, {})
    if campaign_id not in memo:
        memo[campaign_id] = _versions(active_packs(session, campaign_id))
    return dict(memo[campaign_id])


VERSIONS = "rulebooks.versions_in_play"


def _versions(rows: list[RulePack]) -> dict[str, str]:
    return {r.pack_id: r.pack_version for r in rows}


def starting_counters(book: Rulebook) -> dict[str, int]:
    """A new force's counters: each force counter of the campaign's packs at its start."""
    return {c.id: c.start for c in book.counters if c.scope == "force"}


@listens_for(Session, "after_commit")
@listens_for(Session, "after_rollback")
def _forget_at_the_end(session: Session) -> None:
    """A pack attached by another request shows in this session's next transaction."""
    forget(session)
