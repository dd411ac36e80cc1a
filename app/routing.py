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
