"""A counter tap that never reaches the server says so at once, and the next one that gets
through clears the message: nobody leaves the table thinking a lost tap was saved."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import log_in
from tests.browser.live import ADMIN, api_sign_up, battle_in_progress, two_forces


# htmx itself logs the failed requests this test provokes (and only those)
@pytest.mark.allow_console_errors(
    r"net::ERR_FAILED", r"status of 500", r"htmx:(sendError|afterRequest)", r"Error Code 500"
)
def test_a_lost_tap_is_announced_and_the_next_one_clears_it(
    new_page: Callable[..., Page], fresh_server: str
) -> None:
    client = api_sign_up(fresh_server, ADMIN)  # the first account: site admin
    base = battle_in_progress(client, *two_forces(client))
    client.close()
    page = new_page("phone", base_url=fresh_server)
    log_in(page, ADMIN, next=f"{base}/after")
    banner = page.locator("#connection-status")
    more = page.get_by_role("button", name="One more: Ranged kills, Captain")
    count = page.get_by_role("group", name="Ranged kills, Captain").locator("output")
    expect(banner).to_be_hidden()

    page.route(re.compile(r"/after/bump$"), lambda route: route.abort())
    more.click()
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("no connection")
    expect(count).to_have_text("0")

    page.unroute(re.compile(r"/after/bump$"))
    more.click()
    expect(count).to_have_text("1")
    expect(banner).to_be_hidden()

    page.route(re.compile(r"/after/bump$"), lambda route: route.fulfill(status=500, body="boom"))
    more.click()
    expect(banner).to_contain_text("server answered 500")
    expect(count).to_have_text("1")
    page.reload()  # what was saved is what the server has
    expect(page.get_by_role("group", name="Ranged kills, Captain").locator("output")).to_have_text(
        "1"
    )
