"""Sends the webhook outbox: claim due deliveries, POST each outside any transaction, record
the answer, retry with exponential backoff for a day.

Several workers (one per app process, or ``crusade worker`` processes) may run at once:
a claim takes rows with FOR UPDATE SKIP LOCKED on PostgreSQL (SQLite has one writer at a
time) and leases them (``claimed_until``, 5 minutes), so no delivery is sent twice by two
workers; a worker that dies mid-send lets another retry once its lease ends. Receivers see
each event at least once and can drop repeats by the X-Crusade-Event-Id header."""

from __future__ import annotations

import functools
import hashlib
import hmac
import http.client
import json
import logging
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, func, or_, update
from sqlmodel import Session, col, select

from app.config import get_settings
from app.db.models import Campaign, Webhook, WebhookDelivery, as_utc, utcnow
from app.db.session import session_scope
from app.errors import DomainError
from app.faults import database_fault
from app.services.campaigns import stories
from app.services.feed import (
    events,
    feed_items,  # the webhook body is the feed's item
    webhooks,
)

log = logging.getLogger("crusade.webhooks")

TIMEOUT_SECONDS = 5.0
BATCH = 20  # a target's deliveries leased at once, sent in order by one sender
SENDERS = 8  # sender threads of one worker: targets served at once
POLL_SECONDS = 0.2  # how often a worker looks for what other processes committed
RECORD_SECONDS = 0.5  # a sender records its outcomes at least this often
# Longer than a whole batch can take (each POST up to the timeout, plus its URL check), so
# no claimed delivery's lease runs out while its worker is still on the way to it.
LEASE = timedelta(minutes=5)
GIVE_UP_AFTER = timedelta(days=1)
FIRST_RETRY = timedelta(seconds=30)
LONGEST_WAIT = timedelta(hours=1)
USER_AGENT = "crusade-tracker-webhooks/1"


@dataclass(frozen=True)
class Claimed:
    delivery_id: int
    webhook_id: int
    event_id: int
    url: str
    secret: str
    body: bytes


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    error: str

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def run_once(engine: Engine, *, now: datetime | None = None) -> int:
    """Send every delivery that is due now, target by target in order, in this thread; the
    number sent successfully (``crusade worker --once``, the tests)."""
    sent = 0
    while True:
        batches = claim_batches(engine, now=now or utcnow())
        if not batches:
            return sent
        for batch in batches:
            sent += send_batch(engine, batch, now=now)


def send_batch(engine: Engine, batch: list[Claimed], *, now: datetime | None = None) -> int:
    """POST one target's claimed deliveries in order, stopping at the first that fails: the
    rest go back to the queue behind it (released), so the target keeps its event order and
    its back-off holds them all. Outcomes are recorded together (one transaction for what
    was sent within RECORD_SECONDS), not one transaction per POST. The number delivered."""
    sent = 0
    done: list[tuple[Claimed, Outcome, datetime]] = []
    recorded_at = time.monotonic()
    for index, job in enumerate(batch):
        outcome = post(job)
        done.append((job, outcome, now or utcnow()))
        sent += outcome.delivered
        if not outcome.delivered:
            _record(engine, done, release=batch[index + 1 :])
            return sent
        if time.monotonic() - recorded_at >= RECORD_SECONDS:
            _record(engine, done)
            done, recorded_at = [], time.monotonic()
    _record(engine, done)
    return sent


# Outcomes already sent are recorded even across a database outage: left unrecorded, a
# delivery stays leased at the head of its target's queue, holding the whole queue until the
# lease runs out and then sent twice. Tried again until shortly before the lease ends.
RECORD_PATIENCE = LEASE - timedelta(seconds=30)


def _record(
    engine: Engine,
    done: list[tuple[Claimed, Outcome, datetime]],
    *,
    release: Sequence[Claimed] = (),
) -> None:
    deadline = time.monotonic() + RECORD_PATIENCE.total_seconds()
    wait = 0.2
    while True:
        try:
            finish_all(engine, done, release=release)
            return
        except Exception as error:
            if database_fault(error) is None or time.monotonic() + wait > deadline:
                raise
        time.sleep(wait)
        wait = min(wait * 2, 5.0)


