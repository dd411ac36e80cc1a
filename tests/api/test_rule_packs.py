"""Rule packs through the JSON API (issue 22), on SQLite and PostgreSQL: the schema, preview,
attach, a campaign played with the example packs (a house rule, a pack Agenda scored in a
battle, a pack Requisition that changes a counter), updates and reverts across them, hostile
packs refused with nothing changed, and the export carrying the packs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session

from app.rules import packs
from app.services.campaigns import transfer
from tests.api.helpers import assert_problem, campaign, dump, force, unit
from tests.rules.test_packs import VIGIL

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "packs"
HOUSE = (EXAMPLES / "house-rules.yaml").read_text()
PILGRIMS = (EXAMPLES / "ashen-pilgrims.yaml").read_text()


def pilgrims_version() -> str:
    return packs.load(PILGRIMS).version


def attach(client: TestClient, campaign_id: int, text: str, **params: Any) -> Any:
    return client.post(
        f"/api/v1/campaigns/{campaign_id}/rule-packs",
        files={"file": ("pack.yaml", text.encode(), "application/yaml")},
        params=params,
    )


def attached(client: TestClient, campaign_id: int, text: str) -> dict[str, Any]:
    response = attach(client, campaign_id, text)
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_the_schema_is_the_packs_own(client: TestClient) -> None:
    served = client.get("/api/v1/rule-packs/schema")
    assert served.status_code == 200
    assert served.json() == packs.schema()


def test_a_preview_says_what_changes_and_attaches_nothing(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    before = dump(engine)
    shown = attach(client, cid, HOUSE, preview="true")
    assert shown.status_code == 200, shown.text
    body = shown.json()
    assert body["settings"]["starting_supply_limit"] == {"before": 50, "after": 75}
    assert body["settings"]["max_requisition_points"] == {"before": 5, "after": 15}
    assert body["attached"] is None and body["replaces_version"] is None
    assert dump(engine) == before


def test_house_rules_start_a_force_at_75(client: TestClient) -> None:
    cid = campaign(client)
    made = attached(client, cid, HOUSE)
    assert made["attached"]["pack_id"] == "house_rules"
    assert client.get(f"/api/v1/campaigns/{cid}/rule-packs").json()[0]["version"] == "1"
    fid = force(client, cid)
    assert client.get(f"/api/v1/forces/{fid}").json()["supply_limit"] == 75
    other = campaign(client, "Elsewhere")  # a pack is the campaign's own
    assert client.get(f"/api/v1/forces/{force(client, other)}").json()["supply_limit"] == 50
    feed = client.get(f"/api/v1/campaigns/{cid}/events").json()["items"]
    assert any(e["kind"] == "rule_pack_attached" for e in feed)


def test_a_pack_requisition_changes_a_counter(client: TestClient) -> None:
    cid = campaign(client)
    attached(client, cid, PILGRIMS)
    fid = force(client, cid)
    assert client.get(f"/api/v1/forces/{fid}").json()["counters"] == {"fervour": 1}
    squad = unit(client, fid)["id"]
    too_soon = client.post(
        f"/api/v1/forces/{fid}/requisitions",
        json={"requisition": "pilgrims_miracle", "card_id": squad, "scar": "fatigued"},
    )
    problem = assert_problem(too_soon, 422, "requisition_not_eligible")
    assert "counter.fervour >= 3" in problem["detail"]  # the host has 1 Fervour
    bought = client.post(
        f"/api/v1/forces/{fid}/requisitions", json={"requisition": "kindle_fervour"}
    )
    assert bought.status_code == 201, bought.text
    after = client.get(f"/api/v1/forces/{fid}").json()
    assert (after["counters"], after["requisition_points"]) == ({"fervour": 3}, 4)
    feed = client.get(f"/api/v1/campaigns/{cid}/events").json()["items"]
    [event] = [e for e in feed if e["kind"] == "requisition_purchased"]
    assert "Kindle Fervour" in event["summary"]
    assert (event["details"]["pack"], event["details"]["counters"]) == (
        "ashen_pilgrims",
        {"fervour": 3},
    )
    page = client.get(f"/forces/{fid}").text
    assert '<li data-counter="fervour"><strong>3</strong> Fervour' in page


def pilgrim_world(client: TestClient, pack: str = PILGRIMS) -> dict[str, Any]:
    cid = campaign(client)
    attached(client, cid, pack)
    blue, red = force(client, cid), force(client, cid, "Black Legion", "CHAOS")
    squad = unit(client, blue, "Pilgrim Band")
    tank = unit(client, blue, "Pilgrim Crawler", keywords=["IMPERIUM", "VEHICLE"])
    foe = unit(client, red, "Legionaries", keywords=["CHAOS", "INFANTRY"])
    return {"campaign": cid, "blue": blue, "red": red, "squad": squad, "tank": tank, "foe": foe}


def muster_with(client: TestClient, world: dict[str, Any], agenda: str) -> dict[str, Any]:
    body = {
        "battle_size": "combat_patrol",
        "mission": "sweep_and_clear",
        "sides": [
            {
                "force_id": world["blue"],
                "role": "attacker",
                "roster": [world["squad"]["id"], world["tank"]["id"]],
                "agendas": [agenda],
            },
            {
                "force_id": world["red"],
                "role": "defender",
                "roster": [world["foe"]["id"]],
                "agendas": ["cull_the_hordes"],
            },
        ],
    }
    mustered = client.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=body)
    assert mustered.status_code == 201, mustered.text
    return dict(mustered.json())


def result(world: dict[str, Any], unit_id: int, tally: int) -> dict[str, Any]:
    return {
        "sides": [
            {
                "force_id": world["blue"],
                "victory_points": 30,
                "units": [{"card_id": unit_id, "agenda_tallies": {"bear_the_ashes": tally}}],
            },
            {"force_id": world["red"], "victory_points": 10},
        ]
    }


def test_a_pack_agenda_scores_xp_in_a_battle(client: TestClient, engine: Engine) -> None:
    world = pilgrim_world(client)
    battle = muster_with(client, world, "bear_the_ashes")
    before = dump(engine)
    tank = client.post(
        f"/api/v1/battles/{battle['id']}/result", json=result(world, world["tank"]["id"], 1)
    )
    assert_problem(tank, 422, "agenda_unit_ineligible")  # the expression leaves out VEHICLEs
    assert dump(engine) == before
    over = client.post(
        f"/api/v1/battles/{battle['id']}/result", json=result(world, world["squad"]["id"], 4)
    )
    assert over.status_code == 422, over.text  # max_tally 3
    recorded = client.post(
        f"/api/v1/battles/{battle['id']}/result", json=result(world, world["squad"]["id"], 2)
    )
    assert recorded.status_code == 200, recorded.text
    squad = client.get(f"/api/v1/cards/{world['squad']['id']}").json()
    assert squad["xp"] == 1 + 2 * 2  # battle experience, and 2 XP per tally
    read = client.get(f"/api/v1/battles/{battle['id']}").json()
    assert read["rule_packs"] == {"ashen_pilgrims": "1.0"}


def test_a_pack_agenda_moves_a_counter_and_a_revert_puts_it_back(
    client: TestClient, engine: Engine
) -> None:
    """An Agenda whose marks add Fervour: 2 marks, +1 each, on top of the host's 1; a tally
    past the counter's max stops at it; the revert restores the counter exactly."""
    fervent = PILGRIMS.replace(
        "    xp_per_tally: 2\n", "    xp_per_tally: 2\n    counters: {fervour: 1}\n", 1
    )
    world = pilgrim_world(client, fervent)
    battle = muster_with(client, world, "bear_the_ashes")
    recorded = client.post(
        f"/api/v1/battles/{battle['id']}/result", json=result(world, world["squad"]["id"], 2)
    )
    assert recorded.status_code == 200, recorded.text
    host = client.get(f"/api/v1/forces/{world['blue']}").json()
    assert host["counters"] == {"fervour": 1 + 2}
    feed = client.get(f"/api/v1/campaigns/{world['campaign']}/events").json()["items"]
    [moved] = [e for e in feed if e["kind"] == "counter_changed"]  # said in the history
    assert moved["battle_id"] == battle["id"] and moved["force_id"] == world["blue"]
    assert (moved["details"]["counter"], moved["details"]["before"]) == ("fervour", 1)
    assert moved["details"]["after"] == 3
    assert moved["summary"].endswith(": Fervour went from 1 to 3.")
    rules = client.get(f"/api/v1/campaigns/{world['campaign']}/rules").json()
    agenda = next(a for a in rules["agendas"] if a["id"] == "bear_the_ashes")
    assert agenda["counters_per_mark"] == {"fervour": 1}
    before = dump(engine)
    assert client.post(f"/api/v1/battles/{battle['id']}/revert").status_code == 200
    assert client.get(f"/api/v1/forces/{world['blue']}").json()["counters"] == {"fervour": 1}
    assert dump(engine) != before
    # a pack naming a counter it does not have is refused by path
    unknown = attach(client, world["campaign"], fervent.replace("{fervour: 1}", "{zeal: 1}"))
    assert unknown.status_code == 422
    assert "agendas[0].counters.zeal" in unknown.json()["detail"]


