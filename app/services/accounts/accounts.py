"""Accounts, sessions, password resets and API tokens.

Passwords are hashed with argon2 (argon2-cffi). A session is a row of its own: the cookie
carries a signed random secret whose SHA-256 names the row, so logging out ends it on the
server (a copied cookie stops working). Changing the password ends every other session;
a reset ends them all and revokes the account's API tokens. The session version moves on
with each password change, which makes a used reset link worthless. API tokens are random
strings shown once; only their SHA-256 is stored.

A player may also set a short PIN (4 to 8 digits, argon2-hashed like a password, never
shown back) to confirm a result on the recorder's phone at the table; setting or clearing
it takes the current password.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from argon2 import PasswordHasher, profiles
from argon2.exceptions import InvalidHashError, VerificationError
from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlmodel import Session, col, delete, func, select, update

from app.config import get_settings
from app.db.locks import serialize
from app.db.models import ApiToken, Campaign, User, UserSession, as_utc, utcnow
from app.errors import DomainError, NotFound

USERNAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{2,39}$")
MIN_PASSWORD, MAX_PASSWORD = 8, 200
PIN = re.compile(r"^[0-9]{4,8}$")
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

    @property
    def campaign_limit(self) -> int | None:
        """The one campaign an API token is limited to, if it is."""
        return self.token.campaign_id if self.token is not None else None


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
    # Sign-ups take turns: two at once can neither both take one name nor both be first.
    serialize(session, "sign-up")
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


def set_pin(session: Session, *, user: User, current: str, pin: str | None) -> User:
    """Set (or, with ``pin`` None or empty, clear) the confirmation PIN; takes the current
    password, so a borrowed logged-in phone cannot set one."""
    try:
        hasher().verify(user.password_hash, current)
    except (VerificationError, InvalidHashError):
        raise DomainError(
            "password_invalid",
            "The current password is wrong.",
            status=422,
            field="current_password",
        ) from None
    if pin:
        if not PIN.match(pin):
            raise DomainError(
                "pin_invalid", "A PIN is 4 to 8 digits (0-9).", status=422, field="pin"
            )
        user.pin_hash = hasher().hash(pin)
    else:
        user.pin_hash = None
    user.pin_locked_at = user.pin_locked_battle_id = None  # a new PIN answers the notice
    session.add(user)
    return user


def note_pin_locked(session: Session, *, user_id: int, battle_id: int) -> None:
    """Wrong PINs just locked this account's PIN: keep a notice for its owner (someone at a
    table may have been guessing it)."""
    user = session.get(User, user_id)
    if user is not None:
        user.pin_locked_at = utcnow()
        user.pin_locked_battle_id = battle_id
        session.add(user)


def dismiss_pin_notice(session: Session, *, user: User) -> User:
    user.pin_locked_at = user.pin_locked_battle_id = None
    session.add(user)
    return user


def check_pin(user: User, pin: str, *, who: str = "") -> None:
    """Refuse unless ``pin`` is the user's PIN (``pin_not_set`` if they have none)."""
    who = who or user.display_name or user.username
    if not user.pin_hash:
        raise DomainError(
            "pin_not_set",
            f"{who} has not set a PIN; confirm with their password instead.",
            status=422,
            field="pin",
        )
    try:
        hasher().verify(user.pin_hash, pin)
    except (VerificationError, InvalidHashError):
        raise DomainError(
            "pin_incorrect", f"That is not {who}'s PIN.", status=422, field="pin"
        ) from None


def _set_password(session: Session, user: User, password: str) -> User:
    _check_password(password, "new_password")
    user.password_hash = hasher().hash(password)
    user.session_version += 1  # makes earlier reset links worthless
    session.add(user)
    end_sessions(session, user)  # the caller starts a new one where it should go on
    return user


def get_user(session: Session, username: str) -> User:
    user = session.exec(select(User).where(User.username == username.strip().lower())).first()
    if user is None:
        raise NotFound("user_not_found", f"There is no user '{username}'.")
    return user


# --- signed cookies and links ------------------------------------------------------------


