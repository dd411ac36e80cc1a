"""The account routes: sign up, log in and out, password, PIN, API tokens. Who is calling
(session cookie or Bearer token) is app/edge/sessions.py, shared with the website."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Request, Response, status
from pydantic import BaseModel, Field, StrictBool, StringConstraints

from app.api.plumbing.paging import Cursor, KeysetPage, Limit, page_of
from app.config import get_settings, secret_key
from app.db.models import ApiToken, User
from app.db.session import SessionDep
from app.edge.csrf import csrf_token
from app.edge.limits import RateLimits
from app.edge.schemas.common import Input
from app.edge.sessions import COOKIE, CurrentPrincipal, end_session, start_session
from app.routing import OneHopRoute
from app.services.accounts import accounts

router = APIRouter(prefix="/auth", tags=["accounts"], route_class=OneHopRoute)


Username = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=40)]
Password = Annotated[str, StringConstraints(min_length=1, max_length=200)]


# What the server checks (app/services/accounts/accounts.py USERNAME, after lower-casing),
# said in the schema so that a generated client checks it too.
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
