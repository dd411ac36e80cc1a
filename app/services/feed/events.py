"""The campaign's event feed: its history, read in order after a cursor, each event with a
short sentence for people (and bots that just print it).

The history is append-only and, within a campaign, ids become visible in order (see
``history.record``), so "every event after id N" is a complete, stable answer. A cursor is
that id, made opaque so that clients do not build their own."""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import event as sa_event
from sqlmodel import Session, col, func, select

from app.db.models import BattleSide, Card, Event, Force, User
from app.errors import DomainError
from app.rules.data import Rulebook, rulebook
from app.services.campaigns.membership import role_of
from app.services.forces.forces import get_campaign

_PREFIX = "ev1:"
log = logging.getLogger(__name__)

# Called with the campaign ids whose feed a commit in this process just extended (readers
# waiting here answer at once; other processes' readers see it by polling).
_committed: list[Callable[[set[int]], None]] = []


# Called with the newest event id a commit in this process gave each campaign's feed: all
# ids up to it are visible once it is committed (``history.record``), so waiting readers
# here need not read it again (issue 50).
_heads: list[Callable[[dict[int, int]], None]] = []


def on_commit(listener: Callable[[set[int]], None]) -> None:
    _committed.append(listener)


def on_heads(listener: Callable[[dict[int, int]], None]) -> None:
    _heads.append(listener)


@sa_event.listens_for(Session, "after_commit")
def _tell_listeners(session: Session) -> None:
    campaigns = session.info.pop("feed_campaigns", None)
    heads = session.info.pop("feed_heads", None)
    for listener in _committed if campaigns else ():
        _tell(listener, set(campaigns))
    for head_listener in _heads if heads else ():
        _tell(head_listener, dict(heads))


def _tell(listener: Callable[[Any], None], news: Any) -> None:
    try:
        listener(news)
    except Exception:  # the change is committed; a reader not woken still polls
        log.warning("feed listener failed", exc_info=True)


@sa_event.listens_for(Session, "after_rollback")
def _forget(session: Session) -> None:
    session.info.pop("feed_campaigns", None)
    session.info.pop("feed_heads", None)


@dataclass(frozen=True)
class FeedEvent:
    id: int
    cursor: str
    kind: str
    campaign_id: int
    force_id: int | None
    force_ids: list[int]
    battle_id: int | None
    card_id: int | None
    decision_id: int | None
    actor: str | None
    summary: str
    created_at: datetime
    details: dict[str, Any]


def cursor_for(event_id: int) -> str:
    return base64.urlsafe_b64encode(f"{_PREFIX}{event_id}".encode()).decode().rstrip("=")


_MAX_EVENT_ID = 2**31


def read_cursor(cursor: str | None) -> int:
    """The event id a cursor stands for; no cursor means 'from the beginning'."""
    if not cursor:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        if text.startswith(_PREFIX) and text[len(_PREFIX) :].isdigit():
            event_id = int(text[len(_PREFIX) :])
            # Ids are 32-bit integers on PostgreSQL: a forged larger one must not reach a query.
            if event_id < _MAX_EVENT_ID:
                return event_id
    except (binascii.Error, UnicodeDecodeError, ValueError):
        pass
    raise DomainError(
        "cursor_invalid",
        "after: not a cursor this feed gave out; pass an event's `cursor` (or the page's "
        "`next`) unchanged, or leave it out to start from the beginning.",
        status=422,
        field="after",
    )


def newest_id(session: Session, *, campaign_id: int) -> int:
    """The campaign's newest event id (0 before the first): one indexed lookup."""
    query = select(func.max(Event.id)).where(Event.campaign_id == campaign_id)
    return session.exec(query).one() or 0


