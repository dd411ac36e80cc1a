"""A feed follower on a busy campaign (issue 46): four writers add cards at 8 events a second
in all, for 60 s, to a real server (``crusade serve`` in a process of its own); a bot with an
API token follows ``GET /events?after=...&wait=30`` asking again at once, as docs/bots.md
says, with the server's default token limit (300 requests a minute). Prints the polls it
made, how many were answered 429 (the trial: 6 in 215 s, with waits of 23-40 s), and the
wake latency: from each event's ``created_at`` (set just before its commit) to the answer
that carried it reaching the bot (p50, p95, max). Asserts nothing; a shared machine's
figures move with what else runs (its load is printed).

    .venv/bin/python bench/feed_follow_bench.py [--seconds 60] [--rate 8]
        [--engine sqlite|postgresql|both] [--workers 1] [--port 8240]
        [--database-url postgresql://user@host/db]

On PostgreSQL it makes a database of its own on the server ``--database-url`` names (by
default TEST_DATABASE_URL's), and drops it at the end. ``--workers 2`` (PostgreSQL) serves
from two app processes: a commit in the other process is seen within the feed's poll
interval (0.25 s); without Redis each process counts the token's requests alone.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.serving import database  # noqa: E402


@contextlib.contextmanager
def server(url: str, port: int, workers: int) -> Iterator[str]:
    """``crusade serve`` on 127.0.0.1:``port`` over the database at ``url``, stopped after."""
    data = Path(tempfile.mkdtemp())
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "DATA_DIR": str(data),
        "PHOTO_DIR": str(data / "photos"),
        "SECRET_KEY": "feed-follow-bench-only",
        "PASSWORD_HASHING": "fast",
        "HOST": "127.0.0.1",
    }
    env.pop("API_TOKEN_REQUESTS_PER_MINUTE", None)  # the server's default: 300
    process = subprocess.Popen(
        [str(ROOT / ".venv/bin/crusade"), "serve", "--port", str(port), "--workers", str(workers)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        for _ in range(1200):  # until it listens (migrations first; slow on a busy machine)
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("the server did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} CPUs"


def signed_in(base: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=60)
    client.post("/api/v1/auth/signup", json={"username": "bench", "password": "bench password"})
    client.headers["X-CSRF-Token"] = client.get("/api/v1/auth/csrf").json()["csrf_token"]
    return client


def run(base: str, engine_name: str, args: argparse.Namespace) -> None:
    before = load()
    organizer = signed_in(base)
    campaign = organizer.post("/api/v1/campaigns", json={"name": "Follow bench"}).json()["id"]
    forces = [
        organizer.post(
            f"/api/v1/campaigns/{campaign}/forces",
            json={"name": f"Force {n}", "crusade_faction": "IMPERIUM"},
        ).json()["id"]
        for n in range(4)
    ]
    token = organizer.post(
        "/api/v1/auth/tokens", json={"name": "follower", "campaign_id": campaign}
    ).json()["token"]
    url = f"/api/v1/campaigns/{campaign}/events"
    cursor = organizer.get(url, params={"limit": 200}).json()["next"]

    stop = threading.Event()
    written = [0]
    lock = threading.Lock()

    def write(force_id: int) -> None:
        writer = httpx.Client(base_url=base, timeout=60, cookies=organizer.cookies)
        writer.headers["X-CSRF-Token"] = organizer.headers["X-CSRF-Token"]
        interval = len(forces) / args.rate
        due = time.monotonic() + interval * forces.index(force_id) / len(forces)
        n = 0
        cards: list[int] = []
        while not stop.is_set():
            time.sleep(max(0.0, due - time.monotonic()))
            due += interval
            # Add a card, or remove the oldest of five (a force holds a limited number):
            # each is one event (card_added, card_removed).
            if len(cards) < 5:
                body = {"name": f"Squad {n}", "power_rating": 1, "keywords": ["IMPERIUM"]}
                answer = writer.post(f"/api/v1/forces/{force_id}/cards", json=body)
                if answer.status_code == 201:
                    cards.append(answer.json()["id"])
            else:
                answer = writer.delete(f"/api/v1/cards/{cards.pop(0)}")
            if answer.is_success:
                with lock:
                    written[0] += 1
            n += 1

    polls, refused, latencies, seen = 0, 0, [], 0
    retry_afters: list[int] = []
    bot = httpx.Client(base_url=base, timeout=90, headers={"Authorization": f"Bearer {token}"})
    writers = [threading.Thread(target=write, args=(f,)) for f in forces]
    started = time.monotonic()
    for thread in writers:
        thread.start()
    lowest = None

    def poll() -> None:
        nonlocal polls, refused, seen, cursor, lowest
        answer = bot.get(url, params={"after": cursor, "wait": 30, "limit": 200})
        arrived = time.time()
        polls += 1
        if "RateLimit-Remaining" in answer.headers:
            left = int(answer.headers["RateLimit-Remaining"])
            lowest = left if lowest is None else min(lowest, left)
        if answer.status_code == 429:
            refused += 1
            retry_afters.append(int(answer.headers["Retry-After"]))
            time.sleep(int(answer.headers["Retry-After"]))  # as the example bot does
            return
        answer.raise_for_status()
        page = answer.json()
        for item in page["items"]:
            created = datetime.fromisoformat(item["created_at"].replace("Z", "+00:00"))
            latencies.append(arrived - created.timestamp())
            seen += 1
        cursor = page["next"]

    while time.monotonic() - started < args.seconds:
        poll()
    stop.set()
    for thread in writers:
        thread.join()
    drained = time.monotonic() + 30
    while seen < written[0] and time.monotonic() < drained:
        poll()
    elapsed = time.monotonic() - started
    print(
        f"\nengine: {engine_name}, {args.workers} app process(es); {written[0]} events in "
        f"{args.seconds:.0f} s ({written[0] / args.seconds:.1f}/s) from {len(forces)} writers"
    )
    print(f"before: {before}; after: {load()}")
    print(
        f"follower: {polls} polls in {elapsed:.0f} s ({polls / elapsed * 60:.0f} a minute), "
        f"{seen} events received, 429 answers: {refused}, lowest RateLimit-Remaining: {lowest}"
        + (f" (Retry-After {min(retry_afters)}-{max(retry_afters)} s)" if retry_afters else "")
    )
    if latencies:
        print(
            f"wake latency (commit to arrival): p50 {statistics.median(latencies):.3f} s, "
            f"p95 {percentile(latencies, 0.95):.3f} s, max {max(latencies):.3f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the writers write")
    parser.add_argument("--rate", type=float, default=8.0, help="events per second, in all")
    parser.add_argument("--engine", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--workers", type=int, default=1, help="app processes (PostgreSQL)")
    parser.add_argument("--port", type=int, default=8240)
    parser.add_argument(
        "--database-url",
        default=os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test"),
        help="the PostgreSQL server to make the bench's database on",
    )
    args = parser.parse_args()
    print("(a shared machine's figures move with what else runs: read them with its load)")
    kinds = ("sqlite", "postgresql") if args.engine == "both" else (args.engine,)
    for kind in kinds:
        workers = args.workers if kind == "postgresql" else 1
        with (
            database(kind, args.database_url, "feed_follow") as url,
            server(url, args.port, workers) as base,
        ):
            run(base, kind, argparse.Namespace(**{**vars(args), "workers": workers}))


if __name__ == "__main__":
    main()
