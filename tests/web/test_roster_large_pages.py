"""Issue 39: the roster pages tried as a new player would, with a large multi-detachment
roster (four real detachments, over 500 KB as a plain .ros): previewed, ticked, added; and
a roster with a unit the file gets wrong."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.api.test_roster_large import LARGE
from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_roster_pages import CARRIED, UNIT_BOX, upload

CONSTRUCTED = Path(__file__).parents[1] / "fixtures" / "rosters" / "constructed"
VALKYRIES = (CONSTRUCTED / "astra_militarum_valkyries.ros").read_bytes()


def test_a_large_roster_previews_and_adds_through_the_pages(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    ruby, force_id = world["ruby"], world["ruby_force"]
    shown = upload(ruby, force_id, LARGE, name="four detachments.ros")
    assert shown.status_code == 200, shown.text
    keys = UNIT_BOX.findall(shown.text)
    assert len(keys) == 20 and "4 detachments" in shown.text
    carried = CARRIED.search(shown.text)
    assert carried
    firsts = [next(k for k in keys if k.startswith(f"{n}.")) for n in (1, 2, 3, 4)]
    added = ruby.post(f"/forces/{force_id}/roster", {"roster": carried.group(1), "units": firsts})
    assert added.status_code == 303, added.text
    assert added.headers["location"] == f"/forces/{force_id}?imported=4"


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
