"""Statements a battle costs in a campaign with two rule packs that move counters every
battle (issue 38): the Ashen Pilgrims (a trigger and a threshold on each unit's Martyrdom)
and the Cinder Brood (a force quest begun by requisition, an automatic quest on each
CHARACTER, rolled tables). Prints figures; asserts nothing.

    .venv/bin/python bench/pack_bench.py [--database-url URL]

Each row: the SQL statements of one request, at 10 and at 100 units a side (the rules run
in memory over the roster; the writes are one executemany per kind of change, so the count
should not grow with units, triggers or quests)."""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.db import migrate
from app.db.engine import make_engine
from app.db.models import Force
from app.main import create_app
from app.services.campaigns.kept_totals import install_kept_totals
from bench.bench_api import BENCH_USER, StatementCounter, muster, result_body

PACKS = Path(__file__).resolve().parents[1] / "examples" / "packs"


# Two forces of two factions in a campaign of six scoped packs (issue 47): each side plays
# with its own rulebook.
MIXED = [
    f"mixed/{name}.yaml"
    for name in (
        "acts-of-faith",
        "plague-tithe",
        "sagas",
        "the-feast",
        "the-waking",
        "book-of-grudges",
    )
]
ARMIES = {"IMPERIUM": ["ADEPTA SORORITAS"], "CHAOS": ["DEATH GUARD"]}


def build(client: TestClient, engine: Engine, units: int, packs: list[str]) -> dict[str, Any]:
    campaign = client.post("/api/v1/campaigns", json={"name": f"Packs {units}"}).json()["id"]
    for name in packs:
        text = (PACKS / name).read_bytes()
        files = {"file": (name, text, "application/yaml")}
        attached = client.post(f"/api/v1/campaigns/{campaign}/rule-packs", files=files)
        assert attached.status_code == 201, attached.text
    world: dict[str, Any] = {"campaign": campaign, "forces": [], "rosters": []}
    for name, faction in (("Blue", "IMPERIUM"), ("Red", "CHAOS")):
        body: dict[str, Any] = {"name": name, "crusade_faction": faction}
        if any(p.startswith("mixed/") for p in packs):
            body["army_keywords"] = ARMIES[faction]
        force = client.post(f"/api/v1/campaigns/{campaign}/forces", json=body).json()["id"]
        with Session(engine) as session:  # bench set-up only: room for many units
            row = session.get(Force, force)
            assert row is not None
            row.supply_limit, row.requisition_points = 10_000, 5
            session.add(row)
            session.commit()
        ids = []
        for index in range(units):
            keywords = [faction, "INFANTRY"] + (["CHARACTER"] if index % 2 else [])
            card = client.post(
                f"/api/v1/forces/{force}/cards",
                json={"name": f"{name} unit {index}", "power_rating": 1, "keywords": keywords},
            )
            ids.append(card.json()["id"])
        if "cinder-brood.yaml" in packs:  # the Great Feast, begun by a requisition
            bought = client.post(
                f"/api/v1/forces/{force}/requisitions", json={"requisition": "crave_flesh"}
            )
            assert bought.status_code in (200, 201), bought.text
        world["forces"].append(force)
        world["rosters"].append(ids)
    return world


def resolve(
    client: TestClient,
    counter: StatementCounter,
    world: dict[str, Any],
    n: int,
    times: list[float] | None = None,
) -> tuple[int, int]:
    """The statements of the battle's result, then of its revert (``times``: the result's
    milliseconds are added)."""
    battle = muster(client, world, n)
    body = result_body(world, n)
    for side in body["sides"]:  # some units fall: Martyrdom, failed trials
        for unit in side["units"][: max(1, n // 5)]:
            unit["destroyed"] = True
        side["dice"] = [6] * (n * 2)
    started = time.perf_counter()
    with counter.measure() as seen:
        response = client.post(f"/api/v1/battles/{battle}/result", json=body)
    if times is not None:
        times.append((time.perf_counter() - started) * 1000)
    assert response.status_code == 200, response.text
    with counter.measure() as undone:  # its decisions would block the next muster
        reverted = client.post(f"/api/v1/battles/{battle}/revert")
    assert reverted.status_code == 200, reverted.text
    return seen[0], undone[0]


def main() -> None:
    install_kept_totals()  # the set-up writes cards without the app
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'bench.db'}"
        migrate.upgrade(url)
        engine = make_engine(url)
        counter = StatementCounter(engine)
        print(f"database: {engine.url.get_backend_name()}")
        with TestClient(create_app(engine)) as client:
            if client.post("/api/v1/auth/signup", json=BENCH_USER).status_code != 201:
                client.post("/api/v1/auth/login", json=BENCH_USER)  # a database used before
            client.headers["X-CSRF-Token"] = client.get("/api/v1/auth/csrf").json()["csrf_token"]
            print("SQL statements per request (should not grow with units or packs):")
            print(f"  {'campaign, request':<48}{'10 units':>10}{'100 units':>11}")
            for label, packs in (
                ("no rule pack", []),
                ("Ashen Pilgrims + Cinder Brood", ["ashen-pilgrims.yaml", "cinder-brood.yaml"]),
            ):
                counts = [
                    resolve(client, counter, build(client, engine, n, packs), n) for n in (10, 100)
                ]
                print(f"  {label + ', resolve a battle':<48}{counts[0][0]:>10}{counts[1][0]:>11}")
                print(f"  {label + ', revert it':<48}{counts[0][1]:>10}{counts[1][1]:>11}")
            mixed_campaign(client, engine, counter)
            refusal_times(client)
        engine.dispose()


def mixed_campaign(client: TestClient, engine: Engine, counter: StatementCounter) -> None:
    """Six packs scoped to six factions (examples/packs/mixed), a Sisters force against a
    Death Guard one, 20 units a side: statements and time of recording the battle, beside
    the same battle in a campaign without packs (the machine's own cost)."""
    print("A 20-unit-a-side battle (ms over 20 runs, after 5 that warm the caches):")
    for label, packs in (("no rule pack", []), ("six scoped packs (mixed/)", MIXED)):
        world = build(client, engine, 20, packs)
        times: list[float] = []
        counts = [resolve(client, counter, world, 20, times) for _ in range(25)]
        spread = sorted(times[5:])
        p95 = spread[max(0, round(len(spread) * 0.95) - 1)]
        print(
            f"  {label:<28} resolve {counts[-1][0]} statements, revert {counts[-1][1]}; "
            f"median {statistics.median(spread):.1f} ms, p95 {p95:.1f} ms"
        )


def refusal_times(client: TestClient) -> None:
    """How long a hostile pack takes to be refused (preview): nesting is refused while the
    file is read, so the time stays flat however deep the file goes."""
    campaign = client.post("/api/v1/campaigns", json={"name": "Hostile"}).json()["id"]
    print("A pack nested N levels deep, refused (ms, median of 5):")
    for depth in (100, 1_000, 50_000):
        text = ("description: " + "[" * depth + "]" * depth + "\n").encode()
        files = {"file": ("deep.yaml", text, "application/yaml")}
        times = []
        for _ in range(5):
            started = time.perf_counter()
            refused = client.post(
                f"/api/v1/campaigns/{campaign}/rule-packs", params={"preview": "true"}, files=files
            )
            times.append((time.perf_counter() - started) * 1000)
            assert refused.status_code == 422, refused.text
        print(f"  {depth:>7,} levels, {len(text):>7,} bytes: {statistics.median(times):8.1f}")


if __name__ == "__main__":
    main()
