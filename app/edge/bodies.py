"""Request bodies as HardeningMiddleware reads them (issue 45): how large one may be, how many
body bytes the process holds at once, and how slowly one may come.

- Every body is held to ``BodyLimits.small`` (256 KiB), except an upload that an allowance
  (below) grants more: a photo posted as multipart to a battle's photo route, or a roster to
  a force's roster route, by a caller the route's own access rule lets in (session or API
  token). That is decided from the request's headers, before a byte of the body is read; an
  anonymous caller, a stranger to the campaign or a JSON body to the photo route keeps the
  small limit (413 past it).
- The bodies being read, and held until their request ends, share a process-wide budget
  (``BODY_BYTES_IN_FLIGHT_MB``); a body that would go past it is answered 503 + Retry-After
  before it is read. Bodies past the small limit may fill three quarters of it, so that log-ins
  and forms still get in while uploads take theirs, and one account's uploads half of that,
  so that one member sending many at once leaves room for the others.
- After a grace of ``BODY_RATE_SECONDS``, each further such span must bring at least
  ``BODY_MIN_BYTES_PER_SECOND`` a second; a body trickled slower is cut with 408.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass

import anyio
from fastapi import BackgroundTasks, Request
from python_multipart.multipart import parse_options_header
from starlette.concurrency import run_in_threadpool
from starlette.types import Message, Receive, Scope

from app.config import Settings
from app.db.session import session_scope
from app.edge.sessions import COOKIE, caller
from app.errors import DomainError
from app.services.accounts.access import Access, authorize

MAX_BODY = 256 * 1024
# A photo upload (issue 23): a phone's photos and the form around them (the website sends
# several in one form); app/services/campaigns/photos.py refuses a photo over its own limit.
MAX_PHOTO_BODY = 48 * 1024 * 1024
PHOTO_UPLOAD = re.compile(r"^(?:/api/v1)?/battles/(?P<battle_id>[0-9]{1,10})/photos$")
# A roster upload (issue 39): room for the largest .ros the reader takes (4 MB, MAX_ROSTER_BYTES
# in app/services/rosters/roster_parse.py) and the form around it, or that file carried back
# zipped in base64 by the preview page.
MAX_ROSTER_BODY = 6 * 1024 * 1024
ROSTER_UPLOAD = re.compile(r"^(?:/api/v1)?/forces/(?P<force_id>[0-9]{1,10})/roster(?:/preview)?$")
MULTIPART = b"multipart/form-data"
FORM = b"application/x-www-form-urlencoded"
RETRY_AFTER_SECONDS = 2


@dataclass(frozen=True)
class Allowance:
    """A body allowed past the small limit: on ``path``, sent as one of ``media_types``, by
    a caller the route's ``access`` rule lets in (the path's id read into ``param``)."""

    path: re.Pattern[str]
    limit: int
    access: Access
    media_types: tuple[bytes, ...]
    who: str

    def matches(self, scope: Scope, media_type: bytes) -> re.Match[str] | None:
        if scope["method"] != "POST" or media_type not in self.media_types:
            return None
        return self.path.match(scope.get("path", ""))


ALLOWANCES = (
    Allowance(
        PHOTO_UPLOAD, MAX_PHOTO_BODY, Access.BATTLE_PLAY, (MULTIPART,), "a player of the battle"
    ),
    Allowance(ROSTER_UPLOAD, MAX_ROSTER_BODY, Access.FORCE_OWN, (MULTIPART, FORM), "its owner"),
)


@dataclass(frozen=True)
class BodyLimits:
    """The limits the middleware reads from ``app.state.body_limits`` (settings by default;
    a test may set its own)."""

    small: int = MAX_BODY
    in_flight: int = 128 * 1024 * 1024
    min_rate: int = 4096  # bytes a second; 0: no minimum
    rate_seconds: float = 10.0
    json_depth: int = 64

    @classmethod
    def from_settings(cls, settings: Settings) -> BodyLimits:
        return cls(
            in_flight=settings.body_bytes_in_flight_mb * 1024 * 1024,
            min_rate=settings.body_min_bytes_per_second,
            rate_seconds=settings.body_rate_seconds,
            json_depth=settings.json_max_depth,
        )

    @property
    def large_in_flight(self) -> int:
        """What bodies past the small limit may hold together: the rest stays for small ones."""
        return self.in_flight * 3 // 4

    @property
    def one_account(self) -> int:
        """What one account's bodies past the small limit may hold together."""
        return self.large_in_flight // 2


