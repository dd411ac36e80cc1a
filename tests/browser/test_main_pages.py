"""Every main page of the website in Chromium, at phone (360 px) and desktop width, with the
demo campaign loaded: it answers 200, logs no console error, fits the screen, has tap
targets a thumb can hit, labelled inputs, headings in order and no serious or critical
axe-core finding. Then the keyboard, and reading with JavaScript turned off."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.checks import assert_page_ok
from tests.browser.conftest import Demo, log_in, unique_name
from tests.browser.live import PASSWORD, api_sign_up, battle_in_progress, two_forces


@dataclass(frozen=True)
class MainPage:
    name: str
    path: Callable[[Demo], str]


PAGES = {
    page.name: page
    for page in (
        MainPage("home", lambda d: "/"),
        MainPage("login", lambda d: "/login"),
        MainPage("signup", lambda d: "/signup"),
        MainPage("reset-password", lambda d: "/reset-password?token=not-a-real-one"),
        MainPage("account", lambda d: "/account"),
        MainPage("dashboard", lambda d: f"/campaigns/{d.campaign}"),
        MainPage("members", lambda d: f"/campaigns/{d.campaign}/members"),
        MainPage("battles", lambda d: f"/campaigns/{d.campaign}/battles"),
        MainPage("history", lambda d: f"/campaigns/{d.campaign}/history"),
        MainPage("map", lambda d: f"/campaigns/{d.campaign}/map"),
        MainPage("campaign-rules", lambda d: f"/campaigns/{d.campaign}/rules"),
        MainPage("order-of-battle", lambda d: f"/forces/{d.forces[0]}"),
        MainPage("requisitions", lambda d: f"/forces/{d.forces[0]}/requisitions"),
        MainPage("add-unit", lambda d: f"/forces/{d.forces[0]}/cards/new"),
        MainPage("card", lambda d: f"/cards/{d.card}"),
        MainPage("card-print", lambda d: f"/cards/{d.card}/print"),
        MainPage("rules", lambda d: "/rules"),
        MainPage("rules-agendas", lambda d: "/rules/agendas"),
        MainPage("rules-missions", lambda d: "/rules/missions"),
        MainPage("rules-honours", lambda d: "/rules/honours"),
        MainPage("rules-scars", lambda d: "/rules/scars"),
        MainPage("new-battle", lambda d: f"/campaigns/{d.campaign}/battles/new"),
        MainPage("battle", lambda d: f"/battles/{d.battle}"),
        MainPage("decision", lambda d: f"/decisions/{d.decision}"),
    )
}
# Who looks: a visitor (the demo campaign is public, so its read pages are open to anyone)
# and the site admin (sees everything, like a campaign's organizer).
VISITOR = [
    "home",
    "login",
    "signup",
    "reset-password",
    "dashboard",
    "battles",
    "history",
    "map",
    "order-of-battle",
    "card",
] + [name for name in PAGES if name.startswith("rules")]
ADMIN = [
    "home",
    "account",
    "dashboard",
    "members",
    "campaign-rules",
    "order-of-battle",
    "requisitions",
    "add-unit",
    "card",
    "card-print",
    "new-battle",
    "battle",
    "decision",
]
CASES = [
    pytest.param(who, name, viewport, id=f"{viewport}-{who}-{name}")
    for who, names in (("visitor", VISITOR), ("admin", ADMIN))
    for name in names
    for viewport in ("phone", "desktop")
]


@pytest.mark.parametrize(("who", "name", "viewport"), CASES)
def test_main_page(
    reading_page: Callable[..., Page], demo: Demo, who: str, name: str, viewport: str
) -> None:
    page = reading_page(viewport, who)
    path = PAGES[name].path(demo)
    response = page.goto(path)
    assert response is not None
    assert response.status == 200, f"{path} answered {response.status}"
    assert page.url.endswith(path), f"{path} went to {page.url}"
    assert page.title().endswith("Crusade tracker")
    assert page.locator("main h1").first.is_visible()
    assert_page_ok(page)


DARK = [*ADMIN, "login", "rules-missions", "rules-honours"]


@pytest.mark.parametrize("name", DARK)
def test_main_page_in_dark_mode(reading_page: Callable[..., Page], demo: Demo, name: str) -> None:
    """Phones at a dimly lit table often run in dark mode: the same checks (contrast above
    all) with the system colour scheme set to dark."""
    page = reading_page("phone", "admin", color_scheme="dark")
    response = page.goto(PAGES[name].path(demo))
    assert response is not None and response.status == 200
    assert page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches")
    assert_page_ok(page)


def test_wizard_steps_in_dark_mode(new_page: Callable[..., Page], fresh_server: str) -> None:
    client = api_sign_up(fresh_server, "orga")
    base = battle_in_progress(client, *two_forces(client))
    client.close()
    page = new_page("phone", base_url=fresh_server, color_scheme="dark")
    log_in(page, "orga", next=f"{base}/after")
    for step in ("setup", "muster", "after"):
        response = page.goto(f"{base}/{step}")
        assert response is not None and response.status == 200, step
        assert_page_ok(page)


def test_error_page_is_a_proper_page(phone: Page) -> None:
    """Even the not-found page is a proper page at 360 px. (Chromium logs the 404 as a
    console error; the watcher knows a 4xx page answer is deliberate.)"""
    response = phone.goto("/no-such-page")
    assert response is not None and response.status == 404
    assert phone.get_by_role("link", name="Crusade tracker").is_visible()
    assert_page_ok(phone)


# --- keyboard ------------------------------------------------------------------------------

FOCUSED = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  return {
    tag: el.tagName.toLowerCase(),
    text: (el.innerText || el.value || el.getAttribute('aria-label') || '').trim(),
    name: el.getAttribute('name') || '',
    type: el.getAttribute('type') || '',
    inMain: !!el.closest('main'),
    inHeaderNav: !!el.closest('header nav'),
    rect: el.getBoundingClientRect().toJSON(),
    ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0
      || style.boxShadow !== 'none',
  };
}"""


