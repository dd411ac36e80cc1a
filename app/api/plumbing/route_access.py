"""The access rule of every API route, in one table, enforced by one dependency.

create_app() refuses to start if a route under /api/v1 has no rule here, so a new route
cannot slip in unprotected (tests/api/test_authorization.py walks them all)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from fastapi import BackgroundTasks, FastAPI, Request
from fastapi.routing import APIRoute, iter_route_contexts
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from app.config import get_settings, secret_key
from app.db.session import SessionDep, decided_early, decided_on_loop, end_quick_read
from app.edge.csrf import check_csrf
from app.edge.sessions import COOKIE, caller, resolve_principal
from app.services.accounts.access import Access, authorize
from app.services.accounts.accounts import Principal

A = Access
POLICIES: dict[tuple[str, str], Access] = {
    # accounts
    ("POST", "/api/v1/auth/signup"): A.PUBLIC,
    ("POST", "/api/v1/auth/login"): A.PUBLIC,
    ("POST", "/api/v1/auth/logout"): A.PUBLIC,
    ("POST", "/api/v1/auth/reset-password"): A.PUBLIC,
    ("GET", "/api/v1/auth/me"): A.USER,
    ("GET", "/api/v1/auth/csrf"): A.USER,
    ("POST", "/api/v1/auth/password"): A.USER,
    ("POST", "/api/v1/auth/pin"): A.USER,
    ("GET", "/api/v1/auth/tokens"): A.USER,
    ("POST", "/api/v1/auth/tokens"): A.USER,
    ("DELETE", "/api/v1/auth/tokens/{token_id}"): A.USER,
    # campaigns and membership
    ("POST", "/api/v1/campaigns"): A.USER,
    ("GET", "/api/v1/campaigns"): A.PUBLIC,  # lists only what the caller may see
    ("GET", "/api/v1/campaigns/{campaign_id}"): A.CAMPAIGN_READ,
    ("PATCH", "/api/v1/campaigns/{campaign_id}"): A.CAMPAIGN_ORGANIZE,
    ("GET", "/api/v1/campaigns/{campaign_id}/standings"): A.CAMPAIGN_READ,
    ("GET", "/api/v1/campaigns/{campaign_id}/history"): A.CAMPAIGN_READ,
    ("GET", "/api/v1/campaigns/{campaign_id}/events"): A.CAMPAIGN_READ,
    ("POST", "/api/v1/campaigns/{campaign_id}/webhooks"): A.CAMPAIGN_ORGANIZE,
    ("GET", "/api/v1/campaigns/{campaign_id}/webhooks"): A.CAMPAIGN_ORGANIZE,
    ("GET", "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}"): A.CAMPAIGN_ORGANIZE,
    ("DELETE", "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}"): A.CAMPAIGN_ORGANIZE,
    ("GET", "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}/deliveries"): (
        A.CAMPAIGN_ORGANIZE
    ),
    (
        "POST",
        "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/resend",
    ): A.CAMPAIGN_ORGANIZE,
    ("GET", "/api/v1/campaigns/{campaign_id}/export"): A.CAMPAIGN_READ,
    ("GET", "/api/v1/campaigns/{campaign_id}/members"): A.CAMPAIGN_READ,
    ("DELETE", "/api/v1/campaigns/{campaign_id}/members/{user_id}"): A.CAMPAIGN_ORGANIZE,
    ("POST", "/api/v1/campaigns/{campaign_id}/members/{user_id}/reset-link"): A.CAMPAIGN_ORGANIZE,
    ("POST", "/api/v1/campaigns/{campaign_id}/invites"): A.CAMPAIGN_ORGANIZE,
    ("GET", "/api/v1/campaigns/{campaign_id}/invites"): A.CAMPAIGN_ORGANIZE,
    ("DELETE", "/api/v1/campaigns/{campaign_id}/invites/{code}"): A.CAMPAIGN_ORGANIZE,
    ("POST", "/api/v1/campaigns/{campaign_id}/join"): A.USER,
    ("POST", "/api/v1/invites/{code}/accept"): A.USER,
    # forces and cards
    ("POST", "/api/v1/campaigns/{campaign_id}/forces"): A.CAMPAIGN_PLAY,
    ("GET", "/api/v1/campaigns/{campaign_id}/forces"): A.CAMPAIGN_READ,
    ("GET", "/api/v1/forces/{force_id}"): A.CAMPAIGN_READ,
    ("PATCH", "/api/v1/forces/{force_id}"): A.FORCE_OWN,
    ("POST", "/api/v1/forces/{force_id}/cards"): A.FORCE_OWN,
    ("POST", "/api/v1/forces/{force_id}/cards/batch"): A.FORCE_OWN,
    ("POST", "/api/v1/forces/{force_id}/requisitions"): A.FORCE_OWN,
    ("POST", "/api/v1/forces/{force_id}/roster"): A.FORCE_OWN,
    ("GET", "/api/v1/forces/{force_id}/decisions"): A.CAMPAIGN_READ,
    ("GET", "/api/v1/cards/{card_id}"): A.CAMPAIGN_READ,
    ("PATCH", "/api/v1/cards/{card_id}"): A.FORCE_OWN,
    ("DELETE", "/api/v1/cards/{card_id}"): A.FORCE_OWN,
    # battles and decisions
    ("POST", "/api/v1/campaigns/{campaign_id}/battles"): A.CAMPAIGN_PLAY,
    ("GET", "/api/v1/campaigns/{campaign_id}/battles"): A.CAMPAIGN_READ,
    ("GET", "/api/v1/battles/{battle_id}"): A.CAMPAIGN_READ,
    ("POST", "/api/v1/battles/{battle_id}/result"): A.BATTLE_PLAY,
    ("POST", "/api/v1/battles/{battle_id}/confirm"): A.BATTLE_PLAY,
    ("POST", "/api/v1/battles/{battle_id}/dispute"): A.BATTLE_PLAY,
    ("POST", "/api/v1/battles/{battle_id}/revert"): A.BATTLE_ORGANIZE,
    ("POST", "/api/v1/battles/{battle_id}/call-off"): A.BATTLE_PLAY,
    ("PUT", "/api/v1/battles/{battle_id}/report"): A.BATTLE_PLAY,
    ("GET", "/api/v1/rule-packs/schema"): A.PUBLIC,
    ("GET", "/api/v1/rule-packs/examples"): A.PUBLIC,
    ("GET", "/api/v1/campaigns/{campaign_id}/rule-packs"): A.CAMPAIGN_READ,
    ("GET", "/api/v1/campaigns/{campaign_id}/rules"): A.CAMPAIGN_READ,
    ("POST", "/api/v1/campaigns/{campaign_id}/rule-packs"): A.CAMPAIGN_ORGANIZE,
    ("GET", "/api/v1/campaigns/{campaign_id}/rule-packs/{pack_id}"): A.CAMPAIGN_READ,
    ("DELETE", "/api/v1/campaigns/{campaign_id}/rule-packs/{pack_id}"): A.CAMPAIGN_ORGANIZE,
    ("GET", "/api/v1/campaigns/{campaign_id}/territories"): A.CAMPAIGN_READ,
    ("POST", "/api/v1/campaigns/{campaign_id}/territories"): A.CAMPAIGN_ORGANIZE,
    ("PATCH", "/api/v1/campaigns/{campaign_id}/territories/{territory_id}"): A.CAMPAIGN_ORGANIZE,
    ("DELETE", "/api/v1/campaigns/{campaign_id}/territories/{territory_id}"): (A.CAMPAIGN_ORGANIZE),
    ("POST", "/api/v1/battles/{battle_id}/photos"): A.BATTLE_PLAY,
    ("DELETE", "/api/v1/battles/{battle_id}/photos/{photo_id}"): A.BATTLE_PLAY,
    ("GET", "/api/v1/battles/{battle_id}/photos/{photo_id}/{width}"): A.CAMPAIGN_READ,
    ("GET", "/api/v1/decisions/{decision_id}"): A.CAMPAIGN_READ,
    ("POST", "/api/v1/decisions/{decision_id}/answer"): A.FORCE_OWN,
}
API = "/api/v1"
RULES_PREFIX = "/api/v1/rules"


def policy_for(method: str, path: str) -> Access:
    if path.startswith(RULES_PREFIX) and method == "GET":
        return Access.PUBLIC
    return POLICIES[(method, path)]


async def enforce(request: Request, session: SessionDep, background: BackgroundTasks) -> None:
    """Router-wide dependency: decide the request, and remember who acts (for history).
    Finds the caller too, in the same thread hand-off (issue 41); a cached read is decided
    on the event loop, with no hand-off at all, on either engine (app/db/session.py)."""
    early = decided_early(session)  # before routing, by a kept read's early lane
    if early is not None and early[0] == decision(request.scope["route"].path, request.path_params):
        background.tasks.extend(early[1])
        return
    if not await decided_on_loop(session, lambda: _decide(request, session, background)):
        await run_in_threadpool(_decide, request, session, background)


def decision(path: str, params: Mapping[str, Any]) -> Hashable:
    """What an access check decides: the route as declared and the request's path values."""
    return path, tuple(sorted((name, str(value)) for name, value in params.items()))


