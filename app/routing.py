"""How a route runs: a synchronous route (the services and the database are synchronous) is
called in the thread pool and its answer checked on the event loop, one thread hand-off in
all. FastAPI's own way checks the answer of a synchronous route in a second hand-off, which
costs more than the check itself (issue 41)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool


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
