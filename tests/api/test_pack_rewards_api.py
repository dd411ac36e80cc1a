"""A rule pack's reward goes to the unit that earned it (issue 47), on SQLite and
PostgreSQL: a card counter's threshold and a unit's quest name their unit, and only it may
take the reward; a force's quest for a CHARACTER offers only CHARACTERs, and every refusal
speaks of the pack's own reward (never a core mission's words)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force, unit
from tests.api.test_rule_packs import attached

TAINT = """
format: crusade-rule-pack/1
id: house_of_ash
name: House of Ash
version: "1"
counters:
  - {id: taint, name: Taint, scope: card, start: 0, min: 0, max: 5}
requisitions:
  - id: bargain
    name: Dark Bargain
    cost_rp: 0
    target: unit
    summary: The Knight bargains; 2 Taint.
    effects: [{kind: change_counter, counter: taint, amount: 2}]
  - id: boon
    name: Boon of the Pyre
    cost_rp: 1
    only_as_bonus: true
    target: unit
    summary: A burning boon, worth 1 Crusade point.
    effects: [{kind: add_upgrade, name: Pyre boon, crusade_points: 1}]
thresholds:
  - id: tainted
    name: Tainted
    counter: taint
    at: 2
    effects: [{kind: free_requisitions, requisitions: [boon], mode: all, target: any_unit}]
    summary: A Knight with 2 Taint earns a boon.
"""


def test_a_card_thresholds_reward_names_its_unit_and_only_it_takes_it(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    attached(client, cid, TAINT)
    blue = force(client, cid)
    howl = unit(client, blue, "Bloodhowl")["id"]
    other = unit(client, blue, "Ashclaw")["id"]
    bought = client.post(
        f"/api/v1/forces/{blue}/requisitions", json={"requisition": "bargain", "card_id": howl}
    )
    assert bought.status_code in (200, 201), bought.text
    [owed] = client.get(f"/api/v1/forces/{blue}/decisions").json()["items"]
    assert owed["kind"] == "victor_bonus" and owed["payload"]["threshold"]["id"] == "tainted"
    assert owed["card_id"] == howl
    assert owed["payload"]["eligible"] == [howl]
    page = client.get(f"/decisions/{owed['id']}")
    assert page.status_code == 200
    assert "Free requisitions: Bloodhowl" in page.text
    form = page.text.split('data-testid="reward-units"')[1]
    assert f'value="{howl}"' in form and f'value="{other}"' not in form

    before = dump(engine)
    refused = client.post(
        f"/api/v1/decisions/{owed['id']}/answer",
        json={"requisitions": [{"requisition": "boon", "card_id": other}]},
    )
    problem = assert_problem(refused, 422, "reward_unit_not_eligible")
    assert "Ashclaw cannot take Boon of the Pyre" in problem["detail"]
    assert "Tainted" in problem["detail"] and "only Bloodhowl" in problem["detail"]
    assert dump(engine) == before

    answered = client.post(  # no unit named: the one that earned it
        f"/api/v1/decisions/{owed['id']}/answer", json={"requisitions": [{"requisition": "boon"}]}
    )
    assert answered.status_code == 200, answered.text
    assert answered.json()["answer"]["requisitions"][0]["card_id"] == howl
    cards = {c: client.get(f"/api/v1/cards/{c}").json() for c in (howl, other)}
    assert [u["detail"] for u in cards[howl]["upgrades"]] == ["Pyre boon"]
    assert cards[other]["upgrades"] == []


SAGAS = """
format: crusade-rule-pack/1
id: tomb_sagas
name: Tomb Sagas
version: "1"
requisitions:
  - id: engram_collapse
    name: Engram Collapse
    cost_rp: 1
    only_as_bonus: true
    target: unit
    summary: The lord's memory fails; it loses 1 XP.
    effects: [{kind: remove_xp, amount: 1}]
  - id: crown_gift
    name: Gift of the Crown
    cost_rp: 1
    only_as_bonus: true
    target: unit
    summary: A CHARACTER is honoured, worth 1 Crusade point.
    effects: [{kind: add_upgrade, name: Crown gift, crusade_points: 1}]
