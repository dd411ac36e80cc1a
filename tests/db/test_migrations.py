"""Alembic is the schema's source of truth: migrations must equal the models, and run
down and up again cleanly."""

from __future__ import annotations

import os
import secrets
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, make_url, text

from app.db import migrate
from app.db.engine import make_engine
from app.db.models import metadata
from tests.conftest import POSTGRES_URL


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


def _databases(tmp_path: Path) -> Iterator[str]:
    """A fresh SQLite file, and a fresh PostgreSQL database when TEST_DATABASE_URL is set."""
    yield _url(tmp_path)
    if not POSTGRES_URL:
        return
    server = make_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    name = f"crusade_migration_{os.getpid()}_{secrets.token_hex(3)}"
    with server.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with server.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        server.dispose()


def test_0013_keeps_rows_and_defaults_to_confirming_organizers(tmp_path: Path) -> None:
    """Existing campaigns get the setting on (the issue's default), existing users no PIN;
    down and up again on both engines."""
    for url in _databases(tmp_path):
        migrate.upgrade(url, "0012")
        engine = make_engine(url)
        with engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO campaign (name, description, created_at)"
                    " VALUES ('Old', '', CURRENT_TIMESTAMP)"
                )
            )
            connection.execute(
                text(
                    "INSERT INTO user_account (username, display_name, password_hash, is_admin,"
                    " session_version, created_at) VALUES ('old', 'Old', 'x', false, 0,"
                    " CURRENT_TIMESTAMP)"
                )
            )
        migrate.upgrade(url, "0013")
        with engine.connect() as connection:
            setting = connection.execute(
                text("SELECT organizer_results_need_confirmation FROM campaign")
            ).scalar_one()
            pin = connection.execute(text("SELECT pin_hash FROM user_account")).scalar_one()
        assert setting in (True, 1) and pin is None
        migrate.downgrade(url, "0012")
        columns = {c["name"] for c in inspect(engine).get_columns("campaign")}
        assert "organizer_results_need_confirmation" not in columns
        assert "pin_hash" not in {c["name"] for c in inspect(engine).get_columns("user_account")}
        migrate.upgrade(url)
        engine.dispose()


def test_0021_photo_ids_start_past_every_photo_the_history_names(tmp_path: Path) -> None:
    """SQLite: the rebuilt table is AUTOINCREMENT and its counter starts past the largest
    photo id ever given (photo 7 was deleted, photo 3 is kept), so photo 7's address, still
    cached by browsers, is never given again. PostgreSQL's sequences never go back."""
    url = _url(tmp_path)
    migrate.upgrade(url, "0020")
    rows = sqlite3.connect(tmp_path / "schema.db")
    with rows:
        rows.execute(
            "INSERT INTO campaign (name, description, created_at) VALUES ('A', '', '2026')"
        )
        rows.execute(
            "INSERT INTO battle (campaign_id, battle_size, mission, status, created_at)"
            " VALUES (1, 'incursion', 'sweep_and_clear', 'mustered', '2026-01-01')"
        )
        for photo in (3, 7):
            rows.execute(
                "INSERT INTO event (campaign_id, battle_id, kind, payload, created_at)"
                " VALUES (1, 1, 'photo_added', ?, '2026-01-01')",
                (f'{{"photo_id": {photo}, "caption": ""}}',),
            )
        rows.execute(
            "INSERT INTO battle_photo (id, battle_id, width, height, widths, caption,"
            " uploaded_by, created_at) VALUES (3, 1, 10, 10, '[10]', '', '', '2026-01-01')"
        )
    migrate.upgrade(url)
    with rows:
        rows.execute(
            "INSERT INTO battle_photo (battle_id, width, height, widths, caption,"
            " uploaded_by, created_at) VALUES (1, 10, 10, '[10]', '', '', '2026-01-01')"
        )
    assert [i for (i,) in rows.execute("SELECT id FROM battle_photo ORDER BY id")] == [3, 8]
    rows.close()
    migrate.downgrade(url, "0020")
    migrate.upgrade(url)
