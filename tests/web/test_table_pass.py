"""Confirm and decide on one phone (issue 21): the opponent who confirms on the recorder's
phone may answer their own decisions of that battle there, one after the other, then the
phone is handed back. The pass names one player and one battle, lasts minutes, and is
checked on every answer. Pages, on both databases."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, text

from app.web import table_pass
from tests.api.helpers import dump
from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_one_phone import PASSWORD, _cards


def _kai_loses_a_unit(person: Callable[[str], Browser], ruby_too: bool = False) -> dict[str, Any]:
    """Ruby beats Kai; Kai's first unit is destroyed and fails its Out of Action test, so
    Kai owes a decision once the result is confirmed (and Ruby one too, if asked)."""
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    forces = (world["ruby_force"], world["kai_force"])
    rosters = (_cards(ruby, forces[0]), _cards(kai, forces[1]))
    battle = ruby.api(
        "POST",
        f"/campaigns/{world['campaign_id']}/battles",
        json={
            "battle_size": "combat_patrol",
            "mission": "supply_drop",
            "sides": [
                {"force_id": forces[i], "role": role, "roster": rosters[i], "agendas": [a]}
                for i, (role, a) in enumerate(
                    (("attacker", "assassins"), ("defender", "cull_the_hordes"))
                )
            ],
        },
    )["id"]
    lost = {"card_id": rosters[1][0], "destroyed": True}
    hers = [{"card_id": rosters[0][0], "destroyed": True}] if ruby_too else []
    ruby.api(
        "POST",
        f"/battles/{battle}/result",
        json={
            "sides": [
                {"force_id": forces[0], "victory_points": 40, "units": hers, "dice": [1]},
                {"force_id": forces[1], "victory_points": 20, "units": [lost], "dice": [1]},
            ]
        },
    )
    return {**world, "battle_id": battle}


def _pending(who: Browser, force_id: int) -> list[dict[str, Any]]:
    items = who.api("GET", f"/forces/{force_id}/decisions?status=pending")["items"]
    assert isinstance(items, list)
    return items


def test_the_opponent_answers_their_own_decisions_then_hands_the_phone_back(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = _kai_loses_a_unit(person)
    ruby, kai, battle = world["ruby"], world["kai"], world["battle_id"]
    confirmed = ruby.post(f"/battles/{battle}/confirm-here", {"password": PASSWORD})
    assert table_pass.COOKIE in ruby.client.cookies
    kais = _pending(kai, world["kai_force"])
    assert [d["kind"] for d in kais] == ["out_of_action"]
    decision = kais[0]["id"]
    # straight on to Kai's first decision (issue 40); the battle page offers it too
    assert confirmed.status_code == 303
    assert confirmed.headers["location"] == f"/decisions/{decision}"
    page = ruby.get(f"/battles/{battle}").text
    assert 'data-testid="at-table"' in page and "Answer as kai" in page

    shown = ruby.get(f"/decisions/{decision}").text
    assert f'action="/decisions/{decision}/answer-at-table"' in shown
    assert "On this phone as <strong>kai</strong>" in shown
    answered = ruby.post(
        f"/decisions/{decision}/answer-at-table", {"consequence": "devastating_blow"}
    )
    # the last of Kai's: back to the battle, the pass gone
    assert answered.status_code == 303
    assert answered.headers["location"] == f"/battles/{battle}?handed_back=1"
    assert table_pass.COOKIE not in ruby.client.cookies
    back = ruby.get(answered.headers["location"]).text
    assert 'data-testid="handed-back"' in back and 'data-testid="at-table"' not in back
    assert _pending(kai, world["kai_force"]) == []
    with engine.connect() as connection:  # the history names Kai as the one who answered
        actors = connection.execute(
            text(
                "SELECT DISTINCT u.username FROM event e JOIN user_account u ON u.id = e.actor_id"
                " WHERE e.kind = 'decision_answered'"
            )
        ).scalars()
        assert list(actors) == ["kai"]


def test_the_pass_answers_nothing_else(person: Callable[[str], Browser], engine: Engine) -> None:
    """Not Ruby's own decision, not after "hand back", not forged, not expired, not
    without the opponent having confirmed: each a 403 that changes nothing."""
    world = _kai_loses_a_unit(person, ruby_too=True)
    ruby, kai, battle = world["ruby"], world["kai"], world["battle_id"]
    decision = None

    def refused(code: str) -> None:
        assert decision is not None
        before = dump(engine)
        sent = ruby.post(
            f"/decisions/{decision}/answer-at-table", {"consequence": "devastating_blow"}
        )
        assert sent.status_code == 403 and f'data-code="{code}"' in sent.text, sent.text[:300]
        assert dump(engine) == before

    # Kai confirms from his own phone: the recorder's phone holds no pass
    assert kai.post(f"/battles/{battle}/confirm", {}).status_code == 303
    decision = _pending(kai, world["kai_force"])[0]["id"]
    refused("table_pass_missing")
    assert "answer-at-table" not in ruby.get(f"/decisions/{decision}").text

    def hold(value: str) -> None:  # as the server sets it (httpx files it under .local)
        ruby.client.cookies.set(table_pass.COOKIE, value, domain="testserver.local")

    # a forged pass (Kai's, this battle, a wrong signature) and an expired genuine one
    payload = f"{kai.api('GET', '/auth/me')['id']}.{battle}.{int(time.time()) + 600}"
    hold(f"{payload}.{'0' * 64}")
    refused("table_pass_missing")
    stale = f"{kai.api('GET', '/auth/me')['id']}.{battle}.{int(time.time()) - 1}"
    hold(f"{stale}.{table_pass._signature(stale)}")
    refused("table_pass_missing")

    # a genuine pass for Kai does not answer Ruby's own decision of the same battle
    good = f"{kai.api('GET', '/auth/me')['id']}.{battle}.{int(time.time()) + 600}"
    hold(f"{good}.{table_pass._signature(good)}")
    decision = _pending(ruby, world["ruby_force"])[0]["id"]
    refused("table_pass_not_for_this")
    # and once handed back, it is gone
    assert ruby.post(f"/battles/{battle}/hand-back", {}).status_code == 303
    assert table_pass.COOKIE not in ruby.client.cookies
    decision = _pending(kai, world["kai_force"])[0]["id"]
    refused("table_pass_missing")
