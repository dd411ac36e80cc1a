"""docs/pack-coverage.md counts what the example packs of examples/packs/mixed/ show: the
Chaos Knights pack, which the six-faction walkthrough does not play (its sixth force is the
Votann one), played here in a campaign that mixes it with the other six, on SQLite and
PostgreSQL. A Knight's Damnation rises with its own deeds, its patron's boon is the only
reward it may take at Tainted, and the Sisters beside it move only their own Sanctity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, unit
from tests.api.test_pack_scope_walkthrough import _force
from tests.api.test_rule_packs import attached

MIXED = Path(__file__).resolve().parents[2] / "examples" / "packs" / "mixed"
CULL = "cull_the_hordes"


Side = tuple[int, list[int]]


def _battle(client: TestClient, cid: int, a: Side, b: Side) -> int:
    sides = [
        {"force_id": f, "role": role, "roster": roster, "agendas": [CULL]}
        for (f, roster), role in ((a, "attacker"), (b, "defender"))
    ]
    body = {"battle_size": "combat_patrol", "mission": "sweep_and_clear", "sides": sides}
    mustered = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert mustered.status_code == 201, mustered.text
    return int(mustered.json()["id"])


def _result(client: TestClient, battle: int, *sides: dict[str, Any]) -> None:
    done = client.post(f"/api/v1/battles/{battle}/result", json={"sides": list(sides)})
    assert done.status_code == 200, done.text


def _card(client: TestClient, card: int) -> dict[str, Any]:
    return dict(client.get(f"/api/v1/cards/{card}").json())


def test_a_knights_damnation_patron_and_boon_in_a_mixed_campaign(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client, "The Sundered Reach")
    for path in sorted(MIXED.glob("*.yaml")):  # all seven example packs, one campaign
        attached(client, cid, path.read_text())
    knights = _force(client, cid, "House Vargh", "CHAOS", ["CHAOS KNIGHTS"])
    sisters = _force(client, cid, "Order of the Ember", "IMPERIUM", ["ADEPTA SORORITAS"])
    knight = unit(client, knights, "Bloodhowl", 9, keywords=["CHAOS", "TITANIC", "VEHICLE"])["id"]
    canoness = unit(client, sisters, "Canoness Ysolde", 3, keywords=["IMPERIUM", "CHARACTER"])
    squad = unit(client, sisters, "Battle Sisters")["id"]
    assert client.get(f"/api/v1/forces/{knights}").json()["counters"] == {"dread": 0}

    # A Knight pledges to a patron only once it has fallen far enough (Damnation 2).
    before = dump(engine)
    pledge = {"requisition": "pledge_to_the_blood_god", "card_id": knight}
    early = client.post(f"/api/v1/forces/{knights}/requisitions", json=pledge)
    assert "Bloodhowl does not" in assert_problem(early, 422, "requisition_not_eligible")["detail"]
    assert dump(engine) == before

    # 1: the Knight destroys the squad and is Marked for Greatness: Damnation 1 + 1.
    first = _battle(client, cid, (knights, [knight]), (sisters, [squad, canoness["id"]]))
    _result(
        client,
        first,
        {
            "force_id": knights,
            "victory_points": 30,
            "units": [{"card_id": knight, "destroyed_ranged": 1, "marked_for_greatness": True}],
        },
        {
            "force_id": sisters,
            "victory_points": 10,
            "units": [
                {"card_id": squad, "destroyed": True},
                {"card_id": canoness["id"], "marked_for_greatness": True},
            ],
            "dice": [6],
        },
    )
    assert _card(client, knight)["counters"] == {"damnation": 2}
    assert client.get(f"/api/v1/forces/{knights}").json()["counters"] == {"dread": 1}
    # The Canoness, Marked for Greatness, gains her own pack's Sanctity (Chosen One: 2), and
    # nothing of the Knights'; her force holds no Dread.
    assert _card(client, canoness["id"])["counters"] == {"sanctity": 2}
    assert set(client.get(f"/api/v1/forces/{sisters}").json()["counters"]) == {"faith", "rite"}

    pledged = client.post(f"/api/v1/forces/{knights}/requisitions", json=pledge)
    assert pledged.status_code in (200, 201), pledged.text
    assert _card(client, knight)["choices"]["patron"] == "blood_god"

    # 2: again: Damnation 4 reaches Tainted; the boon is owed to Bloodhowl alone.
    second = _battle(client, cid, (knights, [knight]), (sisters, [squad, canoness["id"]]))
    _result(
        client,
        second,
        {
            "force_id": knights,
            "victory_points": 30,
            "units": [{"card_id": knight, "destroyed_ranged": 1, "marked_for_greatness": True}],
        },
        {
            "force_id": sisters,
            "victory_points": 10,
            "units": [{"card_id": squad, "destroyed": True}],
            "dice": [6],
        },
    )
    assert _card(client, knight)["counters"]["damnation"] == 4
    owed = [
        d
        for d in client.get(f"/api/v1/forces/{knights}/decisions").json()["items"]
        if d["kind"] == "victor_bonus"
    ]
    assert [(d["payload"]["threshold"]["id"], d["card_id"]) for d in owed] == [("tainted", knight)]
    # Another patron's boon is refused: the Knight is sworn to the Blood God.
    before = dump(engine)
    wrong = client.post(
        f"/api/v1/decisions/{owed[0]['id']}/answer",
        json={"requisitions": [{"requisition": "boon_of_rot"}]},
    )
    refused = assert_problem(wrong, 422, "requisition_not_eligible")
    assert "Boon of Rot" in refused["detail"]
    assert [r["requisition"] for r in refused["offer"]["requisitions"] if r["targets"]] == [
        "boon_of_slaughter"
    ]
    assert dump(engine) == before
    right = client.post(
        f"/api/v1/decisions/{owed[0]['id']}/answer",
        json={"requisitions": [{"requisition": "boon_of_slaughter"}]},
    )
    assert right.status_code == 200, right.text
    honours = [[e["id"] for e in h["entries"]] for h in _card(client, knight)["honours"]]
    assert honours == [["gift_of_slaughter"]]
    # No decision of the Knights' pack ever reaches the Sisters.
    theirs = client.get(f"/api/v1/forces/{sisters}/decisions").json()["items"]
    assert all(d["kind"] != "victor_bonus" for d in theirs)


def test_a_nobles_engram_collapse_in_a_mixed_campaign(client: TestClient, engine: Engine) -> None:
    """The Necrons' Engram Collapse as the-waking.yaml writes it: each time the noble is
    destroyed its Engram Decay rises; at 4 it loses 3 XP and rolls on the pack's own scar
    table with the battle's dice (after its Out of Action test's); a revert puts it back.
    The swarm it fights gathers only its own Biomass, and 12 of it deepens its invasion."""
    cid = campaign(client, "The Sundered Reach")
    for path in sorted(MIXED.glob("*.yaml")):
        attached(client, cid, path.read_text())
    tombs = _force(client, cid, "Dynasty of Ash", "NECRONS", [])
    swarm = _force(client, cid, "Hive Fleet Vora", "TYRANIDS", [])
    lord = unit(client, tombs, "Lord Sekhet", 6, keywords=["NECRONS", "CHARACTER"])["id"]
    brood = unit(client, swarm, "Termagants", keywords=["TYRANIDS", "INFANTRY"])["id"]

    def fight(dice: list[int]) -> int:
        battle = _battle(client, cid, (tombs, [lord]), (swarm, [brood]))
        lost = {"card_id": lord, "destroyed": True}
        _result(
            client,
            battle,
            {"force_id": tombs, "victory_points": 10, "units": [lost], "dice": dice},
            {"force_id": swarm, "victory_points": 30, "units": [{"card_id": brood}]},
        )
        return battle

    for _ in range(3):  # destroyed three times, each Out of Action test passed (6)
        fight([6])
    assert _card(client, lord)["counters"] == {"engram_decay": 3}
    assert _card(client, lord)["xp"] == 3
    # The swarm: 1 Biomass a battle (Feeding) and 2 for the enemy CHARACTER it destroyed
    # (Apex Prey), its own pack's only; the dynasty 1 Awakening a battle, its own.
    swarm_counters = client.get(f"/api/v1/forces/{swarm}").json()["counters"]
    assert swarm_counters == {"biomass": 9, "invasion": 1}
    assert client.get(f"/api/v1/forces/{tombs}").json()["counters"] == {"awakening": 3}

    last = fight([6, 3])  # the fourth: Engram Collapse; the table's D6 shows 3
    card = _card(client, lord)
    assert card["counters"] == {"engram_decay": 4}
    assert card["xp"] == 3 + 1 - 3
    assert [(s["id"], s["dice"]) for s in card["scars"]] == [("fractured_memory", [[6, 3]])]
    # 12 Biomass deepens the invasion (stage 2, Biomass from 0) and owes the swarm its
    # free Feeding Frenzy; the dynasty owes nothing of the swarm's.
    swarm_counters = client.get(f"/api/v1/forces/{swarm}").json()["counters"]
    assert swarm_counters == {"biomass": 0, "invasion": 2}
    owed = client.get(f"/api/v1/forces/{swarm}/decisions").json()["items"]
    assert [d["payload"]["threshold"]["id"] for d in owed if d["kind"] == "victor_bonus"] == [
        "next_stage"
    ]
    theirs = client.get(f"/api/v1/forces/{tombs}/decisions").json()["items"]
    assert all(d["kind"] != "victor_bonus" for d in theirs)

    reverted = client.post(f"/api/v1/battles/{last}/revert")
    assert reverted.status_code == 200, reverted.text
    card = _card(client, lord)
    assert (card["counters"], card["xp"], card["scars"]) == ({"engram_decay": 3}, 3, [])
    swarm_counters = client.get(f"/api/v1/forces/{swarm}").json()["counters"]
    assert swarm_counters == {"biomass": 9, "invasion": 1}
