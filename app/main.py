"""create_app(): routers and error handlers."""

from __future__ import annotations

from fastapi import APIRouter, Depends, FastAPI
from sqlalchemy import Engine

from app.api import auth, battles, campaigns, events, membership, rosters, rules, webhooks
from app.api.access import check_every_route_has_a_rule, enforce
from app.api.admission import AdmissionMiddleware, Gate
from app.api.cache import VersionedBodies
from app.api.conflicts import install_conflict_handlers
from app.api.hardening import HardeningMiddleware, RateLimits, check_path_ids
from app.api.idempotency import IdempotencyMiddleware
from app.api.responses import document_responses
from app.config import get_settings
from app.db.session import get_engine
from app.errors import install_error_handlers
from app.rules.data import rulebook
from app.web import install_site

# The API's routes are fixed when the modules are imported, so checking that each has an
# access rule once per process is enough; the check builds the OpenAPI schema (~2.5 s), a
# cost every test app would otherwise pay.
_checked: set[str] = set()


def create_app(engine: Engine | None = None) -> FastAPI:
    """The app, on ``engine`` (by default the one DATABASE_URL names)."""
    rulebook()  # load and validate the rule tables at start: a broken table fails fast
    app = FastAPI(
        title="Crusade tracker",
        version="0.1.0",
        description="Warhammer 40,000 (9th edition) Crusade campaigns: rules reference and "
        "campaign bookkeeping.",
        dependencies=[Depends(check_path_ids)],  # first, before any access check reads an id
        docs_url=None,  # /docs is the site's (app/web/api_docs.py): Swagger UI served locally
        redoc_url=None,
    )
    app.state.engine = engine or get_engine()
    app.state.order_of_battle_cache = VersionedBodies()
    settings = get_settings()
    app.state.rate_limits = RateLimits(settings.rate_limit_storage)
    app.state.gate = Gate(
        settings.max_requests_at_work,
        settings.request_queue_limit,
        settings.request_queue_seconds,
    )
    install_error_handlers(app)
    install_conflict_handlers(app)
    app.add_middleware(IdempotencyMiddleware)
    app.add_middleware(AdmissionMiddleware)  # before any database work
    app.add_middleware(HardeningMiddleware)  # outermost: headers on every response
    api = APIRouter(prefix="/api/v1", dependencies=[Depends(enforce)])
    api.include_router(auth.router)
    api.include_router(rules.router)
    api.include_router(campaigns.router)
    api.include_router(membership.router)
    api.include_router(battles.router)
    api.include_router(rosters.router)
    api.include_router(events.router)
    api.include_router(webhooks.router)
    app.include_router(api)
    document_responses(app)  # every answered status in the OpenAPI schema
    if "api" not in _checked:
        check_every_route_has_a_rule(app)
        _checked.add("api")
        app.openapi_schema = None  # the check built it before /health and the pages were in
    install_site(app)

    @app.get("/health", tags=["service"], summary="Liveness check")
    async def health() -> dict[str, str]:  # on the event loop: no thread, no connection
        return {"status": "ok"}

    return app
