"""Importing a roster on a phone: Import roster → upload → preview with tick boxes → add."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.checks import assert_page_ok
from tests.browser.conftest import log_in, unique_name
from tests.browser.live import api_sign_up, csrf_form

ROSTERS = Path(__file__).parents[1] / "fixtures" / "rosters"
NECRONS = ROSTERS / "necrons_patrol.rosz"
CHAOS = ROSTERS / "chaos_four_detachments_emperors_children.rosz"


def player_with_force(live_server: str, name: str, faction: str) -> tuple[str, dict[str, Any]]:
    """A new player with a campaign of their own and one force in it, made through the API."""
    username = unique_name("rosters")
    client = api_sign_up(live_server, username)
    headers = {"X-CSRF-Token": csrf_form(client)["csrf_token"]}
    campaign = client.post("/api/v1/campaigns", json={"name": "Roster test"}, headers=headers)
    force = client.post(
        f"/api/v1/campaigns/{campaign.json()['id']}/forces",
        json={"name": name, "crusade_faction": faction},
        headers=headers,
    ).json()
    client.close()
    return username, force


def test_import_a_roster_on_a_phone(live_server: str, new_page: Callable[..., Page]) -> None:
    username, force = player_with_force(live_server, "Szarekhan Dynasty", "NECRONS")
    page = new_page("phone")
    log_in(page, username, next=f"/forces/{force['id']}")
    with page.expect_navigation():
        page.get_by_role("button", name="Import roster").click()
    assert_page_ok(page)
    page.get_by_label("Roster file").set_input_files(NECRONS)
    with page.expect_navigation():
        page.get_by_role("button", name="Read the roster").click()
    boxes = page.locator('input[name="units"]')
    expect(boxes).to_have_count(6)  # its Bound Creation is read as its Cryptothralls
    for index in range(6):
        expect(boxes.nth(index)).to_be_checked()
    expect(page.get_by_role("checkbox", name="Cryptothralls")).to_be_checked()
    assert_page_ok(page)
    page.get_by_role("checkbox", name="Chronomancer").uncheck()
    page.get_by_role("checkbox", name="Buy the Warlord Trait: Enduring Will (1 RP)").check()
    with page.expect_navigation():
        page.get_by_role("button", name="Add the ticked units").click()
    expect(page.get_by_text("5 units from the roster joined the Order of Battle.")).to_be_visible()
    units = page.locator(".unit-list")
    for name in ("Royal Warden", "Necron Warriors", "Canoptek Scarab Swarms", "Skorpekh"):
        expect(units.get_by_text(name).first).to_be_visible()
    expect(units.get_by_text("Chronomancer")).to_have_count(0)


def test_a_real_four_detachment_roster_on_a_phone(
    live_server: str, new_page: Callable[..., Page], tmp_path: Path
) -> None:
    """Issue 39, tried as a player would: the real 299,792-byte .ros of four detachments and
    three factions (SOURCES.md), uploaded as the list builder saved it; every unit previewed
    and ticked, the page still passes the phone checks, and the player keeps what fits the
    Supply Limit (the Chaos Space Marines Patrol, 41 PL)."""
    with zipfile.ZipFile(CHAOS) as archive:
        ros = tmp_path / "MBH x EC.ros"
        ros.write_bytes(archive.read("MBH x EC.ros"))
    assert ros.stat().st_size == 299_792
    username, force = player_with_force(live_server, "Mixed Warband", "CHAOS")
    page = new_page("phone")
    log_in(page, username, next=f"/forces/{force['id']}/roster")
    page.get_by_label("Roster file").set_input_files(ros)
    with page.expect_navigation():
        page.get_by_role("button", name="Read the roster").click()
    boxes = page.locator('input[name="units"]')
    expect(boxes).to_have_count(13)
    assert_page_ok(page)
    for index in range(13):
        expect(boxes.nth(index)).to_be_checked()
        if not 7 <= index <= 11:  # the Patrol's five: Master of Executions ... Chosen
            boxes.nth(index).uncheck()
    with page.expect_navigation():
        page.get_by_role("button", name="Add the ticked units").click()
    expect(page.get_by_text("5 units from the roster joined the Order of Battle.")).to_be_visible()
    units = page.locator(".unit-list")
    for name in ("Master of Executions", "Terminators", "Dreadclaw Drop Pod", "Chosen"):
        expect(units.get_by_text(name).first).to_be_visible()
    expect(units.get_by_text("Mortarion")).to_have_count(0)
