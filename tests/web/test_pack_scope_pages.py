"""Faction scope on the website (issue 47), on SQLite and PostgreSQL: a force made with its
army keywords on the campaign's form (a Crusade faction a pack adds offered there), the
keywords edited, the Rules page naming whom each scoped pack reaches, and each army offered
its own Agendas in the wizard."""

from __future__ import annotations

import html
from collections.abc import Callable

from sqlalchemy import Engine

from tests.api.helpers import dump
from tests.api.test_pack_scope_walkthrough import HOLDS, SISTERS
from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_wizard_pages import through_muster


def test_army_keywords_on_the_forms_and_whom_a_pack_reaches(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    orga = person("orga")
    cid = orga.api("POST", "/campaigns", json={"name": "The Sundered Reach"})["id"]
    for name, text in (("faith.yaml", SISTERS), ("grudges.yaml", HOLDS)):
        orga.api("POST", f"/campaigns/{cid}/rule-packs", files={"file": (name, text.encode())})
    page = html.unescape(orga.get(f"/campaigns/{cid}").text)
    assert '<option value="LEAGUES OF VOTANN"' in page
    assert "this campaign's rule packs are for ADEPTA SORORITAS, LEAGUES OF VOTANN" in page

    before = dump(engine)
    soup = {"name": "Soup", "crusade_faction": "IMPERIUM", "army_keywords": "Sisters of Soup"}
    refused = orga.post(f"/campaigns/{cid}/forces", soup)
    assert refused.status_code == 422 and "is not a faction keyword" in refused.text
    assert dump(engine) == before
    ember = {"name": "Ember", "crusade_faction": "IMPERIUM", "army_keywords": "adepta sororitas"}
    made = orga.post(f"/campaigns/{cid}/forces", ember)
    assert made.status_code == 303, made.text
    sisters = int(made.headers["location"].rsplit("/", 1)[1])
    assert "IMPERIUM Crusade force · ADEPTA SORORITAS" in orga.get(f"/forces/{sisters}").text
    hold = {"name": "Hold Kar", "crusade_faction": "LEAGUES OF VOTANN"}
    made = orga.post(f"/campaigns/{cid}/forces", hold)
    assert made.status_code == 303, made.text
    votann = int(made.headers["location"].rsplit("/", 1)[1])

    # The wizard offers each army the Agendas of its own rulebook.
    started = orga.post(f"/campaigns/{cid}/battles/new")
    base = started.headers["location"].removesuffix("/setup")
    setup = {"force_id": sisters, "opponent_id": votann, "role": "attacker"}
    rolled = orga.post(f"{base}/setup", {**setup, "battle_size": "combat_patrol", "action": "roll"})
    assert rolled.status_code == 303, rolled.text
    chips = orga.get(f"{base}/setup").text
    assert 'name="agendas_0" value="hymn_of_war"' in chips
    assert 'name="agendas_1" value="hymn_of_war"' not in chips
    assert 'name="agendas_1" value="cull_the_hordes"' in chips
    mission = {**setup, "battle_size": "combat_patrol", "mission": "sweep_and_clear"}
    picked = {**mission, "agendas_0": "hymn_of_war", "agendas_1": "hymn_of_war"}
    refused = orga.post(f"{base}/setup", {**picked, "action": "next"})
    assert refused.status_code == 422, refused.text
    assert "Hymn of War (rule pack acts_of_faith) is for ADEPTA SORORITAS forces" in html.unescape(
        refused.text
    )

    rules = html.unescape(orga.get(f"/campaigns/{cid}/rules").text)
    assert "For ADEPTA SORORITAS forces.</strong> Reaches: Ember; not Hold Kar" in rules
    assert "For LEAGUES OF VOTANN forces.</strong> Reaches: Hold Kar; not Ember" in rules

    edited = orga.post(f"/forces/{sisters}", {"name": "Ember", "army_keywords": ""})
    assert edited.status_code == 303, edited.text
    rules = html.unescape(orga.get(f"/campaigns/{cid}/rules").text)
    assert "Reaches: no force yet; not Ember, Hold Kar" in rules
    assert 'value="ADEPTA SORORITAS"' not in orga.get(f"/forces/{sisters}/edit").text


HALF = """
format: crusade-rule-pack/1
id: last_stand
name: Last Stand
version: "1"
factions: [IMPERIUM]
counters: [{id: grit, name: Grit, scope: card, max: 10}]
triggers:
  - {id: held, name: Held, when: below_half_strength, counter: grit, amount: 1, summary: s}
"""


def test_the_wizard_asks_below_half_strength_only_when_a_pack_reads_it(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    ruby, cid = world["ruby"], world["campaign_id"]
    base, _draft = through_muster(world)
    assert "a rule pack counts it" not in ruby.get(f"{base}/after").text
    orga = world["orga"]
    orga.api("POST", f"/campaigns/{cid}/rule-packs", files={"file": ("h.yaml", HALF.encode())})
    page = ruby.get(f"{base}/after").text
    assert page.count("Ended below Half-strength (a rule pack counts it)") == 6