def test_an_update_is_checked_and_a_revert_across_it_is_exact(
    client: TestClient, engine: Engine
) -> None:
    world = pilgrim_world(client)
    cid = world["campaign"]
    client.post(
        f"/api/v1/forces/{world['blue']}/requisitions", json={"requisition": "kindle_fervour"}
    )
    battle = muster_with(client, world, "bear_the_ashes")
    client.post(
        f"/api/v1/battles/{battle['id']}/result", json=result(world, world["squad"]["id"], 1)
    )
    same = attach(client, cid, PILGRIMS)
    assert_problem(same, 409, "rule_pack_version_exists")
    without_fervour = PILGRIMS.replace('version: "1.0"', 'version: "2.0"')
    cut = without_fervour.index("counters:")
    without_fervour = without_fervour[:cut] + without_fervour[without_fervour.index("agendas:") :]
    without_fervour = (
        without_fervour[: without_fervour.index("requisitions:")]
        + without_fervour[without_fervour.index("relics:") : without_fervour.index("# Triggers")]
    )
    before = dump(engine)
    breaking = attach(client, cid, without_fervour)
    problem = assert_problem(breaking, 409, "rule_pack_update_breaks")
    assert "has fervour" in problem["detail"]
    assert dump(engine) == before
    shown = attach(client, cid, without_fervour, preview="true").json()
    assert shown["replaces_version"] == "1.0" and "Fervour" in shown["removes"]["counters"]
    updated = attach(client, cid, without_fervour, accept_breaking="true")
    assert updated.status_code == 201, updated.text
    assert client.get(f"/api/v1/campaigns/{cid}/rule-packs").json()[0]["version"] == "2.0"
    # the battle recorded under 1.0 keeps it, and reverting it now restores that state
    assert client.get(f"/api/v1/battles/{battle['id']}").json()["rule_packs"] == {
        "ashen_pilgrims": "1.0"
    }
    squad_before = client.get(f"/api/v1/cards/{world['squad']['id']}").json()
    assert squad_before["xp"] == 3
    reverted = client.post(f"/api/v1/battles/{battle['id']}/revert")
    assert reverted.status_code == 200, reverted.text
    assert client.get(f"/api/v1/cards/{world['squad']['id']}").json()["xp"] == 0