class Worker:
    """The worker of one process: a dispatcher that leases each due target's next
    deliveries and a pool of sender threads, one target per thread at a time, so one slow
    or dead receiver holds one thread and never delays another target. A commit in this
    process wakes the dispatcher at once (``events.on_commit``); other processes' commits
    are seen by polling every ``POLL_SECONDS``."""

    def __init__(self, engine: Engine, *, senders: int = SENDERS) -> None:
        self.engine = engine
        self.senders = senders
        self.stop = threading.Event()
        self.wake = threading.Event()
        self._busy: set[int] = set()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(senders, thread_name_prefix="webhook-sender")

    def notify(self, _campaigns: set[int] | None = None) -> None:
        self.wake.set()

    def run(self) -> None:
        while not self.stop.is_set():
            self.wake.clear()
            try:
                self._dispatch()
            except Exception as error:  # a database hiccup must not end the worker
                if database_fault(error) is None:  # the database down: logged once per outage
                    log.exception("webhook worker: a round failed; retrying")
            self.wake.wait(POLL_SECONDS)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _dispatch(self) -> None:
        with self._lock:
            busy, room = set(self._busy), self.senders - len(self._busy)
        if room <= 0:
            return
        with session_scope(self.engine, writes=False) as session:
            heads = _heads(session, utcnow(), busy, room)
        for webhook_id in heads:
            with self._lock:
                self._busy.add(webhook_id)
            self._pool.submit(self._serve, webhook_id)

    def _serve(self, webhook_id: int) -> None:
        """One target's queue, in this sender thread, until nothing of it is due (its
        claims and sends never wait for another target's)."""
        try:
            while not self.stop.is_set():
                batch = claim_target(self.engine, webhook_id, utcnow())
                if not batch or send_batch(self.engine, batch) < len(batch):
                    break
        except Exception as error:
            if database_fault(error) is None:  # the database down: logged once per outage
                log.exception("webhook worker: sending to webhook %s failed", webhook_id)
        finally:
            with self._lock:
                self._busy.discard(webhook_id)
            self.wake.set()  # more of it may have been committed meanwhile


def run_forever(engine: Engine, stop: threading.Event, *, idle_seconds: float = 0.0) -> None:
    """The worker loop until ``stop`` is set (``crusade worker``)."""
    worker = Worker(engine)
    events.on_commit(worker.notify)
    threading.Thread(target=_stop_when, args=(stop, worker), daemon=True).start()
    worker.run()


def _stop_when(stop: threading.Event, worker: Worker) -> None:
    stop.wait()
    worker.stop.set()
    worker.wake.set()


def start_in_background(engine: Engine) -> threading.Event:
    """A daemon thread running the worker (``crusade serve``); set the event to stop it."""
    stop = threading.Event()
    thread = threading.Thread(
        target=run_forever, args=(engine, stop), name="webhook-worker", daemon=True
    )
    thread.start()
    return stop


def _open(now: datetime) -> Any:
    return or_(
        col(WebhookDelivery.claimed_until).is_(None), col(WebhookDelivery.claimed_until) < now
    )


def _heads(session: Session, now: datetime, skip: set[int], targets: int) -> list[int]:
    """The targets whose first pending delivery (their queue's head, by id) is due and not
    leased: one indexed query, whatever the number of targets."""
    first = (
        select(func.min(WebhookDelivery.id))
        .where(WebhookDelivery.status == "pending")
        .group_by(col(WebhookDelivery.webhook_id))
    )
    query = select(WebhookDelivery.webhook_id).where(
        col(WebhookDelivery.id).in_(first),
        col(WebhookDelivery.next_attempt_at) <= now,
        _open(now),
    )
    if skip:
        query = query.where(col(WebhookDelivery.webhook_id).not_in(skip))
    found = session.exec(query.order_by(col(WebhookDelivery.next_attempt_at)).limit(targets))
    return [int(w) for w in found]


