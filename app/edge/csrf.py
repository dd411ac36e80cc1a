"""CSRF: a change authenticated by the session cookie (a page's form, or a script on the
site calling the API) must carry a token tied to that session, which another site can
neither read nor forge. Bearer-token calls carry no ambient credential and need none."""

from __future__ import annotations

import hashlib
import hmac

from fastapi import Request

from app.errors import DomainError

CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


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
