"""The cached reads' early lane (issue 50): a GET of a cached JSON read whose body this
process keeps is answered before FastAPI's routing and dependency solving, which cost a
kept read (a 304 above all) several times its own work.

Only the plumbing is skipped. The lane runs the route's own access check
(route_access.decide, with the route's rule), on the event loop as the route would, and
finds the body by the route's own KeptRead (the versions that check read, the same key).
It answers only from a body the route itself built and kept under that key, or 304 for
it; with nothing kept (a first read of a version, a query never answered), or when the
check could not run on the loop (SQLite's file busy, a connection the server dropped), the
request goes on to the route. A refusal, an outage or a pool with no room is answered here
by the app's own handler for it, as it would be had the route raised it."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fastapi import BackgroundTasks, Request, Response
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.plumbing.cache import KEPT_READ, KeptRead, kept_answer
from app.api.plumbing.route_access import decide, decision
from app.db.session import decided_on_loop, hand_over, quick_read_session

PREFIX = "/api/v1/"
# An id as the route takes it without a word: 1 to 999,999,999 written without leading
# zeros. Anything else (0, '007', ten digits) goes to the route and its checks' answer.
ID = "[1-9][0-9]{0,8}"


@dataclass(frozen=True)
class Lane:
    path: str  # the route's path as declared (its access rule's key)
    pattern: re.Pattern[str]
    read: KeptRead[Any]


def lanes(routes: Iterable[BaseRoute], *, prefix: str) -> tuple[Lane, ...]:
    """A lane for each GET route marked ``kept_read`` (as declared in its module's router,
    under ``prefix``), matched on the path with its one id."""
    found = []
    for route in routes:
        read = getattr(getattr(route, "endpoint", None), KEPT_READ, None)
        if not isinstance(route, APIRoute) or read is None or "GET" not in (route.methods or ()):
            continue
        if set(route.param_convertors) != {read.param}:
            raise RuntimeError(f"{route.path}: a kept read's path names {read.param} alone")
        whole = re.escape(prefix + route.path)
        regex = whole.replace(re.escape(f"{{{read.param}}}"), f"({ID})")
        found.append(Lane(route.path, re.compile(regex + r"\Z"), read))
    return tuple(found)


class KeptReadLane:
    """Innermost middleware: inside the admission gate and the token limits, which every
    request passes as before."""

    def __init__(self, app: ASGIApp, lanes: tuple[Lane, ...]) -> None:
        self.app = app
        self.lanes = lanes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            path: str = scope["path"]
            if path.startswith(PREFIX):
                for lane in self.lanes:
                    match = lane.pattern.match(path)
                    if match is not None:
                        # the id as routing would give it: the access check finds its target
                        # (campaign, force, card) from the path's parameters
                        state = scope.setdefault("state", {})  # shared with the route's
                        params = {lane.read.param: match[1]}
                        request = Request({**scope, "state": state, "path_params": params})
                        response = await _answer(request, lane, int(match[1]))
                        if response is not None:
                            await response(scope, receive, send)
                            return
                        break
        await self.app(scope, receive, send)


async def _answer(request: Request, lane: Lane, ident: int) -> Response | None:
    """The kept answer, or a refusal; None for the route to answer, handed this session
    when its check decided here (the route goes on from that decision)."""
    session = quick_read_session(request.app.state.engine)
    background = BackgroundTasks()  # a token's use, recorded after the answer as the route does
    handed = False
    try:
        if not await decided_on_loop(
            session, lambda: decide(request, session, background, lane.path)
        ):
            return None
        found = lane.read.held_key(session, ident, request.url.query)
        answer = kept_answer(request, *found) if found is not None else None
        if answer is None:
            decided = decision(lane.path, request.path_params)
            hand_over(request, session, decided, background.tasks)
            handed = True
            return None
        answer.background = background
        return answer
    except Exception as error:
        return await _handled(request, error)
    finally:
        if not handed:
            session.close()  # nothing is open: the check ended its read, or rolled it back


async def _handled(request: Request, error: Exception) -> Response:
    """The answer the app's own handler for ``error`` gives (a refusal, an outage, a pool
    with no room), as if the route had raised it; re-raised when only the last-resort
    handler (a bug's 500) would take it, which answers it outside this lane as it would the
    route's."""
    handlers = request.app.exception_handlers
    for kind in type(error).__mro__:
        if kind is Exception:
            break
        handler = handlers.get(kind)
        if handler is not None:
            answer = handler(request, error)
            response: Response = await answer if inspect.isawaitable(answer) else answer
            return response
    raise error