def read_feed(
    session: Session, *, campaign_id: int, after: int, limit: int, upto: int | None = None
) -> list[FeedEvent]:
    """Up to ``limit`` events after id ``after``, oldest first; with ``upto``, none after
    that id (a page that is the same whenever it is read: ids become visible in order)."""
    get_campaign(session, campaign_id)
    query = select(Event).where(Event.campaign_id == campaign_id, col(Event.id) > after)
    if upto is not None:
        query = query.where(col(Event.id) <= upto)
    rows = list(session.exec(query.order_by(col(Event.id)).limit(limit)).all())
    names = _Names.load(session, rows)
    return [_feed_event(row, names) for row in rows]


def reader_kind(session: Session, *, campaign_id: int, user: User | None) -> str:
    """Who reads a campaign's feed, as far as what it may show could differ: its
    ``organizer``, a ``player``, a site ``admin``, or a ``reader`` who is no member (a public
    campaign). Pages built for one kind are never served to another (app/api/feed_wake.py)."""
    if user is None or user.id is None:
        return "reader"
    role = role_of(session, campaign_id=campaign_id, user_id=user.id)
    if role is not None:
        return role
    return "admin" if user.is_admin else "reader"


def one_event(session: Session, event_id: int) -> FeedEvent:
    row = session.get(Event, event_id)
    assert row is not None
    return _feed_event(row, _Names.load(session, [row]))


def events_by_id(session: Session, event_ids: list[int]) -> dict[int, FeedEvent]:
    """Several events at once (a webhook's batch), in the statements one of them takes."""
    rows = list(session.exec(select(Event).where(col(Event.id).in_(event_ids))).all())
    names = _Names.load(session, rows)
    return {int(row.id or 0): _feed_event(row, names) for row in rows}


# What an event's stored payload may tell a client (a decision's free-form answer is left in
# the decision it belongs to).
DETAIL_FIELDS = (
    "fields",
    "name",
    "user",
    "user_id",
    "role",
    "card_id",
    "power_rating",
    "requisition",
    "requisition_points_spent",
    "outcome",
    "battle_size",
    "mission",
    "mission_roll",
    "forces",
    "decision_id",
    "decision",
    "rank",
    "category",
    "entries",
    "scar",
    "pack",
    "requisition_name",
    "counters",
    "version",
    "replaces",
    "counter",
    "before",
    "after",
    "before_choice",
    "after_choice",
    "army_keywords",
    "army_keywords_before",
    "reason",
    "sides",
    "threshold",
    "threshold_name",
    "counter_name",
    "at",
    "reset_to",
    "quest",
    "quest_name",
    "step",
    "steps",
    "step_name",
    "tally",
    "count",
    "was",
    "datasheet",
    "keywords",
    "consequence",
    "unit_xp",
    "rolled",
    "gained",
)


def details_of(payload: dict[str, Any]) -> dict[str, Any]:
    """The known fields of a payload; victory points as a list (ids are never JSON keys)."""
    details = {k: v for k, v in payload.items() if k in DETAIL_FIELDS}
    details["victory_points"] = [
        {"force_id": int(k), "victory_points": v}
        for k, v in (payload.get("victory_points") or {}).items()
    ]
    return details


