"""Pages for accounts: sign up, log in and out, the account page with API tokens, invites."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from app.config import get_settings, secret_key
from app.db.session import SessionDep
from app.edge.limits import RateLimits
from app.edge.sessions import COOKIE, end_session, start_session
from app.errors import DomainError
from app.routing import OneHopRoute
from app.services.accounts import accounts
from app.services.accounts.accounts import Principal
from app.services.campaigns import membership
from app.services.forces.forces import list_campaigns
from app.web.pages import Member, Viewer, attempt, redirect, render

router = APIRouter(route_class=OneHopRoute)
Text = Annotated[str, Form(max_length=4000)]


def _safe_next(target: str) -> str:
    """Only a path on this site (never //elsewhere or a full URL): no open redirect."""
    return target if target.startswith("/") and not target.startswith("//") else "/"


@router.get("/signup")
def sign_up_page(request: Request, principal: Viewer, next: str = "/") -> Response:
    return render(request, "pages/signup.html", principal, next=_safe_next(next), values={})


@router.post("/signup")
def sign_up(
    request: Request,
    session: SessionDep,
    principal: Viewer,
    username: Text = "",
    password: Text = "",
    display_name: Text = "",
    next: Text = "/",
) -> Response:
    values = {"username": username, "display_name": display_name}
    with attempt(session) as outcome:
        user = accounts.create_user(
            session, username=username, password=password, display_name=display_name
        )
    if outcome.refused:
        return render(
            request,
            "pages/signup.html",
            **outcome.shown(),
            values=values,
            next=_safe_next(next),
        )
    response = redirect(_safe_next(next))
    start_session(request, response, session, user)
    return response


@router.get("/login")
def log_in_page(request: Request, principal: Viewer, next: str = "/") -> Response:
    return render(request, "pages/login.html", principal, next=_safe_next(next), values={})


@router.post("/login")
def log_in(
    request: Request,
    session: SessionDep,
    principal: Viewer,
    username: Text = "",
    password: Text = "",
    next: Text = "/",
) -> Response:
    limits: RateLimits = request.app.state.rate_limits
    client = request.client.host if request.client else "?"
    with attempt(session) as outcome:
        limits.hit(limits.login, "login", client, username.strip().lower())
        user = accounts.authenticate(session, username=username, password=password)
    if outcome.refused:
        return render(
            request,
            "pages/login.html",
            **outcome.shown(),
            values={"username": username},
            next=_safe_next(next),
        )
    response = redirect(_safe_next(next))
    start_session(request, response, session, user)
    return response


@router.get("/reset-password")
def reset_password_page(request: Request, principal: Viewer, token: str = "") -> Response:
    response = render(request, "pages/reset_password.html", principal, token=token[:400])
    response.headers["Cache-Control"] = "no-store"  # the token is in the page
    return response


@router.post("/reset-password")
def reset_password(
    request: Request,
    session: SessionDep,
    principal: Viewer,
    token: Text = "",
    new_password: Text = "",
) -> Response:
    limits: RateLimits = request.app.state.rate_limits
    client = request.client.host if request.client else "?"
    with attempt(session) as outcome:
        limits.hit(limits.login, "reset", client)
        user = accounts.reset_password(
            session, token=token, new=new_password, key=secret_key(get_settings())
        )
    if outcome.refused:
        return render(
            request,
            "pages/reset_password.html",
            principal,
            **outcome.shown(),
            token=token[:400],
        )
    response = redirect("/account?password_reset=1")
    start_session(request, response, session, user)
    return response


@router.post("/logout")
def log_out(request: Request, session: SessionDep, principal: Viewer) -> Response:
    end_session(request, session)
    response = redirect("/")
    response.delete_cookie(COOKIE)
    return response


@router.get("/account")
def account_page(
    request: Request,
    session: SessionDep,
    principal: Member,
    password_reset: str = "",
    password_changed: str = "",
    pin: str = "",
) -> Response:
    notice = "New password saved: you are logged in." if password_reset else None
    notice = "Password changed." if password_changed else notice
    notice = {"set": "PIN saved.", "cleared": "PIN removed."}.get(pin[:10], notice)
    return _account(request, session, principal, notice=notice)


def _account(
    request: Request,
    session: SessionDep,
    principal: Principal,
    *,
    status: int = 200,
    **context: Any,
) -> Response:
    tokens = accounts.list_tokens(session, user=principal.user)
    campaigns, _total = list_campaigns(session, offset=0, limit=200, viewer=principal.user)
    return render(
        request,
        "pages/account.html",
        principal,
        status=status,
        tokens=tokens,
        campaigns=campaigns,
        **context,
    )


@router.post("/account/password")
def change_password(
    request: Request,
    session: SessionDep,
    principal: Member,
    current_password: Text = "",
    new_password: Text = "",
) -> Response:
    with attempt(session) as outcome:
        user = accounts.change_password(
            session, user=principal.user, current=current_password, new=new_password
        )
    if outcome.refused:
        return _account(request, session, principal, **outcome.shown("password_error"))
    # A new session means a new CSRF token: send the browser to a page rendered for it, or
    # the next form on this one would be refused as expired.
    response = redirect("/account?password_changed=1")
    start_session(request, response, session, user)
    return response


@router.post("/account/pin-notice/dismiss")
def dismiss_pin_notice(session: SessionDep, principal: Member) -> Response:
    accounts.dismiss_pin_notice(session, user=principal.user)
    return redirect("/account#pin")


@router.post("/account/pin")
def set_pin(
    request: Request,
    session: SessionDep,
    principal: Member,
    current_password: Text = "",
    pin: Text = "",
) -> Response:
    """Set or clear the PIN the player confirms a result with on another player's phone."""
    limits: RateLimits = request.app.state.rate_limits
    with attempt(session) as outcome:
        limits.hit(limits.login, "pin", str(principal.user.id))
        accounts.set_pin(
            session, user=principal.user, current=current_password, pin=pin.strip()[:20] or None
        )
    if outcome.refused:
        return _account(request, session, principal, **outcome.shown("pin_error"))
    return redirect("/account?pin=" + ("set" if pin.strip() else "cleared") + "#pin")


@router.post("/account/tokens")
def create_token(
    request: Request,
    session: SessionDep,
    principal: Member,
    name: Text = "",
    can_write: Annotated[bool, Form()] = False,
    campaign_id: Text = "",
) -> Response:
    limits: RateLimits = request.app.state.rate_limits
    with attempt(session) as outcome:
        limits.hit(limits.token, "token", str(principal.user.id))
        if not name.strip():
            raise DomainError(
                "token_name_missing", "Give the token a name.", status=422, field="name"
            )
        row, plain = accounts.create_token(
            session,
            user=principal.user,
            name=name[:80],
            can_write=can_write,
            campaign_id=_optional_id(campaign_id, "campaign_id"),
        )
    if outcome.refused:
        return _account(
            request,
            session,
            principal,
            **outcome.shown("token_error"),
            token_values={"name": name, "campaign_id": campaign_id, "can_write": can_write},
        )
    return _account(request, session, principal, new_token=plain, new_token_name=row.name)


@router.post("/account/tokens/{token_id}/revoke")
def revoke_token(
    request: Request, session: SessionDep, principal: Member, token_id: int
) -> Response:
    with attempt(session) as outcome:
        row = accounts.revoke_token(session, user=principal.user, token_id=token_id)
    if outcome.refused:
        return _account(request, session, principal, **outcome.shown("token_error"))
    return _account(request, session, principal, notice=f"Token '{row.name}' revoked.")


def _optional_id(text: str, field: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    if not text.isdigit() or not 1 <= int(text) < 2**31:
        raise DomainError("request_invalid", f"{field}: give a number.", status=422, field=field)
    return int(text)


# --- invites -----------------------------------------------------------------------------


@router.get("/invites/{code}")
def invite_page(request: Request, principal: Viewer, code: str) -> Response:
    return render(request, "pages/invite.html", principal, code=code[:100])


@router.post("/invites/{code}")
def accept_invite(request: Request, session: SessionDep, principal: Member, code: str) -> Response:
    with attempt(session) as outcome:
        joined = membership.accept_invite(session, code=code[:100], user=principal.user)
    if outcome.refused:
        return render(
            request,
            "pages/invite.html",
            principal,
            status=outcome.status,
            code=code[:100],
            error=outcome.error,
        )
    return redirect(f"/campaigns/{joined.campaign_id}?joined=1")
