"""A card that becomes another datasheet, and one removed with a refund, through the API
(issue 38), on SQLite and PostgreSQL: a brood reabsorbed into Biomass, another evolved
keeping its XP and honours, an alpha that ascends by a quest's decision, and a revert that
puts the alpha back exactly."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import campaign, dump, force, unit
from tests.api.test_rule_packs import attached

BROOD = (Path(__file__).resolve().parents[2] / "examples/packs/cinder-brood.yaml").read_text()
CULL = ["cull_the_hordes"]


def _card(client: TestClient, card_id: int) -> dict:  # type: ignore[type-arg]
    return dict(client.get(f"/api/v1/cards/{card_id}").json())


def test_a_brood_is_reabsorbed_and_another_evolves(client: TestClient, engine: Engine) -> None:
    cid = campaign(client)
    attached(client, cid, BROOD)
    blue = force(client, cid, "Cinder Brood", "TYRANIDS")
    gaunts = unit(client, blue, "Ash Gaunts", keywords=["TYRANIDS", "INFANTRY"], power=3)
    spare = unit(client, blue, "Spare Gaunts", keywords=["TYRANIDS", "INFANTRY"], power=3)
    before = dump(engine)
    poor = client.post(
        f"/api/v1/forces/{blue}/requisitions",
        json={"requisition": "evolve_brood", "card_id": gaunts["id"]},
    )
    assert poor.status_code in (409, 422), poor.text  # 0 Biomass: not eligible
    assert dump(engine) == before

    used = client.get(f"/api/v1/forces/{blue}").json()["supply_used"]
    gone = client.post(
        f"/api/v1/forces/{blue}/requisitions",
        json={"requisition": "reabsorb", "card_id": spare["id"]},
    )
    assert gone.status_code in (200, 201), gone.text
    host = client.get(f"/api/v1/forces/{blue}").json()
    assert host["counters"]["biomass"] == 3 and host["supply_used"] == used - 3
    assert _card(client, spare["id"])["removed"] is True

    evolved = client.post(
        f"/api/v1/forces/{blue}/requisitions",
        json={"requisition": "evolve_brood", "card_id": gaunts["id"]},
    )
    assert evolved.status_code in (200, 201), evolved.text
    card = _card(client, gaunts["id"])
    assert (card["name"], card["datasheet"], card["power_rating"]) == (
        "Cinder Warriors",
        "Cinder Warriors",
        5,
    )
    assert set(card["keywords"]) == {"TYRANIDS", "INFANTRY", "SYNAPSE"}
    assert card["xp"] == gaunts["xp"] and card["rank"] == gaunts["rank"]
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"]["biomass"] == 0
    feed = client.get(f"/api/v1/campaigns/{cid}/events?limit=50").json()["items"]
    assert [e["details"]["card_id"] for e in feed if e["kind"] == "card_removed"] == [spare["id"]]


def test_an_alpha_ascends_by_its_quest_and_a_revert_puts_it_back(
    client: TestClient, engine: Engine
) -> None:
    quick = BROOD.replace("      - {name: Endure, when: battle_played, count: 2}\n", "")
    cid = campaign(client)
    attached(client, cid, quick)
    blue, red = force(client, cid, "Cinder Brood", "TYRANIDS"), force(client, cid)
    alpha = unit(client, blue, "Brood Alpha", keywords=["TYRANIDS", "INFANTRY", "CHARACTER"])
    foe = unit(client, red, "Intercessors")["id"]
    body = {
        "battle_size": "combat_patrol",
        "mission": "sweep_and_clear",
        "sides": [
            {"force_id": blue, "role": "attacker", "roster": [alpha["id"]], "agendas": CULL},
            {"force_id": red, "role": "defender", "roster": [foe], "agendas": CULL},
        ],
    }
    battle = client.post(f"/api/v1/campaigns/{cid}/battles", json=body).json()["id"]
    won = client.post(
        f"/api/v1/battles/{battle}/result",
        json={
            "sides": [
                {
                    "force_id": blue,
                    "victory_points": 30,
                    "units": [{"card_id": alpha["id"], "destroyed_melee": 1}],
                },
                {
                    "force_id": red,
                    "victory_points": 10,
                    "units": [{"card_id": foe, "destroyed": True}],
                    "dice": [6],
                },
            ]
        },
    )
    assert won.status_code == 200, won.text
    before_ascent = _card(client, alpha["id"])
    owed = client.get(f"/api/v1/forces/{blue}/decisions").json()["items"]
    [ascend] = [
        d
        for d in owed
        if d["kind"] == "victor_bonus"
        and d["payload"]["bonus"]["effect"]["requisitions"] == ["ascend_alpha"]
    ]
    assert ascend["payload"]["quest"]["id"] == "alpha_trial"
    answered = client.post(
        f"/api/v1/decisions/{ascend['id']}/answer",
        json={"requisitions": [{"requisition": "ascend_alpha", "card_id": alpha["id"]}]},
    )
    assert answered.status_code == 200, answered.text
    tyrant = _card(client, alpha["id"])
    assert (tyrant["name"], tyrant["power_rating"]) == ("Cinder Tyrant", 8)
    assert "MONSTER" in tyrant["keywords"] and tyrant["xp"] == before_ascent["xp"]

    reverted = client.post(f"/api/v1/battles/{battle}/revert")
    assert reverted.status_code == 200, reverted.text
    back = _card(client, alpha["id"])
    assert (back["name"], back["power_rating"], sorted(back["keywords"]), back["datasheet"]) == (
        alpha["name"],
        alpha["power_rating"],
        sorted(alpha["keywords"]),
        alpha["datasheet"],
    )
    assert back["xp"] == alpha["xp"] and back["quests"] == []
