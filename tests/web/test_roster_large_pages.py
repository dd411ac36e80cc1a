"""Issue 39: the roster pages tried as a new player would with a large real roster (a
2,000-point Blood Angels list, its .ros 370,448 bytes: SOURCES.md): previewed, every unit
ticked, refused in place for the Supply Limit, a few unticked, added; and a roster with a
unit the file gets wrong."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import Engine

from tests.api.helpers import dump
from tests.api.test_roster_large import BLOOD_ANGELS
from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_roster_pages import CARRIED, UNIT_BOX, upload

CONSTRUCTED = Path(__file__).parents[1] / "fixtures" / "rosters" / "constructed"
VALKYRIES = (CONSTRUCTED / "astra_militarum_valkyries.ros").read_bytes()


def test_a_large_real_roster_previews_and_adds_through_the_pages(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    ruby, force_id = world["ruby"], world["ruby_force"]  # 16 of its 50 PL used
    shown = upload(ruby, force_id, BLOOD_ANGELS, name="BA 2000 - Standard.ros")
    assert shown.status_code == 200, shown.text
    page = shown.text
    keys = UNIT_BOX.findall(page)
    assert len(keys) == 12 and "1 detachment." in page
    assert "Sanguinary Guard" in page and "Primaris Techmarine" in page
    totals = re.sub(r"\s+", " ", page.split('data-testid="roster-totals">')[1].split("</p>")[0])
    assert "own total: <strong>106 PL</strong> (2000 points); read here: <strong>106 PL" in totals
    carried = CARRIED.search(page)
    assert carried
    before = dump(engine)
    everything = ruby.post(
        f"/forces/{force_id}/roster", {"roster": carried.group(1), "units": keys}
    )
    assert everything.status_code == 422
    assert 'data-code="supply_limit_exceeded"' in everything.text
    assert dump(engine) == before
    fits = ["1.3", "1.7", "1.9"]  # Sanguinary Guard 17, Death Company Dreadnought 7, 5: 29 PL
    added = ruby.post(f"/forces/{force_id}/roster", {"roster": carried.group(1), "units": fits})
    assert added.status_code == 303, added.text
    assert added.headers["location"] == f"/forces/{force_id}?imported=3"
    landed = ruby.get(added.headers["location"]).text
    assert "3 units from the roster joined the Order of Battle." in landed
    assert "Death Company Dreadnought" in landed and "Assault Intercessor Squad" in landed


def test_a_wrong_unit_is_flagged_and_left_unticked(person: Callable[[str], Browser]) -> None:
    """Ruling 75 on the page: the unit says why, its box is not ticked, the rest is added."""
    world = campaign_with_two_players(person)
    ruby, force_id = world["ruby"], world["ruby_force"]
    mystery = (
        b'<selection name="Mystery Unit" type="unit" number="1">'
        b'<costs><cost name=" PL" value="3.0"/></costs></selection>'
    )
    data = VALKYRIES.replace(b"      <selections>\n", b"      <selections>\n" + mystery, 1)
    shown = upload(ruby, force_id, data, name="guard.ros")
    assert shown.status_code == 200, shown.text
    ticked = UNIT_BOX.findall(shown.text)
    assert len(ticked) == 3 and "1.1" not in ticked
    flagged = shown.text.split('data-testid="problem-1.1">')[1].split("</p>")[0]
    assert "Left unticked" in flagged and "no keywords at all" in flagged
    carried = CARRIED.search(shown.text)
    assert carried
    added = ruby.post(f"/forces/{force_id}/roster", {"roster": carried.group(1), "units": ticked})
    assert added.headers["location"] == f"/forces/{force_id}?imported=3"
