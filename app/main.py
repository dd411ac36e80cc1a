"""create_app(): routers and error handlers."""

from __future__ import annotations

from functools import cache

from fastapi import Depends, FastAPI
from sqlalchemy import Engine
from starlette.routing import BaseRoute

from app.api import (
    auth,
    battles,
    campaigns,
    events,
    membership,
    rosters,
    rule_packs,
    rules,
    territories,
    webhooks,
)
from app.api.health import install_health
from app.api.plumbing.cache import VersionedBodies
from app.api.plumbing.idempotency import IdempotencyMiddleware
from app.api.plumbing.kept_lane import KeptReadLane, Lane, lanes
from app.api.plumbing.operations import name_operations
from app.api.plumbing.responses import document_responses
from app.api.plumbing.route_access import check_every_route_has_a_rule, enforce
from app.api.plumbing.token_limits import TokenLimitMiddleware
from app.config import get_settings
from app.db.session import get_engine
from app.edge.admission import AdmissionMiddleware, Gate
from app.edge.bodies import BodyBudget, BodyLimits
from app.edge.compression import COMPRESS_LEVEL, MINIMUM_SIZE, GZipMiddleware
from app.edge.conflicts import install_conflict_handlers
from app.edge.hardening import HardeningMiddleware, check_path_ids
from app.edge.limits import RateLimits
from app.edge.sessions import TokenUses
from app.errors import install_error_handlers
from app.routing import PrefixRouter
from app.rules.data import rulebook
from app.services.campaigns.kept_totals import install_kept_totals
from app.services.campaigns.photos import configured_store
from app.web import error_page, install_site
from app.web.api_docs import install_api_docs


def _new_app() -> FastAPI:
    return FastAPI(
        title="Crusade tracker",
        version="0.1.0",
        description="Warhammer 40,000 (9th edition) Crusade campaigns: rules reference and "
        "campaign bookkeeping.",
        dependencies=[Depends(check_path_ids)],  # first, before any access check reads an id
        docs_url=None,  # /docs is the site's (app/web/api_docs.py): Swagger UI served locally
        redoc_url=None,
    )


# The modules of the cached reads first: a path is matched against every route of the
# routers before its own, more than once (FastAPI's included routers), and no two modules'
# paths overlap (tests/api/test_route_order.py), so the order changes nothing else.
API_MODULES = (
    campaigns,
    battles,
    auth,
    rules,
    membership,
    rosters,
    events,
    webhooks,
    territories,
    rule_packs,
)
API_PREFIX = "/api/v1"


@cache
def _shared_routes() -> tuple[BaseRoute, ...]:
    """The API's and the site's routes, built once per process. Building them (FastAPI
    analyses every endpoint's signature and dependencies as a router is included) takes
    about half a second, which every app the tests make would pay again; the routes hold
    no per-app state (each request reaches its app's engine and limits through
    ``request.app.state``), so every app can share them. The access checks run here, once:
    the routes are fixed when the modules are imported."""
    scratch = _new_app()
    api = PrefixRouter(prefix=API_PREFIX, dependencies=[Depends(enforce)])
    for module in API_MODULES:
        name_operations(module.router.routes, prefix=api.prefix)
        api.include_router(module.router)
    scratch.include_router(api)
    check_every_route_has_a_rule(scratch)
    install_site(scratch)
    return tuple(scratch.router.routes)


@cache
def _lanes() -> tuple[Lane, ...]:
    return lanes((r for m in API_MODULES for r in m.router.routes), prefix=API_PREFIX)


# Bodies of the cached reads (issue 50): a few per campaign, force and card in use, each
# tens of kilobytes at most.
READ_CACHE_SIZE = 4096
# Each battle's JSON, kept apart from the pages (app/api/battles.py): some 9 KB each for a
# battle of 20 units a side, so at most about 9 MB; a league's newest pages fit.
BATTLE_BODIES = 1024


def create_app(engine: Engine | None = None) -> FastAPI:
    """The app, on ``engine`` (by default the one DATABASE_URL names)."""
    rulebook()  # load and validate the rule tables at start: a broken table fails fast
    # Hooks on every Session of the process, by name: the standings lines, chart points and
    # card battle lists move in the transaction of every card written.
    install_kept_totals()
    app = _new_app()
    app.state.engine = engine or get_engine()
    app.state.read_cache = VersionedBodies(size=READ_CACHE_SIZE)
    app.state.battle_bodies = VersionedBodies(size=BATTLE_BODIES)
    settings = get_settings()
    app.state.photos = configured_store()
    app.state.rate_limits = RateLimits(
        settings.rate_limit_storage,
        token_requests_per_minute=settings.api_token_requests_per_minute,
    )
    app.state.min_free_disk_mb = settings.min_free_disk_mb
    app.state.gate = Gate(
        settings.max_requests_at_work,
        settings.request_queue_limit,
        settings.request_queue_seconds,
        settings.upload_places,
    )
    app.state.body_limits = BodyLimits.from_settings(settings)
    app.state.body_budget = BodyBudget()  # one per app, so one per process
    app.state.token_uses = TokenUses()
    install_error_handlers(app)
    install_conflict_handlers(app)
    # innermost: a kept read answered early has passed every other middleware
    _shared_routes()  # the API's routes are checked before a lane is made of them
    app.add_middleware(KeptReadLane, lanes=_lanes())
    app.add_middleware(IdempotencyMiddleware)
    app.add_middleware(AdmissionMiddleware)  # before any database work
    app.add_middleware(TokenLimitMiddleware)  # a token past its limit never queues
    # outside the Idempotency-Key records (a replay is compressed for its own caller)
    app.add_middleware(GZipMiddleware, minimum_size=MINIMUM_SIZE, compresslevel=COMPRESS_LEVEL)
    app.add_middleware(HardeningMiddleware)  # outermost: headers on every response
    # /health (alive) and /health/ready (the database, Redis, disk) first: matched after
    # every other route, /health spent a third of its own time finding itself (the
    # server's CPU a /health: 346 µs, 221 µs first; issue 50)
    install_health(app)
    app.router.routes.extend(_shared_routes())
    app.state.error_page = error_page
    document_responses(app)  # every answered status in the OpenAPI schema
    install_api_docs(app)
    return app
