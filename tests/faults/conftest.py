"""The fault tests: each starts with nothing known to be down in this process."""

from __future__ import annotations

import pytest

from app.faults import OUTAGES


@pytest.fixture(autouse=True)
def no_outage_before() -> None:
    OUTAGES.clear()
