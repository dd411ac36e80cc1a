"""The battle page (confirm, dispute, revert) and pending decisions answered one at a time,
through the pages; what the cards end up with matches the JSON API."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy import Engine

from app.edge.csrf import unmask
from app.rules.data import UnitType, rulebook
from tests.api.helpers import dump
from tests.web.conftest import Browser, campaign_with_two_players


def proposed_battle(
    person: Callable[[str], Browser],
    size: str = "combat_patrol",
    mission: str = "supply_drop",
    agendas: tuple[list[str], list[str]] = (["assassins"], ["cull_the_hordes"]),
) -> dict[str, Any]:
    """Ruby (attacking) beats Kai in a Supply Drop and enters the result: her Captain is
    Marked for Greatness and scores Assassins (6 XP: Blooded), her Intercessor Squad is
    destroyed and fails its Out of Action test on the 1 rolled at the table."""
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    mine = {c["name"]: c["id"] for c in ruby.api("GET", f"/forces/{world['ruby_force']}")["cards"]}
    theirs = {c["name"]: c["id"] for c in kai.api("GET", f"/forces/{world['kai_force']}")["cards"]}
    battle = ruby.api(
        "POST",
        f"/campaigns/{world['campaign_id']}/battles",
        json={
            "battle_size": size,
            "mission": mission,
            "sides": [
                {
                    "force_id": world["ruby_force"],
                    "role": "attacker",
                    "roster": list(mine.values()),
                    "agendas": agendas[0],
                },
                {
                    "force_id": world["kai_force"],
                    "role": "defender",
                    "roster": list(theirs.values()),
                    "agendas": agendas[1],
                },
            ],
        },
    )
    ruby.api(
        "POST",
        f"/battles/{battle['id']}/result",
        json={
            "sides": [
                {
                    "force_id": world["ruby_force"],
                    "victory_points": 60,
                    "painted": True,
                    "units": [
                        {
                            "card_id": mine["Captain"],
                            "destroyed_melee": 1,
                            "agenda_tallies": {"assassins": 1},
                            "marked_for_greatness": True,
                        },
                        {"card_id": mine["Intercessor Squad"], "destroyed": True},
                    ],
                    "dice": [1],
                },
                {
                    "force_id": world["kai_force"],
                    "victory_points": 30,
                    # the Captain's Assassins mark: Kai's Captain fell (and passes its test)
                    "units": [{"card_id": theirs["Captain"], "destroyed": True}],
                    "dice": [6],
                },
            ]
        },
    )
    return {**world, "battle_id": battle["id"], "mine": mine, "theirs": theirs}


def test_a_battles_page_is_found_by_its_own_check_before_anything_is_kept(
    person: Callable[[str], Browser], site: TestClient
) -> None:
    """The battle page's quick access check (one statement: the campaign and both players)
    refuses what the full one refused: a battle that is not there, a path id that is not
    one, a private campaign's battle to a visitor; and lets its players act on it."""
    world = proposed_battle(person)
    path = f"/battles/{world['battle_id']}"
    asked = site.get(path, follow_redirects=False)
    assert asked.status_code == 303 and asked.headers["location"].startswith("/login")
    for client in (site, world["kai"].client):
        assert client.get("/battles/99999").status_code == 404
        assert client.get("/battles/1234567890").status_code == 422
    page = world["kai"].get(path)  # the opponent: may confirm and dispute
    assert page.status_code == 200
    assert f'action="{path}/confirm"' in page.text and f'action="{path}/dispute"' in page.text
    stranger = person("stranger")
    assert stranger.get(path, follow_redirects=False).status_code in (403, 404)


