"""A rule pack's triggers and thresholds through the API (issue 38), on SQLite and
PostgreSQL: a faction resource that moves every battle, a threshold's reward and the
decision it owes, two battles and a revert, every number on the force and in the feed."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force, unit
from tests.api.test_rule_packs import attached
from tests.rules.test_pack_triggers import HOST

CULL = ["cull_the_hordes"]


def _battle(client: TestClient, cid: int, blue: int, red: int, mine: int, foe: int) -> int:
    body = {
        "battle_size": "combat_patrol",
        "mission": "sweep_and_clear",
        "sides": [
            {"force_id": blue, "role": "attacker", "roster": [mine], "agendas": CULL},
            {"force_id": red, "role": "defender", "roster": [foe], "agendas": CULL},
        ],
    }
    mustered = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert mustered.status_code == 201, mustered.text
    return int(mustered.json()["id"])


def test_a_resource_moves_every_battle_and_a_threshold_pays(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    attached(client, cid, HOST)
    blue, red = force(client, cid), force(client, cid, "Black Legion", "CHAOS")
    mine = unit(client, blue, "Zealots")["id"]
    foe = unit(client, red, "Chaos Lord", keywords=["CHAOS", "INFANTRY", "CHARACTER"])["id"]
    rules = client.get(f"/api/v1/campaigns/{cid}/rules").json()
    assert [t["id"] for t in rules["triggers"]] == [
        "marching",
        "triumph",
        "headsman",
        "martyrs",
        "kills",
    ]
    assert [t["id"] for t in rules["thresholds"]] == ["zealous", "glorious"]

    first = _battle(client, cid, blue, red, mine, foe)  # a win, the enemy Lord slain
    won = client.post(
        f"/api/v1/battles/{first}/result",
        json={
            "sides": [
                {"force_id": blue, "victory_points": 30, "units": [{"card_id": mine}]},
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
    host = client.get(f"/api/v1/forces/{blue}").json()
    # 1 battle + 2 victory + 3 the Lord = 6: Zealous (at 5) pays and resets to 0
    assert host["counters"] == {"zeal": 0}
    owed = client.get(f"/api/v1/forces/{blue}/decisions").json()["items"]
    [sermon] = [d for d in owed if d["kind"] == "victor_bonus"]
    assert sermon["payload"]["bonus"]["effect"]["requisitions"] == ["sermon"]
    assert [e["id"] for e in sermon["pack_entries"]] == ["sermon"]
    answered = client.post(
        f"/api/v1/decisions/{sermon['id']}/answer",
        json={"requisitions": [{"requisition": "sermon"}]},
    )
    assert answered.status_code == 200, answered.text
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"] == {"zeal": 1}

    second = _battle(client, cid, blue, red, mine, foe)  # a loss: 1 for the battle
    lost = client.post(
        f"/api/v1/battles/{second}/result",
        json={
            "sides": [
                {"force_id": blue, "victory_points": 5},
                {"force_id": red, "victory_points": 30},
            ]
        },
    )
    assert lost.status_code == 200, lost.text
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"] == {"zeal": 2}
    assert client.post(f"/api/v1/battles/{second}/revert").status_code == 200
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"] == {"zeal": 1}
    feed = client.get(f"/api/v1/campaigns/{cid}/events?limit=200").json()["items"]
    zeal = [
        (e["details"]["before"], e["details"]["after"])
        for e in feed
        if e["kind"] == "counter_changed" and e["force_id"] == blue
    ]
    # the first battle took Zeal from 0 to 6 and back to 0: no change to tell
    assert zeal == [(0, 1), (1, 2), (2, 1)]  # the sermon, the second battle, its revert
    # every force of the campaign plays by the pack: the Legion's 1 battle + 1 loss (its Lord)
    assert client.get(f"/api/v1/forces/{red}").json()["counters"] == {"zeal": 2}


VOWS = """
format: crusade-rule-pack/1
id: vow_keepers
name: The Vow Keepers
version: "1"
counters:
  - {id: vows, name: Vows, scope: force, start: 0, min: 0, max: 10}
requisitions:
  - id: swear
    name: Swear a Vow
    cost_rp: 1
    summary: The host swears 2 Vows.
    effects: [{kind: change_counter, counter: vows, amount: 2}]
  - id: blessing
    name: Blessing
    cost_rp: 1
    only_as_bonus: true
    summary: The host's Supply Limit grows by 5.
    effects: [{kind: change_supply_limit, amount: 5}]
