"""What the organizer trial of rule packs broke (issue 38, and the pack uploads of issue 33),
on SQLite and PostgreSQL: hostile or sloppy files refused with a 4xx naming the path and the
line (never a 5xx, nothing changed), counters' history exact both ways, a preview that says
what attach will answer, and decisions that list the pack entries they offer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force
from tests.api.test_rule_packs import (
    PILGRIMS,
    attach,
    attached,
    muster_with,
    pilgrim_world,
    result,
    scar_owed,
)

POINTS = (Path(__file__).resolve().parents[2] / "examples" / "packs" / "points.yaml").read_text()
BASE = 'format: crusade-rule-pack/1\nid: trial\nname: Trial\nversion: "1"\n'
AGENDA = "agendas:\n  - {id: a1, name: A1, summary: s, xp_per_tally: 1"
MIRACLE = (
    "requisitions:\n  - {id: r1, name: R1, summary: s, cost_rp: 1, "
    "effects: [{kind: change_supply_limit, amount: 1}]"
)
DEEP = 50_000

REFUSED = [
    # (what, the file, the field named, words of the sentence, its line)
    ("merge key", BASE + "agendas:\n  - <<: {name: A1, summary: s}\n", "agendas[0]", "merge", 6),
    ("deep yaml", BASE + "description: " + "[" * 400 + "]" * 400 + "\n", "description", "deep", 5),
    (
        "deep json",
        '{"format": "crusade-rule-pack/1", "id": "p", "name": "P", "version": "1", '
        '"description": ' + "[" * DEEP + "]" * DEEP + "}",
        "file",
        "nested more than 12 deep",
        1,
    ),
    ("tagged key", BASE + "? !foo x\n: 1\n", "file", "YAML tag (!foo)", 5),
    (
        "5,000 digits",
        BASE + "settings:\n  starting_supply_limit: " + "9" * 5000 + "\n",
        "settings.starting_supply_limit",
        "at most 30 characters",
        6,
    ),
    ("null key", BASE + "settings:\n  ~: 1\n", "settings", "a key must be text", 6),
    ("complex key", BASE + "settings:\n  ? [a]\n  : 1\n", "settings", "not a list", 6),
    (
        "alias",
        BASE + "counters:\n  - &c {id: a, name: A}\ndescription: *c\n",
        "description",
        "aliases",
        7,
    ),
    ("NUL", BASE + 'description: "a\\0b"\n', "description", "control characters", 5),
    ("ESC", BASE + 'description: "a\\eb"\n', "description", "control characters", 5),
    (
        "true for 1",
        BASE + AGENDA.replace(": 1", ": true") + "}\n",
        "agendas[0].xp_per_tally",
        "integer",
        6,
    ),
    ("'3' for 3", BASE + AGENDA + ", max_tally: '3'}\n", "agendas[0].max_tally", "integer", 6),
    (
        "'yes' for true",
        BASE + MIRACLE + ", only_as_bonus: 'yes'}\n",
        "requisitions[0].only_as_bonus",
        "boolean",
        6,
    ),
    (
        "counter min above max",
        BASE + "counters:\n  - {id: c1, name: C1, start: 0, min: 5, max: 1}\n",
        "counters[0].max",
        "below min",
        6,
    ),
    (
        "a zero-width look-alike",
        BASE + "relics:\n  - {id: r1, name: Holy Relic, summary: s}\n"
        '  - {id: r2, name: "Holy Re\\u200blic", summary: s}\n',
        "relics[1].name",
        "given twice",
        7,
    ),
    (
        "an empty keyword",
        BASE + AGENDA + ", eligible: '\"\"'}\n",
        "agendas[0].eligible",
        "empty keyword",
        6,
    ),
    (
        "a unit-only expression on a force requisition",
        BASE + MIRACLE + ", target: force, eligible: INFANTRY}\n",
        "requisitions[0].eligible",
        "reads only counters",
        6,
    ),
]


@pytest.mark.parametrize(
    ("text", "field", "says", "line"),
    [pytest.param(*case[1:], id=case[0]) for case in REFUSED],
)
def test_a_hostile_or_sloppy_pack_is_refused_by_path_and_line(
    client: TestClient, engine: Engine, text: str, field: str, says: str, line: int
) -> None:
    cid = campaign(client)
    before = dump(engine)
    for preview in ("true", "false"):
        refused = attach(client, cid, text, preview=preview)
        problem = assert_problem(refused, 422, "rule_pack_invalid")
        assert problem["field"] == field, problem
        # the line, and for a YAML form (a tag...) the column too (issue 47)
        at = re.search(rf"\(line {line}[,)]", problem["detail"])
        assert says in problem["detail"] and at, problem
    assert dump(engine) == before


CARD_FAITH = PILGRIMS.replace(
    "agendas:\n",
    "  - {id: faith, name: Trial faith, scope: card, start: 1, min: 0, max: 9}\nagendas:\n",
    1,
).replace("    xp_per_tally: 2\n", "    xp_per_tally: 2\n    counters: {faith: 2, fervour: 1}\n", 1)


def test_a_counter_set_first_starts_from_its_start_and_a_revert_says_what_it_put_back(
    client: TestClient,
) -> None:
    """A card counter set for the first time went from its start (1), not from its new
    value; the revert puts both counters back and says so in the feed."""
    world = pilgrim_world(client, CARD_FAITH)
    battle = muster_with(client, world, "bear_the_ashes")
    recorded = client.post(
        f"/api/v1/battles/{battle['id']}/result", json=result(world, world["squad"]["id"], 2)
    )
    assert recorded.status_code == 200, recorded.text
    squad = client.get(f"/api/v1/cards/{world['squad']['id']}").json()
    assert squad["counters"] == {"faith": 1 + 2 * 2}

    def moves() -> list[tuple[int | None, str, int, int]]:
        feed = client.get(f"/api/v1/campaigns/{world['campaign']}/events?limit=200").json()
        return [
            (
                e["details"].get("card_id"),
                e["details"]["counter"],
                e["details"]["before"],
                e["details"]["after"],
            )
            for e in feed["items"]
            if e["kind"] == "counter_changed"
        ]

    assert sorted(moves(), key=str) == sorted(
        [(None, "fervour", 1, 3), (world["squad"]["id"], "faith", 1, 5)], key=str
    )
    assert client.post(f"/api/v1/battles/{battle['id']}/revert").status_code == 200
    assert client.get(f"/api/v1/cards/{world['squad']['id']}").json()["counters"] == {}
    assert client.get(f"/api/v1/forces/{world['blue']}").json()["counters"] == {"fervour": 1}
    assert sorted(moves(), key=str) == sorted(
        [
            (None, "fervour", 1, 3),
            (world["squad"]["id"], "faith", 1, 5),
            (None, "fervour", 3, 1),
            (world["squad"]["id"], "faith", 5, 1),
        ],
        key=str,
    )


def test_a_preview_says_what_attach_will_answer(client: TestClient, engine: Engine) -> None:
    """The points pack on a campaign that has forces: the preview names the refusal attach
    then meets; the same version again: its refusal too; a pack that attaches: none."""
    cid = campaign(client)
    force(client, cid)
    before = dump(engine)
    shown = attach(client, cid, POINTS, preview="true")
    assert shown.status_code == 200, shown.text
    assert shown.json()["refusal"]["code"] == "rule_pack_changes_muster"
    assert shown.json()["refusal"]["status"] == 409
    assert_problem(attach(client, cid, POINTS), 409, "rule_pack_changes_muster")
    assert dump(engine) == before

    assert attach(client, cid, PILGRIMS, preview="true").json()["refusal"] is None
    attached(client, cid, PILGRIMS)
    again = attach(client, cid, PILGRIMS, preview="true").json()
    assert again["refusal"]["code"] == "rule_pack_version_exists"
    assert_problem(attach(client, cid, PILGRIMS), 409, "rule_pack_version_exists")
    page = client.post(f"/campaigns/{cid}/rules/packs", data={"text": POINTS, "action": "preview"})
    assert page.status_code == 200 and 'data-testid="pack-refusal"' in page.text


def test_a_decision_lists_the_pack_entries_it_offers(client: TestClient) -> None:
    """A scar owed by an INFANTRY squad offers the pack's Ash-choked; a Battle Honour owed
    for a rank offers the pack's traits, enhancements, fortitudes and relics it may take."""
    world = pilgrim_world(client)
    scar = scar_owed(client, world)
    assert [(e["category"], e["id"], e["pack"]) for e in scar["pack_entries"]] == [
        ("battle_scar", "ash_choked", "ashen_pilgrims")
    ]
    read = client.get(f"/api/v1/decisions/{scar['id']}").json()
    assert read["pack_entries"] == scar["pack_entries"]
    answered = client.post(f"/api/v1/decisions/{scar['id']}/answer", json={"scar": "ash_choked"})
    assert answered.status_code == 200 and answered.json()["pack_entries"] == []

    world = pilgrim_world(client)  # a squad unscarred (Ash-choked caps its XP)
    battle = muster_with(client, world, "bear_the_ashes")
    body = result(world, world["squad"]["id"], 2)
    body["sides"][0]["units"][0]["marked_for_greatness"] = True  # Blooded: a Battle Honour
    recorded = client.post(f"/api/v1/battles/{battle['id']}/result", json=body)
    assert recorded.status_code == 200, recorded.text
    pending = client.get(f"/api/v1/forces/{world['blue']}/decisions").json()["items"]
    [honour] = [d for d in pending if d["kind"] == "battle_honour"]
    # the squad is INFANTRY and Blooded, no PSYKER and no CHARACTER
    assert [(e["category"], e["id"]) for e in honour["pack_entries"]] == [
        ("battle_trait", "ash_walkers"),
        ("battle_trait", "pyre_hardened"),
        ("weapon_enhancement", "censer_blessed"),
    ]