quests:
  - id: lords_memory
    name: The Lord's Memory
    scope: card
    automatic: true
    exclusive: false
    eligible: CHARACTER
    summary: A lord that fights forgets.
    steps: [{name: Fight, when: battle_played, count: 1}]
    reward:
      - {kind: free_requisitions, requisitions: [engram_collapse], mode: all, target: any_unit}
  - id: crownworld
    name: The Crownworld
    scope: force
    automatic: true
    exclusive: false
    summary: Hold the crownworld one battle; a CHARACTER is honoured.
    steps: [{name: Hold, when: battle_played, count: 1}]
    reward: [{kind: free_requisitions, requisitions: [crown_gift], mode: all, target: character}]
"""


def test_a_quests_reward_goes_to_its_unit_or_a_character_it_allows(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    attached(client, cid, SAGAS)
    blue, red = force(client, cid, "Sekhet Dynasty", "NECRONS"), force(client, cid)
    lord = unit(client, blue, "Lord Sekhet", keywords=["NECRONS", "INFANTRY", "CHARACTER"])["id"]
    ark = unit(client, blue, "Doomsday Ark", keywords=["NECRONS", "VEHICLE"])["id"]
    crypt = unit(client, blue, "Cryptek", keywords=["NECRONS", "INFANTRY", "CHARACTER"])["id"]
    foe = unit(client, red)["id"]
    body = {
        "battle_size": "combat_patrol",
        "mission": "sweep_and_clear",
        "sides": [
            {
                "force_id": blue,
                "role": "attacker",
                "roster": [lord, ark],
                "agendas": ["cull_the_hordes"],
            },
            {"force_id": red, "role": "defender", "roster": [foe], "agendas": ["cull_the_hordes"]},
        ],
    }
    mustered = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert mustered.status_code == 201, mustered.text
    battle = mustered.json()["id"]
    result = {
        "sides": [
            {
                "force_id": blue,
                "victory_points": 30,
                "units": [{"card_id": ark, "destroyed_melee": 2}],
            },
            {"force_id": red, "victory_points": 10},
        ]
    }
    done = client.post(f"/api/v1/battles/{battle}/result", json=result)
    assert done.status_code == 200, done.text
    ark_xp = client.get(f"/api/v1/cards/{ark}").json()["xp"]
    assert ark_xp >= 1
    owed = {
        d["payload"]["quest"]["id"]: d
        for d in client.get(f"/api/v1/forces/{blue}/decisions").json()["items"]
        if d["kind"] == "victor_bonus"
    }
    memory, crown = owed["lords_memory"], owed["crownworld"]
    assert (memory["card_id"], memory["payload"]["eligible"]) == (lord, [lord])
    # a force's reward earned in a battle: a CHARACTER of that battle's roster (ruling 77)
    assert (crown["card_id"], crown["payload"]["eligible"]) == (None, [lord])

    before = dump(engine)
    took = client.post(
        f"/api/v1/decisions/{memory['id']}/answer",
        json={"requisitions": [{"requisition": "engram_collapse", "card_id": ark}]},
    )
    problem = assert_problem(took, 422, "reward_unit_not_eligible")
    assert "The Lord's Memory" in problem["detail"]
    assert dump(engine) == before
    assert client.get(f"/api/v1/cards/{ark}").json()["xp"] == ark_xp

    page = client.get(f"/decisions/{crown['id']}")
    assert page.status_code == 200
    form = page.text.split('data-testid="reward-units"')[1]
    assert f'value="{lord}"' in form and f'value="{crypt}"' not in form
    assert f'value="{ark}"' not in form  # a VEHICLE, not a CHARACTER
    wrong = client.post(
        f"/api/v1/decisions/{crown['id']}/answer",
        json={"requisitions": [{"requisition": "crown_gift", "card_id": ark}]},
    )
    problem = assert_problem(wrong, 422, "reward_unit_not_eligible")
    assert "The Crownworld" in problem["detail"] and "CHARACTER" in problem["detail"]
    assert "Intel" not in problem["detail"]
    assert dump(engine) == before
    assert "Lord Sekhet" in problem["detail"]
    fine = client.post(
        f"/api/v1/decisions/{crown['id']}/answer",
        json={"requisitions": [{"requisition": "crown_gift", "card_id": lord}]},
    )
    assert fine.status_code == 200, fine.text
    assert [u["detail"] for u in client.get(f"/api/v1/cards/{lord}").json()["upgrades"]] == [
        "Crown gift"
    ]


def test_the_reward_page_answers_for_the_unit_that_earned_it(
    client: TestClient, engine: Engine
) -> None:
    """The website: ticking the reward with no unit gives it to its unit; naming another
    (a hand-made form) is refused in the pack's words, nothing changed."""
    cid = campaign(client)
    attached(client, cid, TAINT)
    blue = force(client, cid)
    howl = unit(client, blue, "Bloodhowl")["id"]
    other = unit(client, blue, "Ashclaw")["id"]
    client.post(
        f"/api/v1/forces/{blue}/requisitions", json={"requisition": "bargain", "card_id": howl}
    )
    [owed] = client.get(f"/api/v1/forces/{blue}/decisions").json()["items"]
    token = client.get("/api/v1/auth/csrf").json()["csrf_token"]
    before = dump(engine)
    wrong = client.post(
        f"/decisions/{owed['id']}/answer",
        data={"csrf_token": token, "use": "0", "card_id_0": str(other)},
    )
    assert wrong.status_code == 422
    assert "Ashclaw cannot take Boon of the Pyre" in wrong.text.replace("&#39;", "'")
    assert dump(engine) == before
    done = client.post(f"/decisions/{owed['id']}/answer", data={"csrf_token": token, "use": "0"})
    assert done.status_code == 200, done.text
    upgrades = client.get(f"/api/v1/cards/{howl}").json()["upgrades"]
    assert [u["detail"] for u in upgrades] == ["Pyre boon"]


