"""Two builds of the server side by side on one league, resolving battles in turn: a paired
comparison that a busy, shared machine cannot tilt (both see the same moments of load).
Prints p50 / p90 / p95 / max of each; asserts nothing.

    .venv/bin/python bench/resolve_ab.py --database-url URL [--battles 150]
        [--a 'PYTHONPATH=/tmp/old'] [--b ''] [--a-workers 1] [--b-workers 2]

Each build is `crusade serve` in its own process with the extra environment given
(``NAME=value,NAME=value``): ``PYTHONPATH=<a checkout>`` runs another commit's code (a `git
worktree` of it; the database's schema must suit both). The league must be loaded already
(bench/league_bench.py --reuse leaves it in the database). Each build resolves its own pair
of forces (the league's last two, the two before them), 2 x 20 units a battle, and reverts
it; the order alternates every round. ``--a-workers`` / ``--b-workers`` start a build with
several app processes (PostgreSQL only): the same code with 1 against 2 processes.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from sqlmodel import Session, col, select

from app.db.engine import make_engine
from app.db.models import Campaign, Force

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: bench.* and tests.*

from bench import league_bench as bench


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--battles", type=int, default=150)
    parser.add_argument("--a", default="", help="environment of build A")
    parser.add_argument("--b", default="", help="environment of build B")
    parser.add_argument("--a-workers", type=int, default=1, help="app processes of build A")
    parser.add_argument("--b-workers", type=int, default=1, help="app processes of build B")
    args = parser.parse_args()
    engine = make_engine(args.database_url)
    with Session(engine) as session:
        campaign = session.exec(select(Campaign.id)).first()
        forces = [
            int(f or 0)
            for f in session.exec(
                select(Force.id).where(Force.campaign_id == campaign).order_by(col(Force.id))
            ).all()
        ]
    builds = [args.a, args.b]
    worlds = [
        {
            "rng": random.Random(99 + n),
            "campaign": campaign,
            "pair": forces[len(forces) - 2 - 2 * n : len(forces) - 2 * n],
        }
        for n in range(2)
    ]
    card = bench.busiest_card(engine, forces[0])
    battle = bench.latest_battle(engine, forces[0])
    warm = bench.reads({**worlds[0], "force": forces[0], "card": card, "battle": battle})
    times: list[list[float]] = [[], []]
    with contextlib.ExitStack() as stack:
        clients = [
            stack.enter_context(_started(args.database_url, build, warm, workers))
            for build, workers in zip(builds, (args.a_workers, args.b_workers), strict=True)
        ]
        for round_ in range(args.battles):
            for n in (0, 1) if round_ % 2 == 0 else (1, 0):
                post = bench.resolution(clients[n], engine, worlds[n], 20)
                start = time.perf_counter()
                battle = post()
                times[n].append((time.perf_counter() - start) * 1000)
                bench.revert(clients[n], battle)
    processes = (args.a_workers, args.b_workers)
    for name, build, taken, workers in zip("AB", builds, times, processes, strict=True):
        kept = taken[3:]  # the first few warm the process
        figures = (
            " ".join(f"p{q} {bench.pct(kept, q):6.1f}" for q in (50, 90, 95))
            + f" max {max(kept):6.1f}"
        )
        print(
            f"{name} ({build or 'this checkout'}, {workers} process(es)): {figures} ms,"
            f" {len(kept)} resolutions"
        )


@contextlib.contextmanager
def _started(url: str, extra: str, warm: dict[str, str], workers: int) -> Any:
    """A server with ``extra`` in its environment, logged in, its reads warmed."""
    saved = dict(os.environ)
    os.environ.update(dict(pair.split("=", 1) for pair in extra.split(",") if pair))
    try:
        served = bench.server(url, workers)
        base, _pid = served.__enter__()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        with httpx.Client(base_url=base, timeout=300) as http:
            login = http.post("/api/v1/auth/login", json=bench.USER)
            assert login.status_code == 200, login.text
            http.headers["X-CSRF-Token"] = http.get("/api/v1/auth/csrf").json()["csrf_token"]
            for path in warm.values():
                for _ in range(20):
                    http.get(path)
            yield http
    finally:
        served.__exit__(None, None, None)


if __name__ == "__main__":
    main()
