"""Alembic environment: targets SQLModel.metadata; batch mode so SQLite can alter tables."""

from __future__ import annotations

import zlib

from alembic import context
from sqlalchemy import Connection, text

from app.config import get_settings
from app.db.engine import make_engine
from app.db.models import metadata

config = context.config


def _url() -> str:
    """The URL passed in by app.db.migrate, else the app's own setting (DATABASE_URL)."""
    return str(config.attributes.get("database_url") or get_settings().effective_database_url)


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """All pending migrations in one transaction, one migrator at a time (issue 35): a
    second `crusade db upgrade` (or `serve`, `worker`) started meanwhile waits for the first
    and then finds nothing left to do; a migration that cannot get a table from the
    requests being served within LOCK_TIMEOUT stops, changing nothing (docs/deploy.md)."""
    engine = make_engine(
        _url(),
        # SQLite: the write lock, taken first (BEGIN IMMEDIATE), waited for as long as
        # another migrator may hold it.
        **({"connect_args": {"timeout": TURN_SECONDS}} if _url().startswith("sqlite") else {}),
    )
    with engine.connect() as connection:
        connection.execution_options(sqlite_begin="IMMEDIATE")
        with connection.begin():  # alembic runs inside it and commits nothing itself
            _take_turns(connection)
            context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
            context.run_migrations()
    engine.dispose()


TURN_SECONDS = 600  # another migrator's whole run
LOCK_TIMEOUT = "10s"  # a table the app's requests are using


def _take_turns(connection: Connection) -> None:
    """PostgreSQL: a lock of the migrators' own for the transaction, then a bound on how
    long any table lock may be waited for (an ALTER queued behind a long request would
    hold up every request after it)."""
    if connection.dialect.name != "postgresql":
        return  # SQLite: BEGIN IMMEDIATE took the one write lock
    connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
    wait = str(config.attributes.get("lock_timeout") or LOCK_TIMEOUT)
    connection.execute(text("SELECT set_config('lock_timeout', :wait, true)"), {"wait": wait})


MIGRATION_LOCK = zlib.crc32(b"crusade:migrations")


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
