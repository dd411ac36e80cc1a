"""The Crusade card page: the paper card's facts, the XP bar, honours and scars in words, the
unit's battle history, narrative edits and the print layout."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from markupsafe import escape
from sqlalchemy import Engine

from app.rules.data import UnitType, rulebook
from tests.api.helpers import dump
from tests.api.test_query_counts import statements
from tests.web.conftest import Browser, campaign_with_two_players


def units(browser: Browser, force_id: int) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in browser.api("GET", f"/forces/{force_id}")["cards"]}


def fight_a_battle(world: dict[str, Any], settle: bool = True) -> dict[str, Any]:
    """Ruby beats Kai in a Combat Patrol (Sweep and Clear). Ruby's Captain earns 6 XP and
    reaches Blooded (taking Inspiring Hero); Kai's Captain fails its Out of Action test and
    takes Deep Scars (unless ``settle`` is False: then their decisions stay pending).
    Returns both forces' cards by name."""
    orga = world["orga"]
    ruby, kai = units(orga, world["ruby_force"]), units(orga, world["kai_force"])
    battle = orga.api(
        "POST",
        f"/campaigns/{world['campaign_id']}/battles",
        json={
            "battle_size": "combat_patrol",
            "mission": "sweep_and_clear",
            "sides": [
                {
                    "force_id": world["ruby_force"],
                    "role": "attacker",
                    "roster": [c["id"] for c in ruby.values()],
                    "agendas": ["assassins"],
                    "warlord_card_id": ruby["Captain"]["id"],
                },
                {
                    "force_id": world["kai_force"],
                    "role": "defender",
                    "roster": [c["id"] for c in kai.values()],
                    "agendas": ["cull_the_hordes"],
                },
            ],
        },
    )
    orga.api(
        "POST",
        f"/battles/{battle['id']}/result",
        json={
            "sides": [
                {
                    "force_id": world["ruby_force"],
                    "victory_points": 60,
                    "units": [
                        {
                            "card_id": ruby["Captain"]["id"],
                            "destroyed_melee": 1,
                            "destroyed_ranged": 1,
                            "agenda_tallies": {"assassins": 1},
                            "marked_for_greatness": True,
                        }
                    ],
                },
                {
                    "force_id": world["kai_force"],
                    "victory_points": 40,
                    "units": [{"card_id": kai["Captain"]["id"], "destroyed": True}],
                    "dice": [1],
                },
            ]
        },
    )
    if not settle:
        return {"battle": battle}
    for decision in orga.api("GET", f"/forces/{world['ruby_force']}/decisions")["items"]:
        if decision["kind"] == "battle_honour":
            answer = {"category": "battle_trait", "entries": ["inspiring_hero"]}
            orga.api("POST", f"/decisions/{decision['id']}/answer", json=answer)
    blow = orga.api("GET", f"/forces/{world['kai_force']}/decisions")["items"][0]
    orga.api("POST", f"/decisions/{blow['id']}/answer", json={"consequence": "battle_scar"})
    scar = orga.api("GET", f"/forces/{world['kai_force']}/decisions")["items"][0]
    orga.api("POST", f"/decisions/{scar['id']}/answer", json={"scar": "deep_scars"})
    return {
        "battle": battle,
        "ruby": units(orga, world["ruby_force"]),
        "kai": units(orga, world["kai_force"]),
    }


