"""The campaign website: server-rendered pages on the same services as the JSON API (and
the API's /docs page)."""

from __future__ import annotations

from fastapi import APIRouter, BackgroundTasks, FastAPI, Request
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles

from app.db.session import session_scope
from app.edge.sessions import caller
from app.web import (
    accounts,
    battle_wizard,
    battles,
    campaigns,
    decisions,
    forces,
    reference,
    rosters,
    rule_packs,
)
from app.web.pages import STATIC, declares_access, login_url, redirect, render

ROUTERS: list[APIRouter] = [
    accounts.router,
    campaigns.router,
    forces.router,
    rosters.router,
    battle_wizard.router,
    battles.router,
    decisions.router,
    reference.router,
    rule_packs.router,
]


def install_site(app: FastAPI) -> None:
    check_every_page_declares_access(ROUTERS)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    for router in ROUTERS:
        app.include_router(router, include_in_schema=False)


def check_every_page_declares_access(routers: list[APIRouter]) -> None:
    missing = [
        f"{sorted(getattr(r, 'methods', []))} {getattr(r, 'path', r)}"
        for router in routers
        for r in router.routes
        if not declares_access(r)
    ]
    if missing:
        raise RuntimeError(f"Pages without an access rule: {', '.join(missing)}")


def error_page(request: Request, status: int, code: str, detail: str) -> Response:
    """A refused page in words; a page that needs an account sends the visitor to log in."""
    if status == 401 and request.method == "GET":
        return redirect(login_url(request))
    principal = None
    if status < 500:  # a 5xx may mean the database is down: no lookup, the page alone
        try:
            with session_scope(request.app.state.engine, writes=False) as session:
                # Read again in a session of its own: the request's rolled back.
                principal = caller(request, session, BackgroundTasks())
        except Exception:  # a bad token or cookie: show the error page anonymously
            principal = None
    return render(
        request,
        "pages/error.html",
        principal,
        status=status,
        http_status=status,
        code=code,
        detail=detail,
    )
