"""Survivor's Half-strength input on the after-the-game step (issue 13, ruling 24): offered
only to a unit that can score Survivor, kept in the draft, and applied by the rules engine
(a unit that ended below Half-strength gets one mark at most)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_wizard_pages import script_post, setup_form, start, units


def survivor_battle(world: dict[str, Any]) -> tuple[str, dict[str, int], dict[str, int]]:
    ruby, kai = world["ruby"], world["kai"]
    base, _draft_id = start(world)
    form = setup_form(world, mission="supply_drop", action="next", agendas_0="survivor")
    assert ruby.post(f"{base}/setup", form).status_code == 303
    mine, theirs = units(ruby, world["ruby_force"]), units(kai, world["kai_force"])
    mustered = ruby.post(
        f"{base}/muster",
        {"roster_0": list(mine.values()), "roster_1": list(theirs.values()), "action": "muster"},
    )
    assert mustered.status_code == 303, mustered.text
    return base, mine, theirs


def after_form(**extra: str) -> dict[str, str]:
    return {"form": "after", "vp_0": "30", "vp_1": "20", "action": "review", **extra}


def test_the_half_strength_box_is_offered_with_survivor_and_kept(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    ruby = world["ruby"]
    base, mine, theirs = survivor_battle(world)
    page = ruby.get(f"{base}/after").text
    captain = mine["Captain"]
    assert f'name="below_half_{captain}"' in page
    # Survivor is Ruby's Agenda only: Kai's units get no such box.
    assert all(f'name="below_half_{card}"' not in page for card in theirs.values())
    saved = ruby.post(f"{base}/after", after_form(**{f"below_half_{captain}": "1"}))
    assert saved.status_code == 303, saved.text
    assert "checked> Ended below Half-strength" in ruby.get(f"{base}/after").text


def test_a_unit_below_half_strength_is_refused_a_second_survivor_mark(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    ruby = world["ruby"]
    base, mine, _theirs = survivor_battle(world)
    captain = mine["Captain"]
    for _ in range(2):
        script_post(ruby, f"{base}/after/bump", {"bump": f"{captain}:agenda.survivor:+1"})
    ruby.post(f"{base}/after", after_form(**{f"below_half_{captain}": "1"}))
    review = ruby.get(f"{base}/review").text
    assert "second mark needs a unit that is not below Half-strength" in review
    # Without the box the two marks stand.
    ruby.post(f"{base}/after", after_form())
    review = ruby.get(f"{base}/review").text
    assert "second mark needs" not in review
    assert "Survivor +" in review
