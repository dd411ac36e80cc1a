"""Named choices by name (issue 47), on SQLite and PostgreSQL: the force, the card and the
feed say the choice's name (the number stays beside it for bots), never "from 0 to 2"."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from tests.api.helpers import campaign, force, unit
from tests.api.test_rule_packs import attached

BROOD = (Path(__file__).resolve().parents[2] / "examples/packs/cinder-brood.yaml").read_text()
PATHS = """
format: crusade-rule-pack/1
id: trials
name: Trials
version: "1"
counters:
  - {id: trial_path, name: Trial path, scope: card, choices: [martyr, penitent]}
requisitions:
  - id: walk_penitent
    name: Walk the Penitent Path
    cost_rp: 0
    target: unit
    summary: The Sister sets out on the penitent path.
    effects: [{kind: set_choice, counter: trial_path, value: penitent}]
"""


def test_a_named_choice_is_said_by_name(client: TestClient) -> None:
    cid = campaign(client)
    attached(client, cid, BROOD)
    attached(client, cid, PATHS)
    blue = force(client, cid, "Cinder Brood", "TYRANIDS")
    sister = unit(client, blue, "Sister Amalia", keywords=["TYRANIDS", "INFANTRY"])["id"]
    other = unit(client, blue, "Brood", keywords=["TYRANIDS", "INFANTRY"])["id"]
    host = client.get(f"/api/v1/forces/{blue}").json()
    assert host["choices"] == {"hunger": None}  # none yet
    bought = client.post(f"/api/v1/forces/{blue}/requisitions", json={"requisition": "crave_flesh"})
    assert bought.status_code == 201, bought.text
    walked = client.post(
        f"/api/v1/forces/{blue}/requisitions",
        json={"requisition": "walk_penitent", "card_id": sister},
    )
    assert walked.status_code == 201, walked.text

    host = client.get(f"/api/v1/forces/{blue}").json()
    assert host["choices"] == {"hunger": "flesh"} and host["counters"]["hunger"] == 1
    card = client.get(f"/api/v1/cards/{sister}").json()
    assert card["choices"] == {"trial_path": "penitent"} and card["counters"]["trial_path"] == 2
    assert client.get(f"/api/v1/cards/{other}").json()["choices"] == {}

    feed = client.get(f"/api/v1/campaigns/{cid}/events?limit=50").json()["items"]
    moved = [e for e in feed if e["kind"] == "counter_changed"]
    said = {e["details"]["counter"]: e for e in moved}
    hunger, path = said["hunger"], said["trial_path"]
    assert (hunger["details"]["before_choice"], hunger["details"]["after_choice"]) == (
        None,
        "flesh",
    )
    assert (hunger["details"]["before"], hunger["details"]["after"]) == (0, 1)
    assert hunger["summary"].endswith("Hunger went from none to Flesh.")
    assert path["details"]["after_choice"] == "penitent"
    assert path["summary"].endswith("Trial path went from none to Penitent.")
    assert "from 0 to 2" not in path["summary"]
