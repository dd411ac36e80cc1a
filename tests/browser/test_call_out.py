"""Issue 49 item 8: the after-the-game step as the players call it out. Each army's results
(its VP, the enemy units it destroyed, its kills, its Marked unit and Agenda marks) are
entered in its own part of the page, so issue 40's table (two real 10-unit armies, three
Agendas a side, Ambush) is entered scrolling down once: at most 4 phone screens scrolled in
all (it was 11.8: a ☠ sat on the other army's list), on a step at most 4 screens tall, in
no more taps than before (24 taps and 3 typed fields)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
from playwright.sync_api import Page, expect

from tests.browser.checks import assert_page_ok
from tests.browser.live import PASSWORD, csrf_form
from tests.browser.taps import Taps, screens_scrolled, watch_scrolling
from tests.browser.test_tap_budget import AGENDAS, SCREEN, TABLE, real_forces, record_the_table

# Before issue 49 the same entries took 24 taps (2 VP fields, 6 ☠, 10 kills, 2 ★, 3 Agenda
# marks, the dice field) and 3 keyboard entries (2 VP, the dice).
TAPS_BEFORE, KEYS_BEFORE = 24, 3
MAX_SCREENS = 4


def at_the_after_step(server: str, world: dict[str, object]) -> str:
    """Ruby's Ambush against Kai, three Agendas a side, set up through the wizard's own
    forms (every unit fits: mustered at once); the after-the-game step's address."""
    ruby, kai = world["ruby"], world["kai"]
    assert isinstance(ruby, dict) and isinstance(kai, dict)
    with httpx.Client(base_url=server, timeout=30) as client:
        client.post("/api/v1/auth/login", json={"username": ruby["name"], "password": PASSWORD})
        csrf = csrf_form(client)
        started = client.post(f"/campaigns/{world['campaign']}/battles/new", data=csrf)
        base = started.headers["location"].rsplit("/", 1)[0]
        agendas = [a.lower().replace(" ", "_") for a in AGENDAS]
        setup = {
            **csrf,
            "force_id": str(ruby["force"]),
            "opponent_id": str(kai["force"]),
            "role": "attacker",
            "battle_size": "strike_force",
            "mission": "ambush",
            "agendas_0": agendas,
            "agendas_1": agendas,
            "action": "ahead",
        }
        ahead = client.post(f"{base}/setup", data=setup)
        assert ahead.headers.get("location", "").endswith("/after"), ahead.text[:300]
    return f"{base}/after"


def test_each_army_is_called_out_in_one_place(
    phones: Callable[..., list[Page]], live_server: str
) -> None:
    world = real_forces(live_server)
    ruby = world["ruby"]
    assert isinstance(ruby, dict)
    (phone,) = phones(str(ruby["name"]), at=at_the_after_step(live_server, world))
    # every ☠ of an army's call-out is in its own part of the page, beside its VP
    for index, side in enumerate(TABLE):
        part = phone.get_by_test_id(f"destroyed-by-{index}")
        for unit in side["destroyed"]:
            label = f"Destroyed (takes an Out of Action test): {unit}"
            expect(part.get_by_label(label, exact=True)).to_have_count(1)
    assert_page_ok(phone)
    taps = Taps(phase="after the game")
    watch_scrolling(phone)
    height = record_the_table(phone, taps)
    scrolled = screens_scrolled(phone, SCREEN)
    # each kills note counts the enemy units ticked in its own army's call-out
    for index, kills in enumerate((6, 4)):
        expect(phone.locator(f"[data-kills-check='{index}']")).to_have_text(
            f"{kills} kills entered here, 3 enemy units marked destroyed (☠): tick the enemy "
            "units that were destroyed."
        )
    print(f"\n{taps.report()}\nafter the game: {height:.1f} screens tall, {scrolled:.1f} scrolled")
    assert height <= MAX_SCREENS, f"the step is {height:.1f} screens tall"
    assert scrolled <= MAX_SCREENS, f"{scrolled:.1f} screens scrolled to enter the table"
    assert taps.taps[taps.phase] <= TAPS_BEFORE, taps.report()
    assert taps.keys[taps.phase] <= KEYS_BEFORE, taps.report()
