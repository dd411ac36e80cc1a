"""Benchmarks for the event feed and webhooks (issue 15). Prints figures; asserts nothing.

    .venv/bin/python bench/bench_feed.py [--events 2000] [--database-url URL]

1. Statements and time to read a feed page (limit 50 and 200) at the start and at the end
   of a campaign's history of N events (they should not grow with N).
2. What the outbox adds to a command: a muster + call-off with 0 and with 3 webhooks.
3. How long a long-polling reader takes to see an event committed meanwhile (TestClient,
   one process: the poll interval dominates).
4. Webhook worker throughput against a local receiver.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine, event

from app.config import get_settings
from app.db import migrate
from app.db.engine import make_engine
from app.main import create_app
from app.services.feed import webhook_worker


def counting(engine: Engine) -> list[int]:
    box = [0]

    def seen(*_args: Any) -> None:
        box[0] += 1

    event.listen(engine, "before_cursor_execute", seen)
    return box


def setup(client: TestClient) -> dict[str, Any]:
    client.post("/api/v1/auth/signup", json={"username": "bench", "password": "bench password"})
    client.headers["X-CSRF-Token"] = client.get("/api/v1/auth/csrf").json()["csrf_token"]
    campaign = client.post("/api/v1/campaigns", json={"name": "Feed bench"}).json()["id"]
    sides = []
    for name, faction, role in (("Blue", "IMPERIUM", "attacker"), ("Red", "CHAOS", "defender")):
        force = client.post(
            f"/api/v1/campaigns/{campaign}/forces", json={"name": name, "crusade_faction": faction}
        ).json()["id"]
        card = client.post(
            f"/api/v1/forces/{force}/cards",
            json={"name": "Squad", "power_rating": 5, "keywords": [faction]},
        ).json()["id"]
        agenda = "assassins" if role == "attacker" else "reaper"
        sides.append({"force_id": force, "role": role, "roster": [card], "agendas": [agenda]})
    body = {"battle_size": "combat_patrol", "mission": "sweep_and_clear", "sides": sides}
    return {"campaign": campaign, "muster": body}


def muster_and_call_off(client: TestClient, world: dict[str, Any]) -> None:
    battle = client.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=world["muster"])
    client.post(f"/api/v1/battles/{battle.json()['id']}/call-off")


def timed(call: Any, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


class Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    os.environ["WEBHOOK_ALLOW_PRIVATE"] = "true"
    os.environ.setdefault("PASSWORD_HASHING", "fast")
    get_settings.cache_clear()
    url = args.database_url or f"sqlite:///{Path(tempfile.mkdtemp()) / 'bench.db'}"
    migrate.upgrade(url)
    engine = make_engine(url)
    statements = counting(engine)
    client = TestClient(create_app(engine))
    world = setup(client)
    feed = f"/api/v1/campaigns/{world['campaign']}/events"

    print(f"engine: {engine.dialect.name}")
    print("1. outbox cost: muster + call-off (4 events), median / p95 ms, statements")
    for hooks in (0, 3):
        for _ in range(hooks):
            client.post(
                f"/api/v1/campaigns/{world['campaign']}/webhooks",
                json={"url": "http://127.0.0.1:9/never-sent"},
            )
        before = statements[0]
        median, p95 = timed(lambda: muster_and_call_off(client, world), 30)
        per = (statements[0] - before) / 30
        print(f"   {hooks} webhooks: {median:.1f} / {p95:.1f} ms, {per:.0f} statements")

    done = 0
    while done < args.events:
        muster_and_call_off(client, world)
        done += 4
    print(f"2. feed page with ~{done} events in the campaign, median / p95 ms, statements")
    last = client.get(feed, params={"limit": 200}).json()
    while last["more"]:
        last = client.get(feed, params={"limit": 200, "after": last["next"]}).json()
    first_page = client.get(feed, params={"limit": 50}).json()["items"]
    near_end = first_page[0]["cursor"]  # the start; then the last page, from a cursor
    for label, params in (
        ("start, limit 50", {"limit": 50}),
        ("start, limit 200", {"limit": 200}),
        ("after a cursor, limit 50", {"limit": 50, "after": near_end}),
    ):
        before = statements[0]
        median, p95 = timed(lambda params=params: client.get(feed, params=params), 30)
        per = (statements[0] - before) / 30
        print(f"   {label}: {median:.1f} / {p95:.1f} ms, {per:.0f} statements")

    print("3. long poll: commit to answer, ms (median of 10)")
    waits = []
    for _ in range(10):
        cursor = client.get(feed, params={"limit": 1, "after": last["next"]}).json()["next"]
        reader_client = TestClient(client.app)
        reader_client.cookies = client.cookies
        seen_at: list[float] = []

        def read(
            reader: TestClient = reader_client, after: str = cursor, box: list[float] = seen_at
        ) -> None:
            reader.get(feed, params={"after": after, "wait": 30})
            box.append(time.perf_counter())

        reader = threading.Thread(target=read)
        reader.start()
        time.sleep(0.5)
        committed = time.perf_counter()
        muster_and_call_off(client, world)
        reader.join()
        waits.append((seen_at[0] - committed) * 1000)
        last = client.get(feed, params={"limit": 200, "after": cursor}).json()
    print(f"   {statistics.median(waits):.0f} ms (woken by the commit in this process)")

    print("4. webhook worker: deliveries per second to a local receiver")
    sink = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    with engine.begin() as connection:
        connection.exec_driver_sql(
            "UPDATE webhook SET url = ?"
            if engine.dialect.name == "sqlite"
            else "UPDATE webhook SET url = %s",
            (f"http://127.0.0.1:{sink.server_address[1]}/hook",),
        )
    start = time.perf_counter()
    sent = webhook_worker.run_once(engine)
    elapsed = time.perf_counter() - start
    print(f"   {sent} delivered in {elapsed:.1f} s: {sent / elapsed:.0f} per second")
    sink.shutdown()


if __name__ == "__main__":
    main()
