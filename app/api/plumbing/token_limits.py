"""Rate limits for API tokens (issue 34): each token may make API_TOKEN_REQUESTS_PER_MINUTE
requests in any minute (a moving window), counted in the rate-limit store: Redis where
configured, this process's own counters while it is unreachable (app/edge/hardening.py).

Every answer to a request with a Bearer token carries ``RateLimit-Limit`` (requests a
minute), ``RateLimit-Remaining`` (left in the window now) and ``RateLimit-Reset`` (seconds
until the oldest request in the window leaves it). Past the limit: ``429 rate_limited`` with
``Retry-After``, answered before the request queues for the database or looks the token up.
A website visitor (cookie) is not limited here.

A long poll of the event feed (``GET .../events?wait=N``, N > 0) that waits, or that finds
only what was committed just before it came, is free (issue 46): a follower asking again at
once at several events a second would otherwise spend the whole budget on polls. Such a
request is refused up front only if the budget is already spent; the feed route then says
whether it is free or counts (a backlog read, like any read: ``LongPoll``). One the route
never reached (refused, invalid) counts."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from urllib.parse import parse_qsl

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.edge.limits import RateLimits, Window
from app.errors import DomainError, problem

# The feed route, as the client sends it (the middleware runs before routing).
_FEED = re.compile(r"/api/v1/campaigns/[^/]+/events")
_LONG_POLL = "crusade.long_poll"  # the scope's key for the request's LongPoll


class TokenLimitMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        token = _bearer(scope) if scope["type"] == "http" else None
        if token is None:
            await self.app(scope, receive, send)
            return
        limits: RateLimits = scope["app"].state.rate_limits
        key = hashlib.sha256(token.encode()).hexdigest()[:32]  # never the token itself
        poll = LongPoll(limits, key) if _is_long_poll(scope) else None
        if poll is not None:  # counted by the route, unless it waits: only looked at here
            window = await _ask(limits, limits.token_window, key)
            scope[_LONG_POLL] = poll
        else:
            window = await _ask(limits, limits.token_request, key)
        if not window.allowed:
            response = problem(429, "rate_limited", _refusal(window))
            response.headers["Retry-After"] = str(max(1, window.reset))
            response.raw_headers.extend(_headers(window))
            await response(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = _headers(window if poll is None else await poll.settle())
                message = {**message, "headers": [*message.get("headers", []), *headers]}
            await send(message)

        await self.app(scope, receive, with_headers)


class LongPoll:
    """A long poll's place in its token's budget: ``free()`` when it waited or kept up,
    ``count()`` when it reads a backlog (a 429 if that was one too many); neither (an error
    before the route decided): counted as it answers."""

    def __init__(self, limits: RateLimits, key: str) -> None:
        self.limits = limits
        self.key = key
        self.window: Window | None = None
        self.free_of_charge = False

    def free(self) -> None:
        self.free_of_charge = True

    async def count(self) -> None:
        if self.window is not None or self.free_of_charge:
            return
        self.window = await _ask(self.limits, self.limits.token_request, self.key)
        if not self.window.allowed:
            raise DomainError(
                "rate_limited",
                _refusal(self.window),
                status=429,
                retry_after=max(1, self.window.reset),
            )

    async def settle(self) -> Window:
        """The window for the answer's RateLimit-* headers, counting this poll if the route
        did not decide."""
        if self.free_of_charge:
            return await _ask(self.limits, self.limits.token_window, self.key)
        if self.window is None:
            self.window = await _ask(self.limits, self.limits.token_request, self.key)
        return self.window


def long_poll(scope: Scope) -> LongPoll | None:
    """The request's LongPoll (None: no token, or not a long poll)."""
    poll = scope.get(_LONG_POLL)
    return poll if isinstance(poll, LongPoll) else None


async def _ask(limits: RateLimits, call: Callable[[str], Window], key: str) -> Window:
    if limits.shared:  # a network round trip: off the event loop
        return await run_in_threadpool(call, key)
    return call(key)


def _refusal(window: Window) -> str:
    return (
        f"This API token made {window.limit} requests in the last minute, its limit; "
        f"try again in {window.reset} s."
    )


def _is_long_poll(scope: Scope) -> bool:
    if scope.get("method") != "GET" or not _FEED.fullmatch(scope.get("path", "")):
        return False
    query = scope.get("query_string", b"").decode("latin-1")
    waits = [value for name, value in parse_qsl(query) if name == "wait"]
    return len(waits) == 1 and waits[0].isascii() and waits[0].isdigit() and int(waits[0]) > 0


def _bearer(scope: Scope) -> str | None:
    scheme, _, token = Headers(scope=scope).get("authorization", "").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def _headers(window: Window) -> list[tuple[bytes, bytes]]:
    return [
        (b"ratelimit-limit", str(window.limit).encode()),
        (b"ratelimit-remaining", str(window.remaining).encode()),
        (b"ratelimit-reset", str(window.reset).encode()),
    ]
