"""The campaign's rules page in Chromium at 360 px (issue 22): an organizer picks a pack
file on the phone, reads the preview, attaches it; the page with a pack's content passes the
page checks in light and dark mode. On the shared server: a page needs one engine; the API
tests cover both."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.browser.checks import assert_page_ok
from tests.browser.conftest import log_in, unique_name
from tests.browser.live import api_sign_up, two_forces

PILGRIMS = Path(__file__).resolve().parents[2] / "examples" / "packs" / "ashen-pilgrims.yaml"


def test_an_organizer_attaches_a_pack_on_a_phone(
    new_page: Callable[..., Page], live_server: str
) -> None:
    orga = unique_name("orga")
    client = api_sign_up(live_server, orga)
    campaign, blue, _red = two_forces(client)
    page = new_page("phone", base_url=live_server)
    log_in(page, orga, next=f"/campaigns/{campaign}/rules")
    page.get_by_label("Pack file").set_input_files(PILGRIMS)
    with page.expect_navigation():
        page.get_by_role("button", name="Preview the pack").click()
    preview = page.get_by_test_id("pack-preview")
    expect(preview).to_contain_text("Adds: 2 agendas (Bear the Ashes, Smite the Unclean)")
    assert_page_ok(page)
    with page.expect_navigation():
        page.get_by_role("button", name="Attach The Ashen Pilgrims").click()
    expect(page.get_by_role("status")).to_contain_text("The rule pack is attached")
    expect(
        page.get_by_role("heading", level=2, name="The Ashen Pilgrims version 1.0")
    ).to_be_visible()
    assert_page_ok(page)
    attached = client.get(f"/api/v1/campaigns/{campaign}/rule-packs").json()
    assert [(p["pack_id"], p["version"]) for p in attached] == [("ashen_pilgrims", "1.0")]
    client.close()

    dark = new_page("phone", base_url=live_server, color_scheme="dark")
    log_in(dark, orga, next=f"/campaigns/{campaign}/rules")
    assert_page_ok(dark)
    dark.goto(f"/forces/{blue}")
    expect(dark.locator('[data-counter="fervour"]')).to_contain_text("1 Fervour")