def _serializer(key: str, purpose: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(key, salt=f"crusade-{purpose}")


def start_session(session: Session, user: User, key: str, days: int) -> str:
    """A new logged-in session for ``user``; returns the cookie value."""
    assert user.id is not None
    secret = secrets.token_urlsafe(32)
    now = utcnow()
    session.exec(  # forget this account's expired sessions while we are here
        delete(UserSession).where(
            col(UserSession.user_id) == user.id, col(UserSession.expires_at) < now
        )
    )
    session.add(
        UserSession(
            user_id=user.id, secret_hash=_digest(secret), expires_at=now + timedelta(days=days)
        )
    )
    return str(_serializer(key, "session").dumps({"s": secret}))


def _session_secret(cookie: str, key: str, max_age: int) -> str | None:
    data = _load(_serializer(key, "session"), cookie, max_age)
    secret = data.get("s") if isinstance(data, dict) else None
    return secret if isinstance(secret, str) else None


def user_from_cookie(session: Session, cookie: str, key: str, max_age: int) -> User | None:
    """The account of a live session (reads only: a request that reads never writes)."""
    secret = _session_secret(cookie, key, max_age)
    if secret is None:
        return None
    query = (
        select(User, UserSession.expires_at)
        .join(UserSession, col(UserSession.user_id) == col(User.id))
        .where(UserSession.secret_hash == _digest(secret))
    )
    found = session.exec(query).first()
    if found is None or as_utc(found[1]) <= datetime.now(UTC):
        return None
    return found[0]


def end_session(session: Session, cookie: str, key: str) -> None:
    """Log out: the session's row goes, so the cookie is worthless even if copied."""
    secret = _session_secret(cookie, key, max_age=10**9)
    if secret is not None:
        session.exec(delete(UserSession).where(col(UserSession.secret_hash) == _digest(secret)))


def end_sessions(session: Session, user: User) -> None:
    session.exec(delete(UserSession).where(col(UserSession.user_id) == user.id))


def revoke_tokens(session: Session, user: User) -> None:
    session.exec(
        update(ApiToken)
        .where(col(ApiToken.user_id) == user.id, col(ApiToken.revoked_at).is_(None))
        .values(revoked_at=utcnow())
    )


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
    # Whoever had the account before the reset keeps nothing: sessions and tokens end.
    revoke_tokens(session, user)
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
    """The token's holder. Reads only: its last use is recorded by ``record_token_use``,
    off the request's transaction."""
    row = session.exec(select(ApiToken).where(ApiToken.token_hash == _digest(token))).first()
    if row is None or row.revoked_at is not None:
        return None
    user = session.get(User, row.user_id)
    if user is None:
        return None
    return Principal(user, row)


TOKEN_USE_RESOLUTION = timedelta(minutes=1)


def token_use_is_stale(row: ApiToken, now: datetime) -> bool:
    """Last use is kept to the minute: a token used again within one writes nothing."""
    return row.last_used_at is None or now - as_utc(row.last_used_at) >= TOKEN_USE_RESOLUTION


def record_token_use(session: Session, token_id: int, now: datetime) -> None:
    """One conditional UPDATE, so two requests in the same minute write at most once."""
    session.exec(
        update(ApiToken)
        .where(
            col(ApiToken.id) == token_id,
            col(ApiToken.last_used_at).is_(None)
            | (col(ApiToken.last_used_at) <= now - TOKEN_USE_RESOLUTION),
        )
        .values(last_used_at=now)
    )


def list_tokens(
    session: Session, *, user: User, after: int | None = None, limit: int | None = None
) -> list[ApiToken]:
    """The account's API tokens, oldest first; ``after`` (a token id) and ``limit`` page."""
    query = select(ApiToken).where(ApiToken.user_id == user.id).order_by(col(ApiToken.id))
    if after is not None:
        query = query.where(col(ApiToken.id) > after)
    if limit is not None:
        query = query.limit(limit)
    return list(session.exec(query).all())


def revoke_token(session: Session, *, user: User, token_id: int) -> ApiToken:
    row = session.get(ApiToken, token_id)
    if row is None or row.user_id != user.id:
        raise NotFound("token_not_found", f"You have no API token {token_id}.")
    if row.revoked_at is None:
        row.revoked_at = utcnow()
        session.add(row)
    return row
