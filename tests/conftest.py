"""Databases for the tests: a real SQLite file always, and PostgreSQL when
TEST_DATABASE_URL names one (in CI it must)."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, make_url, text
from sqlmodel import Session

from app.db import migrate
from app.db.engine import make_engine
from app.db.models import metadata
from app.db.session import session_scope
from app.main import create_app

# Sessions are signed with this key in tests, so no secret file is written anywhere.
os.environ.setdefault("SECRET_KEY", "test-only-secret-key")
os.environ.setdefault("PASSWORD_HASHING", "fast")  # argon2 at its cheapest: tests only
POSTGRES_URL = os.environ.get("TEST_DATABASE_URL", "")
BACKENDS = ["sqlite", "postgresql"] if POSTGRES_URL else ["sqlite"]


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One migrated SQLite file, copied for each test (much faster than migrating)."""
    path = tmp_path_factory.mktemp("template") / "template.db"
    migrate.upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture(scope="session")
def postgres_engine() -> Iterator[Engine]:
    """A database of this run's own on the TEST_DATABASE_URL server, so two runs (a developer's
    and a CI-like one) never share tables; dropped at the end."""
    server = make_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    name = f"crusade_test_{os.getpid()}_{secrets.token_hex(3)}"
    with server.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    migrate.upgrade(url)
    engine = make_engine(url)
    yield engine
    engine.dispose()
    with server.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    server.dispose()


@pytest.fixture(params=BACKENDS)
def engine(
    request: pytest.FixtureRequest, tmp_path: Path, sqlite_template: Path
) -> Iterator[Engine]:
    if request.param == "sqlite":
        path = tmp_path / "crusade.db"
        shutil.copy(sqlite_template, path)
        sqlite = make_engine(f"sqlite:///{path}")
        yield sqlite
        sqlite.dispose()
        return
    pg: Engine = request.getfixturevalue("postgres_engine")
    names = ", ".join(f'"{t.name}"' for t in metadata.sorted_tables)
    with pg.begin() as connection:
        connection.execute(text(f"TRUNCATE {names} RESTART IDENTITY CASCADE"))
    yield pg


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    with session_scope(engine) as s:
        yield s


def with_csrf(client: TestClient) -> TestClient:
    """Send the session's CSRF token with every request, as the website's pages do."""
    token = client.get("/api/v1/auth/csrf").json()["csrf_token"]
    client.headers["X-CSRF-Token"] = token
    return client


ORGANIZER = {"username": "orga", "password": "organizer password", "display_name": "Orga"}


@pytest.fixture
def client(engine: Engine) -> Iterator[TestClient]:
    """A client logged in as the install's first account (so a site admin)."""
    with TestClient(create_app(engine)) as test_client:
        signed_up = test_client.post("/api/v1/auth/signup", json=ORGANIZER)
        assert signed_up.status_code == 201, signed_up.text
        with_csrf(test_client)
        yield test_client


@pytest.fixture
def anonymous(engine: Engine) -> Iterator[TestClient]:
    """A client with no account, on an install with no accounts yet."""
    with TestClient(create_app(engine)) as test_client:
        yield test_client