def claim_batches(
    engine: Engine, *, now: datetime, skip: set[int] | None = None, targets: int = 100
) -> list[list[Claimed]]:
    """Lease the next deliveries (up to BATCH, in order) of each target whose queue's head
    is due, and build their bodies; one short transaction per target. An idle worker only
    reads (SQLite's one write lock is taken when there is work)."""
    with session_scope(engine, writes=False) as session:
        heads = _heads(session, now, skip or set(), targets)
    batches = []
    for webhook_id in heads:
        batch = claim_target(engine, webhook_id, now)
        if batch:
            batches.append(batch)
    return batches


def claim(engine: Engine, *, now: datetime) -> list[Claimed]:
    """Every due target's next deliveries, leased (see ``claim_batches``)."""
    return [job for batch in claim_batches(engine, now=now) for job in batch]


def claim_target(engine: Engine, webhook_id: int, now: datetime) -> list[Claimed]:
    """Lease a target's next deliveries (up to BATCH, in order) if its queue's head is due
    and free, in a short transaction; their bodies are built after it, in a read."""
    with session_scope(engine) as session:
        # The target's row is the claimers' meeting point: two workers never lease parts of
        # one queue at once (which would send its events out of order). NO KEY UPDATE: a
        # command inserting deliveries (which key-shares the row) does not hold it up.
        hook = session.exec(
            select(Webhook)
            .where(Webhook.id == webhook_id)
            .with_for_update(skip_locked=True, key_share=True)
        ).first()
        if hook is None:
            return []
        suspended = webhooks.suspended_because(session, hook)
        if suspended is not None:  # its owner lost the campaign: what is queued is not sent
            _withhold(session, webhook_id, suspended)
            return []
        queue = session.exec(
            select(WebhookDelivery)
            .where(WebhookDelivery.webhook_id == webhook_id, WebhookDelivery.status == "pending")
            .order_by(col(WebhookDelivery.id))
            .limit(BATCH)
            .with_for_update(skip_locked=True)
        ).all()
        head = queue[0] if queue else None
        if head is None or as_utc(head.next_attempt_at) > now or not _is_open(head, now):
            return []  # another worker took it meanwhile, or its back-off holds the queue
        leased = [(int(r.id or 0), r.event_id) for r in queue if _is_open(r, now)]
        for row in queue:
            if _is_open(row, now):
                row.claimed_until = now + LEASE
                session.add(row)
    with session_scope(engine, writes=False) as session:
        hook = session.get(Webhook, webhook_id)
        if hook is None:  # deleted meanwhile, with its deliveries
            return []
        # The batch's events in one read (built one by one, 20 of them held the first
        # delivery of a batch for ~100 queries: the p95 lag on a loaded machine).
        found = events.events_by_id(session, [event_id for _delivery, event_id in leased])
        return [
            _job(session, delivery_id, found[event_id], hook) for delivery_id, event_id in leased
        ]


def _withhold(session: Session, webhook_id: int, reason: str) -> None:
    session.execute(
        update(WebhookDelivery)
        .where(
            col(WebhookDelivery.webhook_id) == webhook_id,
            col(WebhookDelivery.status) == "pending",
        )
        .values(status="failed", claimed_until=None, last_error=f"Not sent: {reason}"[:500])
    )


def _is_open(row: WebhookDelivery, now: datetime) -> bool:
    return row.claimed_until is None or as_utc(row.claimed_until) < now


def _job(session: Session, delivery_id: int, event: events.FeedEvent, hook: Webhook) -> Claimed:
    event_id = event.id
    fmt = webhooks.format_of(hook)
    return Claimed(
        delivery_id=delivery_id,
        webhook_id=int(hook.id or 0),
        event_id=event_id,
        url=hook.url,
        secret=hook.secret,
        body=body_for(hook.url, event, embed=story_embed(session, hook.url, event, fmt), fmt=fmt),
    )


