"""Times are shown in the viewer's own time zone (issue 12): the server writes UTC into a
<time> element and the page rewrites it for the phone's zone (here Tokyo, UTC+9)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from playwright.sync_api import Page, expect

from tests.browser.conftest import log_in, unique_name
from tests.browser.live import api_sign_up, battle_in_progress, csrf_form, two_forces


def test_a_battle_time_in_the_viewers_zone(new_page: Callable[..., Page], live_server: str) -> None:
    name = unique_name("tz")
    client = api_sign_up(live_server, name)
    base = battle_in_progress(client, *two_forces(client))
    result = {"form": "after", "vp_0": "30", "vp_1": "10", "action": "review"}
    client.post(f"{base}/after", data={**csrf_form(client), **result})
    done = client.post(f"{base}/review", data={**csrf_form(client), "action": "submit"})
    battle = done.headers["location"]
    client.close()
    page = new_page("phone", timezone_id="Asia/Tokyo")
    log_in(page, name, next=battle)
    shown = page.locator("time[data-local]").first
    expect(shown).not_to_contain_text("UTC")
    moment = datetime.fromisoformat(str(shown.get_attribute("datetime")).replace("Z", "+00:00"))
    tokyo = moment + timedelta(hours=9)
    expect(shown).to_contain_text(f"{tokyo.hour % 12 or 12}:{tokyo.minute:02d}")
    assert "UTC" in str(shown.get_attribute("title"))