@dataclass(frozen=True)
class _Names:
    forces: dict[int, str]
    cards: dict[int, str]
    users: dict[int, str]
    # The two forces of each battle an event names without saying its forces (a result
    # proposed or disputed, a revert, a report): its ``force_ids``.
    battle_forces: dict[int, list[int]] = field(default_factory=dict)

    @classmethod
    def load(cls, session: Session, rows: list[Event]) -> _Names:
        """Names for a page of events in four statements at most, whatever its size."""
        force_ids = {r.force_id for r in rows if r.force_id} | {
            int(f)
            for r in rows
            for f in [*r.payload.get("forces", []), *r.payload.get("victory_points", {})]
        }
        card_ids = {int(r.payload["card_id"]) for r in rows if r.payload.get("card_id")}
        user_ids = {r.actor_id for r in rows if r.actor_id} | {
            int(r.payload["user_id"]) for r in rows if r.payload.get("user_id")
        }
        forces = session.exec(
            select(Force.id, Force.name).where(col(Force.id).in_(force_ids))
        ).all()
        cards = session.exec(select(Card.id, Card.name).where(col(Card.id).in_(card_ids))).all()
        users = session.exec(select(User.id, User.username).where(col(User.id).in_(user_ids))).all()
        battle_forces: dict[int, list[int]] = {}
        battle_ids = {r.battle_id for r in rows if r.battle_id and not _own_forces(r)}
        if battle_ids:
            sides = session.exec(
                select(BattleSide.battle_id, BattleSide.force_id)
                .where(col(BattleSide.battle_id).in_(battle_ids))
                .order_by(col(BattleSide.id))
            ).all()
            for battle_id, force_id in sides:
                battle_forces.setdefault(int(battle_id), []).append(int(force_id))
        return cls(
            forces={int(i): n for i, n in forces if i is not None},
            cards={int(i): n for i, n in cards if i is not None},
            users={int(i): n for i, n in users if i is not None},
            battle_forces=battle_forces,
        )


def _feed_event(row: Event, names: _Names) -> FeedEvent:
    assert row.id is not None
    payload = row.payload
    card_id = payload.get("card_id")
    return FeedEvent(
        id=row.id,
        cursor=cursor_for(row.id),
        kind=row.kind,
        campaign_id=row.campaign_id,
        force_id=row.force_id,
        force_ids=_own_forces(row) or names.battle_forces.get(row.battle_id or 0, []),
        battle_id=row.battle_id,
        card_id=int(card_id) if card_id else None,
        decision_id=payload.get("decision_id"),
        actor=names.users.get(row.actor_id) if row.actor_id else None,
        summary=summary(row, names, rulebook()),
        created_at=row.created_at,
        details=payload,
    )


def summaries(session: Session, rows: list[Event]) -> list[str]:
    """The feed's sentence for each event (written or not: a result's preview, issue 38)."""
    names = _Names.load(session, rows)
    return [summary(row, names, rulebook()) for row in rows]


def _own_forces(row: Event) -> list[int]:
    """The forces an event names itself: its force, or a battle's two (mustered, recorded,
    confirmed: their ``force_id`` is null). Any other event about a battle concerns that
    battle's two forces (``_Names.battle_forces``)."""
    if row.force_id:
        return [row.force_id]
    payload = row.payload
    return [int(f) for f in payload.get("forces") or payload.get("victory_points") or []]


# A decision's kind as the rules name it, in a sentence.
_DECISION_WORDS = {
    "out_of_action": "Out of Action",
    "battle_scar": "Battle Scar",
    "battle_honour": "Battle Honour",
    "victor_bonus": "victor bonus",
}
_CANCELLED_WORDS = {
    "no_unit_can_take_it": "no unit can take it any more",
    "battle_reverted": "its battle was reverted",
    "battle_called_off": "its battle was called off",
}


def _decision_words(kind: Any) -> str:
    return _DECISION_WORDS.get(str(kind), str(kind or "").replace("_", " "))


def _titled(payload: dict[str, Any]) -> str:
    return f": {payload['title']}" if payload.get("title") else ""


