"""A rule pack's Agendas that give XP other than per tally mark (issue 22): achieved,
highest tally, threshold, as the core's Agendas do; on SQLite and PostgreSQL."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force, unit
from tests.api.test_rule_packs import attach, attached

TRIALS = """
format: crusade-rule-pack/1
id: trials
name: Trials
version: "1"
settings:
  agendas_per_battle: {combat_patrol: 3}
agendas:
  - id: hold_the_line
    name: Hold the Line
    category: Trials
    summary: Units that stood their ground are honoured.
    xp: {kind: achieved, xp: 2}
  - id: trophy_hunt
    name: Trophy Hunt
    category: Hunts
    summary: The unit with the most trophies is honoured.
    xp: {kind: highest_tally, xp: 3}
  - id: long_vigil
    name: Long Vigil
    category: Vigils
    summary: A unit that keeps watch long enough is honoured.
    xp: {kind: threshold, min_tally: 3, xp: 2}
"""


def test_achieved_highest_and_threshold_agendas_give_their_xp(client: TestClient) -> None:
    cid = campaign(client)
    attached(client, cid, TRIALS)
    blue, red = force(client, cid), force(client, cid, "Black Legion", "CHAOS")
    squad, guard = unit(client, blue)["id"], unit(client, blue, "Veteran Guard")["id"]
    foe = unit(client, red, "Legionaries", keywords=["CHAOS", "INFANTRY"])["id"]
    trials = ["hold_the_line", "trophy_hunt", "long_vigil"]
    sides = [
        {"force_id": blue, "role": "attacker", "roster": [squad, guard], "agendas": trials},
        {"force_id": red, "role": "defender", "roster": [foe], "agendas": trials},
    ]
    body = {"battle_size": "combat_patrol", "mission": "sweep_and_clear", "sides": sides}
    battle = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert battle.status_code == 201, battle.text
    tallies = {
        squad: {"hold_the_line": 1, "trophy_hunt": 2, "long_vigil": 3},
        guard: {"hold_the_line": 1, "trophy_hunt": 1, "long_vigil": 2},
    }
    result = {
        "sides": [
            {
                "force_id": blue,
                "victory_points": 30,
                "units": [{"card_id": c, "agenda_tallies": t} for c, t in tallies.items()],
            },
            {"force_id": red, "victory_points": 10},
        ]
    }
    done = client.post(f"/api/v1/battles/{battle.json()['id']}/result", json=result)
    assert done.status_code == 200, done.text
    xp = {c: client.get(f"/api/v1/cards/{c}").json()["xp"] for c in (squad, guard)}
    # 1 XP for fighting; achieved 2 each; the highest tally 3; a tally of 3 reaches 2
    assert xp == {squad: 1 + 2 + 3 + 2, guard: 1 + 2}
    page = client.get(f"/campaigns/{cid}/rules").text
    assert "3 XP for the unit with the highest tally" in page


def test_an_agenda_with_two_ways_to_gain_xp_or_none_is_refused(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    before = dump(engine)
    both = TRIALS.replace(
        "xp: {kind: achieved, xp: 2}", "xp: {kind: achieved, xp: 2}\n    xp_per_tally: 1"
    )
    problem = assert_problem(attach(client, cid, both), 422, "rule_pack_invalid")
    assert problem["field"] == "agendas[0]" and "either xp_per_tally or xp" in problem["detail"]
    low = TRIALS.replace("min_tally: 3", "min_tally: 0")
    problem = assert_problem(attach(client, cid, low), 422, "rule_pack_invalid")
    assert problem["field"] == "agendas[2].xp.min_tally"
    assert dump(engine) == before
