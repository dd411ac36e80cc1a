"""Taking a database away and bringing it back, as an operator's outage would; filling its
disk.

PostgreSQL: the app's engine reaches the server through a TCP proxy in this process; while
the proxy is stopped, new connections are refused and those open are cut (what a stopped
server looks like to psycopg). SQLite: the database file is moved aside and a folder takes
its place, so opening it fails ("unable to open database file"); the file comes back whole."""

from __future__ import annotations

import ctypes
import os
import shutil
import socket
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool

from app.db.engine import make_engine


def _exchange(a: Path, b: Path) -> None:
    """Swap two paths atomically (Linux's renameat2 with RENAME_EXCHANGE). Moving the file
    and then making the folder, or removing the folder and then moving the file back, left a
    moment with nothing at the path: a pooled SQLite connection opened then made a new,
    empty database there and kept it after the file came back (the webhook worker's "no
    such table: webhook_delivery", seen once in a loaded run)."""
    libc = ctypes.CDLL(None, use_errno=True)
    at_fdcwd, rename_exchange = -100, 2
    if libc.renameat2(at_fdcwd, bytes(a), at_fdcwd, bytes(b), rename_exchange) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error), str(a))


def drop_connections(engine: Engine) -> int:
    """PostgreSQL: every connection to ``engine``'s database terminated by the server (as a
    restart or an administrator's pg_terminate_backend would), from a connection of its own
    outside the pool, each gone before this returns; how many."""
    admin = create_engine(engine.url, poolclass=NullPool)
    try:
        with admin.connect() as connection:
            dropped: int = connection.execute(
                text(
                    "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            ).scalar_one()
    finally:
        admin.dispose()
    return dropped


class Proxy:
    """Forwards 127.0.0.1:<port> to ``target``; ``stop()`` refuses and cuts, ``start()``
    listens again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.start()

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            cut, self._open = self._open, set()
        for sock in cut:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # stopped
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open |= {client, server}
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


class Database:
    """The engine an app under test uses, and a switch to take its database away."""

    def __init__(self, engine: Engine) -> None:
        self.proxy: Proxy | None = None
        if engine.dialect.name == "postgresql":
            url = engine.url
            self.proxy = Proxy((url.host or "127.0.0.1", url.port or 5432))
            via = url.set(host="127.0.0.1", port=self.proxy.port)
            self.engine = make_engine(via.render_as_string(hide_password=False))
        else:
            self.engine = engine
            assert engine.url.database
            self.path = Path(engine.url.database)

    def take_away(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
            return
        self.engine.dispose()  # the last connection closed: the WAL is checkpointed
        away = self.path.with_suffix(".away")
        away.mkdir()
        _exchange(away, self.path)  # the folder in and the file out, at one instant

    def bring_back(self) -> None:
        if self.proxy is not None:
            self.proxy.start()
            return
        away = self.path.with_suffix(".away")
        _exchange(away, self.path)  # the file back and the folder out, at one instant
        shutil.rmtree(away)

    @contextmanager
    def away(self) -> Iterator[None]:
        self.take_away()
        try:
            yield
        finally:
            self.bring_back()

    def close(self) -> None:
        if self.proxy is not None:
            self.engine.dispose()
            self.proxy.stop()


# --- a full disk -----------------------------------------------------------------------


def disk_full_error(engine: Engine) -> Exception:
    """The driver's own error for a full disk: SQLite's SQLITE_FULL, PostgreSQL's 53100."""
    if engine.dialect.name == "postgresql":
        import psycopg

        return psycopg.errors.DiskFull(
            'could not extend file "base/16384/16402": No space left on device'
        )
    return sqlite_error("database or disk is full", 13, "SQLITE_FULL")


def sqlite_error(message: str, code: int, name: str) -> sqlite3.OperationalError:
    """An error as SQLite's driver raises it, with its result code."""
    error = sqlite3.OperationalError(message)
    error.sqlite_errorcode = code  # type: ignore[attr-defined]
    error.sqlite_errorname = name  # type: ignore[attr-defined]
    return error


@contextmanager
def failing(engine: Engine, statement: str, error: Exception) -> Iterator[None]:
    """Every statement through ``engine`` that starts with ``statement`` raises the driver's
    ``error`` (SQLAlchemy wraps it as it would the driver's own)."""

    def fail(_conn: Any, _cursor: Any, sent: str, *_: Any) -> None:
        if sent.lstrip().startswith(statement):
            raise error

    event.listen(engine, "before_cursor_execute", fail)
    try:
        yield
    finally:
        event.remove(engine, "before_cursor_execute", fail)


@contextmanager
def commit_failing(engine: Engine, error: Exception) -> Iterator[None]:
    """Every COMMIT through ``engine`` fails with the driver's ``error`` (a full disk found
    only when the transaction is written out)."""

    def fail(_conn: Any) -> None:
        raise OperationalError("COMMIT", {}, error)

    event.listen(engine, "commit", fail)
    try:
        yield
    finally:
        event.remove(engine, "commit", fail)


@contextmanager
def sqlite_file_full(engine: Engine) -> Iterator[None]:
    """SQLite's file may not grow by a page (PRAGMA max_page_count on every connection): a
    write that needs room fails with SQLite's own "database or disk is full"."""
    with engine.connect() as connection:
        pages = int(connection.exec_driver_sql("PRAGMA page_count").scalar_one())

    def cap(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.execute(f"PRAGMA max_page_count = {pages}")

    event.listen(engine, "connect", cap)
    engine.dispose()
    try:
        yield
    finally:
        event.remove(engine, "connect", cap)
        engine.dispose()
