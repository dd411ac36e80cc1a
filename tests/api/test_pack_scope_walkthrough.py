"""Issue 47's walkthrough, on SQLite and PostgreSQL: six codex-style packs of our own, each
scoped to one faction, attached to one campaign of six forces of six factions (one of them
a Crusade faction a pack adds). Four battles across factions, a revert and a replay; each
force sees and moves only its own pack's counters, quests, Agendas and Requisitions, and
every figure matches the hand count written beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, unit
from tests.api.test_rule_packs import attached

MIXED = Path(__file__).resolve().parents[2] / "examples" / "packs" / "mixed"
# Our own short words, one mechanic or two per faction, as a group would type them in.
SISTERS, PLAGUE, WOLVES, SWARM, TOMBS, HOLDS = (
    (MIXED / f"{name}.yaml").read_text()
    for name in (
        "acts-of-faith",
        "plague-tithe",
        "sagas",
        "the-feast",
        "the-waking",
        "book-of-grudges",
    )
)
CULL = "cull_the_hordes"  # a core Agenda, tallied 0 here: no XP beyond the battle's


def _force(client: TestClient, cid: int, name: str, faction: str, army: list[str]) -> int:
    body = {"name": name, "crusade_faction": faction, "army_keywords": army}
    made = client.post(f"/api/v1/campaigns/{cid}/forces", json=body)
    assert made.status_code == 201, made.text
    assert made.json()["army_keywords"] == army
    return int(made.json()["id"])


def _battle(client: TestClient, cid: int, a: tuple[int, int, str], b: tuple[int, int, str]) -> int:
    sides = [
        {"force_id": f, "role": role, "roster": [u], "agendas": [agenda]}
        for (f, u, agenda), role in ((a, "attacker"), (b, "defender"))
    ]
    body = {"battle_size": "combat_patrol", "mission": "sweep_and_clear", "sides": sides}
    mustered = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert mustered.status_code == 201, mustered.text
    return int(mustered.json()["id"])


def _side(force: int, card: int, vp: int, **unit: Any) -> dict[str, Any]:
    side: dict[str, Any] = {"force_id": force, "victory_points": vp, "units": [{"card_id": card}]}
    side["units"][0].update(unit)
    if unit.get("destroyed"):
        side["dice"] = [6]  # its Out of Action test passes
    return side


def _result(client: TestClient, battle: int, *sides: dict[str, Any]) -> None:
    done = client.post(f"/api/v1/battles/{battle}/result", json={"sides": list(sides)})
    assert done.status_code == 200, done.text


def _counters(client: TestClient, force: int) -> tuple[dict[str, int], int, int]:
    shown = client.get(f"/api/v1/forces/{force}").json()
    return shown["counters"], shown["requisition_points"], shown["supply_limit"]


def test_six_factions_each_see_and_move_only_their_own_pack(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client, "The Sundered Reach")
    votann = {"name": "Hold Kar", "crusade_faction": "LEAGUES OF VOTANN"}
    early = client.post(f"/api/v1/campaigns/{cid}/forces", json=votann)
    assert_problem(early, 422, "crusade_faction_invalid")  # no pack adds the faction yet
    for text in (SISTERS, PLAGUE, WOLVES, SWARM, TOMBS, HOLDS):
        attached(client, cid, text)
    sisters = _force(client, cid, "Order of the Ember", "IMPERIUM", ["ADEPTA SORORITAS"])
    plague = _force(client, cid, "The Rotting Host", "CHAOS", ["DEATH GUARD"])
    wolves = _force(client, cid, "Frostfang Pack", "IMPERIUM", ["SPACE WOLVES"])
    swarm = _force(client, cid, "Hive Fleet Vora", "TYRANIDS", [])
    tombs = _force(client, cid, "Dynasty of Ash", "NECRONS", [])
    holds = _force(client, cid, "Hold Kar", "LEAGUES OF VOTANN", [])
    s1 = unit(client, sisters, "Battle Sisters")["id"]
    p1 = unit(client, plague, "Plague Marines", keywords=["CHAOS", "INFANTRY"])["id"]
    w1 = unit(client, wolves, "Grey Hunters")["id"]
    t1 = unit(client, swarm, "Termagants", keywords=["TYRANIDS", "INFANTRY"])["id"]
    n1 = unit(client, tombs, "Necron Warriors", keywords=["NECRONS", "INFANTRY"])["id"]
    v1 = unit(client, holds, "Hearthkyn", keywords=["LEAGUES OF VOTANN", "INFANTRY"])["id"]

    # Each force holds its own pack's force counters from the start, and none of the others'.
    # A named choice (the Sacred Rite) shows as 0 until one is kept; the Invasion Stage starts at 1.
    assert _counters(client, sisters) == ({"faith": 0, "rite": 0}, 5, 50)
    assert _counters(client, wolves) == ({}, 5, 50)  # Renown is each unit's
    assert _counters(client, holds) == ({"grudges": 0}, 5, 50)
    assert _counters(client, plague) == ({"virulence": 0, "contagion": 0}, 5, 50)
    assert _counters(client, swarm) == ({"biomass": 0, "invasion": 1}, 5, 50)

    # Another faction's Requisition or Agenda is refused, naming the pack; nothing changes.
    before = dump(engine)
    bought = client.post(
        f"/api/v1/forces/{swarm}/requisitions", json={"requisition": "vow_of_faith"}
    )
    assert "acts_of_faith" in assert_problem(bought, 422, "rule_pack_not_for_force")["detail"]
    body = {
        "battle_size": "combat_patrol",
        "mission": "sweep_and_clear",
        "sides": [
            {"force_id": swarm, "role": "attacker", "roster": [t1], "agendas": ["hymn_of_war"]},
            {"force_id": sisters, "role": "defender", "roster": [s1], "agendas": [CULL]},
        ],
    }
    refused = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert assert_problem(refused, 422, "rule_pack_not_for_force")["field"] == "sides[0].agendas"
    assert dump(engine) == before

    vow = client.post(
        f"/api/v1/forces/{sisters}/requisitions", json={"requisition": "vow_of_faith"}
    )
    assert vow.status_code in (200, 201), vow.text  # Faith 0 -> 1, RP 5 -> 4

    # 1: the Sisters (their own Agenda, tallied once) beat the swarm; a Termagant brood falls.
    first = _battle(client, cid, (sisters, s1, "hymn_of_war"), (swarm, t1, CULL))
    s_side = _side(sisters, s1, 30, destroyed_ranged=1, agenda_tallies={"hymn_of_war": 1})
    _result(client, first, s_side, _side(swarm, t1, 10, destroyed=True))
    # 2: the plague host beats the wolves; each side loses its unit to the other's.
    second = _battle(client, cid, (plague, p1, CULL), (wolves, w1, CULL))
    _result(
        client,
        second,
        _side(plague, p1, 25, destroyed=True, destroyed_melee=1),
        _side(wolves, w1, 20, destroyed=True, destroyed_melee=1),
    )
    # 3: the tomb world beats the hold; the Hearthkyn fall.
    third = _battle(client, cid, (tombs, n1, CULL), (holds, v1, CULL))
    _result(
        client, third, _side(tombs, n1, 40, destroyed_ranged=1), _side(holds, v1, 5, destroyed=True)
    )
    # 4: the tomb world beats the Sisters; then it is reverted and replayed the other way.
    fourth = _battle(client, cid, (sisters, s1, CULL), (tombs, n1, CULL))
    _result(client, fourth, _side(sisters, s1, 10), _side(tombs, n1, 30))
    assert _counters(client, sisters)[0] == {"faith": 5, "rite": 0}  # 4 + 1 battle
    assert _counters(client, tombs)[0] == {"awakening": 2}
    reverted = client.post(f"/api/v1/battles/{fourth}/revert")
    assert reverted.status_code == 200, reverted.text
    assert _counters(client, sisters) == ({"faith": 4, "rite": 0}, 5, 50)  # as after battle 1
    assert _counters(client, tombs) == ({"awakening": 1}, 5, 55)
    replay = _battle(client, cid, (sisters, s1, CULL), (tombs, n1, CULL))
    _result(client, replay, _side(sisters, s1, 35), _side(tombs, n1, 15))

    # The hand count. Faith: vow 1, battle 1 (+1 battle, +2 win) 4, replay (+1, +2) 7.
    # RP: 5 - 1 (vow) + 1 per battle, never above 5.
    # No heroine fell (Martyrdom) and no Rite was kept.
    assert _counters(client, sisters) == ({"faith": 7, "rite": 0}, 5, 50)
    # Virulence: 1 felled wolf reaches Bloom (at 1): Supply +3, back to 0.
    # Contagion: the wolves were no CHARACTER, MONSTER or VEHICLE (Great Fall), so 0.
    assert _counters(client, plague) == ({"virulence": 0, "contagion": 0}, 5, 53)
    # The wolves: the Long Hunt one battle of two; Renown 1 on the Grey Hunters (1 kill).
    wolf = client.get(f"/api/v1/forces/{wolves}").json()
    assert (wolf["counters"], wolf["requisition_points"], wolf["supply_limit"]) == ({}, 5, 50)
    assert [(q["quest"], q["state"], q["tally"], q["count"]) for q in wolf["quests"]] == [
        ("the_long_hunt", "under_way", 1, 2)
    ]
    assert client.get(f"/api/v1/cards/{w1}").json()["counters"] == {"renown": 1}
    # Biomass: 1 battle + 1 brood lost.
    # 2 is short of the 12 that deepens the invasion: still stage 1.
    assert _counters(client, swarm) == ({"biomass": 2, "invasion": 1}, 5, 50)
    # Awakening: battles 3 and the replay; the Crownworld won in battle 3: Supply 50 + 5.
    tomb = client.get(f"/api/v1/forces/{tombs}").json()
    assert (tomb["counters"], tomb["supply_limit"]) == ({"awakening": 2}, 55)
    assert [(q["quest"], q["state"]) for q in tomb["quests"]] == [("crownworld", "completed")]
    # Grudges: 2 for the Hearthkyn lost.
    assert _counters(client, holds) == ({"grudges": 2}, 5, 50)
    # No force holds a quest of another's pack; no unit another's counter.
    for other in (sisters, plague, swarm, holds):
        assert client.get(f"/api/v1/forces/{other}").json()["quests"] == []
    for card in (s1, p1, t1, n1, v1):
        assert client.get(f"/api/v1/cards/{card}").json()["counters"] == {}
    # XP: 1 per battle fought; the Sisters' Hymn 2 more (battle 1).
    xp = {c: client.get(f"/api/v1/cards/{c}").json()["xp"] for c in (s1, p1, w1, t1, n1, v1)}
    assert xp == {s1: 4, p1: 1, w1: 1, t1: 1, n1: 2, v1: 1}

    # The feed moves each force's own counters only, and so does the export.
    feed = client.get(f"/api/v1/campaigns/{cid}/events?limit=200").json()["items"]
    own = {
        sisters: {"faith"},
        plague: {"virulence"},
        wolves: {"renown"},
        swarm: {"biomass"},
        tombs: {"awakening"},
        holds: {"grudges"},
    }
    moved: dict[int, set[str]] = {}
    for event in feed:
        if event["kind"] == "counter_changed":
            moved.setdefault(event["force_id"], set()).add(event["details"]["counter"])
    # Virulence rose to 1 and went back to 0 in the same battle: no change to tell, but the
    # threshold was reached, by the plague host alone.
    assert moved == {f: o for f, o in own.items() if f != plague}
    reached = [
        (e["force_id"], e["details"]["threshold"]) for e in feed if e["kind"] == "threshold_reached"
    ]
    assert reached == [(plague, "bloom")]
    exported = client.get(f"/api/v1/campaigns/{cid}/export").json()
    held = {
        f["id"]: {k for k in f["counters"] if not k.startswith("quest:")}
        for f in exported["forces"]
    }
    # The export carries every force counter of the force's own pack, moved or not (the Rite,
    # Contagion and the Invasion Stage never moved here); the wolves' Renown is each unit's.
    unmoved = {sisters: {"rite"}, plague: {"contagion"}, swarm: {"invasion"}}
    expected = {f: o | unmoved.get(f, set()) for f, o in own.items() if f != wolves}
    assert held == expected | {wolves: set()}


HUNT = """
format: crusade-rule-pack/1
id: the_hunt
name: The Hunt
version: "1"
factions: [TYRANIDS]
counters: [{id: prey, name: Prey, scope: force, max: 20}]
missions:
  - id: the_hunt
    name: The Hunt
    battle_size: combat_patrol
    summary: Run the prey down.
    victor_bonus:
      - summary: The swarm feeds.
        effect: {kind: change_counter, counter: prey, amount: 3}
