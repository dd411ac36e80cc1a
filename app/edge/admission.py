"""Admission control: how many requests work on the database at once in this process.

Why: FastAPI runs each synchronous step of a request (the session dependency, the access
check, the route) in a worker thread, one step after another, and the request's session
keeps its pooled connection between steps. With more requests at work than connections,
threads wait for a connection while the holders wait for a thread, and everything stalls
until the pool's timeout (issue 19). So at most ``capacity`` requests are at work, fewer than
the pool's connections and the thread limit; the others wait here, on the event loop, holding
nothing. Changes go before reads (an organizer's write is not stuck behind a bot's burst).
A request that cannot be admitted in time, or arrives when the queue is full, gets 503 with
Retry-After: shed cleanly instead of a 500 after a stall.

A long poll gives its place back while it waits (``Ticket.give_back``) and takes one again
for each query it makes.

A photo upload holds its place while its body is read and its files decoded (seconds), so
uploads hold at most ``upload_places`` of the places at once, and wait after everything
else (issue 45): however many are sent, the other places stay for reads and changes."""

from __future__ import annotations

import asyncio
import itertools
import re
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from starlette.responses import HTMLResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from app.errors import problem

# Requests that never touch the database: answered even when the queue is full.
UNMETERED = ("/health", "/static/")
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
RETRY_AFTER_SECONDS = 2
# A photo upload, by the website's form or the API: admitted last, and only so many at once.
UPLOAD = re.compile(r"^(/api/v1)?/battles/[^/]+/photos/?$")
UPLOAD_PRIORITY = 2


class Overloaded(Exception):
    """No place in time: the request is shed with 503."""


@dataclass(order=True)
class _Waiter:
    priority: int
    order: int
    loop: asyncio.AbstractEventLoop = field(compare=False)
    admitted: asyncio.Future[None] = field(compare=False)
    upload: bool = field(compare=False, default=False)


class Gate:
    """At most ``capacity`` holders, of which at most ``upload_places`` uploads; waiters
    are admitted by priority (0 first), then in order of arrival, an upload only while the
    uploads hold fewer than their places. Thread-safe: a test's clients may each run their
    own event loop."""

    def __init__(
        self,
        capacity: int,
        queue_limit: int,
        wait_seconds: float,
        upload_places: int | None = None,
    ) -> None:
        self.capacity = capacity
        self.queue_limit = queue_limit
        self.wait_seconds = wait_seconds
        # all but one place at most: something else always gets in
        wanted = capacity - 1 if upload_places is None else upload_places
        self.upload_places = max(1, min(wanted, capacity - 1))
        self._holders = 0
        self._uploads = 0
        self._queue: list[_Waiter] = []
        self._order = itertools.count()
        self._lock = threading.Lock()

    @property
    def holders(self) -> int:
        return self._holders

    @property
    def uploads(self) -> int:
        return self._uploads

    @property
    def waiting(self) -> int:
        return len(self._queue)

    def _may_enter(self, upload: bool) -> bool:
        return self._holders < self.capacity and (not upload or self._uploads < self.upload_places)

    def _take(self, upload: bool) -> None:
        self._holders += 1
        self._uploads += upload

    async def enter(
        self, priority: int, *, queue_limit: int | None = None, upload: bool = False
    ) -> None:
        limit = self.queue_limit if queue_limit is None else queue_limit
        loop = asyncio.get_running_loop()
        with self._lock:
            # a waiter that may enter is never left waiting (``_pass_on``), so nothing
            # that could go first is queued
            if self._may_enter(upload) and not any(self._may_enter(w.upload) for w in self._queue):
                self._take(upload)
                return
            if len(self._queue) >= limit:
                raise Overloaded
            waiter = _Waiter(priority, next(self._order), loop, loop.create_future(), upload)
            self._queue.append(waiter)
        try:
            await asyncio.wait_for(asyncio.shield(waiter.admitted), self.wait_seconds)
        except (TimeoutError, asyncio.CancelledError) as stopped:
            with self._lock:
                if waiter in self._queue:  # still waiting: leave the queue
                    self._queue.remove(waiter)
                    admitted = False
                else:  # admitted meanwhile: the place is ours, so give it back
                    admitted = True
            if admitted:
                self.leave(upload=upload)
            if isinstance(stopped, TimeoutError):
                raise Overloaded from None
            raise

    @asynccontextmanager
    async def place(self, priority: int = 1) -> AsyncIterator[None]:
        """A place for one piece of work outside a request's own (a long poll's query)."""
        await self.enter(priority, queue_limit=1 << 30)  # the request is already here
        try:
            yield
        finally:
            self.leave()

    def leave(self, *, upload: bool = False) -> None:
        with self._lock:
            self._holders -= 1
            self._uploads -= upload
            admitted = self._pass_on()
        for waiter in admitted:
            waiter.loop.call_soon_threadsafe(_admit, waiter.admitted)

    def _pass_on(self) -> list[_Waiter]:
        """The waiters admitted to the free places: the first by priority and arrival
        among those that may enter (an upload waits while the uploads fill their places)."""
        admitted = []
        while self._holders < self.capacity:
            ready = [w for w in self._queue if self._may_enter(w.upload)]
            if not ready:
                break
            chosen = min(ready)
            self._queue.remove(chosen)
            self._take(chosen.upload)
            admitted.append(chosen)
        return admitted


def _admit(admitted: asyncio.Future[None]) -> None:
    if not admitted.done():
        admitted.set_result(None)


class Ticket:
    """A request's place at the gate, kept in ``request.state.admission``."""

    def __init__(self, gate: Gate, priority: int, upload: bool = False) -> None:
        self.gate = gate
        self.priority = priority
        self.upload = upload
        self.held = True

    def give_back(self) -> None:
        """Leave the gate early: the rest of the request waits for something that needs no
        database (a long poll), and takes a ``Gate.place`` for each query it still makes."""
        if self.held:
            self.held = False
            self.gate.leave(upload=self.upload)


class AdmissionMiddleware:
    """Admits each request through the gate in ``app.state.gate``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(UNMETERED):
            await self.app(scope, receive, send)
            return
        gate: Gate = scope["app"].state.gate
        upload = scope["method"] == "POST" and UPLOAD.match(scope["path"]) is not None
        priority = UPLOAD_PRIORITY if upload else 0 if scope["method"] in WRITES else 1
        try:
            await gate.enter(priority, upload=upload)
        except Overloaded:
            await _shed(scope, receive, send)
            return
        ticket = Ticket(gate, priority, upload)
        scope.setdefault("state", {})["admission"] = ticket
        try:
            await self.app(scope, receive, send)
        finally:
            if ticket.held:
                gate.leave(upload=upload)


BUSY = (
    "The server is busy with other requests; nothing was done. "
    f"Try again in {RETRY_AFTER_SECONDS} seconds."
)


def busy_problem() -> Response:
    """503 with Retry-After, for the API (and for a request that was shed once inside)."""
    response = problem(503, "server_busy", BUSY)
    response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


async def _shed(scope: Scope, receive: Receive, send: Send) -> None:
    """Answered without the database (a page's usual error page looks up who is asking)."""
    response: Response
    detail = BUSY
    if scope["path"].startswith("/api/"):
        response = busy_problem()
    else:
        response = HTMLResponse(
            f"<!doctype html><title>Busy</title><meta http-equiv=refresh "
            f'content="{RETRY_AFTER_SECONDS}"><p>{detail}</p>',
            status_code=503,
        )
    response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    await response(scope, receive, send)
