"""Entering a 10-unit roster by hand on a 360 px phone, counted (issue 12): keyword chips,
several unit lines in one form, one submit. Counted as tests/browser/taps.py says: a tap 1,
a typed field 1 tap and 1 keyboard entry. Before the chips and lines it took 55 taps and 32
typed fields (a form per unit, keywords typed). Issue 40's roster with its real faction
keywords typed is in test_tap_budget.py, with the other budgets.

Also: the add-unit page (one line, several lines, more lines, a refusal, a copy), the
Order of Battle with its Duplicate buttons and a card page with its keyword chips pass the
phone checks at 320 and 360 px and in dark mode, with no console errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
from playwright.sync_api import Page, expect

from tests.browser.checks import assert_page_ok
from tests.browser.conftest import as_screen, log_in, unique_name
from tests.browser.live import api_sign_up, csrf_form
from tests.browser.taps import Taps

# A Combat Patrol-sized Space Marine roster (50 Power: the Supply Limit): name, Power,
# the chips to tick (the faction keyword and INFANTRY are ticked on a new line; ticking
# VEHICLE or BIKER unticks INFANTRY), and the keywords the unit must end with.
ROSTER = [
    ("Captain Severus", 5, ("CHARACTER",), ["CHARACTER", "IMPERIUM", "INFANTRY"]),
    (
        "Librarian Tiberon",
        5,
        ("CHARACTER", "PSYKER"),
        ["CHARACTER", "IMPERIUM", "INFANTRY", "PSYKER"],
    ),
    ("Squad Vorn", 5, (), ["IMPERIUM", "INFANTRY"]),
    ("Squad Aquila", 5, (), ["IMPERIUM", "INFANTRY"]),
    ("Squad Cato", 5, (), ["IMPERIUM", "INFANTRY"]),
    ("Hellblasters", 6, (), ["IMPERIUM", "INFANTRY"]),
    ("Outriders", 6, ("BIKER",), ["BIKER", "IMPERIUM"]),
    ("Eliminators", 4, (), ["IMPERIUM", "INFANTRY"]),
    ("Invader ATV", 3, ("VEHICLE",), ["IMPERIUM", "VEHICLE"]),
    ("Servitors", 2, (), ["IMPERIUM", "INFANTRY"]),
]
# Issue 21's budget: 30 taps (a typed field counts 1 tap to focus it; its keyboard entry
# is counted apart) and 6 screens of 740 px for the page with 10 lines.
BUDGET_TAPS = 30
BUDGET_TYPED = 20  # typed fields (a name and a Power Rating per unit)
BUDGET_SCREENS = 6


def new_force(server: str) -> tuple[str, int]:
    """A player with a campaign and an empty Space Marine force (through the JSON API)."""
    name = unique_name("roster")
    client = api_sign_up(server, name)
    headers = {"X-CSRF-Token": csrf_form(client)["csrf_token"]}
    campaign = client.post("/api/v1/campaigns", json={"name": "Roster"}, headers=headers).json()
    force = client.post(
        f"/api/v1/campaigns/{campaign['id']}/forces",
        json={"name": "Ultramarines 2nd", "crusade_faction": "IMPERIUM"},
        headers=headers,
    ).json()
    client.close()
    return name, int(force["id"])


Line = tuple[str, int, tuple[str, ...], list[str]]  # ROSTER's lines


def type_lines(phone: Page, taps: Taps, roster: list[Line]) -> None:
    """Each unit's name and Power Rating typed in its line, its chips ticked."""
    for index, (unit, power, chips, _) in enumerate(roster):
        line = phone.locator(f"#line-{index}")
        taps.type(line.get_by_label("Unit name"), unit)
        taps.type(line.get_by_label("Power Rating"), str(power))
        for word in chips:
            taps.tap(line.get_by_role("checkbox", name=word, exact=True))


def cards_of(phone: Page, server: str, force: int) -> dict[str, dict[str, Any]]:
    """The force's cards by name, read through the JSON API as the phone's player."""
    with httpx.Client(base_url=server, timeout=30) as client:
        client.cookies.update({c["name"]: c["value"] for c in phone.context.cookies()})
        return {c["name"]: c for c in client.get(f"/api/v1/forces/{force}").json()["cards"]}


def within_budget(
    what: str, taps: Taps, screens: float, budget: tuple[int, int, float], before: str
) -> None:
    """Print the roster's figures and hold them to (taps, typed fields, screens)."""
    total, typed = taps.taps["roster"], taps.keys["roster"]
    print(f"\n{what}: {total} taps (typed fields included), {typed} typed fields")
    print(f"the page with 10 lines: {screens:.1f} screens of 740 px")
    print(f"budget: {budget[0]} taps, {budget[1]} typed fields, {budget[2]} screens ({before})")
    assert total <= budget[0] and typed <= budget[1], taps.report()
    assert screens <= budget[2], f"{screens:.1f} screens"


