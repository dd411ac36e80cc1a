"""Import a roster through the pages: upload, preview with tick boxes, add."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from tests.api.helpers import dump
from tests.services.rosters.test_roster_parse import TINY
from tests.web.conftest import Browser, campaign_with_two_players

ROSTERS = Path(__file__).parents[1] / "fixtures" / "rosters"
DARK_ANGELS = (ROSTERS / "dark_angels_two_patrols.rosz").read_bytes()
CARRIED = re.compile(r'name="roster" value="([^"]+)"')
UNIT_BOX = re.compile(r'name="units" value="([0-9.]+)" checked')


def upload(who: Browser, force_id: int, data: bytes, name: str = "army.rosz") -> Any:
    return who.post(
        f"/forces/{force_id}/roster/preview", files={"file": (name, data, "application/zip")}
    )


def test_upload_preview_tick_and_add(person: Callable[[str], Browser], engine: Engine) -> None:
    world = campaign_with_two_players(person)
    ruby, force_id = world["ruby"], world["ruby_force"]
    assert f'href="/forces/{force_id}/roster"' in ruby.get(f"/forces/{force_id}").text
    assert "Import roster" not in world["kai"].get(f"/forces/{force_id}").text
    assert ruby.get(f"/forces/{force_id}/roster").status_code == 200
    before = dump(engine)
    shown = upload(ruby, force_id, DARK_ANGELS)
    assert shown.status_code == 200, shown.text
    page = shown.text
    assert dump(engine) == before  # the preview changes nothing
    keys = UNIT_BOX.findall(page)
    assert len(keys) == 4 and "Azrael" in page and "Primaris Lieutenant" in page
    totals = re.sub(r"\s+", " ", page.split('data-testid="roster-totals">')[1].split("</p>")[0])
    assert (
        "own total: <strong>28 PL</strong> (540 points); read here: <strong>28 PL</strong>"
        in totals
    )
    carried = CARRIED.search(page)
    assert carried
    added = ruby.post(f"/forces/{force_id}/roster", {"roster": carried.group(1), "units": keys[:2]})
    assert added.status_code == 303, added.text
    assert added.headers["location"] == f"/forces/{force_id}?imported=2"
    landed = ruby.get(added.headers["location"]).text
    assert "2 units from the roster joined the Order of Battle." in landed
    points = re.findall(r"PR · (\d+) pts", landed)  # issue 25: the roster's points beside PR
    assert len(points) == 2 and all(int(p) > 0 for p in points)
    again = upload(ruby, force_id, DARK_ANGELS).text
    assert again.count("Already in the Order of Battle") == 2
    assert len(UNIT_BOX.findall(again)) == 2


def test_a_refusal_shows_in_place_and_changes_nothing(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    ruby, force_id = world["ruby"], world["ruby_force"]
    before = dump(engine)
    eighth = (ROSTERS / "imperial_knights_8th.ros").read_bytes()
    refused = upload(ruby, force_id, eighth, "knights.ros")
    assert refused.status_code == 422
    assert 'data-code="roster_wrong_game_system"' in refused.text
    page = upload(ruby, force_id, DARK_ANGELS).text
    carried = CARRIED.search(page)
    assert carried
    nothing = ruby.post(f"/forces/{force_id}/roster", {"roster": carried.group(1)})
    assert nothing.status_code == 422
    assert 'data-code="roster_nothing_chosen"' in nothing.text
    assert dump(engine) == before


def test_only_the_owner_may_import(person: Callable[[str], Browser]) -> None:
    world = campaign_with_two_players(person)
    refused = upload(world["kai"], world["ruby_force"], DARK_ANGELS)
    assert refused.status_code == 403


def hellblasters(power: str, models: int = 0) -> bytes:
    """A one-unit Imperium roster (TINY, renamed) at ``power``, with ``models`` models."""
    data = (
        TINY.replace(b"Necron Warriors", b"Hellblaster Squad")
        .replace(b"Faction: Necrons", b"Faction: Imperium")
        .replace(b'value="6.0"', f'value="{power}"'.encode())
    )
    if models:
        model = f'<selections><selection name="Hellblaster" type="model" number="{models}"/>'
        data = data.replace(b"</categories>", b"</categories>" + model.encode() + b"</selections>")
    return data


def test_a_newer_roster_updates_a_card_through_fresh_recruits(
    person: Callable[[str], Browser],
) -> None:
    """Ruling 52 on the page: the changes are listed, and a tick buys the Requisition."""
    world = campaign_with_two_players(person)
    ruby, force_id = world["ruby"], world["ruby_force"]
    first = CARRIED.search(upload(ruby, force_id, hellblasters("6.0"), "a.ros").text)
    assert first
    added = ruby.post(f"/forces/{force_id}/roster", {"roster": first.group(1), "units": ["1.1"]})
    assert added.status_code == 303, added.text
    page = upload(ruby, force_id, hellblasters("12.0", models=10), "b.ros").text
    changes = re.sub(r"\s+", " ", page.split('data-testid="changes-1.1">')[1].split("</div>")[0])
    assert "Power Rating: <s>6</s> → <strong>12</strong>" in changes
    assert "Models and wargear: <s>none</s> → <strong>10x Hellblaster</strong>" in changes
    assert 'name="update" value="1.1"' in changes and "Fresh Recruits (1 RP)" in changes
    assert "Update the ticked cards" in page
    carried = CARRIED.search(page)
    assert carried
    updated = ruby.post(f"/forces/{force_id}/roster", {"roster": carried.group(1), "update": "1.1"})
    assert updated.status_code == 303, updated.text
    assert updated.headers["location"] == f"/forces/{force_id}?imported=0&updated=1"
    assert "1 card brought up to the roster." in ruby.get(updated.headers["location"]).text
    cards = ruby.api("GET", f"/forces/{force_id}")["cards"]
    squad = next(c for c in cards if c["name"] == "Hellblaster Squad")
    assert (squad["power_rating"], squad["wargear"]) == (12, "10x Hellblaster")


def test_a_roster_total_that_is_out_of_date_is_said(person: Callable[[str], Browser]) -> None:
    """The Psychomancer roster's own total is 27 PL for one 4 PL unit: the preview says the
    23 PL are on nothing in the file, not that they are detachment options."""
    world = campaign_with_two_players(person)
    data = (ROSTERS / "necrons_psychomancer.rosz").read_bytes()
    page = upload(world["ruby"], world["ruby_force"], data).text
    totals = re.sub(r"\s+", " ", page.split('data-testid="roster-totals">')[1].split("</p>")[0])
    assert "The other 23 PL are in the file's total but on nothing in it" in totals
    assert "detachment or army options" not in totals


def test_a_roster_total_below_what_its_units_hold_is_said_without_a_negative(
    person: Callable[[str], Browser],
) -> None:
    """A file whose own total (4 PL) is below its one 6 PL unit: the preview says the units
    hold 2 PL more (it used to print "The other -2 PL"), and how the costs were read."""
    world = campaign_with_two_players(person)
    data = hellblasters("6.0").replace(
        b"<forces>", b'<costs><cost name=" PL" value="4.0"/></costs><forces>', 1
    )
    page = upload(world["ruby"], world["ruby_force"], data).text
    totals = re.sub(r"\s+", " ", page.split('data-testid="roster-totals">')[1].split("</p>")[0])
    assert "The units hold 2 PL more than the file's total" in totals
    assert "-2" not in totals and "The other" not in totals
    assert "Costs read as BattleScribe writes them" in totals
