"""Nothing typed or ticked in the battle wizard is silently lost between two screens (issue
40), in Chromium at phone size. Each case ends with the server's values and every page's
values compared (destroyed ☠, Marked for Greatness ★, victory points, kill counters):

- three changes on a phone without signal (a tick, a tap, a star) while another phone
  ticks and types: every change of both is kept, on the server and on both pages;
- two tabs of one phone without signal, each with a change: both kept;
- a tab closed with changes waiting, taken over by the next tab after another phone
  changed the draft: put on the newer draft, not over it;
- victory points typed and not left (the cursor still in the box) survive a reload, with
  or without signal, and the newer draft put on the page after a stale change;
- the other phone submits while this one has changes waiting: they are listed beside the
  submitted result, and the phone drops them only when asked;
- a set-up step kept on the phone links, without signal, every step the phone holds."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import TableBattle, mission, table_battle_on
from tests.browser.test_offline_rebase import QUEUE_EMPTY, count, plus, type_vp

OFFLINE = pytest.mark.allow_console_errors(r"ERR_INTERNET_DISCONNECTED", r"Failed to fetch")

# The after-the-game form's values, from a document (the page, or the step as fetched).
COLLECT = """
(root) => {
  const form = root.querySelector("form[data-draft]");
  const out = {};
  form.querySelectorAll("input[data-destroyed]").forEach(
    el => { out[el.getAttribute("aria-label")] = el.checked; });
  form.querySelectorAll("input[type=radio][name^=marked_]").forEach(
    el => { if (el.checked) out[el.name] = el.value; });
  form.querySelectorAll("input[name^=vp_], input[name^=painted_]").forEach(
    el => { out[el.name] = el.type === "checkbox" ? el.checked : el.value; });
  form.querySelectorAll("[data-counter] output").forEach(
    el => { out[el.closest("[data-counter]").dataset.counter] = el.textContent.trim(); });
  return out;
}
"""


def shown(page: Page) -> dict[str, object]:
    """What the page shows."""
    return dict(page.evaluate(f"({COLLECT})(document)"))


def held(page: Page, path: str) -> dict[str, object]:
    """What the server holds: the step as it renders it now (fetched, not shown)."""
    script = (
        "async (path) => { const r = await fetch(path, {cache: 'no-store'});"
        " const doc = new DOMParser().parseFromString(await r.text(), 'text/html');"
        f" return ({COLLECT})(doc); }}"
    )
    return dict(page.evaluate(script, path))


def destroyed(unit: str) -> str:
    return f"Destroyed (takes an Out of Action test): {unit}"


def agree(pages: list[Page], path: str, **expected: object) -> None:
    """Every page shows what the server holds (waiting for a page that still has to look),
    and the server holds what is expected."""
    server = held(pages[0], path)
    for key, value in expected.items():
        assert server[key] == value, (key, server)
    for page in pages:
        page.wait_for_function(
            f"(want) => JSON.stringify(({COLLECT})(document)) === JSON.stringify(want)",
            arg=server,
            timeout=20_000,
            polling=250,
        )
        assert shown(page) == server


@OFFLINE
def test_changes_offline_and_on_another_phone_are_all_kept(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    path = table_battle.after
    a, b = phones(table_battle.player, table_battle.player, at=path)  # the recorder's two
    a.context.set_offline(True)
    a.get_by_label(destroyed("Boyz"), exact=True).check()
    plus(a)
    a.get_by_label("Marked for Greatness: Warboss", exact=True).check()
    expect(a.locator("#queue-status")).to_contain_text("3 changes waiting")
    b.get_by_label(destroyed("Intercessors"), exact=True).check()
    b.locator("#f-vp_1").fill("25")
    b.locator("#f-vp_1").press("Tab")
    b.wait_for_function(QUEUE_EMPTY, timeout=20_000)
    a.context.set_offline(False)
    a.wait_for_function(QUEUE_EMPTY, timeout=30_000, polling=250)
    expect(a.locator("#connection-status")).to_be_hidden()
    agree(
        [a, b],
        path,
        **{
            destroyed("Boyz"): True,
            destroyed("Intercessors"): True,
            "marked_1": str(a.get_by_label("Marked for Greatness: Warboss").get_attribute("value")),
            "vp_1": "25",
        },
    )
    assert held(a, path)[str(count_slug(a))] == "1"


def count_slug(page: Page, name: str = "Ranged kills, Captain") -> str | None:
    return page.get_by_role("group", name=name).get_attribute("data-counter")


@OFFLINE
def test_two_tabs_without_signal_keep_both_changes(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    path = table_battle.after
    (first,) = phones(table_battle.player, at=path)
    second = first.context.new_page()
    second.goto(path)
    expect(second.get_by_role("heading", name="After the game")).to_be_visible()
    first.context.set_offline(True)
    first.get_by_label(destroyed("Boyz"), exact=True).check()
    type_vp(first, "30")
    second.get_by_label(destroyed("Intercessors"), exact=True).check()
    first.context.set_offline(False)
    for tab in (first, second):
        tab.wait_for_function(QUEUE_EMPTY, timeout=30_000, polling=250)
    agree(
        [first, second],
        path,
        **{destroyed("Boyz"): True, destroyed("Intercessors"): True, "vp_0": "30"},
    )


@OFFLINE
def test_a_closed_tabs_changes_go_on_the_newer_draft(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    path = table_battle.after
    (first,) = phones(table_battle.player, at=path)
    second = first.context.new_page()
    second.goto(path)
    expect(second.get_by_role("heading", name="After the game")).to_be_visible()
    (other,) = phones(table_battle.player, at=path)  # another phone, online throughout
    first.context.set_offline(True)
    first.get_by_label(destroyed("Boyz"), exact=True).check()
    type_vp(first, "30")
    plus(first)
    first.close()  # closed with its changes waiting (a tick and VP as one change, a tap)
    other.get_by_label(destroyed("Intercessors"), exact=True).check()
    other.locator("#f-vp_1").fill("12")
    other.locator("#f-vp_1").press("Tab")
    other.wait_for_function(QUEUE_EMPTY, timeout=20_000)
    second.get_by_label("Fully painted army (+10 VP)").first.check()
    queues = "Object.keys(localStorage).filter(k => k.startsWith('crusade-wizard-queue:'))"
    taken = f"() => {{ const keys = {queues}; return keys.length === 1 && "
    taken += "JSON.parse(localStorage[keys[0]]).items.length === 3; }"
    second.wait_for_function(taken, timeout=10_000, polling=100)
    second.context.set_offline(False)
    second.wait_for_function(QUEUE_EMPTY, timeout=30_000, polling=250)
    agree(
        [second, other],
        path,
        **{
            destroyed("Boyz"): True,
            destroyed("Intercessors"): True,
            "vp_0": "30",
            "vp_1": "12",
            "painted_0": True,
        },
    )
    expect(count(second)).to_have_text("1")


def test_a_value_being_typed_survives_the_newer_draft_put_on_the_page(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    """A change refused as stale makes the page read the newer draft and put it on the
    form: a value being typed there at that moment (not left, not queued yet) is queued
    first and stays, not wiped (found when two phones raced: B's 12 VP vanished)."""
    path = table_battle.after
    a, b = phones(table_battle.player, table_battle.player, at=path)
    b.clock.install()  # B's timers wait for the test: its pause after typing, its looks
    b.reload()
    a.get_by_label(destroyed("Intercessors"), exact=True).check()
    a.wait_for_function(QUEUE_EMPTY, timeout=20_000)
    # B still holds the older draft: its tick is refused as stale, the newer draft is read
    b.get_by_label(destroyed("Boyz"), exact=True).check()
    b.locator("#f-vp_1").fill("12")  # typed; the cursor stays in the box
    expect(b.get_by_label(destroyed("Intercessors"), exact=True)).to_be_checked()
    expect(b.locator("#f-vp_1")).to_have_value("12")
    b.clock.run_for(2_000)
    b.wait_for_function(QUEUE_EMPTY, timeout=20_000, polling=250)
    agree(
        [a, b],
        path,
        **{destroyed("Boyz"): True, destroyed("Intercessors"): True, "vp_1": "12"},
    )


@OFFLINE
def test_victory_points_typed_and_not_left_survive_a_reload(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    path = table_battle.after
    (page,) = phones(table_battle.player, at=path)
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=20_000)
    page.reload()  # through the service worker, which keeps the step
    vp = page.locator("#f-vp_0")
    vp.fill("55")  # typed; the cursor stays in the box (no change event)
    page.reload()
    expect(page.locator("#f-vp_0")).to_have_value("55")
    page.wait_for_function(QUEUE_EMPTY, timeout=20_000, polling=250)
    assert held(page, path)["vp_0"] == "55"
    page.context.set_offline(True)
    page.locator("#f-vp_1").fill("44")
    page.reload()  # no signal: the kept copy, with the typed value put back
    expect(page.locator("#f-vp_1")).to_have_value("44")
    expect(page.locator("#f-vp_0")).to_have_value("55")
    page.context.set_offline(False)
    page.wait_for_function(QUEUE_EMPTY, timeout=30_000, polling=250)
    agree([page], path, vp_0="55", vp_1="44")


@OFFLINE
def test_changes_waiting_when_the_other_phone_submits_are_shown_and_dropped_on_request(
    phones: Callable[..., list[Page]], table_battle: TableBattle
) -> None:
    path = table_battle.after
    a, b = phones(table_battle.player, table_battle.player, at=path)
    a.context.set_offline(True)
    a.get_by_label(destroyed("Boyz"), exact=True).check()
    plus(a)
    for index, vp in enumerate(("30", "20")):
        b.locator(f"#f-vp_{index}").fill(vp)
    with b.expect_navigation():
        b.get_by_role("button", name="Next: Review").click()
    with b.expect_navigation():
        b.get_by_role("button", name="Submit result").click()
    assert re.search(r"/battles/\d+$", b.url), b.url
    battle_url = b.url
    a.context.set_offline(False)
    shown_here = a.get_by_test_id("not-saved")
    expect(shown_here).to_contain_text("these 2 changes made here were not saved", timeout=30_000)
    expect(shown_here).to_contain_text(f"{destroyed('Boyz')}: ticked")
    expect(shown_here).to_contain_text("Ranged kills, Captain: +1")
    expect(a.locator("#queue-status")).to_contain_text("2 changes waiting")
    # the result as submitted: without them
    result = a.request.get(battle_url.replace("/battles/", "/api/v1/battles/")).json()
    units = [u for s in result["sides"] for u in s["report"]["units"]]
    assert not any(u.get("destroyed") for u in units), units
    # beside the submitted result, on this phone, until dropped
    with a.expect_navigation():
        shown_here.get_by_role("button", name="Open the battle as it is now").click()
    assert a.url == battle_url, a.url
    beside = a.get_by_test_id("draft-leftovers")
    expect(beside).to_contain_text(f"{destroyed('Boyz')}: ticked")
    expect(beside).to_contain_text("Ranged kills, Captain: +1")
    a.reload()
    expect(beside).to_be_visible()  # kept until the phone is told to drop them
    beside.get_by_role("button", name="Drop these changes").click()
    expect(beside).to_be_hidden()
    assert a.evaluate(
        "() => !Object.keys(localStorage).some(k => k.startsWith('crusade-wizard-queue:'))"
    )
    a.reload()
    expect(beside).to_be_hidden()
    b.reload()  # the other phone never had any
    expect(b.get_by_test_id("draft-leftovers")).to_be_hidden()


@OFFLINE
def test_a_kept_set_up_step_links_every_step_the_phone_holds(
    phones: Callable[..., list[Page]], live_server: str
) -> None:
    started = table_battle_on(live_server, mustered=False)
    setup_url = f"{started.base}/setup"
    (page,) = phones(started.player, at=setup_url)
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=20_000)
    page.reload()  # kept by the service worker while the draft is at its set-up
    page.get_by_label("Your force").select_option(label="Ultramarines")
    page.get_by_label("Opponent's force").select_option(label="Waaagh!")
    page.get_by_role("radio", name=re.compile("^Combat Patrol")).check()
    mission(page, "Combat Patrol", "Supply Drop").check()
    page.get_by_role("group", name="Agendas for Ultramarines").get_by_label("Assassins").check()
    page.get_by_role("group", name="Agendas for Waaagh!").get_by_label("Reaper").check()
    page.wait_for_function(QUEUE_EMPTY, timeout=20_000)
    with page.expect_navigation():
        page.get_by_role("button", name=re.compile("^Next")).first.click()
    if "/muster" in page.url:
        with page.expect_navigation():
            page.get_by_role("button", name="Muster", exact=True).click()
    expect(page.get_by_role("heading", name="After the game")).to_be_visible()
    kept = "() => caches.match(location.pathname).then(r => !!r)"
    page.wait_for_function(kept, timeout=20_000, polling=200)
    after_url = page.url.split("#")[0]
    page.context.set_offline(True)
    page.goto(setup_url)  # the kept copy, from when only the set-up was reached
    steps = page.get_by_role("navigation", name="Wizard steps")
    link = steps.get_by_role("link", name="3. After the game")
    expect(link).to_be_visible()
    with page.expect_navigation():
        link.click()
    assert page.url == after_url, page.url
    expect(page.get_by_role("heading", name="After the game")).to_be_visible()
