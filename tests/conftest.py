"""Databases for the tests: a real SQLite file always, and PostgreSQL when
TEST_DATABASE_URL names one (in CI it must). Each is one engine per pytest process, its
database made empty again before each test (SQLite: the migrated template copied in;
PostgreSQL: every table emptied), so compiled statements last the whole run.

Set-up that many tests repeat (the organizer's sign-up behind `client`, a campaign with
players and forces) is made once per backend and pytest process (each xdist worker is one)
and then restored from a snapshot of the database: see `prepared`."""

from __future__ import annotations

import asyncio
import atexit
import gc
import itertools
import os
import secrets
import shutil
import sqlite3
import tempfile
import time
import weakref
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import coverage
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Connection, Engine, event, make_url, text
from sqlmodel import Session

from app.cli import FULL_COLLECTION_EVERY
from app.db import migrate
from app.db.engine import make_engine
from app.db.models import metadata
from app.db.session import session_scope
from app.main import _shared_routes, create_app
from app.services.campaigns.kept_totals import install_kept_totals


def in_own_loop(work: Coroutine[Any, Any, Any]) -> Any:
    """Run ``work`` on an event loop in a thread of its own: an xdist worker that ran the
    browser tests holds Playwright's loop in its main thread, where asyncio.run() is
    refused."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


# Sessions are signed with this key in tests, so no secret file is written anywhere.
os.environ.setdefault("SECRET_KEY", "test-only-secret-key")
os.environ.setdefault("PASSWORD_HASHING", "fast")  # argon2 at its cheapest: tests only
# Bots in tests (the fuzzer, the bursts) make thousands of requests a minute with one token;
# tests/api/test_token_rate_limits.py sets its own limits.
os.environ.setdefault("API_TOKEN_REQUESTS_PER_MINUTE", "1000000")
# A shared, loaded machine decodes a 50 MP photo slowly: the tests that are about these
# limits set them small themselves (tests/api/test_bounded_decoding.py).
os.environ.setdefault("PHOTO_DECODE_SECONDS", "90")
os.environ.setdefault("PHOTO_DECODE_CPU_SECONDS", "60")
# Battle photos (issue 23) go to a folder of this test process's own, never the project's.
# Each xdist worker makes its own: workers inherit the controller's environment, and two
# workers' databases both number their first photo 1.
os.environ["PHOTO_DIR"] = tempfile.mkdtemp(
    prefix=f"crusade-test-photos-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}-"
)
atexit.register(shutil.rmtree, os.environ["PHOTO_DIR"], True)
# Many tests write through the services without an app: switch on what create_app() does.
install_kept_totals()
POSTGRES_URL = os.environ.get("TEST_DATABASE_URL", "")
BACKENDS = ["sqlite", "postgresql"] if POSTGRES_URL else ["sqlite"]
T = TypeVar("T")


# --- sharing the tests between xdist workers (`make test`) ---------------------------------

# Tests that must run on one worker, one after another, by path (from the tests folder):
GROUPS = {
    # Two browser groups of about two minutes each (measured alone: 120 s and 123 s), so
    # both workers play browser tests from the start instead of one worker playing them all
    # while the other idles at the end (issue 24). Each worker starts its own Chromium and
    # live server (session fixtures), once. The first match wins: these files before
    # "browser/".
    **dict.fromkeys(
        (
            "browser/test_wizard_nothing_lost.py",
            "browser/test_accounts_flow.py",
            "browser/test_one_phone.py",
            "browser/test_tap_budget.py",
            "browser/test_roster_entry.py",
            "browser/test_connection.py",
            "browser/test_offline_rebase.py",
            "browser/test_local_time.py",
            "browser/test_roster_import.py",
        ),
        "browser-2",
    ),
    "browser/": "browser",
    # Real servers raced with requests at once, or killed: never two at the same time.
    "api/test_live_server.py": "live-servers",
    "api/test_races.py": "live-servers",
    "api/test_crash.py": "live-servers",
    "api/test_example_bot.py": "live-servers",
    "api/test_burst.py": "live-servers",
    "api/test_hostile_uploads_live.py": "live-servers",
    # A module-scoped seeded world: made once, on one worker.
    "api/test_fuzz.py": "fuzz",
    # A client generated from the schema (4-5 s of CPU, once per worker): on one worker.
    "api/test_bot_walkthrough.py": "generated-client",
    # A webhook receiver (an HTTP server in the test process) stopped and started again.
    "api/test_webhooks.py": "webhook-receiver",
    "services/feed/test_worker_cli.py": "webhook-receiver",
    "faults/test_webhook_worker.py": "webhook-receiver",
}


def xdist_group(nodeid: str) -> str | None:
    """The group a test runs in (see GROUPS), or None: any worker, one test at a time."""
    path = nodeid.split("::", 1)[0].removeprefix("tests/")
    return next((g for prefix, g in GROUPS.items() if path.startswith(prefix)), None)


# The order groups are handed out in (measured, issue 24): the two browser groups never at
# the same time (two Chromiums and two servers on 2 cores made each group 70 % slower: the
# run took 527 s), the other groups on the second worker meanwhile, and only single tests
# left to share out at the end. The first two go one to each worker at once.
GROUP_ORDER = ("browser", "fuzz", "live-servers", "browser-2", "webhook-receiver")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Grouped tests first, in GROUP_ORDER, then the rest as collected (a stable sort: the
    tests of a group keep their order)."""
    rank = {group: n for n, group in enumerate(GROUP_ORDER)}
    items.sort(key=lambda item: rank.get(xdist_group(item.nodeid) or "", len(rank)))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup`, with the groups above: pytest-xdist reads its `xdist_group`
    marks from node ids that pytest 9.2 no longer lets it change (pytest-xdist#1386), so
    the groups are given here, by path, and handed out in collection order (GROUP_ORDER
    first), not xdist's largest-count-first (the fuzz group has the most tests, not the
    most time)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False

    class PathGroups(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(nodeid) or nodeid

        def _assign_work_unit(self, node: Any) -> None:
            """The second browser group never starts while another worker still plays the
            first: a worker that asks meanwhile gets the next unit after it, and the
            browser group stays first in line (for the worker ending the first group). A
            faster fuzz group once let both run at once: each 70 % slower."""
            if next(iter(self.workqueue)) != "browser-2" or not self._first_elsewhere(node):
                super()._assign_work_unit(node)
                return
            held = self.workqueue.pop("browser-2")
            try:
                if self.workqueue:
                    super()._assign_work_unit(node)
            finally:
                self.workqueue["browser-2"] = held
                self.workqueue.move_to_end("browser-2", last=False)

        def _first_elsewhere(self, node: Any) -> bool:
            return any(
                not all(work.get("browser", {None: True}).values())
                for other, work in self.assigned_work.items()
                if other is not node
            )

    return PathGroups(config, log)


# --- the databases -------------------------------------------------------------------------


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One migrated SQLite file, copied for each test (much faster than migrating)."""
    path = tmp_path_factory.mktemp("template") / "template.db"
    migrate.upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def sqlite_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """This process's one SQLite engine: each test's database is the template copied into
    its file (as each PostgreSQL test's is this process's database emptied). One engine, so
    SQLAlchemy's compiled statements are kept from test to test: an engine per test compiled
    every statement again, a tenth of the SQLite tests' time."""
    path = tmp_path_factory.mktemp("sqlite") / "crusade.db"
    engine = make_engine(f"sqlite:///{path}")
    watch_writes(engine)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def postgres_engine() -> Iterator[Engine]:
    """A database of this process's own on the TEST_DATABASE_URL server (so two runs, or two
    xdist workers, never share tables); dropped at the end."""
    server = make_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    name = f"crusade_test_{os.getpid()}_{secrets.token_hex(3)}"
    with server.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    migrate.upgrade(url)
    engine = make_engine(url)
    watch_writes(engine)
    yield engine
    engine.dispose()
    with server.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    server.dispose()


@pytest.fixture(params=BACKENDS)
def engine(request: pytest.FixtureRequest, sqlite_template: Path) -> Iterator[Engine]:
    """An empty, migrated database: this process's SQLite file with the migrated template
    copied in, or this process's PostgreSQL database with every table emptied and every id
    sequence restarted."""
    if request.param == "sqlite":
        sqlite: Engine = request.getfixturevalue("sqlite_engine")
        sqlite.dispose()  # no connection of the last test's reads the file being replaced
        _sqlite_copy(sqlite_template, _sqlite_path(sqlite))
        state(sqlite).now = EMPTY
        yield sqlite
        sqlite.dispose()
        return
    pg: Engine = request.getfixturevalue("postgres_engine")
    empty_postgres(pg)
    yield pg


def empty_postgres(pg: Engine) -> None:
    """Every table emptied and every sequence restarted (as TRUNCATE ... RESTART IDENTITY
    would; DELETE is much cheaper on tables this small), in one round trip."""
    with pg.begin() as connection:
        connection.exec_driver_sql(_postgres_scripts(pg).empty)
    state(pg).now = EMPTY


@dataclass
class _Scripts:
    empty: str
    sequences: list[str]


_scripts: dict[str, _Scripts] = {}


def _postgres_scripts(pg: Engine) -> _Scripts:
    key = pg.url.render_as_string(hide_password=False)
    if key not in _scripts:
        with pg.connect() as connection:
            sequences = [
                f'"{schema}"."{name}"'
                for schema, name in connection.exec_driver_sql(
                    "SELECT schemaname, sequencename FROM pg_sequences "
                    "WHERE schemaname = current_schema() ORDER BY 2"
                )
            ]
        deletes = [f'DELETE FROM "{t.name}";' for t in reversed(metadata.sorted_tables)]
        restarts = ", ".join(f"setval('{s}', 1, false)" for s in sequences)
        empty = " ".join(deletes) + (f" SELECT {restarts};" if restarts else "")
        _scripts[key] = _Scripts(empty=empty, sequences=sequences)
    return _scripts[key]


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    with session_scope(engine) as s:
        yield s


# --- snapshots of prepared data ------------------------------------------------------------

EMPTY = "empty"
_READS = ("SELECT", "PRAGMA", "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "SHOW")


@dataclass
class _State:
    """What an engine's database holds, as far as snapshots are concerned: EMPTY, the id of
    the snapshot last made or restored, or None once anything else has written to it."""

    now: str | None = None


_states: weakref.WeakKeyDictionary[Engine, _State] = weakref.WeakKeyDictionary()


def state(engine: Engine) -> _State:
    return _states.setdefault(engine, _State())


def watch_writes(engine: Engine, now: str | None = None) -> None:
    """Any statement through `engine` that may write forgets which snapshot it holds."""
    current = state(engine)
    current.now = now

    @event.listens_for(engine, "before_cursor_execute")
    def _written(
        _conn: Any, _cursor: Any, statement: str, _params: Any, _context: Any, _many: bool
    ) -> None:
        if current.now is not None and not statement.lstrip().upper().startswith(_READS):
            current.now = None


@dataclass
class ClientState:
    """A TestClient's cookies and headers, to make the same caller again on another app."""

    cookies: list[tuple[str, str, str, str]]
    headers: dict[str, str]

    @classmethod
    def of(cls, client: TestClient) -> ClientState:
        cookies = [(c.name, c.value or "", c.domain, c.path) for c in client.cookies.jar]
        return cls(cookies=cookies, headers=dict(client.headers))

    def onto(self, client: TestClient) -> TestClient:
        client.cookies.clear()
        for name, value, domain, path in self.cookies:
            client.cookies.set(name, value, domain=domain, path=path)
        client.headers.update(self.headers)
        return client


def _freeze(value: Any) -> Any:
    if isinstance(value, TestClient):
        return ClientState.of(value)
    if isinstance(value, dict):
        return {k: _freeze(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_freeze(v) for v in value)
    return value


def _thaw(value: Any, make_client: Callable[[], TestClient]) -> Any:
    if isinstance(value, ClientState):
        return value.onto(make_client())
    if isinstance(value, dict):
        return {k: _thaw(v, make_client) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_thaw(v, make_client) for v in value)
    return value


@dataclass
class _Snapshot:
    id: str
    counts: list[int]  # rows per table before the set-up ran (a check, see `prepared`)
    value: Any  # what the set-up returned, its clients frozen
    sqlite_file: Path | None = None
    tables: list[str] = field(default_factory=list)  # PostgreSQL: those with rows
    sequences: dict[str, int | None] = field(default_factory=dict)  # PostgreSQL


class Snapshots:
    """Snapshots of databases after a set-up, per (backend, state before, set-up name)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.saved: dict[tuple[str, str, str], _Snapshot] = {}
        self._ids = itertools.count(1)

    def prepared(
        self,
        engine: Engine,
        name: str,
        build: Callable[[], T],
        make_client: Callable[[], TestClient],
    ) -> T:
        """`build()` once per backend; later, when the database is in the same state as
        before that first run (known because this process made or restored it through
        this engine, and nothing else wrote since; the row counts must agree too), the
        database as it was after it, and its return value with each TestClient made anew
        by `make_client()` with the same cookies and headers. Only for set-up whose effect
        lies in the database (not, e.g., in an app's rate-limit counters)."""
        before = state(engine).now
        key = (engine.dialect.name, before or "", name)
        snapshot = self.saved.get(key) if before is not None else None
        if snapshot is not None and snapshot.counts == _row_counts(engine):
            self._restore(engine, snapshot)
            return _thaw(snapshot.value, make_client)  # type: ignore[no-any-return]
        counts = _row_counts(engine) if before is not None else []
        value = build()
        if before is not None and key not in self.saved:
            self.saved[key] = self._save(engine, counts, _freeze(value))
            state(engine).now = self.saved[key].id
        return value

    def _save(self, engine: Engine, counts: list[int], value: Any) -> _Snapshot:
        snapshot = _Snapshot(id=f"snap_{next(self._ids)}", counts=counts, value=value)
        if engine.dialect.name == "sqlite":
            snapshot.sqlite_file = self.folder / f"{snapshot.id}.db"
            _sqlite_copy(_sqlite_path(engine), snapshot.sqlite_file)
            return snapshot
        with engine.begin() as connection:
            script = [f'CREATE SCHEMA "{snapshot.id}";']
            script += [
                f'CREATE TABLE "{snapshot.id}"."{t.name}" AS TABLE "{t.name}";'
                for t in metadata.sorted_tables
            ]
            connection.exec_driver_sql(" ".join(script))
            counts = _row_counts(connection)
            tables = zip(metadata.sorted_tables, counts, strict=True)
            snapshot.tables = [table.name for table, rows in tables if rows]
            for sequence in _postgres_scripts(engine).sequences:
                last = connection.exec_driver_sql(
                    f"SELECT CASE WHEN is_called THEN last_value END FROM {sequence}"
                ).scalar()
                snapshot.sequences[sequence] = last
        return snapshot

    def _restore(self, engine: Engine, snapshot: _Snapshot) -> None:
        if snapshot.sqlite_file is not None:
            engine.dispose()
            _sqlite_copy(snapshot.sqlite_file, _sqlite_path(engine))
        else:
            script = [_postgres_scripts(engine).empty]
            script += [
                f'INSERT INTO "{table}" SELECT * FROM "{snapshot.id}"."{table}";'
                for table in snapshot.tables
            ]
            setvals = [
                f"setval('{s}', {last}, true)" if last is not None else f"setval('{s}', 1, false)"
                for s, last in snapshot.sequences.items()
            ]
            if setvals:
                script.append(f"SELECT {', '.join(setvals)};")
            with engine.begin() as connection:
                connection.exec_driver_sql(" ".join(script))
        state(engine).now = snapshot.id


def _sqlite_path(engine: Engine) -> Path:
    assert engine.url.database
    return Path(engine.url.database)


def _sqlite_copy(source: Path, target: Path) -> None:
    """SQLite's online backup: a consistent copy, whatever the WAL holds."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    src.close()
    dst.close()


def _row_counts(bind: Engine | Connection) -> list[int]:
    """Rows in each table (in metadata.sorted_tables' order), in one query."""
    query = " UNION ALL ".join(
        f'SELECT {i}, COUNT(*) FROM "{t.name}"' for i, t in enumerate(metadata.sorted_tables)
    )
    if isinstance(bind, Connection):
        return [n for _, n in sorted(bind.exec_driver_sql(query).all())]
    with bind.connect() as connection:
        return [n for _, n in sorted(connection.exec_driver_sql(query).all())]


@pytest.fixture(scope="session")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> Snapshots:
    return Snapshots(tmp_path_factory.mktemp("snapshots"))


# --- clients -------------------------------------------------------------------------------


def with_csrf(client: TestClient) -> TestClient:
    """Send the session's CSRF token with every request, as the website's pages do."""
    token = client.get("/api/v1/auth/csrf").json()["csrf_token"]
    client.headers["X-CSRF-Token"] = token
    return client


ORGANIZER = {"username": "orga", "password": "organizer password", "display_name": "Orga"}


@pytest.fixture
def client(engine: Engine, snapshots: Snapshots) -> Iterator[TestClient]:
    """A client logged in as the install's first account (so a site admin)."""
    with TestClient(create_app(engine)) as test_client:

        def sign_up() -> TestClient:
            signed_up = test_client.post("/api/v1/auth/signup", json=ORGANIZER)
            assert signed_up.status_code == 201, signed_up.text
            return with_csrf(test_client)

        made = snapshots.prepared(engine, "organizer", sign_up, lambda: test_client)
        assert made is test_client
        yield test_client


@pytest.fixture
def anonymous(engine: Engine) -> Iterator[TestClient]:
    """A client with no account, on an install with no accounts yet."""
    with TestClient(create_app(engine)) as test_client:
        yield test_client


# --- where the time goes (issue 24) --------------------------------------------------------

_group_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Each test's set-up, call and tear-down, added to its group's time (on the controller
    too, under xdist: the workers' reports arrive there)."""
    group = xdist_group(report.nodeid) or "any worker"
    _group_seconds[group] = _group_seconds.get(group, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Each group's time: a group runs on one worker, one test after another, so its time is
    the wall time that worker spends on it; the longest group bounds the whole run."""
    if not _group_seconds:
        return
    terminalreporter.section("time by group (seconds, set-up and tear-down included)")
    for group, seconds in sorted(_group_seconds.items(), key=lambda g: -g[1]):
        terminalreporter.write_line(f"{seconds:9.1f}  {group}")
    load = ", ".join(f"{n:.2f}" for n in os.getloadavg())
    terminalreporter.write_line(
        f"machine: {_reference_workload_ms():.0f} ms for the reference workload (90 ms on "
        f"the quiet 2-core machine of 2026-11-26, whose make test took 6:24); load {load}"
    )


def _reference_workload_ms() -> float:
    """A fixed pure-Python loop, timed after the run: the same commit's wall time moves with
    the machine it lands on (another host, a busy neighbour), and this says which."""
    start = time.perf_counter()
    total = 0
    for i in range(3_000_000):
        total += i * i
    return (time.perf_counter() - start) * 1000


# --- coverage on one engine (issue 24) -----------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Coverage is traced while a test runs on SQLite (and for every test without an engine)
    and paused while the same test runs again on PostgreSQL, set-up included: both runs go
    through the same app code, so the second adds almost no covered line but costs the
    tracer's 40 % of its time. The code only PostgreSQL runs (app/db's dialect branches) is
    traced by the tests of tests/db, which keep coverage on."""
    controller = _coverage(item) if _on_postgresql(item) else None
    if controller is None:
        return (yield)
    # pytest-cov's own pause (as its `no_cover` mark does), and then any Coverage the
    # worker's start-up began for subprocess coverage: stopping the top one of coverage's
    # stack resumes the one below it.
    controller.pause()
    below = []
    while (other := coverage.Coverage.current()) is not None:
        other.stop()
        below.append(other)
    try:
        return (yield)
    finally:
        for other in reversed(below):
            other.start()
        controller.resume()


def _coverage(item: pytest.Item) -> Any:
    if item.nodeid.startswith("tests/db/"):
        return None
    plugin = item.config.pluginmanager.getplugin("_cov")
    controller = getattr(plugin, "cov_controller", None)
    return controller if controller is not None and controller.started else None


def _on_postgresql(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and "postgresql" in callspec.params.values()


# --- the garbage collector (issue 24) --------------------------------------------------------


def pytest_collection_finish(session: pytest.Session) -> None:
    """What every test shares is made once (the app's routes and rule tables, the test
    modules) and then moved out of the garbage collector's sight, as `crusade serve` does
    (app/cli.py's served_app): each full collection during a test no longer walks it all
    (measured on three busy test files run side by side, with and without: 6 % less
    processor time, the full collections' time 18.8 s -> 16.2 s).

    Then the collector runs rarer: a young collection every 35,000 allocations (Python's
    700 is made for long-lived programs; a test's objects die with it, most by their
    reference count) and a full one a tenth as often (tests/web and tests/services, two
    workers: 62-65 s -> 57 s, processor time 89-94 s -> 81 s; issue 50)."""
    _shared_routes()
    gc.collect()
    gc.freeze()
    young, middle, _full = gc.get_threshold()
    gc.set_threshold(young * 50, middle, FULL_COLLECTION_EVERY)
