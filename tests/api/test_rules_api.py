"""The rules reference over HTTP, and the service basics."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_health(client: TestClient) -> None:
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_index_lists_reachable_tables(client: TestClient) -> None:
    tables = client.get("/api/v1/rules").json()["tables"]
    assert len(tables) == 11
    for path in tables:
        assert client.get(path).status_code == 200, path


def test_ranks(client: TestClient) -> None:
    ranks = client.get("/api/v1/rules/ranks").json()
    assert [(r["name"], r["min_xp"]) for r in ranks] == [
        ("Battle-ready", 0),
        ("Blooded", 6),
        ("Battle-hardened", 16),
        ("Heroic", 31),
        ("Legendary", 51),
    ]


def test_battle_trait_table_by_unit_type(client: TestClient) -> None:
    table = client.get("/api/v1/rules/battle-traits/vehicle").json()
    assert table["sides"] == 6
    assert table["entries"][0]["name"] == "Enhanced Engines"


def test_unknown_unit_type_is_a_clear_422(client: TestClient) -> None:
    response = client.get("/api/v1/rules/battle-traits/titan")
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "request_invalid"
    assert body["field"] == "path.unit_type"


def test_missions_by_battle_size(client: TestClient) -> None:
    missions = client.get("/api/v1/rules/missions", params={"battle_size": "onslaught"}).json()
    assert [(m["name"], m["low"], m["high"]) for m in missions] == [
        ("Firestorm", 1, 2),
        ("Grand Assault", 3, 4),
        ("Field of Glory", 5, 6),
    ]


def test_unknown_battle_size_is_a_404_problem(client: TestClient) -> None:
    response = client.get("/api/v1/rules/missions", params={"battle_size": "apocalypse"})
    assert response.status_code == 404
    assert response.json()["code"] == "battle_size_unknown"


def test_one_mission_and_an_unknown_one(client: TestClient) -> None:
    assert client.get("/api/v1/rules/missions/supply_drop").json()["battle_size"] == "combat_patrol"
    missing = client.get("/api/v1/rules/missions/nope")
    assert missing.status_code == 404
    assert missing.json()["code"] == "mission_unknown"


def test_agendas_filter_by_category(client: TestClient) -> None:
    warpcraft = client.get("/api/v1/rules/agendas", params={"category": "Warpcraft"}).json()
    assert {a["name"] for a in warpcraft} == {
        "Witch Hunter",
        "Lord of the Warp",
        "Scry Battle Plans",
    }
    assert all("xp" in a and "summary" in a for a in warpcraft)


def test_requisitions_show_cost_and_timing(client: TestClient) -> None:
    requisitions = {r["id"]: r for r in client.get("/api/v1/rules/requisitions").json()}
    assert len(requisitions) == 8
    assert requisitions["specialist_reinforcements"]["timing"] == "card_added"
    assert requisitions["fresh_recruits"]["excluded_keywords"] == [
        "CHARACTER",
        "VEHICLE",
        "MONSTER",
    ]


def test_crusade_relics_with_categories(client: TestClient) -> None:
    body = client.get("/api/v1/rules/crusade-relics").json()
    assert body["categories"]["legendary"] == {
        "min_rank": "legendary",
        "extra_crusade_points": 2,
        "requisition_points": 1,
    }
    assert len(body["relics"]) == 12


def test_unknown_route_is_a_problem(client: TestClient) -> None:
    response = client.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_openapi_documents_the_rules_routes(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert "/api/v1/rules/missions/{mission_id}" in paths
