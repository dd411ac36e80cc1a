"""Two screens on one battle (issue 49), through the wizard's pages and script requests:

- a victory-point value the step cannot take is refused as typed, never stored as empty;
- a submit that came after the other screen's says what counted, compared with its own;
- a counter both screens moved while apart is marked, shown on the step and the review, and
  settled by keeping the sum or one screen's count.

On SQLite and PostgreSQL (the ``engine`` fixture)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import Engine

from tests.api.helpers import dump
from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_wizard_nothing_lost import version_on
from tests.web.test_wizard_pages import draft_row, script_post, through_muster, units


@pytest.mark.parametrize("typed", ["4.5", "-3", "1e2", "250", "abc"])
def test_victory_points_the_step_cannot_take_are_refused_as_typed(
    person: Callable[[str], Browser], engine: Engine, typed: str
) -> None:
    world = campaign_with_two_players(person)
    ruby = world["ruby"]
    base, draft_id = through_muster(world)
    version = version_on(ruby.get(f"{base}/after").text)
    saved = script_post(ruby, f"{base}/after/save", {"vp_0": "45", "version": version})
    assert saved.status_code == 200
    before = dump(engine)
    refused = script_post(ruby, f"{base}/after/save", {"vp_0": typed, "version": version + 1})
    assert refused.status_code == 422
    assert 'data-code="victory_points_invalid"' in refused.text
    assert "whole number from 0 to 200" in refused.text and typed in refused.text
    assert dump(engine) == before
    assert draft_row(engine, draft_id)["data"]["sides"][0]["vp"] == 45
    # Without the script: the step again, the reason beside the field, nothing stored.
    page = ruby.post(
        f"{base}/after", {"vp_0": typed, "vp_1": "3", "action": "next", "version": version + 1}
    )
    assert page.status_code == 422 and 'id="f-vp_0-error"' in page.text
    assert dump(engine) == before


def _to_review(world: dict[str, object], base: str, vp: tuple[str, str]) -> str:
    ruby = world["ruby"]
    assert isinstance(ruby, Browser)
    version = version_on(ruby.get(f"{base}/after").text)
    done = ruby.post(
        f"{base}/after",
        {"vp_0": vp[0], "vp_1": vp[1], "action": "review", "version": version},
    )
    assert done.status_code == 303, done.text
    return ruby.get(f"{base}/review").text


def _seen(html: str) -> dict[str, str]:
    return {
        "version": str(version_on(html)),
        **{
            f"seen_vp_{i}": html.split(f'name="seen_vp_{i}" value="')[1].split('"')[0]
            for i in (0, 1)
        },
    }


def test_a_submit_after_another_screens_says_what_counted(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    ruby = world["ruby"]
    base, draft_id = through_muster(world)
    stale = _seen(_to_review(world, base, ("60", "40")))  # this phone's review: 60-40
    fresh = _seen(_to_review(world, base, ("65", "40")))  # the other phone's: 65-40
    first = ruby.post(f"{base}/review", {"action": "submit", **fresh})
    assert first.status_code == 303 and first.headers["location"].startswith("/battles/")
    before = dump(engine)
    late = ruby.post(f"{base}/review", {"action": "submit", **stale})
    assert late.status_code == 409
    assert 'data-code="draft_submitted_elsewhere"' in late.text
    assert "Submitted from another screen: 65–40, not your 60–40" in late.text
    assert first.headers["location"] in late.text  # a link to the result that counted
    assert dump(engine) == before
    # Both phones tapping Submit on the same review: the later one is told all the same.
    same = ruby.post(f"{base}/review", {"action": "submit", **fresh})
    assert same.status_code == 409
    assert "Submitted from another screen: 65–40, the same entries as yours" in same.text
    assert draft_row(engine, draft_id)["step"] == "finished"


def _tap(who: Browser, base: str, spec: str, screen: str, seen: int) -> int:
    answer = script_post(
        who, f"{base}/after/bump", {"bump": spec, "screen": screen, "seen": str(seen)}
    )
    assert answer.status_code == 200, answer.text
    return int(answer.headers["X-Draft-Version"])


def test_a_counter_moved_on_two_screens_while_apart_is_told_and_settled(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    ruby = world["ruby"]
    base, draft_id = through_muster(world)
    captain = units(ruby, world["ruby_force"])["Captain"]
    spec = f"{captain}:destroyed_ranged:+1"
    apart = version_on(ruby.get(f"{base}/after").text)
    # Phone A taps three times; phone B, which saw none of them, once.
    for _ in range(3):
        seen_by_a = _tap(ruby, base, spec, "phone-a", apart)
    _tap(ruby, base, spec, "phone-b", apart)
    page = ruby.get(f"{base}/after").text
    assert "Moved on two screens while apart" in page
    assert 'data-screen="phone-a" data-moved="3">+3' in page
    assert 'data-screen="phone-b" data-moved="1">+1' in page
    assert "Keep 4 (the sum)" in page and "Keep 3 (only +3)" in page
    assert "Keep 1 (only +1)" in page
    # A tap made after seeing the other screen's is no overlap; later taps add to the parts.
    _tap(ruby, base, spec, "phone-a", seen_by_a + 1)
    assert "Keep 5 (the sum)" in ruby.get(f"{base}/after").text
    # Keeping phone B's count takes phone A's four taps back.
    settled = ruby.post(
        f"{base}/after/settle", {"counter": f"{captain}:destroyed_ranged", "keep": "phone-b"}
    )
    assert settled.status_code == 303
    state = draft_row(engine, draft_id)["data"]
    assert state["units"][str(captain)]["destroyed_ranged"] == 1
    assert not state["overlaps"]
    assert "Moved on two screens" not in ruby.get(f"{base}/after").text
    # The other phone's answer, arriving after: nothing left to settle, nothing changes.
    before = dump(engine)
    again = ruby.post(
        f"{base}/after/settle", {"counter": f"{captain}:destroyed_ranged", "keep": "sum"}
    )
    assert again.status_code == 303 and dump(engine) == before


def test_taps_of_one_screen_or_seen_by_the_other_are_no_overlap(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    ruby = world["ruby"]
    base, draft_id = through_muster(world)
    captain = units(ruby, world["ruby_force"])["Captain"]
    spec = f"{captain}:destroyed_ranged:+1"
    version = version_on(ruby.get(f"{base}/after").text)
    version = _tap(ruby, base, spec, "phone-a", version)
    version = _tap(ruby, base, spec, "phone-a", version - 1)  # one screen, apart from itself
    version = _tap(ruby, base, spec, "phone-b", version)  # the other, having seen both
    _tap(ruby, base, f"{captain}:destroyed_melee:+1", "phone-a", 0)  # another counter
    state = draft_row(engine, draft_id)["data"]
    assert state["units"][str(captain)]["destroyed_ranged"] == 3
    assert not state.get("overlaps")
    # The review says it too, once there is something to say.
    _tap(ruby, base, spec, "phone-c", 0)
    review = _to_review(world, base, ("10", "5"))
    assert "Moved on two screens while apart" in review and "Keep 4 (the sum)" in review