SPAWNING = """
format: crusade-rule-pack/1
id: the_swarm
name: The Swarm
version: "1"
counters:
  - {id: biomass, name: Biomass, scope: force, start: 0, min: 0, max: 20}
requisitions:
  - id: feed
    name: Feed
    cost_rp: 0
    target: force
    summary: The swarm feeds; 3 Biomass.
    effects: [{kind: change_counter, counter: biomass, amount: 3}]
  - id: spawn
    name: Spawn
    cost_rp: 1
    only_as_bonus: true
    target: force
    summary: A brood the player names, of 6 Power at most, joins.
    effects: [{kind: add_unit, chosen: true, max_power_rating: 6, keywords: [INFANTRY]}]
thresholds:
  - id: spawning
    name: Spawning
    counter: biomass
    at: 3
    reset_to: 0
    effects: [{kind: free_requisitions, requisitions: [spawn], mode: all, target: force}]
    summary: At 3 Biomass the swarm spawns a brood.
"""


def test_a_reward_that_brings_a_named_unit_asks_for_it_on_its_page(client: TestClient) -> None:
    """A threshold's free Spawn (add_unit, chosen): the decision page asks for the new
    unit, within the effect's most Power, and the unit joins."""
    cid = campaign(client)
    attached(client, cid, SPAWNING)
    blue = force(client, cid, "Hive Fleet", "TYRANIDS")
    fed = client.post(f"/api/v1/forces/{blue}/requisitions", json={"requisition": "feed"})
    assert fed.status_code == 201, fed.text
    [owed] = client.get(f"/api/v1/forces/{blue}/decisions").json()["items"]
    page = client.get(f"/decisions/{owed['id']}").text
    power = re.search(r'<input id="f-unit_power_rating_0"[^>]*>', page)
    assert power is not None and 'max="6"' in power[0]
    token = client.get("/api/v1/auth/csrf").json()["csrf_token"]
    form = {"csrf_token": token, "use": "0", "unit_name_0": "Spawned Brood"}
    done = client.post(f"/decisions/{owed['id']}/answer", data={**form, "unit_power_rating_0": "5"})
    assert done.status_code == 200, done.text
    names = [c["name"] for c in client.get(f"/api/v1/forces/{blue}").json()["cards"]]
    assert names == ["Spawned Brood"]
