"""Rate limits for API tokens (issue 34): each token may make API_TOKEN_REQUESTS_PER_MINUTE
requests in any minute (a moving window), counted in the rate-limit store: Redis where
configured, this process's own counters while it is unreachable (app/edge/hardening.py).

Every answer to a request with a Bearer token carries ``RateLimit-Limit`` (requests a
minute), ``RateLimit-Remaining`` (left in the window now) and ``RateLimit-Reset`` (seconds
until the oldest request in the window leaves it). Past the limit: ``429 rate_limited`` with
``Retry-After``, answered before the request queues for the database or looks the token up.
A website visitor (cookie) is not limited here."""

from __future__ import annotations

import hashlib

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.edge.limits import RateLimits, Window
from app.errors import problem


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
        if limits.shared:  # a network round trip: off the event loop
            window = await run_in_threadpool(limits.token_request, key)
        else:
            window = limits.token_request(key)
        headers = _headers(window)
        if not window.allowed:
            response = problem(
                429,
                "rate_limited",
                f"This API token made {window.limit} requests in the last minute, its limit; "
                f"try again in {window.reset} s.",
            )
            response.headers["Retry-After"] = str(max(1, window.reset))
            response.raw_headers.extend(headers)
            await response(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *headers]}
            await send(message)

        await self.app(scope, receive, with_headers)


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
