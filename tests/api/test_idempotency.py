"""A bot retrying a POST with the same Idempotency-Key never records anything twice."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force
from tests.api.test_battle_flow import battle_body, muster, setup_two_forces


def test_retried_campaign_creation_is_replayed(client: TestClient, engine: Engine) -> None:
    headers = {"Idempotency-Key": "bot-42"}
    first = client.post("/api/v1/campaigns", json={"name": "Vigilus"}, headers=headers)
    before = dump(engine)
    again = client.post("/api/v1/campaigns", json={"name": "Vigilus"}, headers=headers)
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert dump(engine) == before
    assert len(client.get("/api/v1/campaigns").json()["items"]) == 1


def test_same_key_different_body_is_refused(client: TestClient) -> None:
    headers = {"Idempotency-Key": "bot-43"}
    client.post("/api/v1/campaigns", json={"name": "Vigilus"}, headers=headers)
    reused = client.post("/api/v1/campaigns", json={"name": "Armageddon"}, headers=headers)
    assert_problem(reused, 422, "idempotency_key_reused")


def test_a_battle_result_is_never_recorded_twice(client: TestClient, engine: Engine) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    body = {
        "sides": [
            {"force_id": world["blue"], "victory_points": 20},
            {"force_id": world["red"], "victory_points": 10},
        ]
    }
    headers = {"Idempotency-Key": "result-1"}
    first = client.post(f"/api/v1/battles/{battle['id']}/result", json=body, headers=headers)
    after_first = dump(engine)
    second = client.post(f"/api/v1/battles/{battle['id']}/result", json=body, headers=headers)
    assert second.json() == first.json()
    assert dump(engine) == after_first
    assert client.get(f"/api/v1/forces/{world['blue']}").json()["battle_tally"] == 1
    unkeyed = client.post(f"/api/v1/battles/{battle['id']}/result", json=body)
    assert_problem(unkeyed, 409, "battle_already_recorded")


def test_refusals_are_replayed_too(client: TestClient) -> None:
    force_id = force(client, campaign(client))
    headers = {"Idempotency-Key": "too-big"}
    body = {"name": "Titan", "power_rating": 60, "keywords": ["IMPERIUM"]}
    first = client.post(f"/api/v1/forces/{force_id}/cards", json=body, headers=headers)
    second = client.post(f"/api/v1/forces/{force_id}/cards", json=body, headers=headers)
    assert_problem(first, 422, "supply_limit_exceeded")
    assert_problem(second, 422, "supply_limit_exceeded")


def test_a_conflict_frees_its_key_for_the_retry(client: TestClient, engine: Engine) -> None:
    """A 409 changed nothing and says "not now": once the caller has sorted the conflict out,
    the same request with the same key runs instead of replaying the old refusal (the
    wizard's queue re-sends a tap that way after it caught up with the draft)."""
    world = setup_two_forces(client)
    first = muster(client, world)
    url = f"/api/v1/campaigns/{world['campaign']}/battles"
    headers = {"Idempotency-Key": "second-battle"}
    before = dump(engine)
    busy = client.post(url, json=battle_body(world), headers=headers)
    assert_problem(busy, 409, "battle_in_progress")
    assert dump(engine) == before
    client.post(f"/api/v1/battles/{first['id']}/call-off")
    retried = client.post(url, json=battle_body(world), headers=headers)
    assert retried.status_code == 201 and "Idempotent-Replayed" not in retried.headers
    replayed = client.post(url, json=battle_body(world), headers=headers)
    assert replayed.headers["Idempotent-Replayed"] == "true"
    assert replayed.json()["id"] == retried.json()["id"]
