"""Who is calling: the session cookie or a Bearer token, resolved once per request (the
access check and the route share it), and the session cookie set and ended. The JSON API
and the website both use it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Annotated

from fastapi import BackgroundTasks, Depends, Request, Response
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from app.config import get_settings, secret_key
from app.db.models import User, utcnow
from app.db.session import SessionDep, session_scope
from app.errors import DomainError
from app.services.accounts import accounts
from app.services.accounts.accounts import Principal

COOKIE = "crusade_session"
log = logging.getLogger(__name__)


def resolve_principal(
    request: Request, session: Session, background: BackgroundTasks
) -> Principal | None:
    """The caller, if any. A Bearer token wins over the cookie; a bad token is an error,
    never a silent fall back to anonymous. Remembered on the request, so the access check
    and the route resolve it once, in the access check's thread (issue 41)."""
    principal = caller(request, session, background)
    request.state.principal = principal
    return principal


def caller(request: Request, session: Session, background: BackgroundTasks) -> Principal | None:
    """The caller by the request's token or cookie, read in ``session``."""
    header = request.headers.get("authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        found = accounts.principal_from_token(session, token.strip())
        if scheme.lower() != "bearer" or found is None:
            raise DomainError("token_invalid", "The API token is unknown or revoked.", status=401)
        assert found.token is not None and found.token.id is not None
        stale = accounts.token_use_is_stale(found.token, utcnow())
        if stale and request.app.state.token_uses.plan(found.token.id):
            background.add_task(_record_token_use, request, found.token.id)
        return found
    cookie = request.cookies.get(COOKIE)
    if not cookie:
        return None
    settings = get_settings()
    user = accounts.user_from_cookie(
        session, cookie, secret_key(settings), settings.session_days * 86_400
    )
    return Principal(user) if user else None


async def optional_principal(
    request: Request, session: SessionDep, background: BackgroundTasks
) -> Principal | None:
    """The caller the access check already resolved (no thread hand-off), else resolved
    now."""
    if hasattr(request.state, "principal"):
        resolved: Principal | None = request.state.principal
        return resolved
    return await run_in_threadpool(resolve_principal, request, session, background)


class TokenUses:
    """The tokens whose use this app is about to record (token id -> when it was planned):
    the requests that see the same stale time meanwhile plan nothing more. Without it, 1,000
    long polls of 50 tokens each left a write to run when they were answered together (issue
    50). A plan whose request never ran it (an error answered first) is forgotten after a
    while. One per app (``app.state.token_uses``): a token id means something only in the
    database that app serves."""

    FORGET_AFTER_SECONDS = 60.0

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._planned: dict[int, float] = {}
        self._lock = threading.Lock()
        self._clock = clock

    def plan(self, token_id: int) -> bool:
        """True when this request is to record the use (none is planned already)."""
        now = self._clock()
        with self._lock:
            planned = self._planned.get(token_id)
            if planned is not None and now - planned < self.FORGET_AFTER_SECONDS:
                return False
            self._planned[token_id] = now
            return True

    def done(self, token_id: int) -> None:
        with self._lock:
            self._planned.pop(token_id, None)


def _record_token_use(request: Request, token_id: int) -> None:
    """After the response is sent, in a transaction of its own: a read never writes, and a
    busy database delays only this bookkeeping, never the caller. Failing here loses one
    'last used' time, which is all it is."""
    try:
        with session_scope(request.app.state.engine) as session:
            accounts.record_token_use(session, token_id, utcnow())
    except Exception:  # bookkeeping must never raise into the server
        log.warning("could not record the use of API token %s", token_id, exc_info=True)
    finally:
        request.app.state.token_uses.done(token_id)


def required_principal(
    principal: Annotated[Principal | None, Depends(optional_principal)],
) -> Principal:
    if principal is None:
        raise DomainError("not_authenticated", "Log in or send an API token.", status=401)
    return principal


OptionalPrincipal = Annotated[Principal | None, Depends(optional_principal)]
CurrentPrincipal = Annotated[Principal, Depends(required_principal)]


def start_session(request: Request, response: Response, session: SessionDep, user: User) -> None:
    settings = get_settings()
    response.set_cookie(
        COOKIE,
        accounts.start_session(session, user, secret_key(settings), settings.session_days),
        max_age=settings.session_days * 86_400,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )


def end_session(request: Request, session: SessionDep) -> None:
    cookie = request.cookies.get(COOKIE)
    if cookie:
        accounts.end_session(session, cookie, secret_key(get_settings()))