def _decide(request: Request, session: Session, background: BackgroundTasks) -> None:
    # The scope holds the route as declared in its sub-router (without the /api/v1 prefix).
    decide(request, session, background, request.scope["route"].path)


def decide(request: Request, session: Session, background: BackgroundTasks, path: str) -> None:
    """The access check of a request to the route declared as ``path``: who calls, and
    whether its rule lets them (a typed error if not)."""
    principal = resolve_principal(request, session, background)
    access = policy_for(request.method, path if path.startswith(API) else API + path)
    authorize(
        session,
        access=access,
        principal=principal,
        params=request.path_params,
        method=request.method,
    )
    if access != Access.PUBLIC:
        check_csrf(request, request.cookies.get(COOKIE), secret_key(get_settings()))
    session.info["actor_id"] = principal.user.id if principal else None
    end_quick_read(session)


def recheck(request: Request, session: Session) -> Principal | None:
    """Decide a read again, now: a long poll that waited (issue 46) answers only if its
    token is still valid and its caller may still read, so a revoked token or a removed
    member is refused (401 token_invalid, 403 forbidden) as a new request would be. Reads
    only (no CSRF; a token's use is not recorded again). Gives the caller found."""
    path: str = request.scope["route"].path
    principal = caller(request, session, BackgroundTasks())
    authorize(
        session,
        access=policy_for(request.method, path if path.startswith(API) else API + path),
        principal=principal,
        params=request.path_params,
        method=request.method,
    )
    return principal


def api_operations(app: FastAPI) -> set[tuple[str, str]]:
    """Every (method, path) the app serves under /api/, as its OpenAPI schema names them
    (sub-routers included). Read from the routes themselves, as FastAPI's schema builder
    walks them: building the schema took 1-2 s of every process's start."""
    return {
        (method, str(route.path_format))
        for route in iter_route_contexts(app.routes)
        if isinstance(route.original_route, APIRoute)
        and route.include_in_schema
        and str(route.path_format).startswith(API)
        for method in route.methods or ()
    }


def check_every_route_has_a_rule(app: FastAPI) -> None:
    missing = sorted(
        f"{method} {path}"
        for method, path in api_operations(app)
        if (method, path) not in POLICIES and not path.startswith(RULES_PREFIX)
    )
    if missing:
        raise RuntimeError(f"API routes without an access rule: {', '.join(missing)}")
