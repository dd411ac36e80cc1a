"""A migration run against a database another process is serving (issue 35, as
docs/deploy.md says): migrators take turns (three started at once all succeed, one applies
the migrations), and on PostgreSQL a migration that cannot get a table the requests are
using within its lock timeout stops with nothing changed, while the requests go on."""

from __future__ import annotations

import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import make_url, text
from sqlalchemy.exc import OperationalError

from app.db import migrate
from app.db.engine import make_engine
from tests.conftest import BACKENDS, POSTGRES_URL

# The newest revision, as the migrations folder has it (not a number to keep up to date).
HEAD = ScriptDirectory.from_config(migrate.alembic_config("sqlite://")).get_current_head()


@pytest.fixture(params=BACKENDS)
def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of a database with no tables at all."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fresh.db'}"
        return
    server = make_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    name = f"crusade_migrate_{secrets.token_hex(4)}"
    with server.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    yield make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    with server.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    server.dispose()


def version(url: str) -> str | None:
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    finally:
        engine.dispose()


class TestMigratorsTakeTurns:
    def test_three_upgrades_started_at_once_all_succeed(self, empty_database: str) -> None:
        """As three processes starting together would (`serve`, `worker`, `db upgrade`):
        before, two of three failed (a table created twice)."""
        run = f"from app.db import migrate; migrate.upgrade({empty_database!r})"
        started = [
            subprocess.Popen([sys.executable, "-c", run], stderr=subprocess.PIPE, text=True)
            for _ in range(3)
        ]
        outcomes = [(p.wait(timeout=600), p.stderr.read() if p.stderr else "") for p in started]
        assert [code for code, _ in outcomes] == [0, 0, 0], outcomes
        assert version(empty_database) == HEAD


class TestMigrationBesideRequests:
    def test_a_table_a_request_holds_stops_it_with_nothing_changed_or_it_goes_through(
        self, empty_database: str
    ) -> None:
        """PostgreSQL: an ALTER waits for the requests using its table, and every request
        after it would wait behind it; past the lock timeout the migration stops, nothing
        of it applied, and the request goes on. SQLite: a reading request never holds up a
        migration (WAL), and keeps reading what it began with."""
        migrate.upgrade(empty_database, "0019")
        serving = make_engine(empty_database)
        with serving.connect() as request:  # a request reading forces, mid-transaction
            request.execute(text("SELECT count(*) FROM force"))
            if serving.dialect.name == "postgresql":
                with pytest.raises(OperationalError, match="lock timeout"):
                    migrate.upgrade(empty_database, lock_timeout="300ms")  # 0020 alters force
            else:
                migrate.upgrade(empty_database)
            assert request.execute(text("SELECT count(*) FROM force")).scalar() == 0
            request.rollback()
        serving.dispose()
        if serving.dialect.name == "postgresql":
            assert version(empty_database) == "0019"  # nothing of 0020 was applied
            migrate.upgrade(empty_database)  # once the request is done, it goes through
        assert version(empty_database) == HEAD
