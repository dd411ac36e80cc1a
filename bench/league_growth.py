"""How much each read (and a battle's result) slows from a smaller league to a larger one,
in paired rounds (issue 50). Prints figures; asserts nothing.

    .venv/bin/python bench/league_growth.py --database-url postgresql://postgres@127.0.0.1:5432/postgres
        [--battles 200,2000] [--workers 2] [--rounds 15] [--per-round 8]

bench/league_bench.py measures one size after the other, minutes apart, so a change in the
machine's speed between the two (a neighbour, the other core busy) reads as growth: with two
app processes its growth column moved 1.04-1.36 for one read over five runs, and /health,
which reads no data, "grew" 1.30 in one. Here both leagues are served at once, each by its
own `crusade serve` on a database of its own, and each round times every read on one size
and then on the other (which goes first alternates), so a slower minute falls on both alike.

Growth is the ratio of the two p50s; beside it, the lowest and highest ratio of one round's
medians, which says how far a single sequential measurement could stray. Each round ends with
battle results (recorded and reverted), which move the campaign's versions, so each read's
first request of the next round is built afresh: those are kept apart ("first after a
write"), and the p50/p95 columns are the reads that follow it, as a league's players make
them between two results. The leagues are the ones bench/league_bench.py --reuse saved (run
it first). Each database is created for the run and dropped afterwards.
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: bench.*

from app.db import migrate
from app.db.engine import make_engine
from app.services.campaigns.kept_totals import install_kept_totals
from bench.league_bench import (
    CACHE,
    USER,
    SavedLeagues,
    _connections,
    analyze,
    busiest_card,
    latest_battle,
    reads,
    resolution,
    revert,
    server,
)
from bench.serving import database

RESOLVE = "resolve (2 x 20 units)"
FIRST = "after a write"


@dataclass
class Served:
    """One size of the league: its database, its server and a logged-in client."""

    size: int
    engine: Any
    world: dict[str, Any]
    http: httpx.Client
    samples: dict[str, list[float]] = field(default_factory=dict)

    def time(self, name: str, call: Callable[[], Any], times: int) -> list[float]:
        taken = []
        for _ in range(times):
            start = time.perf_counter()
            call()
            taken.append((time.perf_counter() - start) * 1000)
        self.samples.setdefault(name, []).extend(taken)
        return taken


@contextmanager
def served(size: int, server_url: str, kind: str, workers: int) -> Iterator[Served]:
    with ExitStack() as stack:
        url = stack.enter_context(database(kind, server_url, f"growth_{size}"))
        league = SavedLeagues(CACHE, url, 50, 100)
        if not league.has(size):
            sys.exit(f"no saved league of {size} battles: run bench/league_bench.py --reuse")
        state = league.load(size)
        migrate.upgrade(url)
        engine = make_engine(url)
        stack.callback(engine.dispose)
        analyze(engine)
        force = state.force_ids[0]
        world = {
            "campaign": state.campaign_id,
            "force": force,
            "pair": state.force_ids[-2:],
            "card": busiest_card(engine, force),
            "battle": latest_battle(engine, force),
            "rng": random.Random(size),
        }
        base, _pid = stack.enter_context(server(url, workers))
        http = stack.enter_context(
            httpx.Client(base_url=base, timeout=300, limits=_connections(workers))
        )
        login = http.post("/api/v1/auth/login", json=USER)
        assert login.status_code == 200, login.text
        http.headers["X-CSRF-Token"] = http.get("/api/v1/auth/csrf").json()["csrf_token"]
        yield Served(size, engine, world, http)


def warm(side: Served) -> None:
    for path in reads(side.world).values():
        for _ in range(3):
            side.http.get(path)
    for _ in range(3):
        revert(side.http, resolution(side.http, side.engine, side.world, 20)())


def one_round(sides: list[Served], per_round: int) -> dict[str, list[float]]:
    """Every read on each side in turn, then results; returns each one's median per side
    (in the order of ``sides``)."""
    medians: dict[str, list[float]] = {}
    for name in reads(sides[0].world):
        for side in sides:
            call = functools.partial(side.http.get, reads(side.world)[name])
            side.time(f"{name} {FIRST}", call, 1)  # the last round's results moved its version
            medians.setdefault(name, []).append(statistics.median(side.time(name, call, per_round)))
    for side in sides:
        taken = [resolve_once(side) for _ in range(max(2, per_round // 2))]
        side.samples.setdefault(RESOLVE, []).extend(taken)
        medians.setdefault(RESOLVE, []).append(statistics.median(taken))
    return medians


def resolve_once(side: Served) -> float:
    post = resolution(side.http, side.engine, side.world, 20)
    start = time.perf_counter()
    battle = post()
    taken = (time.perf_counter() - start) * 1000
    revert(side.http, battle)
    return taken


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def main() -> None:
    install_kept_totals()  # the leagues' set-up writes cards without the app
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--database-url", default="", help="a PostgreSQL server (else SQLite)")
    parser.add_argument("--battles", default="200,2000")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--per-round", type=int, default=8)
    args = parser.parse_args()
    small, large = (int(n) for n in args.battles.split(","))
    kind = "postgresql" if args.database_url else "sqlite"
    with (
        served(small, args.database_url, kind, args.workers) as first,
        served(large, args.database_url, kind, args.workers) as second,
    ):
        warm(first)
        warm(second)
        per_round: dict[str, list[float]] = {}
        for number in range(args.rounds):
            sides = [first, second] if number % 2 == 0 else [second, first]
            for name, (a, b) in one_round(sides, args.per_round).items():
                smaller, larger = (a, b) if sides[0] is first else (b, a)
                per_round.setdefault(name, []).append(larger / smaller)
        report(first, second, per_round, args, kind)


def report(
    first: Served,
    second: Served,
    per_round: dict[str, list[float]],
    args: argparse.Namespace,
    kind: str,
) -> None:
    print(
        f"\n{kind}, {args.workers} app process(es) a league; {args.rounds} paired rounds, "
        f"{args.per_round} requests a read a round"
    )
    print(
        f"  {'request':<28}{first.size:>6} p50{second.size:>6} p50{second.size:>6} p95"
        f"  growth  (one round's)   first after a write: {first.size} / {second.size} p50 ms"
    )
    for name, ratios in per_round.items():
        a, b = first.samples[name], second.samples[name]
        growth = statistics.median(b) / statistics.median(a)
        line = (
            f"  {name:<28}{statistics.median(a):>10.1f}{statistics.median(b):>10.1f}"
            f"{pct(b, 95):>10.1f}{growth:>8.2f}  ({min(ratios):.2f}-{max(ratios):.2f})"
        )
        if f"{name} {FIRST}" in first.samples:
            after = [statistics.median(s.samples[f"{name} {FIRST}"]) for s in (first, second)]
            line += f"{after[0]:>18.1f} / {after[1]:.1f}"
        print(line)


if __name__ == "__main__":
    main()
