"""Every main read and a battle's resolution on a league-sized campaign, at several sizes of
its history. Prints figures; asserts nothing.

    .venv/bin/python bench/league_bench.py [--database-url URL] [--forces 50] [--units 100]
        [--battles 10,200,2000] [--requests 40] [--throughput-workers 1,2] [--workers 2]

One league (bench/league.py) is grown to each number of battles in turn; at each size:

- statements per request, counted in-process with a SQLAlchemy event listener;
- p50/p95 latency from one client against `crusade serve` in its own process (with
  ``--workers 2``, two app processes, PostgreSQL only, and a new connection for each request,
  so both processes serve), and the ratio of each request's
  throughput to /health's in the same run (the machine is shared, so absolute milliseconds
  move from run to run; the ratio is what compares runs);
- the export: time, size and the server's peak memory (VmHWM) before and after it (with
  several workers, the supervising process's, which serves nothing).

Then the growth factor of each request's p50 from the second size to the last (goal: at
most 1.2), and, with ``--throughput-workers``, read throughput with 1 and 2 server
processes and 4 client threads. The sizes are measured minutes apart, so a change in the
machine's speed meanwhile reads as growth (with two processes one read moved 1.04-1.36 over
five runs); bench/league_growth.py measures growth in paired rounds instead.
"""

from __future__ import annotations

import argparse
import functools
import os
import pickle
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from fastapi.testclient import TestClient
from sqlalchemy import Engine, event, func, text
from sqlmodel import Session, col, select

from app.db import migrate
from app.db.engine import make_engine
from app.db.models import Battle, BattleSide, Card
from app.db.session import session_scope
from app.main import create_app
from app.services.accounts import accounts
from app.services.campaigns.kept_totals import install_kept_totals

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: bench.* and tests.*

from bench import league as league_module
from bench.serving import serving

USER = {"username": "bench", "password": "bench password"}
CRUSADE = str(Path(sys.executable).with_name("crusade"))


def reads(world: dict[str, Any]) -> dict[str, str]:
    campaign, force, card = world["campaign"], world["force"], world["card"]
    return {
        "/health": "/health",
        "standings (JSON)": f"/api/v1/campaigns/{campaign}/standings",
        "campaign dashboard (page)": f"/campaigns/{campaign}",
        "Crusade card (page)": f"/cards/{card}",
        "Crusade card (JSON)": f"/api/v1/cards/{card}",
        "battles list (JSON)": f"/api/v1/campaigns/{campaign}/battles",
        "all battles (page)": f"/campaigns/{campaign}/battles",
        "Order of Battle (JSON)": f"/api/v1/forces/{force}",
        "Order of Battle (page)": f"/forces/{force}",
        "a battle (page)": f"/battles/{world['battle']}",
        "a battle (JSON)": f"/api/v1/battles/{world['battle']}",
        "requisitions (page)": f"/forces/{force}/requisitions",
    }


def latest_battle(engine: Engine, force_id: int) -> int:
    """The force's newest resolved battle (its page: both sides' units and what they did)."""
    with Session(engine) as session:
        query = (
            select(BattleSide.battle_id)
            .join(Battle, col(Battle.id) == col(BattleSide.battle_id))
            .where(BattleSide.force_id == force_id, Battle.status == "resolved")
            .order_by(col(BattleSide.battle_id).desc())
        )
        found = session.exec(query).first()
        assert found is not None
        return found


def busiest_card(engine: Engine, force_id: int) -> int:
    with Session(engine) as session:
        query = (
            select(Card.id)
            .where(Card.force_id == force_id)
            .order_by(col(Card.battles_played).desc(), col(Card.id))
        )
        card = session.exec(query).first()
        assert card is not None
        return card


def resolution(http: Any, engine: Engine, world: dict[str, Any], units: int) -> Callable[[], Any]:
    """Muster a battle of two forces with ``units`` units each (the lightest, so they fit an
    Onslaught) and return the call that records its result; the caller reverts it."""
    forces = world["pair"]
    with Session(engine) as session:
        rosters = [league_module._roster(session, f, world["rng"], units, 150) for f in forces]
    body = {
        "battle_size": "onslaught",
        "mission": "grand_assault",
        "sides": [
            {
                "force_id": forces[i],
                "role": role,
                "roster": rosters[i],
                "agendas": ["assassins", "first_strike", "sentinel", "witch_hunter"],
            }
            for i, role in enumerate(("attacker", "defender"))
        ],
    }
    response = http.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=body)
    assert response.status_code == 201, response.text
    battle = response.json()["id"]
    rng = world["rng"]
    results = [[_unit_result(rng, c) for c in rosters[i]] for i in range(2)]
    with Session(engine) as session:
        league_module.bound(session, results, [["assassins", "first_strike"]] * 2, [None, None])
    result = {
        "sides": [
            {"force_id": forces[i], "victory_points": 70 - 30 * i, "units": results[i]}
            for i in range(2)
        ]
    }

    def post() -> Any:
        answer = http.post(f"/api/v1/battles/{battle}/result", json=result)
        assert answer.status_code == 200, answer.text
        return battle

    return post


