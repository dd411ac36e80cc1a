"""Pack facts and effects (issue 47, items 3 and 4), through the API on SQLite and
PostgreSQL: a trigger's own effects, a failed Agenda's ``on_fail`` and a trigger on
``agenda_completed`` move XP, RP and counters and a revert puts every figure back; a unit's
``destroyed_enemies`` feeds a keyword-filtered unit counter and is refused, the database
untouched, when it names a unit that is not the enemy's, twice, or past the unit's kills."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session

from app.services.campaigns import transfer
from tests.api.helpers import assert_problem, campaign, dump, force, unit
from tests.api.test_rule_packs import attached

PACK = """
format: crusade-rule-pack/1
id: hunters
name: Hunters
version: "1"
counters:
  - {id: glory, name: Glory, scope: force, start: 0, min: 0, max: 50}
  - {id: trophies, name: Trophies, scope: card, start: 0, min: 0, max: 50}
agendas:
  - id: hold
    name: Hold Fast
    summary: Tally one per objective held.
    xp_per_tally: 2
    max_tally: 3
    on_fail:
      - {kind: remove_xp, amount: 2}
      - {kind: change_requisition_points, amount: -1}
triggers:
  - id: tithe
    name: Tithe
    when: enemy_unit_destroyed
    effects: [{kind: change_requisition_points, amount: 1}]
    summary: Each enemy unit destroyed pays 1 RP.
  - id: blooded
    name: Blooded
    when: melee_kill
    scope: card
    effects: [{kind: add_xp, amount: 2}]
    summary: Each enemy unit a unit destroys in melee gives it 2 XP.
  - {id: honoured, name: Honoured, when: agenda_completed, counter: glory, amount: 1, summary: s}
  - id: monster_trophies
    name: Monster Trophies
    when: enemy_unit_destroyed
    keywords_any: [MONSTER]
    counter: trophies
    amount: 1
    summary: Each MONSTER the unit slays.