@pytest.mark.parametrize(
    ("text", "field", "says"),
    [
        ("{format: [", "file", "not valid YAML"),
        ("a: &x [1]\nb: *x\n", "b", "anchors and aliases"),
        (
            PILGRIMS.replace("kind: remove_battle_scar", "kind: summon_daemon"),
            "requisitions[1].effects[1]",
            "summon_daemon",
        ),
        (
            PILGRIMS.replace("name: Bear the Ashes", "name: Assassins"),
            "agendas[0].name",
            "already a agenda",
        ),
        (HOUSE.replace("75", "-5"), "settings.starting_supply_limit", "greater than or equal to 0"),
        ("x: " + "y" * (packs.MAX_BYTES + 10), "file", f"at most {packs.MAX_BYTES // 1024} KB"),
    ],
)
def test_a_bad_pack_is_refused_and_changes_nothing(
    client: TestClient, engine: Engine, text: str, field: str, says: str
) -> None:
    cid = campaign(client)
    before = dump(engine)
    refused = attach(client, cid, text)
    problem = assert_problem(refused, 422, "rule_pack_invalid")
    assert problem["field"] == field and says in problem["detail"], problem
    assert dump(engine) == before


def test_a_detach_is_checked_and_the_packs_travel_in_the_export(
    client: TestClient, engine: Engine
) -> None:
    world = pilgrim_world(client)
    cid = world["campaign"]
    attached(client, cid, HOUSE)
    client.post(
        f"/api/v1/forces/{world['blue']}/requisitions", json={"requisition": "kindle_fervour"}
    )
    in_use = client.delete(f"/api/v1/campaigns/{cid}/rule-packs/ashen_pilgrims")
    assert_problem(in_use, 409, "rule_pack_in_use")
    with Session(engine) as session:
        document = transfer.export_campaign(session, campaign_id=cid)
        assert [p["pack_id"] for p in document["rule_packs"]] == ["ashen_pilgrims", "house_rules"]
        copy = transfer.import_campaign(session, document)
        session.commit()
        copy_id = copy.id
    copied = client.get(f"/api/v1/campaigns/{copy_id}/rule-packs").json()
    assert [p["pack_id"] for p in copied] == ["ashen_pilgrims", "house_rules"]
    assert client.get(f"/api/v1/forces/{force(client, copy_id)}").json()["supply_limit"] == 75
    shared = client.get(f"/api/v1/campaigns/{cid}/rule-packs/ashen_pilgrims").json()
    assert packs.RulePack.model_validate(shared["document"]) == packs.load(PILGRIMS)
    gone = client.delete(f"/api/v1/campaigns/{cid}/rule-packs/house_rules")
    assert gone.status_code == 200, gone.text
    assert client.get(f"/api/v1/forces/{force(client, cid)}").json()["supply_limit"] == 50


def test_the_campaigns_rules_list_the_core_and_what_its_packs_add(
    client: TestClient, anonymous: TestClient
) -> None:
    """GET /campaigns/{id}/rules: what the campaign plays with (GET /rules stays the core)."""
    cid = campaign(client)
    core = client.get(f"/api/v1/campaigns/{cid}/rules")
    assert core.status_code == 200, core.text
    assert core.json()["rule_packs"] == {} and core.json()["counters"] == []
    assert core.json()["numbers"]["starting_supply_limit"] == 50
    attached(client, cid, HOUSE)
    attached(client, cid, PILGRIMS)
    played = client.get(f"/api/v1/campaigns/{cid}/rules").json()
    assert played["rule_packs"] == {"house_rules": "1", "ashen_pilgrims": pilgrims_version()}
    assert played["numbers"]["starting_supply_limit"] == 75
    agendas = {a["id"]: a for a in played["agendas"]}
    pilgrims = packs.load(PILGRIMS)
    assert {a.id for a in pilgrims.agendas} <= set(agendas)
    assert {"assassins", "cull_the_hordes"} <= set(agendas)  # the core's are still there
    assert {r.id for r in pilgrims.requisitions} <= {r["id"] for r in played["requisitions"]}
    assert {r.id for r in pilgrims.relics} <= {r["id"] for r in played["crusade_relics"]}
    assert [c["id"] for c in played["counters"]] == [c.id for c in pilgrims.counters]
    # the core reference is unchanged
    assert client.get("/api/v1/rules/numbers").json()["starting_supply_limit"] == 50
    # a campaign's rules are read like the campaign: not by someone it is hidden from
    assert_problem(anonymous.get(f"/api/v1/campaigns/{cid}/rules"), 401, "not_authenticated")
    assert client.get("/api/v1/campaigns/999999/rules").status_code == 404


