"""Who is calling (session cookie or Bearer token), and the account routes."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, BackgroundTasks, Depends, Path, Request, Response, status
from pydantic import BaseModel, Field, StrictBool, StringConstraints
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from app.api.plumbing.paging import Cursor, KeysetPage, Limit, page_of
from app.config import get_settings, secret_key
from app.db.models import ApiToken, User, utcnow
from app.db.session import SessionDep, session_scope
from app.edge.hardening import RateLimits, csrf_token
from app.edge.schemas import Input
from app.errors import DomainError
from app.routing import OneHopRoute
from app.services.accounts import accounts
from app.services.accounts.accounts import Principal

COOKIE = "crusade_session"
router = APIRouter(prefix="/auth", tags=["accounts"], route_class=OneHopRoute)
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
        if accounts.token_use_is_stale(found.token, utcnow()):
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


def _record_token_use(request: Request, token_id: int) -> None:
    """After the response is sent, in a transaction of its own: a read never writes, and a
    busy database delays only this bookkeeping, never the caller. Failing here loses one
    'last used' time, which is all it is."""
    try:
        with session_scope(request.app.state.engine) as session:
            accounts.record_token_use(session, token_id, utcnow())
    except Exception:  # bookkeeping must never raise into the server
        log.warning("could not record the use of API token %s", token_id, exc_info=True)


def required_principal(
    principal: Annotated[Principal | None, Depends(optional_principal)],
) -> Principal:
    if principal is None:
        raise DomainError("not_authenticated", "Log in or send an API token.", status=401)
    return principal


OptionalPrincipal = Annotated[Principal | None, Depends(optional_principal)]
CurrentPrincipal = Annotated[Principal, Depends(required_principal)]

Username = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40)]
Password = Annotated[str, StringConstraints(min_length=1, max_length=200)]


# What the server checks (app/services/accounts/accounts.py USERNAME, after lower-casing), said in
# the
# schema so that a generated client checks it too.
NewUsername = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=40),
    Field(
        description="3 to 40 letters, digits, '.', '_' or '-', starting with a letter or "
        "digit; kept in lower case",
        json_schema_extra={"pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{2,39}$", "minLength": 3},
    ),
]


class SignUp(Input):
    username: NewUsername
    password: Password
    display_name: Annotated[str, StringConstraints(max_length=80)] = ""


class LogIn(Input):
    username: Username
    password: Password


class PasswordChange(Input):
    current_password: Password
    new_password: Password


class PasswordReset(Input):
    token: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    new_password: Password


class PinChange(Input):
    current_password: Password
    pin: Annotated[str, StringConstraints(max_length=20)] | None = Field(
        default=None,
        description="4 to 8 digits; null or absent clears the PIN",
        examples=["4827"],
    )


class UserPublic(BaseModel):
    id: int
    username: str
    display_name: str
    is_admin: bool
    has_pin: bool = Field(
        default=False,
        description="Whether a PIN is set for confirming results at the table (never shown)",
    )


class TokenCreate(Input):
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)]
    can_write: StrictBool = False
    campaign_id: Annotated[int, Field(ge=1, lt=2**31)] | None = Field(
        default=None, description="Limit the token to one campaign"
    )


class TokenPublic(BaseModel):
    id: int
    name: str
    prefix: str
    can_write: bool
    campaign_id: int | None
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class TokenCreated(TokenPublic):
    token: str = Field(description="Shown once: store it now")


def _user(user: User) -> UserPublic:
    assert user.id is not None
    return UserPublic(
        id=user.id,
        username=user.username,
        display_name=user.display_name,
        is_admin=user.is_admin,
        has_pin=bool(user.pin_hash),
    )


def _token(row: ApiToken) -> TokenPublic:
    return TokenPublic.model_validate(row, from_attributes=True)


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


@router.post("/signup", status_code=status.HTTP_201_CREATED, summary="Create an account")
def sign_up(body: SignUp, request: Request, response: Response, session: SessionDep) -> UserPublic:
    user = accounts.create_user(session, **body.model_dump())
    start_session(request, response, session, user)
    return _user(user)


@router.post("/login", summary="Log in (sets the session cookie); 10 tries a minute")
def log_in(body: LogIn, request: Request, response: Response, session: SessionDep) -> UserPublic:
    limits: RateLimits = request.app.state.rate_limits
    client = request.client.host if request.client else "?"
    limits.hit(limits.login, "login", client, body.username.lower())
    user = accounts.authenticate(session, **body.model_dump())
    start_session(request, response, session, user)
    return _user(user)


@router.post(
    "/logout",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Log out (ends the session on the server too)",
)
def log_out(request: Request, response: Response, session: SessionDep) -> None:
    end_session(request, session)
    response.delete_cookie(COOKIE)


def end_session(request: Request, session: SessionDep) -> None:
    cookie = request.cookies.get(COOKIE)
    if cookie:
        accounts.end_session(session, cookie, secret_key(get_settings()))


@router.get(
    "/csrf", summary="The CSRF token to send as X-CSRF-Token with cookie-authenticated changes"
)
def csrf(request: Request, principal: CurrentPrincipal) -> dict[str, str]:
    cookie = request.cookies.get(COOKIE, "")
    return {"csrf_token": csrf_token(cookie, secret_key(get_settings())) if cookie else ""}


@router.get("/me", summary="The account making the request")
def me(principal: CurrentPrincipal) -> UserPublic:
    return _user(principal.user)


@router.post("/password", summary="Change password (ends every other session)")
def change_password(
    body: PasswordChange,
    principal: CurrentPrincipal,
    request: Request,
    response: Response,
    session: SessionDep,
) -> UserPublic:
    user = accounts.change_password(
        session, user=principal.user, current=body.current_password, new=body.new_password
    )
    start_session(request, response, session, user)
    return _user(user)


@router.post(
    "/pin",
    summary="Set or clear the PIN that confirms a result on the recorder's phone (takes the "
    "current password); 10 tries a minute",
)
def set_pin(
    body: PinChange, principal: CurrentPrincipal, request: Request, session: SessionDep
) -> UserPublic:
    limits: RateLimits = request.app.state.rate_limits
    limits.hit(limits.login, "pin", str(principal.user.id))
    return _user(
        accounts.set_pin(session, user=principal.user, current=body.current_password, pin=body.pin)
    )


@router.post(
    "/reset-password",
    summary="Set a new password with a one-time reset token (ends every session and revokes "
    "the account's API tokens); 10 tries a minute",
)
def reset_password(body: PasswordReset, request: Request, session: SessionDep) -> UserPublic:
    limits: RateLimits = request.app.state.rate_limits
    limits.hit(limits.login, "reset", request.client.host if request.client else "?")
    key = secret_key(get_settings())
    return _user(accounts.reset_password(session, token=body.token, new=body.new_password, key=key))


@router.get("/tokens", summary="Your API tokens, oldest first (a page by key)")
def list_tokens(
    principal: CurrentPrincipal,
    session: SessionDep,
    request: Request,
    response: Response,
    cursor: Cursor = None,
    limit: Limit = 50,
) -> KeysetPage[TokenPublic]:
    rows = accounts.list_tokens(session, user=principal.user, after=cursor, limit=limit + 1)
    return page_of(request, response, rows, limit, lambda t: t.id, _token)


@router.post("/tokens", status_code=status.HTTP_201_CREATED, summary="Create an API token")
def create_token(
    body: TokenCreate, request: Request, principal: CurrentPrincipal, session: SessionDep
) -> TokenCreated:
    limits: RateLimits = request.app.state.rate_limits
    limits.hit(limits.token, "token", str(principal.user.id))
    row, plain = accounts.create_token(session, user=principal.user, **body.model_dump())
    return TokenCreated(**_token(row).model_dump(), token=plain)


@router.delete("/tokens/{token_id}", summary="Revoke an API token")
def revoke_token(
    token_id: Annotated[int, Path(ge=1, lt=2**31)], principal: CurrentPrincipal, session: SessionDep
) -> TokenPublic:
    return _token(accounts.revoke_token(session, user=principal.user, token_id=token_id))
