"""Throughput of the reads players and bots make most, as a ratio to GET /health in the same
run (issue 41). Prints a table; asserts nothing.

    .venv/bin/python bench/ratios.py                      # a demo server of its own
    .venv/bin/python bench/ratios.py --url http://host:8000 [--campaign 1 --force 1]

Without --url it starts `crusade serve --demo-if-empty` (one process, SQLite in a temporary
folder) and stops it afterwards. Each request is timed in rounds (/health, then each read,
then /health again ...), several client threads each, so the ratio compares like with
like even on a machine whose speed changes during the run."""

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

CRUSADE = str(Path(sys.executable).with_name("crusade"))


@contextmanager
def demo_server() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tempfile.mkdtemp(prefix="crusade-ratios-")
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{folder}/crusade.db",
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
        yield base
    finally:
        process.terminate()
        process.wait(timeout=20)


def rate(base: str, path: str, seconds: float, threads: int) -> float:
    """Requests a second over ``seconds`` from ``threads`` keep-alive clients."""
    deadline = time.perf_counter() + seconds

    def client() -> int:
        done = 0
        with httpx.Client(base_url=base, timeout=30) as http:
            while time.perf_counter() < deadline:
                response = http.get(path)
                assert response.status_code == 200, (path, response.status_code)
                done += 1
        return done

    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        total = sum(pool.map(lambda _: client(), range(threads)))
    return total / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", default="", help="a running server (default: start one)")
    parser.add_argument("--campaign", type=int, default=1)
    parser.add_argument("--force", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=3.0, help="per measure")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    reads = {
        "Order of Battle JSON": f"/api/v1/forces/{args.force}",
        "standings JSON": f"/api/v1/campaigns/{args.campaign}/standings",
        "campaign dashboard page": f"/campaigns/{args.campaign}",
    }
    with demo_server() if not args.url else _given(args.url) as base:
        for path in ["/health", *reads.values()]:  # warm-up: templates, caches, the pool
            rate(base, path, 0.5, args.threads)
        ratios: dict[str, list[float]] = {name: [] for name in reads}
        health_rates = []
        for _ in range(args.rounds):
            for name, path in reads.items():
                health = rate(base, "/health", args.seconds / 2, args.threads)
                health_rates.append(health)
                ratios[name].append(rate(base, path, args.seconds, args.threads) / health)
    print(f"{base}: {args.threads} client threads, {args.rounds} rounds of {args.seconds} s")
    print(f"/health: {min(health_rates):.0f}-{max(health_rates):.0f} requests a second")
    print(f"{'request':28} {'ratio to /health (each round)':>34}")
    for name, values in ratios.items():
        print(f"{name:28} {' '.join(f'{v:.2f}' for v in values):>34}")


@contextmanager
def _given(url: str) -> Iterator[str]:
    yield url.rstrip("/")


if __name__ == "__main__":
    main()
