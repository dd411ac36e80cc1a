"""Times are shown in the viewer's own time zone (issue 12): the server writes UTC into a
<time> element and the page rewrites it for the phone's zone (here Tokyo, UTC+9)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import httpx
from playwright.sync_api import Locator, Page, expect

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


def _every_time_is_local(page: Page, path: str, at_least: int = 1) -> list[Locator]:
    """Each <time> on the page rewritten in the viewer's zone: no UTC left in its text, the
    UTC original kept as its title."""
    page.goto(path)
    times = page.locator("main time[data-local]")
    expect(times.first).to_have_attribute("data-shown", "")
    found = times.all()
    assert len(found) >= at_least, f"{path}: {len(found)} times"
    for shown in found:
        expect(shown).to_have_attribute("data-shown", "")
        assert "UTC" not in shown.inner_text(), f"{path}: {shown.inner_text()}"
        if shown.get_attribute("data-local") != "day":
            assert "UTC" in str(shown.get_attribute("title")), path
    return found


def test_every_page_with_a_time_shows_the_viewers_zone(
    new_page: Callable[..., Page], live_server: str
) -> None:
    """The campaign dashboard (event feed, battles, since your last visit), the battles and
    history lists, the members page's invites, the home page and the account's API tokens."""
    name = unique_name("tzall")
    client = api_sign_up(live_server, name)
    campaign, force, opponent = two_forces(client)
    base = battle_in_progress(client, campaign, force, opponent)
    result = {"form": "after", "vp_0": "30", "vp_1": "10", "action": "review"}
    client.post(f"{base}/after", data={**csrf_form(client), **result})
    client.post(f"{base}/review", data={**csrf_form(client), "action": "submit"})
    headers = {"X-CSRF-Token": csrf_form(client)["csrf_token"]}
    client.post(f"/api/v1/campaigns/{campaign}/invites", json={}, headers=headers)
    token = client.post("/api/v1/auth/tokens", json={"name": "bot"}, headers=headers).json()
    with httpx.Client(base_url=live_server) as bot:  # used once: "last used" has a time
        bot.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {token['token']}"})
    page = new_page("phone", timezone_id="Asia/Tokyo")
    log_in(page, name, next=f"/campaigns/{campaign}")
    # something new since this visit, for the "since your last visit" list
    client.post(
        f"/api/v1/forces/{force}/cards",
        json={"name": "Late Arrival", "power_rating": 1, "keywords": ["IMPERIUM"]},
        headers=headers,
    )
    client.close()
    _every_time_is_local(page, f"/campaigns/{campaign}", at_least=3)
    expect(page.locator("#since time[data-local]").first).to_have_attribute("data-shown", "")
    shown = page.locator("main time[data-local='']").first  # a moment, not a day
    moment = datetime.fromisoformat(str(shown.get_attribute("datetime")).replace("Z", "+00:00"))
    tokyo = moment + timedelta(hours=9)
    expect(shown).to_contain_text(f"{tokyo.hour % 12 or 12}:{tokyo.minute:02d}")
    day = page.locator("main time[data-local='day']").first  # the battles list's date
    expect(day).to_contain_text(str(tokyo.day))
    for path in (
        f"/campaigns/{campaign}/battles",
        f"/campaigns/{campaign}/history",
        f"/campaigns/{campaign}/members",
        "/",
    ):
        _every_time_is_local(page, path)
    used = page.locator("main table time[data-local]")  # the token's last use
    for _ in range(20):  # recorded just after the bot's request was answered
        page.goto("/account")
        if used.count():
            break
        page.wait_for_timeout(250)
    expect(used).to_have_attribute("data-shown", "")
    assert "UTC" not in used.inner_text()