def _unit_result(rng: Any, card_id: int) -> dict[str, Any]:
    ranged, melee = rng.choice((0, 1, 2)), rng.choice((0, 0, 1))
    return {
        "card_id": card_id,
        "destroyed": rng.random() < 0.3,
        "destroyed_ranged": ranged,
        "destroyed_melee": melee,
    }


def revert(http: Any, battle: int) -> None:
    response = http.post(f"/api/v1/battles/{battle}/revert")
    assert response.status_code == 200, response.text


# --- statements ----------------------------------------------------------------------------


class StatementCounter:
    def __init__(self, engine: Engine) -> None:
        self.count = 0
        event.listen(engine, "before_cursor_execute", self._seen)

    def _seen(self, *_args: Any) -> None:
        self.count += 1

    def of(self, call: Callable[[], Any]) -> tuple[int, Any]:
        start = self.count
        result = call()
        return self.count - start, result


def count_statements(
    client: TestClient, engine: Engine, counter: StatementCounter, world: dict[str, Any]
) -> dict[str, int]:
    counts = {}
    for name, url in reads(world).items():
        counts[name], response = counter.of(functools.partial(client.get, url))
        assert response.status_code == 200, (url, response.text[:300])
    counts["export"], _ = counter.of(
        lambda: client.get(f"/api/v1/campaigns/{world['campaign']}/export")
    )
    for units in (5, 20):
        post = resolution(client, engine, world, units)
        counts[f"resolve ({units} units a side)"], battle = counter.of(post)
        revert(client, battle)
    return counts


# --- a live server ---------------------------------------------------------------------------


