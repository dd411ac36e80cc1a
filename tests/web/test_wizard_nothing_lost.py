"""The battle wizard loses nothing at the table (issue 12): a page sent from an older version
of the draft is refused with a conflict instead of overwriting newer entries; dice typed for
Out of Action are used even when nobody picked "enter"; the set-up is saved on every change
(agenda ticks, the battle size and its mission in one request)."""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlalchemy import Engine

from tests.api.helpers import dump
from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_wizard_pages import draft_row, script_post, start, through_muster, units


def version_on(html: str) -> int:
    found = re.search(r'name="version" value="(\d+)"', html)
    assert found, "the page carries no draft version"
    return int(found.group(1))


def test_a_change_from_an_older_page_is_a_conflict_not_an_overwrite(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    ruby, orga = world["ruby"], world["orga"]
    base, draft_id = through_muster(world)
    captain = units(ruby, world["ruby_force"])["Captain"]
    first_tab = version_on(ruby.get(f"{base}/after").text)
    second_tab = version_on(ruby.get(f"{base}/after").text)
    assert first_tab == second_tab

    # The second tab taps +: saved, and the answer gives the next version.
    tap = script_post(
        ruby,
        f"{base}/after/bump",
        {"bump": f"{captain}:destroyed_ranged:+1", "version": second_tab},
    )
    assert tap.status_code == 200
    assert tap.headers["X-Draft-Version"] == str(second_tab + 1)
    assert f'data-draft-version="{second_tab + 1}"' in tap.text

    # The first tab, still at the older version: its autosave, its tap and its "Next" are
    # all refused with a conflict, and nothing changes.
    before = dump(engine)
    stale_save = script_post(
        ruby, f"{base}/after/save", {"form": "after", "vp_0": "5", "version": first_tab}
    )
    assert stale_save.status_code == 409 and 'data-code="draft_conflict"' in stale_save.text
    stale_tap = script_post(
        ruby, f"{base}/after/bump", {"bump": f"{captain}:destroyed_ranged:+1", "version": first_tab}
    )
    assert stale_tap.status_code == 409
    stale_next = ruby.post(
        f"{base}/after",
        {"form": "after", "vp_0": "5", "vp_1": "7", "action": "next", "version": first_tab},
    )
    assert stale_next.status_code == 409
    assert 'data-code="draft_conflict"' in stale_next.text
    assert "changed on another screen" in stale_next.text
    # ...shown on the step as saved now, so the newer entries are what the player sees.
    assert f'data-testid="count-{captain}-destroyed_ranged">1</output>' in stale_next.text
    assert version_on(stale_next.text) == second_tab + 1
    assert dump(engine) == before

    # The organizer editing the same draft is another screen too.
    current = version_on(ruby.get(f"{base}/after").text)
    saved = script_post(
        orga, f"{base}/after/save", {"form": "after", "vp_0": "12", "vp_1": "9", "version": current}
    )
    assert saved.status_code == 200 and saved.headers["X-Draft-Version"] == str(current + 1)
    late = script_post(
        ruby, f"{base}/after/save", {"form": "after", "vp_0": "3", "version": current}
    )
    assert late.status_code == 409
    assert draft_row(engine, draft_id)["data"]["sides"][0]["vp"] == 12


def test_typed_out_of_action_dice_are_used_without_choosing_enter(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    ruby = world["ruby"]
    base, _draft_id = through_muster(world)
    squad = units(ruby, world["ruby_force"])["Intercessor Squad"]
    ruby.post(
        f"{base}/after",
        {"form": "after", "vp_0": "20", "vp_1": "30", f"destroyed_{squad}": "1", "action": "next"},
    )
    page = ruby.get(f"{base}/out_of_action")
    # Nothing is chosen for the player: "Roll here" is not ticked behind their back.
    assert not re.search(r'name="dice_mode_0" value="roll"[^>]*checked', page.text)
    moved = ruby.post(f"{base}/out_of_action", {"die_0_0": "1"})
    assert moved.status_code == 303
    review = ruby.get(f"{base}/review")
    assert "dice rolled at the table: <strong>1" in review.text
    # "Roll here" picked on purpose still rolls, whatever is typed.
    ruby.post(f"{base}/out_of_action", {"dice_mode_0": "roll", "die_0_0": "1"})
    assert "dice rolled at the table" not in ruby.get(f"{base}/review").text


def test_both_armies_dice_in_one_field(person: Callable[[str], Browser], engine: Engine) -> None:
    """Issue 40: one field for both armies' Out of Action dice, split by the units each
    army ticked ☠ (or at a "/"), kept as each army's dice, shown again as typed."""
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    base, draft_id = through_muster(world)
    squad = units(ruby, world["ruby_force"])["Intercessor Squad"]
    boss = next(iter(units(kai, world["kai_force"]).values()))
    ticked = {"form": "after", "vp_0": "20", "vp_1": "30", f"destroyed_{squad}": "1"}
    ticked[f"destroyed_{boss}"] = "1"
    ruby.post(f"{base}/after", {**ticked, "dice": "4 5", "action": "save"})
    sides = draft_row(engine, draft_id)["data"]["sides"]
    assert [(s["dice_mode"], s["dice"], s["dice_extra"]) for s in sides] == [
        ("enter", [4], ""),
        ("enter", [5], ""),
    ]
    assert 'value="4 / 5"' in ruby.get(f"{base}/after").text
    ruby.post(f"{base}/after", {**ticked, "dice": "3 / 2 6", "action": "save"})
    sides = draft_row(engine, draft_id)["data"]["sides"]
    assert [(s["dice"], s["dice_extra"]) for s in sides] == [([3], ""), ([2], "6")]
    ruby.post(f"{base}/after", {**ticked, "dice": "", "action": "save"})
    sides = draft_row(engine, draft_id)["data"]["sides"]
    assert [s["dice_mode"] for s in sides] == ["roll", "roll"]  # emptied: the app rolls


def test_the_set_up_is_saved_on_every_change(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    ruby = world["ruby"]
    base, draft_id = start(world)
    version = version_on(ruby.get(f"{base}/setup").text)
    form = {
        "force_id": world["ruby_force"],
        "opponent_id": world["kai_force"],
        "role": "attacker",
        "battle_size": "strike_force",
        "mission": "supplies_from_above",
        "agendas_0": ["assassins", "reaper"],
        "agendas_1": "reaper",
    }
    saved = script_post(ruby, f"{base}/setup/save", {**form, "version": version})
    assert saved.status_code == 200
    assert saved.headers["X-Draft-Version"] == str(version + 1)
    setup = draft_row(engine, draft_id)["data"]["setup"]
    # The new size and the mission picked with it arrive together: both kept.
    assert setup["battle_size"] == "strike_force" and setup["mission"] == "supplies_from_above"
    assert setup["agendas"] == [["assassins", "reaper"], ["reaper"]]
    page = ruby.get(f"{base}/setup").text  # a reload shows the ticks
    assert 'name="agendas_0" value="assassins" checked' in page
    assert 'name="agendas_1" value="reaper" checked' in page
    assert re.search(r'name="mission" value="supplies_from_above"\s+checked', page)
    stale = script_post(ruby, f"{base}/setup/save", {**form, "agendas_0": [], "version": version})
    assert stale.status_code == 409
    assert draft_row(engine, draft_id)["data"]["setup"]["agendas"][0] == ["assassins", "reaper"]
