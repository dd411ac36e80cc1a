"""Alembic is the schema's source of truth: migrations must equal the models, and run
down and up again cleanly."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from app.db import migrate
from app.db.engine import make_engine
from app.db.models import metadata


def _url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'schema.db'}"


def test_migrations_match_the_models(tmp_path: Path) -> None:
    url = _url(tmp_path)
    migrate.upgrade(url)
    engine = make_engine(url)
    with engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), metadata)
    engine.dispose()
    assert diff == []


def test_upgrade_downgrade_upgrade(tmp_path: Path) -> None:
    url = _url(tmp_path)
    migrate.upgrade(url)
    engine = make_engine(url)
    tables = set(inspect(engine).get_table_names())
    assert {"campaign", "force", "crusade_card", "battle", "decision", "event"} <= tables
    migrate.downgrade(url, "base")
    assert set(inspect(engine).get_table_names()) == {"alembic_version"}
    migrate.upgrade(url)
    assert set(inspect(engine).get_table_names()) == tables
    engine.dispose()


def test_sqlite_runs_in_wal_with_foreign_keys(tmp_path: Path) -> None:
    engine = make_engine(_url(tmp_path))
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    engine.dispose()
