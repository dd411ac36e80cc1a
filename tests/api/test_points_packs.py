"""A campaign that musters by points (a rule pack's house rule, issue 22): the Supply Limit,
each unit's share of it and each battle size's limit count points; each unit needs its
points; the measure is chosen before the first force (ruling 57). On both engines."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force, unit
from tests.api.test_rule_packs import EXAMPLES, HOUSE, attach, attached

POINTS = (EXAMPLES / "points.yaml").read_text()


def points_force(client: TestClient) -> tuple[int, int]:
    cid = campaign(client)
    attached(client, cid, POINTS)
    return cid, force(client, cid)


def roster(
    client: TestClient, cid: int, sides: list[tuple[int, list[int]]], size: str = "combat_patrol"
) -> Any:
    mission = {"combat_patrol": "sweep_and_clear", "incursion": "supply_cache"}[size]
    agendas = {"combat_patrol": ["reaper"], "incursion": ["reaper", "sentinel"]}[size]
    body = {
        "battle_size": size,
        "mission": mission,
        "sides": [
            {"force_id": fid, "role": role, "roster": ids, "agendas": agendas}
            for (fid, ids), role in zip(sides, ("attacker", "defender"), strict=True)
        ],
    }
    return client.post(f"/api/v1/campaigns/{cid}/battles", json=body)


def test_supply_is_counted_in_points_and_every_unit_needs_them(
    client: TestClient, engine: Engine
) -> None:
    cid, fid = points_force(client)
    host = client.get(f"/api/v1/forces/{fid}").json()
    assert (host["supply_limit"], host["supply_used"], host["muster_by"]) == (1000, 0, "points")

    before = dump(engine)
    unpriced = client.post(
        f"/api/v1/forces/{fid}/cards",
        json={"name": "Intercessor Squad", "power_rating": 5, "keywords": ["IMPERIUM"]},
    )
    problem = assert_problem(unpriced, 422, "points_missing")
    assert "Intercessor Squad" in problem["detail"]
    assert dump(engine) == before

    unit(client, fid, "Intercessor Squad", points=450)
    unit(client, fid, "Redemptor Dreadnought", power=10, points=450)
    before = dump(engine)
    over = client.post(
        f"/api/v1/forces/{fid}/cards",
        json={"name": "Repulsor", "power_rating": 16, "keywords": ["IMPERIUM"], "points": 280},
    )
    problem = assert_problem(over, 422, "supply_limit_exceeded")
    assert "1180 points" in problem["detail"] and "Supply Limit of 1000" in problem["detail"]
    assert dump(engine) == before

    host = client.get(f"/api/v1/forces/{fid}").json()
    assert host["supply_used"] == 900  # 15 Power Rating, 900 points
    [line] = client.get(f"/api/v1/campaigns/{cid}/standings").json()
    assert (line["supply_used"], line["supply_limit"], line["muster_by"]) == (900, 1000, "points")
    page = client.get(f"/forces/{fid}").text
    assert "900 / 1000</strong> points used" in page
    assert "900 / 1000 pts" in client.get(f"/campaigns/{cid}").text


def test_a_battle_size_limits_each_army_in_points(client: TestClient, engine: Engine) -> None:
    cid, blue = points_force(client)
    red = force(client, cid, "Black Legion", "CHAOS")
    squad = unit(client, blue, "Intercessor Squad", points=300)["id"]
    dread = unit(client, blue, "Redemptor Dreadnought", power=10, points=250)["id"]
    foe = unit(client, red, "Legionaries", power=6, keywords=["CHAOS"], points=120)["id"]

    before = dump(engine)  # 550 points: over Combat Patrol's 500, though only 15 Power
    refused = roster(client, cid, [(blue, [squad, dread]), (red, [foe])])
    problem = assert_problem(refused, 422, "points_limit_exceeded")
    assert "550 points" in problem["detail"] and "at most 500 points" in problem["detail"]
    assert dump(engine) == before

    mustered = roster(client, cid, [(blue, [squad, dread]), (red, [foe])], "incursion")
    assert mustered.status_code == 201, mustered.text


def test_increase_supply_limit_and_fresh_recruits_in_points(client: TestClient) -> None:
    _, fid = points_force(client)
    squad = unit(client, fid, "Intercessor Squad", points=100)["id"]
    bought = client.post(
        f"/api/v1/forces/{fid}/requisitions", json={"requisition": "increase_supply_limit"}
    )
    assert bought.status_code == 201, bought.text
    assert client.get(f"/api/v1/forces/{fid}").json()["supply_limit"] == 1100

    missing = client.post(
        f"/api/v1/forces/{fid}/requisitions",
        json={"requisition": "fresh_recruits", "card_id": squad, "new_power_rating": 10},
    )
    assert_problem(missing, 422, "requisition_detail_missing")
    grown = client.post(
        f"/api/v1/forces/{fid}/requisitions",
        json={
            "requisition": "fresh_recruits",
            "card_id": squad,
            "new_power_rating": 10,
            "new_points": 200,
        },
    )
    assert grown.status_code == 201, grown.text
    host = client.get(f"/api/v1/forces/{fid}").json()
    [card] = host["cards"]
    assert (card["power_rating"], card["points"], host["supply_used"]) == (10, 200, 200)


def test_the_measure_is_chosen_before_the_first_force(client: TestClient, engine: Engine) -> None:
    cid = campaign(client)
    fid = force(client, cid)
    before = dump(engine)
    refused = attach(client, cid, POINTS)
    problem = assert_problem(refused, 409, "rule_pack_changes_muster")
    assert "already has forces" in problem["detail"]
    assert dump(engine) == before
    assert client.get(f"/api/v1/forces/{fid}").json()["muster_by"] == "power_level"

    other, _ = points_force(client)  # attached first: the force starts in points
    before = dump(engine)
    detached = client.delete(f"/api/v1/campaigns/{other}/rule-packs/points_not_power")
    assert_problem(detached, 409, "rule_pack_changes_muster")
    assert dump(engine) == before
    # A pack whose Supply Limit is in Power cannot join a points campaign (nor the
    # reverse); one that leaves the Supply Limit alone can.
    before = dump(engine)
    problem = assert_problem(attach(client, other, HOUSE), 409, "rule_pack_supply_measure")
    assert "Our house rules gives the Supply Limit in Power Rating" in problem["detail"]
    assert dump(engine) == before
    no_supply = HOUSE.replace("  starting_supply_limit: 75\n", "")
    assert attach(client, other, no_supply).status_code == 201
    fresh = campaign(client, "Power league")
    attached(client, fresh, HOUSE)
    problem = assert_problem(attach(client, fresh, POINTS), 409, "rule_pack_supply_measure")


def test_a_pack_that_musters_by_points_gives_its_numbers_in_points(client: TestClient) -> None:
    cid = campaign(client)
    lacking = POINTS.replace("  supply_limit_increase: 100\n", "")
    problem = assert_problem(attach(client, cid, lacking), 422, "rule_pack_invalid")
    assert "settings" in problem["detail"] and "supply_limit_increase" in problem["detail"]
    unpriced = POINTS + (
        "requisitions:\n"
        "  - id: muster_levy\n"
        "    name: Muster the Levy\n"
        "    cost_rp: 1\n"
        "    summary: A levy joins the host.\n"
        "    effects: [{kind: add_unit, name: Levy, power_rating: 3}]\n"
    )
    problem = assert_problem(attach(client, cid, unpriced), 422, "rule_pack_invalid")
    assert "requisitions[0].effects[0].points" in problem["detail"]
    assert client.get(f"/api/v1/campaigns/{cid}/rule-packs").json() == []
