"""The phone wizard that records a battle, through the pages: set-up, muster, after the
game (counters by script and without), Out of Action, review and submit; resuming
after the tab was closed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from app.edge.csrf import unmask
from app.main import create_app
from app.rules.data import rulebook
from tests.api.helpers import dump
from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_battle_pages import proposed_battle

SIX_SCARS = (
    "walking_wounded",
    "fatigued",
    "battle_weary",
    "shell_shock",
    "disgraced",
    "mark_of_shame",
)


def units(browser: Browser, force_id: int) -> dict[str, int]:
    cards = browser.api("GET", f"/forces/{force_id}")["cards"]
    return {c["name"]: c["id"] for c in cards}


def draft_row(engine: Engine, draft_id: int) -> dict[str, Any]:
    with engine.connect() as connection:
        row = connection.execute(
            text("SELECT step, data, battle_id FROM battle_draft WHERE id = :id"), {"id": draft_id}
        ).one()
    data = row.data if isinstance(row.data, dict) else json.loads(row.data)
    return {"step": row.step, "data": data, "battle_id": row.battle_id}


def form_token(browser: Browser, html: str) -> None:
    """Every form on the page carries the session's real CSRF token (not an empty one)."""
    tokens = set(re.findall(r'name="csrf_token" value="([^"]*)"', html))
    assert {unmask(t) for t in tokens} == {unmask(browser.csrf())}, tokens


def script_post(browser: Browser, url: str, data: dict[str, Any]) -> Any:
    """A request as the page script sends it: the CSRF token in the header, no form field."""
    return browser.client.post(
        url,
        data=data,
        headers={"HX-Request": "true", "X-CSRF-Token": browser.csrf()},
        follow_redirects=False,
    )


def start(world: dict[str, Any], who: str = "ruby") -> tuple[str, int]:
    """Start a draft; returns its base URL and id."""
    browser = world[who]
    cid = world["campaign_id"]
    page = browser.get(f"/campaigns/{cid}/battles/new")
    assert page.status_code == 200 and "Start recording a battle" in page.text
    form_token(browser, page.text)
    started = browser.post(f"/campaigns/{cid}/battles/new")
    assert started.status_code == 303
    found = re.fullmatch(rf"/campaigns/{cid}/drafts/(\d+)/setup", started.headers["location"])
    assert found, started.headers["location"]
    return f"/campaigns/{cid}/drafts/{found.group(1)}", int(found.group(1))