class BodyBudget:
    """Body bytes held by the requests of this process, in all and by account (large bodies
    only: granted to a signed-in caller). Used from the event loop only: no lock."""

    def __init__(self) -> None:
        self.held = 0
        self.by_account: dict[int, int] = {}

    def take(self, size: int, cap: int, account: int | None = None, share: int = 0) -> bool:
        mine = self.by_account.get(account, 0) if account is not None else 0
        if self.held + size > cap or (account is not None and mine + size > share):
            return False
        self.held += size
        if account is not None:
            self.by_account[account] = mine + size
        return True

    def give(self, size: int, account: int | None = None) -> None:
        self.held -= size
        if account is not None:
            left = self.by_account.pop(account, 0) - size
            if left > 0:
                self.by_account[account] = left


class Reservation:
    """One request's share of the budget, grown as its body comes, given back at its end."""

    def __init__(self, budget: BodyBudget, limits: BodyLimits) -> None:
        self.budget = budget
        self.limits = limits
        self.size = 0
        self.account: int | None = None  # whose upload, when an allowance was granted

    def grow_to(self, size: int) -> None:
        if size <= self.size:
            return
        limits = self.limits
        cap = limits.large_in_flight if size > limits.small else limits.in_flight
        if size > cap:
            raise _too_large(cap, ", the most this server takes in at once")
        account, share = self.account, limits.one_account
        if account is not None and size > share:
            raise _too_large(share, ", the most one account's uploads take in at once")
        if not self.budget.take(size - self.size, cap, account, share):
            mine = self.budget.by_account.get(account, 0) if account is not None else 0
            if account is not None and mine + size - self.size > share:
                raise _busy(share, "of one account's uploads")
            raise _busy(cap, "request bodies")
        self.size = size

    def release(self) -> None:
        self.budget.give(self.size, self.account)
        self.size = 0


def _busy(cap: int, what: str) -> DomainError:
    return DomainError(
        "server_busy",
        f"The server is taking in as many {what} as it holds at once ({cap:,} bytes); "
        f"nothing was done. Try again in {RETRY_AFTER_SECONDS} seconds.",
        status=503,
        retry_after=RETRY_AFTER_SECONDS,
    )


async def read_body(
    scope: Scope, receive: Receive, limits: BodyLimits, reservation: Reservation
) -> bytes | None:
    """The whole body (None: the client left before sending it), read here so that no layer
    inside (the idempotency store, a form parser) meets a limit half-way through as an
    exception of its own. Refused (413, 503, 408) as soon as it cannot be taken."""
    headers = dict(scope["headers"])
    declared = headers.get(b"content-length")
    length = int(declared) if declared is not None and declared.isdigit() else None
    limit, reservation.account = await _limit(scope, headers, length, limits)
    if length is not None:
        if length > limit:
            raise _too_large(limit, _what(scope, headers, limit))
        reservation.grow_to(length)  # before a byte is read: refused at once if over
    chunks: list[bytes] = []
    size = 0
    pace = _Pace(limits)
    while True:
        message = await pace.next(receive)
        if message is None:
            continue  # a span went by: checked, and waited for again
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:  # a chunked body declares no length: count it as it comes
            raise _too_large(limit, _what(scope, headers, limit))
        reservation.grow_to(size)
        chunks.append(chunk)
        pace.count(len(chunk))
        if not message.get("more_body", False):
            return b"".join(chunks)


