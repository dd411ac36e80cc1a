"""Webhook delivery lag (issue 34): from an event's commit to its arrival at a receiver,
for a healthy, a slow (answers after 2 s), a dead (connection refused) receiver and one that
is down for the first seconds and then catches up, all registered on one campaign while four
writers add about ten events a second. Prints lag percentiles side by side and the order
inversions each receiver saw, with the machine's load average before and after (figures
taken on a shared machine move with what else runs); asserts nothing.

    .venv/bin/python bench/webhook_lag_bench.py [--seconds 20] [--rate 10]
        [--engine sqlite|postgresql|both] [--database-url postgresql://user@host/db]

On PostgreSQL it makes a database of its own on the server ``--database-url`` names (by
default TEST_DATABASE_URL's), and drops it at the end.

The worker runs in this process, as `crusade serve` runs it (woken by each commit); a
`crusade worker` in another process sees a commit within webhook_worker.POLL_SECONDS.
Lag is measured from the event's `created_at` (set just before its commit), so it includes
the commit itself. The receivers run in processes of their own; a receiver's lag is taken
when the request arrives (the slow one answers 2 s later). A target's deliveries go one at a
time in event order, so the slow one takes one event per 2 s whatever the rate: its lag
grows with the run and most events are still waiting at the end; what counts is that the
healthy one's lag does not move. The one that was down waits for its first retry (30 s),
then catches up in order.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: bench.*

from app.config import get_settings
from app.db.engine import make_engine
from app.main import create_app
from app.services.feed import events, webhook_worker
from bench.serving import database


@dataclass
class Target:
    """A receiver, run in a process of its own (as a real receiver is: its threads do not
    compete with the app's for this process's interpreter lock). It appends each arrival,
    ``event id`` and ``lag`` in seconds, to ``log``."""

    name: str
    log: Path
    delay: float = 0.0  # seconds before answering
    port: int = 0
    process: multiprocessing.Process | None = None

    def start(self) -> None:
        self.port = self.port or free_port()
        self.process = multiprocessing.Process(
            target=serve, args=(self.port, self.delay, str(self.log)), daemon=True
        )
        self.process.start()
        for _ in range(100):  # until it listens
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port)):
                return
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    @property
    def arrivals(self) -> list[tuple[int, float]]:
        if not self.log.exists():
            return []
        lines = self.log.read_text().split()
        return [(int(lines[i]), float(lines[i + 1])) for i in range(0, len(lines) - 1, 2)]


def serve(port: int, delay: float, log: str) -> None:
    """A receiver's process: answers 204 (after ``delay``) and logs each arrival's lag."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            arrived = time.time()
            event = json.loads(body)
            created = datetime.fromisoformat(event["created_at"].replace("Z", "+00:00"))
            with lock, open(log, "a") as out:
                out.write(f"{int(event['id'])} {arrived - created.timestamp():.4f}\n")
            if delay:
                time.sleep(delay)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def inversions(arrivals: list[tuple[int, float]]) -> int:
    seen = 0
    count = 0
    for event_id, _lag in arrivals:
        count += event_id < seen
        seen = max(seen, event_id)
    return count


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the writers write")
    parser.add_argument("--rate", type=float, default=10.0, help="events per second, in all")
    parser.add_argument("--outage", type=float, default=5.0, help="seconds the 4th is down")
    parser.add_argument("--drain", type=float, default=45.0, help="seconds to wait after")
    parser.add_argument("--engine", choices=("sqlite", "postgresql", "both"), default="sqlite")
    parser.add_argument(
        "--database-url",
        default=os.environ.get("TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test"),
        help="the PostgreSQL server to make the bench's database on",
    )
    args = parser.parse_args()
    os.environ["WEBHOOK_ALLOW_PRIVATE"] = "true"
    os.environ.setdefault("PASSWORD_HASHING", "fast")
    get_settings.cache_clear()
    print("(a shared machine's figures move with what else runs: read them with its load)")
    kinds = ("sqlite", "postgresql") if args.engine == "both" else (args.engine,)
    for kind in kinds:
        with database(kind, args.database_url, "webhook_lag") as url:
            run(url, args)


