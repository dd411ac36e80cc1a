"""The pages built from what has not changed (issue 50): the campaign dashboard, a Crusade
card and the battles list keep their reader-independent parts per version of the campaign,
render the reader's own parts (navigation, CSRF token, "waiting for you") per request, and
answer 304 only to the session the page was built for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.api.plumbing.cache import VersionedBodies
from app.faults import OUTAGES
from app.main import create_app
from tests.api.helpers import force, unit
from tests.conftest import ORGANIZER, with_csrf
from tests.faults.outages import Database
from tests.web.conftest import Browser, campaign_with_two_players, without_visit
from tests.web.test_battle_pages import proposed_battle


def pages(world: dict[str, Any], card: int) -> list[str]:
    campaign = world["campaign_id"]
    return [
        f"/campaigns/{campaign}",
        f"/cards/{card}",
        f"/campaigns/{campaign}/battles",
        f"/forces/{world['ruby_force']}",
        f"/forces/{world['ruby_force']}/requisitions",
        f"/battles/{world['battle_id']}",
    ]


def first_card(world: dict[str, Any], force: str) -> int:
    cards = world["orga"].api("GET", f"/forces/{world[force]}")["cards"]
    return int(cards[0]["id"])


def test_each_reader_gets_their_own_page_and_a_304_only_for_it(
    person: Callable[[str], Browser], site: TestClient
) -> None:
    world = proposed_battle(person)
    world["orga"].api("PATCH", f"/campaigns/{world['campaign_id']}", json={"public": True})
    card = first_card(world, "ruby_force")
    for path in pages(world, card):
        seen = {}
        for who, client in (
            ("ruby", world["ruby"].client),
            ("kai", world["kai"].client),
            ("anonymous", site),
        ):
            client.get(path)  # a member's first visit moves what "since your last visit" says
            answer = client.get(path)
            assert answer.status_code == 200, (path, who)
            seen[who] = answer
            again = client.get(path, headers={"If-None-Match": answer.headers["ETag"]})
            assert again.status_code == 304, (path, who)
        ruby, kai, anonymous = seen["ruby"], seen["kai"], seen["anonymous"]
        assert len({ruby.headers["ETag"], kai.headers["ETag"], anonymous.headers["ETag"]}) == 3
        # another reader's ETag is never a 304: their page holds their own token and name
        crossed = world["kai"].get(path, headers={"If-None-Match": ruby.headers["ETag"]})
        assert crossed.status_code == 200 and "ruby" not in crossed.text.split("<main")[0]
        assert "Log out" not in anonymous.text and "Log in" in anonymous.text
    # the owner's card page has the edit form; another player's has not (cached alike)
    form = f'action="/cards/{card}"'
    assert form in world["ruby"].get(f"/cards/{card}").text
    assert form not in world["kai"].get(f"/cards/{card}").text
    # and the owner's Order of Battle its Add and Duplicate buttons (kept apart from readers')
    force = f"/forces/{world['ruby_force']}"
    duplicate = f"/forces/{world['ruby_force']}/cards/new?copy={card}"
    assert duplicate in world["ruby"].get(force).text
    assert duplicate not in world["kai"].get(force).text
    assert duplicate not in site.get(force).text
    # a player may create a force on the dashboard; an anonymous reader may not
    dashboard = f"/campaigns/{world['campaign_id']}"
    assert "Create your force" in world["kai"].get(dashboard).text
    assert "Create your force" not in site.get(dashboard).text


def test_a_private_campaigns_pages_are_refused_to_outsiders_and_removed_members(
    person: Callable[[str], Browser], site: TestClient
) -> None:
    world = proposed_battle(person)
    card = first_card(world, "kai_force")
    for path in pages(world, card):
        assert world["kai"].get(path).status_code == 200  # cached now
    stranger = person("stranger")
    kai_id = world["kai"].api("GET", "/auth/me")["id"]
    orga = world["orga"].client
    token = orga.get("/api/v1/auth/csrf").json()["csrf_token"]
    removed = orga.delete(
        f"/api/v1/campaigns/{world['campaign_id']}/members/{kai_id}",
        headers={"X-CSRF-Token": token},
    )
    assert removed.status_code == 204, removed.text
    for path in pages(world, card):
        for client in (site, stranger.client, world["kai"].client):
            refused = client.get(path, follow_redirects=False)
            assert refused.status_code in (303, 403, 404), (path, refused.status_code)
            assert "Waaagh! Gorbad" not in refused.text and "ETag" not in refused.headers


def test_a_visitors_kept_pages_are_refused_once_the_campaign_is_private(
    person: Callable[[str], Browser], site: TestClient
) -> None:
    """A page kept whole for readers without a session is sent only after the access check
    of the request itself: made private, the campaign's kept pages reach no visitor, with or
    without the ETag they were sent with."""
    world = proposed_battle(person)
    campaign = f"/campaigns/{world['campaign_id']}"
    world["orga"].api("PATCH", campaign, json={"public": True})
    card = first_card(world, "kai_force")
    etags = {}
    for path in pages(world, card):
        site.get(path)
        kept = site.get(path)  # sent from the kept copy
        assert kept.status_code == 200 and "Log in" in kept.text, path
        etags[path] = kept.headers["ETag"]
    world["orga"].api("PATCH", campaign, json={"public": False})
    for path in pages(world, card):
        for headers in ({}, {"If-None-Match": etags[path]}):
            refused = site.get(path, headers=headers, follow_redirects=False)
            assert refused.status_code in (303, 401, 403, 404), (path, refused.status_code)
            assert "ETag" not in refused.headers and "Waaagh" not in refused.text, path


def test_a_visitors_page_is_kept_once_however_its_query_is_spelled(
    person: Callable[[str], Browser], site: TestClient
) -> None:
    """A visitor's kept page is keyed by what the page shows (the chart, the page of
    battles), not by the raw query: a flood of made-up parameters keeps no more copies."""
    world = campaign_with_two_players(person)
    dashboard = f"/campaigns/{world['campaign_id']}"
    world["orga"].api("PATCH", dashboard, json={"public": True})
    site.get(dashboard)  # built and kept
    first = site.get(dashboard)  # sent from the copy (and its compressed one made)
    kept = len(site.app.state.read_cache)
    for n in range(20):
        again = site.get(f"{dashboard}?utm_source={n}&chart=nonsense{n}")
        assert again.status_code == 200 and again.text == first.text
    assert len(site.app.state.read_cache) == kept
    xp = site.get(f"{dashboard}?chart=xp")
    assert xp.status_code == 200 and xp.text != first.text
    assert len(site.app.state.read_cache) == kept + 1


def test_after_a_write_through_another_process_every_page_equals_one_built_afresh(
    person: Callable[[str], Browser], site: TestClient, engine: Engine
) -> None:
    world = proposed_battle(person)
    world["orga"].api("PATCH", f"/campaigns/{world['campaign_id']}", json={"public": True})
    card = first_card(world, "ruby_force")
    # the owner (whose page has the edit form), another player, and anonymous
    readers = [world["ruby"].client, world["kai"].client, site]
    for path in pages(world, card):
        for client in readers:
            client.get(path)  # the first app's caches hold every page
    with TestClient(create_app(engine)) as other:  # a second process
        other.cookies.update(world["ruby"].client.cookies)
        writer = Browser(other)
        writer.api("PATCH", f"/cards/{card}", json={"narrative": "Held the breach alone."})
        writer.api("PATCH", f"/forces/{world['ruby_force']}", json={"name": "Ultramarines 5th"})
        story = {"title": "The breach", "narrative": "Held it **alone**."}
        writer.api("PUT", f"/battles/{world['battle_id']}/report", json=story)
        with TestClient(create_app(engine)) as fresh:  # built afresh: nothing cached
            fresh.app.state.read_cache = VersionedBodies()
            fresh.app.state.battle_bodies = VersionedBodies()  # each battle's too
            for path in pages(world, card):
                for client in readers:
                    fresh.cookies.clear()
                    fresh.cookies.update(client.cookies)
                    cached, built = client.get(path), fresh.get(path)
                    assert cached.status_code == built.status_code == 200
                    assert without_visit(cached.text) == without_visit(built.text), path
    assert "Held the breach alone." in site.get(f"/cards/{card}").text
    assert "Ultramarines 5th" in site.get(f"/campaigns/{world['campaign_id']}").text
    battle = site.get(f"/battles/{world['battle_id']}").text
    assert "Ultramarines 5th" in battle and "<strong>alone</strong>" in battle


def test_an_outage_answers_the_503_page_not_a_cached_one(engine: Engine) -> None:
    OUTAGES.clear()
    database = Database(engine)
    try:
        with TestClient(create_app(database.engine)) as client:
            assert client.post("/api/v1/auth/signup", json=ORGANIZER).status_code == 201
            with_csrf(client)
            campaign = client.post("/api/v1/campaigns", json={"name": "Vigilus"}).json()["id"]
            client.patch(f"/api/v1/campaigns/{campaign}", json={"public": True})
            anonymous = TestClient(client.app)
            army, rival = force(client, campaign), force(client, campaign, "Death Guard")
            sides = [
                {
                    "force_id": f,
                    "role": role,
                    "roster": [unit(client, f)["id"]],
                    "agendas": [agenda],
                }
                for f, role, agenda in (
                    (army, "attacker", "assassins"),
                    (rival, "defender", "reaper"),
                )
            ]
            mustered = client.post(
                f"/api/v1/campaigns/{campaign}/battles",
                json={"battle_size": "combat_patrol", "mission": "supply_drop", "sides": sides},
            )
            assert mustered.status_code == 201, mustered.text
            battle = mustered.json()["id"]
            paths = [
                f"/campaigns/{campaign}",
                f"/campaigns/{campaign}/battles",
                f"/forces/{army}",
                f"/forces/{army}/requisitions",
                f"/battles/{battle}",
            ]
            etags = {path: anonymous.get(path).headers["ETag"] for path in paths}  # cached
            with database.away():
                for path in paths:
                    for headers in ({}, {"If-None-Match": etags[path]}):
                        down = anonymous.get(path, headers=headers)
                        assert down.status_code == 503, path
                        assert "database is not answering" in down.text
            assert all(anonymous.get(path).status_code == 200 for path in paths)
    finally:
        database.close()
        OUTAGES.clear()