def story_embed(
    session: Session, url: str, event: events.FeedEvent, fmt: str | None = None
) -> dict[str, Any] | None:
    discord = fmt == "discord" if fmt else is_discord(url)
    if not discord or event.kind not in stories.STORY_EVENTS or not event.battle_id:
        return None
    campaign = session.get(Campaign, event.campaign_id)
    embed = stories.discord_embed(
        session,
        battle_id=event.battle_id,
        site=get_settings().public_url.rstrip("/"),
        public=bool(campaign and campaign.public),
    )
    # The title and the narrative are the players' own text: shown as typed.
    for key, limit in (("title", 256), ("description", 4096)):
        if key in embed:
            embed[key] = discord_text(embed[key], limit)
    return embed


def body_for(
    url: str,
    event: events.FeedEvent,
    embed: dict[str, Any] | None = None,
    *,
    fmt: str | None = None,
) -> bytes:
    """The event as JSON (the feed's item); a webhook in Discord's format (``fmt``, or by
    the URL when not given) gets Discord's message, with a card (an embed) for a story."""
    if fmt == "discord" if fmt else is_discord(url):
        message: dict[str, Any] = {
            "content": discord_text(event.summary, 2000),
            "username": "Crusade tracker",
            # Names and titles are typed by players: "@everyone" in a force's name must
            # not ping a whole server. Discord then notifies nobody, whatever the text says.
            "allowed_mentions": {"parse": []},
        }
        if embed:
            message["embeds"] = [embed]
        return json.dumps(message).encode()
    # Exactly the feed's item (same keys, nulls included, same time format): one renderer.
    return feed_items.feed_item(event).model_dump_json().encode()


# Discord's markdown: emphasis, strike-through, code, spoilers, masked links ``[text](url)``,
# ``<...>`` mentions and links, ``@`` mentions anywhere; headings, quotes and lists at the
# start of a line. A backslash before any of them shows the character as typed.
_DISCORD_INLINE = re.compile(r"([\\*_~`|\[\]<@])")
_DISCORD_LINE_START = re.compile(r"^(\s*)([#>+-]|\d+(?=\.))", re.MULTILINE)
# Discord turns a bare ``scheme://...`` into a link (and unfurls it); an escaped colon keeps
# it text (issue 45).
_DISCORD_BARE_URL = re.compile(r"([a-z][a-z0-9+.\-]*):(?=//)", re.IGNORECASE)


def discord_text(text: str, limit: int) -> str:
    """``text`` shown as typed in a Discord message (no markdown, no masked link, no
    mention), cut to ``limit`` characters without leaving half an escape."""
    escaped = _DISCORD_LINE_START.sub(_escape_line_start, _DISCORD_INLINE.sub(r"\\\1", text))
    escaped = _DISCORD_BARE_URL.sub(r"\1\\:", escaped)
    if len(escaped) <= limit:
        return escaped
    cut = escaped[: limit - 1]
    if (len(cut) - len(cut.rstrip("\\"))) % 2:  # an odd run of backslashes: half an escape
        cut = cut[:-1]
    return cut + "…"


def _escape_line_start(match: re.Match[str]) -> str:
    mark = match.group(2)
    return match.group(1) + (mark + "\\" if mark[0].isdigit() else "\\" + mark)


is_discord = webhooks.is_discord