def test_a_pack_battle_trait_is_offered_and_chosen(client: TestClient, engine: Engine) -> None:
    """The squad reaches Blooded in a battle; its Battle Honour offers the pack's Battle
    Traits it may take (INFANTRY: Ash Walkers; Pyre-hardened once Blooded) after the core
    table, and the one chosen shows on the card with its name and summary (ruling 55)."""
    world = pilgrim_world(client)
    battle = muster_with(client, world, "bear_the_ashes")
    body = result(world, world["squad"]["id"], 2)
    body["sides"][0]["units"][0]["marked_for_greatness"] = True  # 1 + 3 + 2 x 2 = 8 XP
    recorded = client.post(f"/api/v1/battles/{battle['id']}/result", json=body)
    assert recorded.status_code == 200, recorded.text
    owed = client.get(f"/api/v1/forces/{world['blue']}/decisions?status=pending").json()
    honour = next(d for d in owed["items"] if d["kind"] == "battle_honour")
    page = client.get(f"/decisions/{honour['id']}?category=battle_trait").text
    assert "Ash Walkers" in page and "Pyre-hardened" in page
    rules = client.get(f"/api/v1/campaigns/{world['campaign']}/rules").json()
    assert [e["id"] for e in rules["pack_battle_traits"]] == ["ash_walkers", "pyre_hardened"]
    assert [e["id"] for e in rules["pack_psychic_fortitudes"]] == ["embers_of_faith"]

    before = dump(engine)
    fortitude = client.post(
        f"/api/v1/decisions/{honour['id']}/answer",
        json={"category": "psychic_fortitude", "entries": ["embers_of_faith"]},
    )
    assert fortitude.status_code == 422, fortitude.text  # the squad is no PSYKER
    assert dump(engine) == before
    chosen = client.post(
        f"/api/v1/decisions/{honour['id']}/answer",
        json={"category": "battle_trait", "entries": ["ash_walkers"]},
    )
    assert chosen.status_code == 200, chosen.text
    squad = client.get(f"/api/v1/cards/{world['squad']['id']}").json()
    [trait] = [h for h in squad["honours"] if h["category"] == "battle_trait"]
    assert [(e["id"], e["name"]) for e in trait["entries"]] == [("ash_walkers", "Ash Walkers")]
    assert "ruins" in trait["entries"][0]["summary"]
    assert "Ash Walkers" in client.get(f"/cards/{world['squad']['id']}").text


THRONG = """
format: crusade-rule-pack/1
id: throngs
name: Throngs
version: "1"
requisitions:
  - id: gather_the_faithful
    name: Gather the Faithful
    cost_rp: 1
    summary: A throng of penitents joins the host.
    effects:
      - {kind: add_unit, name: Penitent Throng, power_rating: 3, keywords: [INFANTRY]}
  - id: call_the_multitude
    name: Call the Multitude
    cost_rp: 1
    summary: A whole crusade of penitents joins the host.
    effects:
      - {kind: add_unit, name: The Multitude, power_rating: 48}
  - id: raise_a_warband
    name: Raise a Warband
    cost_rp: 1
    summary: The player names the warband that joins (6 Power at most).
    effects:
      - {kind: add_unit, chosen: true, max_power_rating: 6, keywords: [INFANTRY]}
"""


def test_a_pack_requisition_adds_a_unit(client: TestClient, engine: Engine) -> None:
    """The unit joins with the force's faction keyword, a row and a card_added event of its
    own; over the Supply Limit it is refused and nothing changes."""
    cid = campaign(client)
    attached(client, cid, THRONG)
    fid = force(client, cid)
    bought = client.post(
        f"/api/v1/forces/{fid}/requisitions", json={"requisition": "gather_the_faithful"}
    )
    assert bought.status_code == 201, bought.text
    host = client.get(f"/api/v1/forces/{fid}").json()
    [throng] = [c for c in host["cards"] if c["name"] == "Penitent Throng"]
    assert (throng["power_rating"], throng["keywords"], throng["xp"]) == (
        3,
        ["IMPERIUM", "INFANTRY"],
        0,
    )
    assert host["requisition_points"] == 5 - 1 and host["supply_used"] == 3
    feed = client.get(f"/api/v1/campaigns/{cid}/events").json()["items"]
    assert any(e["kind"] == "card_added" and e["card_id"] == throng["id"] for e in feed)

    before = dump(engine)  # 3 of 50 Power used: 48 more does not fit
    over = client.post(
        f"/api/v1/forces/{fid}/requisitions", json={"requisition": "call_the_multitude"}
    )
    assert_problem(over, 422, "supply_limit_exceeded")
    assert dump(engine) == before


