"""The whole player journey on a phone (360 px wide), through the real pages in Chromium:
an organizer starts a campaign and invites two players; each builds a force; Ruby records
a battle with the wizard; Kai confirms it; both answer their decisions; Ruby spends a
Requisition; the Crusade cards and the Order of Battle show what happened.

Every page is driven as a user would (labels, roles, button names), so the test also proves
that each control has the name it is found by; at the key pages the phone checks run
(no sideways scroll, tap targets, labels, headings, axe)."""

from __future__ import annotations

import re
from collections.abc import Callable

from playwright.sync_api import Locator, Page, expect

from tests.browser.checks import assert_page_ok
from tests.browser.conftest import sign_up

CAMPAIGN = "War for Vigilus"
RUBY_FORCE = "Ultramarines 4th"
KAI_FORCE = "Waaagh! Gorbad"


def main_text(page: Page) -> str:
    return page.locator("main").inner_text()


def card_id(page: Page, name: str) -> int:
    """The id of the unit called `name`, from its link on the Order of Battle page."""
    href = page.locator("main").get_by_role("link", name=name, exact=True).get_attribute("href")
    assert href is not None
    found = re.fullmatch(r"/cards/(\d+)", href)
    assert found, href
    return int(found.group(1))


def card_stat(page: Page, card: int, label: str) -> Locator:
    """One box of a Crusade card's grid (Rank, Experience...): its value."""
    boxes = page.locator(f"#sheet-{card} .card-grid > div")
    return boxes.filter(has=page.get_by_text(label, exact=True)).locator("strong")


def create_force(page: Page, campaign_id: int, name: str, faction: str, player: str) -> int:
    """From the campaign dashboard's "Create your force" form; returns the new force's id."""
    page.goto(f"/campaigns/{campaign_id}")
    form = page.locator("#new-force")
    summary = form.get_by_role("button", name="Create your force")
    if form.locator("details").get_attribute("open") is None:
        summary.click()
    form.get_by_label("Force name").fill(name)
    form.get_by_label("Crusade faction").select_option(faction)
    form.get_by_label("Player name (optional)").fill(player)
    with page.expect_navigation():
        form.get_by_role("button", name="Create force").click()
    found = re.search(r"/forces/(\d+)$", page.url)
    assert found, page.url
    expect(page.get_by_role("heading", level=1)).to_have_text(name)
    return int(found.group(1))


def add_unit(page: Page, force_id: int, name: str, power: int, keywords: str) -> int:
    """Through the Order of Battle's "Add a unit" button and form; returns the card's id."""
    page.goto(f"/forces/{force_id}")
    with page.expect_navigation():
        page.locator("main").get_by_role("button", name="Add a unit").click()
    assert page.url.endswith(f"/forces/{force_id}/cards/new")
    line = page.locator("#line-0")  # a force being built: five lines, the first one used
    line.get_by_label("Unit name").fill(name)
    line.get_by_label("Power Rating").fill(str(power))
    for word in keywords.split(", "):  # the faction and INFANTRY are ticked already
        box = line.locator(f'input[type=checkbox][value="{word}"]')
        if not box.is_checked():
            box.check()
    with page.expect_navigation():
        page.get_by_role("button", name="Add these units to the Order of Battle").click()
    assert f"/forces/{force_id}?added=" in page.url, page.url
    assert f"{name} joined the Order of Battle." in main_text(page)
    return card_id(page, name)