@contextmanager
def server(database_url: str, workers: int = 1) -> Iterator[tuple[str, int]]:
    """`crusade serve` in its own process on a free loopback port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [CRUSADE, "serve", "--host", "127.0.0.1", "--port", str(port)]
    if workers > 1:
        command += ["--workers", str(workers)]
    env = {**os.environ, "DATABASE_URL": database_url, "LOG_LEVEL": "warning"}
    with serving(command, env, port) as running:
        yield running


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def timed(call: Callable[[], Any], requests: int) -> list[float]:
    for _ in range(3):  # warm-up
        call()
    latencies = []
    for _ in range(requests):
        start = time.perf_counter()
        call()
        latencies.append((time.perf_counter() - start) * 1000)
    return latencies


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def measure(
    url: str, engine: Engine, world: dict[str, Any], requests: int, workers: int = 1
) -> tuple[dict[str, list[float]], dict[str, float]]:
    latency: dict[str, list[float]] = {}
    extra: dict[str, float] = {}
    with (
        server(url, workers) as (base, pid),
        httpx.Client(base_url=base, timeout=300, limits=_connections(workers)) as http,
    ):
        login = http.post("/api/v1/auth/login", json=USER)
        assert login.status_code == 200, login.text
        http.headers["X-CSRF-Token"] = http.get("/api/v1/auth/csrf").json()["csrf_token"]
        for name, path in reads(world).items():
            latency[name] = timed(functools.partial(http.get, path), requests)
        for _ in range(3):  # warm-up, as each read has: the first result compiles its statements
            revert(http, resolution(http, engine, world, 20)())
        resolve = []
        for _ in range(max(10, requests // 2)):
            post = resolution(http, engine, world, 20)
            start = time.perf_counter()
            battle = post()
            resolve.append((time.perf_counter() - start) * 1000)
            revert(http, battle)
        latency["resolve (2 x 20 units)"] = resolve
        extra["rss before export MB"] = peak_rss_mb(pid)
        exports = []
        for _ in range(2):
            start = time.perf_counter()
            size = 0
            with http.stream("GET", f"/api/v1/campaigns/{world['campaign']}/export") as response:
                for chunk in response.iter_bytes():
                    size += len(chunk)
            exports.append((time.perf_counter() - start) * 1000)
        latency["export"] = exports
        extra["export MB"] = size / 1e6
        extra["rss after export MB"] = peak_rss_mb(pid)
    return latency, extra


def _connections(workers: int) -> httpx.Limits:
    """One process: one kept connection. Several: a new connection for every request, so
    the kernel hands each to any of the processes, as it does a league's many players' (a
    kept connection stays with the process that accepted it: every request of the run
    went to one process, and the second served nothing). A read then often follows a
    resolution made by the other process, whose writes it must see."""
    if workers > 1:
        return httpx.Limits(max_keepalive_connections=0)
    return httpx.Limits()


def throughput(url: str, world: dict[str, Any], workers: int, requests: int) -> dict[str, float]:
    paths = reads(world)
    rates = {}
    names = ("/health", "standings (JSON)", "Crusade card (page)", "Order of Battle (JSON)")
    with server(url, workers) as (base, _pid), httpx.Client(base_url=base, timeout=60) as http:
        for name in names:
            calls = [paths[name]] * requests
            with ThreadPoolExecutor(4) as pool:
                list(pool.map(http.get, calls[:20]))
                start = time.perf_counter()
                list(pool.map(http.get, calls))
            rates[name] = requests / (time.perf_counter() - start)
    return rates


# --- the run -----------------------------------------------------------------------------------


def main() -> None:
    install_kept_totals()  # the set-up writes cards without the app
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--database-url", default="")
    parser.add_argument("--forces", type=int, default=50)
    parser.add_argument("--units", type=int, default=100)
    parser.add_argument("--battles", default="10,200,2000")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--throughput-workers", default="")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="app processes of the server the latencies are taken from (2+: PostgreSQL)",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="load each size's league from --cache if it is there (else generate and save it)",
    )
    parser.add_argument("--cache", type=Path, default=CACHE)
    args = parser.parse_args()
    sizes = [int(n) for n in args.battles.split(",")]
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'league.db'}"
        run(url, args, sizes)


def run(url: str, args: argparse.Namespace, sizes: list[int]) -> None:
    saved = SavedLeagues(args.cache, url, args.forces, args.units) if args.reuse else None
    engine: Engine | None = None
    league: league_module.League | None = None
    world: dict[str, Any] = {"rng": random.Random(99)}
    table: dict[int, tuple[dict[str, int], dict[str, list[float]], dict[str, float]]] = {}
    for size in sizes:
        start = time.perf_counter()
        if saved is not None and saved.has(size):
            if engine is not None:
                engine.dispose()
            league = saved.load(size)
            migrate.upgrade(url)  # a league saved by older code gets the newer migrations
            engine = make_engine(url)
            took = time.perf_counter() - start
            print(f"loaded {size} battles from {saved.path(size)}: {took:.0f} s")
        else:
            if engine is None or league is None:
                engine, league = _new_league(url, args)
            league_module.grow(engine, league, size)
            print(f"grown to {size} battles: {time.perf_counter() - start:.0f} s")
            if saved is not None:
                engine.dispose()
                saved.save(size, league)
                print(f"saved as {saved.path(size)}")
        analyze(engine)
        world.update(
            campaign=league.campaign_id, force=league.force_ids[0], pair=league.force_ids[-2:]
        )
        world["card"] = busiest_card(engine, league.force_ids[0])
        world["battle"] = latest_battle(engine, league.force_ids[0])
        counter = StatementCounter(engine)
        with TestClient(create_app(engine)) as client:
            client.post("/api/v1/auth/login", json=USER)
            client.headers["X-CSRF-Token"] = client.get("/api/v1/auth/csrf").json()["csrf_token"]
            counts = count_statements(client, engine, counter, world)
        latency, extra = measure(url, engine, world, args.requests, args.workers)
        table[size] = (counts, latency, extra)
        report_size(size, counts, latency, extra)
    report_growth(table, sizes)
    for workers in [int(n) for n in args.throughput_workers.split(",") if n]:
        rates = throughput(url, world, workers, args.requests * 10)
        print(f"\nthroughput with {workers} worker(s), 4 client threads:")
        for name, rate in rates.items():
            print(f"  {name:<28}{rate:8.0f} req/s")
    assert engine is not None and league is not None
    with Session(engine) as session:
        cards = session.exec(select(func.count()).select_from(Card)).one()
    print(f"\n{cards} cards; {league.battles} battles played ({league.reverted} reverted)")
    engine.dispose()


def analyze(engine: Engine) -> None:
    """The planner's statistics, as a running server's autovacuum keeps them: a league just
    grown or restored has none, and a machine's PostgreSQL may run with autovacuum off (this
    one's does). Without them the planner guessed 118 sides a battle and a dashboard read
    walked every side (issue 50)."""
    with engine.connect() as connection:
        connection.execute(text("ANALYZE"))
        connection.commit()


def _new_league(url: str, args: argparse.Namespace) -> tuple[Engine, league_module.League]:
    migrate.upgrade(url)
    engine = make_engine(url)
    print(f"database: {engine.url.get_backend_name()}; {args.forces} forces x {args.units} units")
    with session_scope(engine) as session:
        user = accounts.create_user(session, username=USER["username"], password=USER["password"])
        organizer = user.id
    start = time.perf_counter()
    league = league_module.create(
        engine, forces_count=args.forces, units=args.units, organizer_id=organizer
    )
    print(f"forces and units: {time.perf_counter() - start:.0f} s")
    return engine, league


# --- leagues saved for the next run ------------------------------------------------------

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "crusade-league"


class SavedLeagues:
    """Generated leagues kept between runs, one per size, keyed by the parameters and the
    seed (bench/league.py's, fixed): an SQLite file copied whole, or a PostgreSQL custom-
    format dump (pg_dump / pg_restore, which must match the server's major version). The
    league's state (ids, battles played, its dice) is kept beside it, so the next size
    can grow on from a loaded one. Loading replaces the whole database at ``url``: give
    the benchmark a database of its own."""

    def __init__(self, folder: Path, url: str, forces: int, units: int) -> None:
        self.folder, self.url = folder, url
        self.sqlite = url.startswith("sqlite")
        self.key = f"f{forces}-u{units}-seed{league_module.SEED}"

    def path(self, size: int) -> Path:
        suffix = "db" if self.sqlite else "pgdump"
        return self.folder / f"league-{self.key}-b{size}.{suffix}"

    def has(self, size: int) -> bool:
        return self.path(size).exists() and self._state(size).exists()

    def save(self, size: int, league: league_module.League) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.path(size)
        if self.sqlite:  # the engine is disposed: the WAL is checkpointed into the file
            shutil.copyfile(self._sqlite_file(), target)
        else:
            subprocess.run(
                ["pg_dump", "--format=custom", "--no-owner", f"--file={target}", self._libpq()],
                check=True,
            )
        self._state(size).write_bytes(pickle.dumps(league))

    def load(self, size: int) -> league_module.League:
        source = self.path(size)
        if self.sqlite:
            database = self._sqlite_file()
            for extra in ("-wal", "-shm"):
                Path(f"{database}{extra}").unlink(missing_ok=True)
            shutil.copyfile(source, database)
        else:
            subprocess.run(
                [
                    "psql",
                    "--quiet",
                    self._libpq(),
                    "-c",
                    "DROP SCHEMA public CASCADE",
                    "-c",
                    "CREATE SCHEMA public",
                ],
                check=True,
            )
            subprocess.run(
                ["pg_restore", "--no-owner", f"--dbname={self._libpq()}", str(source)],
                check=True,
            )
        league: league_module.League = pickle.loads(self._state(size).read_bytes())
        return league

    def _state(self, size: int) -> Path:
        return self.path(size).with_name(self.path(size).name + ".state")

    def _sqlite_file(self) -> Path:
        return Path(self.url.removeprefix("sqlite:///"))

    def _libpq(self) -> str:
        return self.url.replace("postgresql+psycopg://", "postgresql://")


def report_size(
    size: int, counts: dict[str, int], latency: dict[str, list[float]], extra: dict[str, float]
) -> None:
    health = statistics.mean(latency["/health"])
    print(f"\n{size} battles:")
    print(f"  {'request':<30}{'p50 ms':>9}{'p95 ms':>9}{'stmts':>7}{'x /health':>11}")
    for name, values in latency.items():
        ratio = health / statistics.mean(values)
        p95 = pct(values, 95) if len(values) > 2 else max(values)
        stmts = counts.get(name, counts.get("resolve (20 units a side)", 0))
        if name == "export":
            stmts = counts["export"]
        print(f"  {name:<30}{statistics.median(values):>9.1f}{p95:>9.1f}{stmts:>7}{ratio:>11.2f}")
    print(f"  statements, resolve 5 units a side: {counts['resolve (5 units a side)']}")
    print(
        f"  export {extra['export MB']:.1f} MB; server peak RSS {extra['rss before export MB']:.0f}"
        f" MB before, {extra['rss after export MB']:.0f} MB after"
    )


def report_growth(table: dict[int, Any], sizes: list[int]) -> None:
    if len(sizes) < 2:
        return
    small, large = sizes[-2], sizes[-1]
    print(f"\ngrowth of p50 from {small} to {large} battles (goal <= 1.2):")
    for name in table[large][1]:
        before = statistics.median(table[small][1][name])
        after = statistics.median(table[large][1][name])
        print(f"  {name:<30}{after / before:>6.2f}")


if __name__ == "__main__":
    main()
