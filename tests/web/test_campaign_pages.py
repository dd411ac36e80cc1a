"""The campaign dashboard, the members page (invites, removal, settings), joining and
creating a force, through the pages; and the progress chart's geometry."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, event
from sqlmodel import select

from app import config
from app.config import get_settings
from app.db.models import CampaignMember, Force
from app.db.session import session_scope
from app.edge.csrf import unmask
from app.services.campaigns import inbox, progress, standings
from app.services.feed import history
from app.web import campaigns
from app.web.display.charts import Series, line_chart, nice_step
from tests.api.helpers import dump
from tests.web.conftest import Browser, campaign_with_two_players

Person = Callable[[str], Browser]


# --- set-up through the JSON API ----------------------------------------------------------


def roster(who: Browser, force_id: int) -> list[int]:
    return [c["id"] for c in who.api("GET", f"/forces/{force_id}")["cards"]]


def muster(world: dict[str, Any], by: Browser) -> dict[str, Any]:
    """Ruby (attacker) against Kai (defender), every unit, a Combat Patrol."""
    body = {
        "battle_size": "combat_patrol",
        "mission": "sweep_and_clear",
        "sides": [
            {
                "force_id": world["ruby_force"],
                "role": "attacker",
                "roster": roster(by, world["ruby_force"]),
                "agendas": ["assassins"],
            },
            {
                "force_id": world["kai_force"],
                "role": "defender",
                "roster": roster(by, world["kai_force"]),
                "agendas": ["cull_the_hordes"],
            },
        ],
    }
    return dict(by.api("POST", f"/campaigns/{world['campaign_id']}/battles", json=body))


def enter_result(
    world: dict[str, Any], battle_id: int, by: Browser, *, kai_captain_falls: bool = False
) -> dict[str, Any]:
    """Ruby wins 60-40; optionally Kai's Captain is destroyed and fails its Out of Action
    test (a pending decision for Kai)."""
    kai_units: list[dict[str, Any]] = []
    kai_side: dict[str, Any] = {"force_id": world["kai_force"], "victory_points": 40}
    if kai_captain_falls:
        captain = roster(by, world["kai_force"])[0]
        kai_units = [{"card_id": captain, "destroyed": True}]
        kai_side |= {"units": kai_units, "dice": [1]}
    body = {"sides": [{"force_id": world["ruby_force"], "victory_points": 60}, kai_side]}
    return dict(by.api("POST", f"/battles/{battle_id}/result", json=body))


def row(page: str, attribute: str, value: int) -> str:
    """The HTML of one table row, found by its data attribute."""
    found = re.search(rf'<tr {attribute}="{value}">(.*?)</tr>', page, re.S)
    assert found, f"no row {attribute}={value}"
    return found.group(1)


def cell(html: str, label: str) -> str:
    """The text of the cell with ``data-label``, whitespace collapsed."""
    found = re.search(rf'data-label="{re.escape(label)}"[^>]*>(.*?)</td>', html, re.S)
    assert found, f"no cell {label}"
    return " ".join(re.sub(r"<[^>]+>", " ", found.group(1)).split())


def member(page: str, username: str) -> tuple[int, str]:
    """A member's user id and list item on the members page."""
    pattern = rf'<li data-user-id="(\d+)">\s*<div class="member-line">\s*<span><strong>{username}<'
    found = re.search(pattern + ".*?</li>", page, re.S)
    assert found, f"{username} is not listed"
    return int(found.group(1)), found.group(0)


def section(page: str, heading_id: str) -> str:
    """The HTML of the <section> labelled by ``heading_id`` ('' if there is none)."""
    found = re.search(rf'<section aria-labelledby="{heading_id}".*?</section>', page, re.S)
    return found.group(0) if found else ""


# --- the dashboard --------------------------------------------------------------------------


