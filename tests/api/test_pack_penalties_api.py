"""A failed quest takes XP and RP away (issue 47, "effects the trial missed"), on SQLite and
PostgreSQL: never below 0, the rank kept, and a revert puts both back exactly."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.rules import packs
from app.rules.data import rulebook
from tests.api.helpers import campaign, force, unit
from tests.api.test_rule_packs import attached

TRIAL = """
format: crusade-rule-pack/1
id: trials
name: Trials
version: "1"
agendas:
  - {id: zeal, name: Zeal, summary: s, xp_per_tally: 3, max_tally: 1}
quests:
  - id: trial_of_faith
    name: Trial of Faith
    automatic: true
    summary: Endure three battles; fall and be shamed.
    steps: [{name: Endure, when: battle_played, count: 3}]
    fails_when: own_unit_destroyed
    penalty:
      - {kind: remove_xp, amount: 2}
      - {kind: change_requisition_points, amount: -2}
"""


def _battle(client: TestClient, cid: int, blue: int, mine: int, red: int, foe: int) -> int:
    sides = [
        {"force_id": blue, "role": "attacker", "roster": [mine], "agendas": ["zeal"]},
        {"force_id": red, "role": "defender", "roster": [foe], "agendas": ["zeal"]},
    ]
    body = {"battle_size": "combat_patrol", "mission": "sweep_and_clear", "sides": sides}
    mustered = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert mustered.status_code == 201, mustered.text
    return int(mustered.json()["id"])


def _result(
    client: TestClient, battle: int, blue: int, mine: int, red: int, foe: int, fell: bool
) -> None:
    mine_report = {"card_id": mine, "destroyed": fell, "agenda_tallies": {"zeal": 1}}
    sides = [
        {
            "force_id": blue,
            "victory_points": 10,
            "units": [mine_report],
            "dice": [6] if fell else None,
        },
        {"force_id": red, "victory_points": 30, "units": [{"card_id": foe}]},
    ]
    done = client.post(f"/api/v1/battles/{battle}/result", json={"sides": sides})
    assert done.status_code == 200, done.text


def test_a_failed_quest_takes_xp_and_rp_and_a_revert_gives_them_back(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    attached(client, cid, TRIAL)
    blue, red = force(client, cid), force(client, cid, "Black Legion", "CHAOS")
    mine, foe = unit(client, blue)["id"], unit(client, red, keywords=["CHAOS", "INFANTRY"])["id"]
    _result(client, _battle(client, cid, blue, mine, red, foe), blue, mine, red, foe, False)
    card = client.get(f"/api/v1/cards/{mine}").json()
    assert card["xp"] == 4  # 1 for the battle, 3 for Zeal
    assert [(q["state"], q["tally"]) for q in card["quests"]] == [("under_way", 1)]

    second = _battle(client, cid, blue, mine, red, foe)
    _result(client, second, blue, mine, red, foe, True)
    card = client.get(f"/api/v1/cards/{mine}").json()
    assert card["xp"] == 6  # 4 + 1 + 3, then 2 taken for the failed trial
    assert [q["state"] for q in card["quests"]] == ["failed"]
    assert client.get(f"/api/v1/forces/{blue}").json()["requisition_points"] == 3  # 5 - 2

    assert client.post(f"/api/v1/battles/{second}/revert").status_code == 200
    card = client.get(f"/api/v1/cards/{mine}").json()
    assert card["xp"] == 4
    assert [(q["state"], q["tally"]) for q in card["quests"]] == [("under_way", 1)]
    assert client.get(f"/api/v1/forces/{blue}").json()["requisition_points"] == 5


def test_a_force_quest_takes_no_units_xp() -> None:
    text = TRIAL.replace("automatic: true", "automatic: true\n    scope: force")
    pack, root = packs.read(text)
    with pytest.raises(packs.PackError) as refused:
        packs.check_against(pack, rulebook(), [], root)
    assert "quests[0].penalty[0] (line 17): remove_xp needs a unit: a card quest" in str(
        refused.value
    )
