"""The shared round trip of the cached reads' access statement (app/db/flights.py): riders
only ever take an answer read after they asked, and every outcome reaches them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from sqlalchemy.util import greenlet_spawn
from sqlalchemy.util.concurrency import await_

from app.db.flights import Flights
from tests.conftest import in_own_loop


class Database:
    """A fake round trip: each fetch takes ``delay`` seconds and answers the value the
    database held when it left (``value`` may change meanwhile, as a commit would)."""

    def __init__(self, delay: float = 0.01) -> None:
        self.delay = delay
        self.value = 0
        self.fetches = 0
        self.fail: BaseException | None = None

    def fetch(self) -> int:
        self.fetches += 1
        seen = self.value
        await_(asyncio.sleep(self.delay))
        if self.fail is not None:
            raise self.fail
        return seen


def asked(flights: Flights, db: Database, key: str = "force 1") -> Any:
    return greenlet_spawn(flights.ask, key, db.fetch)


def run(main: Callable[[], Any]) -> Any:
    return in_own_loop(main())


def test_those_who_ask_while_it_is_on_its_way_share_the_next_round_trip() -> None:
    async def main() -> tuple[list[int], int]:
        flights, db = Flights(), Database()
        first = asyncio.ensure_future(asked(flights, db))
        await asyncio.sleep(0.001)  # the first is on its way
        db.value = 1  # a commit acknowledged before the next ones ask
        later = [asyncio.ensure_future(asked(flights, db)) for _ in range(5)]
        answers = await asyncio.gather(first, *later)
        return answers, db.fetches

    answers, fetches = run(main)
    assert answers == [0, 1, 1, 1, 1, 1]  # nobody who asked after the commit reads before it
    assert fetches == 2


def test_who_asks_after_the_answer_came_back_asks_again() -> None:
    async def main() -> tuple[list[int], int]:
        flights, db = Flights(), Database()
        one = await asked(flights, db)
        db.value = 7
        two = await asked(flights, db)
        return [one, two], db.fetches

    assert run(main) == ([0, 7], 2)


def test_different_keys_never_share() -> None:
    async def main() -> int:
        flights, db = Flights(), Database()
        await asyncio.gather(*(asked(flights, db, f"force {n}") for n in range(4)))
        return db.fetches

    assert run(main) == 4


def test_an_outage_reaches_every_rider() -> None:
    async def main() -> list[Any]:
        flights, db = Flights(), Database()
        first = asyncio.ensure_future(asked(flights, db))
        await asyncio.sleep(0.001)
        db.fail = ConnectionError("the database is not answering")
        later = [asyncio.ensure_future(asked(flights, db)) for _ in range(3)]
        return await asyncio.gather(first, *later, return_exceptions=True)

    first, *later = run(main)
    assert isinstance(first, ConnectionError)  # it left before the outage, came back after
    assert all(isinstance(a, ConnectionError) for a in later)


def test_a_cancelled_asker_leaves_its_riders_to_ask_for_themselves() -> None:
    async def main() -> tuple[list[Any], int]:
        flights, db = Flights(), Database()
        first = asyncio.ensure_future(asked(flights, db))
        await asyncio.sleep(0.001)
        leader = asyncio.ensure_future(asked(flights, db))  # boards the next, and leads it
        await asyncio.sleep(0.001)
        riders = [asyncio.ensure_future(asked(flights, db)) for _ in range(2)]
        await asyncio.sleep(0.001)
        leader.cancel()  # its client went away while it waited for the first
        answers = await asyncio.gather(first, leader, *riders, return_exceptions=True)
        return answers, db.fetches

    (first, leader, *riders), fetches = run(main)
    assert first == 0 and isinstance(leader, asyncio.CancelledError)
    assert riders == [0, 0]
    assert fetches == 3  # the first, then each rider alone


def test_a_rider_cancelled_takes_nobody_else_with_it() -> None:
    async def main() -> list[Any]:
        flights, db = Flights(), Database()
        first = asyncio.ensure_future(asked(flights, db))
        await asyncio.sleep(0.001)
        db.value = 2
        leader, rider, other = (asyncio.ensure_future(asked(flights, db)) for _ in range(3))
        await asyncio.sleep(0.015)  # the first is back, the next on its way
        rider.cancel()
        return await asyncio.gather(first, leader, rider, other, return_exceptions=True)

    first, leader, rider, other = run(main)
    assert (first, leader, other) == (0, 2, 2)
    assert isinstance(rider, asyncio.CancelledError)
