"""A rule pack that changes the core rules' own content (issue 22, ruling 62), on SQLite and
PostgreSQL: it withdraws core Agendas, Requisitions and Crusade Relics and reprices core
Requisitions; what was withdrawn is refused with the pack named, greyed out on the page, and
what battles already hold stays readable and revertible."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force, unit
from tests.api.test_rule_packs import attach, attached, blue_wins_on

LEAN = """
format: crusade-rule-pack/1
id: lean_crusade
name: Lean Crusade
version: "1"
core:
  withdraw:
    agendas: [assassins]
    requisitions: [rearm_and_resupply]
    relics: [artificer_weapon]
  requisition_costs:
    increase_supply_limit: 2
"""


def test_the_preview_lists_what_a_pack_withdraws_and_reprices(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    before = dump(engine)
    shown = attach(client, cid, LEAN, preview="true")
    assert shown.status_code == 200, shown.text
    body = shown.json()
    assert body["withdraws"] == {
        "agendas": ["Assassins"],
        "requisitions": ["Rearm and Resupply"],
        "relics": ["Artificer Weapon"],
    }
    assert body["requisition_costs"] == {"Increase Supply Limit": {"before": 1, "after": 2}}
    assert dump(engine) == before


def test_a_repriced_requisition_costs_the_packs_rp_and_a_withdrawn_one_is_refused(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    attached(client, cid, LEAN)
    fid = force(client, cid)
    bought = client.post(
        f"/api/v1/forces/{fid}/requisitions", json={"requisition": "increase_supply_limit"}
    )
    assert bought.status_code == 201, bought.text
    host = client.get(f"/api/v1/forces/{fid}").json()
    assert (host["supply_limit"], host["requisition_points"]) == (55, 3)
    squad = unit(client, fid)["id"]
    before = dump(engine)
    refused = client.post(
        f"/api/v1/forces/{fid}/requisitions",
        json={"requisition": "rearm_and_resupply", "card_id": squad},
    )
    problem = assert_problem(refused, 422, "requisition_withdrawn")
    assert "lean_crusade" in problem["detail"]
    assert dump(engine) == before
    page = client.get(f"/forces/{fid}/requisitions").text
    shop = page.split('id="requisition-rearm_and_resupply"', 1)[1].split("</article>", 1)[0]
    assert "Not now:" in shop and "withdraws it" in shop
    assert "2 RP" in page.split('id="requisition-increase_supply_limit"', 1)[1][:1500]


def test_a_withdrawn_agenda_is_refused_and_not_offered(client: TestClient, engine: Engine) -> None:
    cid = campaign(client)
    attached(client, cid, LEAN)
    blue, red = force(client, cid), force(client, cid, "Black Legion", "CHAOS")
    squad, foe = unit(client, blue)["id"], unit(client, red, "Legionaries", keywords=["CHAOS"])
    sides = [
        {"force_id": blue, "role": "attacker", "roster": [squad], "agendas": ["assassins"]},
        {"force_id": red, "role": "defender", "roster": [foe["id"]], "agendas": ["reaper"]},
    ]
    before = dump(engine)
    body = {"battle_size": "combat_patrol", "mission": "sweep_and_clear", "sides": sides}
    refused = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    problem = assert_problem(refused, 422, "agenda_withdrawn")
    assert "Assassins" in problem["detail"] and "lean_crusade" in problem["detail"]
    assert dump(engine) == before
    rules = client.get(f"/api/v1/campaigns/{cid}/rules").json()
    agenda = next(a for a in rules["agendas"] if a["id"] == "assassins")
    assert agenda["withdrawn_by"] == "lean_crusade"
    cost = next(r for r in rules["requisitions"] if r["id"] == "increase_supply_limit")
    assert cost["cost_rp"] == 2
    core = client.get("/api/v1/rules/requisitions").json()
    assert next(r for r in core if r["id"] == "increase_supply_limit")["cost_rp"] == 1
    page = client.get(f"/campaigns/{cid}/rules").text
    assert "Changes to the core rules" in page and "Assassins" in page


def test_a_battle_fought_before_the_withdrawal_stays_readable_and_revertible(
    client: TestClient,
) -> None:
    cid = campaign(client)
    blue, _red, battle = blue_wins_on(client, cid, "sweep_and_clear")  # both chose Assassins
    attached(client, cid, LEAN)
    assert client.get(f"/api/v1/battles/{battle}").status_code == 200
    assert client.get(f"/battles/{battle}").status_code == 200
    reverted = client.post(f"/api/v1/battles/{battle}/revert")
    assert reverted.status_code == 200, reverted.text
    assert client.get(f"/api/v1/forces/{blue}").json()["battle_tally"] == 0


def test_withdrawing_what_the_core_has_not_is_refused(client: TestClient, engine: Engine) -> None:
    cid = campaign(client)
    before = dump(engine)
    bad = LEAN.replace("agendas: [assassins]", "agendas: [assassins, no_such_agenda]")
    refused = attach(client, cid, bad)
    problem = assert_problem(refused, 422, "rule_pack_invalid")
    assert problem["field"] == "core.withdraw.agendas[1]"
    assert "no core agenda 'no_such_agenda'" in problem["detail"]
    costly = LEAN.replace("increase_supply_limit: 2", "increase_supply_limit: 99")
    assert_problem(attach(client, cid, costly), 422, "rule_pack_invalid")
    assert dump(engine) == before
