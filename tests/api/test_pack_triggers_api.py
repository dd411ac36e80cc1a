"""A rule pack's triggers and thresholds through the API (issue 38), on SQLite and
PostgreSQL: a faction resource that moves every battle, a threshold's reward and the
decision it owes, two battles and a revert, every number on the force and in the feed."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import campaign, force, unit
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