def test_a_pack_mission_is_played_and_stays_while_a_battle_used_it(
    client: TestClient, engine: Engine
) -> None:
    """Mustered by its id, its victor bonus paid; the campaign's rules list it (low 0: chosen,
    never rolled); detaching it, or an update without it, is refused even when asked to."""
    cid = campaign(client)
    attached(client, cid, VIGIL)
    rules = client.get(f"/api/v1/campaigns/{cid}/rules").json()
    [vigil] = [m for m in rules["missions"] if m["id"] == "the_long_vigil"]
    assert (vigil["low"], vigil["pack"], vigil["battle_size"]) == (0, "vigil", "combat_patrol")
    blue, _red, battle = blue_wins_on(client, cid, "the_long_vigil", spend_rp=3)
    rp = client.get(f"/api/v1/forces/{blue}").json()["requisition_points"]
    assert rp == 2 + 1 + 2  # 2 left, the battle's 1, the mission's victor bonus 2
    page = client.get(f"/battles/{battle}").text
    assert "The Long Vigil" in page
    assert client.get(f"/api/v1/battles/{battle}").json()["mission_name"] == ("The Long Vigil")
    # the set-up page offers it among the Combat Patrol missions, with no D6 result
    started = client.post(f"/campaigns/{cid}/battles/new", headers=with_csrf_header(client))
    assert started.status_code == 200 and "/setup" in str(started.url)  # followed there
    setup = started.text
    assert 'value="the_long_vigil"' in setup and "> The Long Vigil</label>" in setup

    before = dump(engine)
    gone = client.delete(
        f"/api/v1/campaigns/{cid}/rule-packs/vigil", params={"accept_breaking": "true"}
    )
    assert_problem(gone, 409, "rule_pack_mission_in_use")
    without = VIGIL.replace('version: "1"', 'version: "2"').split("missions:")[0]
    update = attach(client, cid, without + "description: none\n", accept_breaking="true")
    assert_problem(update, 409, "rule_pack_mission_in_use")
    assert dump(engine) == before


def with_csrf_header(client: TestClient) -> dict[str, str]:
    return {"X-CSRF-Token": client.get("/api/v1/auth/csrf").json()["csrf_token"]}


EMBERS = """
format: crusade-rule-pack/1
id: embers
name: Embers
version: "1"
counters:
  - {id: embers, name: Embers, scope: force, start: 1, min: 0, max: 4}
missions:
  - id: kindle_the_pyres
    name: Kindle the Pyres
    battle_size: combat_patrol
    summary: Light the pyres across the field.
    victor_bonus:
      - summary: The victor's host gathers 5 Embers (4 at most).
        effect: {kind: change_counter, counter: embers, amount: 5}
"""


def test_a_pack_missions_victor_bonus_moves_a_counter(client: TestClient, engine: Engine) -> None:
    """Paid as the battle is resolved (no decision), within the counter's bounds, said in the
    history, put back by a revert; a bonus naming a counter the pack lacks is refused."""
    cid = campaign(client)
    attached(client, cid, EMBERS)
    blue, red, battle = blue_wins_on(client, cid, "kindle_the_pyres")
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"] == {"embers": 4}  # 1+5, max 4
    assert client.get(f"/api/v1/forces/{red}").json()["counters"] == {"embers": 1}  # at start
    owed = client.get(f"/api/v1/forces/{blue}/decisions?status=pending").json()["items"]
    assert owed == []  # paid at once, nothing to decide
    feed = client.get(f"/api/v1/campaigns/{cid}/events").json()["items"]
    [moved] = [e for e in feed if e["kind"] == "counter_changed"]
    assert (moved["details"]["before"], moved["details"]["after"]) == (1, 4)
    assert client.post(f"/api/v1/battles/{battle}/revert").status_code == 200
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"] == {"embers": 1}

    unknown = attach(client, cid, EMBERS.replace("counter: embers,", "counter: ashes,"))
    assert unknown.status_code == 422
    assert "missions[0].victor_bonus[0].effect.counter" in unknown.json()["detail"]


def blue_wins_on(
    client: TestClient, cid: int, mission: str, spend_rp: int = 0
) -> tuple[int, int, int]:
    """Two new forces of one unit each play a Combat Patrol on ``mission``; blue wins (after
    spending ``spend_rp`` RP on Increase Supply Limit, so RP gained shows under the cap)."""
    blue, red = force(client, cid), force(client, cid, "Black Legion", "CHAOS")
    squad, foe = unit(client, blue)["id"], unit(client, red, "Legionaries", keywords=["CHAOS"])
    for _ in range(spend_rp):
        spent = client.post(
            f"/api/v1/forces/{blue}/requisitions", json={"requisition": "increase_supply_limit"}
        )
        assert spent.status_code == 201, spent.text
    sides = [
        {"force_id": blue, "role": "attacker", "roster": [squad], "agendas": ["assassins"]},
        {"force_id": red, "role": "defender", "roster": [foe["id"]], "agendas": ["assassins"]},
    ]
    body = {"battle_size": "combat_patrol", "mission": mission, "sides": sides}
    battle = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert battle.status_code == 201, battle.text
    scores = [{"force_id": blue, "victory_points": 20}, {"force_id": red, "victory_points": 5}]
    won = client.post(f"/api/v1/battles/{battle.json()['id']}/result", json={"sides": scores})
    assert won.status_code == 200, won.text
    return blue, red, int(battle.json()["id"])


