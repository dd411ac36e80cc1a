"""Small helpers for API tests."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from app.db.models import metadata
from tests.conftest import with_csrf


def dump(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, in a stable order: equal dumps mean an unchanged database."""
    with engine.connect() as connection:
        return {
            t.name: [
                tuple(r) for r in connection.execute(text(f'SELECT * FROM "{t.name}" ORDER BY 1'))
            ]
            for t in metadata.sorted_tables
        }


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
