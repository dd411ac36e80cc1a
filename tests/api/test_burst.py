"""A league night's burst against one real server, on each engine (issue 19): many requests
opened at the same moment, and hundreds of long polls woken together by one event, are all
answered, none with a 5xx, while a write still goes through; beyond what the process takes,
requests are shed with 503 + Retry-After, never a 500 or a stall. bench/burst.py measures
the same scenario's figures; these tests assert the behaviour, not the timing."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine

from app.edge.admission import Gate
from app.main import create_app
from tests.api.live import serve
from tests.conftest import ORGANIZER

BURST = 200
POLLERS = 300


@pytest.fixture
def league_night(engine: Engine) -> Iterator[dict[str, Any]]:
    """A live server with a campaign, two forces of ten units, and a bot's API token."""
    with serve(engine) as url, httpx.Client(base_url=url, timeout=60) as http:
        assert http.post("/api/v1/auth/signup", json=ORGANIZER).status_code == 201
        http.headers["X-CSRF-Token"] = http.get("/api/v1/auth/csrf").json()["csrf_token"]
        campaign = http.post("/api/v1/campaigns", json={"name": "League night"}).json()["id"]
        forces = []
        for name, faction in (("Blue", "IMPERIUM"), ("Red", "CHAOS")):
            force = http.post(
                f"/api/v1/campaigns/{campaign}/forces",
                json={"name": name, "crusade_faction": faction},
            ).json()["id"]
            for index in range(10):
                added = http.post(
                    f"/api/v1/forces/{force}/cards",
                    json={"name": f"{name} {index}", "power_rating": 2, "keywords": [faction]},
                )
                assert added.status_code == 201, added.text
            forces.append(force)
        token = http.post("/api/v1/auth/tokens", json={"name": "bot", "can_write": True})
        yield {"url": url, "campaign": campaign, "forces": forces, "token": token.json()["token"]}


def bot(world: dict[str, Any]) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=world["url"],
        headers={"Authorization": f"Bearer {world['token']}"},
        timeout=120,
        limits=httpx.Limits(max_connections=1000, max_keepalive_connections=0),
    )


def in_own_loop(work: Any) -> Any:
    """Run a coroutine on an event loop of its own thread (the server has its own)."""
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.setdefault("result", asyncio.run(work)))
    thread.start()
    thread.join(timeout=300)
    assert "result" in box, "the burst did not finish"
    return box["result"]


async def rename(client: httpx.AsyncClient, world: dict[str, Any], description: str) -> int:
    answer = await client.patch(
        f"/api/v1/campaigns/{world['campaign']}", json={"description": description}
    )
    return answer.status_code


def test_requests_opened_at_once_are_all_answered_and_a_write_goes_through(
    league_night: dict[str, Any],
) -> None:
    world = league_night
    paths = [
        f"/api/v1/forces/{world['forces'][0]}",
        f"/api/v1/campaigns/{world['campaign']}/standings",
        f"/api/v1/campaigns/{world['campaign']}",
        f"/api/v1/campaigns/{world['campaign']}/events",
    ]

    async def burst() -> tuple[Counter[int], int, int]:
        async with bot(world) as client:
            reads = [client.get(paths[i % len(paths)]) for i in range(BURST)]

            async def write_meanwhile() -> int:
                await asyncio.sleep(0.1)
                return await rename(client, world, "mid-burst")

            async def health_meanwhile() -> int:
                await asyncio.sleep(0.1)
                return (await client.get("/health")).status_code

            *answers, written, health = await asyncio.gather(
                *reads, write_meanwhile(), health_meanwhile()
            )
        return Counter(a.status_code for a in answers), written, health

    statuses, written, health = in_own_loop(burst())
    assert statuses == Counter({200: BURST})
    assert (written, health) == (200, 200)


def test_long_polls_woken_together_and_polling_again_are_all_answered(
    league_night: dict[str, Any],
) -> None:
    world = league_night
    feed = f"/api/v1/campaigns/{world['campaign']}/events"

    async def polls() -> tuple[Counter[int], list[int], list[list[str]]]:
        async with bot(world) as client:
            cursor = (await client.get(feed, params={"limit": 200})).json()["next"]
            kinds: list[list[str]] = []

            async def waiter() -> list[int]:
                first = await client.get(feed, params={"after": cursor, "wait": 30})
                if first.status_code != 200:
                    return [first.status_code]
                kinds.append([e["kind"] for e in first.json()["items"]])
                again = await client.get(feed, params={"after": first.json()["next"], "wait": 30})
                return [first.status_code, again.status_code]

            waiters = [asyncio.create_task(waiter()) for _ in range(POLLERS)]
            writes = []
            for note in ("wake one", "wake two"):
                await asyncio.sleep(3)  # every waiter is waiting
                writes.append(await rename(client, world, note))
            # A waiter that saw both changes at once waits for a third: wake it rather than
            # let it sit out its 30 s (the answer is the same, a 200, only sooner).
            while pending := [w for w in waiters if not w.done()]:
                await asyncio.wait(pending, timeout=2)
                if any(not w.done() for w in pending):
                    writes.append(await rename(client, world, f"wake {len(writes) + 1}"))
            answers = await asyncio.gather(*waiters)
        return Counter(s for pair in answers for s in pair), writes, kinds

    statuses, writes, kinds = in_own_loop(polls())
    assert len(writes) >= 2 and set(writes) == {200}
    assert statuses == Counter({200: 2 * POLLERS})
    # every waiter was woken and saw the change (on a loaded machine a waiter that only got
    # to wait after the first change sees both at once)
    assert len(kinds) == POLLERS
    assert all(k and set(k) == {"campaign_settings_changed"} for k in kinds)


def test_beyond_what_the_process_takes_requests_are_shed_with_retry_after(
    engine: Engine,
) -> None:
    """One place and no queue: whatever arrives while a request is at work is refused at once,
    with 503, Retry-After and a problem body; nothing else stalls and the next request works."""
    app = create_app(engine)
    app.state.gate = Gate(capacity=1, queue_limit=0, wait_seconds=5)
    with serve(engine, app) as url:

        async def crowd() -> list[httpx.Response]:
            async with httpx.AsyncClient(base_url=url, timeout=60) as client:
                return await asyncio.gather(*[client.get("/api/v1/rules") for _ in range(40)])

        answers = in_own_loop(crowd())
        codes = Counter(a.status_code for a in answers)
        assert set(codes) == {200, 503} and codes[503] > 0, codes
        shed = next(a for a in answers if a.status_code == 503)
        assert shed.headers["Retry-After"] == "2"
        assert shed.headers["content-type"] == "application/problem+json"
        assert shed.json()["code"] == "server_busy"
        assert httpx.get(f"{url}/health").status_code == 200
        assert httpx.get(f"{url}/api/v1/rules").status_code == 200
