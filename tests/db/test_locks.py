"""Row locks of a writing transaction (app/db/locks.py), on SQLite and PostgreSQL: a row
locked once is not read again, and a rollback, a savepoint's included, forgets the locks it
released."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine, event
from sqlmodel import Session

from app.db.locks import for_change
from app.db.models import Force
from tests.api.helpers import campaign, force


def test_a_locked_row_is_read_once_until_a_rollback_releases_it(
    client: TestClient, engine: Engine
) -> None:
    fid = force(client, campaign(client))
    seen: list[str] = []

    def statement(_conn: Any, _cursor: Any, sql: str, *_rest: Any) -> None:
        seen.append(sql)

    event.listen(engine, "before_cursor_execute", statement)
    try:
        with Session(engine) as session:
            session.info["writes"] = True
            row = for_change(session, Force, fid)  # kept: the session holds rows weakly
            assert row is not None
            locked = [s for s in seen if s.startswith("SELECT force.")]
            assert len(locked) == 1
            if engine.dialect.name == "postgresql":
                assert "FOR UPDATE" in locked[0]
            assert for_change(session, Force, fid) is row
            assert [s for s in seen if s.startswith("SELECT force.")] == locked
            with session.begin_nested() as trial:  # a trial run, rolled back
                trial.rollback()
            assert for_change(session, Force, fid) is not None
            again = [s for s in seen if s.startswith("SELECT force.")]
            assert len(again) == 2  # read again...
            if engine.dialect.name == "postgresql":
                assert "FOR UPDATE" in again[1]  # ...and locked again: the savepoint freed it
            session.rollback()
    finally:
        event.remove(engine, "before_cursor_execute", statement)
