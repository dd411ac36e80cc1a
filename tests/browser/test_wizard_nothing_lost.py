"""Nothing entered at the table is lost (issue 12), in Chromium at phone size:

- five "+" taps 300 ms apart on a slow link are all saved (queued, sent in order);
- a mission picked right after the battle size changes is kept, and so are agenda ticks,
  through a reload;
- taps made on two screens of the same battle all count (a form field changed on both
  is in test_offline_rebase.py);
- the changed wizard pages pass the phone checks at 320 and 360 px and in dark mode;
- no signal: taps are kept on the phone, the step reloads from the service worker, and
  everything is sent once the signal is back.

The slow link is Chromium's own network emulation (every request waits LATENCY ms)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.checks import assert_page_ok
from tests.browser.conftest import (
    TableBattle,
    as_screen,
    log_in,
    mission,
    table_battle_on,
    unique_name,
)
from tests.browser.live import api_sign_up, battle_in_progress, csrf_form, two_forces
from tests.browser.test_offline_rebase import at_the_table

LATENCY = 800  # ms added to every request: a phone on a poor connection
QUEUE_EMPTY = (
    "() => !Object.keys(localStorage).some(k => k.startsWith('crusade-wizard-queue:'))"
    " && document.getElementById('connection-status').hidden"
    " && document.getElementById('queue-status').hidden"
)


def slow_link(page: Page, latency: int = LATENCY) -> None:
    session = page.context.new_cdp_session(page)
    session.send("Network.enable")
    session.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": latency, "downloadThroughput": -1, "uploadThroughput": -1},
    )


def test_fast_taps_on_a_slow_link_are_all_saved(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    (page,) = phones(table_battle.player, at=table_battle.after)
    slow_link(page)
    plus = page.get_by_role("button", name="One more: Ranged kills, Captain")
    count = page.get_by_role("group", name="Ranged kills, Captain").locator("output")
    for _ in range(5):
        plus.click()
        page.wait_for_timeout(300)  # a thumb's pace, faster than the link answers
    expect(count).to_have_text("5")  # shown at once, whatever the link
    expect(page.locator("#queue-status")).to_contain_text("waiting to be sent")
    page.wait_for_function(QUEUE_EMPTY, timeout=20_000)
    page.reload()
    expect(page.get_by_role("group", name="Ranged kills, Captain").locator("output")).to_have_text(
        "5"
    )


def test_mission_and_agenda_ticks_survive_a_reload(
    phones: Callable[..., list[Page]], live_server: str
) -> None:
    started = table_battle_on(live_server, mustered=False)
    (page,) = phones(started.player, at=f"{started.base}/setup")
    slow_link(page)
    page.get_by_label("Your force").select_option(label="Ultramarines")
    page.get_by_label("Opponent's force").select_option(label="Waaagh!")
    # The mission is picked straight after the size, while the link is still busy.
    page.get_by_role("radio", name=re.compile("^Strike Force")).check()
    mission(page, "Strike Force", "Supplies From Above").check()
    page.get_by_role("group", name="Agendas for Ultramarines").get_by_label("Assassins").check()
    page.get_by_role("group", name="Agendas for Waaagh!").get_by_label("Reaper").check()
    page.wait_for_function(QUEUE_EMPTY, timeout=20_000)
    page.reload()
    expect(page.get_by_role("radio", name=re.compile("^Strike Force"))).to_be_checked()
    expect(mission(page, "Strike Force", "Supplies From Above")).to_be_checked()
    ours = page.get_by_role("group", name="Agendas for Ultramarines", include_hidden=True)
    theirs = page.get_by_role("group", name="Agendas for Waaagh!", include_hidden=True)
    assert ours.get_by_label("Assassins").is_checked()
    assert theirs.get_by_label("Reaper").is_checked()
    assert not ours.get_by_label("Reaper").is_checked()


def test_taps_on_two_screens_all_count(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    """A tap is one more (or one fewer) of something: it counts on the draft as it is now,
    so taps made on two screens of one battle are all kept (issue 21: they used to be
    refused as a conflict on the older screen, and its only button threw them away). Form
    fields changed on both screens: tests/browser/test_offline_rebase.py."""
    older, newer = phones(table_battle.player, table_battle.player, at=table_battle.after)

    newer.get_by_role("button", name="One more: Ranged kills, Intercessors").click()
    newer.wait_for_function(QUEUE_EMPTY)
    older.get_by_role("button", name="One more: Ranged kills, Captain").click()
    older.get_by_role("button", name="One more: Ranged kills, Captain").click()
    older.wait_for_function(QUEUE_EMPTY)
    expect(older.get_by_role("group", name="Ranged kills, Captain").locator("output")).to_have_text(
        "2"
    )
    newer.reload()
    for unit, taps in (("Intercessors", "1"), ("Captain", "2")):
        expect(
            newer.get_by_role("group", name=f"Ranged kills, {unit}").locator("output")
        ).to_have_text(taps)


def test_wizard_pages_pass_the_phone_checks(
    new_page: Callable[..., Page], live_server: str
) -> None:
    name = unique_name("table")
    client = api_sign_up(live_server, name)
    campaign, force, opponent = two_forces(client)
    mustered = battle_in_progress(client, campaign, force, opponent)
    # a second draft, not mustered yet, for the set-up and muster forms
    campaign2, force2, opponent2 = two_forces(client)
    started = client.post(f"/campaigns/{campaign2}/battles/new", data=csrf_form(client))
    fresh = started.headers["location"].rsplit("/", 1)[0]
    setup = {"force_id": force2, "opponent_id": opponent2, "role": "attacker"}
    setup |= {"battle_size": "combat_patrol", "mission": "supply_drop", "action": "next"}
    setup |= {"agendas_0": "assassins", "agendas_1": "reaper"}
    client.post(f"{fresh}/setup", data={**csrf_form(client), **setup})
    # the mustered one on to the review (its consequences worked out), Out of Action open
    cards = client.get(f"/api/v1/forces/{opponent}").json()["cards"]
    result = {"form": "after", "vp_0": "30", "vp_1": "10", "action": "review"}
    result |= {f"destroyed_{cards[0]['id']}": "1", "marked_0": ""}
    moved = client.post(f"{mustered}/after", data={**csrf_form(client), **result})
    assert moved.status_code == 303, moved.text
    client.close()
    pages = [f"{fresh}/setup", f"{fresh}/muster", f"{mustered}/after"]
    pages += [f"{mustered}/out_of_action", f"{mustered}/review"]
    page = new_page("phone")
    log_in(page, name, next=pages[0])
    for scheme, width in (("light", 360), ("light", 320), ("dark", 360)):
        as_screen(page, scheme, width)
        for path in pages:
            response = page.goto(path)
            assert response is not None and response.status == 200, path
            assert_page_ok(page)


# Chromium reports the requests that fail while the phone is offline (and only those)
@pytest.mark.allow_console_errors(r"ERR_INTERNET_DISCONNECTED", r"Failed to fetch")
def test_a_size_and_its_mission_picked_offline_survive_a_reload(
    phones: Callable[..., list[Page]], live_server: str
) -> None:
    """Set-up changes still waiting to be sent are put back after a reload, the mission of
    a battle size switched to included (its list is hidden until the size is shown)."""
    started = table_battle_on(live_server, mustered=False)
    (page,) = phones(started.player, at=f"{started.base}/setup")
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=20_000)
    page.reload()  # through the service worker, which keeps the step for later
    page.context.set_offline(True)
    page.get_by_role("radio", name=re.compile("^Strike Force")).check()
    mission(page, "Strike Force", "Supplies From Above").check()
    expect(page.locator("#queue-status")).to_contain_text("waiting to be sent")
    page.reload()  # no signal: the kept page, with the waiting change put back on it
    expect(page.get_by_role("radio", name=re.compile("^Strike Force"))).to_be_checked()
    expect(mission(page, "Strike Force", "Supplies From Above")).to_be_checked()
    page.context.set_offline(False)
    page.wait_for_function(QUEUE_EMPTY, timeout=30_000, polling=250)
    page.reload()
    expect(mission(page, "Strike Force", "Supplies From Above")).to_be_checked()


# Chromium reports the requests that fail while the phone is offline (and only those)
@pytest.mark.allow_console_errors(r"ERR_INTERNET_DISCONNECTED", r"Failed to fetch")
def test_no_signal_at_the_table(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    page = at_the_table(phones, table_battle)  # the service worker keeps the step
    base = table_battle.base

    page.context.set_offline(True)
    plus = page.get_by_role("button", name="One more: Ranged kills, Captain")
    plus.click()
    plus.click()
    count = page.get_by_role("group", name="Ranged kills, Captain").locator("output")
    expect(count).to_have_text("2")
    expect(page.locator("#queue-status")).to_contain_text("2 changes waiting to be sent")
    expect(page.locator("#connection-status")).to_contain_text("no connection")
    # "Next" without signal stays on the page instead of the browser's offline page.
    page.get_by_role("button", name=re.compile("^Next: Review")).click()
    expect(page.locator("#connection-status")).to_contain_text("kept on this phone")
    assert page.url.endswith(f"{base}/after"), page.url
    page.reload()  # still no signal: the kept page, with the waiting taps on it
    expect(page.get_by_role("heading", name="After the game")).to_be_visible()
    expect(page.get_by_role("group", name="Ranged kills, Captain").locator("output")).to_have_text(
        "2"
    )

    page.context.set_offline(False)
    page.wait_for_function(QUEUE_EMPTY, timeout=30_000)
    page.reload()
    expect(page.get_by_role("group", name="Ranged kills, Captain").locator("output")).to_have_text(
        "2"
    )


# Chromium reports the requests that fail while the phone is offline (and only those)
@pytest.mark.allow_console_errors(r"ERR_INTERNET_DISCONNECTED", r"Failed to fetch")
def test_two_tabs_of_one_battle_keep_their_own_taps(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    """Two tabs of the same step share the phone's storage but keep a queue each: taps
    waiting in both (no signal) are all sent once, even when one tab is closed first."""
    (first,) = phones(table_battle.player, at=table_battle.after)
    second = first.context.new_page()
    second.goto(table_battle.after)
    for tab in (first, second):
        expect(tab.get_by_role("heading", name="After the game")).to_be_visible()
    first.context.set_offline(True)
    for tab, taps in ((first, 3), (second, 2)):
        plus = tab.get_by_role("button", name="One more: Ranged kills, Captain")
        for _ in range(taps):
            plus.click()
        count = tab.get_by_role("group", name="Ranged kills, Captain").locator("output")
        expect(count).to_have_text(str(taps))
    queues = "Object.keys(localStorage).filter(k => k.startsWith('crusade-wizard-queue:'))"
    assert len(second.evaluate(queues)) == 2  # one queue per tab, neither overwrote the other
    first.close()  # closed with its three taps still waiting
    # Still offline, the open tab takes the closed tab's queue over (its lock is free now):
    # one queue of five, the closed tab's three first.
    one_queue = f"() => {{ const keys = {queues}; return keys.length === 1 && "
    one_queue += "JSON.parse(localStorage[keys[0]]).items.length === 5; }"
    second.wait_for_function(one_queue, timeout=10_000, polling=100)
    second.context.set_offline(False)
    # polled by time: a tab left alone after the other closed gets no animation frames
    second.wait_for_function(QUEUE_EMPTY, timeout=30_000, polling=250)
    second.reload()
    count = second.get_by_role("group", name="Ranged kills, Captain").locator("output")
    expect(count).to_have_text("5")  # every tap from both tabs, each counted once


def test_the_kills_note_reads_right_both_ways(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    """Issue 21: the note compares one side's kills with the other side's losses and says
    the right thing whichever is larger; it is a note, not a red error."""
    (page,) = phones(table_battle.player, at=table_battle.after)
    note = page.locator("[data-kills-check='0']")
    expect(note).to_be_hidden()
    theirs = page.locator("#side-0 input[data-destroyed]").first  # in its own call-out
    theirs.check()
    expect(note).to_have_text(
        "1 enemy unit marked destroyed (☠), 0 kills entered here: fine if something else "
        "destroyed them (a mission rule, their own hazard); otherwise add the kills."
    )
    plus = page.get_by_role("button", name="One more: Ranged kills, Captain")
    plus.click()
    expect(note).to_be_hidden()
    plus.click()
    expect(note).to_have_text(
        "2 kills entered here, 1 enemy unit marked destroyed (☠): tick the enemy units "
        "that were destroyed."
    )
    muted = page.evaluate(
        "getComputedStyle(document.documentElement).getPropertyValue('--pico-muted-color')"
    )
    assert muted.strip(), "Pico's muted colour is defined"
    colour = note.evaluate("el => getComputedStyle(el).color")
    error = page.evaluate(
        "(() => { const p = document.createElement('p'); p.className = 'field-error';"
        " document.body.append(p); const c = getComputedStyle(p).color; p.remove(); return c; })()"
    )
    assert colour != error, "the note is not coloured like an error"
