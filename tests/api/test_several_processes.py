"""Several app processes over one database: each keeps its own Order of Battle cache, yet
none serves a stale one after another changed the force, and a login made through one is
honoured by the others (sessions live in the database)."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.main import create_app
from tests.api.helpers import campaign, force, unit


def test_a_cached_order_of_battle_follows_a_change_made_elsewhere(
    client: TestClient, engine: Engine
) -> None:
    force_id = force(client, campaign(client))
    unit(client, force_id, "Squad Vorn")
    with TestClient(create_app(engine)) as other:  # a second process: its own cache
        other.cookies.update(client.cookies)
        other.headers.update({"X-CSRF-Token": client.headers["X-CSRF-Token"]})
        assert len(client.get(f"/api/v1/forces/{force_id}").json()["cards"]) == 1  # cached
        card = unit(other, force_id, "Squad Aquila")  # the change, through the other one
        other.patch(f"/api/v1/cards/{card['id']}", json={"narrative": "Held the line."})
        cards = client.get(f"/api/v1/forces/{force_id}").json()["cards"]
    assert [c["name"] for c in cards] == ["Squad Vorn", "Squad Aquila"]
    assert cards[1]["narrative"] == "Held the line."