def scar_owed(client: TestClient, world: dict[str, Any]) -> dict[str, Any]:
    """The squad is destroyed in a drawn battle, fails its Out of Action test and takes the
    Battle Scar: the scar decision it then owes."""
    battle = muster_with(client, world, "bear_the_ashes")
    falls = {
        "sides": [
            {
                "force_id": world["blue"],
                "victory_points": 10,
                "units": [{"card_id": world["squad"]["id"], "destroyed": True}],
                "dice": [1],
            },
            {"force_id": world["red"], "victory_points": 10},
        ]
    }
    recorded = client.post(f"/api/v1/battles/{battle['id']}/result", json=falls)
    assert recorded.status_code == 200, recorded.text
    [test] = client.get(f"/api/v1/forces/{world['blue']}/decisions").json()["items"]
    client.post(f"/api/v1/decisions/{test['id']}/answer", json={"consequence": "battle_scar"})
    [scar] = client.get(f"/api/v1/forces/{world['blue']}/decisions").json()["items"]
    return dict(scar)


def test_a_pack_battle_scar_is_chosen_caps_xp_and_is_healed(
    client: TestClient, engine: Engine
) -> None:
    """Ruling 58: the scar decision takes the pack's scar by id; the card names it; Repair
    and Recuperate heals it by name; the campaign's rules list it (its XP cap: the rules
    tests)."""
    world = pilgrim_world(client)
    squad = world["squad"]["id"]
    scar = scar_owed(client, world)
    before = dump(engine)
    misspelled = client.post(f"/api/v1/decisions/{scar['id']}/answer", json={"scar": "ash_chocked"})
    assert_problem(misspelled, 422, "battle_scar_unknown")
    assert dump(engine) == before
    answered = client.post(f"/api/v1/decisions/{scar['id']}/answer", json={"scar": "ash_choked"})
    assert answered.status_code == 200, answered.text
    card = client.get(f"/api/v1/cards/{squad}").json()
    assert [(s["id"], s["name"]) for s in card["scars"]] == [("ash_choked", "Ash-choked")]
    rules = client.get(f"/api/v1/campaigns/{world['campaign']}/rules").json()
    assert [s["id"] for s in rules["pack_battle_scars"]] == ["ash_choked"]

    healed = client.post(
        f"/api/v1/forces/{world['blue']}/requisitions",
        json={"requisition": "repair_and_recuperate", "card_id": squad, "scar": "Ash-choked"},
    )
    assert healed.status_code == 201, healed.text
    assert client.get(f"/api/v1/cards/{squad}").json()["scars"] == []


def test_a_pack_weapon_enhancement_is_chosen_alone_for_its_kind_of_weapon(
    client: TestClient, engine: Engine
) -> None:
    """Ruling 60: the squad reaches Blooded; its Battle Honour page offers the pack's melee
    enhancement for a melee weapon only; chosen alone, the card names it on that weapon."""
    world = pilgrim_world(client)
    battle = muster_with(client, world, "bear_the_ashes")
    body = result(world, world["squad"]["id"], 2)
    body["sides"][0]["units"][0]["marked_for_greatness"] = True
    assert client.post(f"/api/v1/battles/{battle['id']}/result", json=body).status_code == 200
    owed = client.get(f"/api/v1/forces/{world['blue']}/decisions?status=pending").json()
    honour = next(d for d in owed["items"] if d["kind"] == "battle_honour")
    url = f"/decisions/{honour['id']}?category=weapon_enhancement"
    assert "Censer-blessed" in client.get(f"{url}&weapon_type=melee").text
    assert "Censer-blessed" not in client.get(f"{url}&weapon_type=ranged").text
    rules = client.get(f"/api/v1/campaigns/{world['campaign']}/rules").json()
    assert [(e["id"], e["weapon_type"]) for e in rules["pack_weapon_enhancements"]] == [
        ("censer_blessed", "melee")
    ]

    answer = {
        "category": "weapon_enhancement",
        "entries": ["censer_blessed"],
        "weapon": {"model": "Pilgrim", "weapon": "Bolter", "weapon_type": "ranged"},
    }
    before = dump(engine)
    wrong = client.post(f"/api/v1/decisions/{honour['id']}/answer", json=answer)
    assert_problem(wrong, 422, "weapon_enhancement_wrong_weapon")
    assert dump(engine) == before
    answer["weapon"] = {"model": "Pilgrim", "weapon": "Chain-flail", "weapon_type": "melee"}
    chosen = client.post(f"/api/v1/decisions/{honour['id']}/answer", json=answer)
    assert chosen.status_code == 200, chosen.text
    squad = client.get(f"/api/v1/cards/{world['squad']['id']}").json()
    [enhanced] = [h for h in squad["honours"] if h["category"] == "weapon_enhancement"]
    assert enhanced["weapon"] == "Chain-flail"
    assert [e["name"] for e in enhanced["entries"]] == ["Censer-blessed"]


BLESSING = HOUSE.replace(
    "settings:",
    "requisitions:\n"
    "  - id: saints_blessing\n"
    "    name: Saint's Blessing\n"
    "    cost_rp: 1\n"
    "    target: unit\n"
    "    summary: The unit is blessed; it gains 6 XP.\n"
    "    effects: [{kind: add_xp, amount: 6}]\n"
    "settings:",
)


