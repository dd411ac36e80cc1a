"""The battle wizard asks which enemy units a unit destroyed (issue 47, ruling 86) only when
a rule pack of its army counts a unit's kills by the enemy's keyword; what is ticked is
sent as the unit's ``destroyed_enemies`` and moves the pack's counter for that unit."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient

from tests.api.helpers import campaign, force, unit
from tests.api.test_rule_packs import attached
from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_wizard_pages import script_post, setup_form, start, units

TROPHIES = b"""
format: crusade-rule-pack/1
id: trophy_hunters
name: Trophy Hunters
version: "1"
counters:
  - {id: trophies, name: Trophies, scope: card, start: 0, min: 0, max: 20}
triggers:
  - id: monster_trophies
    name: Monster Trophies
    when: enemy_unit_destroyed
    keywords_any: [MONSTER]
    counter: trophies
    amount: 1
    summary: Each MONSTER the unit slays is a trophy.
"""


def _mustered(world: dict[str, Any]) -> tuple[str, dict[str, int], int]:
    ruby, kai = world["ruby"], world["kai"]
    beast = kai.api(
        "POST",
        f"/forces/{world['kai_force']}/cards",
        json={"name": "Squiggoth", "power_rating": 8, "keywords": ["IMPERIUM", "MONSTER"]},
    )["id"]
    base, _draft = start(world)
    assert ruby.post(f"{base}/setup", setup_form(world, action="next")).status_code == 303
    mine, theirs = units(ruby, world["ruby_force"]), units(kai, world["kai_force"])
    done = ruby.post(
        f"{base}/muster",
        {"roster_0": list(mine.values()), "roster_1": list(theirs.values()), "action": "muster"},
    )
    assert done.status_code == 303, done.text
    return base, mine, beast


def test_without_such_a_pack_the_wizard_does_not_ask(person: Callable[[str], Browser]) -> None:
    world = campaign_with_two_players(person)
    base, mine, _beast = _mustered(world)
    page = world["ruby"].get(f"{base}/after").text
    assert "Enemy units it destroyed" not in page
    assert 'data-testid="quarry-' not in page
    assert f'name="killed_{mine["Captain"]}"' not in page


def test_the_wizard_asks_for_named_kills_when_a_pack_reads_them(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    orga, ruby = world["orga"], world["ruby"]
    cid = world["campaign_id"]
    orga.api("POST", f"/campaigns/{cid}/rule-packs", files={"file": ("p.yaml", TROPHIES)})
    base, mine, beast = _mustered(world)
    captain = mine["Captain"]
    page = ruby.get(f"{base}/after").text
    assert f'data-testid="destroyed-enemies-{captain}"' in page
    assert f'name="killed_{captain}" value="{beast}"' in page
    assert f'name="killed_{captain}" value="{mine["Hellblasters"]}"' not in page  # own unit
    assert 'data-testid="quarry-' not in page  # the pack names no quarry

    script_post(ruby, f"{base}/after/bump", {"bump": f"{captain}:destroyed_melee:+1"})
    form = {
        "form": "after",
        "vp_0": "30",
        "vp_1": "20",
        "action": "review",
        f"killed_{captain}": str(beast),
    }
    assert ruby.post(f"{base}/after", form).status_code == 303
    assert f'name="killed_{captain}" value="{beast}" checked' in ruby.get(f"{base}/after").text
    submitted = ruby.post(f"{base}/review", {"action": "submit"})
    assert submitted.status_code == 303, submitted.text
    battle_id = int(submitted.headers["location"].rsplit("/", 1)[1])
    assert world["kai"].post(f"/battles/{battle_id}/confirm").status_code == 303
    report = ruby.api("GET", f"/battles/{battle_id}")
    assert report["status"] == "resolved"
    card = ruby.api("GET", f"/cards/{captain}")
    assert card["counters"]["trophies"] == 1
    other = ruby.api("GET", f"/cards/{mine['Intercessor Squad']}")
    assert other["counters"].get("trophies", 0) == 0


QUARRY = b"""
format: crusade-rule-pack/1
id: the_hunt
name: The Hunt
version: "1"
counters:
  - {id: glory, name: Glory, scope: force, start: 0, min: 0, max: 20}
triggers:
  - {id: hunted, name: Hunted, when: quarry_destroyed, counter: glory, amount: 3, summary: s}
"""


def test_the_wizard_asks_a_quarry_when_a_pack_reads_it(person: Callable[[str], Browser]) -> None:
    world = campaign_with_two_players(person)
    orga, ruby = world["orga"], world["ruby"]
    cid = world["campaign_id"]
    orga.api("POST", f"/campaigns/{cid}/rule-packs", files={"file": ("p.yaml", QUARRY)})
    base, mine, beast = _mustered(world)
    captain = mine["Captain"]
    page = ruby.get(f"{base}/after").text
    assert f'data-testid="quarry-{captain}"' in page
    assert f'name="killed_{captain}" value="{beast}"' in page  # the kills that tell it
    script_post(ruby, f"{base}/after/bump", {"bump": f"{captain}:destroyed_melee:+1"})
    form = {
        "form": "after",
        "vp_0": "30",
        "vp_1": "20",
        "action": "review",
        f"killed_{captain}": str(beast),
        f"quarry_{captain}": str(beast),
    }
    assert ruby.post(f"{base}/after", form).status_code == 303
    assert f'<option value="{beast}" selected>' in ruby.get(f"{base}/after").text
    submitted = ruby.post(f"{base}/review", {"action": "submit"})
    assert submitted.status_code == 303, submitted.text
    battle_id = int(submitted.headers["location"].rsplit("/", 1)[1])
    assert world["kai"].post(f"/battles/{battle_id}/confirm").status_code == 303
    assert ruby.api("GET", f"/forces/{world['ruby_force']}")["counters"]["glory"] == 3


def test_a_units_card_says_its_counter_counts_named_kills_by_keyword(client: TestClient) -> None:
    cid = campaign(client)
    attached(client, cid, TROPHIES.decode())
    squad = unit(client, force(client, cid))["id"]  # no MONSTER itself
    card = html.unescape(client.get(f"/cards/{squad}").text)
    counters = card.split('data-testid="card-counters"')[1].split("</ul>")[0]
    said = "Trophies 0 (0 to 20): +1 per enemy unit it destroys (MONSTER, when its kills are named)"
    assert said in counters