def test_a_ten_unit_roster_on_a_phone(new_page: Callable[..., Page], live_server: str) -> None:
    name, force = new_force(live_server)
    phone = new_page("phone")
    log_in(phone, name, next=f"/forces/{force}")
    taps = Taps(phase="roster")
    taps.go(phone, phone.get_by_role("button", name="Add a unit"))
    expect(phone.locator("fieldset.unit-entry-line")).to_have_count(5)  # a force being built
    taps.go(phone, phone.get_by_role("button", name="Five more lines"))
    expect(phone.locator("fieldset.unit-entry-line")).to_have_count(10)
    screens = phone.evaluate("document.documentElement.scrollHeight") / 740
    type_lines(phone, taps, ROSTER)
    taps.go(phone, phone.get_by_role("button", name="Add these units to the Order of Battle"))
    expect(phone.get_by_text("10 units joined the Order of Battle.")).to_be_visible()
    expect(phone.locator(".unit-list > li")).to_have_count(10)
    cards = cards_of(phone, live_server, force)
    assert {n: cards[n]["keywords"] for n, *_ in ROSTER} == {n: k for n, _, _, k in ROSTER}
    assert sum(c["power_rating"] for c in cards.values()) == 46

    before = "before issue 12: 55 taps, 32 typed; before issue 21: 38 taps, 14.5 screens"
    within_budget(
        "10-unit roster", taps, screens, (BUDGET_TAPS, BUDGET_TYPED, BUDGET_SCREENS), before
    )


def test_a_lines_keyword_field_is_one_tap_away(
    new_page: Callable[..., Page], live_server: str
) -> None:
    """A line's "Other keywords" opens on its own, without the wargear and Requisitions."""
    name, force = new_force(live_server)
    phone = new_page("phone")
    log_in(phone, name, next=f"/forces/{force}/cards/new?lines=2")
    for scheme in ("light", "dark"):
        as_screen(phone, scheme, 360, f"/forces/{force}/cards/new?lines=2")
        line = phone.locator("#line-1")
        expect(line.get_by_label("Other keywords (optional)")).to_be_hidden()
        line.locator("details.line-keywords > summary").click()
        expect(line.get_by_label("Other keywords (optional)")).to_be_visible()
        expect(line.get_by_label("Wargear (optional)")).to_be_hidden()
        expect(phone.get_by_label("Keywords on every line (optional)")).to_be_visible()
        assert_page_ok(phone)


def test_the_entry_pages_pass_the_phone_checks(
    new_page: Callable[..., Page], live_server: str
) -> None:
    name, force = new_force(live_server)
    setup = new_page("phone")
    log_in(setup, name, next=f"/forces/{force}/cards/new?lines=2")
    line = setup.locator("#line-0")
    line.get_by_label("Unit name").fill("Squad Vorn")
    line.get_by_label("Power Rating").fill("5")
    line.get_by_role("checkbox", name="INFANTRY", exact=True).check()
    with setup.expect_navigation():
        setup.get_by_role("button", name="Add these units to the Order of Battle").click()
    card = setup.locator(".unit-list a").first.get_attribute("href")
    assert card and card.startswith("/cards/")
    card_id = card.removeprefix("/cards/")
    pages = [
        f"/forces/{force}/cards/new",
        f"/forces/{force}/cards/new?lines=3",
        f"/forces/{force}/cards/new?copy={card_id}",
        f"/forces/{force}",
        card,
    ]
    page = setup
    for scheme, width in (("light", 360), ("light", 320), ("dark", 360)):
        as_screen(page, scheme, width)
        for path in pages:
            response = page.goto(path)
            assert response is not None and response.status == 200, path
            assert_page_ok(page)
        # the card's edit form open: its keyword chips (the unit has not fought yet)
        page.get_by_text("Edit name, keywords and narrative").click()
        expect(page.get_by_role("checkbox", name="INFANTRY", exact=True)).to_be_checked()
        assert_page_ok(page)
        # "more lines" keeps the typing
        page.goto(f"/forces/{force}/cards/new?lines=1")
        page.get_by_label("Unit name").fill("Squad Cato")
        with page.expect_navigation():
            page.get_by_role("button", name="One more line").click()
        expect(page.locator("#line-0").get_by_label("Unit name")).to_have_value("Squad Cato")
        expect(page.locator("fieldset.unit-entry-line")).to_have_count(2)
        assert_page_ok(page)
        # a refusal in place: the second line over the Supply Limit, chips ticked
        page.goto(f"/forces/{force}/cards/new?lines=2")
        page.locator("#line-0").get_by_label("Unit name").fill("Squad Aquila")
        page.locator("#line-0").get_by_label("Power Rating").fill("5")
        page.locator("#line-0").get_by_role("checkbox", name="INFANTRY", exact=True).check()
        page.locator("#line-1").get_by_label("Unit name").fill("Land Raider")
        page.locator("#line-1").get_by_label("Power Rating").fill("60")
        page.locator("#line-1").get_by_role("checkbox", name="VEHICLE", exact=True).check()
        with page.expect_navigation():
            page.get_by_role("button", name="Add these units to the Order of Battle").click()
        expect(page.locator("#form-error")).to_contain_text("Line 2 (Land Raider)")
        expect(page.locator("#line-1").get_by_label("Power Rating")).to_have_value("60")
        assert_page_ok(page)
