"""A counter tap that cannot reach the server is kept on the phone and sent when the link is
back (the page says it is waiting, and why); a server error is retried the same way. Nobody
leaves the table thinking a tap was saved when it was not, and no tap is lost."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import log_in
from tests.browser.live import ADMIN, api_sign_up, battle_in_progress, two_forces

QUEUE_EMPTY = (
    "() => !Object.keys(localStorage).some(k => k.startsWith('crusade-wizard-queue:'))"
    " && document.getElementById('queue-status').hidden"
)


# Chromium logs the failed requests this test provokes (and only those)
@pytest.mark.allow_console_errors(r"net::ERR_FAILED", r"status of 500")
def test_a_lost_tap_is_kept_and_sent_when_the_link_is_back(
    new_page: Callable[..., Page], fresh_server: str
) -> None:
    client = api_sign_up(fresh_server, ADMIN)  # the first account: site admin
    base = battle_in_progress(client, *two_forces(client))
    client.close()
    page = new_page("phone", base_url=fresh_server)
    log_in(page, ADMIN, next=f"{base}/after")
    banner = page.locator("#connection-status")
    waiting = page.locator("#queue-status")
    more = page.get_by_role("button", name="One more: Ranged kills, Captain")
    count = page.get_by_role("group", name="Ranged kills, Captain").locator("output")
    expect(banner).to_be_hidden()

    page.route(re.compile(r"/after/bump$"), lambda route: route.abort())
    more.click()
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("no connection")
    expect(waiting).to_contain_text("1 change waiting to be sent")
    expect(count).to_have_text("1")  # counted on the phone, not yet on the server

    page.unroute(re.compile(r"/after/bump$"))
    page.wait_for_function(QUEUE_EMPTY, timeout=20_000)  # sent on the next retry
    expect(banner).to_be_hidden()

    page.route(re.compile(r"/after/bump$"), lambda route: route.fulfill(status=500, body="boom"))
    more.click()
    expect(banner).to_contain_text("server answered 500")
    expect(count).to_have_text("2")
    page.unroute(re.compile(r"/after/bump$"))
    page.wait_for_function(QUEUE_EMPTY, timeout=20_000)
    page.reload()  # what was saved is what the server has
    expect(page.get_by_role("group", name="Ranged kills, Captain").locator("output")).to_have_text(
        "2"
    )
