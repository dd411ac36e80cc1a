"""Benchmarks for the campaign service. Prints figures; asserts nothing.

    .venv/bin/python bench/bench_api.py [--requests 300] [--database-url URL]

1. SQL statements per request for "get Order of Battle", "campaign standings" and "resolve
   a battle", at 10 and at 100 units per force (they should not grow with units).
2. p50/p95 latency of those under a local load (uvicorn in its own process on 127.0.0.1,
   driven by a few client threads from this one), with 20 units a side for the battle.
3. Requests per second of "get Order of Battle" as a ratio to /health, same run.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from fastapi.testclient import TestClient
from sqlalchemy import Engine, event
from sqlmodel import Session

from app.db import migrate
from app.db.engine import make_engine
from app.db.models import Force
from app.main import create_app
from app.services.campaigns.kept_totals import install_kept_totals

BENCH_USER = {"username": "bench", "password": "bench password"}


class StatementCounter:
    def __init__(self, engine: Engine) -> None:
        self.count = 0
        event.listen(engine, "before_cursor_execute", self._seen)

    def _seen(self, *_args: Any) -> None:
        self.count += 1

    @contextmanager
    def measure(self) -> Iterator[list[int]]:
        box = [0]
        start = self.count
        yield box
        box[0] = self.count - start


def build_campaign(client: TestClient, engine: Engine, units: int) -> dict[str, Any]:
    campaign = client.post("/api/v1/campaigns", json={"name": f"Bench {units}"}).json()["id"]
    world: dict[str, Any] = {"campaign": campaign, "forces": [], "rosters": []}
    for name, faction in (("Blue", "IMPERIUM"), ("Red", "CHAOS")):
        force = client.post(
            f"/api/v1/campaigns/{campaign}/forces", json={"name": name, "crusade_faction": faction}
        ).json()["id"]
        with Session(engine) as session:  # bench set-up only: room for many units
            row = session.get(Force, force)
            assert row is not None
            row.supply_limit = 10_000
            session.add(row)
            session.commit()
        ids = []
        for index in range(units):
            card = client.post(
                f"/api/v1/forces/{force}/cards",
                json={"name": f"{name} unit {index}", "power_rating": 1, "keywords": [faction]},
            )
            ids.append(card.json()["id"])
        world["forces"].append(force)
        world["rosters"].append(ids)
    return world


def muster(client: Any, world: dict[str, Any], size: int) -> int:
    body = {
        "battle_size": "onslaught",
        "mission": "grand_assault",
        "sides": [
            {
                "force_id": world["forces"][i],
                "role": role,
                "roster": world["rosters"][i][:size],
                "agendas": ["assassins", "reaper", "sentinel", "witch_hunter"],
            }
            for i, role in enumerate(("attacker", "defender"))
        ],
    }
    response = client.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=body)
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def result_body(world: dict[str, Any], size: int) -> dict[str, Any]:
    return {
        "sides": [
            {
                "force_id": world["forces"][i],
                "victory_points": 60 - 20 * i,
                # no Assassins marks: no enemy CHARACTER falls here (the rules would refuse)
                "units": [
                    {"card_id": c, "destroyed_ranged": 1} for c in world["rosters"][i][:size]
                ],
                "agenda_choices": {"reaper": world["rosters"][i][0]},
            }
            for i in range(2)
        ]
    }


def resolve_once(client: Any, world: dict[str, Any], size: int) -> tuple[int, Callable[[], Any]]:
    battle = muster(client, world, size)
    body = result_body(world, size)

    def post() -> Any:
        response = client.post(f"/api/v1/battles/{battle}/result", json=body)
        assert response.status_code == 200, response.text
        return response

    return battle, post


def statement_counts(client: TestClient, engine: Engine, counter: StatementCounter) -> None:
    print("SQL statements per request (should not grow with units):")
    print(f"  {'request':<24}{'10 units':>10}{'100 units':>11}")
    rows: dict[str, list[int]] = {
        "get Order of Battle": [],
        "campaign standings": [],
        "resolve a battle": [],
    }
    for units in (10, 100):
        world = build_campaign(client, engine, units)
        with counter.measure() as n:
            client.get(f"/api/v1/forces/{world['forces'][0]}")
        rows["get Order of Battle"].append(n[0])
        with counter.measure() as n:
            client.get(f"/api/v1/campaigns/{world['campaign']}/standings")
        rows["campaign standings"].append(n[0])
        battle, post = resolve_once(client, world, units)
        with counter.measure() as n:
            post()
        rows["resolve a battle"].append(n[0])
        client.post(f"/api/v1/battles/{battle}/revert")
    for name, counts in rows.items():
        print(f"  {name:<24}{counts[0]:>10}{counts[1]:>11}")


@contextmanager
def running_server(database_url: str) -> Iterator[str]:
    """uvicorn in its own process, as `crusade serve` runs it, on a free loopback port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "uvicorn", "app.main:create_app", "--factory"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    env = {**os.environ, "DATABASE_URL": database_url}
    server = subprocess.Popen(command, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=10)


