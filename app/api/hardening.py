"""Protections every response and request gets: security headers, a body size limit, CSRF
checks for cookie-authenticated writes, and rate limits for login and token creation."""

from __future__ import annotations

import hashlib
import hmac
import math
import time

from fastapi import Request
from limits import RateLimitItemPerMinute, storage, strategies
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import DomainError, problem

SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]
MAX_BODY = 256 * 1024
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class HardeningMiddleware:
    """Adds the security headers and refuses bodies over MAX_BODY (413, as problem+json)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > MAX_BODY:
            await _too_large()(scope, receive, _with_headers(send))
            return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > MAX_BODY:
                raise DomainError(
                    "request_too_large",
                    f"Request bodies are limited to {MAX_BODY} bytes.",
                    status=413,
                )
            return message

        await self.app(scope, limited_receive, _with_headers(send))


def _too_large() -> JSONResponse:
    return problem(413, "request_too_large", f"Request bodies are limited to {MAX_BODY} bytes.")


def _with_headers(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            present = {name.lower() for name, _ in message.get("headers", [])}
            extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
            message = {**message, "headers": [*message.get("headers", []), *extra]}
        await send(message)

    return wrapped


# --- CSRF -----------------------------------------------------------------------------


def csrf_token(session_cookie: str, key: str) -> str:
    """Tied to the session: a page gets it from GET /auth/csrf and sends it back in the
    X-CSRF-Token header; another site can neither read it nor forge it."""
    return hmac.new(key.encode(), b"csrf:" + session_cookie.encode(), hashlib.sha256).hexdigest()


def check_csrf(request: Request, session_cookie: str | None, key: str) -> None:
    """Writes authenticated by the session cookie must carry the matching CSRF token.
    Bearer-token calls carry no ambient credential and need none."""
    if request.method in SAFE_METHODS or not session_cookie:
        return
    if request.headers.get("authorization"):
        return
    sent = request.headers.get(CSRF_HEADER, "")
    if not hmac.compare_digest(sent, csrf_token(session_cookie, key)):
        raise DomainError(
            "csrf_token_invalid",
            "This change needs the X-CSRF-Token header from GET /api/v1/auth/csrf.",
            status=403,
        )


# --- rate limits ------------------------------------------------------------------------


class RateLimits:
    """Moving-window limits (the `limits` package; memory by default, Redis via a URI)."""

    def __init__(self, uri: str = "memory://") -> None:
        self._limiter = strategies.MovingWindowRateLimiter(storage.storage_from_string(uri))
        self.login = RateLimitItemPerMinute(10)
        self.token = RateLimitItemPerMinute(10)

    def hit(self, item: RateLimitItemPerMinute, *keys: str) -> None:
        if self._limiter.hit(item, *keys):
            return
        reset = self._limiter.get_window_stats(item, *keys).reset_time
        wait = max(1, math.ceil(reset - time.time()))
        raise DomainError(
            "rate_limited",
            f"Too many attempts; try again in {wait} s.",
            status=429,
        )