def test_xp_from_a_requisition_that_reaches_a_rank_owes_a_battle_honour(
    client: TestClient, engine: Engine
) -> None:
    """Ruling 61: the unit is promoted, the history says so, and its Battle Honour waits as
    a decision of no battle, answered as after a battle (and holding the next muster)."""
    cid = campaign(client)
    attached(client, cid, BLESSING)
    fid = force(client, cid)
    squad = unit(client, fid)["id"]
    bought = client.post(
        f"/api/v1/forces/{fid}/requisitions",
        json={"requisition": "saints_blessing", "card_id": squad},
    )
    assert bought.status_code == 201, bought.text
    card = client.get(f"/api/v1/cards/{squad}").json()
    assert (card["xp"], card["rank"]) == (6, "blooded")
    [owed] = client.get(f"/api/v1/forces/{fid}/decisions").json()["items"]
    assert (owed["kind"], owed["card_id"], owed["battle_id"]) == ("battle_honour", squad, None)
    feed = client.get(f"/api/v1/campaigns/{cid}/events").json()["items"]
    assert any(e["kind"] == "rank_gained" and e["card_id"] == squad for e in feed)
    page = client.get(f"/decisions/{owed['id']}")
    assert page.status_code == 200 and "Battle Honour" in page.text
    assert client.get(f"/forces/{fid}/decisions").status_code == 200
    answered = client.post(
        f"/api/v1/decisions/{owed['id']}/answer",
        json={"category": "battle_trait", "entries": ["fleet_of_foot"]},
    )
    assert answered.status_code == 200, answered.text
    honours = client.get(f"/api/v1/cards/{squad}").json()["honours"]
    assert [h["category"] for h in honours] == ["battle_trait"]


def test_a_character_promoted_by_a_requisition_may_take_a_warlord_trait_until_it_musters(
    client: TestClient, engine: Engine
) -> None:
    """Ruling 33 with ruling 61: a rank reached through a requisition opens the Warlord
    Trait / Relic window as a battle's does, for that CHARACTER only, until its force
    musters again."""
    cid = campaign(client)
    attached(client, cid, BLESSING)
    fid, red = force(client, cid), force(client, cid, "Black Legion", "CHAOS")
    hero = {"keywords": ["IMPERIUM", "INFANTRY", "CHARACTER"]}
    captain = unit(client, fid, "Captain", **hero)["id"]
    other = unit(client, fid, "Lieutenant", **hero)["id"]
    buy = f"/api/v1/forces/{fid}/requisitions"
    trait = {"requisition": "warlord_trait", "warlord_trait": "Rites of War"}
    before = dump(engine)
    assert_problem(client.post(buy, json={**trait, "card_id": captain}), 422, "requisition_timing")
    assert dump(engine) == before
    blessed = client.post(buy, json={"requisition": "saints_blessing", "card_id": captain})
    assert blessed.status_code == 201, blessed.text
    assert blessed.json()["details"]["promoted"] == [captain]
    assert_problem(client.post(buy, json={**trait, "card_id": other}), 422, "requisition_timing")
    taken = client.post(buy, json={**trait, "card_id": captain})
    assert taken.status_code == 201, taken.text
    [owed] = client.get(f"/api/v1/forces/{fid}/decisions").json()["items"]
    answer = {"category": "battle_trait", "entries": ["swift_and_agile"]}
    answered = client.post(f"/api/v1/decisions/{owed['id']}/answer", json=answer)
    assert answered.status_code == 200, answered.text
    foe = unit(client, red, "Legionaries", keywords=["CHAOS"])["id"]
    sides = [
        {"force_id": fid, "role": "attacker", "roster": [captain], "agendas": ["assassins"]},
        {"force_id": red, "role": "defender", "roster": [foe], "agendas": ["assassins"]},
    ]
    body = {"battle_size": "combat_patrol", "mission": "sweep_and_clear", "sides": sides}
    battle = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert battle.status_code == 201, battle.text
    scores = [{"force_id": fid, "victory_points": 20}, {"force_id": red, "victory_points": 5}]
    played = client.post(f"/api/v1/battles/{battle.json()['id']}/result", json={"sides": scores})
    assert played.status_code == 200, played.text
    relic = {"requisition": "relic", "card_id": captain, "relic": "Sword of Ages"}
    assert_problem(client.post(buy, json=relic), 422, "requisition_timing")


def test_the_campaign_rules_page_lists_everything_a_pack_adds(client: TestClient) -> None:
    cid = campaign(client)
    attached(client, cid, PILGRIMS)
    page = client.get(f"/campaigns/{cid}/rules").text
    for heading, entry in (
        ("Battle Traits", "Ash Walkers"),
        ("Weapon Enhancements", "Censer-blessed"),
        ("Psychic Fortitudes", "Embers of Faith"),
        ("Battle Scars", "Ash-choked"),
        ("Crusade Relics", "Censer of the Last Saint"),
    ):
        assert f"<h3>{heading}</h3>" in page and entry in page
    assert "melee weapons" in page and "<code>INFANTRY</code>" in page


