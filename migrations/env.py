"""Alembic environment: targets SQLModel.metadata; batch mode so SQLite can alter tables."""

from __future__ import annotations

from alembic import context

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
    engine = make_engine(_url())
    with engine.connect() as connection:
        context.configure(
            connection=connection, target_metadata=metadata, render_as_batch=True
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
