"""Two phones, one battle, a bad link (issue 49), in Chromium at phone size. Each phone goes
to the server through a link of its own that the test cuts (tests/browser/link.py: open
connections dropped, new ones refused), not only through Playwright's offline switch:

- a field both phones changed is asked about alone, named with its army, while the phone's
  other entries go at once (the other phone sees them, and its submit counts them); the
  phone whose value was replaced is told what replaced it;
- a counter both phones moved while apart is said on both, to keep the sum or one count;
- a submit after the other phone's says what counted, not what this phone showed;
- a victory-point value the step cannot take is refused on the spot, never emptied."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import TableBattle
from tests.browser.link import Link, links
from tests.browser.test_nothing_silently_lost import held
from tests.browser.test_offline_rebase import QUEUE_EMPTY, count, plus, type_vp

CUT = pytest.mark.allow_console_errors(r"ERR_", r"Failed to fetch", r"fetching the script")
PAINTED = "Fully painted army (+10 VP)"


@pytest.fixture
def two_links(live_server: str) -> Iterator[list[Link]]:
    with links(live_server, 2) as made:
        yield made


def two_phones(
    phones: Callable[..., list[Page]], battle: TableBattle, two: list[Link], at: str = ""
) -> tuple[Page, Page]:
    """Phone A and phone B of the battle's player, each through its own link."""
    (a,) = phones(battle.player, at=at or battle.after, base_url=two[0].url)
    (b,) = phones(battle.player, at=at or battle.after, base_url=two[1].url)
    return a, b


def back_online(page: Page, link: Link) -> None:
    """The signal is back: the phone hears it (as it would from the system) and sends."""
    link.restore()
    page.evaluate("() => window.dispatchEvent(new Event('online'))")


@CUT
def test_one_clash_asks_about_its_field_alone_and_the_rest_goes_at_once(
    phones: Callable[..., list[Page]], table_battle: TableBattle, two_links: list[Link]
) -> None:
    a, b = two_phones(phones, table_battle, two_links)
    two_links[1].cut()
    type_vp(b, "45")  # clashes with A's 40 below
    b.get_by_label(PAINTED).first.check()  # only B: goes at once
    plus(b)  # a tap never clashes
    type_vp(a, "40")
    a.wait_for_function(QUEUE_EMPTY, timeout=10_000)
    back_online(b, two_links[1])
    clashes = b.get_by_test_id("clashes")
    expect(clashes).to_contain_text(
        "Ultramarines: Victory points scored — yours 45, theirs 40", timeout=10_000
    )
    expect(clashes.locator("li")).to_have_count(1)
    # Meanwhile B's other entries reached the server, and A's page shows them.
    b.wait_for_function("() => document.getElementById('queue-status').hidden", timeout=10_000)
    server = held(b, table_battle.after)
    assert server["painted_0"] is True and server["vp_0"] == "40", server
    expect(a.get_by_label(PAINTED).first).to_be_checked(timeout=10_000)
    expect(count(a)).to_have_text("1")
    told = a.get_by_test_id("changed-elsewhere")
    expect(told).to_contain_text(
        "Ultramarines: Fully painted army (+10 VP) — not ticked replaced by ticked"
    )
    # B keeps its 45: A is told what replaced its 40.
    clashes.get_by_role("button", name="Keep mine").click()
    expect(clashes).to_be_hidden()
    b.wait_for_function(QUEUE_EMPTY, timeout=10_000)
    expect(a.locator("#f-vp_0")).to_have_value("45", timeout=10_000)
    expect(told).to_contain_text("Ultramarines: Victory points scored — 40 replaced by 45")


