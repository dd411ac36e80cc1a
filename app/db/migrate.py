"""Apply Alembic migrations from code (used by `crusade db upgrade` and `crusade serve`)."""

from __future__ import annotations

from alembic import command
from alembic.config import Config

from app.config import PROJECT_ROOT


def alembic_config(database_url: str, *, lock_timeout: str | None = None) -> Config:
    config = Config(str(PROJECT_ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(PROJECT_ROOT / "migrations"))
    config.attributes["database_url"] = database_url
    config.attributes["lock_timeout"] = lock_timeout  # PostgreSQL; None: migrations/env.py's
    return config


def upgrade(database_url: str, revision: str = "head", *, lock_timeout: str | None = None) -> None:
    """Apply the pending migrations, in one transaction, one migrator at a time (a second
    one waits, then finds nothing to do). PostgreSQL: a table the app's requests hold longer
    than ``lock_timeout`` (10 s) stops the run with nothing changed."""
    command.upgrade(alembic_config(database_url, lock_timeout=lock_timeout), revision)


def downgrade(database_url: str, revision: str) -> None:
    command.downgrade(alembic_config(database_url), revision)
