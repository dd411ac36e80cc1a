"""Database engine: SQLite by default (WAL, foreign keys on), PostgreSQL via DATABASE_URL."""

from __future__ import annotations

import select
import sqlite3
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Engine, event, exc, make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import StaticPool
from sqlmodel import create_engine

from app.db.updates import send_updates_whole

# Each app process admits at most MAX_REQUESTS_AT_WORK (8 by default) requests at a time
# (app/edge/admission.py), each using one connection at a time; the pool leaves room beyond
# them for the long polls' shared check and the webhook worker. See docs/deploy.md.
POOL = {"pool_size": 12, "max_overflow": 8, "pool_timeout": 10}
# A server that does not answer (a host gone, packets dropped) fails a connection in 5 s,
# answered 503 database_unavailable (app/faults.py), instead of holding the request for
# the operating system's two minutes.
PG_CONNECT = {"connect_timeout": 5}


def dump_json(value: Any) -> str:
    """A JSON column's text. orjson: a battle's result writes some 60 JSON values and reads
    some 230 (its cards' honours, scars and tallies), a millisecond of the stdlib's json
    (issue 50). Keys that are not strings (a card id) are written as strings, as json.dumps
    writes them."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


# Every engine (and the event loop's twins) reads and writes JSON columns with these.
JSON_CODEC: dict[str, Any] = {"json_serializer": dump_json, "json_deserializer": orjson.loads}


def make_engine(url: str, **options: Any) -> Engine:
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    connect_args = options.pop("connect_args", {})
    if not url.startswith("sqlite"):
        connect_args = {**PG_CONNECT, **connect_args}
        engine = create_engine(url, connect_args=connect_args, **{**POOL, **JSON_CODEC, **options})
        _ping_when_told(engine)
        send_updates_whole(engine)
        return engine
    path = make_url(url).database
    in_memory = path in (None, "", ":memory:")
    if path and not in_memory:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    pool = {} if in_memory else POOL  # an in-memory database is one connection's own
    connect_args = {"check_same_thread": False, "timeout": 15, **connect_args}
    engine = create_engine(
        url,
        connect_args=connect_args,
        **{**pool, **JSON_CODEC, **_never_created(path, connect_args), **options},
    )
    event.listen(engine, "connect", _sqlite_pragmas)
    event.listen(engine, "begin", _sqlite_begin)
    return engine


def _never_created(path: str | None, connect_args: dict[str, Any]) -> dict[str, Any]:
    """A database file that exists is opened for reading and writing only, never created:
    a server whose file vanished for a moment (a restore done by hand, a disk remounted)
    answers 503 database_unavailable until it is back, instead of making an empty
    database there and serving (and storing) on it. A file that does not exist yet is
    made by the first connection, as on an install's first start."""
    if not path or path == ":memory:" or path.startswith("file:") or not Path(path).exists():
        return {}
    uri = Path(path).absolute().as_uri() + "?mode=rw"
    return {"creator": lambda: sqlite3.connect(uri, uri=True, **connect_args)}


# A quick read's access check may run on the event loop itself (app/db/session.py) on
# SQLite, through a connection of the loop's own: one, used by one thread, never waited for
# in a pool; a read in WAL mode waits for no writer, and where the file is busy anyway
# (its recovery), it gives up at once and the check goes to the thread pool instead.
LOOP_BUSY_TIMEOUT = 0.05  # seconds


def make_loop_engine(engine: Engine) -> Engine | None:
    """The event loop's own connection to ``engine``'s SQLite file, or on PostgreSQL an
    engine of the driver's asyncio flavour, used from the loop through SQLAlchemy's greenlet
    bridge (``is_async``): a statement's round trip waits without holding the loop. None
    for an in-memory database."""
    url = engine.url
    if url.get_backend_name() == "postgresql":
        return _async_twin(engine)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    connect_args = {"check_same_thread": False, "timeout": LOOP_BUSY_TIMEOUT}
    loop = create_engine(
        url,
        connect_args=connect_args,
        poolclass=StaticPool,
        **JSON_CODEC,
        **_never_created(url.database, connect_args),
    )
    event.listen(loop, "connect", _sqlite_pragmas)
    event.listen(loop, "begin", _sqlite_begin)
    # closed with the engine's own connections (a file replaced or restored behind them is
    # then opened afresh by both, not read through an old handle by the loop's alone)
    event.listen(engine, "engine_disposed", lambda _engine: loop.dispose())
    return loop


# The quick reads' access checks (one statement or two each, at most MAX_REQUESTS_AT_WORK
# at a time): a pool of their own beside POOL, so a process needs 32 connections at most.
LOOP_POOL = {"pool_size": 4, "max_overflow": 8, "pool_timeout": 10}


def _async_twin(engine: Engine) -> Engine:
    """``engine``'s database through psycopg's asyncio flavour, for the event loop: its
    statements are awaited in a greenlet (sqlalchemy.util.greenlet_spawn). No ping before
    each use (a round trip, a tenth of a cached read's check): a connection the server
    closed meanwhile fails its statement, which invalidates the pool, and the check is
    made again in the thread pool (app/db/session.py decided_on_loop). Disposed with
    ``engine``: its connections are let go (they belong to the loop that made them, which
    may be gone; the server drops them when the sockets close)."""
    twin = create_async_engine(
        engine.url.set(drivername="postgresql+psycopg_async"),
        pool_pre_ping=False,
        connect_args=PG_CONNECT,
        **LOOP_POOL,
        **JSON_CODEC,
    )
    event.listen(engine, "engine_disposed", lambda _engine: twin.sync_engine.dispose(close=False))
    return twin.sync_engine


def _ping_when_told(engine: Engine) -> None:
    """Ping a pooled connection before use only if the server sent something on it while it
    sat in the pool. A ping before every use (pool_pre_ping) cost each write a round trip,
    half a millisecond of a battle's result (issue 50). A server that stops, restarts or
    terminates a connection says so on the socket (its farewell, then the close), so the
    socket of a connection it dropped is readable: that one is pinged, found dead and
    replaced. A quiet socket is a live connection as far as a ping could tell (a ping
    could not tell a silent network either: it would wait as long as the statement)."""

    @event.listens_for(engine, "checkout")
    def _alive(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        try:
            told, _, _ = select.select([dbapi_connection.fileno()], [], [], 0)
        except (OSError, ValueError):  # closed already
            told = [True]
        if not told:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as error:  # the pool replaces it, and tries again
            raise exc.DisconnectionError() from error


def is_async(engine: Engine) -> bool:
    return bool(engine.dialect.is_async)


NO_TRANSACTION = "NONE"


def _sqlite_begin(connection: Any) -> None:
    """Start every transaction explicitly so a command's reads and writes form one
    transaction (Python's sqlite3 module would only open one at the first write). Commands
    that write ask for IMMEDIATE: they take the write lock up front, so two of them never
    both read the same state and then both write it."""
    mode = connection.get_execution_options().get("sqlite_begin", "DEFERRED")
    if mode == NO_TRANSACTION:  # a quick read: each statement stands alone (session.py)
        return
    connection.exec_driver_sql(f"BEGIN {mode}")


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    # Hand transaction control to SQLAlchemy (see _sqlite_begin).
    connection.isolation_level = None
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