@CUT
def test_the_other_phones_submit_counts_what_reached_the_server_meanwhile(
    phones: Callable[..., list[Page]], table_battle: TableBattle, two_links: list[Link]
) -> None:
    a, b = two_phones(phones, table_battle, two_links)
    two_links[1].cut()
    type_vp(b, "45")
    b.locator("#f-vp_1").fill("35")
    b.get_by_label(PAINTED).first.check()
    type_vp(a, "40")
    a.locator("#f-vp_1").fill("30")
    a.locator("#f-vp_1").press("Tab")
    a.wait_for_function(QUEUE_EMPTY, timeout=10_000)
    back_online(b, two_links[1])
    # Two questions, one per field, each named with its army.
    clashes = b.get_by_test_id("clashes")
    expect(clashes.locator("li")).to_have_text(
        [
            re.compile("^Ultramarines: Victory points scored — yours 45, theirs 40"),
            re.compile("^Waaagh!: Victory points scored — yours 35, theirs 30"),
        ],
        timeout=10_000,
    )
    b.wait_for_function("() => document.getElementById('queue-status').hidden", timeout=10_000)
    # A sees B's painted army, and submits while B's questions wait: it is in the result.
    expect(a.get_by_label(PAINTED).first).to_be_checked(timeout=10_000)
    a.get_by_role("button", name="Next: Review").click()
    expect(a.get_by_test_id("review-vp-0")).to_have_text("40")
    a.get_by_text("Unit by unit").click()
    expect(a.locator(".review-units").first).to_contain_text("Yes fully painted")
    a.get_by_role("button", name="Submit result").click()
    expect(a).to_have_url(re.compile(r"/battles/\d+$"))
    # B's unanswered fields are listed as not saved, never sent over the result.
    not_saved = b.get_by_test_id("not-saved")
    expect(not_saved).to_contain_text("Ultramarines: Victory points scored: 45", timeout=15_000)
    expect(not_saved).to_contain_text("Waaagh!: Victory points scored: 35")
    expect(not_saved).not_to_contain_text("painted")


@CUT
def test_a_counter_both_phones_moved_apart_is_said_on_both(
    phones: Callable[..., list[Page]], table_battle: TableBattle, two_links: list[Link]
) -> None:
    a, b = two_phones(phones, table_battle, two_links)
    two_links[1].cut()
    plus(b)  # B's one kill, entered without signal
    for _ in range(3):
        plus(a)
    a.wait_for_function(QUEUE_EMPTY, timeout=10_000)
    back_online(b, two_links[1])
    expect(count(b)).to_have_text("4", timeout=10_000)
    expect(b.get_by_test_id("changed-elsewhere")).to_contain_text(
        "Ultramarines: Ranged kills, Captain — +3 from another screen (now 4)"
    )
    overlaps_b = b.get_by_test_id("overlaps")
    expect(overlaps_b).to_contain_text("+1 here", timeout=10_000)
    expect(overlaps_b).to_contain_text("+3 from another screen")
    overlaps_a = a.get_by_test_id("overlaps")
    expect(overlaps_a).to_contain_text("+3 here", timeout=10_000)
    expect(overlaps_a).to_contain_text("+1 from another screen")
    expect(a.get_by_test_id("changed-elsewhere")).to_contain_text("+1 from another screen (now 4)")
    # Both entered the same kills: A keeps its own count.
    overlaps_a.get_by_role("button", name="Keep 3 (only this screen's +3)").click()
    expect(count(a)).to_have_text("3")
    expect(a.get_by_test_id("overlaps")).to_be_hidden()
    expect(count(b)).to_have_text("3", timeout=10_000)
    expect(b.get_by_test_id("overlaps")).to_be_hidden()


