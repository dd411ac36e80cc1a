"""CSRF: a change authenticated by the session cookie (a page's form, or a script on the
site calling the API) must carry a token tied to that session, which another site can
neither read nor forge. Bearer-token calls carry no ambient credential and need none.

Pages are sent compressed (issue 49), and a page may reflect what a visitor typed or put in
an address: were the token's bytes the same on every page, the compressed size could give
it away a character at a time (BREACH). So every page gets the token masked afresh
(``masked_csrf_token``): a random pad, then the token XOR-ed with that pad, never the same
bytes twice. ``csrf_matches`` takes the masked form back, or the bare token that
``GET /api/v1/auth/csrf`` gives scripts and bots (a small JSON answer that reflects nothing)."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from fastapi import Request

from app.errors import DomainError

CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
_SIZE = hashlib.sha256().digest_size  # bytes of the token; its masked form is twice that


def csrf_token(session_cookie: str, key: str) -> str:
    """Tied to the session: a page gets it from GET /auth/csrf and sends it back in the
    X-CSRF-Token header; another site can neither read it nor forge it."""
    return _secret(session_cookie, key).hex()


def _secret(session_cookie: str, key: str) -> bytes:
    return hmac.new(key.encode(), b"csrf:" + session_cookie.encode(), hashlib.sha256).digest()


def masked_csrf_token(session_cookie: str, key: str) -> str:
    """The session's token as one response carries it: a fresh random pad followed by the
    token XOR-ed with the pad (hex), so no two responses hold the same bytes."""
    pad = secrets.token_bytes(_SIZE)
    return (pad + _xor(pad, _secret(session_cookie, key))).hex()


def unmask(sent: str) -> str:
    """The bare token (hex) behind a masked one; a bare token as it is; "" for anything
    else."""
    try:
        raw = bytes.fromhex(sent)
    except ValueError:
        return ""
    if len(raw) == _SIZE:
        return sent.lower()
    if len(raw) != 2 * _SIZE:
        return ""
    return _xor(raw[:_SIZE], raw[_SIZE:]).hex()


def csrf_matches(sent: str, session_cookie: str, key: str) -> bool:
    """Whether ``sent`` (masked, or bare) is this session's token."""
    return hmac.compare_digest(unmask(sent), csrf_token(session_cookie, key))


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def check_csrf(request: Request, session_cookie: str | None, key: str) -> None:
    """Writes authenticated by the session cookie must carry the matching CSRF token.
    Bearer-token calls carry no ambient credential and need none."""
    if request.method in SAFE_METHODS or not session_cookie:
        return
    if request.headers.get("authorization"):
        return
    sent = request.headers.get(CSRF_HEADER, "")
    if not csrf_matches(sent, session_cookie, key):
        raise DomainError(
            "csrf_token_invalid",
            "This change needs the X-CSRF-Token header from GET /api/v1/auth/csrf.",
            status=403,
        )
