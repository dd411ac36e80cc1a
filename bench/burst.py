"""A league night's burst against one app process (issue 19). Prints figures; asserts nothing.

    .venv/bin/python bench/burst.py [--database-url URL] [--requests 200] [--pollers 300]
                                    [--forces 50] [--units 100] [--battles 200]

The server is a real `crusade serve` process (uvicorn, one worker) on a league-sized campaign
(bench/league.py). The client is one asyncio process with a connection per request, so every
request is really open at the same moment. Three runs, each printing status counts, p50/p95
latency, the worst `/health` answer seen meanwhile (a probe every 100 ms) and how long one
write made in the middle of it took:

1. quiet: the same reads one after another (the baseline for the ratios);
2. burst: ``--requests`` reads opened at once (Order of Battle, standings, campaign, feed);
3. long polls: ``--pollers`` feed waiters (`wait=30`) opened together, woken by one event,
   each re-polling at once and woken again by a second event.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: bench.* and tests.*
from app.db import migrate
from app.db.engine import make_engine
from bench import league as league_module
from bench.league_bench import server

PASSWORD = "a burst of bots"


@dataclass
class Run:
    """What one phase saw."""

    name: str
    latencies: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    health: list[float] = field(default_factory=list)
    write_ms: float | None = None
    wall: float = 0.0

    def line(self, quiet_p50: float | None) -> str:
        p50, p95 = pct(self.latencies, 50), pct(self.latencies, 95)
        ratio = f"{p50 / quiet_p50:7.1f}x" if quiet_p50 else "      -"
        codes = " ".join(f"{code}x{n}" for code, n in sorted(self.statuses.items(), key=str))
        worst_health = max(self.health, default=0.0)
        write = f"{self.write_ms:9.0f}" if self.write_ms is not None else "        -"
        return (
            f"  {self.name:<26}{len(self.latencies):>6}{p50:>9.0f}{p95:>9.0f}{ratio}"
            f"{worst_health:>10.0f}{write}   {codes}"
        )


def pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def world(base: str, url: str, args: argparse.Namespace) -> dict[str, Any]:
    """An organizer with an API token, and a league campaign they run."""
    with httpx.Client(base_url=base, timeout=60) as http:
        http.post("/api/v1/auth/signup", json={"username": "organizer", "password": PASSWORD})
        me = http.get("/api/v1/auth/me").json()
        http.headers["X-CSRF-Token"] = http.get("/api/v1/auth/csrf").json()["csrf_token"]
        body = {"name": "burst bot", "can_write": True}
        token = http.post("/api/v1/auth/tokens", json=body).json()["token"]
    engine = make_engine(url)
    started = time.perf_counter()
    league = league_module.create(
        engine, forces_count=args.forces, units=args.units, organizer_id=me["id"]
    )
    league_module.grow(engine, league, args.battles)
    engine.dispose()
    print(
        f"League: {args.forces} forces x {args.units} units, {league.battles} battles "
        f"(made in {time.perf_counter() - started:.0f} s)"
    )
    return {"token": token, "campaign": league.campaign_id, "forces": league.force_ids}


def reads(w: dict[str, Any], n: int) -> list[str]:
    """The reads a league night makes: Orders of Battle, standings, the campaign, the feed."""
    campaign, forces = w["campaign"], w["forces"]
    kinds = [
        lambda i: f"/api/v1/forces/{forces[i % len(forces)]}",
        lambda i: f"/api/v1/campaigns/{campaign}/standings",
        lambda i: f"/api/v1/campaigns/{campaign}",
        lambda i: f"/api/v1/campaigns/{campaign}/events?limit=20",
    ]
    return [kinds[i % len(kinds)](i) for i in range(n)]


async def timed(call: Callable[[], Awaitable[httpx.Response]], run: Run) -> httpx.Response | None:
    started = time.perf_counter()
    try:
        answer = await call()
    except httpx.HTTPError as error:
        run.statuses[f"{type(error).__name__}"] += 1  # type: ignore[index]
        run.latencies.append((time.perf_counter() - started) * 1000)
        return None
    run.latencies.append((time.perf_counter() - started) * 1000)
    run.statuses[answer.status_code] += 1
    return answer


# /health asked every 100 ms from a process of its own, so what it measures is the server's
# answer, not this client's own event loop, busy with hundreds of requests.
PROBE = """
import sys, time, httpx
with httpx.Client(base_url=sys.argv[1], timeout=120) as client:
    while True:
        started = time.perf_counter()
        try:
            client.get("/health")
        except httpx.HTTPError:
            pass
        print(round((time.perf_counter() - started) * 1000, 1), flush=True)
        time.sleep(0.1)