class _Pace:
    """The least rate: none asked in the first ``rate_seconds``; then each span of as many
    seconds must bring ``min_rate × rate_seconds`` bytes, or the body is cut (408)."""

    def __init__(self, limits: BodyLimits) -> None:
        self.limits = limits
        self.due = time.monotonic() + limits.rate_seconds if limits.min_rate > 0 else math.inf
        self.since: int | None = None  # bytes come in this span (None: still the grace)

    def count(self, size: int) -> None:
        if self.since is not None:
            self.since += size

    async def next(self, receive: Receive) -> Message | None:
        """The next message, or None when a span ended first (and was checked)."""
        wait = self.due - time.monotonic()
        if wait > 0:
            message: Message | None = None
            with anyio.move_on_after(wait):
                message = await receive()
            if message is not None or time.monotonic() < self.due:
                return message
        self._span_ended()
        return None

    def _span_ended(self) -> None:
        limits = self.limits
        if self.since is not None and self.since < limits.min_rate * limits.rate_seconds:
            raise DomainError(
                "request_too_slow",
                f"The request body came slower than {limits.min_rate:,} bytes a second "
                f"(over {limits.rate_seconds:g} s); it was cut. Send it again on a faster "
                "connection.",
                status=408,
            )
        self.since = 0
        self.due = time.monotonic() + limits.rate_seconds


def media_type(headers: dict[bytes, bytes]) -> bytes:
    """The media type as Starlette reads it (python-multipart's parser, lower case)."""
    kind, _options = parse_options_header(headers.get(b"content-type"))
    return bytes(kind)


def _allowance(scope: Scope, headers: dict[bytes, bytes]) -> tuple[Allowance, int] | None:
    kind = media_type(headers)
    for allowance in ALLOWANCES:
        found = allowance.matches(scope, kind)
        if found is not None:
            return allowance, int(next(iter(found.groupdict().values())))
    return None


async def _limit(
    scope: Scope, headers: dict[bytes, bytes], length: int | None, limits: BodyLimits
) -> tuple[int, int | None]:
    """The small limit, or an allowance's when its route would let this caller in (and the
    caller's account): decided from the headers alone (one short read of the database in a
    worker thread, and only for a body that may need more than the small limit)."""
    small = (limits.small, None)
    if length is not None and length <= limits.small:
        return small
    found = _allowance(scope, headers)
    if found is None:
        return small
    allowance, target = found
    if b"authorization" not in headers and COOKIE.encode() not in headers.get(b"cookie", b""):
        return small  # anonymous: no database work at all
    account = await run_in_threadpool(_granted, Request(scope), allowance, target)
    return (allowance.limit, account) if account is not None else small


def _granted(request: Request, allowance: Allowance, target: int) -> int | None:
    """The caller's account, if the route's access rule lets it in (the route decides
    again, with the CSRF check, once the body is read); None if it does not."""
    name = next(iter(allowance.path.groupindex))
    with session_scope(request.app.state.engine, writes=False) as session:
        try:
            principal = caller(request, session, BackgroundTasks())
            if principal is None:
                return None
            authorize(
                session,
                access=allowance.access,
                principal=principal,
                params={name: str(target)},
                method="POST",
            )
        except DomainError:
            return None
    return principal.user.id


def _what(scope: Scope, headers: dict[bytes, bytes], limit: int) -> str:
    """What the refusal adds: on an upload route, who may send more."""
    found = _allowance(scope, headers)
    if found is None or found[0].limit <= limit:
        return ""
    allowance = found[0]
    return f"; only {allowance.who}, signed in, may upload up to {allowance.limit:,} bytes here"


def _too_large(limit: int, what: str = "") -> DomainError:
    return DomainError(
        "request_too_large", f"Request bodies are limited to {limit:,} bytes{what}.", status=413
    )
