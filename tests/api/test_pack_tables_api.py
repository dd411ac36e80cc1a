"""A rule pack's own rolled tables through the API and the website (issue 38), on SQLite
and PostgreSQL: two packs attached (the Ashen Pilgrims and the Cinder Brood), a Battle Scar
and a Battle Honour rolled on the Brood's tables with entered dice, a refused choice that
changes nothing, and the tables offered in the decision's pack_entries."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, dump
from tests.api.test_rule_packs import attached, muster_with, pilgrim_world, result, scar_owed

BROOD = (Path(__file__).resolve().parents[2] / "examples/packs/cinder-brood.yaml").read_text()


def test_a_scar_is_rolled_on_a_pack_d33_table(client: TestClient, engine: Engine) -> None:
    world = pilgrim_world(client)
    attached(client, world["campaign"], BROOD)
    rules = client.get(f"/api/v1/campaigns/{world['campaign']}/rules").json()
    assert [(t["id"], t["dice"], t["chosen"]) for t in rules["pack_tables"]] == [
        ("brood_adaptations", "D6", False),
        ("brood_wounds", "D33", True),
    ]
    shown = client.get(f"/campaigns/{world['campaign']}/rules").text
    table = shown.split('data-testid="pack-table-brood_wounds"')[1].split("</table>")[0]
    assert "Brood Wounds" in table and "<td>31-33</td><td>Starving</td>" in table
    scar = scar_owed(client, world)
    tables = [e for e in scar["pack_entries"] if e["category"] == "table"]
    assert [(t["id"], t["table_of"], t["dice"]) for t in tables] == [
        ("brood_wounds", "battle_scar", "D33")
    ]
    assert tables[0]["results"][2] == {"low": 31, "high": 33, "entry": "starving"}
    page = client.get(f"/decisions/{scar['id']}")
    assert 'data-testid="pack-tables"' in page.text and "Brood Wounds (D33" in page.text

    before = dump(engine)
    wrong = client.post(
        f"/api/v1/decisions/{scar['id']}/answer", json={"table": "brood_wounds", "dice": [4, 1]}
    )
    assert_problem(wrong, 422, "dice_out_of_range")
    assert dump(engine) == before
    answered = client.post(
        f"/api/v1/decisions/{scar['id']}/answer", json={"table": "brood_wounds", "dice": [3, 2]}
    )
    assert answered.status_code == 200, answered.text
    squad = client.get(f"/api/v1/cards/{world['squad']['id']}").json()
    assert [(s["id"], s["name"], s["dice"]) for s in squad["scars"]] == [
        ("starving", "Starving", [[3, 3], [3, 2]])
    ]
    assert answered.json()["answer"]["rolled"] == [
        {"purpose": "a Battle Scar on Brood Wounds (tens)", "sides": 3, "value": 3},
        {"purpose": "a Battle Scar on Brood Wounds (units)", "sides": 3, "value": 2},
    ]


def test_a_battle_trait_is_rolled_on_a_pack_table_never_chosen(
    client: TestClient, engine: Engine
) -> None:
    world = pilgrim_world(client)
    attached(client, world["campaign"], BROOD)
    battle = muster_with(client, world, "bear_the_ashes")
    body = result(world, world["squad"]["id"], 2)
    body["sides"][0]["units"][0]["marked_for_greatness"] = True  # Blooded: a Battle Honour
    assert client.post(f"/api/v1/battles/{battle['id']}/result", json=body).status_code == 200
    pending = client.get(f"/api/v1/forces/{world['blue']}/decisions").json()["items"]
    [honour] = [d for d in pending if d["kind"] == "battle_honour"]
    offered = [(e["category"], e["id"]) for e in honour["pack_entries"]]
    assert ("table", "brood_adaptations") in offered
    assert ("battle_trait", "ember_hide") not in offered  # on a rolled table: never chosen

    before = dump(engine)
    chosen = client.post(
        f"/api/v1/decisions/{honour['id']}/answer",
        json={"category": "battle_trait", "entries": ["ember_hide"]},
    )
    assert_problem(chosen, 422, "pack_entry_rolled")
    assert dump(engine) == before
    rolled = client.post(
        f"/api/v1/decisions/{honour['id']}/answer",
        json={"category": "battle_trait", "table": "brood_adaptations", "dice": [3]},
    )
    assert rolled.status_code == 200, rolled.text
    squad = client.get(f"/api/v1/cards/{world['squad']['id']}").json()
    assert [([e["id"] for e in h["entries"]], h["dice"]) for h in squad["honours"]] == [
        (["ash_lungs"], [[6, 3]])
    ]


def test_a_relic_a_unit_that_is_no_character_may_bear(client: TestClient, engine: Engine) -> None:
    """Issue 38 (bearers): the Brood's Cinder Crown, here for INFANTRY, is offered to the
    Pilgrims' squad (no CHARACTER) and taken; the Pilgrims' own relic stays for CHARACTERs."""
    world = pilgrim_world(client)
    crown = BROOD.replace("eligible: (MONSTER or SYNAPSE) and not CHARACTER", "eligible: INFANTRY")
    attached(client, world["campaign"], crown)
    battle = muster_with(client, world, "bear_the_ashes")
    body = result(world, world["squad"]["id"], 2)
    body["sides"][0]["units"][0]["marked_for_greatness"] = True  # Blooded: a Battle Honour
    assert client.post(f"/api/v1/battles/{battle['id']}/result", json=body).status_code == 200
    pending = client.get(f"/api/v1/forces/{world['blue']}/decisions").json()["items"]
    [honour] = [d for d in pending if d["kind"] == "battle_honour"]
    relics = [e["id"] for e in honour["pack_entries"] if e["category"] == "crusade_relic"]
    assert relics == ["cinder_crown"]
    page = client.get(f"/decisions/{honour['id']}")
    assert 'value="crusade_relic"' in page.text
    taken = client.post(
        f"/api/v1/decisions/{honour['id']}/answer",
        json={"category": "crusade_relic", "entries": ["cinder_crown"]},
    )
    assert taken.status_code == 200, taken.text
    squad = client.get(f"/api/v1/cards/{world['squad']['id']}").json()
    assert [[e["id"] for e in h["entries"]] for h in squad["honours"]] == [["cinder_crown"]]
