"""One round trip for many readers of one thing at one moment (issue 50): a cached read's
access statement on PostgreSQL, awaited on the event loop, shared by the requests that
ask the same question while it is being asked, as long as the answer cannot be older than
any of them.

A request that finds the statement already on its way does not take that answer (it was
asked before the request came, and may miss a write acknowledged to this very client
since): it boards the next one, which leaves when the one on its way is back, and which
every request arriving meanwhile boards too. So every answer was read after each request
that takes it arrived, as if each had asked alone; only the number of round trips
changes. A refusal or an outage reaches every rider as it reaches the one that asked."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy.util.concurrency import await_

_ASK_AGAIN = object()  # the asker was cancelled (its client went away): each asks alone


class Flights:
    """The statements on their way and those boarding, per key (what is asked, of which
    id), on one event loop."""

    def __init__(self) -> None:
        self._flying: dict[Hashable, asyncio.Future[Any]] = {}
        self._boarding: dict[Hashable, asyncio.Future[Any]] = {}

    def ask(self, key: Hashable, fetch: Callable[[], Any]) -> Any:
        """``fetch()``'s answer, or that of a ``fetch`` for the same key that left after
        this call began. Inside a greenlet on the loop (``sqlalchemy.util.greenlet_spawn``):
        a rider awaits without holding the loop."""
        boarding = self._boarding.get(key)
        if boarding is not None:
            return self._ride(boarding, fetch)
        flying = self._flying.get(key)
        if flying is None:
            return self._fly(key, asyncio.get_running_loop().create_future(), fetch)
        boarding = self._boarding[key] = asyncio.get_running_loop().create_future()
        try:
            await_(asyncio.wait([flying]))  # its answer is not ours: it left before we came
        except BaseException:
            self._land(self._boarding, key, boarding, _ASK_AGAIN)
            raise
        self._land(self._boarding, key, boarding, None, keep=True)
        return self._fly(key, boarding, fetch)

    def _fly(self, key: Hashable, future: asyncio.Future[Any], fetch: Callable[[], Any]) -> Any:
        self._flying[key] = future
        try:
            answer = fetch()
        except Exception as error:
            self._land(self._flying, key, future, error)
            raise
        except BaseException:
            self._land(self._flying, key, future, _ASK_AGAIN)
            raise
        self._land(self._flying, key, future, answer)
        return answer

    def _ride(self, future: asyncio.Future[Any], fetch: Callable[[], Any]) -> Any:
        answer = await_(asyncio.shield(future))  # a rider's cancellation is its own
        return fetch() if answer is _ASK_AGAIN else answer

    @staticmethod
    def _land(
        where: dict[Hashable, asyncio.Future[Any]],
        key: Hashable,
        future: asyncio.Future[Any],
        outcome: Any,
        *,
        keep: bool = False,
    ) -> None:
        """``future`` leaves ``where``; unless ``keep``, its riders get ``outcome`` (an
        exception is raised in each)."""
        if where.get(key) is future:
            del where[key]
        if keep or future.done():
            return
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
            future.exception()  # retrieved: nobody may have boarded
        else:
            future.set_result(outcome)


_BY_LOOP: WeakKeyDictionary[asyncio.AbstractEventLoop, Flights] = WeakKeyDictionary()


def flights() -> Flights:
    """This event loop's flights (each test client runs its own loop)."""
    loop = asyncio.get_running_loop()
    found = _BY_LOOP.get(loop)
    if found is None:
        found = _BY_LOOP[loop] = Flights()
    return found