def test_a_fresh_card_shows_its_facts_and_the_xp_bar_to_the_next_rank(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    captain = units(world["ruby"], world["ruby_force"])["Captain"]
    page = world["ruby"].get(f"/cards/{captain['id']}")
    assert page.status_code == 200
    book = rulebook()
    first, second = book.ranks[0], book.ranks[1]
    assert "<h1>Captain</h1>" in page.text
    assert f"0 XP — {second.min_xp} to {second.name}" in page.text
    assert f'value="0" max="{second.min_xp}"' in page.text
    assert first.name in page.text
    assert "CHARACTER, IMPERIUM, INFANTRY" in page.text
    assert "Crusade faction IMPERIUM" in page.text
    assert "This unit has not fought yet." in page.text
    assert 'href="/cards/{}/print"'.format(captain["id"]) in page.text


def test_after_a_battle_the_card_shows_rank_honours_and_history(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    fought = fight_a_battle(world)
    captain = fought["ruby"]["Captain"]
    assert (captain["xp"], captain["rank"]) == (6, "blooded")
    page = world["kai"].get(f"/cards/{captain['id']}")  # any member may read it
    assert page.status_code == 200
    book = rulebook()
    blooded, hardened = book.rank("blooded"), book.rank("battle_hardened")
    assert f"6 XP — {hardened.min_xp - 6} to {hardened.name}" in page.text
    assert f"<strong>{blooded.name}</strong>" in page.text
    trait = book.honours.battle_traits[UnitType.CHARACTER].entry("inspiring_hero")
    assert trait.name in page.text and str(escape(trait.summary)) in page.text
    history = page.text.split('id="history-h"')[1]
    assert book.mission("sweep_and_clear").name in history
    assert "Victory" in history and "against Waaagh! Gorbad" in history
    assert "Marked for Greatness" in history and "Warlord of the army" in history
    assert f"Promoted to {blooded.name}" in history
    assert "Agendas: Assassins 1" in history
    assert "+6 XP" in history
    assert "Destroyed 2 enemy units" in history


def test_a_scarred_unit_shows_the_scar_in_words_and_its_failed_test(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    fought = fight_a_battle(world)
    captain = fought["kai"]["Captain"]
    page = world["kai"].get(f"/cards/{captain['id']}")
    scar = rulebook().scars.battle_scars[UnitType.CHARACTER].entry("deep_scars")
    assert scar.name in page.text and str(escape(scar.summary)) in page.text
    assert captain["crusade_points"] == -1
    assert "<span>Crusade points</span><strong>-1</strong>" in page.text
    history = page.text.split('id="history-h"')[1]
    assert "Defeat" in history
    assert "Was destroyed; Out of Action test failed (rolled 1)" in history


def test_the_print_layout_is_the_card_alone(person: Callable[[str], Browser]) -> None:
    world = campaign_with_two_players(person)
    fought = fight_a_battle(world)
    captain = fought["ruby"]["Captain"]
    page = world["ruby"].get(f"/cards/{captain['id']}/print")
    assert page.status_code == 200
    assert 'class="crusade-card"' in page.text and "Inspiring Hero" in page.text
    assert "Battle history" not in page.text
    assert f'action="/cards/{captain["id"]}"' not in page.text
    every = world["ruby"].get(f"/forces/{world['ruby_force']}/print")
    assert every.text.count('class="crusade-card"') == 3


def test_the_owner_edits_the_name_and_narrative(person: Callable[[str], Browser]) -> None:
    world = campaign_with_two_players(person)
    squad = units(world["ruby"], world["ruby_force"])["Intercessor Squad"]
    form = {"name": "Squad Vorn", "narrative": "Held the line at Hive Hyperia."}
    saved = world["ruby"].post(f"/cards/{squad['id']}", form)
    assert saved.status_code == 303 and saved.headers["location"] == f"/cards/{squad['id']}"
    page = world["ruby"].get(f"/cards/{squad['id']}")
    assert "<h1>Squad Vorn</h1>" in page.text and "Held the line at Hive Hyperia." in page.text
    assert "Split unit:" not in page.text
    # A part of a split unit (issue 20): the label shows as a badge and stays editable.
    world["ruby"].post(f"/cards/{squad['id']}", {**form, "split_unit": "Attack Bike Squadron"})
    page = world["ruby"].get(f"/cards/{squad['id']}")
    assert "Split unit: Attack Bike Squadron" in page.text
    assert 'name="split_unit"' in page.text
    assert world["ruby"].api("GET", f"/cards/{squad['id']}")["split_unit"] == (
        "Attack Bike Squadron"
    )


def test_a_split_unit_that_fought_is_shown_fixed_and_stays_linked(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    """Issue 36 (ruling 50): the card page links parts of a split unit until they fight;
    afterwards the field is read-only and a sneaked change is refused, naming the rule."""
    world = campaign_with_two_players(person)
    ruby, force = world["ruby"], world["ruby_force"]
    squad = units(ruby, force)["Intercessor Squad"]
    form = {"name": "Intercessor Squad", "narrative": ""}
    assert ruby.post(f"/cards/{squad['id']}", {**form, "split_unit": "Pair"}).status_code == 303
    fight_a_battle(world)
    page = ruby.get(f"/cards/{squad['id']}").text
    assert "has fought a battle" in page and "readonly" in page
    before = dump(engine)
    sneaked = ruby.post(f"/cards/{squad['id']}", {**form, "split_unit": ""})
    assert sneaked.status_code == 422 and 'data-code="split_unit_fixed"' in sneaked.text
    assert dump(engine) == before
    kept = ruby.post(f"/cards/{squad['id']}", {**form, "split_unit": "Pair", "narrative": "Won."})
    assert kept.status_code == 303


def test_a_refused_edit_keeps_the_story_and_changes_nothing(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    squad = units(world["ruby"], world["ruby_force"])["Intercessor Squad"]
    before = dump(engine)
    refused = world["ruby"].post(
        f"/cards/{squad['id']}", {"name": "  ", "narrative": "A story worth keeping"}
    )
    assert refused.status_code == 422
    assert 'role="alert"' in refused.text and "Name is needed." in refused.text
    assert "A story worth keeping" in refused.text
    assert dump(engine) == before


def test_another_player_cannot_edit_a_card(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    squad = units(world["ruby"], world["ruby_force"])["Intercessor Squad"]
    assert "Edit name and narrative" not in world["kai"].get(f"/cards/{squad['id']}").text
    before = dump(engine)
    refused = world["kai"].post(f"/cards/{squad['id']}", {"name": "Grots", "narrative": ""})
    assert refused.status_code == 403 and "Not allowed" in refused.text
    assert dump(engine) == before


def test_a_private_campaign_card_needs_a_login(
    person: Callable[[str], Browser], site: TestClient
) -> None:
    world = campaign_with_two_players(person)
    squad = units(world["ruby"], world["ruby_force"])["Intercessor Squad"]
    asked = site.get(f"/cards/{squad['id']}", follow_redirects=False)
    assert asked.status_code == 303 and asked.headers["location"].startswith("/login")
    assert site.get("/cards/99999").status_code == 404


def test_a_pack_scar_is_offered_on_the_decision_page_and_taken(
    person: Callable[[str], Browser],
) -> None:
    """Ruling 58: the Battle Scar decision offers the pack's scars the unit may take, after
    the core table, and the card then shows the chosen one."""
    world = campaign_with_two_players(person)
    orga = world["orga"]
    pack = (Path(__file__).resolve().parents[2] / "examples/packs/ashen-pilgrims.yaml").read_bytes()
    orga.api(
        "POST", f"/campaigns/{world['campaign_id']}/rule-packs", files={"file": ("p.yaml", pack)}
    )
    fight_a_battle(world, settle=False)
    test = orga.api("GET", f"/forces/{world['kai_force']}/decisions")["items"][0]
    orga.api("POST", f"/decisions/{test['id']}/answer", json={"consequence": "battle_scar"})
    scar = orga.api("GET", f"/forces/{world['kai_force']}/decisions")["items"][0]
    page = orga.get(f"/decisions/{scar['id']}").text
    offered = page.split('data-testid="pack-scars"', 1)[1]
    assert 'name="scar" value="ash_choked"' in offered and "Ash-choked" in offered
    taken = orga.post(f"/decisions/{scar['id']}/answer", {"scar": "ash_choked"})
    assert taken.status_code == 303, taken.text
    captain = units(orga, world["kai_force"])["Captain"]
    assert [s["name"] for s in captain["scars"]] == ["Ash-choked"]
    assert "Ash-choked" in orga.get(f"/cards/{captain['id']}").text


def test_the_owners_card_page_reads_the_same_whatever_the_force_holds(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    """Issue 36: the split unit's lock reads the card's own split unit and the rosters of
    battles under way, never the whole Order of Battle."""
    world = campaign_with_two_players(person)
    ruby, force = world["ruby"], world["ruby_force"]
    squad = units(ruby, force)["Intercessor Squad"]
    form = {"name": "Intercessor Squad", "narrative": ""}
    assert ruby.post(f"/cards/{squad['id']}", {**form, "split_unit": "Pair"}).status_code == 303
    url = f"/cards/{squad['id']}"
    small = statements(engine, lambda: ruby.get(url))
    for n in range(8):
        ruby.api(
            "POST",
            f"/forces/{force}/cards",
            json={"name": f"Squad {n}", "power_rating": 1, "keywords": ["IMPERIUM"]},
        )
    assert statements(engine, lambda: ruby.get(url)) == small