"""


@contextmanager
def health_probe(base: str, run: Run) -> Iterator[None]:
    probe = subprocess.Popen([sys.executable, "-c", PROBE, base], stdout=subprocess.PIPE, text=True)
    try:
        yield
    finally:
        probe.terminate()
        out, _ = probe.communicate(timeout=150)
        run.health += [float(line) for line in out.split()]


async def one_write(client: httpx.AsyncClient, w: dict[str, Any], run: Run, note: str) -> None:
    """A change an organizer makes meanwhile (it adds an event to the feed too)."""
    started = time.perf_counter()
    try:
        answer = await client.patch(
            f"/api/v1/campaigns/{w['campaign']}", json={"description": note}, timeout=120
        )
        run.statuses[f"write {answer.status_code}"] += 1  # type: ignore[index]
    except httpx.HTTPError as error:
        run.statuses[f"write {type(error).__name__}"] += 1  # type: ignore[index]
    finally:
        took = (time.perf_counter() - started) * 1000
        run.write_ms = max(run.write_ms or 0.0, took)


def client_for(base: str, w: dict[str, Any]) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        base_url=base,
        headers={"Authorization": f"Bearer {w['token']}"},
        timeout=180,
        limits=httpx.Limits(max_connections=2000, max_keepalive_connections=0),
    )


async def quiet(base: str, w: dict[str, Any], n: int) -> Run:
    run = Run("quiet (one at a time)")
    async with client_for(base, w) as client:
        for path in reads(w, n):
            await timed(lambda p=path: client.get(p), run)  # type: ignore[misc]
    return run


async def burst(base: str, w: dict[str, Any], n: int) -> Run:
    run = Run(f"burst ({n} at once)")
    async with client_for(base, w) as client, client_for(base, w) as side:
        started = time.perf_counter()
        calls = [timed(lambda p=path: client.get(p), run) for path in reads(w, n)]  # type: ignore[misc]
        write = asyncio.create_task(_later(0.2, one_write(side, w, run, "burst")))
        await asyncio.gather(*calls, write)
        run.wall = time.perf_counter() - started
    return run


async def _later(seconds: float, work: Awaitable[Any]) -> Any:
    await asyncio.sleep(seconds)
    return await work


async def long_polls(base: str, w: dict[str, Any], n: int) -> Run:
    run = Run(f"long polls ({n}, 2 wakes)")
    feed = f"/api/v1/campaigns/{w['campaign']}/events"
    async with client_for(base, w) as client, client_for(base, w) as side:
        first = (await client.get(feed, params={"limit": 1})).json()
        cursor = first["next"]
        while first["more"]:  # to the end of the feed
            first = (await client.get(feed, params={"after": first["next"], "limit": 200})).json()
            cursor = first["next"]

        wakes: list[float] = []  # when each waking write was sent

        async def poll(after: str) -> httpx.Response | None:
            """One long poll, timed from the write that wakes it (not from its start)."""
            try:
                answer = await client.get(feed, params={"after": after, "wait": 30})
            except httpx.HTTPError as error:
                run.statuses[type(error).__name__] += 1  # type: ignore[index]
                return None
            run.latencies.append((time.perf_counter() - wakes[-1]) * 1000 if wakes else 0.0)
            run.statuses[answer.status_code] += 1
            return answer

        async def waiter() -> None:
            answer = await poll(cursor)
            if answer is not None and answer.status_code == 200:
                await poll(answer.json()["next"])  # at once, as every bot does

        started = time.perf_counter()
        waiters = [asyncio.create_task(waiter()) for _ in range(n)]
        for note in ("wake one", "wake two"):
            await asyncio.sleep(3)  # every waiter is waiting
            wakes.append(time.perf_counter())
            await one_write(side, w, run, note)
        await asyncio.gather(*waiters)
        run.wall = time.perf_counter() - started
    return run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--pollers", type=int, default=300)
    parser.add_argument("--forces", type=int, default=50)
    parser.add_argument("--units", type=int, default=100)
    parser.add_argument("--battles", type=int, default=200)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'burst.db'}"
        migrate.upgrade(url)
        os.environ.update({"DATA_DIR": folder, "PASSWORD_HASHING": "fast"})
        with server(url) as (base, _pid):
            w = world(base, url, args)
            runs = [asyncio.run(quiet(base, w, 40))]
            for phase, size in ((burst, args.requests), (long_polls, args.pollers)):
                run = Run("")
                with health_probe(base, run):
                    done = asyncio.run(phase(base, w, size))
                done.health = run.health
                runs.append(done)
    print(f"\nOne app process, {url.split(':', 1)[0]}:")
    print(
        f"  {'run':<26}{'reqs':>6}{'p50 ms':>9}{'p95 ms':>9}{'  ratio':>8}"
        f"{'health ms':>10}{'write ms':>9}   statuses"
    )
    quiet_p50 = pct(runs[0].latencies, 50)
    for run in runs:
        print(run.line(quiet_p50 if run is not runs[0] else None))
    print("  (ratio: p50 against the quiet run; health ms: the slowest /health seen meanwhile;")
    print("   a long poll's latency runs from the write that woke it to its answer)")


if __name__ == "__main__":
    main()