class TestDashboard:
    def test_standings_show_the_services_numbers(self, person: Person, engine: Engine) -> None:
        world = campaign_with_two_players(person)
        battle = muster(world, world["orga"])
        enter_result(world, battle["id"], world["orga"])
        page = world["ruby"].get(f"/campaigns/{world['campaign_id']}")
        assert page.status_code == 200
        with session_scope(engine, writes=False) as session:
            table = standings.standings(session, campaign_id=world["campaign_id"])
        assert [s.name for s in table] == ["Ultramarines 4th", "Waaagh! Gorbad"]
        for s in table:
            html = row(page.text, "data-force-id", s.force_id)
            assert f'href="/forces/{s.force_id}"' in html and s.name in html
            assert cell(html, "Player") == s.player_name
            assert cell(html, "Battles") == str(s.battles) == "1"
            assert cell(html, "W/D/L") == f"{s.wins}/{s.draws}/{s.losses}"
            assert cell(html, "Crusade points") == str(s.crusade_points)
            assert cell(html, "Supply") == f"{s.supply_used} / {s.supply_limit} PR"
            assert f'<progress value="{s.supply_used}" max="{s.supply_limit}"' in html
            assert cell(html, "RP") == str(s.requisition_points)
        # the winner is listed first
        assert page.text.index("Ultramarines 4th") < page.text.index("Waaagh! Gorbad")
        recent = row(page.text, "data-battle-id", battle["id"])
        assert "Sweep and Clear" in recent and "Combat Patrol" in recent
        assert "Ultramarines 4th won 60–40" in recent and "Resolved" in recent
        assert f'href="/battles/{battle["id"]}"' in recent
        history = section(page.text, "history-h")
        assert "beat" in history and "60–40" in history and "joined the Crusade" in history

    def test_anonymous_reads_a_public_campaign_and_is_sent_to_log_in_for_a_private_one(
        self, person: Person, site: TestClient
    ) -> None:
        world = campaign_with_two_players(person)
        url = f"/campaigns/{world['campaign_id']}"
        private = site.get(url, follow_redirects=False)
        assert private.status_code == 303
        assert private.headers["location"] == f"/login?next={url}"
        world["orga"].api("PATCH", url, json={"public": True})
        public = site.get(url)
        assert public.status_code == 200
        assert "War for Vigilus" in public.text and "Ultramarines 4th" in public.text
        assert "Waiting for you" not in public.text  # no inbox for nobody
        assert "Record a battle" not in public.text and "Create your force" not in public.text
        assert "Join this campaign" not in public.text

    def test_a_logged_in_stranger_is_refused_a_private_campaign(self, person: Person) -> None:
        world = campaign_with_two_players(person)
        stranger = person("stranger")
        for url in ("", "/members"):
            page = stranger.get(f"/campaigns/{world['campaign_id']}{url}")
            assert page.status_code == 403
            assert "Only members can see this campaign." in page.text
            assert "Ultramarines 4th" not in page.text
        assert stranger.get("/campaigns/999999").status_code == 404

    def test_players_see_the_links_to_play(self, person: Person) -> None:
        world = campaign_with_two_players(person)
        page = world["kai"].get(f"/campaigns/{world['campaign_id']}").text
        assert f'"/campaigns/{world["campaign_id"]}/battles/new"' in page
        assert "Record a battle" in page and "Members &amp; invites" in page
        assert "You are a player here" in page
        assert "Nothing waits for you right now." in page

    def test_the_download_link_gives_the_campaign_document(self, person: Person) -> None:
        world = campaign_with_two_players(person)
        export = f"/api/v1/campaigns/{world['campaign_id']}/export"
        page = world["kai"].get(f"/campaigns/{world['campaign_id']}").text
        assert f'<a href="{export}" download>Download this campaign</a>' in page
        got = world["kai"].get(export)  # the login cookie is enough for a read
        assert got.status_code == 200 and got.headers["content-disposition"].startswith(
            'attachment; filename="war-for-vigilus-'
        )
        assert {f["name"] for f in got.json()["forces"]} == {"Ultramarines 4th", "Waaagh! Gorbad"}


