"""GET /health/ready names what is missing (the database, the rate-limit store where one is
configured, room on the disks the app writes to) with 503 and Retry-After, and is 200 again
once it is back; GET /health stays 200 throughout: the process is alive (issue 35)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from limits import strategies
from sqlalchemy import Engine

from app.edge.limits import RateLimits
from app.main import create_app
from tests.faults.helpers import closed_port
from tests.faults.outages import Database
from tests.faults.test_rate_limit_store import FlakyStore


@pytest.fixture
def database(engine: Engine) -> Iterator[Database]:
    db = Database(engine)
    yield db
    db.close()


def assert_ready(client: TestClient) -> None:
    answer = client.get("/health/ready")
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "ready" and answer.json()["failed"] == []


def assert_not_ready(client: TestClient, failed: list[str]) -> dict[str, str]:
    answer = client.get("/health/ready")
    assert answer.status_code == 503, answer.text
    assert answer.headers["Retry-After"] == "5"
    assert answer.json()["status"] == "unavailable"
    assert answer.json()["failed"] == failed
    assert client.get("/health").json() == {"status": "ok"}  # alive all the same
    checks: dict[str, str] = answer.json()["checks"]
    return checks


class TestReadiness:
    def test_the_database_away_and_back(self, database: Database) -> None:
        with TestClient(create_app(database.engine)) as client:
            assert_ready(client)
            with database.away():
                checks = assert_not_ready(client, ["database"])
                assert checks["database"].startswith("unavailable")
            assert_ready(client)

    def test_the_rate_limit_store_away_and_back(self, engine: Engine) -> None:
        app = create_app(engine)
        with TestClient(app) as client:
            assert (
                client.get("/health/ready")
                .json()["checks"]["rate_limit_store"]
                .startswith("not configured")
            )
            app.state.rate_limits = RateLimits(f"redis://127.0.0.1:{closed_port()}/0")
            checks = assert_not_ready(client, ["rate_limit_store"])
            assert checks["rate_limit_store"].startswith("unreachable")
            limits = RateLimits("memory://")
            shared = FlakyStore()
            limits._shared = strategies.MovingWindowRateLimiter(shared)
            app.state.rate_limits = limits
            assert_ready(client)

    def test_a_disk_with_too_little_room(self, engine: Engine, tmp_path: Path) -> None:
        app = create_app(engine)
        with TestClient(app) as client:
            assert_ready(client)
            app.state.min_free_disk_mb = 10**9  # a petabyte: more than any test disk has
            checks = assert_not_ready(client, ["disk"])
            assert checks["disk"].startswith("low: ")
            app.state.min_free_disk_mb = 0
            assert_ready(client)