def test_a_pack_requisition_that_heals_a_scar_asks_for_it_on_the_page(client: TestClient) -> None:
    """The Pilgrim's Miracle (spend 3 Fervour, shed a scar) on the force's Requisitions page:
    it asks which scar, as Repair and Recuperate does, and heals it."""
    world = pilgrim_world(client)
    scar = scar_owed(client, world)
    client.post(f"/api/v1/decisions/{scar['id']}/answer", json={"scar": "ash_choked"})
    blue, squad = world["blue"], world["squad"]["id"]
    client.post(f"/api/v1/forces/{blue}/requisitions", json={"requisition": "kindle_fervour"})
    page = client.get(f"/forces/{blue}/requisitions").text
    miracle = page.split('id="requisition-pilgrims_miracle"', 1)[1].split("</article>", 1)[0]
    assert f'value="{squad}/ash_choked"' in miracle and "Pilgrim Band: Ash-choked" in miracle
    bought = client.post(
        f"/forces/{blue}/requisitions",
        data={"requisition": "pilgrims_miracle", "card_scar": f"{squad}/ash_choked"},
        headers=with_csrf_header(client),
        follow_redirects=False,
    )
    assert bought.status_code == 303, bought.text
    assert client.get(f"/api/v1/cards/{squad}").json()["scars"] == []
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"] == {"fervour": 0}


def test_a_pack_requisition_adds_the_unit_the_buyer_names(
    client: TestClient, engine: Engine
) -> None:
    """add_unit with chosen: the buyer gives name, Power and keywords (the pack adds its
    own and the faction's); over the effect's most Power, or without a unit, refused and
    nothing changes; the Requisitions page asks for the unit."""
    cid = campaign(client)
    attached(client, cid, THRONG)
    fid = force(client, cid)
    before = dump(engine)
    for body, code in (
        ({"requisition": "raise_a_warband"}, "requisition_detail_missing"),
        (
            {"requisition": "raise_a_warband", "new_unit": {"name": "Ogryns", "power_rating": 9}},
            "power_rating_invalid",
        ),
    ):
        refused = client.post(f"/api/v1/forces/{fid}/requisitions", json=body)
        assert_problem(refused, 422, code)
        assert dump(engine) == before
    named = {"name": "Zealot Band", "power_rating": 4, "keywords": ["Zealot"]}
    bought = client.post(
        f"/api/v1/forces/{fid}/requisitions",
        json={"requisition": "raise_a_warband", "new_unit": named},
    )
    assert bought.status_code == 201, bought.text
    [band] = client.get(f"/api/v1/forces/{fid}").json()["cards"]
    assert (band["name"], band["power_rating"], band["keywords"]) == (
        "Zealot Band",
        4,
        ["IMPERIUM", "INFANTRY", "ZEALOT"],
    )
    page = client.get(f"/forces/{fid}/requisitions").text
    warband = page.split('id="requisition-raise_a_warband"', 1)[1].split("</article>", 1)[0]
    assert 'name="unit_name"' in warband and 'name="unit_power_rating"' in warband
    by_page = client.post(
        f"/forces/{fid}/requisitions",
        data={
            "requisition": "raise_a_warband",
            "unit_name": "Flagellants",
            "unit_power_rating": "3",
            "unit_keywords": "penitent",
        },
        headers=with_csrf_header(client),
        follow_redirects=False,
    )
    assert by_page.status_code == 303, by_page.text
    names = {c["name"]: c["keywords"] for c in client.get(f"/api/v1/forces/{fid}").json()["cards"]}
    assert names["Flagellants"] == ["IMPERIUM", "INFANTRY", "PENITENT"]


PILGRIMAGE = """
format: crusade-rule-pack/1
id: pilgrimage
name: Pilgrimage
version: "1"
requisitions:
  - id: relics_of_the_road
    name: Relics of the Road
    cost_rp: 1
    only_as_bonus: true
    summary: The victor's host finds supplies on the road; its Supply Limit grows by 10.
    effects: [{kind: change_supply_limit, amount: 10}]
missions:
  - id: the_road_home
    name: The Road Home
    battle_size: combat_patrol
    summary: Reach the far edge first.
    victor_bonus:
      - summary: The victor gains Relics of the Road.
        effect:
          kind: free_requisitions
          requisitions: [relics_of_the_road]
          mode: all
          target: force
"""


def test_a_victor_bonus_grants_a_pack_requisition_never_bought(
    client: TestClient, engine: Engine
) -> None:
    """A pack requisition marked only_as_bonus is refused (and greyed out, with the reason)
    as a purchase, and a pack mission's victor bonus grants it: any effect of the
    vocabulary can be a victor bonus this way."""
    cid = campaign(client)
    attached(client, cid, PILGRIMAGE)
    blue, _red, _battle = blue_wins_on(client, cid, "the_road_home")
    before = dump(engine)
    bought = client.post(
        f"/api/v1/forces/{blue}/requisitions", json={"requisition": "relics_of_the_road"}
    )
    assert_problem(bought, 422, "requisition_only_as_bonus")
    assert dump(engine) == before
    page = client.get(f"/forces/{blue}/requisitions").text
    shop = page.split('id="requisition-relics_of_the_road"', 1)[1].split("</article>", 1)[0]
    assert "Not now:" in shop and "victor bonus" in shop
    [bonus] = client.get(f"/api/v1/forces/{blue}/decisions").json()["items"]
    assert bonus["kind"] == "victor_bonus"
    answered = client.post(
        f"/api/v1/decisions/{bonus['id']}/answer",
        json={"requisitions": [{"requisition": "relics_of_the_road"}]},
    )
    assert answered.status_code == 200, answered.text
    host = client.get(f"/api/v1/forces/{blue}").json()
    assert (host["supply_limit"], host["requisition_points"]) == (60, 5)