def summary(row: Event, names: _Names, book: Rulebook) -> str:
    """One sentence for people; the structured fields carry the same facts for bots."""
    p = row.payload
    force = names.forces.get(row.force_id or 0, "A force")
    card = p.get("name") or names.cards.get(int(p.get("card_id") or 0), "a unit")
    battle = f"Battle {row.battle_id}"
    match row.kind:
        case "campaign_created":
            return f"The campaign {p.get('name', '')} began."
        case "force_created":
            return f"{force} joined the crusade."
        case "army_keywords_changed":
            words = ", ".join(p.get("army_keywords") or []) or "none beyond its Crusade faction"
            return f"{force}'s army keywords are now {words}."
        case "card_added":
            return f"{force} added {card} (Power Rating {p.get('power_rating')})."
        case "card_removed":
            return f"{force} removed {card} from its Order of Battle."
        case "card_transformed":
            power = p.get("power_rating")
            return f"{p.get('was') or 'A unit'} ({force}) became {card} (Power Rating {power})."
        case "battle_mustered":
            return _mustered(row, names, book)
        case "battle_recorded":
            return f"{battle}: {_score(p, names)}."
        case "result_proposed":
            return f"{battle}: a result was entered; the opponent is asked to confirm it."
        case "result_confirmed":
            return f"{battle}: the result was confirmed."
        case "result_disputed":
            return f"{battle}: the entered result is disputed; an organizer will settle it."
        case "battle_reverted":
            return f"{battle} was reverted."
        case "report_written":
            return f"{battle}: its report was written{_titled(p)}."
        case "report_edited":
            return f"{battle}: its report was edited{_titled(p)}."
        case "photo_added":
            return f"{battle}: a photo was added."
        case "territory_taken":
            return f"{force} took {p.get('territory', 'a territory')} in {battle}."
        case "battle_called_off":
            return f"{battle} was called off."
        case "decision_pending" if p.get("quest_name"):
            return f"{force} has free requisitions to take: {p['quest_name']} ended."
        case "decision_pending" if p.get("threshold_name"):
            return f"{force} has free requisitions to take: {p['threshold_name']} was reached."
        case "decision_pending":
            what = _decision_words(p.get("decision"))
            about = f" for {card}" if p.get("card_id") else ""
            article = "an" if what[:1].lower() in "aeiou" else "a"
            return f"{force} has {article} {what} choice to make{about}."
        case "decision_cancelled":
            what = _decision_words(p.get("decision"))
            about = f" for {card}" if p.get("card_id") else ""
            reason = str(p.get("reason"))
            why = _CANCELLED_WORDS.get(reason, "nothing is left to answer")
            verb = "lapsed" if reason == "no_unit_can_take_it" else "was cancelled"
            return f"{force}'s {what} choice{about} {verb}: {why}."
        case "decision_answered" if p.get("quest_name") or p.get("threshold_name"):
            source = p.get("quest_name") or p.get("threshold_name")
            return f"{force} took its free requisitions from {source}."
        case "decision_answered":
            return f"{force} made its {_decision_words(p.get('decision'))} choice."
        case "rank_gained":
            return f"{card} ({force}) reached the rank of {_rank(p.get('rank'), book)}."
        case "honour_gained":
            category = str(p.get("category", "")).replace("_", " ")
            return f"{card} ({force}) gained a Battle Honour ({category})."
        case "scar_gained":
            return f"{card} ({force}) gained the Battle Scar {_scar(p.get('scar'), book)}."
        case "counter_changed":
            who = f"{card} ({force})" if p.get("card_id") else force
            what = _counter(p.get("counter"), book)
            was, now = _counter_values(p, book)
            return f"{who}: {what} went from {was} to {now}."
        case "threshold_reached":
            who = f"{card} ({force})" if p.get("card_id") else force
            counter = p.get("counter_name") or _counter(p.get("counter"), book)
            reset = p.get("reset_to")
            again = f"; it starts again at {reset}" if reset is not None else ""
            name, at = p.get("threshold_name"), p.get("at")
            return f"{who} reached {name}: {counter} rose to {at} or more{again}."
        case kind if kind.startswith("quest_"):
            return _quest(row, p, f"{card} ({force})" if p.get("card_id") else force)
        case "requisition_purchased":
            name = p.get("requisition_name") or _requisition(p.get("requisition"), book)
            return (
                f"{force} used the {name} Requisition ({p.get('requisition_points_spent', 0)} RP)."
            )
        case "rule_pack_attached" | "rule_pack_updated" | "rule_pack_detached":
            done = row.kind.removeprefix("rule_pack_")
            return f"The rule pack {p.get('name')} (version {p.get('version')}) was {done}."
        case "member_joined":
            return f"{p.get('user', 'Someone')} joined the campaign as {p.get('role', 'player')}."
        case "member_removed":
            who = p.get("user") or names.users.get(int(p.get("user_id") or 0), "A member")
            return f"{who} left the campaign."
        case _:
            return row.kind.replace("_", " ").capitalize() + "."


