"""1,000 long polls of one campaign's feed woken by one write (issue 50). Prints figures;
asserts nothing.

    .venv/bin/python bench/feed_wake_bench.py [--polls 1000] [--tokens 50] [--rounds 3]
        [--clients 2] [--database-url URL]

One ``crusade serve`` process (SQLite in a temporary folder by default). ``--tokens`` bots,
each with an API token of its own (a member of the campaign), open ``--polls`` long polls in
all (``GET /api/v1/campaigns/{id}/events?after=<head>&wait=60``, round robin over the
tokens) from ``--clients`` client processes (asyncio, a connection per poll, the request written
and the answer read by hand: httpx's own parsing of the answers arriving together added
seconds on the loaded machine), so the figures are the server's. When every
poll waits, the organizer writes once (a campaign setting: one event), and each poll's
answer is timed from that write. Meanwhile a process of its own asks ``/health`` every
50 ms. Per round it prints: polls answered (by status, and how many carried the event),
wake latency p50 / p95 / max, and the slowest ``/health`` answer from the write until the
last poll was answered (and its worst over the whole round, the polls' opening included).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: bench.* and tests.*
from app.db import migrate
from bench.serving import serving

PASSWORD = "a thousand bots wait"
CRUSADE = str(Path(sys.executable).with_name("crusade"))

# /health asked every 50 ms from a process of its own: what it measures is the server.
PROBE = """
import sys, time, httpx
with httpx.Client(base_url=sys.argv[1], timeout=120) as client:
    while True:
        started = time.time()
        try:
            client.get("/health")
        except httpx.HTTPError:
            pass
        print(round(started, 4), round((time.time() - started) * 1000, 1), flush=True)
        time.sleep(0.05)
"""


def world(base: str, tokens: int) -> dict[str, Any]:
    """A campaign, its organizer's client cookie and ``tokens`` members with a token each."""
    with httpx.Client(base_url=base, timeout=60) as http:
        http.post("/api/v1/auth/signup", json={"username": "organizer", "password": PASSWORD})
        http.headers["X-CSRF-Token"] = http.get("/api/v1/auth/csrf").json()["csrf_token"]
        campaign = http.post("/api/v1/campaigns", json={"name": "A thousand bots"}).json()["id"]
        private = http.patch(f"/api/v1/campaigns/{campaign}", json={"public": False})
        assert private.status_code == 200, private.text
        made: list[str] = []
        for n in range(tokens):
            if n % 100 == 0:
                invite = {"max_uses": min(100, tokens - n)}
                code = http.post(f"/api/v1/campaigns/{campaign}/invites", json=invite).json()
            with httpx.Client(base_url=base, timeout=60) as bot:
                name = f"bot{n}"
                bot.post("/api/v1/auth/signup", json={"username": name, "password": PASSWORD})
                bot.headers["X-CSRF-Token"] = bot.get("/api/v1/auth/csrf").json()["csrf_token"]
                joined = bot.post(f"/api/v1/invites/{code['code']}/accept")
                assert joined.status_code == 201, joined.text
                token = bot.post("/api/v1/auth/tokens", json={"name": name}).json()["token"]
                made.append(token)
        cookies = dict(http.cookies)
        csrf = http.headers["X-CSRF-Token"]
    return {"campaign": campaign, "tokens": made, "cookies": cookies, "csrf": csrf}


def head(base: str, w: dict[str, Any]) -> str:
    feed = f"/api/v1/campaigns/{w['campaign']}/events"
    with httpx.Client(base_url=base, cookies=w["cookies"], timeout=60) as http:
        page = http.get(feed, params={"limit": 200}).json()
        while page["more"]:
            page = http.get(feed, params={"limit": 200, "after": page["next"]}).json()
    return str(page["next"])


def client_process(
    base: str, feed: str, cursor: str, tokens: list[str], polls: int, pipe: Connection
) -> None:
    """Opens ``polls`` long polls; says "open" once all are sent; sends back (status, wall
    time of the answer, carried an event) for each. Each poll is one
    HTTP/1.1 request on a connection of its own, read to its end (``Connection: close``):
    a thousand answers arriving together cost the client next to nothing, so the latency
    measured is the server's (with httpx, the client's own parsing of 250 answers a
    process added seconds on the loaded machine)."""
    results: list[tuple[int | str, float, bool]] = []
    host, port = base.removeprefix("http://").split(":")
    path = f"{feed}?after={cursor}&wait=60"

    async def raw(n: int) -> None:
        try:
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(
                f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n"
                f"Authorization: Bearer {tokens[n % len(tokens)]}\r\n\r\n".encode()
            )
            await writer.drain()
            answer = await reader.read()
            writer.close()
        except OSError as error:
            results.append((type(error).__name__, time.time(), False))
            return
        status = int(answer[9:12])
        results.append((status, time.time(), status == 200 and b'"items":[{' in answer))

    async def run() -> None:
        tasks = []
        for n in range(polls):
            tasks.append(asyncio.create_task(raw(n)))
            if n % 50 == 49:
                await asyncio.sleep(0.05)  # opened over a moment, not all in one burst
        await asyncio.sleep(0.5)
        pipe.send("open")
        await asyncio.gather(*tasks)

    asyncio.run(run())
    pipe.send(results)


