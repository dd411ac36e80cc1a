"""No hidden queries: the statements a read needs do not grow with the number of units."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine, event

from tests.api.helpers import campaign, force, unit
from tests.api.test_rule_packs import attached


def statements(engine: Engine, call: Callable[[], object]) -> int:
    return len(statements_made(engine, call))


def statements_made(engine: Engine, call: Callable[[], object]) -> list[str]:
    seen: list[str] = []

    def count(*args: object) -> None:
        seen.append(str(args[2]))

    event.listen(engine, "before_cursor_execute", count)
    try:
        call()
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return seen


def test_reads_are_constant_in_units(client: TestClient, engine: Engine) -> None:
    campaign_id = campaign(client)
    force_ids = [force(client, campaign_id, f"Force {n}") for n in range(3)]
    urls = [
        f"/api/v1/forces/{force_ids[0]}",
        f"/api/v1/campaigns/{campaign_id}/forces",
        f"/api/v1/campaigns/{campaign_id}/standings",
    ]
    small = [statements(engine, lambda url=url: client.get(url)) for url in urls]
    for force_id in force_ids:
        for n in range(8):
            unit(client, force_id, f"Squad {n}", 1)
    large = [statements(engine, lambda url=url: client.get(url)) for url in urls]
    assert small == large


def test_a_revert_is_constant_in_units(client: TestClient, engine: Engine) -> None:
    """A revert puts back every unit of both rosters; its statements do not grow with
    them (each changed unit read its force again: 64 statements at 10 units a side, 84 at
    20, 244 at 100)."""
    assert _revert_statements(client, engine, 5) == _revert_statements(client, engine, 20)


def _revert_statements(client: TestClient, engine: Engine, units: int) -> int:
    campaign_id = campaign(client, f"Revert {units}")
    sides, battle = _mustered(client, campaign_id, units)
    result = {
        "sides": [
            {
                "force_id": side["force_id"],
                "victory_points": 30 - 20 * index,
                "units": [{"card_id": c, "destroyed_ranged": 1} for c in side["roster"]],
            }
            for index, side in enumerate(sides)
        ]
    }
    recorded = client.post(f"/api/v1/battles/{battle}/result", json=result)
    assert recorded.status_code == 200, recorded.text
    played = [client.get(f"/api/v1/forces/{s['force_id']}").json() for s in sides]
    assert all(c["xp"] > 0 for f in played for c in f["cards"])  # every unit changed
    reverted: list[object] = []
    count = statements(
        engine, lambda: reverted.append(client.post(f"/api/v1/battles/{battle}/revert"))
    )
    assert getattr(reverted[0], "status_code", None) == 200, getattr(reverted[0], "text", "")
    forces = [client.get(f"/api/v1/forces/{s['force_id']}").json() for s in sides]
    assert [c["xp"] for f in forces for c in f["cards"]] == [0] * (2 * units)  # all put back
    return count


TROPHIES = """
format: crusade-rule-pack/1
id: trophies
name: Trophies
version: "1"
counters:
  - {id: trophies, name: Trophies, scope: card, start: 0, min: 0, max: 50}
triggers:
  - {id: taken, name: Taken, when: enemy_unit_destroyed, counter: trophies, amount: 1,
     summary: Each enemy unit a unit destroys.}
"""


def test_a_resolution_is_constant_in_units_however_varied_their_changes(
    client: TestClient, engine: Engine
) -> None:
    """Every other unit kills (a pack counter moves on its card, not on the next one's) and
    every third falls: the changed cards still go in one executemany, whatever their mix of
    changed columns (a card written only where it changed made 50 statements at 10 units a
    side and 194 at 100: one per run of cards with the same columns)."""
    assert _resolve_statements(client, engine, 4) == _resolve_statements(client, engine, 12)


def test_a_resolution_updates_each_table_once_for_both_sides(
    client: TestClient, engine: Engine
) -> None:
    """The winner's and the loser's rows change different columns (wins or losses, the
    victories, a side's won); each writes all of them, so every table the result changes
    takes one UPDATE for both sides (issue 50: three round trips fewer)."""
    campaign_id = campaign(client, "One update")
    sides, battle = _mustered(client, campaign_id, 3)
    result = {
        "sides": [
            {
                "force_id": side["force_id"],
                "victory_points": 30 - 30 * index,  # the loser scores nothing: unchanged
                "painted": index == 0,
                "units": [{"card_id": c, "destroyed_ranged": index} for c in side["roster"]],
                "dice": [6] * 3,
            }
            for index, side in enumerate(sides)
        ]
    }
    answers: list[Any] = []
    made = statements_made(
        engine, lambda: answers.append(client.post(f"/api/v1/battles/{battle}/result", json=result))
    )
    assert answers[0].status_code == 200, answers[0].text
    tables = ("battle_side", "force", "force_standing", "crusade_card")
    updates = {t: sum(s.startswith(f"UPDATE {t} ") for s in made) for t in tables}
    assert updates == dict.fromkeys(tables, 1)
    shown = answers[0].json()["sides"]
    assert [(s["victory_points"], s["painted"], s["won"]) for s in shown] == [
        (40, True, True),  # 10 for a painted army
        (0, False, False),
    ]
    lines = client.get(f"/api/v1/campaigns/{campaign_id}/standings").json()
    assert sorted((line["wins"], line["losses"]) for line in lines) == [
        (0, 1),
        (1, 0),
    ]


def _resolve_statements(client: TestClient, engine: Engine, units: int) -> int:
    campaign_id = campaign(client, f"Resolve {units}")
    attached(client, campaign_id, TROPHIES)
    sides, battle = _mustered(client, campaign_id, units)
    result = {
        "sides": [
            {
                "force_id": side["force_id"],
                "victory_points": 30 - 20 * index,
                "units": [
                    {"card_id": c, "destroyed_ranged": n % 2, "destroyed": n % 3 == 0}
                    for n, c in enumerate(side["roster"])
                ],
                "dice": [6] * units,
            }
            for index, side in enumerate(sides)
        ]
    }
    answers: list[object] = []
    count = statements(
        engine, lambda: answers.append(client.post(f"/api/v1/battles/{battle}/result", json=result))
    )
    assert getattr(answers[0], "status_code", None) == 200, getattr(answers[0], "text", "")
    played = client.get(f"/api/v1/forces/{sides[0]['force_id']}").json()["cards"]
    assert sorted(c["counters"].get("trophies", 0) for c in played) == sorted(
        n % 2 for n in range(units)
    )
    return count


def _mustered(client: TestClient, campaign_id: int, units: int) -> tuple[list[dict[str, Any]], int]:
    """Two forces of ``units`` units each, mustered against each other: the sides, the
    battle's id."""
    sides = []
    for role, name, faction in (("attacker", "Blue", "IMPERIUM"), ("defender", "Red", "CHAOS")):
        force_id = force(client, campaign_id, name, faction)
        keywords = [faction, "INFANTRY"]
        roster = [
            unit(client, force_id, f"{name} {n}", 1, keywords=keywords)["id"] for n in range(units)
        ]
        agendas = ["cull_the_hordes"]
        sides.append({"force_id": force_id, "role": role, "roster": roster, "agendas": agendas})
    body = {"battle_size": "combat_patrol", "mission": "sweep_and_clear", "sides": sides}
    mustered = client.post(f"/api/v1/campaigns/{campaign_id}/battles", json=body)
    assert mustered.status_code == 201, mustered.text
    return sides, int(mustered.json()["id"])