def test_the_whole_journey_on_a_phone(fresh_server: str, new_page: Callable[..., Page]) -> None:
    orga = new_page("phone", base_url=fresh_server)
    ruby = new_page("phone", base_url=fresh_server)
    kai = new_page("phone", base_url=fresh_server)
    for page in (orga, ruby, kai):
        page.set_default_timeout(10_000)  # a missing control fails fast, not after 30 s

    # --- 1. The organizer signs up and starts a campaign from the home page -------------
    sign_up(orga, "orga", display_name="Orga")
    orga.get_by_role("button", name="Start a new campaign").click()
    orga.get_by_label("Campaign name").fill(CAMPAIGN)
    orga.get_by_label("Description (optional)").fill("The hive world burns.")
    with orga.expect_navigation():
        orga.get_by_role("button", name="Create campaign").click()
    found = re.search(r"/campaigns/(\d+)$", orga.url)
    assert found, orga.url
    campaign_id = int(found.group(1))
    expect(orga.get_by_role("heading", level=1)).to_have_text(CAMPAIGN)
    assert "You are an organizer here" in main_text(orga)
    assert_page_ok(orga)

    # --- 2. ...and makes an invite link that two players can use ------------------------
    with orga.expect_navigation():
        orga.get_by_role("button", name="Members & invites").click()
    orga.get_by_label(re.compile(r"^Joins as")).select_option(label="Player")
    orga.get_by_label("How many people can use it").fill("2")
    with orga.expect_navigation():
        orga.get_by_role("button", name="Create invite link").click()
    link = orga.get_by_label(re.compile(r"^Invite link \(joins as player; 2 uses"))
    expect(link).to_have_attribute("readonly", "")
    invite = link.input_value()
    code = re.search(r"/invites/([^/?#]+)$", invite)
    assert code, invite
    invite_path = f"/invites/{code.group(1)}"
    assert_page_ok(orga)

    # --- 3. Ruby and Kai open the link, sign up on the way, join, and build a force ----
    for page, name, display in ((ruby, "ruby", "Ruby"), (kai, "kai", "Kai")):
        page.goto(invite)
        expect(page.get_by_role("heading", level=1)).to_have_text("You're invited to a Crusade")
        with page.expect_navigation():
            page.locator("main").get_by_role("button", name="Sign up").click()
        assert page.url.endswith(f"/signup?next={invite_path}"), page.url
        sign_up(page, name, display_name=display, next=invite_path)
        with page.expect_navigation():
            page.get_by_role("button", name="Join the campaign").click()
        assert page.url.endswith(f"/campaigns/{campaign_id}?joined=1"), page.url
        assert "You are a player here" in main_text(page)
    assert_page_ok(kai)
    ruby_force = create_force(ruby, campaign_id, RUBY_FORCE, "IMPERIUM", "Ruby")
    kai_force = create_force(kai, campaign_id, KAI_FORCE, "ORKS", "Kai")

    # --- 4. Each adds two units to the Order of Battle -----------------------------------
    captain = add_unit(ruby, ruby_force, "Captain", 5, "IMPERIUM, CHARACTER, INFANTRY")
    squad = add_unit(ruby, ruby_force, "Intercessor Squad", 5, "IMPERIUM, INFANTRY")
    boyz = add_unit(kai, kai_force, "Boyz", 5, "ORKS, INFANTRY")
    warboss = add_unit(kai, kai_force, "Warboss", 5, "ORKS, CHARACTER, INFANTRY")
    assert "Supply: 10 / 50 Power used" in main_text(kai)
    assert_page_ok(kai)

    # --- 5. Ruby records the battle through the wizard -----------------------------------
    ruby.goto(f"/campaigns/{campaign_id}")
    assert_page_ok(ruby)
    with ruby.expect_navigation():
        ruby.get_by_role("button", name="Record a battle").click()
    found = re.search(rf"/campaigns/{campaign_id}/drafts/(\d+)/setup$", ruby.url)
    assert found, ruby.url
    base = f"/campaigns/{campaign_id}/drafts/{found.group(1)}"

    # Set-up: both forces preselected (Ruby has one, Kai's is the only other), the size
    # (its missions appear at once), a D6 from the table.
    expect(ruby.get_by_label("Your force")).to_have_value(str(ruby_force))
    expect(ruby.get_by_label("Opponent's force")).to_have_value(str(kai_force))
    ruby.get_by_label("Attacker").check()
    ruby.get_by_role("radio", name=re.compile("^Combat Patrol")).check()
    expect(ruby.get_by_role("group", name="Mission (Combat Patrol)")).to_be_visible()
    ruby.get_by_label("Or the D6 rolled at the table").fill("3")
    with ruby.expect_navigation():
        ruby.get_by_role("button", name="Use this roll").click()
    expect(ruby.get_by_test_id("mission-chosen")).to_contain_text("Supply Drop")
    expect(ruby.get_by_test_id("mission-chosen")).to_contain_text("rolled a 3")
    expect(ruby.get_by_role("radio", name=re.compile("^Combat Patrol"))).to_be_checked()
    ruby.get_by_role("group", name=re.compile(f"^Agendas for {RUBY_FORCE}")).get_by_label(
        "Assassins"
    ).check()
    ruby.get_by_role("group", name=re.compile(f"^Agendas for {KAI_FORCE}")).get_by_label(
        "Secure the Area"
    ).check()
    assert_page_ok(ruby)
    with ruby.expect_navigation():
        ruby.get_by_role("button", name="Muster: choose the units").click()
    assert ruby.url.endswith(f"{base}/muster"), ruby.url

    # Muster: the whole Order of Battle fits, so it starts ticked; a tick updates the
    # Power Level counter live.
    mine = ruby.get_by_role("group", name=f"{RUBY_FORCE} (Attacker): units in the army")
    theirs = ruby.get_by_role("group", name=f"{KAI_FORCE} (Defender): units in the army")
    pl_mine, pl_theirs = ruby.get_by_test_id("pl-0"), ruby.get_by_test_id("pl-1")
    expect(pl_mine).to_have_text("10")
    expect(pl_theirs).to_have_text("10")
    mine.get_by_role("checkbox", name=re.compile(r"^Intercessor Squad — 5 PL")).uncheck()
    expect(pl_mine).to_have_text("5")
    mine.get_by_role("checkbox", name=re.compile(r"^Intercessor Squad — 5 PL")).check()
    expect(pl_mine).to_have_text("10")
    mine.get_by_label("Warlord (optional)").select_option(label="Captain")
    theirs.get_by_label("Warlord (optional)").select_option(label="Warboss")
    expect(ruby.get_by_test_id("pl-counter")).to_contain_text("10 / 25 PL")
    assert_page_ok(ruby)
    with ruby.expect_navigation():
        ruby.get_by_role("button", name="Muster", exact=True).click()
    assert ruby.url.endswith(f"{base}/after"), ruby.url

    # After the game: VP, Marked for Greatness, kills and the Assassins mark by − / +.
    ours = ruby.locator("section", has=ruby.get_by_role("heading", name=re.compile(RUBY_FORCE)))
    foes = ruby.locator("section", has=ruby.get_by_role("heading", name=re.compile(KAI_FORCE)))
    ours.get_by_label("Victory points scored").fill("55")
    foes.get_by_label("Victory points scored").fill("30")
    ours.get_by_label("Marked for Greatness: Captain").check()
    # the Warboss's ☠ is ticked where its destroyers' call-out is (issue 49: Ruby's army)
    ours.get_by_label("Destroyed (takes an Out of Action test): Warboss", exact=True).check()
    expect(foes.get_by_label("Destroyed (takes an Out of Action test): Warboss")).to_have_count(0)
    for label, taps in (("Melee kills", 1), ("Ranged kills", 2), ("Assassins tally", 1)):
        plus = ruby.get_by_role("button", name=f"One more: {label}, Captain", exact=True)
        count = ruby.get_by_role("group", name=f"{label}, Captain", exact=True).locator("output")
        for n in range(1, taps + 1):
            plus.click()
            expect(count).to_have_text(str(n))
    # a tap too many is taken back with −
    ruby.get_by_role("button", name="One more: Melee kills, Captain", exact=True).click()
    melee = ruby.get_by_test_id(f"count-{captain}-destroyed_melee")
    expect(melee).to_have_text("2")
    ruby.get_by_role("button", name="One fewer: Melee kills, Captain", exact=True).click()
    expect(melee).to_have_text("1")
    assert_page_ok(ruby)
    with ruby.expect_navigation():
        ruby.get_by_role("button", name="Out of Action dice, one field per die").click()
    assert ruby.url.endswith(f"{base}/out_of_action"), ruby.url

    # Out of Action: Kai's Warboss rolled a 1 at the table.
    ooa = ruby.locator("section", has=ruby.get_by_role("heading", name=KAI_FORCE))
    ooa.get_by_label("Enter the dice rolled at the table").check()
    ooa.get_by_role("spinbutton", name=re.compile(r"^1\. .*Warboss")).fill("1")
    assert (
        "No dice needed for this army."
        in ruby.locator("section", has=ruby.get_by_role("heading", name=RUBY_FORCE)).inner_text()
    )
    assert_page_ok(ruby)
    with ruby.expect_navigation():
        ruby.get_by_role("button", name="Next: Review").click()
    assert ruby.url.endswith(f"{base}/review"), ruby.url

    # Review and submit: from a player, a proposal for Kai to confirm.
    expect(ruby.get_by_test_id("review-vp-0")).to_have_text("55")
    expect(ruby.get_by_test_id("review-vp-1")).to_have_text("30")
    # the summary first; what each unit did (and the dice typed) under "Unit by unit"
    ruby.get_by_text("Unit by unit: what was entered and what each unit gains").click()
    assert "dice rolled at the table: 1" in main_text(ruby)
    assert "Your opponent confirms the result" in main_text(ruby)
    assert_page_ok(ruby)
    with ruby.expect_navigation():
        ruby.get_by_role("button", name="Submit result").click()
    found = re.search(r"/battles/(\d+)$", ruby.url)
    assert found, ruby.url
    battle_id = int(found.group(1))
    expect(ruby.get_by_test_id("battle-status")).to_have_text("Proposed")
    assert ruby.get_by_role("button", name="Confirm result").count() == 0
    assert_page_ok(ruby)

    # --- 6. Kai finds it waiting on the dashboard and confirms it -----------------------
    kai.goto(f"/campaigns/{campaign_id}")
    waiting = kai.locator("#waiting")
    with kai.expect_navigation():
        waiting.get_by_role(
            "link", name=re.compile(rf"^Confirm this result: battle {battle_id}")
        ).click()
    assert kai.url.endswith(f"/battles/{battle_id}"), kai.url
    with kai.expect_navigation():
        kai.get_by_role("button", name="Confirm result").click()
    expect(kai.get_by_test_id("battle-status")).to_have_text("Resolved")
    ours_row = kai.get_by_role("row", name=re.compile(r"^Captain"))
    expect(ours_row).to_contain_text("+7 XP")
    expect(ours_row).to_contain_text("now Blooded")
    expect(kai.get_by_role("row", name=re.compile(r"^Warboss"))).to_contain_text(
        "failed (rolled 1)"
    )
    assert_page_ok(kai)

    # --- 7. Both answer their decisions, one at a time ----------------------------------
    # Kai: the Warboss failed its test; he takes a Battle Scar, and chooses Deep Scars.
    with kai.expect_navigation():
        kai.goto(f"/forces/{kai_force}/decisions")
    expect(kai.get_by_role("heading", level=1)).to_contain_text("Warboss")
    assert_page_ok(kai)
    kai.get_by_label("Battle Scar", exact=True).check()
    # the scar on the same page as the consequence (issue 40): one answer for both
    kai.get_by_label("Deep Scars").check()
    with kai.expect_navigation():
        kai.get_by_role("button", name="Answer").click()
    assert kai.url.endswith(f"/forces/{kai_force}"), kai.url  # nothing more waiting

    # Ruby: the Captain is Blooded and gains a Battle Trait of her choosing.
    ruby.goto(f"/forces/{ruby_force}/decisions")
    expect(ruby.get_by_role("heading", level=1)).to_contain_text("Captain")
    # the kind and its entries on one page (issue 40): the entry picks its kind
    ruby.get_by_label("5: Inspiring Hero").check()
    expect(ruby.get_by_label("Battle trait", exact=True)).to_be_checked()
    assert_page_ok(ruby)
    with ruby.expect_navigation():
        ruby.get_by_role("button", name="Answer").click()
    # Supply Drop's victor bonus (2 RP rather than 1) applies by itself: nothing more to answer.
    assert ruby.url.endswith(f"/forces/{ruby_force}"), ruby.url
    assert ruby.locator("#decisions-waiting").count() == 0

    # --- 8. Ruby buys a Requisition ------------------------------------------------------
    summary = ruby.locator("main ul.stats").first
    expect(summary).to_contain_text("5 Requisition points")
    assert "Supply: 10 / 50 Power used" in main_text(ruby)
    with ruby.expect_navigation():
        ruby.locator("main").get_by_role("button", name="Requisitions").click()
    with ruby.expect_navigation():
        ruby.get_by_role("button", name="Buy Increase Supply Limit (1 RP)").click()
    assert "Bought Increase Supply Limit." in main_text(ruby)
    assert "has 4 RP to spend · supply 10 / 55 Power" in main_text(ruby)
    assert_page_ok(ruby)

    # --- 9. The cards and the Order of Battle show it all --------------------------------
    ruby.goto(f"/forces/{ruby_force}")
    expect(summary).to_contain_text("4 Requisition points")
    expect(summary).to_contain_text("1 battle")
    expect(summary).to_contain_text("1 victory")
    assert "Supply: 10 / 55 Power used" in main_text(ruby)
    assert_page_ok(ruby)
    with ruby.expect_navigation():
        ruby.locator("main").get_by_role("link", name="Captain", exact=True).click()
    assert ruby.url.endswith(f"/cards/{captain}"), ruby.url
    expect(card_stat(ruby, captain, "Rank")).to_have_text("Blooded")
    expect(card_stat(ruby, captain, "Experience")).to_have_text("7 XP")
    expect(card_stat(ruby, captain, "Enemy units destroyed")).to_have_text("3")
    expect(ruby.locator(".card-honours")).to_contain_text("Inspiring Hero")
    assert_page_ok(ruby)
    ruby.goto(f"/cards/{squad}")
    expect(card_stat(ruby, squad, "Experience")).to_have_text("1 XP")

    kai.goto(f"/forces/{kai_force}")
    kai_summary = kai.locator("main ul.stats").first
    expect(kai_summary).to_contain_text("1 battle")
    expect(kai_summary).to_contain_text("0 victories")
    with kai.expect_navigation():
        kai.locator("main").get_by_role("link", name="Warboss", exact=True).click()
    expect(kai.locator(".card-scars")).to_contain_text("Deep Scars")
    expect(card_stat(kai, warboss, "Rank")).to_have_text("Battle-ready")
    assert_page_ok(kai)
    kai.goto(f"/cards/{boyz}")
    expect(card_stat(kai, boyz, "Experience")).to_have_text("1 XP")

    # The organizer's dashboard: standings, the battle, and the wider story.
    orga.goto(f"/campaigns/{campaign_id}")
    standings = orga.locator("#standings")
    expect(standings.locator(f"tr[data-force-id='{ruby_force}']")).to_contain_text("1/0/0")
    expect(standings.locator(f"tr[data-force-id='{kai_force}']")).to_contain_text("0/0/1")
    battle_row = orga.locator(f"#battles tr[data-battle-id='{battle_id}']")
    expect(battle_row).to_contain_text("Supply Drop")
    expect(battle_row).to_contain_text("Resolved")
    assert_page_ok(orga)
