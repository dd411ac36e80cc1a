"""A rule pack's own rolled tables through the API and the website (issue 38), on SQLite
and PostgreSQL: two packs attached (the Ashen Pilgrims and the Cinder Brood), a Battle Scar
and a Battle Honour rolled on the Brood's tables with entered dice, a refused choice that
changes nothing, and the tables offered in the decision's pack_entries."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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


FORGE = """\
format: crusade-rule-pack/1
id: scrap_forge
name: Scrap Forge
version: "1"
weapon_enhancements:
  - {id: spiked_grip, name: Spiked Grip, weapon_type: melee, summary: Add 1 to hit in a charge.}
  - {id: jury_rigged_barrel, name: Jury-rigged Barrel, weapon_type: ranged, summary: Add 6" range.}
  - {id: welded_sights, name: Welded Sights, summary: Re-roll one hit roll of 1 with it each phase.}
tables:
  - id: forge_table
    name: Forge Table
    category: weapon_enhancement
    dice: D6
    summary: Roll a D6 when a unit's weapon is enhanced.
    results:
      - {roll: "1-2", entry: spiked_grip}
      - {roll: "3-4", entry: jury_rigged_barrel}
      - {roll: "5-6", entry: welded_sights}
"""


def _honour_owed(client: TestClient, world: dict[str, Any]) -> dict[str, Any]:
    """The squad reaches Blooded (Marked for Greatness and two Agenda marks): the Battle
    Honour it then owes."""
    battle = muster_with(client, world, "bear_the_ashes")
    body = result(world, world["squad"]["id"], 2)
    body["sides"][0]["units"][0]["marked_for_greatness"] = True
    assert client.post(f"/api/v1/battles/{battle['id']}/result", json=body).status_code == 200
    pending = client.get(f"/api/v1/forces/{world['blue']}/decisions").json()["items"]
    [honour] = [d for d in pending if d["kind"] == "battle_honour"]
    return dict(honour)


def _enhancements(client: TestClient, card_id: int) -> list[tuple[Any, ...]]:
    card = client.get(f"/api/v1/cards/{card_id}").json()
    return [
        (h["weapon"], [e["id"] for e in h["entries"]], h["dice"])
        for h in card["honours"]
        if h["category"] == "weapon_enhancement"
    ]


def test_a_weapon_enhancement_is_rolled_on_a_pack_table(client: TestClient, engine: Engine) -> None:
    """Issue 38: a pack's Weapon Enhancement table through the JSON API. The decision lists
    it; an entry on it is never chosen by itself; a result for the other kind of weapon is
    rolled again (as one the unit holds); entered dice are used in order."""
    world = pilgrim_world(client)
    attached(client, world["campaign"], FORGE)
    rules = client.get(f"/api/v1/campaigns/{world['campaign']}/rules").json()
    assert [(t["id"], t["category"]) for t in rules["pack_tables"]] == [
        ("forge_table", "weapon_enhancement")
    ]
    honour = _honour_owed(client, world)
    [table] = [e for e in honour["pack_entries"] if e["category"] == "table"]
    assert (table["id"], table["table_of"], table["dice"], table["chosen"]) == (
        "forge_table",
        "weapon_enhancement",
        "D6",
        False,
    )
    assert [r["entry"] for r in table["results"]] == [
        "spiked_grip",
        "jury_rigged_barrel",
        "welded_sights",
    ]
    offered = {(e["category"], e["id"]) for e in honour["pack_entries"]}
    assert ("weapon_enhancement", "jury_rigged_barrel") not in offered  # rolled, never chosen
    assert ("weapon_enhancement", "censer_blessed") in offered  # the Pilgrims': on no table

    bolter = {"model": "Pilgrim", "weapon": "Bolter", "weapon_type": "ranged"}
    url = f"/api/v1/decisions/{honour['id']}/answer"
    before = dump(engine)
    chosen = client.post(
        url,
        json={
            "category": "weapon_enhancement",
            "entries": ["jury_rigged_barrel"],
            "weapon": bolter,
        },
    )
    assert_problem(chosen, 422, "pack_entry_rolled")
    unknown = client.post(
        url, json={"category": "weapon_enhancement", "table": "nowhere", "weapon": bolter}
    )
    assert_problem(unknown, 422, "pack_table_unknown")
    assert dump(engine) == before

    rolled = client.post(
        url,
        json={
            "category": "weapon_enhancement",
            "table": "forge_table",
            "dice": [2, 4],
            "weapon": bolter,
        },
    )
    assert rolled.status_code == 200, rolled.text
    assert rolled.json()["answer"]["rolled"] == [
        {"purpose": "a Weapon Enhancement on Forge Table", "sides": 6, "value": 2},
        {"purpose": "a Weapon Enhancement on Forge Table", "sides": 6, "value": 4},
    ]  # the 2 (Spiked Grip) is for a melee weapon: rolled again
    assert _enhancements(client, world["squad"]["id"]) == [
        ("Bolter", ["jury_rigged_barrel"], [[6, 2], [6, 4]])
    ]


def test_the_website_rolls_a_weapon_enhancement_on_a_pack_table(
    client: TestClient, engine: Engine
) -> None:
    """The decision page offers the pack's table beside the core's (the one-page form of
    every kind, and the page of one kind), and answers with the dice typed at the table."""
    world = pilgrim_world(client)
    attached(client, world["campaign"], FORGE)
    honour = _honour_owed(client, world)
    every_kind = client.get(f"/decisions/{honour['id']}").text
    fold = every_kind.split('data-kind-entries="weapon_enhancement"')[1].split("</details>")[0]
    assert 'name="table_weapon_enhancement" value="forge_table"' in fold
    assert "1–2: Spiked Grip · 3–4: Jury-rigged Barrel · 5–6: Welded Sights" in fold
    one_kind = client.get(
        f"/decisions/{honour['id']}?category=weapon_enhancement&weapon_type=ranged"
    ).text
    assert 'data-testid="pack-tables"' in one_kind and "Forge Table (D6)" in one_kind
    token = re.search(r'name="csrf_token" value="([^"]+)"', one_kind)
    assert token is not None

    before = dump(engine)
    refused = client.post(
        f"/decisions/{honour['id']}/answer",
        data={
            "csrf_token": token.group(1),
            "category": "weapon_enhancement",
            "weapon_type": "ranged",
            "weapon_model": "Pilgrim",
            "weapon_name": "Bolter",
            "table_weapon_enhancement": "forge_table",
            "dice_mode": "enter",
            "dice": "1 2",  # both melee results: the dice run out
        },
        follow_redirects=False,
    )
    assert refused.status_code == 422, refused.text
    assert dump(engine) == before
    answered = client.post(
        f"/decisions/{honour['id']}/answer",
        data={
            "csrf_token": token.group(1),
            "category": "weapon_enhancement",
            "weapon_type": "ranged",
            "weapon_model": "Pilgrim",
            "weapon_name": "Bolter",
            "table_weapon_enhancement": "forge_table",
            "dice_mode": "enter",
            "dice": "6",
        },
        follow_redirects=False,
    )
    assert answered.status_code == 303, answered.text
    assert _enhancements(client, world["squad"]["id"]) == [("Bolter", ["welded_sights"], [[6, 6]])]


def test_a_scar_chosen_with_its_out_of_action_test_rolls_on_the_pack_table(
    client: TestClient, engine: Engine
) -> None:
    """Issue 40 put the Battle Scar on the Out of Action test's page; the pack's table there
    is rolled with the dice typed at the table (it was ignored: the core's table was rolled)."""
    world = pilgrim_world(client)
    attached(client, world["campaign"], BROOD)
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
    assert client.post(f"/api/v1/battles/{battle['id']}/result", json=falls).status_code == 200
    [test] = client.get(f"/api/v1/forces/{world['blue']}/decisions").json()["items"]
    page = client.get(f"/decisions/{test['id']}").text
    assert 'data-testid="pack-tables"' in page
    assert "11–13: Burned Out · 21–23: Brittle Carapace · 31–33: Starving" in page
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token is not None
    answered = client.post(
        f"/decisions/{test['id']}/answer",
        data={
            "csrf_token": token.group(1),
            "consequence": "battle_scar",
            "scar": "",
            "table": "brood_wounds",
            "dice_mode": "enter",
            "dice": "2 1",
        },
        follow_redirects=False,
    )
    assert answered.status_code == 303, answered.text
    squad = client.get(f"/api/v1/cards/{world['squad']['id']}").json()
    assert [(s["id"], s["dice"]) for s in squad["scars"]] == [
        ("brittle_carapace", [[3, 2], [3, 1]])
    ]


def test_the_website_picks_a_result_of_a_table_players_choose_from(
    client: TestClient, engine: Engine
) -> None:
    """The Brood Wounds table says `chosen: true`: its scars are offered to tick, and a
    tick with the table picks that result, no die thrown."""
    world = pilgrim_world(client)
    attached(client, world["campaign"], BROOD)
    scar = scar_owed(client, world)
    page = client.get(f"/decisions/{scar['id']}").text
    offered = page.split('data-testid="pack-scars"')[1].split("</fieldset>")[0]
    assert 'name="scar" value="starving"' in offered  # on a table players may choose from
    assert "Brood Wounds (D33; or tick one of its results above)" in page
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token is not None
    answered = client.post(
        f"/decisions/{scar['id']}/answer",
        data={"csrf_token": token.group(1), "scar": "starving", "table": "brood_wounds"},
        follow_redirects=False,
    )
    assert answered.status_code == 303, answered.text
    squad = client.get(f"/api/v1/cards/{world['squad']['id']}").json()
    assert [(s["id"], s["dice"]) for s in squad["scars"]] == [("starving", [])]