def _quest(row: Event, p: dict[str, Any], who: str) -> str:
    """A quest's news (issue 38): begun, a step's tally, a step done, done, failed."""
    name, step, steps = p.get("quest_name") or p.get("quest"), p.get("step"), p.get("steps")
    on = f"step {step} of {steps}, {p.get('step_name')}: {p.get('tally')} of {p.get('count')}"
    match row.kind:
        case "quest_started":
            return f"{who} began {name} ({on})."
        case "quest_progressed":
            return f"{who}: {name}, {on}."
        case "quest_step_done":
            return f"{who} completed a step of {name}; now {on}."
        case "quest_completed":
            return f"{who} completed {name}."
        case "quest_failed":
            return f"{who} failed {name}."
    return f"{who}: {name} was put back by a revert."


def _mustered(row: Event, names: _Names, book: Rulebook) -> str:
    p = row.payload
    sides = " vs ".join(names.forces.get(int(f), f"force {f}") for f in p.get("forces", []))
    try:
        setting = f"{book.battle_size(p['battle_size']).name}, {book.mission(p['mission']).name}"
    except KeyError:
        setting = "a battle"
    return f"Battle {row.battle_id} mustered: {sides} ({setting})."


def _score(payload: dict[str, Any], names: _Names) -> str:
    """The winner is the side with more victory points (painted bonus included)."""
    scores = [
        (names.forces.get(int(f), f"force {f}"), int(vp))
        for f, vp in payload.get("victory_points", {}).items()
    ]
    if len(scores) != 2:
        return "the result was recorded"
    (a, va), (b, vb) = sorted(scores, key=lambda s: -s[1])
    verdict = f"{a} won" if va > vb else "a draw"
    return f"{a} {va} – {vb} {b}, {verdict}"


def _counter(counter_id: Any, book: Rulebook) -> str:
    """A rule pack's counter by its name (the id when the pack is no longer attached)."""
    fallback = str(counter_id).replace("_", " ").capitalize()
    return next((c.name for c in book.counters if c.id == counter_id), fallback)


def _counter_values(p: dict[str, Any], book: Rulebook) -> tuple[str, str]:
    """A counter's values as the feed says them: a named choice by its name ("none" before
    any), as recorded or from the pack still attached (issue 47); a number otherwise."""
    rule = next((c for c in book.counters if c.id == p.get("counter")), None)
    if "after_choice" not in p and (rule is None or not rule.choices):
        return str(p.get("before")), str(p.get("after"))

    def name(key: str) -> str:
        chosen = p.get(f"{key}_choice") if f"{key}_choice" in p else None
        if chosen is None and rule is not None and f"{key}_choice" not in p:
            chosen = rule.choice(int(p.get(key) or 0))
        return str(chosen).replace("_", " ").capitalize() if chosen else "none"

    return name("before"), name("after")


def _rank(rank_id: Any, book: Rulebook) -> str:
    try:
        return book.rank(str(rank_id)).name
    except KeyError:
        return str(rank_id)


def _scar(scar_id: Any, book: Rulebook) -> str:
    for table in book.scars.battle_scars.values():
        for entry in table.entries:
            if entry.id == scar_id:
                return entry.name
    return str(scar_id)


def _requisition(requisition_id: Any, book: Rulebook) -> str:
    try:
        return book.requisition(str(requisition_id)).name
    except KeyError:
        return str(requisition_id)
