"""The database refusing connections in the middle of a run (PostgreSQL stopped: a proxy in
front of it cut; SQLite: its file unusable), on both engines: every request answers
503 database_unavailable with Retry-After (a page for the website), the outage is logged
once, nothing acknowledged is lost, and the service answers normally as soon as the database
is back (issue 35: 109 answers of 500 and 170 tracebacks while PostgreSQL was stopped)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, event, text

from app.faults import DATABASE, DATABASE_RETRY_AFTER
from app.main import create_app
from tests.api.helpers import assert_problem, campaign
from tests.conftest import ORGANIZER, with_csrf
from tests.faults.helpers import outage_lines, recovery_lines
from tests.faults.outages import Database, sqlite_error


@pytest.fixture
def database(engine: Engine) -> Iterator[Database]:
    db = Database(engine)
    yield db
    db.close()


def organizer(app: Any) -> TestClient:
    client = TestClient(app)
    assert client.post("/api/v1/auth/signup", json=ORGANIZER).status_code == 201
    return with_csrf(client)


def add_force(client: TestClient, campaign_id: int, name: str, **headers: str) -> Any:
    return client.post(
        f"/api/v1/campaigns/{campaign_id}/forces",
        json={"name": name, "crusade_faction": "IMPERIUM"},
        headers=headers,
    )


def forces_in(engine: Engine, campaign_id: int) -> list[str]:
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT name FROM force WHERE campaign_id = :c ORDER BY id"), {"c": campaign_id}
        )
        return [name for (name,) in rows]


def assert_unavailable(response: Any) -> None:
    assert_problem(response, 503, "database_unavailable")
    assert response.headers["Retry-After"] == str(DATABASE_RETRY_AFTER)


class TestDatabaseRefusingConnections:
    def test_every_request_is_503_until_it_is_back_and_nothing_acknowledged_is_lost(
        self, database: Database, engine: Engine, caplog: pytest.LogCaptureFixture
    ) -> None:
        with organizer(create_app(database.engine)) as client:
            campaign_id = campaign(client)
            acknowledged = []
            for n in range(3):
                assert add_force(client, campaign_id, f"before {n}").status_code == 201
                acknowledged.append(f"before {n}")
            with database.away():
                for n in range(3):
                    assert_unavailable(add_force(client, campaign_id, f"during {n}"))
                    assert_unavailable(client.get(f"/api/v1/campaigns/{campaign_id}/forces"))
                # The Idempotency-Key's claim is the first thing to touch the database.
                keyed = add_force(client, campaign_id, "keyed", **{"Idempotency-Key": "k1"})
                assert_unavailable(keyed)
                page = client.get(f"/campaigns/{campaign_id}")
                assert page.status_code == 503
                assert page.headers["content-type"].startswith("text/html")
                assert page.headers["Retry-After"] == str(DATABASE_RETRY_AFTER)
                assert "database is not answering" in page.text
                assert client.get("/health").status_code == 200  # liveness: the process
            listed = client.get(f"/api/v1/campaigns/{campaign_id}/forces")
            assert listed.status_code == 200, listed.text
            retried = add_force(client, campaign_id, "keyed", **{"Idempotency-Key": "k1"})
            assert retried.status_code == 201, retried.text
            acknowledged.append("keyed")
            assert add_force(client, campaign_id, "after").status_code == 201
            acknowledged.append("after")
        assert forces_in(engine, campaign_id) == acknowledged
        assert len(outage_lines(caplog, DATABASE)) == 1
        assert len(recovery_lines(caplog, DATABASE)) == 1

    def test_a_connection_lost_in_the_middle_of_a_write_leaves_nothing_half_done(
        self, database: Database, engine: Engine
    ) -> None:
        with organizer(create_app(database.engine)) as client:
            campaign_id = campaign(client)
            assert add_force(client, campaign_id, "first").status_code == 201

            def cut(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
                if statement.startswith("INSERT INTO force "):
                    lose_connection(database)

            event.listen(database.engine, "before_cursor_execute", cut)
            try:
                assert_unavailable(add_force(client, campaign_id, "cut"))
            finally:
                event.remove(database.engine, "before_cursor_execute", cut)
                if database.proxy is not None:
                    database.bring_back()
            assert add_force(client, campaign_id, "second").status_code == 201
        assert forces_in(engine, campaign_id) == ["first", "second"]


def lose_connection(database: Database) -> None:
    """PostgreSQL: the server goes away under the open transaction (its connection cut, as
    a stopped server's are). SQLite: the driver's own I/O error (a disk gone bad)."""
    if database.proxy is not None:
        database.take_away()
        return
    raise sqlite_error("disk I/O error", 10, "SQLITE_IOERR")
