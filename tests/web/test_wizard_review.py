"""The review shows what the result will do before it is submitted (issue 12): each unit's
XP by source, new ranks, Out of Action tests, RP and the decisions owed, worked out by the
rules engine itself (the result recorded in a savepoint and rolled back), so what the
opponent's confirmation applies is exactly what was shown."""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlalchemy import Engine, text

from app.edge.limits import PIN_FAILURES_PER_HOUR
from app.web import table_pass
from tests.api.helpers import dump
from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_wizard_pages import draft_row, script_post, through_muster, units


def confirmed_by(engine: Engine, battle: int) -> str:
    """Whose confirmation the battle's history records."""
    with engine.connect() as connection:
        return str(
            connection.execute(
                text(
                    "SELECT u.username FROM event e JOIN user_account u ON u.id = e.actor_id"
                    " WHERE e.battle_id = :b AND e.kind = 'result_confirmed'"
                ),
                {"b": battle},
            ).scalar_one()
        )


def test_the_review_shows_the_consequences_the_confirmation_applies(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    base, _draft_id = through_muster(world)
    mine, theirs = units(ruby, world["ruby_force"]), units(kai, world["kai_force"])
    captain = mine["Captain"]
    for _ in range(3):  # three kills: Dealers of Death
        script_post(ruby, f"{base}/after/bump", {"bump": f"{captain}:destroyed_ranged:+1"})
    script_post(ruby, f"{base}/after/bump", {"bump": f"{captain}:agenda.assassins:+1"})
    before = dump(engine)
    moved = ruby.post(
        f"{base}/after",
        {
            "form": "after",
            "vp_0": "40",
            "vp_1": "20",
            "marked_0": str(captain),
            f"destroyed_{theirs['Captain']}": "1",  # the Assassins mark's CHARACTER
            "action": "review",
        },
    )
    assert moved.status_code == 303 and moved.headers["location"] == f"{base}/review"
    # Working it out changed nothing but the draft.
    after = dump(engine)
    assert {k: v for k, v in after.items() if k != "battle_draft"} == {
        k: v for k, v in before.items() if k != "battle_draft"
    }
    page = ruby.get(f"{base}/review").text
    shown = re.search(r"<strong>Captain</strong>: ([+-]\d+) XP \(([^)]*)\)", page)
    assert shown, page
    assert shown.group(2) == "fought +1, Marked for Greatness +3, kills +1, Assassins +2"
    assert "now Blooded" in page.split("<strong>Captain</strong>", 1)[1].split("</li>", 1)[0]
    assert "Requisition point" in page
    their_captain = page.split("consequences-1", 1)[1].split("<strong>Captain</strong>")[1]
    assert "Out of Action " in their_captain.split("</li>", 1)[0]  # rolled by the app
    xp_shown = int(shown.group(1))

    submitted = ruby.post(f"{base}/review", {"action": "submit"})
    assert submitted.status_code == 303
    battle = int(submitted.headers["location"].rsplit("/", 1)[1])
    assert kai.post(f"/battles/{battle}/confirm", {}).status_code == 303
    card = ruby.api("GET", f"/cards/{captain}")
    assert card["xp"] == xp_shown
    # The Captain's Battle Honour offers only what it can take: no Psychic Fortitude for a
    # unit that is not a PSYKER; a Crusade Relic, since it is a CHARACTER.
    honour = ruby.get(f"/forces/{world['ruby_force']}/decisions").text
    assert "Battle Honour: Captain" in honour
    assert 'value="psychic_fortitude"' not in honour
    assert 'value="crusade_relic"' in honour and 'value="battle_trait"' in honour


def test_a_result_the_rules_refuse_is_shown_on_the_review(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    base, _draft_id = through_muster(world, agendas_1="reaper")
    theirs = units(kai, world["kai_force"])
    # Two of Kai's units tie for Reaper and nobody said which one scores it.
    for name in ("Captain", "Hellblasters"):
        script_post(ruby, f"{base}/after/bump", {"bump": f"{theirs[name]}:destroyed_ranged:+1"})
    ruby.post(f"{base}/after", {"form": "after", "vp_0": "20", "vp_1": "30", "action": "review"})
    page = ruby.get(f"{base}/review").text
    assert "The rules would refuse this result" in page


def test_the_opponent_confirms_on_the_recorders_phone(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    base, _draft_id = through_muster(world)
    ruby.post(f"{base}/after", {"form": "after", "vp_0": "40", "vp_1": "20", "action": "review"})
    submitted = ruby.post(f"{base}/review", {"action": "submit"})
    battle = int(submitted.headers["location"].rsplit("/", 1)[1])
    page = ruby.get(f"/battles/{battle}").text
    assert "kai at the table? Confirm here" in page
    assert "at the table?" not in kai.get(f"/battles/{battle}").text  # only on the recorder's

    before = dump(engine)
    wrong = ruby.post(f"/battles/{battle}/confirm-here", {"password": "not kai's password"})
    assert wrong.status_code == 422
    assert 'data-code="password_invalid"' in wrong.text
    assert "That is not kai&#39;s password." in wrong.text
    assert dump(engine) == before
    confirmed = ruby.post(f"/battles/{battle}/confirm-here", {"password": "a good password"})
    assert confirmed.status_code == 303
    assert ruby.api("GET", f"/battles/{battle}")["status"] == "resolved"
    assert confirmed_by(engine, battle) == "kai"  # the opponent, on the recorder's phone
    again = ruby.post(f"/battles/{battle}/confirm-here", {"password": "a good password"})
    assert again.status_code == 409


def test_the_opponent_confirms_with_their_pin_on_the_review_step(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    """Issue 40: the opponent checks the review on the recorder's phone and types their
    PIN there: one tap submits and confirms, and the phone goes on to their first decision,
    which the table pass lets them answer. A wrong PIN submits nothing."""
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    base, draft_id = through_muster(world)
    captain = units(kai, world["kai_force"])["Captain"]
    after = {"form": "after", "vp_0": "40", "vp_1": "20", "action": "review"}
    after |= {f"destroyed_{captain}": "1", "dice": "1"}  # Kai's Captain fails its test
    assert ruby.post(f"{base}/after", after).status_code == 303
    assert 'name="pin"' not in ruby.get(f"{base}/review").text  # Kai has no PIN yet
    kai.api("POST", "/auth/pin", json={"current_password": "a good password", "pin": "4827"})
    page = ruby.get(f"{base}/review").text
    assert 'name="pin"' in page and "Submit and confirm with PIN as kai" in page
    assert "Submit result" in page  # or submitted alone, for Kai to confirm later

    before = dump(engine)
    wrong = ruby.post(f"{base}/review", {"action": "submit_confirm", "pin": "1111"})
    assert wrong.status_code == 422 and 'data-code="pin_incorrect"' in wrong.text
    assert "Nothing was submitted" in wrong.text and 'aria-invalid="true"' in wrong.text
    assert dump(engine) == before
    assert table_pass.COOKIE not in ruby.client.cookies

    done = ruby.post(f"{base}/review", {"action": "submit_confirm", "pin": "4827"})
    battle = draft_row(engine, draft_id)["battle_id"]
    assert ruby.api("GET", f"/battles/{battle}")["status"] == "resolved"
    waiting = kai.api("GET", f"/forces/{world['kai_force']}/decisions?status=pending")["items"]
    assert [(d["kind"], d["card_id"]) for d in waiting] == [("out_of_action", captain)]
    assert done.status_code == 303
    assert done.headers["location"] == f"/decisions/{waiting[0]['id']}"
    assert table_pass.COOKIE in ruby.client.cookies
    shown = ruby.get(done.headers["location"]).text
    assert f'action="/decisions/{waiting[0]["id"]}/answer-at-table"' in shown
    assert confirmed_by(engine, battle) == "kai"


def test_wrong_pins_on_the_review_step_lock_the_pin_as_on_the_battle_page(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    base, draft_id = through_muster(world)
    ruby.post(f"{base}/after", {"form": "after", "vp_0": "40", "vp_1": "20", "action": "review"})
    kai.api("POST", "/auth/pin", json={"current_password": "a good password", "pin": "4827"})
    for guess in range(PIN_FAILURES_PER_HOUR):
        sent = ruby.post(f"{base}/review", {"action": "submit_confirm", "pin": f"{guess:04d}"})
        assert sent.status_code == 422
    before = dump(engine)
    locked = ruby.post(f"{base}/review", {"action": "submit_confirm", "pin": "4827"})
    assert locked.status_code == 429 and 'data-code="pin_locked"' in locked.text
    assert "Nothing was submitted" in locked.text
    assert dump(engine) == before
    assert draft_row(engine, draft_id)["step"] == "review"
    battle = draft_row(engine, draft_id)["battle_id"]
    notice = kai.get("/").text  # Kai hears of the lock, as after wrong PINs on the battle page
    assert "Your confirmation PIN was locked" in notice and f'href="/battles/{battle}"' in notice
    submitted = ruby.post(f"{base}/review", {"action": "submit"})  # Kai confirms later
    assert submitted.status_code == 303
    assert ruby.api("GET", f"/battles/{battle}")["status"] == "proposed"


def test_after_roll_for_it_the_page_says_what_was_rolled(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    base, _draft_id = through_muster(world)
    mine = units(ruby, world["ruby_force"])
    squad, hellblasters = mine["Intercessor Squad"], mine["Hellblasters"]
    destroyed = {f"destroyed_{squad}": "1", f"destroyed_{hellblasters}": "1"}
    ruby.post(f"{base}/after", {"form": "after", "vp_0": "10", "vp_1": "30", **destroyed})
    ruby.post(
        f"{base}/after",
        {"form": "after", "vp_0": "10", "vp_1": "30", **destroyed, "action": "next"},
    )
    ruby.post(f"{base}/out_of_action", {"die_0_0": "1", "die_0_1": "1"})  # both fail
    submitted = ruby.post(f"{base}/review", {"action": "submit"})
    battle = int(submitted.headers["location"].rsplit("/", 1)[1])
    assert kai.post(f"/battles/{battle}/confirm", {}).status_code == 303
    first = ruby.get(f"/forces/{world['ruby_force']}/decisions", follow_redirects=False)
    decision = int(first.headers["location"].rsplit("/", 1)[1])
    answered = ruby.post(
        f"/decisions/{decision}/answer",
        {"consequence": "devastating_blow", "dice_mode": "enter", "dice": "4"},
    )
    # the next decision says what the last roll was and what it meant
    assert answered.status_code == 303
    assert answered.headers["location"].endswith(f"?after={decision}")
    page = ruby.get(answered.headers["location"]).text
    assert 'data-testid="previous-outcome"' in page
    assert "rolled 4 (D6)" in page and "So it loses 4 XP" in page
    assert "The Devastating Blow to Intercessor Squad: rolled 4" in page  # names as they are
    # the decision just answered, seen again, points on to the one still waiting
    done = ruby.get(f"/decisions/{decision}").text
    assert "Next waiting decision</a> (1 left)" in done
    # the last one, a Battle Scar rolled here: the answered decision names the scar gained
    following = int(answered.headers["location"].split("?")[0].rsplit("/", 1)[1])
    ruby.post(f"/decisions/{following}/answer", {"consequence": "battle_scar"})
    scar = ruby.get(f"/forces/{world['ruby_force']}/decisions", follow_redirects=False)
    scar_id = int(scar.headers["location"].rsplit("/", 1)[1])
    last = ruby.post(
        f"/decisions/{scar_id}/answer", {"scar": "", "dice_mode": "enter", "dice": "2"}
    )
    assert last.headers["location"] == f"/decisions/{scar_id}"
    page = ruby.get(last.headers["location"]).text
    assert 'data-testid="decision-outcome"' in page and "rolled 2 (D6)" in page
    assert "Gained " in page
    # the last one answered: no "Next waiting decision" to a list with nothing in it
    assert "Next waiting decision" not in page and 'data-testid="none-left"' in page
