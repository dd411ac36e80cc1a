"""What a thousand long polls woken by one write share (issue 50): one page body per
(campaign, cursor, limit, reader kind, head), and access decided again in batches.

Before, each woken poll re-read the page, decided its access in a thread hop and a
transaction of its own and serialised the page again: 1,000 polls woken together kept the
event loop and the thread pool busy for seconds, and ``/health`` waited 1.9-3.2 s.

- ``Rechecks``: the polls woken on one event loop queue their access check; one task takes
  the polls of ``BATCH`` credentials (a token, a cookie) at a time and decides each
  credential once, in one thread hop, one admission place and one read-only transaction.
- ``Turns``: the woken polls, their page in hand, answer ``RELEASE`` per turn of the event
  loop, so whatever else waits (``/health``, new requests) is served between two slices:
  the wake is handed out in slices, not in one burst.
- ``WokenPages``: the page's JSON body, built once for all who ask for the same key and kept
  ``PAGE_SECONDS``. The page holds exactly the events up to ``head`` (ids become visible in
  order within a campaign), so every poll with the key gets the same answer; it is kept
  only that long because a name a page shows (a force's, a card's) may change without a
  new event.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from concurrent.futures import Future

from cachetools import TTLCache
from fastapi import Request
from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool

from app.api.plumbing import route_access
from app.db.session import session_scope
from app.edge.admission import Gate
from app.edge.sessions import COOKIE
from app.errors import DomainError
from app.services.feed import events

# Credentials (tokens, cookies) whose access one thread hop decides for all their woken
# polls: a hop of 50 decisions takes some tens of milliseconds of a thread.
BATCH = 50
# Woken polls let go at a time before the event loop turns to its other work (/health, new
# requests): 50 answers are a few milliseconds of the loop.
RELEASE = 50
# How long a woken page's body is served to the polls that ask for it (the polls woken by
# one write ask within a second; a name shown may change without a new event).
PAGE_SECONDS = 1.0


Entry = tuple[Hashable, Request, "asyncio.Future[str]"]


class Rechecks:
    """Access decided again for woken polls, in batches (see the module's doc). ``decide``
    gives the reader's kind (``events.reader_kind``) or raises the refusal a new request
    would get (401 token_invalid, 403 forbidden, 404), for that poll only."""

    def __init__(self, batch: int = BATCH) -> None:
        self.batch = batch
        self._queues: dict[asyncio.AbstractEventLoop, list[Entry]] = {}
        self._lock = threading.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self.batches = 0  # thread hops so far (tests and benches read it)
        self.decisions = 0  # credentials decided so far

    async def decide(self, request: Request, gate: Gate, engine: Engine) -> str:
        loop = asyncio.get_running_loop()
        decided: asyncio.Future[str] = loop.create_future()
        with self._lock:
            queue = self._queues.get(loop)
            start = queue is None
            if queue is None:
                queue = self._queues[loop] = []
            queue.append((_credentials(request), request, decided))
        if start:
            task = loop.create_task(self._drain(loop, gate, engine))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return await decided

    async def _drain(self, loop: asyncio.AbstractEventLoop, gate: Gate, engine: Engine) -> None:
        taken: list[Entry] = []
        finished = False
        try:
            while True:
                with self._lock:
                    queue = self._queues[loop]
                    if not queue:
                        del self._queues[loop]
                        finished = True
                        return
                    taken, queue[:] = self._take(queue)
                firsts = {key: request for key, request, _ in reversed(taken)}
                try:
                    async with gate.place():
                        outcomes = await run_in_threadpool(
                            _decide_all, engine, list(firsts.values())
                        )
                except Exception as error:  # the database: every poll of the batch fails
                    outcomes = [error] * len(firsts)
                self.batches += 1
                self.decisions += len(firsts)
                by_key = dict(zip(firsts, outcomes, strict=True))
                for key, _, decided in taken:
                    if not decided.done():
                        outcome = by_key[key]
                        if isinstance(outcome, Exception):
                            decided.set_exception(outcome)
                        else:
                            decided.set_result(outcome)
                taken = []
                await asyncio.sleep(0)
        finally:  # cancelled (the loop is closing): nothing is left waiting for this task
            if not finished:
                with self._lock:
                    left = self._queues.pop(loop, [])
                for _, _, decided in [*taken, *left]:
                    decided.cancel()

    def _take(self, queue: list[Entry]) -> tuple[list[Entry], list[Entry]]:
        """The polls of the first ``batch`` credentials in the queue (all of their polls),
        and the rest."""
        keys: set[Hashable] = set()
        taken, rest = [], []
        for entry in queue:
            if entry[0] in keys or len(keys) < self.batch:
                keys.add(entry[0])
                taken.append(entry)
            else:
                rest.append(entry)
        return taken, rest


def _credentials(request: Request) -> Hashable:
    """What a decision depends on: the same credentials on the same route decide alike."""
    return (
        request.headers.get("authorization"),
        request.cookies.get(COOKIE),
        request.method,
        request.scope["route"].path,
        tuple(sorted(request.path_params.items())),
    )


def _decide_all(engine: Engine, requests: list[Request]) -> list[str | Exception]:
    """Each request's reader kind or refusal, in one read-only transaction."""
    outcomes: list[str | Exception] = []
    with session_scope(engine, writes=False) as session:
        for request in requests:
            try:
                principal = route_access.recheck(request, session)
                outcomes.append(
                    events.reader_kind(
                        session,
                        campaign_id=int(request.path_params["campaign_id"]),
                        user=principal.user if principal else None,
                    )
                )
            except DomainError as refused:
                outcomes.append(refused)
    return outcomes


class WokenPages:
    """Page bodies by key, each built once for all who ask at the same moment and kept
    ``seconds`` (see the module's doc)."""

    def __init__(self, seconds: float = PAGE_SECONDS, size: int = 256) -> None:
        self._kept: TTLCache[Hashable, bytes] = TTLCache(maxsize=size, ttl=seconds)
        self._building: dict[Hashable, Future[bytes]] = {}
        self._lock = threading.Lock()
        self.built: deque[Hashable] = deque(maxlen=64)  # the keys of the last pages built

    def clear(self) -> None:
        """Forget every kept page (a process that meets a second database: the tests')."""
        with self._lock:
            self._kept.clear()
            self.built.clear()

    async def body(self, key: Hashable, build: Callable[[], Awaitable[bytes]]) -> bytes:
        while True:
            with self._lock:
                kept = self._kept.get(key)
                if kept is not None:
                    return kept
                building = self._building.get(key)
                mine = building is None
                if building is None:
                    building = self._building[key] = Future()
            if not mine:
                try:
                    return await asyncio.wrap_future(building)
                except asyncio.CancelledError:
                    if building.cancelled():  # its builder went away: build it again
                        continue
                    raise
            try:
                body = await build()
            except BaseException as error:
                with self._lock:
                    del self._building[key]
                if isinstance(error, Exception):
                    building.set_exception(error)
                else:  # cancelled: whoever waits for it builds it again
                    building.cancel()
                raise
            with self._lock:
                self._kept[key] = body
                del self._building[key]
                self.built.append(key)
            building.set_result(body)
            return body


class Turns:
    """Woken polls answer ``release`` per turn of their event loop, in the order they
    came (see the module's doc)."""

    def __init__(self, release: int = RELEASE) -> None:
        self.release = release
        self._queues: dict[asyncio.AbstractEventLoop, deque[asyncio.Future[None]]] = {}
        self._lock = threading.Lock()

    async def turn(self) -> None:
        loop = asyncio.get_running_loop()
        mine: asyncio.Future[None] = loop.create_future()
        with self._lock:
            queue = self._queues.get(loop)
            if queue is None:
                queue = self._queues[loop] = deque()
                loop.call_soon(self._release, loop)
            queue.append(mine)
        await mine

    def _release(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            queue = self._queues[loop]
            let_go = [queue.popleft() for _ in range(min(self.release, len(queue)))]
            if queue:  # the next slice at the next turn, after the loop looked for I/O
                loop.call_soon(self._release, loop)
            else:
                del self._queues[loop]
        for waiting in let_go:
            if not waiting.done():
                waiting.set_result(None)