def signature(secret: str, body: bytes) -> str:
    """``sha256=`` and the hex HMAC-SHA256 of the body with the webhook's secret."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect could lead a delivery to an address the URL check would refuse."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class _Pinned:
    """Connects to the address the URL check approved, not to what DNS says a moment
    later (DNS rebinding); the Host header (and the TLS certificate check) still name the
    URL's host."""

    def __init__(self, *args: Any, address: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.address = address

    def _socket(self) -> socket.socket:
        return socket.create_connection((self.address, self.port), self.timeout)  # type: ignore[attr-defined]


class _PinnedHTTP(_Pinned, http.client.HTTPConnection):
    def connect(self) -> None:
        self.sock = self._socket()


class _PinnedHTTPS(_Pinned, http.client.HTTPSConnection):
    def connect(self) -> None:
        self.sock = self._context.wrap_socket(self._socket(), server_hostname=self.host)  # type: ignore[attr-defined]


class _PinnedHandler(urllib.request.HTTPHandler, urllib.request.HTTPSHandler):
    def __init__(self, address: str) -> None:
        urllib.request.HTTPHandler.__init__(self)
        urllib.request.HTTPSHandler.__init__(self)
        self.address = address

    def http_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(functools.partial(_PinnedHTTP, address=self.address), req)

    def https_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(
            functools.partial(_PinnedHTTPS, address=self.address),
            req,
            context=self._context,  # type: ignore[attr-defined]
        )


_OPENER = urllib.request.build_opener(_NoRedirects)


def _opener(address: str | None) -> urllib.request.OpenerDirector:
    """The plain opener when private addresses are allowed, else one pinned to ``address``."""
    if address is None:
        return _OPENER
    return urllib.request.build_opener(_NoRedirects, _PinnedHandler(address))


def post(job: Claimed) -> Outcome:
    """POST one delivery, bounded by TIMEOUT_SECONDS; never raises."""
    try:
        # Again at sending time (DNS may have changed since), and the connection goes to the
        # address checked here, so a rebinding between the check and the send cannot happen.
        address = webhooks.check_url(job.url)
    except DomainError as refused:
        return Outcome(None, refused.message)
    request = urllib.request.Request(
        job.url,
        data=job.body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "X-Crusade-Signature": signature(job.secret, job.body),
            "X-Crusade-Event-Id": str(job.event_id),
            "X-Crusade-Delivery": str(job.delivery_id),
            "X-Crusade-Timestamp": str(int(utcnow().timestamp())),
        },
    )
    try:
        with _opener(address).open(request, timeout=TIMEOUT_SECONDS) as answer:
            return Outcome(answer.status, "")
    except urllib.error.HTTPError as refused:
        return Outcome(refused.code, f"HTTP {refused.code}")
    except (OSError, ValueError) as failed:  # refused, timed out, unreachable, bad URL
        return Outcome(None, str(failed)[:500] or type(failed).__name__)


def finish(engine: Engine, job: Claimed, outcome: Outcome, *, now: datetime) -> None:
    """Record one attempt (see ``finish_all``)."""
    finish_all(engine, [(job, outcome, now)])


def finish_all(
    engine: Engine,
    attempts: list[tuple[Claimed, Outcome, datetime]],
    *,
    release: Sequence[Claimed] = (),
) -> None:
    """Record attempts, in one transaction: each delivered, due again after a back-off, or
    given up after a day; and give back the leases of ``release`` (not tried)."""
    if not attempts and not release:
        return
    with session_scope(engine) as session:
        for job, outcome, now in attempts:
            row = session.get(WebhookDelivery, job.delivery_id, with_for_update=True)
            if row is None:  # the webhook was deleted meanwhile
                continue
            row.attempts += 1
            row.claimed_until = None
            row.last_status_code = outcome.status_code
            row.last_error = outcome.error[:500]
            if outcome.delivered:
                row.status, row.delivered_at = "delivered", now
            elif now - as_utc(row.created_at) >= GIVE_UP_AFTER:
                row.status = "failed"
            else:
                row.next_attempt_at = now + backoff(row.attempts)
            session.add(row)
        for job in release:
            untried = session.get(WebhookDelivery, job.delivery_id)
            if untried is not None:
                untried.claimed_until = None
                session.add(untried)


def backoff(attempts: int) -> timedelta:
    """30 s after the first failure, doubling, at most an hour between tries."""
    wait: timedelta = FIRST_RETRY * 2 ** min(attempts - 1, 16)  # 2**16 * 30 s is past a day
    return min(wait, LONGEST_WAIT)
