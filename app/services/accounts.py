"""Accounts, sessions, password resets and API tokens.

Passwords are hashed with argon2 (argon2-cffi). A session is a signed cookie naming the user
and their session version: changing or resetting the password raises the version, which ends
every open session and makes a used reset link worthless. API tokens are random strings
shown once; only their SHA-256 is stored.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from functools import cache
from typing import Any

from argon2 import PasswordHasher, profiles
from argon2.exceptions import InvalidHashError, VerificationError
from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlmodel import Session, col, func, select

from app.config import get_settings
from app.db.models import ApiToken, Campaign, User, utcnow
from app.errors import DomainError, NotFound

USERNAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{2,39}$")
MIN_PASSWORD, MAX_PASSWORD = 8, 200
TOKEN_PREFIX = "crt_"


@cache
def _hasher(kind: str) -> tuple[PasswordHasher, str]:
    """The argon2 hasher and a dummy hash, verified when the username is unknown so a wrong
    name takes as long as a wrong password."""
    hasher = (
        PasswordHasher.from_parameters(profiles.CHEAPEST) if kind == "fast" else PasswordHasher()
    )
    return hasher, hasher.hash("not a real password")


def hasher() -> PasswordHasher:
    return _hasher(get_settings().password_hashing)[0]


@dataclass(frozen=True)
class Principal:
    """Who is calling: a user, through a session cookie or an API token."""

    user: User
    token: ApiToken | None = None

    @property
    def can_write(self) -> bool:
        return self.token is None or self.token.can_write


def _unauthorized(code: str, message: str) -> DomainError:
    return DomainError(code, message, status=401)


def _check_password(password: str, field: str = "password") -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise DomainError(
            "password_length",
            f"A password must be {MIN_PASSWORD} to {MAX_PASSWORD} characters long.",
            status=422,
            field=field,
        )


def create_user(
    session: Session, *, username: str, password: str, display_name: str = "", admin: bool = False
) -> User:
    """A new account; the first account on an empty install is the site admin."""
    name = username.strip().lower()
    if not USERNAME.match(name):
        raise DomainError(
            "username_invalid",
            "A username is 3 to 40 characters: lower-case letters, digits, '.', '_' or '-'.",
            status=422,
            field="username",
        )
    _check_password(password)
    if session.exec(select(User.id).where(User.username == name)).first() is not None:
        raise DomainError(
            "username_taken", f"The username '{name}' is taken.", status=409, field="username"
        )
    first = session.exec(select(func.count()).select_from(User)).one() == 0
    user = User(
        username=name,
        display_name=display_name.strip() or name,
        password_hash=hasher().hash(password),
        is_admin=admin or first,
    )
    session.add(user)
    session.flush()
    return user


def authenticate(session: Session, *, username: str, password: str) -> User:
    user = session.exec(select(User).where(User.username == username.strip().lower())).first()
    try:
        hasher().verify(
            user.password_hash if user else _hasher(get_settings().password_hashing)[1], password
        )
    except (VerificationError, InvalidHashError):
        user = None
    if user is None:
        raise _unauthorized("invalid_credentials", "That username and password do not match.")
    if hasher().check_needs_rehash(user.password_hash):
        user.password_hash = hasher().hash(password)
        session.add(user)
    return user


def change_password(session: Session, *, user: User, current: str, new: str) -> User:
    try:
        hasher().verify(user.password_hash, current)
    except (VerificationError, InvalidHashError):
        raise _unauthorized("invalid_credentials", "The current password is wrong.") from None
    return _set_password(session, user, new)


def _set_password(session: Session, user: User, password: str) -> User:
    _check_password(password, "new_password")
    user.password_hash = hasher().hash(password)
    user.session_version += 1  # ends every other session and old reset links
    session.add(user)
    return user


def get_user(session: Session, username: str) -> User:
    user = session.exec(select(User).where(User.username == username.strip().lower())).first()
    if user is None:
        raise NotFound("user_not_found", f"There is no user '{username}'.")
    return user


# --- signed cookies and links ------------------------------------------------------------


def _serializer(key: str, purpose: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(key, salt=f"crusade-{purpose}")


def session_cookie(user: User, key: str) -> str:
    return str(_serializer(key, "session").dumps({"u": user.id, "v": user.session_version}))


def user_from_cookie(session: Session, cookie: str, key: str, max_age: int) -> User | None:
    data = _load(_serializer(key, "session"), cookie, max_age)
    return _user_at_version(session, data)


def reset_token(user: User, key: str) -> str:
    """A one-time password-reset token (no email: an organizer or the CLI hands it over)."""
    return str(_serializer(key, "reset").dumps({"u": user.id, "v": user.session_version}))


def reset_password(session: Session, *, token: str, new: str, key: str) -> User:
    user = _user_at_version(session, _load(_serializer(key, "reset"), token, 86_400))
    if user is None:
        raise DomainError(
            "reset_link_invalid",
            "This reset link is invalid, expired or already used.",
            status=400,
            field="token",
        )
    return _set_password(session, user, new)


def _load(serializer: URLSafeTimedSerializer, value: str, max_age: int) -> Any:
    try:
        return serializer.loads(value, max_age=max_age)
    except (BadSignature, SignatureExpired):
        return None


def _user_at_version(session: Session, data: Any) -> User | None:
    if not isinstance(data, dict):
        return None
    user = session.get(User, data.get("u"))
    return user if user is not None and user.session_version == data.get("v") else None


# --- API tokens ------------------------------------------------------------------------


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(
    session: Session, *, user: User, name: str, can_write: bool, campaign_id: int | None
) -> tuple[ApiToken, str]:
    """A new token; the plain token is returned once and never stored."""
    assert user.id is not None
    if campaign_id is not None and session.get(Campaign, campaign_id) is None:
        raise DomainError(
            "campaign_not_found",
            f"There is no campaign {campaign_id} to limit the token to.",
            status=422,
            field="campaign_id",
        )
    plain = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken(
        user_id=user.id,
        name=name.strip(),
        token_hash=_digest(plain),
        prefix=plain[:12],
        can_write=can_write,
        campaign_id=campaign_id,
    )
    session.add(row)
    session.flush()
    return row, plain


def principal_from_token(session: Session, token: str) -> Principal | None:
    row = session.exec(select(ApiToken).where(ApiToken.token_hash == _digest(token))).first()
    if row is None or row.revoked_at is not None:
        return None
    user = session.get(User, row.user_id)
    if user is None:
        return None
    row.last_used_at = utcnow()
    session.add(row)
    return Principal(user, row)


def list_tokens(session: Session, *, user: User) -> list[ApiToken]:
    query = select(ApiToken).where(ApiToken.user_id == user.id).order_by(col(ApiToken.id))
    return list(session.exec(query).all())


def revoke_token(session: Session, *, user: User, token_id: int) -> ApiToken:
    row = session.get(ApiToken, token_id)
    if row is None or row.user_id != user.id:
        raise NotFound("token_not_found", f"You have no API token {token_id}.")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        session.add(row)
    return row
