"""The rulebook a campaign plays with (issue 22): the core's, with the campaign's active
rule packs applied. Every service that applies a rule asks here, with the campaign's id,
instead of reading the core rulebook."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from cachetools import LRUCache
from sqlalchemy.event import listens_for
from sqlmodel import Session, col, select

from app.db.models import Force, RulePack
from app.rules import packs
from app.rules.data import Agenda, Requisition, Rulebook, rulebook
from app.rules.errors import RuleError

# Rulebooks built from the same pack versions are the same: keep a few (they are frozen).
# The lock: requests run on several threads, and the cache is not thread-safe.
# Keyed by the database and the rows in play (``_built``): a row is never rewritten.
_BOOKS: LRUCache[tuple[object, ...], Rulebook] = LRUCache(maxsize=64)
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
    """The rulebook the force plays with (``book_of``)."""
    force = session.get(Force, force_id)
    return book_of(session, force) if force else rulebook()


def army_of(force: Force) -> tuple[str, ...]:
    """Where a force belongs (issue 47): its Crusade faction and its own army keywords."""
    return (force.crusade_faction, *force.army_keywords)


def book_of(session: Session, force: Force) -> Rulebook:
    """The rulebook ``force`` plays with: its campaign's, without the pack content scoped to
    factions it is not of (``packs.narrow``). Kept per campaign and army for the
    transaction; a campaign whose packs scope nothing gives every force the campaign's book."""
    book = campaign_book(session, force.campaign_id)
    army = army_of(force)
    key = (force.campaign_id, tuple(sorted(set(army))))
    memo: dict[tuple[int, tuple[str, ...]], Rulebook] = session.info.setdefault(FORCE_MEMO, {})
    if key not in memo:
        memo[key] = packs.narrow(book, army) if packs.scoped(book) else book
    return memo[key]


FORCE_MEMO = "rulebooks.book_of"


def check_in_scope(
    session: Session, force: Force, *, requisitions: Sequence[str] = (), agendas: Sequence[str] = ()
) -> None:
    """Refuse a pack's Requisition or Agenda the campaign has but scoped to factions the
    force is not of (``rule_pack_not_for_force``), naming the pack and its factions; what
    the campaign lacks altogether is left to the rules' own refusal."""
    campaign = campaign_book(session, force.campaign_id)
    own = book_of(session, force)
    if own is campaign:
        return
    asked: list[tuple[str, Requisition | Agenda | None, bool]] = [
        ("requisition", _find(campaign.requisition, n), _has(own.requisition, n))
        for n in requisitions
    ]
    asked += [("agendas", _find(campaign.agenda, n), _has(own.agenda, n)) for n in agendas]
    for field, entry, held in asked:
        if entry is not None and not held:
            raise RuleError(
                "rule_pack_not_for_force",
                f"{entry.name} (rule pack {entry.pack}) is for {', '.join(entry.factions)} "
                f"forces; {force.name} is {', '.join(army_of(force))}. Set its army keywords "
                "if it belongs there.",
                field=field,
            )


def _find(lookup: Callable[[str], _Entry], name: str) -> _Entry | None:
    try:
        return lookup(name)
    except KeyError:
        return None


def _has(lookup: Callable[[str], object], name: str) -> bool:
    try:
        lookup(name)
    except KeyError:
        return False
    return True


_Entry = TypeVar("_Entry", Requisition, Agenda)


def forget(session: Session) -> None:
    session.info.pop(MEMO, None)
    session.info.pop(FORCE_MEMO, None)
    session.info.pop(VERSIONS, None)


def _built(session: Session, campaign_id: int) -> Rulebook:
    # The packs in play by what names each row once and for all (a row is never rewritten:
    # a new version is a new row), without their documents: most requests find the book
    # kept, and the documents (tens of KB for a mixed campaign's six packs) would be read,
    # decoded and written out again for the key alone.
    rows = session.exec(
        select(RulePack.id, RulePack.pack_id, RulePack.pack_version, RulePack.attached_at)
        .where(RulePack.campaign_id == campaign_id, RulePack.active == True)  # noqa: E712
        .order_by(col(RulePack.position), col(RulePack.id))
    ).all()
    session.info.setdefault(VERSIONS, {})[campaign_id] = {r[1]: r[2] for r in rows}
    if not rows:
        return rulebook()
    # the database's address too: another database (a test's) may hold the same ids
    where = session.get_bind().engine.url.render_as_string(hide_password=True)
    key = (where, *((r[0], r[1], r[2], r[3].isoformat()) for r in rows))
    with _LOCK:
        book = _BOOKS.get(key)
    if book is None:
        documents = [r.document for r in active_packs(session, campaign_id)]
        book = packs.apply(rulebook(), [packs.RulePack.model_validate(d) for d in documents])
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
