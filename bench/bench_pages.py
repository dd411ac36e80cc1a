"""Benchmark of the website's server-rendered pages. Prints figures; asserts nothing.

    .venv/bin/python bench/bench_pages.py [--requests 200] [--warmup 20] [--threads 1]
                                          [--database-url URL]

Starts `crusade serve --demo-if-empty` (uvicorn in its own process on 127.0.0.1, as
`make run` does) on a fresh SQLite database in a temp dir (or an EMPTY database at
--database-url) with the demo campaign loaded: four forces of 8 units, four battles. Then,
for each main page, as a visitor (the demo campaign is public) and logged in (the site
admin), it sends --warmup requests, then --requests timed ones, and prints p50/p95/p99
latency, throughput, and throughput as a ratio to /health measured the same way, plus the
size of the HTML. A page that does not answer 200 is listed as skipped.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: reuse the browser tests' server start-up

from tests.browser.live import ADMIN, api_sign_up, start_server  # noqa: E402


@dataclass
class Row:
    page: str
    who: str
    latencies: list[float]
    per_second: float
    size: int


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def measure(
    get: Callable[[], httpx.Response], requests: int, threads: int
) -> tuple[list[float], float]:
    def one(_: int) -> float:
        start = time.perf_counter()
        response = get()
        elapsed = (time.perf_counter() - start) * 1000
        assert response.status_code == 200, response.status_code
        return elapsed

    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        latencies = list(pool.map(one, range(requests)))
    return latencies, requests / (time.perf_counter() - start)


def demo_pages(client: httpx.Client) -> dict[str, str]:
    forces = client.get("/api/v1/campaigns/1/forces").json()["items"]
    force = forces[0]["id"]
    card = client.get(f"/api/v1/forces/{force}").json()["cards"][0]["id"]
    battle = client.get("/api/v1/campaigns/1/battles").json()["items"][-1]["id"]
    return {
        "home /": "/",
        "campaign dashboard": "/campaigns/1",
        "Order of Battle (8 units)": f"/forces/{force}",
        "Crusade card": f"/cards/{card}",
        "battle": f"/battles/{battle}",
        "all battles": "/campaigns/1/battles",
        "campaign history": "/campaigns/1/history",
        "rules index": "/rules",
        "rules: agendas": "/rules/agendas",
        "rules: missions": "/rules/missions",
        "rules: honours": "/rules/honours",
        "rules: scars": "/rules/scars",
    }


def run(base: str, requests: int, warmup: int, threads: int) -> None:
    visitor = httpx.Client(base_url=base, timeout=30)
    member = api_sign_up(base, ADMIN)  # the first account: site admin, sees every page
    rows: list[Row] = []
    skipped: list[str] = []
    try:
        pages = {"/health": "/health", **demo_pages(member)}
        plan = []
        for name, path in pages.items():
            for who, client in (("visitor", visitor), ("logged in", member)):
                if path == "/health" and who != "visitor":
                    continue
                first = client.get(path)
                if first.status_code != 200:
                    skipped.append(f"{name} ({path}) as {who}: {first.status_code}")
                    continue
                plan.append((name, path, who, client, len(first.content)))
        for _ in range(warmup):  # every page warm (templates, caches, connections) first
            for _name, path, _who, client, _size in plan:
                client.get(path)
        for name, path, who, client, size in plan:
            latencies, per_second = measure(partial(client.get, path), requests, threads)
            rows.append(Row(name, who, latencies, per_second, size))
    finally:
        visitor.close()
        member.close()
    health = rows[0].per_second
    print(
        f"\nPage latency, demo campaign loaded ({requests} requests each after {warmup} warm-up"
        f" rounds; {threads} client thread{'s' if threads > 1 else ''}):"
    )
    header = f"  {'page':<27}{'as':<11}{'p50 ms':>8}{'p95 ms':>8}{'p99 ms':>8}"
    print(header + f"{'req/s':>8}{'vs /health':>11}{'KB':>7}")
    for row in rows:
        print(
            f"  {row.page:<27}{row.who:<11}"
            f"{pct(row.latencies, 50):>8.1f}{pct(row.latencies, 95):>8.1f}"
            f"{pct(row.latencies, 99):>8.1f}{row.per_second:>8.0f}"
            f"{row.per_second / health:>11.2f}{row.size / 1024:>7.1f}"
        )
    for line in skipped:
        print(f"  skipped (not 200): {line}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--database-url", default="", help="an EMPTY database (default: SQLite)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="crusade-bench-pages-"))
    server = start_server(folder, database_url=args.database_url)
    try:
        print(f"database: {args.database_url.split(':')[0] if args.database_url else 'sqlite'}")
        run(server.url, args.requests, args.warmup, args.threads)
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
