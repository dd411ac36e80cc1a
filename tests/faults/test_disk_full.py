"""The database's disk full (SQLite's file may not grow; PostgreSQL's own disk_full error),
on both engines: a write answers 507 storage_full with Retry-After, reads go on, nothing
acknowledged is lost and nothing refused is half-written; writes succeed again once there
is room (issue 35: 306 writes answered 500 on a full 3 MB volume)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from app.faults import DATABASE_DISK, STORAGE_RETRY_AFTER
from tests.api.helpers import assert_problem, campaign, dump
from tests.faults.helpers import outage_lines, recovery_lines
from tests.faults.outages import commit_failing, disk_full_error, failing, sqlite_file_full
from tests.faults.test_database_down import add_force


def assert_full(response: object) -> None:
    assert_problem(response, 507, "storage_full")
    assert response.headers["Retry-After"] == str(STORAGE_RETRY_AFTER)  # type: ignore[attr-defined]


class TestDatabaseDiskFull:
    def test_writes_are_507_reads_go_on_and_nothing_acknowledged_is_lost(
        self, client: TestClient, engine: Engine, caplog: pytest.LogCaptureFixture
    ) -> None:
        first = campaign(client, "before")
        acknowledged = ["before"]
        refused = 0
        with full(engine):
            for n in range(12):  # SQLite: a write that still fits a page may go through
                answer = new_campaign(client, f"during {n}")
                if answer.status_code == 201:
                    acknowledged.append(f"during {n}")
                else:
                    assert_full(answer)
                    refused += 1
                read = client.get(f"/api/v1/campaigns/{first}")
                assert read.status_code == 200 and read.json()["name"] == "before"
        assert refused >= 8
        assert new_campaign(client, "after").status_code == 201
        acknowledged.append("after")
        assert campaigns_in(engine) == acknowledged
        assert len(outage_lines(caplog, DATABASE_DISK)) == 1
        assert len(recovery_lines(caplog, DATABASE_DISK)) == 1

    def test_a_disk_full_at_commit_leaves_the_database_as_it_was(
        self, client: TestClient, engine: Engine
    ) -> None:
        campaign_id = campaign(client)
        before = dump(engine)
        with commit_failing(engine, disk_full_error(engine)):
            assert_full(add_force(client, campaign_id, "never"))
            assert_full(client.post("/api/v1/campaigns", json={"name": "Never"}))
        assert dump(engine) == before
        assert add_force(client, campaign_id, "after").status_code == 201


def new_campaign(client: TestClient, name: str) -> Any:
    """A big write: a campaign with a long description (most of a database page)."""
    return client.post("/api/v1/campaigns", json={"name": name, "description": "Lore. " * 500})


def campaigns_in(engine: Engine) -> list[str]:
    with engine.connect() as connection:
        return [n for (n,) in connection.execute(text("SELECT name FROM campaign ORDER BY id"))]


def full(engine: Engine):  # type: ignore[no-untyped-def]
    """SQLite: its file may not grow (the driver's own error). PostgreSQL: every INSERT
    meets the server's disk_full error."""
    if engine.dialect.name == "sqlite":
        return sqlite_file_full(engine)
    return failing(engine, "INSERT", disk_full_error(engine))