@CUT
def test_a_submit_after_the_other_phones_says_what_counted(
    phones: Callable[..., list[Page]], table_battle: TableBattle, two_links: list[Link]
) -> None:
    a, b = two_phones(phones, table_battle, two_links)
    type_vp(a, "60")
    a.locator("#f-vp_1").fill("40")
    a.get_by_role("button", name="Next: Review").click()
    expect(a.get_by_test_id("review-vp-0")).to_have_text("60")
    b.goto(table_battle.base + "/review")  # B checks the result: 60-40
    expect(b.get_by_test_id("review-vp-1")).to_have_text("40")
    a.goto(table_battle.after)
    type_vp(a, "65")
    a.get_by_role("button", name="Next: Review").click()
    expect(a.get_by_test_id("review-vp-0")).to_have_text("65")
    two_links[1].cut()  # B's Submit waits for the signal; A's goes first
    a.get_by_role("button", name="Submit result").click()
    expect(a).to_have_url(re.compile(r"/battles/\d+$"))
    two_links[1].restore()
    b.get_by_role("button", name="Submit result").click()
    expect(b.get_by_test_id("submitted-elsewhere")).to_contain_text(
        "Submitted from another screen: 65–40, not your 60–40"
    )
    b.get_by_role("button", name="Open the battle as it is now").click()
    expect(b).to_have_url(re.compile(r"/battles/\d+$"))


def test_a_value_the_step_cannot_take_is_refused_on_the_spot(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    (page,) = phones(table_battle.player, at=table_battle.after)
    type_vp(page, "45")
    page.wait_for_function(QUEUE_EMPTY, timeout=10_000)
    field = page.locator("#f-vp_0")
    for typed in ("4.5", "-3", "1e2", "250"):
        field.fill(typed)  # no leaving the box: said as it is typed
        expect(page.locator("#typed-vp_0")).to_contain_text(
            f"Victory points scored takes a whole number from 0 to 200: {typed} is not one"
        )
        expect(field).to_have_attribute("aria-invalid", "true")
    field.press("Tab")
    page.wait_for_timeout(700)  # past the pause after typing: nothing was queued
    expect(field).to_have_value("250")
    assert held(page, table_battle.after)["vp_0"] == "45"
    page.get_by_role("button", name="Next: Review").click()  # not with a refused value
    expect(field).to_be_focused()
    expect(page.get_by_role("heading", name="After the game")).to_be_attached()
    page.reload()
    expect(field).to_have_value("45")
    field.fill("50")  # corrected: the reason goes, the value is saved
    expect(page.locator("#typed-vp_0")).to_have_count(0)
    field.press("Tab")
    page.wait_for_function(QUEUE_EMPTY, timeout=10_000)
    assert held(page, table_battle.after)["vp_0"] == "50"


@pytest.mark.allow_console_errors(r"ERR_", r"Failed to fetch", r"fetching the script", r"503")
def test_the_way_back_offline(
    phones: Callable[..., list[Page]], table_battle: TableBattle, two_links: list[Link]
) -> None:
    link = two_links[0]
    campaign = f"/campaigns/{table_battle.campaign}"
    (page,) = phones(table_battle.player, at=table_battle.after, base_url=link.url)
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=20_000)
    page.reload()  # now kept by the service worker
    link.cut()
    plus(page)  # waits on this phone
    # Any other page without signal: the app's own page, with what waits and what is kept.
    page.goto(campaign)
    offline = page.get_by_test_id("offline-page")
    expect(offline).to_contain_text("No connection")
    expect(offline).to_contain_text("1 change waiting on this phone")
    expect(offline.get_by_role("link", name="Battle in progress: after step")).to_be_visible()
    # The Resume address: the step kept on the phone, with the tap waiting on top.
    page.goto(table_battle.base)
    expect(page.get_by_role("heading", name="After the game")).to_be_attached()
    expect(count(page)).to_have_text("1")
    # Signal back: the campaign page says what still waits on this phone, and links it.
    link.restore()
    page.goto(campaign)
    waiting = page.get_by_test_id("waiting-on-phone")
    expect(waiting).to_contain_text("1 change waiting on this phone")
    waiting.get_by_role("link", name="Open the battle in progress to send them").click()
    page.wait_for_function(QUEUE_EMPTY, timeout=10_000)
    expect(count(page)).to_have_text("1")
    page.goto(campaign)
    expect(page.get_by_test_id("waiting-on-phone")).to_be_hidden()
