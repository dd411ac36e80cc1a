"""Issue 39: the roster pages tried as a new player would, with a large multi-detachment
roster (four real detachments, over 500 KB as a plain .ros): previewed, ticked, added."""

from __future__ import annotations

from collections.abc import Callable

from tests.api.test_roster_large import LARGE
from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_roster_pages import CARRIED, UNIT_BOX, upload


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
