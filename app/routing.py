"""How a route runs: a synchronous route (the services and the database are synchronous) is
called in the thread pool and its answer checked on the event loop, one thread hand-off in
all. FastAPI's own way checks the answer of a synchronous route in a second hand-off, which
costs more than the check itself (issue 41)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from fastapi.routing import APIRoute, APIRouter
from starlette._utils import get_route_path
from starlette.concurrency import run_in_threadpool
from starlette.routing import Match
from starlette.types import Scope


class OneHopRoute(APIRoute):
    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, _in_thread_pool(endpoint), **kwargs)


def _in_thread_pool(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    """``endpoint`` as a coroutine function with the same signature (FastAPI reads the
    parameters through ``__wrapped__``), unchanged when it is one already."""
    if inspect.iscoroutinefunction(endpoint):
        return endpoint

    @functools.wraps(endpoint)
    async def run(*args: Any, **kwargs: Any) -> Any:
        return await run_in_threadpool(endpoint, *args, **kwargs)

    return run


class PrefixRouter(APIRouter):
    """An APIRouter that finds at once that a path outside its prefix is none of its own
    routes. FastAPI (0.165) matches a request against every route of every router included
    before the one it belongs to, more than once; for the JSON API's 86 routes that was a
    hundred microseconds of every page and of /health (issue 50)."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if self.prefix and not get_route_path(scope).startswith(self.prefix + "/"):
            return Match.NONE, {}
        return super().matches(scope)


# A path no route answers: walking the routes with it visits every one of them.
_NO_ROUTE: Scope = {
    "type": "http",
    "method": "GET",
    "path": "/-/no-route",
    "root_path": "",
    "headers": [],
    "query_string": b"",
}


def build_route_state(app: Any) -> None:
    """Make FastAPI build what it builds for each route at the first request that walks past
    it (each included router's matching state, ~190 ms for the whole app on a host where the
    quiet machine's 60): a served process does it before its first request, instead of its
    event loop doing it in the middle of one while /health waits (1.24 s on a loaded host,
    issue 50). Starlette's own ``matches`` on each route, with a path none of them answers."""
    for route in app.router.routes:
        route.matches(dict(_NO_ROUTE))