class TestLongLists:
    def test_every_battle_is_reachable_page_by_page(
        self, person: Person, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        world = campaign_with_two_players(person)
        ids = []
        for _ in range(3):  # a force fights one battle at a time: revert each to muster again
            ids.append(muster(world, world["ruby"])["id"])
            world["orga"].api("POST", f"/battles/{ids[-1]}/revert")
        monkeypatch.setattr(campaigns, "RECENT_BATTLES", 2)
        monkeypatch.setattr(campaigns, "BATTLES_PER_PAGE", 2)
        url = f"/campaigns/{world['campaign_id']}"
        dashboard = world["kai"].get(url).text
        assert f'<a href="{url}/battles">All battles</a>' in dashboard
        first = world["kai"].get(f"{url}/battles").text
        assert [int(i) for i in re.findall(r'data-battle-id="(\d+)"', first)] == ids[:0:-1]
        assert f'href="{url}/battles?before={ids[1]}" rel="next">Older' in first
        second = world["kai"].get(f"{url}/battles?before={ids[1]}").text
        assert [int(i) for i in re.findall(r'data-battle-id="(\d+)"', second)] == ids[:1]
        assert f'<a href="{url}/battles">Newest</a>' in second
        assert 'rel="next"' not in second
        oldest = world["kai"].get(f"{url}/battles?before={ids[0]}").text
        assert "There are no older battles" in oldest
        assert world["kai"].get(f"{url}/battles?before=0").status_code == 422
        assert person("stranger").get(f"{url}/battles").status_code == 403

    def test_the_whole_history_newest_first(
        self, person: Person, monkeypatch: pytest.MonkeyPatch, engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        monkeypatch.setattr(campaigns, "HISTORY_SHOWN", 3)
        monkeypatch.setattr(campaigns, "HISTORY_PER_PAGE", 5)
        url = f"/campaigns/{world['campaign_id']}"
        with session_scope(engine, writes=False) as session:
            oldest_first, _ = history.list_events(
                session, campaign_id=world["campaign_id"], offset=0, limit=100
            )
            kinds = [e.kind for e in reversed(oldest_first)]
        assert len(kinds) > 5
        dashboard = world["kai"].get(url).text
        assert f'<a href="{url}/history">The whole history</a>' in dashboard
        seen: list[str] = []
        address: str | None = f"{url}/history"
        while address:  # follow the "Older" links to the end
            page = world["kai"].get(address).text
            seen += re.findall(r'<li data-kind="([a-z_]+)">', page)
            older = re.search(r'href="([^"]+)" rel="next">Older', page)
            address = older.group(1) if older else None
        assert seen == kinds  # every entry once, newest first
        assert kinds[-1] == "campaign_created"


def second_pair(world: dict[str, Any]) -> dict[str, Any]:
    """Ruby and Kai each raise a second force of two units (so a second battle needs no
    answers to the first one's decisions)."""
    more = dict(world)
    for who, key, name in (
        ("ruby", "ruby_force", "Crimson Fists"),
        ("kai", "kai_force", "Deff Skwadron"),
    ):
        force = world[who].api(
            "POST",
            f"/campaigns/{world['campaign_id']}/forces",
            json={"name": name, "crusade_faction": "IMPERIUM"},
        )
        for unit in ("Lieutenant", "Assault Squad"):
            world[who].api(
                "POST",
                f"/forces/{force['id']}/cards",
                json={"name": unit, "power_rating": 4, "keywords": ["IMPERIUM", "INFANTRY"]},
            )
        more[key] = force["id"]
    return more


class TestDashboardQueries:
    def test_statements_do_not_grow_with_battles_forces_or_history(
        self, person: Person, engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        url = f"/campaigns/{world['campaign_id']}"

        def statements_for(path: str) -> int:
            seen: list[str] = []

            def count(*args: Any) -> None:
                seen.append(str(args[2]))

            event.listen(engine, "before_cursor_execute", count)
            try:
                assert world["kai"].get(path).status_code == 200
            finally:
                event.remove(engine, "before_cursor_execute", count)
            return len(seen)

        pages = (url, f"{url}/battles", f"{url}/history")
        # Kai has been here before: both rounds below then show news since the last visit
        # (a first visit, like a reload with nothing new, reads no news at all)
        assert world["kai"].get(url).status_code == 200
        for _ in range(8):  # more history than the page shows, so it reads the last page
            world["orga"].api("POST", f"{url}/invites", json={"role": "player"})
        battle = muster(world, world["orga"])
        enter_result(world, battle["id"], world["orga"], kai_captain_falls=True)
        one = [statements_for(path) for path in pages]
        other = second_pair(world)
        battle = muster(other, world["orga"])
        enter_result(other, battle["id"], world["orga"], kai_captain_falls=True)
        assert len(world["kai"].api("GET", f"{url}/battles")["items"]) == 2
        assert [statements_for(path) for path in pages] == one

    def test_a_reload_with_nothing_new_reads_no_news(self, person: Person, engine: Engine) -> None:
        world = campaign_with_two_players(person)
        url = f"/campaigns/{world['campaign_id']}"
        assert world["kai"].get(url).status_code == 200
        battle = muster(world, world["orga"])
        enter_result(world, battle["id"], world["orga"], kai_captain_falls=True)
        assert world["ruby"].get(url).status_code == 200  # the board, built for players
        seen: list[str] = []

        def count(*args: Any) -> None:
            if not str(args[2]).startswith("BEGIN"):  # SQLite's; PostgreSQL's is not seen
                seen.append(str(args[2]))

        event.listen(engine, "before_cursor_execute", count)
        try:
            news = world["kai"].get(url)
            with_news, seen[:] = len(seen), []
            reload = world["kai"].get(url)
        finally:
            event.remove(engine, "before_cursor_execute", count)
        assert "nothing new since you last looked" not in news.text.lower()
        assert "nothing new since you last looked" in reload.text.lower()
        # Kai's news visit read the feed since the visit (5 statements) and remembered it
        # after the page (2); the reload does neither
        assert len(seen) == with_news - 7


class TestWaitingForYou:
    def test_a_battle_being_recorded_waits_for_its_recorder_only(self, person: Person) -> None:
        world = campaign_with_two_players(person)
        url = f"/campaigns/{world['campaign_id']}"
        assert "Record a battle" in world["ruby"].get(url).text
        started = world["ruby"].post(f"{url}/battles/new")
        assert started.status_code == 303
        page = world["ruby"].get(url).text
        assert "Resume your battle in progress" in page
        assert "Finish recording your battle" in page
        assert "Nothing waits for you" not in page
        other = world["kai"].get(url).text
        assert "Record a battle" in other and "Finish recording" not in other
        discarded = world["ruby"].post(started.headers["location"].rsplit("/", 1)[0] + "/discard")
        assert discarded.status_code == 303
        assert "Finish recording" not in world["ruby"].get(url).text

    def test_a_proposed_result_waits_for_the_opponent_not_the_proposer(
        self, person: Person
    ) -> None:
        world = campaign_with_two_players(person)
        battle = muster(world, world["ruby"])
        proposed = enter_result(world, battle["id"], world["ruby"])
        assert proposed["status"] == "proposed"
        url = f"/campaigns/{world['campaign_id']}"
        kai = section(world["kai"].get(url).text, "waiting-h")
        assert "Confirm this result" in kai and f'href="/battles/{battle["id"]}"' in kai
        ruby = section(world["ruby"].get(url).text, "waiting-h")
        assert "Confirm this result" not in ruby and "Nothing waits for you" in ruby
        assert "Settle the dispute" not in section(world["orga"].get(url).text, "waiting-h")
        # disputed: it leaves the opponent's list and goes to the organizers'
        world["kai"].api("POST", f"/battles/{battle['id']}/dispute")
        assert "Confirm this result" not in section(world["kai"].get(url).text, "waiting-h")
        orga = section(world["orga"].get(url).text, "waiting-h")
        assert "Settle the dispute" in orga and f'href="/battles/{battle["id"]}"' in orga
        recent = row(world["kai"].get(url).text, "data-battle-id", battle["id"])
        assert "Disputed" in recent

    def test_pending_decisions_wait_for_the_forces_owner(self, person: Person) -> None:
        world = campaign_with_two_players(person)
        battle = muster(world, world["orga"])
        enter_result(world, battle["id"], world["orga"], kai_captain_falls=True)
        pending = world["kai"].api("GET", f"/forces/{world['kai_force']}/decisions")["items"]
        assert [d["kind"] for d in pending] == ["out_of_action"]
        url = f"/campaigns/{world['campaign_id']}"
        kai = section(world["kai"].get(url).text, "waiting-h")
        assert f'href="/decisions/{pending[0]["id"]}"' in kai
        assert "Waaagh! Gorbad: Out of Action test for Captain" in kai
        ruby = section(world["ruby"].get(url).text, "waiting-h")
        assert "/decisions/" not in ruby

    def test_the_inbox_is_read_only_where_the_header_counts_something(
        self, person: Person, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        world = campaign_with_two_players(person)
        url = f"/campaigns/{world['campaign_id']}"
        read_for: list[int] = []
        real = inbox.waiting_for

        def waiting_for(*args: Any, **kwargs: Any) -> inbox.Inbox:
            read_for.append(kwargs["user_id"])
            return real(*args, **kwargs)

        monkeypatch.setattr(inbox, "waiting_for", waiting_for)
        assert "Nothing waits for you" in section(world["kai"].get(url).text, "waiting-h")
        assert read_for == []  # the header's count said nothing waits here
        battle = muster(world, world["ruby"])
        enter_result(world, battle["id"], world["ruby"])
        kai = section(world["kai"].get(url).text, "waiting-h")
        assert "Confirm this result" in kai and len(read_for) == 1
        # the organizer is shown a dispute, which the header counts for organizers too
        world["kai"].api("POST", f"/battles/{battle['id']}/dispute")
        assert "Settle the dispute" in section(world["orga"].get(url).text, "waiting-h")

    def test_the_inbox_takes_a_fixed_number_of_statements(
        self, person: Person, engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        battle = muster(world, world["ruby"])
        enter_result(world, battle["id"], world["ruby"])
        statements: list[str] = []

        def count(*args: Any) -> None:
            statements.append(str(args[2]))

        with session_scope(engine, writes=False) as session:
            kai_id = session.exec(
                select(Force.owner_id).where(Force.id == world["kai_force"])
            ).one()
            assert kai_id is not None
            event.listen(engine, "before_cursor_execute", count)
            try:
                waiting = inbox.waiting_for(
                    session, campaign_id=world["campaign_id"], user_id=kai_id, organizer=True
                )
            finally:
                event.remove(engine, "before_cursor_execute", count)
        assert [b.battle_id for b in waiting.to_confirm] == [battle["id"]]
        assert waiting.to_confirm[0].force_names == ("Ultramarines 4th", "Waaagh! Gorbad")
        assert len(statements) <= 4


class TestCreateForce:
    def test_a_member_creates_a_force_they_own(self, person: Person, engine: Engine) -> None:
        world = campaign_with_two_players(person)
        kai = world["kai"]
        created = kai.post(
            f"/campaigns/{world['campaign_id']}/forces",
            {"name": "Speed Freeks", "crusade_faction": "ORKS", "player_name": "Kai"},
        )
        assert created.status_code == 303
        force_id = int(created.headers["location"].rsplit("/", 1)[1])
        force = kai.api("GET", f"/forces/{force_id}")
        assert (force["name"], force["crusade_faction"], force["player_name"]) == (
            "Speed Freeks",
            "ORKS",
            "Kai",
        )
        with session_scope(engine, writes=False) as session:
            row = session.get(Force, force_id)
            kai_force = session.get(Force, world["kai_force"])
            assert row is not None and kai_force is not None
            assert row.owner_id == kai_force.owner_id

    def test_a_refused_force_keeps_the_values_and_changes_nothing(
        self, person: Person, engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        before = dump(engine)
        refused = world["kai"].post(
            f"/campaigns/{world['campaign_id']}/forces",
            {"name": "Speed Freeks", "crusade_faction": "SQUATS", "player_name": "Kai K"},
        )
        assert refused.status_code == 422
        assert "The Crusade Faction must be one of" in refused.text
        assert 'value="Speed Freeks"' in refused.text and 'value="Kai K"' in refused.text
        assert 'aria-invalid="true" aria-describedby="f-crusade_faction-error"' in refused.text
        assert "<details open>" in refused.text
        assert dump(engine) == before
        nameless = world["kai"].post(
            f"/campaigns/{world['campaign_id']}/forces",
            {"name": "  ", "crusade_faction": "ORKS"},
        )
        assert nameless.status_code == 422 and "Give a name of 1 to 120 characters." in (
            nameless.text
        )
        assert '<option value="ORKS" selected>' in nameless.text
        assert dump(engine) == before

    def test_a_stranger_cannot_create_a_force(self, person: Person, engine: Engine) -> None:
        world = campaign_with_two_players(person)
        stranger = person("stranger")
        before = dump(engine)
        refused = stranger.post(
            f"/campaigns/{world['campaign_id']}/forces",
            {"name": "Gatecrashers", "crusade_faction": "ORKS"},
        )
        assert refused.status_code == 403
        assert dump(engine) == before


class TestJoin:
    def test_an_open_campaign_can_be_joined_from_its_page(self, person: Person) -> None:
        world = campaign_with_two_players(person)
        url = f"/campaigns/{world['campaign_id']}"
        world["orga"].api("PATCH", url, json={"public": True, "join_policy": "open"})
        newcomer = person("newcomer")
        page = newcomer.get(url).text
        assert "Join this campaign" in page and "Waiting for you" in page
        assert "Create your force" not in page
        joined = newcomer.post(f"{url}/join")
        assert joined.status_code == 303 and joined.headers["location"] == f"{url}?joined=1"
        after = newcomer.get(joined.headers["location"]).text
        assert "Welcome to the campaign!" in after and "You are a player here" in after
        assert "Join this campaign" not in after and "Create your force" in after
        members = newcomer.api("GET", f"{url}/members")["items"]
        assert ("newcomer", "player") in [(m["username"], m["role"]) for m in members]

    def test_an_invite_only_campaign_has_no_join_button_and_refuses(
        self, person: Person, engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        url = f"/campaigns/{world['campaign_id']}"
        world["orga"].api("PATCH", url, json={"public": True})
        newcomer = person("newcomer")
        assert "Join this campaign" not in newcomer.get(url).text
        before = dump(engine)
        refused = newcomer.post(f"{url}/join")
        assert refused.status_code == 403
        assert "invite only" in refused.text
        assert dump(engine) == before

    def test_a_refused_join_does_not_show_a_private_campaign(
        self, person: Person, engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        newcomer = person("newcomer")
        before = dump(engine)
        refused = newcomer.post(f"/campaigns/{world['campaign_id']}/join")
        assert refused.status_code == 403
        assert "invite only" in refused.text and "Ultramarines 4th" not in refused.text
        assert dump(engine) == before


# --- members, invites and settings ------------------------------------------------------


class TestMembersPage:
    def test_members_are_listed_with_their_roles(self, person: Person) -> None:
        world = campaign_with_two_players(person)
        page = world["kai"].get(f"/campaigns/{world['campaign_id']}/members")
        assert page.status_code == 200
        for who, role in (("orga", "Organizer"), ("ruby", "Player"), ("kai", "Player")):
            _user_id, item = member(page.text, who)
            assert f'<span class="badge">{role}</span>' in item, who
        # a player sees no organizer tools
        assert "Create invite link" not in page.text and "Save settings" not in page.text
        assert "Remove…" not in page.text

    def test_an_invite_link_lets_a_second_person_in(self, person: Person) -> None:
        world = campaign_with_two_players(person)
        url = f"/campaigns/{world['campaign_id']}"
        created = world["orga"].post(
            f"{url}/invites", {"role": "player", "hours": "48", "max_uses": "1"}
        )
        assert created.status_code == 200
        link = re.search(r'id="invite-link" type="text" readonly value="([^"]+)"', created.text)
        assert link, created.text
        assert link.group(1).startswith("http://testserver/invites/")
        code = link.group(1).rsplit("/", 1)[1]
        friend = person("friend")
        assert friend.get(url).status_code == 403
        assert "Join the campaign" in friend.get(f"/invites/{code}").text
        accepted = friend.post(f"/invites/{code}")
        assert accepted.status_code == 303
        assert accepted.headers["location"] == f"{url}?joined=1"
        page = friend.get(url)
        assert page.status_code == 200 and "You are a player here" in page.text
        # the invite had one use
        late = person("late")
        assert late.post(f"/invites/{code}").status_code == 410

    def test_invite_links_start_with_public_url_when_set(
        self, person: Person, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        world = campaign_with_two_players(person)
        url = f"/campaigns/{world['campaign_id']}"
        behind_proxy = get_settings().model_copy(
            update={"public_url": "https://crusade.example.org/"}
        )
        monkeypatch.setattr(config, "get_settings", lambda: behind_proxy)
        created = world["orga"].post(f"{url}/invites", {"role": "player", "hours": "48"})
        link = re.search(r'id="invite-link" type="text" readonly value="([^"]+)"', created.text)
        assert link and link.group(1).startswith("https://crusade.example.org/invites/")

    def test_open_invites_are_listed_and_can_be_withdrawn(
        self, person: Person, engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        url = f"/campaigns/{world['campaign_id']}"
        orga = world["orga"]
        code = orga.api("POST", f"{url}/invites", json={"role": "player", "max_uses": 2})["code"]
        page = orga.get(f"{url}/members").text
        assert f'value="http://testserver/invites/{code}"' in page
        assert "used 0 of 2" in page
        assert code not in world["ruby"].get(f"{url}/members").text  # players see no codes
        before = dump(engine)
        refused = world["ruby"].post(f"{url}/invites/{code}/withdraw")
        assert refused.status_code == 403 and dump(engine) == before
        withdrawn = orga.post(f"{url}/invites/{code}/withdraw")
        assert withdrawn.status_code == 303
        page = orga.get(withdrawn.headers["location"]).text
        assert "Invite withdrawn" in page and code not in page
        assert person("friend").post(f"/invites/{code}").status_code == 404
        missing = orga.post(f"{url}/invites/nonsense/withdraw")
        assert missing.status_code == 404 and "no such invite" in missing.text

    def test_a_player_cannot_create_invites(self, person: Person, engine: Engine) -> None:
        world = campaign_with_two_players(person)
        before = dump(engine)
        refused = world["ruby"].post(
            f"/campaigns/{world['campaign_id']}/invites", {"role": "organizer", "hours": "1"}
        )
        assert refused.status_code == 403
        assert "Only the campaign&#39;s organizers can do this." in refused.text
        assert dump(engine) == before

    @pytest.mark.parametrize(
        ("data", "words"),
        [
            ({"role": "player", "hours": "0", "max_uses": "1"}, "An invite lasts 1 to 2160"),
            ({"role": "player", "hours": "lots", "max_uses": "1"}, "An invite lasts 1 to 2160"),
            ({"role": "player", "hours": "24", "max_uses": "101"}, "used 1 to 100 times"),
            ({"role": "admin", "hours": "24", "max_uses": "1"}, "Choose player or organizer."),
        ],
    )
    def test_invite_limits_are_the_apis(
        self, person: Person, engine: Engine, data: dict[str, str], words: str
    ) -> None:
        world = campaign_with_two_players(person)
        before = dump(engine)
        refused = world["orga"].post(f"/campaigns/{world['campaign_id']}/invites", data)
        assert refused.status_code == 422
        assert words in refused.text and 'role="alert"' in refused.text
        assert f'value="{data["hours"]}"' in refused.text
        assert dump(engine) == before

    def test_an_organizer_removes_a_member_after_confirming(
        self, person: Person, engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        url = f"/campaigns/{world['campaign_id']}"
        page = world["orga"].get(f"{url}/members").text
        kai_id, _item = member(page, "kai")
        assert f'action="{url}/members/{kai_id}/remove"' in page
        assert "Yes, remove kai" in page
        removed = world["orga"].post(f"{url}/members/{kai_id}/remove")
        assert removed.status_code == 303 and removed.headers["location"] == f"{url}/members"
        assert "kai" not in world["orga"].get(f"{url}/members").text.split("Members</h2>")[1]
        assert world["kai"].get(url).status_code == 403
        with session_scope(engine, writes=False) as session:
            left = session.exec(
                select(CampaignMember).where(CampaignMember.user_id == kai_id)
            ).all()
        assert left == []
        # the player's force stays in the campaign
        assert "Waaagh! Gorbad" in world["orga"].get(url).text

    def test_a_player_cannot_remove_a_member(self, person: Person, engine: Engine) -> None:
        world = campaign_with_two_players(person)
        url = f"/campaigns/{world['campaign_id']}"
        members = world["ruby"].api("GET", f"{url}/members")["items"]
        kai_id = next(m["user_id"] for m in members if m["username"] == "kai")
        before = dump(engine)
        assert world["ruby"].post(f"{url}/members/{kai_id}/remove").status_code == 403
        assert dump(engine) == before

    def test_settings_change_the_campaign(self, person: Person, site: TestClient) -> None:
        world = campaign_with_two_players(person)
        url = f"/campaigns/{world['campaign_id']}"
        saved = world["orga"].post(
            f"{url}/settings",
            {
                "name": "War for Vigilus II",
                "description": "Round two",
                "public": "true",
                "join_policy": "open",
            },
        )
        assert saved.status_code == 303
        assert "Campaign settings saved." in world["orga"].get(saved.headers["location"]).text
        campaign = world["orga"].api("GET", url)
        assert (campaign["name"], campaign["description"]) == ("War for Vigilus II", "Round two")
        public = site.get(url)
        assert public.status_code == 200 and "Anyone with an account can join" in public.text
        # unticking the box makes it private again
        world["orga"].post(
            f"{url}/settings", {"name": "War for Vigilus II", "join_policy": "invite"}
        )
        assert site.get(url, follow_redirects=False).status_code == 303

    def test_refused_settings_keep_the_values(self, person: Person, engine: Engine) -> None:
        world = campaign_with_two_players(person)
        before = dump(engine)
        refused = world["orga"].post(
            f"/campaigns/{world['campaign_id']}/settings",
            {"name": " ", "description": "Kept words", "join_policy": "open"},
        )
        assert refused.status_code == 422
        assert "Give a name of 1 to 120 characters." in refused.text
        assert "Kept words</textarea>" in refused.text
        assert '<option value="open" selected>' in refused.text
        assert dump(engine) == before


class TestForms:
    def test_every_form_carries_the_sessions_csrf_token(self, person: Person) -> None:
        """The pages' own forms work in a browser (the test Browser adds its own token)."""
        world = campaign_with_two_players(person)
        url = f"/campaigns/{world['campaign_id']}"
        world["orga"].api("PATCH", url, json={"public": True, "join_policy": "open"})
        newcomer = person("newcomer")
        pages = [
            (world["orga"], "/"),
            (world["orga"], url),
            (world["orga"], f"{url}/members"),
            (newcomer, url),
        ]
        for who, page_url in pages:
            page = who.get(page_url).text
            forms = re.findall(r'<form method="post".*?</form>', page, re.S)
            assert len(forms) >= 2, page_url  # log out, and the page's own
            token = unmask(who.csrf())  # each response masks it afresh (app/edge/csrf.py)
            for form in forms:
                sent = re.search(r'name="csrf_token" value="([0-9a-f]+)"', form)
                assert sent and unmask(sent.group(1)) == token, (page_url, form[:80])


class TestHome:
    def test_home_shows_your_role_in_each_campaign(self, person: Person) -> None:
        world = campaign_with_two_players(person)
        other = world["ruby"].api("POST", "/campaigns", json={"name": "Ruby's League"})
        page = world["ruby"].get("/").text
        for campaign_id, role in ((world["campaign_id"], "Player"), (other["id"], "Organizer")):
            card = page.split(f'href="/campaigns/{campaign_id}"')[1].split("</article>")[0]
            assert f'<span class="badge">{role}</span>' in card


# --- the progress chart ---------------------------------------------------------------------


class TestProgressChart:
    def test_points_become_coordinates(self) -> None:
        chart = line_chart(
            [Series("Blue", ((0, 0), (1, 2), (2, 4))), Series("Red", ((1, 0), (2, 1)))],
            width=200,
            height=100,
            margin=(0, 0, 0, 0),
        )
        blue, red = chart.lines
        # x runs 0..2 over 200 units; y 0..4 (ticks of 1) over 100, upwards
        assert blue.points == ((0, 100), (100, 50), (200, 0))
        assert red.points == ((100, 100), (200, 75))
        assert blue.polyline == "0,100 100,50 200,0"
        assert [t.label for t in chart.y_ticks] == ["0", "1", "2", "3", "4"]
        assert [t.label for t in chart.x_ticks] == ["0", "1", "2"]
        assert blue.colour != red.colour and (blue.last, red.last) == (4, 1)
        assert chart.xs == (0, 1, 2) and not chart.empty

    def test_negative_values_keep_zero_on_the_axis(self) -> None:
        chart = line_chart(
            [Series("Scarred", ((0, 0), (1, -3)))], width=100, height=100, margin=(0, 0, 0, 0)
        )
        labels = [t.label for t in chart.y_ticks]
        assert labels[0] == "-3" and "0" in labels and labels[-1] == "1"
        assert chart.lines[0].points[1] == (100, 100)

    def test_an_empty_campaign_draws_nothing(self) -> None:
        chart = line_chart([])
        assert chart.empty and chart.lines == () and chart.xs == ()
        assert [t.label for t in chart.x_ticks] == ["0", "1"]

    def test_many_forces_stay_apart(self) -> None:
        chart = line_chart([Series(f"F{n}", ((0, n),)) for n in range(9)])
        styles = {(line.colour, line.dash) for line in chart.lines}
        assert len(styles) == 9

    @pytest.mark.parametrize(
        ("span", "step"), [(0, 1), (3, 1), (5, 1), (6, 2), (12, 5), (40, 10), (100, 20)]
    )
    def test_nice_steps(self, span: int, step: int) -> None:
        assert nice_step(span) == step

    def test_the_service_follows_each_force_battle_by_battle(
        self, person: Person, engine: Engine
    ) -> None:
        world = campaign_with_two_players(person)
        with session_scope(engine, writes=False) as session:
            assert progress.progress(session, campaign_id=world["campaign_id"]).forces == ()
        empty = world["ruby"].get(f"/campaigns/{world['campaign_id']}").text
        assert "No battles resolved yet" in empty and "<svg viewBox" not in empty
        battle = muster(world, world["orga"])
        enter_result(world, battle["id"], world["orga"])
        with session_scope(engine, writes=False) as session:
            data = progress.progress(session, campaign_id=world["campaign_id"])
            table = {
                s.force_id: s
                for s in standings.standings(session, campaign_id=world["campaign_id"])
            }
        assert data.battle_ids == (battle["id"],)
        ruby = next(f for f in data.forces if f.force_id == world["ruby_force"])
        # before the battle: three fresh units; after it each has 1 XP (ruby's Captain may
        # have more from the agenda, so compare with the API's cards)
        cards = world["ruby"].api("GET", f"/forces/{world['ruby_force']}")["cards"]
        assert [(m.battle, m.xp) for m in ruby.marks] == [(0, 0), (1, sum(c["xp"] for c in cards))]
        assert ruby.marks[-1].crusade_points == table[world["ruby_force"]].crusade_points
        page = world["ruby"].get(f"/campaigns/{world['campaign_id']}?chart=xp").text
        chart = section(page, "progress-h")
        assert 'role="img"' in chart and "<title" in chart and "<desc" in chart
        assert '<g data-force="Ultramarines 4th">' in chart and "<polyline" in chart
        assert '<strong aria-current="true">Experience (XP)</strong>' in chart
        assert "The chart's numbers as a table" in chart


def test_the_map_page_lists_who_holds_what(person: Callable[[str], Browser]) -> None:
    """Issue 23: the map page shows each territory, its holder, neighbours and bonus."""
    world = campaign_with_two_players(person)
    orga = world["orga"]
    cid = world["campaign_id"]
    empty = world["ruby"].get(f"/campaigns/{cid}/map").text
    assert "This campaign has no map yet" in empty
    hive = orga.api(
        "POST",
        f"/campaigns/{cid}/territories",
        json={
            "name": "Hyperia Hive",
            "bonus": "requisition_point",
            "holder_force_id": world["kai_force"],
        },
    )
    orga.api(
        "POST",
        f"/campaigns/{cid}/territories",
        json={"name": "Dirt Wastes", "neighbours": [hive["id"]]},
    )
    page = world["ruby"].get(f"/campaigns/{cid}/map").text
    row = page.split(f'id="territory-{hive["id"]}"')[1].split("</article>")[0]
    assert "Hyperia Hive" in row and f'href="/forces/{world["kai_force"]}"' in row
    assert "Dirt Wastes" in row and "+1 RP after each battle its holder plays" in row
    assert "Edit Hyperia Hive" not in row  # a player reads the map; organizers draw it
    drawing = page.split("<svg")[1].split("</svg>")[0]
    assert drawing.count("<circle") == 2 and drawing.count("<line") == 1
    # the holder is told by a letter as well as a colour; the unheld place is dashed
    assert 'class="mark" dominant-baseline="central" text-anchor="middle">A</text>' in drawing
    assert "\u2068Dirt Wastes\u2069: nobody" in drawing  # in its <desc>, isolated
    assert 'place unheld"' in drawing
    assert f'href="/campaigns/{cid}/map"' in world["ruby"].get(f"/campaigns/{cid}").text


def test_an_organizer_draws_the_map_on_its_page(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    orga, cid = world["orga"], world["campaign_id"]
    url = f"/campaigns/{cid}/map"
    added = orga.post(f"{url}/territories", {"name": "Hyperia Hive", "bonus": "requisition_point"})
    assert added.status_code == 303, added.text
    [hive] = orga.api("GET", f"/campaigns/{cid}/territories")
    second = orga.post(
        f"{url}/territories",
        {"name": "Dirt Wastes", "holder": str(world["kai_force"]), "neighbours": [hive["id"]]},
    )
    assert second.headers["location"].startswith(f"{url}#territory-")
    hive, wastes = orga.api("GET", f"/campaigns/{cid}/territories")
    assert hive["neighbours"] == [wastes["id"]] and wastes["holder_force_id"] == world["kai_force"]

    before = dump(engine)
    nameless = orga.post(f"{url}/territories/{hive['id']}", {"name": " ", "bonus": "none"})
    assert (
        nameless.status_code == 422
        and "A territory needs a name of 1 to 80 characters." in nameless.text
    )
    assert "open>" in nameless.text.split(f'id="territory-{hive["id"]}"')[1].split("</article>")[0]
    assert world["ruby"].post(f"{url}/territories", {"name": "Mine"}).status_code == 403
    assert dump(engine) == before

    edited = orga.post(
        f"{url}/territories/{hive['id']}",
        {"name": "Hyperia Hive", "holder": str(world["ruby_force"]), "bonus": "none"},
    )
    assert edited.status_code == 303
    hive, wastes = orga.api("GET", f"/campaigns/{cid}/territories")
    assert hive["holder_force_id"] == world["ruby_force"] and hive["neighbours"] == []
    assert wastes["neighbours"] == []  # unticked: the link is gone both ways
    gone = orga.post(f"{url}/territories/{wastes['id']}/delete")
    assert gone.headers["location"] == f"{url}?deleted=1"
    assert [t["name"] for t in orga.api("GET", f"/campaigns/{cid}/territories")] == ["Hyperia Hive"]
