"""The campaign map through HTTP (issue 23, rulings 53 and 54): an organizer draws it; a
battle fought over a territory gives it to the winner, a draw changes nothing, a revert puts
it back exactly; a territory with the RP bonus pays its holder after each battle."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session

from app.services.campaigns import transfer
from tests.api.helpers import assert_problem, dump
from tests.api.test_battle_flow import battle_body, setup_two_forces


def territory(client: TestClient, campaign: int, **body: Any) -> dict[str, Any]:
    response = client.post(f"/api/v1/campaigns/{campaign}/territories", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


def fight(
    client: TestClient, world: dict[str, Any], territory_id: int, vp: tuple[int, int]
) -> dict[str, Any]:
    body = {**battle_body(world), "territory_id": territory_id}
    battle = client.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=body)
    assert battle.status_code == 201, battle.text
    assert battle.json()["territory_id"] == territory_id
    result = client.post(
        f"/api/v1/battles/{battle.json()['id']}/result",
        json={
            "sides": [
                {"force_id": world["blue"], "victory_points": vp[0]},
                {"force_id": world["red"], "victory_points": vp[1]},
            ]
        },
    )
    assert result.status_code == 200, result.text
    return dict(result.json())


def holder(client: TestClient, world: dict[str, Any], territory_id: int) -> int | None:
    found = client.get(f"/api/v1/campaigns/{world['campaign']}/territories").json()
    return next(t["holder_force_id"] for t in found if t["id"] == territory_id)


def test_an_organizer_draws_the_map_with_neighbours_both_ways(client: TestClient) -> None:
    world = setup_two_forces(client)
    hive = territory(client, world["campaign"], name="Hyperia Hive", bonus="requisition_point")
    wastes = territory(client, world["campaign"], name="Dirt Wastes", neighbours=[hive["id"]])
    listed = {
        t["name"]: t
        for t in client.get(f"/api/v1/campaigns/{world['campaign']}/territories").json()
    }
    assert listed["Hyperia Hive"]["neighbours"] == [wastes["id"]]  # linked both ways
    assert listed["Hyperia Hive"]["bonus"] == "requisition_point"
    url = f"/api/v1/campaigns/{world['campaign']}/territories/{wastes['id']}"
    moved = client.patch(url, json={"neighbours": [], "holder_force_id": world["red"]})
    assert moved.json()["holder_force_id"] == world["red"]
    again = client.get(f"/api/v1/campaigns/{world['campaign']}/territories").json()
    assert [t["neighbours"] for t in again] == [[], []]
    freed = client.patch(url, json={"holder_force_id": None})
    assert freed.json()["holder_force_id"] is None
    assert client.delete(url).status_code == 200


def test_bad_map_input_is_refused_and_changes_nothing(client: TestClient, engine: Engine) -> None:
    world = setup_two_forces(client)
    url = f"/api/v1/campaigns/{world['campaign']}/territories"
    before = dump(engine)
    assert_problem(
        client.post(url, json={"name": "A", "neighbours": [99999]}), 422, "territory_not_found"
    )
    assert client.post(url, json={"name": "  "}).status_code == 422
    assert client.post(url, json={"name": "A", "bonus": "gold"}).status_code == 422
    assert_problem(
        client.post(url, json={"name": "A", "holder_force_id": 99999}), 422, "force_not_in_campaign"
    )
    body = {**battle_body(world), "territory_id": 99999}
    refused = client.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=body)
    assert_problem(refused, 404, "territory_not_found")
    assert dump(engine) == before


def test_the_winner_takes_it_a_draw_leaves_it_a_revert_restores_it(
    client: TestClient, engine: Engine
) -> None:
    world = setup_two_forces(client)
    relay = territory(client, world["campaign"], name="Relay", holder_force_id=world["red"])
    won = fight(client, world, relay["id"], (60, 40))  # Blue wins
    assert holder(client, world, relay["id"]) == world["blue"]
    events = client.get(f"/api/v1/campaigns/{world['campaign']}/events").json()["items"]
    assert any(e["kind"] == "territory_taken" and "took Relay" in e["summary"] for e in events)
    # Reverting the first battle while a later one was fought over it is refused.
    drawn = fight(client, world, relay["id"], (50, 50))
    assert holder(client, world, relay["id"]) == world["blue"]  # a draw changes nothing
    blocked = client.post(f"/api/v1/battles/{won['id']}/revert")
    assert_problem(blocked, 409, "battle_revert_blocked")
    assert client.post(f"/api/v1/battles/{drawn['id']}/revert").status_code == 200
    assert client.post(f"/api/v1/battles/{won['id']}/revert").status_code == 200
    assert holder(client, world, relay["id"]) == world["red"]  # exactly as before


def test_a_held_territory_with_the_bonus_pays_one_rp(client: TestClient) -> None:
    world = setup_two_forces(client)
    for _ in range(2):  # Blue spends down to 3 RP, so the cap does not hide the bonus
        client.post(
            f"/api/v1/forces/{world['blue']}/requisitions",
            json={"requisition": "increase_supply_limit"},
        )
    mine = territory(
        client,
        world["campaign"],
        name="Forge",
        bonus="requisition_point",
        holder_force_id=world["blue"],
    )
    fight(client, world, mine["id"], (40, 60))  # Blue loses the Forge in this battle...
    blue = client.get(f"/api/v1/forces/{world['blue']}").json()
    red = client.get(f"/api/v1/forces/{world['red']}").json()
    assert blue["requisition_points"] == 3 + 1 + 1  # ...but held it as the battle began
    assert red["requisition_points"] == 5  # capped at 5 anyway
    assert holder(client, world, mine["id"]) == world["red"]


def test_the_map_travels_with_the_campaign(client: TestClient, engine: Engine) -> None:
    world = setup_two_forces(client)
    hive = territory(client, world["campaign"], name="Hive", holder_force_id=world["red"])
    territory(client, world["campaign"], name="Wastes", neighbours=[hive["id"]])
    fight(client, world, hive["id"], (60, 40))
    with Session(engine) as session:
        document = transfer.export_campaign(session, campaign_id=world["campaign"])
        copy = transfer.import_campaign(session, document)
        session.commit()
        copy_id = copy.id
    copied = {t["name"]: t for t in client.get(f"/api/v1/campaigns/{copy_id}/territories").json()}
    assert copied["Hive"]["id"] != hive["id"]
    assert copied["Hive"]["neighbours"] == [copied["Wastes"]["id"]]
    assert copied["Wastes"]["neighbours"] == [copied["Hive"]["id"]]
    forces = {
        f["name"]: f["id"]
        for f in client.get(f"/api/v1/campaigns/{copy_id}/forces").json()["items"]
    }
    assert copied["Hive"]["holder_force_id"] == forces["Ultramarines"]
    [battle] = client.get(f"/api/v1/campaigns/{copy_id}/battles").json()["items"]
    assert battle["territory_id"] == copied["Hive"]["id"]