"""


def _mustered(
    client: TestClient, cid: int, blue: int, mine: list[int], red: int, foe: list[int]
) -> int:
    sides = [
        {"force_id": blue, "role": "attacker", "roster": mine, "agendas": ["hold"]},
        {"force_id": red, "role": "defender", "roster": foe, "agendas": ["hold"]},
    ]
    body = {"battle_size": "combat_patrol", "mission": "sweep_and_clear", "sides": sides}
    mustered = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert mustered.status_code == 201, mustered.text
    return int(mustered.json()["id"])


def _result(
    blue: int, units: list[dict[str, Any]], red: int, foe_units: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "sides": [
            {"force_id": blue, "victory_points": 30, "units": units, "dice": [4] * 10},
            {"force_id": red, "victory_points": 10, "units": foe_units, "dice": [4] * 10},
        ]
    }


def _setup(client: TestClient) -> tuple[int, int, list[int], int, list[int]]:
    cid = campaign(client)
    attached(client, cid, PACK)
    blue, red = force(client, cid), force(client, cid, "Hive Fleet", "TYRANIDS")
    mine = [unit(client, blue)["id"], unit(client, blue, "Tactical Squad")["id"]]
    foe = [
        unit(client, red, "Carnifex", keywords=["TYRANIDS", "MONSTER"])["id"],
        unit(client, red, "Termagants", keywords=["TYRANIDS", "INFANTRY"])["id"],
        unit(client, red, "Hormagaunts", keywords=["TYRANIDS", "INFANTRY"])["id"],
    ]
    return cid, blue, mine, red, foe


def _state(client: TestClient, blue: int, mine: list[int]) -> tuple[Any, ...]:
    f = client.get(f"/api/v1/forces/{blue}").json()
    cards = [client.get(f"/api/v1/cards/{i}").json() for i in mine]
    return (
        f["requisition_points"],
        f["counters"].get("glory", 0),
        *[(c["xp"], c["counters"].get("trophies", 0)) for c in cards],
    )


def test_trigger_effects_a_failed_agenda_and_agenda_completed_and_their_revert(
    client: TestClient, engine: Engine
) -> None:
    cid, blue, mine, red, foe = _setup(client)
    a, b = mine
    before = _state(client, blue, mine)
    assert before == (5, 0, (0, 0), (0, 0))

    # no unit scores Hold Fast: each loses 2 XP, the force 1 RP; a's 2 melee kills pay it
    # 2 XP each and the side 1 RP per enemy unit destroyed
    battle = _mustered(client, cid, blue, mine, red, foe)
    units = [{"card_id": a, "destroyed_melee": 2}, {"card_id": b}]
    foe_units = [{"card_id": foe[0], "destroyed": True}, {"card_id": foe[1], "destroyed": True}]
    done = client.post(
        f"/api/v1/battles/{battle}/result", json=_result(blue, units, red, foe_units)
    )
    assert done.status_code == 200, done.text
    # RP: 5 + 1 (battle) capped at 5, + 2 (Tithe) capped at 5, - 1 (failed) = 4
    # a: 0 + 1 (battle) + 4 (Blooded) - 2 = 3; b: 0 + 1 - 2, never below 0
    assert _state(client, blue, mine) == (4, 0, (3, 0), (0, 0))
    assert client.post(f"/api/v1/battles/{battle}/revert").status_code == 200
    assert _state(client, blue, mine) == before

    # both score Hold Fast: nothing taken; Glory +1 per unit that completed it
    battle = _mustered(client, cid, blue, mine, red, foe)
    units = [
        {"card_id": a, "agenda_tallies": {"hold": 1}},
        {"card_id": b, "agenda_tallies": {"hold": 2}},
    ]
    done = client.post(f"/api/v1/battles/{battle}/result", json=_result(blue, units, red, []))
    assert done.status_code == 200, done.text
    assert _state(client, blue, mine) == (5, 2, (3, 0), (5, 0))
    assert client.post(f"/api/v1/battles/{battle}/revert").status_code == 200
    assert _state(client, blue, mine) == before


def test_named_kills_feed_a_keyword_filtered_unit_counter(
    client: TestClient, engine: Engine
) -> None:
    cid, blue, mine, red, foe = _setup(client)
    a, b = mine
    battle = _mustered(client, cid, blue, mine, red, foe)
    units = [
        {"card_id": a, "destroyed_melee": 1, "destroyed_ranged": 1, "destroyed_enemies": foe[:2]},
        {"card_id": b, "destroyed_ranged": 1},
    ]
    foe_units = [{"card_id": i, "destroyed": True} for i in foe]
    done = client.post(
        f"/api/v1/battles/{battle}/result", json=_result(blue, units, red, foe_units)
    )
    assert done.status_code == 200, done.text
    # the Carnifex alone is a trophy; Hold Fast was failed (-2 XP each, never below 0)
    assert _state(client, blue, mine)[2:] == ((1 + 2 - 2, 1), (0, 0))
    report = client.get(f"/api/v1/battles/{battle}").json()
    reported = [u for s in report["sides"] for u in (s.get("report") or {}).get("units", [])]
    assert any(u.get("destroyed_enemies") == foe[:2] for u in reported), report
    reverted = client.post(f"/api/v1/battles/{battle}/revert")
    assert reverted.status_code == 200, reverted.text
    assert _state(client, blue, mine)[2:] == ((0, 0), (0, 0))
    # played again and exported: the imported copy names the copy's enemy units
    battle = _mustered(client, cid, blue, mine, red, foe)
    done = client.post(
        f"/api/v1/battles/{battle}/result", json=_result(blue, units, red, foe_units)
    )
    assert done.status_code == 200, done.text
    with Session(engine) as session:
        document = transfer.export_campaign(session, campaign_id=cid)
        copy = transfer.import_campaign(session, document)
        session.commit()
        copy_id = copy.id
    listed = client.get(f"/api/v1/campaigns/{copy_id}/battles").json()
    copied = client.get(f"/api/v1/battles/{_resolved_id(listed)}").json()
    attacker, defender = copied["sides"]
    named = [u["destroyed_enemies"] for u in attacker["report"]["units"] if u["destroyed_enemies"]]
    assert len(named) == 1 and len(named[0]) == 2, copied
    copied_red = client.get(f"/api/v1/forces/{defender['force_id']}").json()
    assert set(named[0]) <= {c["id"] for c in copied_red["cards"]}
    assert set(named[0]).isdisjoint(foe)


def _resolved_id(listed: Any) -> int:
    items = listed["items"] if isinstance(listed, dict) else listed
    return next(int(b["id"]) for b in items if b["status"] == "resolved")


def test_a_bad_list_of_destroyed_enemies_is_refused_naming_the_field(
    client: TestClient, engine: Engine
) -> None:
    cid, blue, mine, red, foe = _setup(client)
    a, b = mine
    battle = _mustered(client, cid, blue, mine, red, foe[:2])
    bad = {
        "destroyed_enemy_not_in_battle": [
            {"card_id": a, "destroyed_melee": 1, "destroyed_enemies": [foe[2]]}
        ],
        "destroyed_enemy_named_twice": [
            {"card_id": a, "destroyed_melee": 1, "destroyed_enemies": [foe[0]]},
            {"card_id": b, "destroyed_melee": 1, "destroyed_enemies": [foe[0]]},
        ],
        "destroyed_enemies_over_kills": [
            {"card_id": b},
            {"card_id": a, "destroyed_melee": 1, "destroyed_enemies": foe[:2]},
        ],
    }
    untouched = dump(engine)
    for code, units in bad.items():
        refused = client.post(
            f"/api/v1/battles/{battle}/result", json=_result(blue, units, red, [])
        )
        problem = assert_problem(refused, 422, code)
        assert problem["field"] == f"sides[0].units[{len(units) - 1}].destroyed_enemies", problem
        assert dump(engine) == untouched
    mine_own = [{"card_id": a, "destroyed_melee": 1, "destroyed_enemies": [b]}]
    refused = client.post(f"/api/v1/battles/{battle}/result", json=_result(blue, mine_own, red, []))
    assert_problem(refused, 422, "destroyed_enemy_not_in_battle")
    assert dump(engine) == untouched


def test_the_rules_list_a_triggers_effects_and_an_agendas_on_fail(client: TestClient) -> None:
    cid = campaign(client)
    attached(client, cid, PACK)
    rules = client.get(f"/api/v1/campaigns/{cid}/rules").json()
    by_id = {t["id"]: t for t in rules["triggers"]}
    assert by_id["tithe"]["counter"] is None and by_id["tithe"]["scope"] == "force"
    assert by_id["tithe"]["effects"] == [{"kind": "change_requisition_points", "amount": 1}]
    assert by_id["blooded"]["scope"] == "card"
    assert by_id["monster_trophies"]["scope"] == "card"  # its counter's
    hold = next(a for a in rules["agendas"] if a["id"] == "hold")
    assert hold["on_fail"] == [
        {"kind": "remove_xp", "amount": 2},
        {"kind": "change_requisition_points", "amount": -1},
    ]


QUARRY = (
    PACK
    + """
