"""Throughput of the reads players and bots make most, as a ratio to GET /health in the same
run (issues 41 and 50). Prints a table; asserts nothing.

    .venv/bin/python bench/ratios.py                      # a demo server of its own, SQLite
    .venv/bin/python bench/ratios.py --database-url postgresql://postgres@127.0.0.1:5432/x
    .venv/bin/python bench/ratios.py --url http://host:8000 [--campaign 1 --force 1 --card 1]

Without --url it starts `crusade serve --demo-if-empty` (one process) on a fresh migrated
database of its own (a SQLite file in a temporary folder, or with --database-url a new
database on that PostgreSQL server, dropped afterwards) and stops it afterwards. Every read
is made without If-None-Match (a first visit), except the "304" line, which sends the
Order of Battle's ETag back (a client that already holds it).

Each request is timed in rounds (/health, then each read, then /health again ...), several
client threads each, so the ratio compares like with like even on a machine whose speed
changes during the run. With a server of its own it also prints the server's CPU time per
request (from /proc, the server process and its children) as a ratio: /health's CPU per
request over the read's. That one does not move with what else the machine runs, so it is
the figure to compare on a busy machine; the throughput ratio is the one a quiet machine
shows."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: the shared start-up helpers

from bench.serving import database  # noqa: E402

CRUSADE = str(Path(sys.executable).with_name("crusade"))


@contextmanager
def demo_server(database_url: str = "") -> Iterator[tuple[str, int | None]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tempfile.mkdtemp(prefix="crusade-ratios-")
    kind = "postgresql" if database_url else "sqlite"
    with database(kind, database_url, "ratios") as url, _started(folder, url, port) as base:
        yield base


@contextmanager
def _started(folder: str, url: str, port: int) -> Iterator[tuple[str, int | None]]:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "PHOTO_DIR": f"{folder}/photos",
        "LOG_LEVEL": "warning",
    }
    command = [CRUSADE, "serve", "--demo-if-empty", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.3)
        yield base, process.pid
    finally:
        process.terminate()
        process.wait(timeout=20)


def server_cpu(pid: int | None) -> float:
    """CPU seconds used so far by ``pid`` and the processes under it (0 without a pid)."""
    if pid is None:
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        todo.extend(int(c) for c in children)
    return total


def rate(
    base: str,
    path: str,
    seconds: float,
    threads: int,
    headers: dict[str, str] | None = None,
    pid: int | None = None,
) -> tuple[float, float]:
    """Requests a second over ``seconds`` from ``threads`` keep-alive clients, and the
    server's CPU seconds per request meanwhile."""
    deadline = time.perf_counter() + seconds
    expected = 304 if headers else 200

    def client() -> int:
        done = 0
        with httpx.Client(base_url=base, timeout=30, headers=headers) as http:
            while time.perf_counter() < deadline:
                response = http.get(path)
                assert response.status_code == expected, (path, response.status_code)
                done += 1
        return done

    start, cpu = time.perf_counter(), server_cpu(pid)
    with ThreadPoolExecutor(threads) as pool:
        total = sum(pool.map(lambda _: client(), range(threads)))
    return total / (time.perf_counter() - start), (server_cpu(pid) - cpu) / max(total, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", default="", help="a running server (default: start one)")
    parser.add_argument("--campaign", type=int, default=1)
    parser.add_argument("--force", type=int, default=1)
    parser.add_argument("--card", type=int, default=1)
    parser.add_argument(
        "--database-url",
        default="",
        help="PostgreSQL server for the started server's own fresh database (default: SQLite)",
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="per measure")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--only", default="", help="only the reads whose name holds this")
    args = parser.parse_args()
    reads = {
        "Order of Battle JSON": f"/api/v1/forces/{args.force}",
        "standings JSON": f"/api/v1/campaigns/{args.campaign}/standings",
        "battles list JSON": f"/api/v1/campaigns/{args.campaign}/battles",
        "campaign dashboard page": f"/campaigns/{args.campaign}",
        "Crusade card page": f"/cards/{args.card}",
        "battles list page": f"/campaigns/{args.campaign}/battles",
        "304 (Order of Battle)": f"/api/v1/forces/{args.force}",
    }
    if args.only:
        reads = {n: p for n, p in reads.items() if args.only.lower() in n.lower()}
    server = demo_server(args.database_url) if not args.url else _given(args.url)
    with server as (base, pid):
        etag = httpx.get(f"{base}/api/v1/forces/{args.force}").headers["ETag"]
        sent = {"304 (Order of Battle)": {"If-None-Match": etag}}
        for name, path in [("/health", "/health"), *reads.items()]:  # warm-up
            rate(base, path, 0.5, args.threads, sent.get(name))
        ratios: dict[str, list[float]] = {name: [] for name in reads}
        cpu_ratios: dict[str, list[float]] = {name: [] for name in reads}
        health_rates = []
        for _ in range(args.rounds):
            for name, path in reads.items():
                health, health_cpu = rate(base, "/health", args.seconds / 2, args.threads, pid=pid)
                health_rates.append(health)
                done, cpu = rate(base, path, args.seconds, args.threads, sent.get(name), pid)
                ratios[name].append(done / health if health else float("nan"))
                cpu_ratios[name].append(health_cpu / cpu if cpu else float("nan"))
    engine = "PostgreSQL" if args.database_url else "SQLite" if not args.url else args.url
    print(
        f"{base} ({engine}): {args.threads} client threads, {args.rounds} rounds of "
        f"{args.seconds} s; load average {os.getloadavg()[0]:.1f}"
    )
    print(f"/health: {min(health_rates):.0f}-{max(health_rates):.0f} requests a second")
    print(f"{'request':28} {'ratio to /health (each round)':>34}   by server CPU a request")
    for name, values in ratios.items():
        by_cpu = " ".join(f"{v:.2f}" for v in cpu_ratios[name]) if pid else "-"
        print(f"{name:28} {' '.join(f'{v:.2f}' for v in values):>34}   {by_cpu}")


@contextmanager
def _given(url: str) -> Iterator[tuple[str, int | None]]:
    yield url.rstrip("/"), None


if __name__ == "__main__":
    main()
