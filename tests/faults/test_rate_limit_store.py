"""The rate-limit store (Redis) unreachable: log-ins are still limited, by this process's
own counters, the outage is logged once, and the shared store is used again once it is
back. Never a 500 (issue 35: every log-in answered 500 while Redis was stopped)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from limits import strategies
from limits.errors import StorageError
from limits.storage import MemoryStorage
from sqlalchemy import Engine

from app.edge.limits import RateLimits
from app.faults import RATE_LIMIT_STORE
from app.main import create_app
from tests.faults.helpers import closed_port, outage_lines, recovery_lines

WRONG = {"username": "ruby", "password": "not the password"}
RIGHT = {"username": "ruby", "password": "ruby password"}


def _signed_up(app: Any) -> TestClient:
    client = TestClient(app)
    response = client.post("/api/v1/auth/signup", json=RIGHT)
    assert response.status_code == 201, response.text
    return client


class TestRedisUnreachable:
    def test_log_ins_are_limited_by_the_process_itself(
        self, engine: Engine, caplog: pytest.LogCaptureFixture
    ) -> None:
        app = create_app(engine)
        app.state.rate_limits = RateLimits(f"redis://127.0.0.1:{closed_port()}/0")
        with _signed_up(app) as client:
            statuses = [
                client.post("/api/v1/auth/login", json=WRONG).status_code for _ in range(12)
            ]
            assert statuses == [401] * 10 + [429] * 2
            refused = client.post("/api/v1/auth/login", json=RIGHT)
            assert refused.status_code == 429
            assert refused.json()["code"] == "rate_limited"
            assert 1 <= int(refused.headers["Retry-After"]) <= 60
            other = client.post(
                "/api/v1/auth/signup", json={"username": "sam", "password": "sam password"}
            )
            assert other.status_code == 201
            assert (
                client.post(
                    "/api/v1/auth/login", json={"username": "sam", "password": "sam password"}
                ).status_code
                == 200
            )
        assert len(outage_lines(caplog, RATE_LIMIT_STORE)) == 1


class FlakyStore(MemoryStorage):
    """A shared store that can be taken away and brought back, as Redis can."""

    down = False

    def _check(self) -> None:
        if self.down:
            raise StorageError(ConnectionError("Connection refused"))

    def acquire_entry(self, *args: Any, **kwargs: Any) -> bool:
        self._check()
        return super().acquire_entry(*args, **kwargs)

    def get_moving_window(self, *args: Any, **kwargs: Any) -> tuple[float, int]:
        self._check()
        return super().get_moving_window(*args, **kwargs)

    def check(self) -> bool:
        return not self.down


class TestRedisBack:
    def test_the_shared_counters_count_again_once_it_answers(
        self, engine: Engine, caplog: pytest.LogCaptureFixture
    ) -> None:
        app = create_app(engine)
        limits = RateLimits("memory://", retry_seconds=0)
        shared = FlakyStore()
        limits._shared = strategies.MovingWindowRateLimiter(shared)
        app.state.rate_limits = limits
        with _signed_up(app) as client:
            for _ in range(4):  # counted by the shared store
                assert client.post("/api/v1/auth/login", json=WRONG).status_code == 401
            shared.down = True
            for _ in range(8):  # counted by this process alone: a fresh count, never a 500
                assert client.post("/api/v1/auth/login", json=WRONG).status_code == 401
            shared.down = False
            statuses = [client.post("/api/v1/auth/login", json=WRONG).status_code for _ in range(8)]
            assert statuses == [401] * 6 + [429] * 2  # the shared count went on from 4
        assert len(outage_lines(caplog, RATE_LIMIT_STORE)) == 1
        assert len(recovery_lines(caplog, RATE_LIMIT_STORE)) == 1