thresholds:
  - id: oathbound
    name: Oathbound
    counter: vows
    at: 2
    reset_to: 0
    effects:
      - {kind: change_supply_limit, amount: 1}
      - {kind: free_requisitions, requisitions: [blessing], mode: all, target: force}
    summary: Two Vows kept; the host grows and is blessed.
"""


def test_a_purchase_that_raises_a_counter_to_a_threshold_fires_it(
    client: TestClient, engine: Engine
) -> None:
    """Issue 38 (part 2): a threshold fires wherever the counter rises to it (here a
    purchase), says so in the feed, and the decision it owes is a threshold's free
    requisitions, never "a victor bonus"."""
    cid = campaign(client)
    attached(client, cid, VOWS)
    blue = force(client, cid)
    before = client.get(f"/api/v1/forces/{blue}").json()
    bought = client.post(f"/api/v1/forces/{blue}/requisitions", json={"requisition": "swear"})
    assert bought.status_code in (200, 201), bought.text
    host = client.get(f"/api/v1/forces/{blue}").json()
    assert host["counters"] == {"vows": 0}  # 0 + 2 reached Oathbound, which reset it
    assert host["supply_limit"] == before["supply_limit"] + 1
    [owed] = client.get(f"/api/v1/forces/{blue}/decisions").json()["items"]
    assert owed["kind"] == "victor_bonus"
    assert owed["payload"]["threshold"] == {
        "id": "oathbound",
        "name": "Oathbound",
        "pack": "vow_keepers",
    }
    feed = client.get(f"/api/v1/campaigns/{cid}/events?limit=50").json()["items"]
    [reached] = [e for e in feed if e["kind"] == "threshold_reached"]
    assert reached["details"]["threshold"] == "oathbound"
    assert reached["summary"].endswith(
        "reached Oathbound: Vows rose to 2 or more; it starts again at 0."
    )
    [pending] = [e for e in feed if e["kind"] == "decision_pending"]
    assert "victor" not in pending["summary"] and "Oathbound" in pending["summary"]
    page = client.get(f"/decisions/{owed['id']}")
    assert page.status_code == 200
    assert "Free requisitions" in page.text and "victor bonus" not in page.text
    answered = client.post(
        f"/api/v1/decisions/{owed['id']}/answer",
        json={"requisitions": [{"requisition": "blessing"}]},
    )
    assert answered.status_code == 200, answered.text
    assert client.get(f"/api/v1/forces/{blue}").json()["supply_limit"] == (
        before["supply_limit"] + 6
    )


def test_a_battle_threshold_is_in_the_feed(client: TestClient, engine: Engine) -> None:
    cid = campaign(client)
    attached(client, cid, HOST)
    blue, red = force(client, cid), force(client, cid, "Black Legion", "CHAOS")
    mine = unit(client, blue, "Zealots")["id"]
    foe = unit(client, red, "Chaos Lord", keywords=["CHAOS", "INFANTRY", "CHARACTER"])["id"]
    first = _battle(client, cid, blue, red, mine, foe)
    won = client.post(
        f"/api/v1/battles/{first}/result",
        json={
            "sides": [
                {"force_id": blue, "victory_points": 30, "units": [{"card_id": mine}]},
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
    feed = client.get(f"/api/v1/campaigns/{cid}/events?limit=200").json()["items"]
    reached = [
        (e["force_id"], e["battle_id"], e["details"]["threshold"])
        for e in feed
        if e["kind"] == "threshold_reached"
    ]
    assert reached == [(blue, first, "zealous")]


RUSTWAKE = (
    Path(__file__).resolve().parents[2] / "examples" / "packs" / "rustwake-reclaimers.yaml"
).read_text()


def test_a_threshold_that_brings_a_unit_and_a_requisition_that_transforms_one(
    client: TestClient, engine: Engine
) -> None:
    """The Rustwake Reclaimers (issue 38's walkthrough) through the JSON API: a purchase
    says the counters it moved and the unit it transformed; The Great Haul's free Scrap
    Walker, answered as a decision, joins the Order of Battle (it was a 500); an answer over
    the Supply Limit is refused with nothing changed."""
    cid = campaign(client)
    attached(client, cid, RUSTWAKE)
    blue, red = force(client, cid), force(client, cid, "Black Legion", "CHAOS")
    crew = unit(client, blue, "Scrap Crew")["id"]
    foes = [unit(client, red, f"Cultists {n}", 1, keywords=["CHAOS"])["id"] for n in range(4)]

    def battle(lost: list[int]) -> None:
        body = {
            "battle_size": "combat_patrol",
            "mission": "sweep_and_clear",
            "sides": [
                {"force_id": blue, "role": "attacker", "roster": [crew], "agendas": CULL},
                {"force_id": red, "role": "defender", "roster": foes, "agendas": CULL},
            ],
        }
        mustered = client.post(f"/api/v1/campaigns/{cid}/battles", json=body).json()["id"]
        result = {
            "sides": [
                {"force_id": blue, "victory_points": 30},
                {
                    "force_id": red,
                    "victory_points": 10,
                    "units": [{"card_id": f, "destroyed": True} for f in lost],
                    "dice": [6] * len(lost),
                },
            ]
        }
        recorded = client.post(f"/api/v1/battles/{mustered}/result", json=result)
        assert recorded.status_code == 200, recorded.text

    battle(foes[:2])  # Salvage 0 + 2 + 2
    bought = client.post(
        f"/api/v1/forces/{blue}/requisitions",
        json={"requisition": "reforge_crew", "card_id": crew},
    )
    assert bought.status_code == 201, bought.text
    feed = client.get(f"/api/v1/campaigns/{cid}/events?limit=200").json()["items"]
    moved, became = feed[-2:]
    assert (moved["kind"], moved["details"]["counter"], moved["details"]["before"]) == (
        "counter_changed",
        "salvage",
        4,
    )
    assert moved["details"]["after"] == 2
    assert became["kind"] == "card_transformed" and became["card_id"] == crew
    assert (became["details"]["was"], became["details"]["name"]) == (
        "Scrap Crew",
        "Iron Reclaimers",
    )
    assert became["details"]["keywords"] == ["ARMOURED", "IMPERIUM", "INFANTRY"]
    assert became["summary"] == "Scrap Crew (Ultramarines) became Iron Reclaimers (Power Rating 6)."

    battle(foes[:2])  # Salvage 2 + 2 + 2 = 6: The Great Haul
    [haul] = client.get(f"/api/v1/forces/{blue}/decisions").json()["items"]
    assert haul["payload"]["threshold"]["id"] == "great_haul"
    client.post(  # the Supply Limit nearly full: 6 + 41 of 50
        f"/api/v1/forces/{blue}/cards",
        json={"name": "Big Tank", "power_rating": 41, "keywords": ["IMPERIUM", "VEHICLE"]},
    ).raise_for_status()
    answer = {"requisitions": [{"requisition": "scrap_walker"}]}
    before = dump(engine)
    over = client.post(f"/api/v1/decisions/{haul['id']}/answer", json=answer)
    assert_problem(over, 422, "supply_limit_exceeded")
    assert dump(engine) == before
    tank = next(
        c for c in client.get(f"/api/v1/forces/{blue}").json()["cards"] if c["power_rating"] == 41
    )
    assert client.delete(f"/api/v1/cards/{tank['id']}").status_code in (200, 204)
    taken = client.post(f"/api/v1/decisions/{haul['id']}/answer", json=answer)
    assert taken.status_code == 200, taken.text
    host = client.get(f"/api/v1/forces/{blue}").json()
    assert [(c["name"], c["power_rating"]) for c in host["cards"]] == [
        ("Iron Reclaimers", 6),
        ("Scrap Walker", 4),
    ]
    walker = host["cards"][1]["id"]
    assert taken.json()["answer"]["joined"] == [walker]
    assert (host["supply_used"], host["counters"]) == (10, {"salvage": 6})
    feed = client.get(f"/api/v1/campaigns/{cid}/events?limit=200").json()["items"]
    assert [e["summary"] for e in feed[-2:]] == [
        "Ultramarines added Scrap Walker (Power Rating 4).",
        "Ultramarines took its free requisitions from The Great Haul.",
    ]

    # A revert of that battle takes the Scrap Walker away again, and says so.
    second = feed[-1]["battle_id"]
    assert client.post(f"/api/v1/battles/{second}/revert").status_code == 200
    host = client.get(f"/api/v1/forces/{blue}").json()
    assert [c["name"] for c in host["cards"]] == ["Iron Reclaimers"]
    assert (host["supply_used"], host["counters"]) == (6, {"salvage": 2})
    feed = client.get(f"/api/v1/campaigns/{cid}/events?limit=200").json()["items"]
    assert "Ultramarines removed Scrap Walker from its Order of Battle." in [
        e["summary"] for e in feed if e["battle_id"] == second
    ]
