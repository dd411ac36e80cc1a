"""A rule pack's YAML is as strict as docs/rule-packs.md says (issue 47), on SQLite and
PostgreSQL: tags, quoted numbers, YAML 1.1's booleans and numbers (``on``, ``Yes``,
``010``, ``0x1F``, ``1:30``) are refused naming the line and the column, nothing attached;
a named choice compared with a number is refused; the forms carry the server's bounds."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force
from tests.api.test_rule_packs import THRONG, attach, attached

PACK = """format: crusade-rule-pack/1
id: strict
name: Strict
version: "1"
counters:
  - {id: patron, name: Patron, scope: force, choices: [khorne, nurgle]}
  - {id: zeal, name: Zeal, scope: force, start: 0, min: 0, max: 10}
requisitions:
  - id: pray
    name: Pray
    cost_rp: 1
    only_as_bonus: false
    target: force
    eligible: counter.patron == khorne
    summary: The host prays.
    effects: [{kind: change_counter, counter: zeal, amount: 1}]
"""


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("cost_rp: 1", 'cost_rp: !!int "1"', "(line 11, column 14): a YAML tag (!!int)"),
        ("name: Pray", "name: !!str Pray", "(line 10, column 11): a YAML tag (!!str)"),
        ("cost_rp: 1", "cost_rp: 010", "(line 11, column 14): 010 is read as another number"),
        ("cost_rp: 1", "cost_rp: 0x1F", "(line 11, column 14): 0x1F is read as another"),
        ("cost_rp: 1", "cost_rp: 1:30", "(line 11, column 14): 1:30 is read as another"),
        ("cost_rp: 1", 'cost_rp: "1"', "cost_rp (line 11): Input should be a valid integer"),
        ("only_as_bonus: false", "only_as_bonus: on", "(line 12): Input should be a valid bool"),
        ("only_as_bonus: false", "only_as_bonus: Yes", "(line 12): Input should be a valid bool"),
        ("only_as_bonus: false", "only_as_bonus: off", "(line 12): Input should be a valid bool"),
    ],
)
def test_a_yaml_form_the_docs_refuse_is_refused_with_its_line(
    client: TestClient, engine: Engine, old: str, new: str, says: str
) -> None:
    cid = campaign(client)
    before = dump(engine)
    assert old in PACK
    for preview in (True, False):
        refused = attach(client, cid, PACK.replace(old, new, 1), preview=str(preview).lower())
        problem = assert_problem(refused, 422, "rule_pack_invalid")
        assert says in problem["detail"], problem["detail"]
    assert dump(engine) == before


def test_the_pack_itself_attaches(client: TestClient) -> None:
    attached(client, campaign(client), PACK)


def test_a_named_choice_compared_with_a_number_is_refused(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    before = dump(engine)
    text = PACK.replace("counter.patron == khorne", "counter.patron < 1")
    problem = assert_problem(attach(client, cid, text), 422, "rule_pack_invalid")
    assert "requisitions[0].eligible (line 14)" in problem["detail"]
    assert "'patron' is a named choice" in problem["detail"]
    assert dump(engine) == before


def test_the_requisition_form_carries_the_servers_bounds(client: TestClient) -> None:
    cid = campaign(client)
    attached(client, cid, THRONG)
    fid = force(client, cid)
    page = client.get(f"/forces/{fid}/requisitions").text

    def bounds(field_id: str) -> tuple[str, str]:
        tag = re.search(rf'<input id="{field_id}"[^>]*>', page)
        assert tag is not None, field_id
        low = re.search(r'min="(\d+)"', tag[0])
        high = re.search(r'max="(\d+)"', tag[0])
        assert low and high
        return low[1], high[1]

    assert bounds("raise_a_warband-unit_power_rating") == ("1", "6")  # the effect's most
    assert bounds("raise_a_warband-unit_points") == ("0", "10000")