def run(url: str, args: argparse.Namespace) -> None:
    """One run on the database at ``url``: writers, the worker, four receivers; a table."""
    engine = make_engine(url)
    before = load()
    client = TestClient(create_app(engine))
    client.post("/api/v1/auth/signup", json={"username": "bench", "password": "bench password"})
    client.headers["X-CSRF-Token"] = client.get("/api/v1/auth/csrf").json()["csrf_token"]
    campaign = client.post("/api/v1/campaigns", json={"name": "Lag bench"}).json()["id"]
    forces = [
        client.post(
            f"/api/v1/campaigns/{campaign}/forces",
            json={"name": f"Force {n}", "crusade_faction": "IMPERIUM"},
        ).json()["id"]
        for n in range(4)
    ]

    logs = Path(tempfile.mkdtemp())
    healthy = Target("healthy", logs / "healthy")
    slow = Target("slow (2 s)", logs / "slow", delay=2.0)
    dead = Target("dead (refused)", logs / "dead", port=free_port())
    outage = Target(f"down {args.outage:.0f} s, then up", logs / "outage", port=free_port())
    for target in (healthy, slow):
        target.start()
    targets = (healthy, slow, dead, outage)  # the outage one listens only after it
    for target in targets:
        answer = client.post(f"/api/v1/campaigns/{campaign}/webhooks", json={"url": target.url})
        assert answer.status_code == 201, answer.text

    # The worker as `crusade serve` runs it (woken by this process's commits), kept at hand
    # so that the run can wait for its senders before the database is dropped.
    worker = webhook_worker.Worker(engine)
    events.on_commit(worker.notify)
    worker_thread = threading.Thread(target=worker.run, name="webhook-worker", daemon=True)
    worker_thread.start()
    started = time.monotonic()
    written = [0]
    lock = threading.Lock()

    def write(force_id: int) -> None:
        writer = TestClient(client.app)
        writer.cookies = client.cookies
        writer.headers["X-CSRF-Token"] = client.headers["X-CSRF-Token"]
        interval = len(forces) / args.rate
        n = 0
        while time.monotonic() - started < args.seconds:
            due = time.monotonic() + interval
            body = {"name": f"Squad {n}", "power_rating": 1, "keywords": ["IMPERIUM"]}
            if writer.post(f"/api/v1/forces/{force_id}/cards", json=body).status_code == 201:
                with lock:
                    written[0] += 1
            n += 1
            time.sleep(max(0.0, due - time.monotonic()))

    writers = [threading.Thread(target=write, args=(f,)) for f in forces]
    for thread in writers:
        thread.start()
    time.sleep(args.outage)
    outage.start()
    for thread in writers:
        thread.join()
    deadline = time.monotonic() + args.drain
    while time.monotonic() < deadline and (
        len(healthy.arrivals) < written[0] or len(outage.arrivals) < written[0]
    ):
        time.sleep(0.2)
    worker.stop.set()
    worker.wake.set()

    print(
        f"\nengine: {engine.dialect.name}; {written[0]} events in {args.seconds:.0f} s "
        f"({written[0] / args.seconds:.1f}/s) from {len(forces)} writers; "
        f"{webhook_worker.SENDERS} sender threads"
    )
    print(f"before: {before}; after: {load()}")
    print(f"{'receiver':<22}{'arrived':>10}{'p50 s':>9}{'p95 s':>9}{'max s':>9}{'inversions':>12}")
    for target in targets:
        lags = [lag for _id, lag in target.arrivals]
        if lags:
            figures = (
                f"{statistics.median(lags):>9.3f}{percentile(lags, 0.95):>9.3f}{max(lags):>9.3f}"
            )
        else:
            figures = f"{'-':>9}{'-':>9}{'-':>9}"
        print(
            f"{target.name:<22}{len(target.arrivals):>5}/{written[0]:<4}{figures}"
            f"{inversions(target.arrivals):>12}"
        )
    for target in targets:  # a sender still at the slow one gives up at once
        target.stop()
    worker_thread.join()
    worker._pool.shutdown(wait=True)  # its senders have recorded what they sent
    engine.dispose()


if __name__ == "__main__":
    main()
