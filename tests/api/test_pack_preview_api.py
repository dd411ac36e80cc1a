"""A preview says what attach will say (issue 47, fix first 7), on SQLite and PostgreSQL:
a refusal no confirmation overrides (the measure armies muster by) is named before the one
``accept_breaking`` overrides, so a confirmed attach never meets a refusal the preview hid."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force
from tests.api.test_rule_packs import attach, attached, with_csrf_header

POINTS_V1 = """format: crusade-rule-pack/1
id: points_league
name: Points league
version: "1"
settings:
  muster_by: points
  starting_supply_limit: 1000
  supply_limit_increase: 100
counters:
  - {id: zeal, name: Zeal, scope: force, start: 0, min: 0, max: 10}
requisitions:
  - id: pray
    name: Pray
    cost_rp: 1
    target: force
    summary: The host prays.
    effects: [{kind: change_counter, counter: zeal, amount: 1}]
"""
# version 2 takes the counter in play away and goes back to Power Rating
POWER_V2 = """format: crusade-rule-pack/1
id: points_league
name: Points league
version: "2"
"""


def test_a_preview_names_the_muster_refusal_even_when_an_update_breaks(
    client: TestClient, engine: Engine
) -> None:
    """Issue 47 (fix first 7): the preview said "confirm to attach anyway" (the counter in
    play), and the confirmed attach then met 409 rule_pack_changes_muster."""
    cid = campaign(client)
    attached(client, cid, POINTS_V1)
    fid = force(client, cid)
    bought = client.post(f"/api/v1/forces/{fid}/requisitions", json={"requisition": "pray"})
    assert bought.status_code == 201, bought.text
    before = dump(engine)
    for accept in ("false", "true"):
        shown = attach(client, cid, POWER_V2, preview="true", accept_breaking=accept)
        assert shown.status_code == 200, shown.text
        assert shown.json()["refusal"]["code"] == "rule_pack_changes_muster", accept
        done = attach(client, cid, POWER_V2, accept_breaking=accept)
        assert_problem(done, 409, "rule_pack_changes_muster")
    assert dump(engine) == before
    page = client.post(
        f"/campaigns/{cid}/rules/packs",
        data={"action": "preview", "text": POWER_V2},
        headers=with_csrf_header(client),
    )
    assert page.status_code == 200
    assert 'data-testid="pack-refusal"' in page.text and "already has forces" in page.text
    assert "Attach it anyway" not in page.text