quests:
  - id: the_hunt
    name: The Hunt
    automatic: true
    summary: Name a quarry and slay it.
    steps: [{name: Slay the quarry, when: quarry_destroyed, count: 1}]
    reward: [{kind: change_counter, counter: trophies, amount: 5}]
"""
)


def test_a_named_quarry_destroyed_ends_a_units_quest_and_bad_quarries_are_refused(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    attached(client, cid, QUARRY)
    blue, red = force(client, cid), force(client, cid, "Hive Fleet", "TYRANIDS")
    a, b = unit(client, blue)["id"], unit(client, blue, "Tactical Squad")["id"]
    foe = [
        unit(client, red, "Carnifex", keywords=["TYRANIDS", "MONSTER"])["id"],
        unit(client, red, "Termagants", keywords=["TYRANIDS", "INFANTRY"])["id"],
    ]
    battle = _mustered(client, cid, blue, [a, b], red, foe)
    before = client.get(f"/api/v1/cards/{a}").json()
    untouched = dump(engine)
    for units in (
        [{"card_id": a, "quarry": b}],  # its own side's unit
        [{"card_id": b}, {"card_id": a, "quarry": 999_999}],
    ):
        refused = client.post(
            f"/api/v1/battles/{battle}/result", json=_result(blue, units, red, [])
        )
        problem = assert_problem(refused, 422, "quarry_not_in_battle")
        assert problem["field"] == f"sides[0].units[{len(units) - 1}].quarry"
        assert dump(engine) == untouched

    units = [
        {"card_id": a, "destroyed_melee": 1, "destroyed_enemies": [foe[0]], "quarry": foe[0]},
        {"card_id": b, "destroyed_melee": 1, "destroyed_enemies": [foe[1]], "quarry": foe[0]},
    ]
    done = client.post(f"/api/v1/battles/{battle}/result", json=_result(blue, units, red, []))
    assert done.status_code == 200, done.text
    cards = {i: client.get(f"/api/v1/cards/{i}").json() for i in (a, b)}
    assert cards[a]["counters"]["trophies"] == 5 + 1  # the reward, and a MONSTER trophy
    assert [q["state"] for q in cards[a]["quests"]] == ["completed"]
    assert [q["state"] for q in cards[b]["quests"]] == ["under_way"]  # not its quarry
    assert client.post(f"/api/v1/battles/{battle}/revert").status_code == 200
    again = client.get(f"/api/v1/cards/{a}").json()
    assert (again["quests"], again["counters"]) == (before["quests"], before["counters"])
