"""Small helpers for API tests."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from app.db.models import metadata
from tests.conftest import with_csrf


def dump(engine: Engine) -> dict[str, list[Any]]:
    """Every row of every table, in a stable order: equal dumps mean an unchanged database.
    On PostgreSQL in one statement, each table's rows as JSON text made by the server: a
    statement per table, each row turned into a tuple here, was a tenth of the time of the
    tests that check a refusal changed nothing."""
    tables = metadata.sorted_tables
    with engine.connect() as connection:
        if engine.dialect.name == "postgresql":
            texts = connection.exec_driver_sql(_POSTGRES_DUMP).one()
            return {t.name: json.loads(body) for t, body in zip(tables, texts, strict=True)}
        return {
            t.name: [
                tuple(r) for r in connection.execute(text(f'SELECT * FROM "{t.name}" ORDER BY 1'))
            ]
            for t in tables
        }


_POSTGRES_DUMP = "SELECT " + ", ".join(
    f"(SELECT coalesce(json_agg(t ORDER BY t::text)::text, '[]') FROM \"{table.name}\" t)"
    for table in metadata.sorted_tables
)


def campaign(client: TestClient, name: str = "War for Vigilus") -> int:
    response = client.post("/api/v1/campaigns", json={"name": name})
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def force(
    client: TestClient, campaign_id: int, name: str = "Ultramarines", faction: str = "IMPERIUM"
) -> int:
    response = client.post(
        f"/api/v1/campaigns/{campaign_id}/forces",
        json={"name": name, "crusade_faction": faction, "player_name": "Ruby"},
    )
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def unit(
    client: TestClient, force_id: int, name: str = "Intercessor Squad", power: int = 5, **extra: Any
) -> dict[str, Any]:
    body = {"name": name, "power_rating": power, "keywords": ["IMPERIUM", "INFANTRY"], **extra}
    response = client.post(f"/api/v1/forces/{force_id}/cards", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


def assert_problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = dict(response.json())
    assert body["code"] == code
    assert body["detail"]
    return body


def account(app: Any, username: str) -> TestClient:
    """A signed-up, logged-in client (password: '<username> password'), CSRF header set."""
    client = TestClient(app)
    response = client.post(
        "/api/v1/auth/signup", json={"username": username, "password": f"{username} password"}
    )
    assert response.status_code == 201, response.text
    return with_csrf(client)
