"""In CI the suite must run against PostgreSQL too: a missing server is a failure."""

from __future__ import annotations

import os

from tests.conftest import BACKENDS


def test_ci_runs_against_postgresql() -> None:
    if os.environ.get("CI") == "true":
        assert "postgresql" in BACKENDS, "CI=true but TEST_DATABASE_URL is not set"
    assert "sqlite" in BACKENDS
