"""The journey helpers work as the journey test will use them: sign up, log out, log in
through the real pages at 360 px, and a second player whose cookies are their own."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Browser, Page

from tests.browser.checks import assert_page_ok
from tests.browser.conftest import (
    ConsoleWatch,
    log_in,
    log_out,
    new_context_for,
    sign_up,
    unique_name,
)


def test_sign_up_log_out_log_in_on_a_phone(phone: Page) -> None:
    name = unique_name("ruby")
    sign_up(phone, name, display_name="Ruby")
    assert phone.url.endswith("/")
    assert phone.get_by_role("heading", name="Your campaigns").is_visible()
    log_out(phone)
    log_in(phone, name, next="/account", display_name="Ruby")
    assert phone.url.endswith("/account")
    assert_page_ok(phone)


def test_a_refused_sign_up_stays_on_the_form_with_the_error(phone: Page) -> None:
    phone.goto("/signup")
    phone.get_by_label("Username").fill("X")
    phone.get_by_label("Password").fill("short")
    # the browser's own checks pass (both filled); the server refuses and says why
    with phone.expect_navigation():
        phone.locator("main").get_by_role("button", name="Sign up").click()
    assert phone.get_by_role("alert").is_visible()
    assert phone.get_by_label("Username").input_value() == "X"
    assert phone.locator("header a[href='/account']").count() == 0
    assert_page_ok(phone)


def test_a_second_player_has_cookies_of_their_own(
    browser: Browser, live_server: str, new_page: Callable[..., Page]
) -> None:
    first = new_page("phone")
    sign_up(first, unique_name("kai"))
    second_context = new_context_for(browser, live_server)
    watch = ConsoleWatch()
    try:
        second = watch.attach(second_context.new_page())
        second.goto("/")
        assert second.get_by_role("link", name="Log in").is_visible()
        sign_up(second, unique_name("joel"))
        first.reload()
        assert first.locator("header a[href='/account']").inner_text().startswith("kai-")
        assert second.locator("header a[href='/account']").inner_text().startswith("joel-")
        assert second.viewport_size == {"width": 360, "height": 740}
    finally:
        second_context.close()
    assert not watch.unexpected()


def test_the_console_watch_catches_what_it_should(
    browser: Browser, live_server: str, phone: Page
) -> None:
    """The teardown check the other tests rely on: a script error and a missing stylesheet
    count; a refused form's 4xx answer does not."""
    context = new_context_for(browser, live_server)
    watch = ConsoleWatch()
    try:
        page = watch.attach(context.new_page())
        page.goto("/signup")
        page.get_by_label("Username").fill("X")
        page.get_by_label("Password").fill("short")
        with page.expect_navigation():
            page.locator("main").get_by_role("button", name="Sign up").click()
        assert page.get_by_role("alert").is_visible()
        assert not [e for e in watch.unexpected() if "status of 422" in e], watch.errors
        assert any("status of 422" in text for text, _ in watch.errors)  # seen, then excused
        page.evaluate(
            """() => {
              const link = document.createElement('link');
              link.rel = 'stylesheet';
              link.href = '/static/no-such-file.css';
              document.head.appendChild(link);
              setTimeout(() => { throw new Error('boom from the test'); });
            }"""
        )
        page.wait_for_timeout(500)
        found = watch.unexpected()
        assert any("no-such-file.css" in e for e in found), found
        assert any("boom from the test" in e for e in found), found
        excused = watch.unexpected([r"no-such-file", r"boom"])
        assert not [e for e in excused if "no-such-file" in e or "boom" in e], excused
    finally:
        context.close()


def test_an_empty_site_welcomes_its_first_account(
    fresh_server: str, new_page: Callable[..., Page]
) -> None:
    """On a brand-new install (no demo, no accounts) a visitor is pointed at sign-up, and
    the first account made through the page lands on its (empty) campaign list."""
    page = new_page("phone", base_url=fresh_server)
    page.goto("/")
    assert "No public campaigns here yet" in page.locator("main").inner_text()
    assert_page_ok(page)
    sign_up(page, "first-player")
    assert "You are not in a campaign yet" in page.locator("main").inner_text()
    assert page.locator("main").get_by_role("button", name="Start a new campaign").count() == 1
    assert_page_ok(page)
