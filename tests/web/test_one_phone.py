"""Confirming on one phone (issue 12): the opponent's short PIN, the QR code of the confirm
link for their own phone, and the campaign setting that sends an organizer's own battles to
the opponent for confirmation. Pages and JSON API, on both databases."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

import segno
from sqlalchemy import Engine, text

from app.edge.limits import PIN_FAILURES_PER_HOUR
from app.rules.data import UnitType, rulebook
from tests.api.helpers import dump
from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_battle_pages import proposed_battle
from tests.web.test_wizard_pages import through_muster
from tests.web.test_wizard_review import confirmed_by

PASSWORD = "a good password"  # every test person's (tests/web/conftest.py)


def _raw(who: Browser, method: str, url: str, **kwargs: Any) -> Any:
    """The JSON API without Browser.api's success check (for refusals)."""
    token = who.client.get("/api/v1/auth/csrf").json()["csrf_token"]
    return who.client.request(method, f"/api/v1{url}", headers={"X-CSRF-Token": token}, **kwargs)


def _cards(who: Browser, force_id: int) -> list[int]:
    return [c["id"] for c in who.api("GET", f"/forces/{force_id}")["cards"]]


def _battle(recorder: Browser, campaign_id: int, forces: tuple[int, int], rosters: Any) -> int:
    battle = recorder.api(
        "POST",
        f"/campaigns/{campaign_id}/battles",
        json={
            "battle_size": "combat_patrol",
            "mission": "supply_drop",
            "sides": [
                {
                    "force_id": forces[0],
                    "role": "attacker",
                    "roster": rosters[0],
                    "agendas": ["assassins"],
                },
                {
                    "force_id": forces[1],
                    "role": "defender",
                    "roster": rosters[1],
                    "agendas": ["cull_the_hordes"],
                },
            ],
        },
    )
    recorder.api(
        "POST",
        f"/battles/{battle['id']}/result",
        json={
            "sides": [
                {"force_id": forces[0], "victory_points": 40, "units": []},
                {"force_id": forces[1], "victory_points": 20, "units": []},
            ]
        },
    )
    return int(battle["id"])


def _proposed(person: Callable[[str], Browser]) -> dict[str, Any]:
    """Ruby enters a win over Kai: the result waits for Kai."""
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    forces = (world["ruby_force"], world["kai_force"])
    rosters = (_cards(ruby, forces[0]), _cards(kai, forces[1]))
    return {**world, "battle_id": _battle(ruby, world["campaign_id"], forces, rosters)}


def _organizer_plays(person: Callable[[str], Browser]) -> dict[str, Any]:
    """The organizer brings a force of their own to the campaign and plays Kai."""
    world = campaign_with_two_players(person)
    orga, kai = world["orga"], world["kai"]
    force = orga.api(
        "POST",
        f"/campaigns/{world['campaign_id']}/forces",
        json={"name": "Orga's Own", "crusade_faction": "IMPERIUM"},
    )
    orga.api(
        "POST",
        f"/forces/{force['id']}/cards",
        json={"name": "Lieutenant", "power_rating": 4, "keywords": ["IMPERIUM", "CHARACTER"]},
    )
    return {
        **world,
        "orga_force": force["id"],
        "rosters": (_cards(orga, force["id"]), _cards(kai, world["kai_force"])),
    }


# --- the PIN ---------------------------------------------------------------------------------


