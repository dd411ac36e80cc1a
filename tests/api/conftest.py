"""Fixtures the API tests share."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.config import get_settings
from tests.api.generated_client import Generator
from tests.api.live import serve
from tests.api.receiver import Receiver
from tests.api.test_battle_flow import muster, setup_two_forces


@pytest.fixture
def live(client: TestClient, engine: Engine) -> Iterator[tuple[httpx.Client, dict[str, Any]]]:
    """The test's organizer (a player of a mustered battle) on a real server."""
    battle = muster(client, setup_two_forces(client))
    cookies = {c.name: c.value or "" for c in client.cookies.jar}
    with (
        serve(engine) as url,
        httpx.Client(
            base_url=url,
            timeout=120,
            cookies=cookies,
            headers={"X-CSRF-Token": client.headers["X-CSRF-Token"]},
        ) as http,
    ):
        yield http, battle


@pytest.fixture
def allow_private(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """WEBHOOK_ALLOW_PRIVATE=true: the receiver listens on 127.0.0.1."""
    monkeypatch.setenv("WEBHOOK_ALLOW_PRIVATE", "true")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A webhook receiver on a loopback port, stopped after the test."""
    started = Receiver().start()
    yield started
    started.stop()


@pytest.fixture(scope="session")
def generate_client(tmp_path_factory: pytest.TempPathFactory) -> Generator:
    """openapi-python-client's client for a schema, generated once per session."""
    return Generator(tmp_path_factory.mktemp("generated_client"))