def tab(page: Page) -> dict[str, Any]:
    page.keyboard.press("Tab")
    focused: dict[str, Any] = page.evaluate(FOCUSED)
    assert focused is not None, "Tab left the page's controls"
    return focused


def test_skip_link_jumps_to_the_content(desktop: Page) -> None:
    desktop.goto("/login")
    first = tab(desktop)
    assert first["text"] == "Skip to content", first
    assert first["rect"]["x"] >= 0 and first["rect"]["y"] >= 0, "skip link is off-screen"
    assert first["ring"], "the focused skip link shows no focus ring"
    desktop.keyboard.press("Enter")
    # Playwright learns of a fragment navigation by an event, a moment after the key.
    desktop.wait_for_url("**#main", timeout=5000)
    after = tab(desktop)
    assert after["inMain"] and after["name"] == "username", after


def test_tab_reaches_the_nav_and_a_form_and_submits_it(desktop: Page, live_server: str) -> None:
    username = unique_name("keys")
    api_sign_up(live_server, username).close()
    desktop.goto("/login")
    seen = [tab(desktop) for _ in range(6)]
    nav = [f["text"] for f in seen if f["inHeaderNav"]]
    assert nav[:4] == ["Crusade tracker", "Rules", "Log in", "Sign up"], seen
    assert all(f["ring"] for f in seen), [f for f in seen if not f["ring"]]
    assert seen[-1]["name"] == "username", seen[-1]
    desktop.keyboard.type(username)
    assert tab(desktop)["name"] == "password"
    desktop.keyboard.type(PASSWORD)
    submit = tab(desktop)
    assert (submit["tag"], submit["type"], submit["text"]) == ("button", "submit", "Log in")
    assert submit["ring"]
    with desktop.expect_navigation():
        desktop.keyboard.press("Enter")
    assert desktop.locator("header a[href='/account']").inner_text() == username


# --- without JavaScript --------------------------------------------------------------------


def test_core_pages_read_without_javascript(new_page: Callable[..., Page], demo: Demo) -> None:
    """Dashboard, Order of Battle and a Crusade card are plain HTML: all there with
    JavaScript off (the page script only improves them)."""
    page = new_page("phone", java_script_enabled=False)
    for path, expected in (
        (f"/campaigns/{demo.campaign}", [demo.campaign_name, *demo.force_names]),
        (f"/forces/{demo.forces[0]}", [demo.force_names[0], demo.card_name]),
        (f"/cards/{demo.card}", [demo.card_name]),
    ):
        response = page.goto(path)
        assert response is not None and response.status == 200, f"{path}: {response}"
        assert page.evaluate("1 + 1") == 2  # the test's own script runs; the page's would not
        main = page.locator("main").inner_text()
        missing = [text for text in expected if text not in main]
        assert not missing, f"{path} without JavaScript lacks {missing}"
