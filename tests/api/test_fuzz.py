"""Schemathesis fuzzes every operation of the OpenAPI schema, authenticated as a site admin
with a read-write token, and finds no server error (5xx). The run is bounded here; set
FUZZ_EXAMPLES for a longer one (see docs/security.md)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings

from app.db import migrate
from app.db.engine import make_engine
from app.main import create_app

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "8"))


def _app_with_data():  # type: ignore[no-untyped-def]
    """An app on its own SQLite file, with an admin, a token and a small campaign."""
    folder = Path(tempfile.mkdtemp(prefix="crusade-fuzz-"))
    url = f"sqlite:///{folder / 'fuzz.db'}"
    migrate.upgrade(url)
    app = create_app(make_engine(url))
    client = TestClient(app)
    client.post("/api/v1/auth/signup", json={"username": "fuzzer", "password": "fuzzer password"})
    client.headers["X-CSRF-Token"] = client.get("/api/v1/auth/csrf").json()["csrf_token"]
    token = client.post("/api/v1/auth/tokens", json={"name": "fuzz", "can_write": True}).json()[
        "token"
    ]
    campaign = client.post("/api/v1/campaigns", json={"name": "Fuzz"}).json()["id"]
    force = client.post(
        f"/api/v1/campaigns/{campaign}/forces", json={"name": "F", "crusade_faction": "IMPERIUM"}
    ).json()["id"]
    client.post(
        f"/api/v1/forces/{force}/cards",
        json={"name": "Squad", "power_rating": 5, "keywords": ["IMPERIUM"]},
    )
    return app, token


APP, TOKEN = _app_with_data()
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_server_errors(case: schemathesis.Case) -> None:
    response = case.call(headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.text}"