def test_a_pin_is_set_with_the_current_password_and_never_shown(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    kai = person("kai")
    assert kai.api("GET", "/auth/me")["has_pin"] is False
    before = dump(engine)
    wrong = _raw(kai, "POST", "/auth/pin", json={"current_password": "nope", "pin": "4827"})
    assert wrong.status_code == 422 and wrong.json()["code"] == "password_invalid"
    assert wrong.json()["field"] == "current_password"  # the field the request named
    bad = _raw(kai, "POST", "/auth/pin", json={"current_password": PASSWORD, "pin": "12ab"})
    assert bad.status_code == 422 and bad.json()["code"] == "pin_invalid"
    short = _raw(kai, "POST", "/auth/pin", json={"current_password": PASSWORD, "pin": "123"})
    assert short.status_code == 422 and short.json()["code"] == "pin_invalid"
    assert dump(engine) == before  # refused: nothing written
    done = kai.api("POST", "/auth/pin", json={"current_password": PASSWORD, "pin": "4827"})
    assert done["has_pin"] is True and "4827" not in str(done) and "pin_hash" not in done
    with engine.connect() as connection:
        stored = connection.execute(
            text("SELECT pin_hash FROM user_account WHERE username = 'kai'")
        ).scalar_one()
    assert stored.startswith("$argon2") and "4827" not in stored
    assert kai.api("GET", "/auth/me")["has_pin"] is True
    cleared = kai.api("POST", "/auth/pin", json={"current_password": PASSWORD, "pin": None})
    assert cleared["has_pin"] is False


def test_the_account_page_sets_the_pin(person: Callable[[str], Browser], engine: Engine) -> None:
    kai = person("kai")
    page = kai.get("/account").text
    assert "Confirmation PIN" in page and "No PIN is set." in page
    before = dump(engine)
    refused = kai.post("/account/pin", {"pin": "4827", "current_password": "wrong one"})
    assert refused.status_code == 422 and 'data-code="password_invalid"' in refused.text
    assert dump(engine) == before
    saved = kai.post("/account/pin", {"pin": "4827", "current_password": PASSWORD})
    assert saved.status_code == 303 and saved.headers["location"] == "/account?pin=set#pin"
    page = kai.get("/account?pin=set").text
    assert "PIN saved." in page and "A PIN is set." in page and "4827" not in page


def test_the_opponent_confirms_with_their_pin_on_the_recorders_phone(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = _proposed(person)
    ruby, kai, battle = world["ruby"], world["kai"], world["battle_id"]
    url = f"/battles/{battle}/confirm-here"
    assert 'name="pin"' not in ruby.get(f"/battles/{battle}").text  # Kai has no PIN yet
    before = dump(engine)
    unset = ruby.post(url, {"pin": "4827"})
    assert unset.status_code == 422 and 'data-code="pin_not_set"' in unset.text
    assert dump(engine) == before

    kai.api("POST", "/auth/pin", json={"current_password": PASSWORD, "pin": "4827"})
    page = ruby.get(f"/battles/{battle}").text
    assert 'name="pin"' in page and "Confirm with PIN as kai" in page
    before = dump(engine)
    wrong = ruby.post(url, {"pin": "1111"})
    assert wrong.status_code == 422 and 'data-code="pin_incorrect"' in wrong.text
    assert "That is not kai&#39;s PIN." in wrong.text
    assert dump(engine) == before
    confirmed = ruby.post(url, {"pin": "4827"})
    assert confirmed.status_code == 303
    assert ruby.api("GET", f"/battles/{battle}")["status"] == "resolved"
    assert confirmed_by(engine, battle) == "kai"


def test_wrong_pins_lock_the_account_pin_but_not_the_password(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    """Issue 19: the PIN has its own per-account limit (5 wrong an hour), far below the
    log-in's 10 a minute, so a 4-digit PIN cannot be guessed in hours."""
    world = _proposed(person)
    ruby, kai, battle = world["ruby"], world["kai"], world["battle_id"]
    kai.api("POST", "/auth/pin", json={"current_password": PASSWORD, "pin": "4827"})
    url = f"/battles/{battle}/confirm-here"
    for guess in range(PIN_FAILURES_PER_HOUR):
        assert ruby.post(url, {"pin": f"{guess:04d}"}).status_code == 422
    before = dump(engine)
    locked = ruby.post(url, {"pin": "4827"})  # even the right PIN waits now
    assert locked.status_code == 429 and 'data-code="pin_locked"' in locked.text
    assert 60 < int(locked.headers["Retry-After"]) <= 3600
    assert "confirm with the password" in locked.text
    assert dump(engine) == before
    assert ruby.api("GET", f"/battles/{battle}")["status"] == "proposed"
    confirmed = ruby.post(url, {"password": PASSWORD})
    assert confirmed.status_code == 303
    assert ruby.api("GET", f"/battles/{battle}")["status"] == "resolved"
    # kai hears of it on every page until the PIN changes or the notice is dismissed
    notice = kai.get("/")
    assert "Your confirmation PIN was locked" in notice.text
    assert f'href="/battles/{battle}"' in notice.text
    assert "Your confirmation PIN was locked" not in ruby.get("/").text
    kai.api("POST", "/auth/pin", json={"current_password": PASSWORD, "pin": "5938"})
    assert "Your confirmation PIN was locked" not in kai.get("/").text


def test_the_pin_lock_notice_can_be_dismissed(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = _proposed(person)
    ruby, kai, battle = world["ruby"], world["kai"], world["battle_id"]
    kai.api("POST", "/auth/pin", json={"current_password": PASSWORD, "pin": "4827"})
    for guess in range(PIN_FAILURES_PER_HOUR):
        ruby.post(f"/battles/{battle}/confirm-here", {"pin": f"{guess:04d}"})
    assert "Your confirmation PIN was locked" in kai.get("/account").text
    assert kai.post("/account/pin-notice/dismiss", {}).status_code == 303
    assert "Your confirmation PIN was locked" not in kai.get("/account").text


def test_wrong_passwords_at_the_table_are_rate_limited_like_log_in(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = _proposed(person)
    ruby, battle = world["ruby"], world["battle_id"]
    url = f"/battles/{battle}/confirm-here"
    for _ in range(10):  # log-in allows 10 tries a minute
        assert ruby.post(url, {"password": "not-it-at-all"}).status_code == 422
    before = dump(engine)
    limited = ruby.post(url, {"password": PASSWORD})
    assert limited.status_code == 429 and 'data-code="rate_limited"' in limited.text
    assert dump(engine) == before


# --- the QR code ------------------------------------------------------------------------------


def test_the_recorders_page_shows_a_qr_code_of_the_confirm_link(
    person: Callable[[str], Browser],
) -> None:
    world = _proposed(person)
    ruby, kai, battle = world["ruby"], world["kai"], world["battle_id"]
    page = ruby.get(f"/battles/{battle}").text
    link = f"http://testserver/battles/{battle}/confirm"
    assert f'data-testid="confirm-link">{link}</a>' in page
    svg = re.search(r'<svg [^>]*class="qr"[^>]*>.*?</svg>', page, re.S)
    assert svg is not None
    assert 'role="img"' in svg.group(
        0
    ) and f'aria-label="QR code of the link for kai to confirm: {link}"' in svg.group(0)
    expected = segno.make(link, error="m").svg_inline(scale=4, border=4, dark="#000", light="#fff")
    paths = re.findall(r'd="(M4 [^"]+)"', expected)
    assert paths and paths[0] in svg.group(0)  # segno's modules for exactly that link
    assert 'data-watch-battle="' in page  # the page watches for the confirmation
    assert 'class="qr"' not in kai.get(f"/battles/{battle}").text  # only on the recorder's


def test_the_confirm_link_logs_in_first_and_grants_nothing_by_itself(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = _proposed(person)
    ruby, kai, battle = world["ruby"], world["kai"], world["battle_id"]
    url = f"/battles/{battle}/confirm"
    visitor = person("visitor")
    visitor.client.cookies.clear()
    before = dump(engine)
    anonymous = visitor.get(url, follow_redirects=False)
    assert anonymous.status_code == 303
    assert anonymous.headers["location"] == f"/login?next=/battles/{battle}/confirm"
    assert dump(engine) == before  # the link itself changes nothing
    assert f'value="/battles/{battle}/confirm"' in visitor.get(anonymous.headers["location"]).text
    # Kai, on their own phone, logs in there and comes back to the confirmation
    kais_phone = visitor.client.post(
        "/login",
        data={"username": "kai", "password": PASSWORD, "next": url},
        follow_redirects=False,
    )
    assert kais_phone.status_code == 303 and kais_phone.headers["location"] == url
    assert "Confirm result" in visitor.get(url).text
    outsider = person("outsider").get(url)
    assert outsider.status_code == 403
    page = ruby.get(url).text  # the recorder cannot confirm their own result
    assert "you are logged in as someone else" in page and "Confirm result" not in page
    page = kai.get(url).text
    assert "Confirm result" in page and 'id="confirm"' in page
    assert kai.post(f"/battles/{battle}/confirm").status_code == 303
    assert kai.api("GET", f"/battles/{battle}")["status"] == "resolved"
    assert "There is no result waiting for you" in kai.get(url).text


# --- the organizer who plays --------------------------------------------------------------------


def test_an_organizers_own_battle_waits_for_the_opponent_by_default(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = _organizer_plays(person)
    orga, kai, campaign = world["orga"], world["kai"], world["campaign_id"]
    assert orga.api("GET", f"/campaigns/{campaign}")["organizer_results_need_confirmation"]
    battle = _battle(orga, campaign, (world["orga_force"], world["kai_force"]), world["rosters"])
    assert orga.api("GET", f"/battles/{battle}")["status"] == "proposed"
    before = dump(engine)
    own = _raw(orga, "POST", f"/battles/{battle}/confirm")
    assert own.status_code == 403 and own.json()["code"] == "cannot_confirm_own_result"
    assert orga.post(f"/battles/{battle}/confirm").status_code == 403
    assert dump(engine) == before
    assert "kai at the table? Confirm here" in orga.get(f"/battles/{battle}").text
    assert kai.post(f"/battles/{battle}/confirm").status_code == 303
    assert orga.api("GET", f"/battles/{battle}")["status"] == "resolved"


def test_with_the_setting_off_an_organizers_result_applies_at_once(
    person: Callable[[str], Browser],
) -> None:
    world = _organizer_plays(person)
    orga, kai, campaign = world["orga"], world["kai"], world["campaign_id"]
    refused = _raw(
        kai, "PATCH", f"/campaigns/{campaign}", json={"organizer_results_need_confirmation": False}
    )
    assert refused.status_code == 403  # players do not change campaign settings
    changed = orga.api(
        "PATCH", f"/campaigns/{campaign}", json={"organizer_results_need_confirmation": False}
    )
    assert changed["organizer_results_need_confirmation"] is False
    battle = _battle(orga, campaign, (world["orga_force"], world["kai_force"]), world["rosters"])
    assert orga.api("GET", f"/battles/{battle}")["status"] == "resolved"


def test_an_organizer_recording_other_players_battle_still_applies_at_once(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    orga, ruby, kai = world["orga"], world["ruby"], world["kai"]
    forces = (world["ruby_force"], world["kai_force"])
    rosters = (_cards(ruby, forces[0]), _cards(kai, forces[1]))
    battle = _battle(orga, world["campaign_id"], forces, rosters)
    assert orga.api("GET", f"/battles/{battle}")["status"] == "resolved"


def test_the_settings_page_switches_the_organizer_confirmation(
    person: Callable[[str], Browser],
) -> None:
    world = campaign_with_two_players(person)
    orga, campaign = world["orga"], world["campaign_id"]
    url = f"/campaigns/{campaign}"
    page = orga.get(f"{url}/members").text
    assert re.search(r'name="organizer_results_need_confirmation" value="true"[^>]*checked', page)
    saved = orga.post(f"{url}/settings", {"name": "War for Vigilus", "join_policy": "invite"})
    assert saved.status_code == 303
    assert orga.api("GET", url)["organizer_results_need_confirmation"] is False
    orga.post(
        f"{url}/settings",
        {
            "name": "War for Vigilus",
            "join_policy": "invite",
            "organizer_results_need_confirmation": "true",
        },
    )
    assert orga.api("GET", url)["organizer_results_need_confirmation"] is True


# --- decisions: the effect next to each choice ------------------------------------------------


def test_each_honour_choice_shows_its_effect_beside_it(
    person: Callable[[str], Browser],
) -> None:
    world = proposed_battle(person)
    ruby, kai = world["ruby"], world["kai"]
    kai.post(f"/battles/{world['battle_id']}/confirm")
    honour = ruby.get(f"/forces/{world['ruby_force']}/decisions", follow_redirects=False)
    url = honour.headers["location"]
    page = ruby.get(f"{url}?category=battle_trait").text
    assert "What each one does" not in page and "<details>" not in page.split("<h2>")[1]
    entries = rulebook().honours.battle_traits[UnitType.CHARACTER].entries
    for entry in entries:  # a radio per entry, its effect right under it, tied to it
        choice = re.search(
            rf'<input type="radio" name="entries" value="{entry.id}"'
            rf' aria-describedby="entry-{entry.id}-effect"\s*>[^<]*</label>\s*'
            rf'<small class="muted effect" id="entry-{entry.id}-effect">([^<]*)</small>',
            page,
        )
        assert choice is not None, entry.id
        assert html.unescape(choice.group(1)) == entry.summary
    assert re.search(r'name="entries" value="" checked> Roll for it', page)


def test_the_review_tells_an_organizer_who_plays_that_the_opponent_confirms(
    person: Callable[[str], Browser],
) -> None:
    world = _organizer_plays(person)
    orga = world["orga"]
    as_orga = {**world, "ruby": orga, "ruby_force": world["orga_force"]}
    base, _draft_id = through_muster(as_orga)
    orga.post(f"{base}/after", {"form": "after", "vp_0": "40", "vp_1": "20", "action": "review"})
    page = orga.get(f"{base}/review").text
    assert "You play in this battle: your opponent confirms the result" in page
    assert "your result applies at once" not in page
    submitted = orga.post(f"{base}/review", {"action": "submit"})
    battle = submitted.headers["location"]
    assert orga.api("GET", battle)["status"] == "proposed"
    orga.api(
        "PATCH",
        f"/campaigns/{world['campaign_id']}",
        json={"organizer_results_need_confirmation": False},
    )
    orga.api("POST", f"{battle}/dispute")  # settled by the organizer now that they may
    assert orga.post(f"{battle}/confirm").status_code == 303
    assert orga.api("GET", battle)["status"] == "resolved"
