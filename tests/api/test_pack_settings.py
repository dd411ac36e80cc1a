"""A rule pack's house-rule settings beyond the numbers (issue 22), on SQLite and
PostgreSQL: Agendas per battle size, and whether an organizer's own result waits for the
opponent."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump
from tests.api.test_rule_packs import attach, attached

SETTINGS = """
format: crusade-rule-pack/1
id: our_nights
name: Our league nights
version: "1"
settings:
  agendas_per_battle: {combat_patrol: 2, strike_force: 2}
  organizer_results_need_confirmation: false
"""


def test_a_pack_sets_agendas_per_battle_size_and_the_confirmation_setting(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    assert client.get(f"/api/v1/campaigns/{cid}").json()["organizer_results_need_confirmation"]
    before = dump(engine)
    shown = attach(client, cid, SETTINGS, preview="true").json()
    assert shown["settings"] == {
        "agendas_per_battle.combat_patrol": {"before": 1, "after": 2},
        "agendas_per_battle.strike_force": {"before": 3, "after": 2},
        "organizer_results_need_confirmation": {"before": True, "after": False},
    }
    assert dump(engine) == before
    attached(client, cid, SETTINGS)
    sizes = {
        s["id"]: s["agendas"]
        for s in client.get(f"/api/v1/campaigns/{cid}/rules").json()["battle_sizes"]
    }
    assert sizes == {"combat_patrol": 2, "incursion": 2, "strike_force": 2, "onslaught": 4}
    assert not client.get(f"/api/v1/campaigns/{cid}").json()["organizer_results_need_confirmation"]
    feed = client.get(f"/api/v1/campaigns/{cid}/events").json()["items"]
    changed = next(e for e in feed if e["kind"] == "campaign_settings_changed")
    assert changed["details"]["pack"] == "our_nights"
    assert "by the rule pack our_nights" in client.get(f"/campaigns/{cid}/history").text
    page = client.get(f"/campaigns/{cid}/rules").text
    assert "Agendas per player per battle: <strong>Combat Patrol 2, Strike Force 2</strong>" in page
    # the organizer may change it afterwards, as any campaign setting
    turned = client.patch(
        f"/api/v1/campaigns/{cid}", json={"organizer_results_need_confirmation": True}
    )
    assert turned.status_code == 200, turned.text
    assert turned.json()["organizer_results_need_confirmation"]


def test_agendas_for_a_battle_size_that_does_not_exist_are_refused(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    before = dump(engine)
    bad = SETTINGS.replace("strike_force: 2", "skirmish: 2")
    problem = assert_problem(attach(client, cid, bad), 422, "rule_pack_invalid")
    assert problem["field"] == "settings.agendas_per_battle.skirmish"
    too_many = SETTINGS.replace("strike_force: 2", "strike_force: 9")
    problem = assert_problem(attach(client, cid, too_many), 422, "rule_pack_invalid")
    assert problem["field"] == "settings.agendas_per_battle"
    assert (
        "settings.agendas_per_battle.strike_force (line 7): Input should be less"
        in problem["detail"]
    )
    assert dump(engine) == before
