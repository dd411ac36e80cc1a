"""A rule pack's quests and named choices through the API (issue 38), on SQLite and
PostgreSQL: the Cinder Brood sets its Hunger and begins the Great Feast with a requisition,
two battles tally its steps (and a CHARACTER's automatic trial), a revert puts everything
back exactly; the force, the cards and the feed say so."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force, unit
from tests.api.test_rule_packs import attached

CULL = ["cull_the_hordes"]
BROOD = (Path(__file__).resolve().parents[2] / "examples/packs/cinder-brood.yaml").read_text()


def _battle(client: TestClient, cid: int, blue: int, red: int, mine: list[int], foe: int) -> int:
    body = {
        "battle_size": "combat_patrol",
        "mission": "sweep_and_clear",
        "sides": [
            {"force_id": blue, "role": "attacker", "roster": mine, "agendas": CULL},
            {"force_id": red, "role": "defender", "roster": [foe], "agendas": CULL},
        ],
    }
    mustered = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert mustered.status_code == 201, mustered.text
    return int(mustered.json()["id"])


def _quests(client: TestClient, path: str) -> list[tuple[Any, ...]]:
    found = client.get(f"/api/v1/{path}").json()["quests"]
    return [(q["quest"], q["state"], q["step"], q["tally"]) for q in found]


def test_a_quest_tallies_battles_and_a_revert_puts_it_back(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    attached(client, cid, BROOD)
    blue, red = force(client, cid, "Cinder Brood", "TYRANIDS"), force(client, cid)
    alpha = unit(client, blue, "Brood Alpha", keywords=["TYRANIDS", "INFANTRY", "CHARACTER"])
    brood = unit(client, blue, "Ash Gaunts", keywords=["TYRANIDS", "INFANTRY"])
    foe = unit(client, red, "Intercessors")["id"]
    rules = client.get(f"/api/v1/campaigns/{cid}/rules").json()
    assert [q["id"] for q in rules["quests"]] == ["great_feast", "alpha_trial"]
    assert [(t["id"], t["bearer"]) for t in rules["pack_warlord_traits"]] == [
        ("apex_hunger", "any_unit")
    ]

    bought = client.post(f"/api/v1/forces/{blue}/requisitions", json={"requisition": "crave_flesh"})
    assert bought.status_code in (200, 201), bought.text
    host = client.get(f"/api/v1/forces/{blue}").json()
    assert host["counters"] == {"biomass": 0, "hunger": 1}  # flesh; the quest is not a counter
    assert _quests(client, f"forces/{blue}") == [("great_feast", "under_way", 1, 0)]
    before = dump(engine)
    again = client.post(f"/api/v1/forces/{blue}/requisitions", json={"requisition": "crave_flesh"})
    assert again.status_code in (409, 422), again.text
    assert dump(engine) == before

    first = _battle(client, cid, blue, red, [alpha["id"], brood["id"]], foe)
    won = client.post(
        f"/api/v1/battles/{first}/result",
        json={
            "sides": [
                {
                    "force_id": blue,
                    "victory_points": 30,
                    "units": [{"card_id": alpha["id"], "destroyed_melee": 1}],
                },
                {
                    "force_id": red,
                    "victory_points": 10,
                    "units": [{"card_id": foe, "destroyed": True}],
                    "dice": [6],
                },
            ]
        },
    )
    assert won.status_code == 200, won.text
    # one enemy unit: Taste the Prey 1 of 3; the Alpha's own kill: First Kill done
    assert _quests(client, f"forces/{blue}") == [("great_feast", "under_way", 1, 1)]
    assert _quests(client, f"cards/{alpha['id']}") == [("alpha_trial", "under_way", 2, 0)]
    assert _quests(client, f"cards/{brood['id']}") == []  # not a CHARACTER
    card = client.get(f"/api/v1/cards/{alpha['id']}").json()
    assert card["counters"] == {}

    second = _battle(client, cid, blue, red, [alpha["id"]], foe)
    lost = client.post(
        f"/api/v1/battles/{second}/result",
        json={
            "sides": [
                {"force_id": blue, "victory_points": 5},
                {"force_id": red, "victory_points": 30},
            ]
        },
    )
    assert lost.status_code == 200, lost.text
    assert _quests(client, f"cards/{alpha['id']}") == [("alpha_trial", "under_way", 2, 1)]
    assert client.post(f"/api/v1/battles/{second}/revert").status_code == 200
    assert _quests(client, f"cards/{alpha['id']}") == [("alpha_trial", "under_way", 2, 0)]
    assert _quests(client, f"forces/{blue}") == [("great_feast", "under_way", 1, 1)]

    feed = client.get(f"/api/v1/campaigns/{cid}/events?limit=200").json()["items"]
    told = [
        (e["kind"], e["details"].get("quest"), e["details"].get("step"), e["details"].get("tally"))
        for e in feed
        if e["kind"].startswith("quest_")
    ]
    assert told == [
        ("quest_started", "great_feast", 1, 0),  # the requisition
        ("quest_progressed", "great_feast", 1, 1),  # the first battle
        ("quest_started", "alpha_trial", 1, 0),  # begun in its first battle
        ("quest_step_done", "alpha_trial", 2, 0),  # and its first step done at once
        ("quest_progressed", "alpha_trial", 2, 1),  # the second battle
        ("quest_put_back", "alpha_trial", 2, 0),  # its revert
    ]
    moved = [
        (e["details"]["counter"], e["details"]["before"], e["details"]["after"])
        for e in feed
        if e["kind"] == "counter_changed"
    ]
    assert moved == [("hunger", 0, 1)]  # the requisition's named choice; a quest's state never
    summaries = [e["summary"] for e in feed if e["kind"].startswith("quest_")]
    assert summaries[0].endswith("began The Great Feast (step 1 of 3, Taste the Prey: 0 of 3).")
    page = client.get(f"/campaigns/{cid}")
    assert page.status_code == 200


def test_a_quest_for_a_unit_needs_a_unit(client: TestClient, engine: Engine) -> None:
    text = BROOD.replace(
        "      - {kind: start_quest, quest: great_feast}",
        "      - {kind: start_quest, quest: alpha_trial}",
    )
    cid = campaign(client)
    refused = client.post(
        f"/api/v1/campaigns/{cid}/rule-packs",
        files={"file": ("brood.yaml", text.encode(), "application/yaml")},
    )
    assert_problem(refused, 422, "rule_pack_invalid")
    assert "requisitions[0].effects[1]" in refused.text


def test_the_website_shows_quests_and_the_choice(client: TestClient) -> None:
    cid = campaign(client)
    attached(client, cid, BROOD)
    blue = force(client, cid, "Cinder Brood", "TYRANIDS")
    shown = client.get(f"/forces/{blue}").text
    assert "Hunger: <strong>None yet</strong>" in shown
    client.post(f"/api/v1/forces/{blue}/requisitions", json={"requisition": "crave_flesh"})
    shown = client.get(f"/forces/{blue}").text
    assert "Hunger: <strong>Flesh</strong>" in shown
    quests = shown.split('data-testid="force-quests">')[1].split("</p>")[0]
    assert "<strong>The Great Feast</strong> (step 1 of 3: 0 of 3)" in quests
    rules = client.get(f"/campaigns/{cid}/rules").text
    assert "<h3>Quests</h3>" in rules and "Devour the Champions: 1 × enemy unit destroyed" in rules
    assert (
        "<strong>Hunger</strong> (the force): one of Flesh, Metal, Psyche, none at first." in rules
    )
    assert "<h3>Warlord Traits</h3>" in rules and "to any unit, CHARACTER or not" in rules


def test_an_update_that_drops_a_quest_under_way_needs_confirming(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    attached(client, cid, BROOD)
    blue = force(client, cid, "Cinder Brood", "TYRANIDS")
    client.post(f"/api/v1/forces/{blue}/requisitions", json={"requisition": "crave_flesh"})
    start = BROOD.index("  - id: great_feast")
    end = BROOD.index("  - id: alpha_trial")
    newer = (BROOD[:start] + BROOD[end:]).replace('version: "1.0"', 'version: "1.1"')
    newer = newer.replace("      - {kind: start_quest, quest: great_feast}\n", "")
    files = {"file": ("brood.yaml", newer.encode(), "application/yaml")}
    before = dump(engine)
    shown = client.post(f"/api/v1/campaigns/{cid}/rule-packs?preview=true", files=files)
    assert shown.status_code == 200, shown.text
    assert shown.json()["refusal"]["code"] == "rule_pack_update_breaks"
    assert "quest:great_feast" in shown.json()["refusal"]["detail"]
    refused = client.post(f"/api/v1/campaigns/{cid}/rule-packs", files=files)
    assert_problem(refused, 409, "rule_pack_update_breaks")
    assert dump(engine) == before


FED = BROOD.replace(
    "relics:\n",
    "  - id: feed_the_beast\n"
    "    name: Feed the Beast\n"
    "    cost_rp: 0\n"
    "    target: unit\n"
    "    summary: The beast gorges; it gains 6 XP.\n"
    "    effects: [{kind: add_xp, amount: 6}]\n"
    "relics:\n",
    1,
)


def test_the_warlord_trait_form_offers_a_packs_traits_to_any_unit_they_allow(
    client: TestClient, engine: Engine
) -> None:
    """Issue 38 (bearers) on the website: the Warlord Trait requisition, open after a rank,
    is offered for a MONSTER that is no CHARACTER because the Brood's Apex Hunger allows any
    unit; the form lists the pack's traits with who may take them, and takes one."""
    cid = campaign(client)
    attached(client, cid, FED)
    blue = force(client, cid, "Cinder Brood", "TYRANIDS")
    beast = unit(client, blue, "Ash Beast", 8, keywords=["TYRANIDS", "MONSTER"])["id"]
    gaunts = unit(client, blue, "Ash Gaunts", keywords=["TYRANIDS", "INFANTRY"])["id"]
    for card in (beast, gaunts):  # both reach Blooded: the Warlord Trait's window opens
        fed = client.post(
            f"/api/v1/forces/{blue}/requisitions",
            json={"requisition": "feed_the_beast", "card_id": card},
        )
        assert fed.status_code == 201, fed.text
    page = client.get(f"/forces/{blue}/requisitions").text
    offer = page.split('id="requisition-warlord_trait"')[1].split("</article>")[0]
    assert "Available now</strong> for Ash Beast." in offer  # the Gaunts: no MONSTER
    assert f'<option value="{beast}"' in offer and f'<option value="{gaunts}"' not in offer
    listed = offer.split('data-testid="pack-warlord-traits"')[1].split("</div>")[0]
    assert "<strong>Apex Hunger</strong>" in listed
    assert "(any unit, CHARACTER or not, that meets <code>MONSTER</code>)" in listed
    assert '<datalist id="pack-warlord-traits"><option value="Apex Hunger">' in offer
    # the Add-unit form's Warlord Trait field offers them too
    adding = client.get(f"/forces/{blue}/cards/new").text
    assert 'list="pack-warlord-traits"' in adding
    assert '<datalist id="pack-warlord-traits"><option value="Apex Hunger">' in adding

    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token is not None
    form = {"csrf_token": token.group(1), "requisition": "warlord_trait", "card_id": str(beast)}
    before = dump(engine)
    refused = client.post(
        f"/forces/{blue}/requisitions",
        data={**form, "warlord_trait": "Iron Will"},  # a core trait: for CHARACTERs only
        follow_redirects=False,
    )
    assert refused.status_code == 422, refused.text
    assert dump(engine) == before
    bought = client.post(
        f"/forces/{blue}/requisitions",
        data={**form, "warlord_trait": "Apex Hunger"},
        follow_redirects=False,
    )
    assert bought.status_code == 303, bought.text
    card = client.get(f"/api/v1/cards/{beast}").json()
    assert [(u["requisition"], u["detail"]) for u in card["upgrades"]] == [
        ("warlord_trait", "Apex Hunger")
    ]