def one_round(base: str, w: dict[str, Any], args: argparse.Namespace, n: int) -> dict[str, Any]:
    feed = f"/api/v1/campaigns/{w['campaign']}/events"
    cursor = head(base, w)
    probe = subprocess.Popen([sys.executable, "-c", PROBE, base], stdout=subprocess.PIPE, text=True)
    share = [
        args.polls // args.clients + (i < args.polls % args.clients) for i in range(args.clients)
    ]
    pipes, workers = [], []
    context = multiprocessing.get_context("spawn")
    round_started = time.time()
    for i, polls in enumerate(share):
        mine, theirs = context.Pipe()
        tokens = w["tokens"][i :: args.clients] or w["tokens"]
        worker = context.Process(
            target=client_process, args=(base, feed, cursor, tokens, polls, theirs)
        )
        worker.start()
        pipes.append(mine)
        workers.append(worker)
    for pipe in pipes:
        assert pipe.recv() == "open"
    with httpx.Client(base_url=base, cookies=w["cookies"], timeout=120) as http:
        # Reads pass the admission gate in order of arrival: once this one is answered, every
        # poll sent before it has had its access checked and waits.
        opened = time.time()
        http.get(feed, params={"limit": 1})
        open_s = time.time() - opened
        time.sleep(args.settle)
        http.headers["X-CSRF-Token"] = w["csrf"]
        written = time.time()
        changed = http.patch(f"/api/v1/campaigns/{w['campaign']}", json={"description": f"{n}"})
        write_ms = (time.time() - written) * 1000
        assert changed.status_code == 200, changed.text
    results: list[tuple[int | str, float, bool]] = []
    for pipe in pipes:
        results += pipe.recv()
    for worker in workers:
        worker.join()
    time.sleep(0.3)
    probe.terminate()
    out, _ = probe.communicate(timeout=30)
    probes = [tuple(float(v) for v in line.split()) for line in out.splitlines() if line]
    last = max(at for _, at, _ in results)
    during = [ms for at, ms in probes if written - 0.05 <= at <= last]
    latencies = sorted((at - written) * 1000 for _, at, _ in results)
    return {
        "statuses": Counter(status for status, _, _ in results),
        "carried": sum(carried for _, _, carried in results),
        "latencies": latencies,
        "health_wake": max(during, default=0.0),
        "health_probes_wake": len(during),
        "health_round": max((ms for at, ms in probes if at >= round_started), default=0.0),
        "write_ms": write_ms,
        "open_s": open_s,
    }


def pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--polls", type=int, default=1000)
    parser.add_argument("--tokens", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--settle", type=float, default=1.0, help="seconds before the write")
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'wake.db'}"
        migrate.upgrade(url)
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            port = free.getsockname()[1]
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "DATA_DIR": folder,
            "PHOTO_DIR": str(Path(folder) / "photos"),
            "PASSWORD_HASHING": "fast",
            "LOG_LEVEL": "warning",
            "SECRET_KEY": "feed-wake-bench-only",
        }
        command = [CRUSADE, "serve", "--host", "127.0.0.1", "--port", str(port)]
        with serving(command, env, port) as (base, _pid):
            w = world(base, args.tokens)
            print(
                f"{url.split(':', 1)[0]}, one app process; {args.polls} long polls from "
                f"{args.clients} client processes, {args.tokens} tokens; load "
                f"{os.getloadavg()[0]:.1f}"
            )
            print(
                f"  {'round':<6}{'answered':>10}{'event':>7}{'p50 ms':>9}{'p95 ms':>9}"
                f"{'max ms':>9}{'health wake':>13}{'health round':>14}{'write ms':>10}"
                f"{'open s':>8}  statuses"
            )
            for n in range(args.rounds):
                r = one_round(base, w, args, n)
                lat = r["latencies"]
                answered = sum(c for s, c in r["statuses"].items() if s == 200)
                codes = " ".join(f"{s}x{c}" for s, c in sorted(r["statuses"].items(), key=str))
                print(
                    f"  {n + 1:<6}{answered:>10}{r['carried']:>7}{pct(lat, 50):>9.0f}"
                    f"{pct(lat, 95):>9.0f}{max(lat):>9.0f}{r['health_wake']:>13.0f}"
                    f"{r['health_round']:>14.0f}{r['write_ms']:>10.0f}{r['open_s']:>8.1f}  {codes}"
                )
    print(
        "  (latency: from the write to each answer; health wake: the slowest /health from the "
        "write to the last answer; health round: the slowest over the whole round)"
    )


if __name__ == "__main__":
    main()