def test_the_opponent_confirms_and_the_proposer_cannot(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = proposed_battle(person)
    ruby, kai, battle_id = world["ruby"], world["kai"], world["battle_id"]
    url = f"/battles/{battle_id}"

    page = ruby.get(url)
    assert page.status_code == 200
    assert 'data-testid="battle-status">Proposed<' in page.text
    assert "Supply Drop" in page.text and "Combat Patrol" in page.text
    assert (
        f'data-testid="vp-{world["ruby_force"]}">60</strong> victory points proposed' in page.text
    )
    assert "Confirm result" not in page.text
    before = dump(engine)
    refused = ruby.post(f"{url}/confirm")
    assert refused.status_code == 403
    assert 'data-code="cannot_confirm_own_result"' in refused.text
    assert dump(engine) == before

    page = kai.get(url)
    assert "Confirm result" in page.text and "Dispute" in page.text
    tokens = re.findall(r'name="csrf_token" value="([^"]*)"', page.text)
    assert {unmask(t) for t in tokens} == {unmask(kai.csrf())}
    confirmed = kai.post(f"{url}/confirm")
    assert confirmed.status_code == 303 and confirmed.headers["location"] == url
    assert kai.api("GET", url)["status"] == "resolved"
    page = kai.get(url)
    assert 'data-testid="battle-status">Resolved<' in page.text
    assert "Winner" in page.text
    assert f'data-testid="vp-{world["ruby_force"]}">70</strong>' in page.text
    assert "+6 XP · now <strong>Blooded</strong>" in page.text
    assert "after its decision" in page.text  # the squad's XP waits for its decision
    assert "<strong>failed</strong> (rolled 1)" in page.text
    assert "Decisions from this battle" in page.text
    assert "Failed Out of Action test: Intercessor Squad" in page.text
    assert "Confirm result" not in page.text
    # the decisions owed are linked at the top too, before the results table
    owed = page.text.split('data-testid="decisions-owed">', 1)[1].split("</p>", 1)[0]
    assert "Failed Out of Action test: Intercessor Squad" in owed
    assert page.text.index('data-testid="decisions-owed"') < page.text.index("Winner")


def test_a_dispute_is_settled_by_an_organizer(person: Callable[[str], Browser]) -> None:
    world = proposed_battle(person)
    kai, orga, url = world["kai"], world["orga"], f"/battles/{world['battle_id']}"
    assert kai.post(f"{url}/dispute").status_code == 303
    page = kai.get(url)
    assert 'data-testid="battle-status">Disputed<' in page.text
    assert "Confirm result" not in page.text
    page = orga.get(url)
    assert "Confirm result" in page.text and "Revert battle" in page.text
    assert orga.post(f"{url}/confirm").status_code == 303
    assert orga.api("GET", url)["status"] == "resolved"


def test_a_player_calls_off_a_battle_that_will_not_be_played(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    sides = []
    for who, key, role in ((ruby, "ruby_force", "attacker"), (kai, "kai_force", "defender")):
        cards = [c["id"] for c in who.api("GET", f"/forces/{world[key]}")["cards"]]
        sides.append(
            {
                "force_id": world[key],
                "role": role,
                "roster": cards[:1],
                "agendas": ["cull_the_hordes"],
            }
        )
    battle = ruby.api(
        "POST",
        f"/campaigns/{world['campaign_id']}/battles",
        json={"battle_size": "combat_patrol", "mission": "supply_drop", "sides": sides},
    )
    url = f"/battles/{battle['id']}"
    page = kai.get(url).text
    assert "Call off this battle…" in page and "Revert battle" not in page
    stranger = person("stranger")
    before = dump(engine)
    assert stranger.post(f"{url}/call-off").status_code == 403
    assert dump(engine) == before
    assert kai.post(f"{url}/call-off").status_code == 303
    page = kai.get(url).text
    assert 'data-testid="battle-status">Reverted<' in page and "Call off" not in page
    dashboard = kai.get(f"/campaigns/{world['campaign_id']}").text
    assert "was called off before it was played" in dashboard
    again = kai.post(f"{url}/call-off")
    assert again.status_code == 409 and 'data-code="battle_not_mustered"' in again.text


def test_an_organizer_reverts_after_a_confirm_step(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = proposed_battle(person)
    kai, orga, url = world["kai"], world["orga"], f"/battles/{world['battle_id']}"
    kai.post(f"{url}/confirm")
    assert "Revert battle" not in kai.get(url).text
    assert kai.get(f"{url}/revert").status_code == 403
    before = dump(engine)
    assert kai.post(f"{url}/revert").status_code == 403
    assert dump(engine) == before
    page = orga.get(f"{url}/revert")
    assert page.status_code == 200 and "Yes, revert battle" in page.text
    reverted = orga.post(f"{url}/revert")
    assert reverted.status_code == 303
    assert orga.api("GET", url)["status"] == "reverted"
    captain = orga.api("GET", f"/cards/{world['mine']['Captain']}")
    assert (captain["xp"], captain["rank"]) == (0, "battle_ready")
    waiting = orga.api("GET", f"/forces/{world['ruby_force']}/decisions")["items"]
    assert waiting == []


def test_decisions_are_answered_one_at_a_time(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = proposed_battle(person)
    ruby, kai = world["ruby"], world["kai"]
    kai.post(f"/battles/{world['battle_id']}/confirm")
    force = world["ruby_force"]
    captain, squad = world["mine"]["Captain"], world["mine"]["Intercessor Squad"]
    pending = ruby.api("GET", f"/forces/{force}/decisions")["items"]
    assert [d["kind"] for d in pending] == ["battle_honour", "out_of_action"]

    # The next one waiting: the Captain's Battle Honour for reaching Blooded.
    first = ruby.get(f"/forces/{force}/decisions", follow_redirects=False)
    assert first.status_code == 303
    honour_url = first.headers["location"]
    assert honour_url == f"/decisions/{pending[0]['id']}"
    page = ruby.get(honour_url)
    assert "Battle Honour: Captain" in page.text
    assert "reached the rank Blooded" in page.text
    assert "Decision 1 of 2 waiting" in page.text
    assert 'name="csrf_token" value=""' not in page.text
    assert 'name="category" value="battle_trait"' in page.text
    page = ruby.get(f"{honour_url}?category=battle_trait")
    tokens = re.findall(r'name="csrf_token" value="([^"]*)"', page.text)
    assert {unmask(t) for t in tokens} == {unmask(ruby.csrf())}
    assert "Battle trait for Captain" in page.text
    assert 'name="entries"' in page.text and "Roll for it" in page.text

    # Someone else cannot answer it; a roll with no entered die is refused in place.
    before = dump(engine)
    answer = f"{honour_url}/answer"
    assert kai.post(answer, {"category": "battle_trait"}).status_code == 403
    missing = ruby.post(
        answer, {"category": "battle_trait", "entries": "", "dice_mode": "enter", "dice": ""}
    )
    assert missing.status_code == 422 and 'data-code="dice_missing"' in missing.text
    assert dump(engine) == before
    done = ruby.post(
        answer, {"category": "battle_trait", "entries": "", "dice_mode": "enter", "dice": "3"}
    )
    assert done.status_code == 303
    # ...and the next decision says what was rolled (issue 12)
    assert done.headers["location"] == f"/decisions/{pending[1]['id']}?after={pending[0]['id']}"

    # The failed Out of Action test: both choices explained; a Battle Scar follows.
    page = ruby.get(done.headers["location"])
    assert "Failed Out of Action test: Intercessor Squad" in page.text
    assert "Devastating Blow" in page.text and "Battle Scar" in page.text
    assert "loses D6 experience points" in page.text
    scarred = ruby.post(f"/decisions/{pending[1]['id']}/answer", {"consequence": "battle_scar"})
    assert scarred.status_code == 303
    scar_url = scarred.headers["location"]
    assert re.fullmatch(r"/decisions/\d+", scar_url)
    page = ruby.get(scar_url)
    assert "Battle Scar: Intercessor Squad" in page.text
    assert 'name="scar" value="fatigued"' in page.text
    last = ruby.post(f"{scar_url}/answer", {"scar": "", "dice_mode": "enter", "dice": "2"})
    # the last answer rolled: its page says what the roll gave, then links on (issue 12)
    assert last.status_code == 303 and last.headers["location"] == scar_url
    assert f'href="/forces/{force}"' in ruby.get(scar_url).text
    page = ruby.get(f"/forces/{force}/decisions")
    assert page.status_code == 200 and "Nothing waiting" in page.text

    # The cards hold what the JSON API reports.
    book = rulebook()
    trait = book.honours.battle_traits[UnitType.CHARACTER].entry_for(3)
    scar = book.scars.battle_scars[UnitType.OTHER].entry_for(2)
    card = ruby.api("GET", f"/cards/{captain}")
    assert (card["xp"], card["rank"]) == (6, "blooded")
    assert [h["category"] for h in card["honours"]] == ["battle_trait"]
    assert card["honours"][0]["entries"][0]["id"] == trait.id
    unit = ruby.api("GET", f"/cards/{squad}")
    assert [s["id"] for s in unit["scars"]] == [scar.id]
    assert unit["xp"] == 1  # Battle Scar, not a Devastating Blow: it keeps its battle XP
    assert ruby.get(scar_url).status_code == 200
    assert "This decision is answered" in ruby.get(scar_url).text


def test_a_victor_bonus_honour_goes_to_the_unit_chosen(person: Callable[[str], Browser]) -> None:
    world = proposed_battle(person, mission="assassinate")
    ruby, kai, orga = world["ruby"], world["kai"], world["orga"]
    orga.post(f"/battles/{world['battle_id']}/confirm")
    bonus = next(
        d
        for d in ruby.api("GET", f"/forces/{world['ruby_force']}/decisions")["items"]
        if d["payload"].get("reason") == "victor_bonus"
    )
    url = f"/decisions/{bonus['id']}"
    page = ruby.get(url)
    assert "won the battle: a victor bonus" in page.text
    squad = world["mine"]["Intercessor Squad"]
    # the unit first, one tap each: a link to the same page with its honours (issue 40)
    assert "Which unit gains it?" in page.text
    assert f'href="{url}?card_id={squad}"' in page.text
    page = ruby.get(f"{url}?card_id={squad}")
    assert "Battle trait for Intercessor Squad" in page.text
    assert f'<a href="{url}">Choose another unit</a>' in page.text  # the one kind it may be
    assert 'value="veteran_warriors"' in page.text
    assert kai.get(url).status_code == 200  # a member may look, but not answer
    assert "Only Ultramarines 4th" in kai.get(url).text
    done = ruby.post(
        f"{url}/answer",
        {"category": "battle_trait", "card_id": str(squad), "entries": "veteran_warriors"},
    )
    assert done.status_code == 303
    card = ruby.api("GET", f"/cards/{squad}")
    assert [e["id"] for h in card["honours"] for e in h["entries"]] == ["veteran_warriors"]


def won_strike_force(person: Callable[[str], Browser], mission: str) -> dict[str, Any]:
    """Ruby wins a Strike Force battle of ``mission``, confirmed by Kai."""
    world = proposed_battle(
        person,
        size="strike_force",
        mission=mission,
        agendas=(
            ["assassins", "first_strike", "sentinel"],
            ["cull_the_hordes", "king_slayer", "survivor"],
        ),
    )
    world["kai"].post(f"/battles/{world['battle_id']}/confirm")
    return world


def test_free_requisitions_from_a_victor_bonus(person: Callable[[str], Browser]) -> None:
    world = won_strike_force(person, "raze_and_ruin")
    ruby, force = world["ruby"], world["ruby_force"]
    before = ruby.api("GET", f"/forces/{force}")["supply_limit"]
    bonus = next(
        d
        for d in ruby.api("GET", f"/forces/{force}/decisions")["items"]
        if d["kind"] == "victor_bonus"
    )
    page = ruby.get(f"/decisions/{bonus['id']}")
    assert page.text.count("Use Increase Supply Limit for free") == 2
    done = ruby.post(f"/decisions/{bonus['id']}/answer", {"use": ["0", "1"]})
    assert done.status_code == 303
    after = ruby.api("GET", f"/forces/{force}")["supply_limit"]
    supply = rulebook().numbers.supply_limit_increase
    assert after == before + 2 * supply


def test_a_refused_victor_bonus_answer_keeps_what_was_typed(
    person: Callable[[str], Browser],
) -> None:
    world = won_strike_force(person, "cut_off_the_head")
    ruby, force = world["ruby"], world["ruby_force"]
    bonus = next(
        d
        for d in ruby.api("GET", f"/forces/{force}/decisions")["items"]
        if d["kind"] == "victor_bonus"
    )
    url = f"/decisions/{bonus['id']}"
    assert "Use Warlord Trait for free" in ruby.get(url).text
    before = ruby.api("GET", f"/forces/{force}")
    refused = ruby.post(f"{url}/answer", {"use": "0", "warlord_trait_0": "Rites of War"})
    assert refused.status_code == 422
    assert 'role="alert"' in refused.text
    assert 'name="use" value="0" checked' in refused.text
    assert 'value="Rites of War"' in refused.text
    assert ruby.api("GET", f"/forces/{force}") == before
    captain = world["mine"]["Captain"]
    done = ruby.post(
        f"{url}/answer", {"use": "0", "card_id_0": str(captain), "warlord_trait_0": "Rites of War"}
    )
    assert done.status_code == 303
    assert ruby.api("GET", f"/decisions/{bonus['id']}")["status"] == "answered"


def test_cut_off_the_heads_free_trait_is_for_a_character_that_fought(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    """Ruling 44: the Intel points went to the CHARACTERs that took part; one that stayed
    home cannot take the free Warlord Trait, through the website or the API."""
    world = won_strike_force(person, "cut_off_the_head")
    ruby, force = world["ruby"], world["ruby_force"]
    at_home = ruby.api(
        "POST",
        f"/forces/{force}/cards",
        json={"name": "Lieutenant Varro", "power_rating": 4, "keywords": ["IMPERIUM", "CHARACTER"]},
    )["id"]
    bonus = next(
        d
        for d in ruby.api("GET", f"/forces/{force}/decisions")["items"]
        if d["kind"] == "victor_bonus"
    )
    before = dump(engine)
    url = f"/decisions/{bonus['id']}"
    page = ruby.post(
        f"{url}/answer", {"use": "0", "card_id_0": str(at_home), "warlord_trait_0": "Rites of War"}
    )
    assert page.status_code == 422 and "did not take part" in page.text
    api = ruby.client.post(
        f"/api/v1{url}/answer",
        json={
            "requisitions": [
                {
                    "requisition": "warlord_trait",
                    "card_id": at_home,
                    "warlord_trait": "Rites of War",
                }
            ]
        },
        headers={"X-CSRF-Token": ruby.client.get("/api/v1/auth/csrf").json()["csrf_token"]},
    )
    assert api.status_code == 422, api.text
    assert api.json()["code"] == "victor_bonus_needs_character_that_fought"
    assert dump(engine) == before


def test_a_player_writes_the_battle_report(person: Callable[[str], Browser], engine: Any) -> None:
    """Issue 23 on the page: Kai (a player of the battle) writes the report; the narrative is
    Markdown with any HTML escaped and links marked nofollow; a unit's note is on its card."""
    world = proposed_battle(person)
    ruby, kai, battle_id = world["ruby"], world["kai"], world["battle_id"]
    page = kai.get(f"/battles/{battle_id}")
    assert "Write the report" in page.text and 'action="/battles/' in page.text
    captain = world["theirs"]["Captain"]
    form = {
        "title": "Last stand at the relay",
        "played_on": "2026-11-20",
        "location": "The club",
        "narrative": "The Captain *fell*.\n\n<script>alert(1)</script> [map](https://example.com)",
        f"note_{captain}": "Fell holding the relay.",
    }
    saved = kai.post(f"/battles/{battle_id}/report", form)
    assert saved.status_code == 303 and saved.headers["location"].endswith("#report")
    shown = ruby.get(f"/battles/{battle_id}").text
    assert '<h3 dir="auto">Last stand at the relay</h3>' in shown
    assert "The Captain <em>fell</em>." in shown
    assert "<script>alert(1)</script>" not in shown and "&lt;script&gt;" in shown
    assert '<a href="https://example.com" rel="nofollow noopener">map</a>' in shown
    # What players typed is isolated (issue 33): a right-to-left override in the place
    # cannot reverse the "written by" after it.
    assert "Played 2026-11-20 · <bdi>The club</bdi> · written by <bdi>kai</bdi>" in shown
    assert "Fell holding the relay." in kai.get(f"/cards/{captain}").text
    before = dump(engine)
    refused = kai.post(f"/battles/{battle_id}/report", {**form, "played_on": "2999-01-01"})
    assert refused.status_code == 422 and 'data-code="played_on_invalid"' in refused.text
    assert "Last stand at the relay" in refused.text  # what was typed is kept
    assert dump(engine) == before
    stranger = person("mallory")
    assert stranger.post(f"/battles/{battle_id}/report", form).status_code in (403, 404)


def test_a_right_to_left_override_stays_inside_what_was_typed(
    person: Callable[[str], Browser],
) -> None:
    """Issue 33: U+202E (right-to-left override) in a place, a caption or a name reverses
    the text after it up to the end of its paragraph, unless that text is isolated: a
    place of "the club\u202e" would show "written by" backwards."""
    world = proposed_battle(person)
    kai, battle_id = world["kai"], world["battle_id"]
    rlo = "The club\u202e"
    form = {"title": "Relay\u202e", "played_on": "", "location": rlo, "narrative": "Turn 1"}
    assert kai.post(f"/battles/{battle_id}/report", form).status_code == 303
    shown = kai.get(f"/battles/{battle_id}").text
    # each closed where it ends (issue 45), and isolated where words follow it
    assert f"<bdi>{rlo}\u202c</bdi> · written by <bdi>kai</bdi>" in shown
    assert '<h3 dir="auto">Relay\u202e\u202c</h3>' in shown
    history = kai.get(f"/campaigns/{world['campaign_id']}/history").text
    assert "report was written: “<bdi>Relay\u202e\u202c</bdi>”" in history


def test_players_add_and_delete_photos(person: Callable[[str], Browser], engine: Any) -> None:
    """Issue 23 on the page: two photos in one form, shown as thumbnails the campaign's
    readers can load; a delete removes one; a file that is no image changes nothing."""
    world = proposed_battle(person)
    ruby, kai, battle_id = world["ruby"], world["kai"], world["battle_id"]
    pictures = []
    for colour in ("red", "blue"):
        out = io.BytesIO()
        Image.new("RGB", (640, 480), colour).save(out, "JPEG")
        pictures.append(("file", (f"{colour}.jpg", out.getvalue(), "image/jpeg")))
    added = ruby.client.post(
        f"/battles/{battle_id}/photos",
        data={"caption": "Deployment", "csrf_token": ruby.csrf()},
        files=pictures,
        follow_redirects=False,
    )
    assert added.status_code == 303, added.text
    page = kai.get(f"/battles/{battle_id}").text
    thumbs = re.findall(r'<img src="(/api/v1/battles/\d+/photos/\d+/320)"', page)
    assert len(thumbs) == 2 and page.count("<bdi>Deployment</bdi> · ") == 2
    assert kai.get(thumbs[0]).headers["content-type"] == "image/jpeg"
    photo_id = thumbs[0].split("/")[-2]
    gone = ruby.post(f"/battles/{battle_id}/photos/{photo_id}/delete", {})
    assert gone.status_code == 303
    assert (
        len(re.findall(r'<img src="/api/v1/battles/', kai.get(f"/battles/{battle_id}").text)) == 1
    )
    before = dump(engine)
    junk = ruby.client.post(
        f"/battles/{battle_id}/photos",
        data={"csrf_token": ruby.csrf()},
        files=[("file", ("notes.jpg", b"not a picture", "image/jpeg"))],
        follow_redirects=False,
    )
    assert junk.status_code == 422 and 'data-code="photo_unreadable"' in junk.text
    assert dump(engine) == before
