"""No tap lost offline, and no change thrown away (issue 21), in Chromium at phone size:

- a reload without signal shows the server's last known state (counters, fields), not the
  service worker's older copy of the step, with or without taps waiting;
- a change made on the phone's own older copy of the step is put on the newer draft
  (rebased) without asking;
- a field changed on two phones is shown with both values, and the player's choice is kept;
- a step opened through "Resume" is there without signal too.

The server's state is checked by reading the step again online (the page the server
renders from the draft)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import TableBattle

QUEUE_EMPTY = (
    "() => !Object.keys(localStorage).some(k => k.startsWith('crusade-wizard-queue:'))"
    " && document.getElementById('queue-status').hidden"
)
OFFLINE = pytest.mark.allow_console_errors(r"ERR_INTERNET_DISCONNECTED", r"Failed to fetch")


def at_the_table(phones: Callable[..., list[Page]], battle: TableBattle) -> Page:
    """A phone on the after-the-game step, with the service worker looking after it."""
    (page,) = phones(battle.player, at=battle.after)
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=20_000)
    page.reload()  # now through the service worker, which keeps this (older) copy
    return page


def count(page: Page, name: str = "Ranged kills, Captain") -> object:
    return page.get_by_role("group", name=name).locator("output")


def plus(page: Page, name: str = "Ranged kills, Captain") -> None:
    page.get_by_role("button", name=f"One more: {name}").click()


def type_vp(page: Page, value: str) -> None:
    field = page.locator("#f-vp_0")
    field.fill(value)
    field.press("Tab")  # the change event: the form is saved


def server_state(page: Page) -> Page:
    page.context.set_offline(False)
    page.wait_for_function(QUEUE_EMPTY, timeout=30_000, polling=250)
    page.goto(page.url.split("#")[0])
    return page


@OFFLINE
def test_an_offline_reload_shows_the_last_known_state(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    page = at_the_table(phones, table_battle)
    plus(page)
    plus(page)
    type_vp(page, "60")
    page.wait_for_function(QUEUE_EMPTY, timeout=20_000)
    page.context.set_offline(True)
    page.reload()  # the service worker's copy is from before those entries
    expect(page.get_by_role("heading", name="After the game")).to_be_visible()
    expect(count(page)).to_have_text("2")
    expect(page.locator("#f-vp_0")).to_have_value("60")
    plus(page)  # made on the kept page: must count, not conflict
    expect(count(page)).to_have_text("3")
    server_state(page)
    expect(count(page)).to_have_text("3")
    expect(page.locator("#f-vp_0")).to_have_value("60")
    expect(page.locator("#connection-status")).to_be_hidden()


@OFFLINE
def test_waiting_taps_show_on_top_of_the_known_counts(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    page = at_the_table(phones, table_battle)
    plus(page)
    plus(page)
    page.wait_for_function(QUEUE_EMPTY, timeout=20_000)
    page.context.set_offline(True)
    plus(page)
    expect(count(page)).to_have_text("3")
    page.reload()  # 2 known from the server, 1 waiting on the phone
    expect(count(page)).to_have_text("3")
    expect(page.locator("#queue-status")).to_contain_text("1 change waiting")
    server_state(page)
    expect(count(page)).to_have_text("3")


@OFFLINE
def test_a_change_on_the_phones_own_older_copy_is_rebased(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    page = at_the_table(phones, table_battle)
    type_vp(page, "60")
    page.wait_for_function(QUEUE_EMPTY, timeout=20_000)
    # A phone that lost what it knew (cleared site data for that key): the older copy of
    # the step is all it has, and its version is behind the server's.
    page.evaluate(
        "() => Object.keys(localStorage).filter(k => k.startsWith('crusade-wizard-known:'))"
        ".forEach(k => localStorage.removeItem(k))"
    )
    page.context.set_offline(True)
    page.reload()
    expect(page.locator("#f-vp_0")).to_have_value("")  # the older copy
    page.get_by_label("Fully painted army (+10 VP)").first.check()
    server_state(page)  # refused as older, read again, re-applied: no question asked
    expect(page.locator("#f-vp_0")).to_have_value("60")
    expect(page.get_by_label("Fully painted army (+10 VP)").first).to_be_checked()


@OFFLINE
def test_a_field_changed_on_two_phones_shows_both_and_keeps_the_choice(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    """Both phones change the victory points without knowing of the other's (one has no
    signal): the one coming back asks, and the choice is what both pages show."""
    mine, theirs = phones(table_battle.player, table_battle.player, at=table_battle.after)
    mine.context.set_offline(True)
    plus(mine)  # a tap never conflicts: it counts on the newer draft as well
    type_vp(mine, "40")
    type_vp(theirs, "60")
    theirs.wait_for_function(QUEUE_EMPTY, timeout=20_000)
    mine.context.set_offline(False)
    banner = mine.get_by_test_id("clashes")
    expect(banner).to_contain_text("Changed on another screen", timeout=20_000)
    expect(banner).to_contain_text("Ultramarines: Victory points scored — yours 40, theirs 60")
    banner.get_by_role("button", name="Keep mine").click()
    mine.wait_for_function(QUEUE_EMPTY, timeout=20_000)
    expect(banner).to_be_hidden()
    expect(mine.locator("#f-vp_0")).to_have_value("40")
    # the other phone shows it without a reload (it looks for changes while nothing waits)
    expect(theirs.locator("#f-vp_0")).to_have_value("40", timeout=15_000)
    expect(count(theirs)).to_have_text("1", timeout=15_000)
    theirs.reload()
    expect(theirs.locator("#f-vp_0")).to_have_value("40")
    expect(count(theirs)).to_have_text("1")


@OFFLINE
def test_a_step_opened_through_resume_is_there_offline(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    base = table_battle.base
    (page,) = phones(table_battle.player, at=f"/campaigns/{table_battle.campaign}/battles/new")
    page.get_by_role("button", name="Resume your battle in progress").click()
    expect(page.get_by_role("heading", name="After the game")).to_be_visible()
    assert re.search(rf"{re.escape(base)}/after$", page.url), page.url
    # Kept once the service worker is active (it installs in the background on this first
    # page) and the page has put itself in its cache.
    kept = (
        "() => navigator.serviceWorker.ready"
        ".then(() => caches.match(location.pathname)).then(r => !!r)"
    )
    page.wait_for_function(kept, timeout=20_000, polling=200)
    controlled = page.evaluate("() => navigator.serviceWorker.controller !== null")
    page.context.set_offline(True)
    page.reload()
    try:
        expect(page.get_by_role("heading", name="After the game")).to_be_visible()
    except AssertionError:  # say what the phone kept (this failed twice in full runs)
        kept_urls = page.evaluate(
            "() => caches.keys().then(ks => Promise.all(ks.map(k => caches.open(k)"
            ".then(c => c.keys()).then(rs => [k, rs.map(r => r.url)]))))"
        )
        pytest.fail(f"not shown offline; controlled before: {controlled}; kept: {kept_urls}")
    plus(page)
    expect(count(page)).to_have_text("1")
    server_state(page)
    expect(count(page)).to_have_text("1")