def timed(calls: list[Callable[[], Any]], threads: int) -> tuple[list[float], float]:
    def one(call: Callable[[], Any]) -> float:
        start = time.perf_counter()
        call()
        return (time.perf_counter() - start) * 1000

    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        latencies = list(pool.map(one, calls))
    return latencies, len(calls) / (time.perf_counter() - start)


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def load(url: str, engine: Engine, client: TestClient, requests: int, threads: int) -> None:
    world = build_campaign(client, engine, 20)
    with running_server(url) as base, httpx.Client(base_url=base, timeout=30) as http:
        http.post("/api/v1/auth/login", json=BENCH_USER)
        http.headers["X-CSRF-Token"] = http.get("/api/v1/auth/csrf").json()["csrf_token"]
        force = world["forces"][0]
        health, health_rps = timed([lambda: http.get("/health")] * requests, threads)
        oob, oob_rps = timed([lambda: http.get(f"/api/v1/forces/{force}")] * requests, threads)
        standings_url = f"/api/v1/campaigns/{world['campaign']}/standings"
        table, _ = timed([lambda: http.get(standings_url)] * requests, threads)
        cold: list[float] = []  # each read follows a change, so the cache cannot help
        card = world["rosters"][0][0]
        for n in range(max(50, requests // 4)):
            http.patch(f"/api/v1/cards/{card}", json={"narrative": f"entry {n}"})
            cold += timed([lambda: http.get(f"/api/v1/forces/{force}")], 1)[0]
        resolve: list[float] = []
        for _ in range(max(20, requests // 10)):
            battle, post = resolve_once(http, world, 20)
            resolve += timed([post], 1)[0]
            reverted = http.post(f"/api/v1/battles/{battle}/revert")
            assert reverted.status_code == 200, reverted.text
    print(f"\nLatency under local load ({threads} client threads, {requests} requests each):")
    print(f"  {'request':<34}{'p50 ms':>8}{'p95 ms':>8}")
    for name, values in (
        ("/health", health),
        ("get Order of Battle (20 units)", oob),
        ("  ... just after a change (cold)", cold),
        ("campaign standings (2 x 20)", table),
        ("resolve a battle (2 x 20 units)", resolve),
    ):
        print(f"  {name:<34}{pct(values, 50):>8.1f}{pct(values, 95):>8.1f}")
    print("\nThroughput, same run:")
    print(f"  /health              {health_rps:8.0f} req/s")
    print(f"  get Order of Battle  {oob_rps:8.0f} req/s")
    print(f"  ratio                {oob_rps / health_rps:8.2f}")


def main() -> None:
    install_kept_totals()  # the set-up writes cards without the app
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'bench.db'}"
        migrate.upgrade(url)
        engine = make_engine(url)
        counter = StatementCounter(engine)
        print(f"database: {engine.url.get_backend_name()}")
        with TestClient(create_app(engine)) as client:
            client.post("/api/v1/auth/signup", json=BENCH_USER)
            client.headers["X-CSRF-Token"] = client.get("/api/v1/auth/csrf").json()["csrf_token"]
            statement_counts(client, engine, counter)
            load(url, engine, client, args.requests, args.threads)
        engine.dispose()


if __name__ == "__main__":
    main()