def setup_form(world: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {
        "force_id": world["ruby_force"],
        "opponent_id": world["kai_force"],
        "role": "attacker",
        "battle_size": "combat_patrol",
        "agendas_0": "assassins",
        "agendas_1": "cull_the_hordes",
        **changes,
    }


def through_muster(
    world: dict[str, Any], mission: str = "supply_drop", **setup: Any
) -> tuple[str, int]:
    """Set-up (chosen mission, and ``setup`` changes) and muster every unit of both forces."""
    ruby = world["ruby"]
    base, draft_id = start(world)
    done = ruby.post(f"{base}/setup", setup_form(world, mission=mission, action="next", **setup))
    assert done.status_code == 303 and done.headers["location"] == f"{base}/muster"
    mustered = ruby.post(
        f"{base}/muster",
        {
            "roster_0": list(units(ruby, world["ruby_force"]).values()),
            "roster_1": list(units(world["kai"], world["kai_force"]).values()),
            "action": "muster",
        },
    )
    assert mustered.status_code == 303, mustered.text
    assert mustered.headers["location"] == f"{base}/after"
    return base, draft_id


def test_walk_the_whole_wizard(person: Callable[[str], Browser], engine: Engine) -> None:
    world = campaign_with_two_players(person)
    ruby, kai, cid = world["ruby"], world["kai"], world["campaign_id"]
    ruby.api(
        "POST",
        f"/forces/{world['ruby_force']}/cards",
        json={"name": "Land Raider", "power_rating": 20, "keywords": ["IMPERIUM", "VEHICLE"]},
    )
    mine, theirs = units(ruby, world["ruby_force"]), units(kai, world["kai_force"])
    base, draft_id = start(world)

    # 1. Set-up: the step list marks where we are; the mission is rolled on the server.
    page = ruby.get(f"{base}/setup")
    assert page.status_code == 200
    assert '<span aria-current="step">1. Set-up</span>' in page.text
    form_token(ruby, page.text)
    rolled = ruby.post(f"{base}/setup", setup_form(world, action="roll"))
    assert rolled.status_code == 303
    saved = draft_row(engine, draft_id)["data"]["setup"]
    combat_patrol = {m.id: m for m in rulebook().missions_for("combat_patrol")}
    assert saved["mission"] in combat_patrol
    mission = combat_patrol[saved["mission"]]
    assert mission.low <= saved["mission_roll"] <= mission.high
    page = ruby.get(f"{base}/setup")
    assert f"rolled a <strong>{saved['mission_roll']}</strong>" in page.text
    assert re.search(rf'name="mission" value="{mission.id}"\s+checked', page.text)
    # A D6 entered at the table picks the mission from the table too.
    entered = ruby.post(f"{base}/setup", setup_form(world, action="use_roll", mission_roll="5"))
    assert entered.status_code == 303
    assert draft_row(engine, draft_id)["data"]["setup"]["mission"] == "assassinate"
    # Too many Agendas for a Combat Patrol: refused in place, the choices kept.
    refused = ruby.post(
        f"{base}/setup",
        setup_form(world, mission="assassinate", agendas_0=["assassins", "reaper"], action="next"),
    )
    assert refused.status_code == 422
    assert 'data-code="agenda_count"' in refused.text
    assert 'value="reaper" checked' in refused.text
    moved = ruby.post(f"{base}/setup", setup_form(world, mission="assassinate", action="next"))
    assert moved.status_code == 303 and moved.headers["location"] == f"{base}/muster"

    # 2. Muster: the live counter (script) saves the selection and adds up the Power Level.
    everything = {"roster_0": list(mine.values()), "roster_1": list(theirs.values())}
    counter = script_post(ruby, f"{base}/muster/total", everything)
    assert counter.status_code == 200
    assert 'id="pl-counter"' in counter.text and "<html" not in counter.text
    assert 'data-testid="pl-0">36</output> / 25 PL' in counter.text
    assert "over the limit by 11" in counter.text
    assert draft_row(engine, draft_id)["data"]["rosters"][0] == list(mine.values())
    before = dump(engine)
    over = ruby.post(f"{base}/muster", {**everything, "action": "muster"})
    assert over.status_code == 422
    assert 'data-code="power_level_exceeded"' in over.text
    assert "a Combat Patrol army may have at most 25" in over.text
    assert dump(engine) == before
    within = {**everything, "roster_0": [mine["Captain"], mine["Intercessor Squad"]]}
    updated = ruby.post(f"{base}/muster", {**within, "action": "update"})
    assert updated.status_code == 303
    page = ruby.get(f"{base}/muster")
    form_token(ruby, page.text)
    assert 'data-testid="pl-0">10</output> / 25 PL' in page.text
    assert 'data-testid="pl-1">16</output> / 25 PL' in page.text
    mustered = ruby.post(f"{base}/muster", {**within, "action": "muster"})
    assert mustered.status_code == 303 and mustered.headers["location"] == f"{base}/after"
    battle_id = draft_row(engine, draft_id)["battle_id"]
    battle = ruby.api("GET", f"/battles/{battle_id}")
    assert battle["status"] == "mustered" and battle["mission"] == "assassinate"
    assert battle["mission_roll"] == 5
    assert battle["sides"][0]["roster"] == [mine["Captain"], mine["Intercessor Squad"]]

    # 3. After the game: a tap through the script returns just the counter, saved at once.
    captain, squad = mine["Captain"], mine["Intercessor Squad"]
    their_captain = theirs["Captain"]
    tap = script_post(ruby, f"{base}/after/bump", {"bump": f"{captain}:destroyed_melee:+1"})
    assert tap.status_code == 200 and "<html" not in tap.text
    assert f'data-testid="count-{captain}-destroyed_melee">1</output>' in tap.text
    # An Agenda's counter keeps the names it has on the full page ("<Agenda> tally").
    page = ruby.get(f"{base}/after")
    assert 'aria-label="One more: Assassins tally, Captain"' in page.text
    assert "exfiltrated_" not in page.text  # only Behind Enemy Lines exfiltrates
    for step in ("+1", "-1"):
        agenda = script_post(
            ruby, f"{base}/after/bump", {"bump": f"{captain}:agenda.assassins:{step}"}
        )
        assert agenda.status_code == 200
        assert 'aria-label="One more: Assassins tally, Captain"' in agenda.text
        assert 'role="group" aria-label="Assassins tally, Captain"' in agenda.text
    # ...and without script the whole form is sent with the tapped button's value.
    no_js = ruby.post(
        f"{base}/after",
        {
            "form": "after",
            "vp_0": "60",
            "vp_1": "40",
            "painted_0": "1",
            "marked_0": str(captain),
            f"destroyed_{squad}": "1",
            f"destroyed_{their_captain}": "1",  # the CHARACTER the Assassins mark is for
            "bump": f"{captain}:agenda.assassins:+1",
        },
    )
    assert no_js.status_code == 303
    assert no_js.headers["location"] == f"{base}/after#unit-{captain}"
    page = ruby.get(f"{base}/after")
    form_token(ruby, page.text)
    assert f'data-testid="count-{captain}-agenda-assassins">1</output>' in page.text
    assert f'data-testid="count-{captain}-destroyed_melee">1</output>' in page.text
    assert f'name="destroyed_{squad}" value="1" checked' in page.text
    assert 'value="60"' in page.text
    # A count never goes below 0: refused in the fragment, nothing saved.
    stored = draft_row(engine, draft_id)["data"]
    below = script_post(ruby, f"{base}/after/bump", {"bump": f"{squad}:destroyed_ranged:-1"})
    assert below.status_code == 422
    assert "between 0 and 99" in below.text
    assert f'data-testid="count-{squad}-destroyed_ranged">0</output>' in below.text
    assert draft_row(engine, draft_id)["data"] == stored
    # Victory points out of range are refused in place.
    wrong = ruby.post(
        f"{base}/after",
        {"form": "after", "vp_0": "500", "vp_1": "40", "action": "next"},
    )
    assert wrong.status_code == 422 and 'data-code="victory_points_invalid"' in wrong.text
    forward = ruby.post(
        f"{base}/after",
        {
            "form": "after",
            "vp_0": "60",
            "vp_1": "40",
            "painted_0": "1",
            "marked_0": str(captain),
            f"destroyed_{squad}": "1",
            f"destroyed_{their_captain}": "1",
            "action": "next",
        },
    )
    assert forward.status_code == 303 and forward.headers["location"] == f"{base}/out_of_action"

    # 4. Out of Action: one die per test, entered as rolled at the table.
    page = ruby.get(f"{base}/out_of_action")
    form_token(ruby, page.text)
    assert "1. Out of Action test: Intercessor Squad" in page.text
    assert "1. Out of Action test: Captain" in page.text  # Kai's
    missing = ruby.post(f"{base}/out_of_action", {"dice_mode_0": "enter", "die_0_0": ""})
    assert missing.status_code == 422 and 'data-code="dice_missing"' in missing.text
    both = {"dice_mode_0": "enter", "die_0_0": "4", "dice_mode_1": "enter", "die_1_0": "5"}
    dice = ruby.post(f"{base}/out_of_action", both)
    assert dice.status_code == 303 and dice.headers["location"] == f"{base}/review"

    # 5. Review and submit: from a player it becomes a proposal.
    page = ruby.get(f"{base}/review")
    form_token(ruby, page.text)
    assert 'data-testid="review-vp-0">60<' in page.text
    # Only the units something was entered for get a row; the rest share one line.
    assert 'data-testid="review-quiet-0"' not in page.text  # both of Ruby's did something
    quiet = page.text.split('data-testid="review-quiet-1">')[1].split("</p>")[0]
    assert quiet.startswith("Nothing entered for ") and "Captain" not in quiet
    assert "dice rolled at the table: <strong>4" in page.text
    assert "Your opponent confirms the result" in page.text
    submitted = ruby.post(f"{base}/review", {"action": "submit"})
    assert submitted.status_code == 303
    assert submitted.headers["location"] == f"/battles/{battle_id}"
    battle = ruby.api("GET", f"/battles/{battle_id}")
    assert battle["status"] == "proposed"
    assert draft_row(engine, draft_id)["step"] == "finished"
    # The finished draft sends its pages to the battle, and a new battle can be started.
    assert ruby.get(f"{base}/after", follow_redirects=False).headers["location"] == (
        f"/battles/{battle_id}"
    )
    assert "Start recording a battle" in ruby.get(f"/campaigns/{cid}/battles/new").text

    # Ruby cannot confirm her own proposal; Kai sees "Confirm result" and confirms it.
    assert "Confirm result" not in ruby.get(f"/battles/{battle_id}").text
    before = dump(engine)
    own = ruby.post(f"/battles/{battle_id}/confirm")
    assert own.status_code == 403 and 'data-code="cannot_confirm_own_result"' in own.text
    assert dump(engine) == before
    assert "Confirm result" in kai.get(f"/battles/{battle_id}").text
    assert kai.post(f"/battles/{battle_id}/confirm").status_code == 303
    assert kai.api("GET", f"/battles/{battle_id}")["status"] == "resolved"
    captain_card = kai.api("GET", f"/cards/{captain}")
    # 1 for the battle, 3 for Marked for Greatness, 2 for one Assassins mark: Blooded.
    assert (captain_card["xp"], captain_card["rank"]) == (6, "blooded")


def test_a_refused_submit_is_shown_in_place_and_keeps_the_draft(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    base, draft_id = through_muster(world, agendas_1="reaper")
    theirs = units(kai, world["kai_force"])
    # Two of Kai's units tie on kills for Reaper, and nobody said which one scores it.
    for name in ("Captain", "Hellblasters"):
        script_post(ruby, f"{base}/after/bump", {"bump": f"{theirs[name]}:destroyed_ranged:+1"})
    ruby.post(f"{base}/after", {"form": "after", "vp_0": "20", "vp_1": "30", "action": "next"})
    ruby.post(f"{base}/out_of_action", {})
    before = dump(engine)
    refused = ruby.post(f"{base}/review", {"action": "submit"})
    assert refused.status_code == 422
    assert 'data-code="agenda_choice_required"' in refused.text
    assert "Fix it in After the game" in refused.text
    assert dump(engine) == before
    assert draft_row(engine, draft_id)["step"] == "review"
    # Naming the unit on the after-game step lets it through.
    ruby.post(
        f"{base}/after",
        {
            "form": "after",
            "vp_0": "20",
            "vp_1": "30",
            "agenda_choice_1_reaper": str(theirs["Hellblasters"]),
            "action": "next",
        },
    )
    assert ruby.post(f"{base}/review", {"action": "submit"}).status_code == 303


def test_entered_dice_too_few_are_refused_at_submit(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    """A unit with the most Battle Scars (six) must take a Devastating Blow, which needs another
    die: with none entered the submit is refused in place."""
    world = campaign_with_two_players(person)
    ruby = world["ruby"]
    mine = units(ruby, world["ruby_force"])
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE crusade_card SET scars = :scars WHERE id = :id"),
            {
                "scars": json.dumps([{"entry_id": e, "dice": []} for e in SIX_SCARS]),
                "id": mine["Intercessor Squad"],
            },
        )
    base, _draft_id = through_muster(world)
    squad = mine["Intercessor Squad"]
    ruby.post(
        f"{base}/after",
        {"form": "after", "vp_0": "20", "vp_1": "30", f"destroyed_{squad}": "1", "action": "next"},
    )
    ruby.post(f"{base}/out_of_action", {"dice_mode_0": "enter", "die_0_0": "1"})
    before = dump(engine)
    refused = ruby.post(f"{base}/review", {"action": "submit"})
    assert refused.status_code == 422
    assert 'data-code="dice_missing"' in refused.text
    assert "Fix it in Out of Action" in refused.text
    assert dump(engine) == before
    ruby.post(
        f"{base}/out_of_action", {"dice_mode_0": "enter", "die_0_0": "1", "dice_extra_0": "2"}
    )
    assert ruby.post(f"{base}/review", {"action": "submit"}).status_code == 303


def test_resume_after_closing_the_tab(person: Callable[[str], Browser], engine: Engine) -> None:
    world = campaign_with_two_players(person)
    ruby, cid = world["ruby"], world["campaign_id"]
    base, draft_id = through_muster(world)
    captain = units(ruby, world["ruby_force"])["Captain"]
    for _ in range(3):
        script_post(ruby, f"{base}/after/bump", {"bump": f"{captain}:destroyed_ranged:+1"})
    ruby.post(f"{base}/after", {"form": "after", "vp_0": "35", "vp_1": "15", "action": "save"})

    # Another browser (the tab was closed, the phone changed): log in again as Ruby.
    with TestClient(create_app(engine)) as client:
        logged_in = client.post(
            "/login",
            data={"username": "ruby", "password": "a good password"},
            follow_redirects=False,
        )
        assert logged_in.status_code == 303
        again = Browser(client)
        page = again.get(f"/campaigns/{cid}/battles/new")
        assert "Resume your battle in progress" in page.text
        assert f'href="{base}/after"' in page.text
        resumed = again.get(f"/campaigns/{cid}/drafts/{draft_id}", follow_redirects=False)
        assert resumed.headers["location"] == f"{base}/after"
        page = again.get(f"{base}/after")
        assert '<span aria-current="step">3. After the game</span>' in page.text
        assert f'data-testid="count-{captain}-destroyed_ranged">3</output>' in page.text
        assert 'value="35"' in page.text
        # Starting "again" resumes the same draft rather than opening a second one.
        restarted = again.post(f"/campaigns/{cid}/battles/new")
        assert restarted.headers["location"] == f"{base}/after"


def test_another_players_draft_is_not_found(person: Callable[[str], Browser]) -> None:
    world = campaign_with_two_players(person)
    base, _draft_id = start(world)
    assert world["kai"].get(f"{base}/setup").status_code == 404
    assert world["kai"].post(f"{base}/setup", setup_form(world, action="roll")).status_code == 404
    # The organizer may help out with anyone's draft.
    assert world["orga"].get(f"{base}/setup").status_code == 200
    # A later step than the one reached sends the player back to it.
    early = world["ruby"].get(f"{base}/review", follow_redirects=False)
    assert early.status_code == 303 and early.headers["location"] == f"{base}/setup"


def test_a_player_cannot_pick_someone_elses_force(person: Callable[[str], Browser]) -> None:
    world = campaign_with_two_players(person)
    base, _draft_id = start(world)
    refused = world["ruby"].post(
        f"{base}/setup",
        setup_form(
            world,
            force_id=world["kai_force"],
            opponent_id=world["ruby_force"],
            mission="supply_drop",
            action="next",
        ),
    )
    assert refused.status_code == 422 and 'data-code="force_required"' in refused.text


def test_pending_units_are_shown_unavailable(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    ruby = world["ruby"]
    mine = units(ruby, world["ruby_force"])
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO decision (force_id, card_id, kind, payload, status, answer, "
                "created_at) VALUES (:f, :c, 'battle_scar', '{}', 'pending', '{}', "
                "CURRENT_TIMESTAMP)"
            ),
            {"f": world["ruby_force"], "c": mine["Hellblasters"]},
        )
    base, _draft_id = start(world)
    ruby.post(f"{base}/setup", setup_form(world, mission="supply_drop", action="next"))
    page = ruby.get(f"{base}/muster")
    assert f'value="{mine["Hellblasters"]}"' in page.text
    assert "Unavailable: a decision from its last battle is waiting." in page.text
    assert re.search(rf'value="{mine["Hellblasters"]}"\s+disabled', page.text)


def test_a_step_the_wizard_does_not_have_is_not_found(person: Callable[[str], Browser]) -> None:
    world = campaign_with_two_players(person)
    started = world["ruby"].post(f"/campaigns/{world['campaign_id']}/battles/new")
    base = started.headers["location"].rsplit("/", 1)[0]
    missing = world["ruby"].get(f"{base}/aftermath")
    assert missing.status_code == 404 and "has no step" in missing.text
    assert world["ruby"].get(f"{base}/setup").status_code == 200


def test_the_muster_step_says_which_decisions_come_first(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    """Ruling 37 on the website: a unit's waiting decision holds the whole muster; the step
    names the units and links the decisions, and a muster tried anyway changes nothing."""
    world = proposed_battle(person)  # Ruby's Intercessor Squad failed its Out of Action test
    ruby = world["ruby"]
    world["kai"].post(f"/battles/{world['battle_id']}/confirm")
    base, _ = start(world)
    done = ruby.post(f"{base}/setup", setup_form(world, mission="supply_drop", action="next"))
    assert done.status_code == 303
    page = ruby.get(f"{base}/muster").text
    banner = page.split('data-testid="decisions-first-0"')[1].split("</p>")[0]
    assert "Intercessor Squad" in banner
    assert f'href="/forces/{world["ruby_force"]}/decisions"' in banner
    before = dump(engine)
    tried = ruby.post(
        f"{base}/muster",
        {
            "roster_0": [world["mine"]["Hellblasters"]],
            "roster_1": [world["theirs"]["Hellblasters"]],
            "action": "muster",
        },
    )
    assert tried.status_code == 409 and 'data-code="decisions_pending"' in tried.text
    assert {k: v for k, v in dump(engine).items() if k != "battle_draft"} == {
        k: v for k, v in before.items() if k != "battle_draft"
    }


def test_behind_enemy_lines_asks_which_units_were_exfiltrated(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    """Ruling 49: only Behind Enemy Lines shows the tick, and the ticked unit is the one
    offered the victor bonus once the battle is recorded."""
    world = campaign_with_two_players(person)
    ruby = world["ruby"]
    base, draft_id = through_muster(
        world,
        mission="behind_enemy_lines",
        battle_size="incursion",
        agendas_0=["assassins", "secure_the_area"],
        agendas_1=["cull_the_hordes", "secure_the_area"],
    )
    squad = units(ruby, world["ruby_force"])["Intercessor Squad"]
    page = ruby.get(f"{base}/after")
    assert f'name="exfiltrated_{squad}"' in page.text
    saved = ruby.post(
        f"{base}/after",
        {
            "form": "after",
            "vp_0": "40",
            "vp_1": "10",
            f"exfiltrated_{squad}": "1",
            "action": "next",
        },
    )
    assert saved.status_code == 303, saved.text
    assert draft_row(engine, draft_id)["data"]["units"][str(squad)]["exfiltrated"] is True
    assert f'name="exfiltrated_{squad}" value="1" checked' in ruby.get(f"{base}/after").text


def test_a_battle_fought_over_a_territory_from_the_phone(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    """Issue 23: the set-up offers the campaign map's territories; the mustered battle is
    fought over the one chosen (its winner will take it, ruling 53)."""
    world = campaign_with_two_players(person)
    ruby, cid = world["ruby"], world["campaign_id"]
    base, _draft = start(world)
    assert 'name="territory_id"' not in ruby.get(f"{base}/setup").text  # no map, no choice
    relay = world["orga"].api("POST", f"/campaigns/{cid}/territories", json={"name": "Relay"})
    assert f'<option value="{relay["id"]}" >Relay</option>' in ruby.get(f"{base}/setup").text
    ruby.post(f"{base}/discard", {})
    base, draft_id = through_muster(world, territory_id=str(relay["id"]))
    battle_id = draft_row(engine, draft_id)["battle_id"]
    assert ruby.api("GET", f"/battles/{battle_id}")["territory_id"] == relay["id"]
    assert "Fought over: <strong>Relay</strong>" in ruby.get(f"{base}/setup").text
