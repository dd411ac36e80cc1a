"""What several benchmarks need: one `crusade serve` process, started, waited for until
/health answers, ended at the end; and a fresh migrated database for one run (the bench
scripts had a copy each)."""

from __future__ import annotations

import os
import secrets
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from sqlalchemy import text
from sqlalchemy.engine import make_url

from app.db import migrate
from app.db.engine import make_engine


@contextmanager
def serving(command: list[str], env: dict[str, str], port: int) -> Iterator[tuple[str, int]]:
    """``command`` run with ``env``, listening on 127.0.0.1:``port``; yields its base URL
    and process id once it answers /health (or after 60 s, to let the bench report why)."""
    process = subprocess.Popen(command, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        yield base, process.pid
    finally:
        process.terminate()
        process.wait(timeout=20)


@contextmanager
def database(kind: str, server_url: str, label: str) -> Iterator[str]:
    """A fresh, migrated database named after ``label``: a SQLite file, or one of its own
    on the PostgreSQL server at ``server_url`` (dropped afterwards), so runs never meet each
    other's rows."""
    if kind == "sqlite":
        url = f"sqlite:///{Path(tempfile.mkdtemp()) / f'{label}.db'}"
        migrate.upgrade(url)
        yield url
        return
    server = make_engine(server_url, isolation_level="AUTOCOMMIT")
    name = f"{label}_{os.getpid()}_{secrets.token_hex(3)}"
    with server.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(server_url).set(database=name).render_as_string(hide_password=False)
    try:
        migrate.upgrade(url)
        yield url
    finally:
        with server.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        server.dispose()