"""


def test_a_scoped_missions_bonus_goes_only_to_a_victor_it_is_for(
    client: TestClient, engine: Engine
) -> None:
    """Ruling 81: the mission is offered to every battle; its bonus is its faction's."""
    cid = campaign(client)
    attached(client, cid, HUNT)
    swarm = _force(client, cid, "Hive Fleet Vora", "TYRANIDS", [])
    sisters = _force(client, cid, "Order of the Ember", "IMPERIUM", ["ADEPTA SORORITAS"])
    t1 = unit(client, swarm, "Termagants", keywords=["TYRANIDS", "INFANTRY"])["id"]
    s1 = unit(client, sisters, "Battle Sisters")["id"]
    for winner in (sisters, swarm):
        sides = [
            {"force_id": f, "role": r, "roster": [u], "agendas": [CULL]}
            for f, u, r in ((swarm, t1, "attacker"), (sisters, s1, "defender"))
        ]
        body = {"battle_size": "combat_patrol", "mission": "the_hunt", "sides": sides}
        battle = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
        assert battle.status_code == 201, battle.text
        _result(
            client,
            int(battle.json()["id"]),
            _side(swarm, t1, 30 if winner == swarm else 10),
            _side(sisters, s1, 30 if winner == sisters else 10),
        )
    assert _counters(client, swarm)[0] == {"prey": 3}  # its one win
    assert _counters(client, sisters)[0] == {}
