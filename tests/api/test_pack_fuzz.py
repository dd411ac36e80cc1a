"""Hostile rule packs through the API (issue 22), on SQLite and PostgreSQL: the example
packs with one value anywhere replaced by something else (a wrong type, a huge number, an
unknown id, an empty list, a control character, a look-alike name...), or a hostile file
(issue 38), previewed and attached to a campaign with or without forces and packs. Never a
5xx; a refusal is a 4xx with a code and a field, and changes nothing; and the preview
predicts attach exactly: no refusal in the preview if and only if attach answers 201."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine

from tests.api.helpers import campaign, dump, force
from tests.api.test_pack_agenda_xp import TRIALS
from tests.api.test_pack_core_changes import LEAN
from tests.api.test_pack_trust import CARD_FAITH, POINTS, REFUSED
from tests.api.test_rule_packs import HOUSE, PILGRIMS, attach

# issue 38 (part 2): the Cinder Brood carries the pack's own tables, quests, transformations
BROOD = (Path(__file__).resolve().parents[2] / "examples/packs/cinder-brood.yaml").read_text()
# and the walkthrough's Rustwake Reclaimers: triggers, a threshold owing a unit, a force quest
RUSTWAKE = (
    Path(__file__).resolve().parents[2] / "examples/packs/rustwake-reclaimers.yaml"
).read_text()
DOCUMENTS = [
    yaml.safe_load(text)
    for text in (PILGRIMS, HOUSE, LEAN, TRIALS, POINTS, CARD_FAITH, BROOD, RUSTWAKE)
]
HOSTILE = [case[1] for case in REFUSED if len(case[1]) < 5_000]


def _paths(node: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [here] if here else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*here, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*here, index))
    return found


VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.text(max_size=30),
    st.sampled_from(["assassins", "combat_patrol", "fervour", "CHARACTER", "not (", "heroic"]),
    st.sampled_from(['""', "3", "yes", "a\x00b", "x\x1b[2J", "Ash\u200bWalkers", "points"]),
    st.sampled_from([10**40, -(10**40), 1.5, float("inf")]),
    st.sampled_from(["D6", "2D6", "D33", "1-2", "11-13", "6-1", "0-99", "ember_hide", "biomass"]),
    st.sampled_from(["great_feast", "flesh", "any_unit", "victory", "transform", "remove_unit"]),
    st.sampled_from(["set_choice", "start_quest", "counter.hunger == flesh", "hunger", 0, 50]),
    st.sampled_from(["salvage", "great_haul", "scrap_walker", "battle_played", "add_unit", 6]),
    st.lists(st.integers(-5, 5), max_size=3),
    st.dictionaries(st.text(max_size=8), st.integers(-5, 5), max_size=3),
)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 5)) == 0:
        return draw(st.sampled_from(HOSTILE))
    document = json.loads(json.dumps(draw(st.sampled_from(DOCUMENTS))))
    path = draw(st.sampled_from(_paths(document)))
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = draw(VALUES)
    return json.dumps(document)


@settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=mutated(), forces=st.booleans(), pilgrims=st.booleans())
def test_a_mutated_pack_is_refused_cleanly_or_attached(
    client: TestClient, engine: Engine, text: str, forces: bool, pilgrims: bool
) -> None:
    cid = campaign(client, "Fuzzed")
    if pilgrims:
        assert attach(client, cid, PILGRIMS).status_code == 201
    if forces:
        force(client, cid)
    before = dump(engine)
    shown = attach(client, cid, text, preview="true")
    assert shown.status_code in (200, 409, 422), shown.text
    assert dump(engine) == before  # a preview changes nothing
    made = attach(client, cid, text)
    assert made.status_code in (201, 409, 422), made.text
    refusal = shown.json().get("refusal") if shown.status_code == 200 else shown.json()
    # the preview predicts attach: no refusal if and only if attached
    assert (refusal is None) == (made.status_code == 201), (shown.text, made.text)
    if made.status_code != 201:
        problem = made.json()
        assert problem["code"] and problem["detail"] and problem.get("field")
        assert refusal is not None and refusal["code"] == problem["code"]
        assert dump(engine) == before
    else:
        rules = client.get(f"/api/v1/campaigns/{cid}/rules")
        assert rules.status_code == 200, rules.text
        assert client.get(f"/campaigns/{cid}/rules").status_code == 200
