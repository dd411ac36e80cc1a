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
import socket
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import Engine, or_
from sqlmodel import Session, col, select

from app.config import get_settings
from app.db.models import Campaign, Webhook, WebhookDelivery, as_utc, utcnow
from app.db.session import session_scope
from app.errors import DomainError
from app.faults import database_fault
from app.services import events, stories, webhooks

log = logging.getLogger("crusade.webhooks")

TIMEOUT_SECONDS = 5.0
BATCH = 20
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
    """Send every delivery that is due now; the number sent successfully."""
    sent = 0
    while True:
        claimed = claim(engine, now=now or utcnow())
        for job in claimed:
            outcome = post(job)
            finish(engine, job, outcome, now=now or utcnow())
            sent += outcome.delivered
        if len(claimed) < BATCH:
            return sent


def run_forever(engine: Engine, stop: threading.Event, *, idle_seconds: float = 1.0) -> None:
    """The worker loop: send what is due, then wait a little (or until ``stop``)."""
    while not stop.is_set():
        try:
            run_once(engine)
        except Exception as error:  # a database hiccup must not end the worker; log, go on
            if database_fault(error) is None:  # the database down: logged once per outage
                log.exception("webhook worker: a round failed; retrying")
        stop.wait(idle_seconds)


def start_in_background(engine: Engine) -> threading.Event:
    """A daemon thread running the worker (``crusade serve``); set the event to stop it."""
    stop = threading.Event()
    thread = threading.Thread(
        target=run_forever, args=(engine, stop), name="webhook-worker", daemon=True
    )
    thread.start()
    return stop


def _due(now: datetime) -> Any:
    return (
        select(WebhookDelivery)
        .where(
            WebhookDelivery.status == "pending",
            col(WebhookDelivery.next_attempt_at) <= now,
            or_(
                col(WebhookDelivery.claimed_until).is_(None),
                col(WebhookDelivery.claimed_until) < now,
            ),
        )
        .order_by(col(WebhookDelivery.next_attempt_at), col(WebhookDelivery.id))
    )


def claim(engine: Engine, *, now: datetime) -> list[Claimed]:
    """Lease up to BATCH due deliveries and build their bodies, in one short transaction.
    An idle worker only reads (SQLite's one write lock is taken when there is work)."""
    with session_scope(engine, writes=False) as session:
        if session.exec(_due(now).limit(1)).first() is None:
            return []
    with session_scope(engine) as session:
        rows = session.exec(_due(now).limit(BATCH).with_for_update(skip_locked=True)).all()
        claimed = []
        for row in rows:
            row.claimed_until = now + LEASE
            session.add(row)
            claimed.append(_job(session, row))
        return claimed


def _job(session: Session, row: WebhookDelivery) -> Claimed:
    hook = session.get(Webhook, row.webhook_id)
    assert hook is not None and row.id is not None
    event = events.one_event(session, row.event_id)
    return Claimed(
        delivery_id=row.id,
        event_id=row.event_id,
        url=hook.url,
        secret=hook.secret,
        body=body_for(hook.url, event, embed=story_embed(session, hook.url, event)),
    )


def story_embed(session: Session, url: str, event: events.FeedEvent) -> dict[str, Any] | None:
    if not is_discord(url) or event.kind not in stories.STORY_EVENTS or not event.battle_id:
        return None
    campaign = session.get(Campaign, event.campaign_id)
    return stories.discord_embed(
        session,
        battle_id=event.battle_id,
        site=get_settings().public_url.rstrip("/"),
        public=bool(campaign and campaign.public),
    )


def body_for(url: str, event: events.FeedEvent, embed: dict[str, Any] | None = None) -> bytes:
    """The event as JSON (as the feed gives it); a Discord webhook gets Discord's format,
    with a card (an embed) for a battle's story."""
    if is_discord(url):
        message: dict[str, Any] = {"content": event.summary[:2000], "username": "Crusade tracker"}
        if embed:
            message["embeds"] = [embed]
        return json.dumps(message).encode()
    return json.dumps(events.as_json(event), separators=(",", ":")).encode()


def is_discord(url: str) -> bool:
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    discord = host in ("discord.com", "discordapp.com") or host.endswith(".discord.com")
    return discord and parts.path.startswith("/api/webhooks/")


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
    """Record the attempt: delivered, due again after a backoff, or given up after a day."""
    with session_scope(engine) as session:
        row = session.get(WebhookDelivery, job.delivery_id, with_for_update=True)
        if row is None:  # the webhook was deleted meanwhile
            return
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


def backoff(attempts: int) -> timedelta:
    """30 s after the first failure, doubling, at most an hour between tries."""
    wait: timedelta = FIRST_RETRY * 2 ** min(attempts - 1, 16)  # 2**16 * 30 s is past a day
    return min(wait, LONGEST_WAIT)
