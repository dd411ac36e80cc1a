"""The read caches (issue 50): standings, the battles list, one battle, a Crusade card and
the Order of Battle are built once per version and answer 304 to a matching If-None-Match;
they never reach a caller the access rules refuse, never answer older than the database (a write
through another process included), never hide an outage; and every write moves the
versions they are keyed by (a cached read equals one built afresh after each write)."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy import Engine, event

from app.api import battles as battles_api
from app.api.plumbing.cache import VersionedBodies
from app.api.plumbing.route_access import POLICIES
from app.db.session import loop_engine_of
from app.faults import OUTAGES
from app.main import create_app
from tests.api.helpers import account, assert_problem, campaign, force, unit
from tests.api.test_authorization import _table, battle_between
from tests.api.test_roster_api import NECRONS
from tests.api.test_rule_packs import HOUSE
from tests.conftest import ORGANIZER, Snapshots, in_own_loop, with_csrf
from tests.faults.outages import Database, drop_connections
from tests.web.conftest import without_visit

People = dict[str, Any]


@pytest.fixture
def people(client: TestClient, engine: Engine, snapshots: Snapshots) -> Iterator[People]:
    """tests/api/test_authorization.py's table: an organizer (the `client`), two players
    with a force and a unit each, a stranger and an anonymous caller; private campaign."""
    made = snapshots.prepared(
        engine, "authorization table", lambda: _table(client), lambda: TestClient(client.app)
    )
    yield {"organizer": client, **made}


def cached_reads(people: People) -> list[str]:
    """Every cached read of the people's campaign: its standings, battles (two pages) and
    each battle, each force's Order of Battle and each card (read by the organizer)."""
    organizer, campaign = people["organizer"], people["campaign"]
    reads = [
        f"/api/v1/campaigns/{campaign}/standings",
        f"/api/v1/campaigns/{campaign}/battles",
        f"/api/v1/campaigns/{campaign}/battles?limit=1",
    ]
    battles = organizer.get(f"/api/v1/campaigns/{campaign}/battles?limit=100").json()["items"]
    reads += [f"/api/v1/battles/{battle['id']}" for battle in battles]
    forces = organizer.get(f"/api/v1/campaigns/{campaign}/forces?limit=200").json()["items"]
    for listed in forces:
        reads.append(f"/api/v1/forces/{listed['id']}")
        for card in organizer.get(f"/api/v1/forces/{listed['id']}").json()["cards"]:
            reads.append(f"/api/v1/cards/{card['id']}")
    return reads


class TestEtags:
    def test_each_cached_read_answers_304_until_its_campaign_changes(self, people: People) -> None:
        organizer, ruby = people["organizer"], people["ruby"]
        battle_between(people, ruby["client"])  # one battle's read among them
        for path in cached_reads(people):
            first = organizer.get(path)
            assert first.status_code == 200, (path, first.text)
            etag = first.headers["ETag"]
            kept = organizer.get(path)  # from the cache: its length is its own
            assert int(kept.headers["content-length"]) == len(kept.content) > 2, path
            again = organizer.get(path, headers={"If-None-Match": f'"other", {etag}'})
            assert again.status_code == 304, path
            assert again.headers["ETag"] == etag and again.content == b""
        standings = f"/api/v1/campaigns/{people['campaign']}/standings"
        etag = organizer.get(standings).headers["ETag"]
        ruby["client"].patch(f"/api/v1/cards/{ruby['card']}", json={"narrative": "Held."})
        changed = organizer.get(standings, headers={"If-None-Match": etag})
        assert changed.status_code == 200 and changed.headers["ETag"] != etag

    def test_the_openapi_documents_the_etag_and_if_none_match(self, client: TestClient) -> None:
        paths = client.get("/openapi.json").json()["paths"]
        for read in (
            "/api/v1/campaigns/{campaign_id}/standings",
            "/api/v1/campaigns/{campaign_id}/battles",
            "/api/v1/cards/{card_id}",
            "/api/v1/forces/{force_id}",
            "/api/v1/battles/{battle_id}",
        ):
            operation = paths[read]["get"]
            assert "ETag" in operation["responses"]["200"]["headers"], read
            assert "ETag" in operation["responses"]["304"]["headers"], read
            assert "If-None-Match" in [p["name"] for p in operation["parameters"]], read


class TestCacheSafety:
    """The access rule runs before any lookup: a body cached for a member never reaches
    anyone else, with or without the ETag it was sent with."""

    def test_a_private_campaigns_cached_reads_refuse_outsiders(self, people: People) -> None:
        organizer = people["organizer"]
        battle_between(people, people["ruby"]["client"])
        for path in cached_reads(people):
            answer = organizer.get(path)  # cached now
            etag = answer.headers["ETag"]
            for outsider in (people["anonymous"], people["stranger"]):
                refused = outsider.get(path, headers={"If-None-Match": etag})
                assert refused.status_code in (401, 403, 404), (path, refused.status_code)
                assert refused.json()["code"] and "ETag" not in refused.headers

    def test_a_removed_member_is_refused_what_they_read_a_moment_ago(self, people: People) -> None:
        ruby = people["ruby"]["client"]
        path = f"/api/v1/campaigns/{people['campaign']}/standings"
        etag = ruby.get(path).headers["ETag"]
        ruby_id = ruby.get("/api/v1/auth/me").json()["id"]
        removed = people["organizer"].delete(
            f"/api/v1/campaigns/{people['campaign']}/members/{ruby_id}"
        )
        assert removed.status_code in (200, 204), removed.text
        for headers in ({}, {"If-None-Match": etag}):
            assert ruby.get(path, headers=headers).status_code in (403, 404)
        assert ruby.get(f"/api/v1/cards/{people['joel']['card']}").status_code in (403, 404)

    def test_a_revoked_token_is_refused_what_it_read_a_moment_ago(self, people: People) -> None:
        ruby = people["ruby"]["client"]
        made = ruby.post("/api/v1/auth/tokens", json={"name": "stats bot"}).json()
        bot = TestClient(ruby.app, headers={"Authorization": f"Bearer {made['token']}"})
        path = f"/api/v1/forces/{people['joel']['force']}"
        etag = bot.get(path).headers["ETag"]
        assert bot.get(path, headers={"If-None-Match": etag}).status_code == 304
        assert ruby.delete(f"/api/v1/auth/tokens/{made['id']}").status_code in (200, 204)
        for headers in ({}, {"If-None-Match": etag}):
            refused = bot.get(path, headers=headers)
            assert refused.status_code == 401 and "ETag" not in refused.headers


class TestNeverOlderThanTheDatabase:
    def test_a_write_through_another_process_is_read_at_once(
        self, people: People, engine: Engine
    ) -> None:
        """Two app processes on one database, each with its own cache: after a write B
        acknowledged, A's cached reads show it."""
        organizer = people["organizer"]
        fought = battle_between(people, people["ruby"]["client"])
        reads = cached_reads(people)
        before = {path: organizer.get(path).json() for path in reads}  # A's cache filled
        with TestClient(create_app(engine)) as other:
            other.cookies.update(people["ruby"]["client"].cookies)
            other.headers.update({"X-CSRF-Token": people["ruby"]["client"].headers["X-CSRF-Token"]})
            card = people["ruby"]["card"]
            assert other.patch(f"/api/v1/cards/{card}", json={"name": "Vorn's Few"}).is_success
            story = {"title": "Ash and iron"}
            assert other.put(f"/api/v1/battles/{fought}/report", json=story).is_success
        after = {path: organizer.get(path).json() for path in reads}
        assert after[f"/api/v1/battles/{fought}"]["report"]["title"] == "Ash and iron"
        assert before[f"/api/v1/battles/{fought}"]["report"] is None
        assert after[f"/api/v1/cards/{card}"]["name"] == "Vorn's Few"
        assert after[f"/api/v1/forces/{people['ruby']['force']}"]["cards"][0]["name"] == (
            "Vorn's Few"
        )
        battles = f"/api/v1/campaigns/{people['campaign']}/battles"
        assert before[battles]["items"][0]["report"] is None
        assert after[battles]["items"][0]["report"]["title"] == "Ash and iron"

    def test_an_outage_answers_503_not_the_cached_body(self, engine: Engine) -> None:
        OUTAGES.clear()
        database = Database(engine)
        try:
            with TestClient(create_app(database.engine)) as client:
                assert client.post("/api/v1/auth/signup", json=ORGANIZER).status_code == 201
                with_csrf(client)
                campaign = client.post("/api/v1/campaigns", json={"name": "Vigilus"}).json()
                client.patch(f"/api/v1/campaigns/{campaign['id']}", json={"public": True})
                path = f"/api/v1/campaigns/{campaign['id']}/standings"
                anonymous = TestClient(client.app)
                etag = anonymous.get(path).headers["ETag"]  # cached
                with database.away():
                    for headers in ({}, {"If-None-Match": etag}):
                        assert_problem(
                            anonymous.get(path, headers=headers), 503, "database_unavailable"
                        )
                assert anonymous.get(path).status_code == 200
        finally:
            database.close()
            OUTAGES.clear()

    def test_connections_the_server_dropped_are_opened_again_without_a_refusal(
        self, client: TestClient, engine: Engine
    ) -> None:
        """The event loop's pool on PostgreSQL pings no connection before use (a round
        trip per read): when the server has dropped them (a restart; here terminated by
        hand), the check fails once, the pool is renewed and the check is made in the
        thread pool, so no reader sees a refusal. On SQLite there is no server to drop
        them: the same reads answer as they did."""
        campaign = client.post("/api/v1/campaigns", json={"name": "Vigilus"}).json()["id"]
        path = f"/api/v1/campaigns/{campaign}/standings"
        for _ in range(3):  # the loop's pool holds connections now (on PostgreSQL)
            assert client.get(path).status_code == 200
        if engine.dialect.name == "postgresql":
            assert drop_connections(engine) >= 1
        for _ in range(3):
            assert client.get(path).status_code == 200


class TestSharedRoundTrips:
    def test_readers_of_one_force_at_one_moment_share_the_check_and_see_each_write(
        self, client: TestClient, engine: Engine
    ) -> None:
        """On PostgreSQL the cached reads' access statement, awaited on the event loop, is
        shared by the readers asking the same at the same moment (app/db/flights.py): fewer
        statements than readers, and a write acknowledged before a round of readers is
        read by each of them. On SQLite the check holds the loop for its one statement:
        each reader asks alone."""
        campaign_id = campaign(client)
        client.patch(f"/api/v1/campaigns/{campaign_id}", json={"public": True})
        force_id = force(client, campaign_id)
        path = f"/api/v1/forces/{force_id}"
        asked: list[str] = []

        def count(*args: Any) -> None:
            if "JOIN campaign" in str(args[2]) and "force.id =" in str(args[2]):
                asked.append(str(args[2]))

        async def readers(n: int) -> list[httpx.Response]:
            transport = httpx.ASGITransport(app=client.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as reader:
                return list(await asyncio.gather(*(reader.get(path) for _ in range(n))))

        loop_engine = loop_engine_of(engine)
        assert loop_engine is not None
        event.listen(loop_engine, "before_cursor_execute", count)
        try:
            for units, name in enumerate(("Squad Vorn", "Squad Aquila", "Squad Thane"), 1):
                unit(client, force_id, name)  # acknowledged before the round begins
                answers = in_own_loop(readers(12))
                assert [a.status_code for a in answers] == [200] * 12
                assert [len(a.json()["cards"]) for a in answers] == [units] * 12, name
        finally:
            event.remove(loop_engine, "before_cursor_execute", count)
        if engine.dialect.name == "postgresql":
            assert len(asked) < 3 * 12
        else:
            assert len(asked) == 3 * 12


# --- every write moves the versions the cached reads are keyed by ------------------------

Step = Callable[[People, dict[str, Any]], Any]


def _jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (200, 30, 30)).save(out, "JPEG")
    return out.getvalue()


class TestEachBattleKept:
    """The battles list keeps each battle's body by the battle's own version: a page built
    again after a change to one battle builds that one alone, and shows the change."""

    def test_a_page_built_again_builds_only_the_battle_that_changed(
        self, people: People, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        organizer, ruby = people["organizer"], people["ruby"]["client"]
        first = battle_between(people, ruby)
        assert _result(people, first, organizer).status_code == 200
        second = battle_between(people, ruby)
        built: list[int] = []
        build = battles_api._battle
        monkeypatch.setattr(
            battles_api, "_battle", lambda s, b, *rest: built.append(b.id) or build(s, b, *rest)
        )
        path = f"/api/v1/campaigns/{people['campaign']}/battles"
        assert [b["id"] for b in organizer.get(path).json()["items"]] == [second, first]
        assert sorted(built) == [first, second]
        story = {"title": "Ash and iron"}
        assert ruby.put(f"/api/v1/battles/{first}/report", json=story).status_code == 200
        built.clear()  # (the write's own answer built its battle)
        items = organizer.get(path).json()["items"]
        assert built == [first]  # the campaign moved on: the page again, the second kept
        assert items[1]["report"]["title"] == "Ash and iron" and items[0]["report"] is None
        assert ruby.post(f"/api/v1/battles/{second}/call-off").status_code == 200
        built.clear()
        statuses = [b["status"] for b in organizer.get(path).json()["items"]]
        assert statuses == ["reverted", "resolved"]  # a battle called off is kept as reverted
        assert built == [second]


def _result(people: People, battle: int, by: TestClient, destroyed: bool = False) -> Any:
    joel: dict[str, Any] = {"force_id": people["joel"]["force"], "victory_points": 5}
    if destroyed:
        joel |= {"units": [{"card_id": people["joel"]["card"], "destroyed": True}], "dice": [1]}
    sides = [{"force_id": people["ruby"]["force"], "victory_points": 10}, joel]
    return by.post(f"/api/v1/battles/{battle}/result", json={"sides": sides})


def _steps() -> dict[tuple[str, str], Step]:
    """A campaign's life, one write route a step, in an order each can follow the last."""
    c = "/api/v1/campaigns/{campaign}"

    def org(p: People) -> TestClient:
        return p["organizer"]

    def ruby(p: People) -> TestClient:
        return p["ruby"]["client"]

    def joel(p: People) -> TestClient:
        return p["joel"]["client"]

    def url(template: str, p: People, s: dict[str, Any]) -> str:
        return template.format(campaign=p["campaign"], **s)

    def made(key: str, answer: Any, field: str = "id") -> Any:
        assert answer.status_code < 300, answer.text
        return {key: answer.json()[field]}

    return {
        ("PATCH", "/api/v1/campaigns/{campaign_id}"): lambda p, s: org(p).patch(
            url(c, p, s), json={"description": "The war for the Hive.", "join_policy": "open"}
        ),
        ("POST", "/api/v1/campaigns/{campaign_id}/forces"): lambda p, s: s.update(
            made(
                "necrons",
                org(p).post(
                    url(c + "/forces", p, s),
                    json={"name": "Szarekhan", "crusade_faction": "NECRONS"},
                ),
            )
        ),
        ("POST", "/api/v1/forces/{force_id}/roster"): lambda p, s: org(p).post(
            f"/api/v1/forces/{s['necrons']}/roster",
            files={"file": ("army.ros", NECRONS, "application/octet-stream")},
        ),
        ("PATCH", "/api/v1/forces/{force_id}"): lambda p, s: ruby(p).patch(
            f"/api/v1/forces/{p['ruby']['force']}", json={"notes": "Sworn to the Hive."}
        ),
        ("POST", "/api/v1/forces/{force_id}/cards"): lambda p, s: s.update(
            made(
                "added",
                ruby(p).post(
                    f"/api/v1/forces/{p['ruby']['force']}/cards",
                    json={"name": "Veterans", "power_rating": 4, "keywords": ["IMPERIUM"]},
                ),
            )
        ),
        ("POST", "/api/v1/forces/{force_id}/cards/batch"): lambda p, s: s.update(
            {
                "batch": ruby(p)
                .post(
                    f"/api/v1/forces/{p['ruby']['force']}/cards/batch",
                    json={
                        "units": [{"name": "Scouts", "power_rating": 3, "keywords": ["IMPERIUM"]}]
                    },
                )
                .json()["cards"][0]["id"]
            }
        ),
        ("POST", "/api/v1/forces/{force_id}/requisitions"): lambda p, s: ruby(p).post(
            f"/api/v1/forces/{p['ruby']['force']}/requisitions",
            json={"requisition": "increase_supply_limit"},
        ),
        ("PATCH", "/api/v1/cards/{card_id}"): lambda p, s: ruby(p).patch(
            f"/api/v1/cards/{s['added']}", json={"narrative": "First into the breach."}
        ),
        ("DELETE", "/api/v1/cards/{card_id}"): lambda p, s: ruby(p).delete(
            f"/api/v1/cards/{s['batch']}"
        ),
        ("POST", "/api/v1/campaigns/{campaign_id}/battles"): lambda p, s: s.update(
            {"battle": battle_between(p, ruby(p))}
        ),
        ("PUT", "/api/v1/battles/{battle_id}/report"): lambda p, s: ruby(p).put(
            f"/api/v1/battles/{s['battle']}/report", json={"title": "Ash and iron"}
        ),
        ("POST", "/api/v1/battles/{battle_id}/photos"): lambda p, s: s.update(
            made(
                "photo",
                ruby(p).post(
                    f"/api/v1/battles/{s['battle']}/photos",
                    files={"file": ("a.jpg", _jpeg(), "image/jpeg")},
                ),
            )
        ),
        ("DELETE", "/api/v1/battles/{battle_id}/photos/{photo_id}"): lambda p, s: ruby(p).delete(
            f"/api/v1/battles/{s['battle']}/photos/{s['photo']}"
        ),
        ("POST", "/api/v1/battles/{battle_id}/result"): lambda p, s: _result(
            p, s["battle"], ruby(p)
        ),
        ("POST", "/api/v1/battles/{battle_id}/dispute"): lambda p, s: joel(p).post(
            f"/api/v1/battles/{s['battle']}/dispute"
        ),
        ("POST", "/api/v1/battles/{battle_id}/revert"): lambda p, s: org(p).post(
            f"/api/v1/battles/{s['battle']}/revert"
        ),
        ("POST", "/api/v1/battles/{battle_id}/confirm"): lambda p, s: (
            s.update({"second": battle_between(p, ruby(p))}),
            _result(p, s["second"], ruby(p), destroyed=True),
            joel(p).post(f"/api/v1/battles/{s['second']}/confirm"),
        )[-1],
        ("POST", "/api/v1/decisions/{decision_id}/answer"): lambda p, s: joel(p).post(
            "/api/v1/decisions/{}/answer".format(
                joel(p)
                .get(f"/api/v1/forces/{p['joel']['force']}/decisions")
                .json()["items"][0]["id"]
            ),
            json={"consequence": "devastating_blow", "dice": [2]},
        ),
        ("POST", "/api/v1/battles/{battle_id}/call-off"): lambda p, s: ruby(p).post(
            f"/api/v1/battles/{battle_between(p, ruby(p))}/call-off"
        ),
        ("POST", "/api/v1/campaigns/{campaign_id}/territories"): lambda p, s: s.update(
            made("territory", org(p).post(url(c + "/territories", p, s), json={"name": "Hive"}))
        ),
        ("PATCH", "/api/v1/campaigns/{campaign_id}/territories/{territory_id}"): (
            lambda p, s: org(p).patch(
                url(c + "/territories/{territory}", p, s), json={"name": "Hive Primus"}
            )
        ),
        ("DELETE", "/api/v1/campaigns/{campaign_id}/territories/{territory_id}"): (
            lambda p, s: org(p).delete(url(c + "/territories/{territory}", p, s))
        ),
        ("POST", "/api/v1/campaigns/{campaign_id}/rule-packs"): lambda p, s: org(p).post(
            url(c + "/rule-packs", p, s),
            files={"file": ("pack.yaml", HOUSE.encode(), "application/yaml")},
        ),
        ("DELETE", "/api/v1/campaigns/{campaign_id}/rule-packs/{pack_id}"): (
            lambda p, s: org(p).delete(url(c + "/rule-packs/house_rules", p, s))
        ),
        ("POST", "/api/v1/campaigns/{campaign_id}/invites"): lambda p, s: s.update(
            made("code", org(p).post(url(c + "/invites", p, s), json={}), "code")
        ),
        ("DELETE", "/api/v1/campaigns/{campaign_id}/invites/{code}"): lambda p, s: org(p).delete(
            url(c + "/invites/{code}", p, s)
        ),
        ("POST", "/api/v1/invites/{code}/accept"): lambda p, s: account(
            p["organizer"].app, "nia"
        ).post(
            "/api/v1/invites/{}/accept".format(
                org(p).post(url(c + "/invites", p, s), json={}).json()["code"]
            )
        ),
        ("POST", "/api/v1/campaigns/{campaign_id}/join"): lambda p, s: p["stranger"].post(
            url(c + "/join", p, s)
        ),
        ("POST", "/api/v1/campaigns/{campaign_id}/members/{user_id}/reset-link"): (
            lambda p, s: org(p).post(
                url(
                    c
                    + "/members/{}/reset-link".format(joel(p).get("/api/v1/auth/me").json()["id"]),
                    p,
                    s,
                )
            )
        ),
        ("DELETE", "/api/v1/campaigns/{campaign_id}/members/{user_id}"): lambda p, s: org(p).delete(
            url(c + "/members/{}".format(ruby(p).get("/api/v1/auth/me").json()["id"]), p, s)
        ),
    }


# Write routes that change nothing a cached read shows, and why.
ELSEWHERE = {
    ("POST", "/api/v1/auth/signup"): "an account",
    ("POST", "/api/v1/auth/login"): "a session",
    ("POST", "/api/v1/auth/logout"): "a session",
    ("POST", "/api/v1/auth/reset-password"): "an account's password",
    ("POST", "/api/v1/auth/password"): "an account's password",
    ("POST", "/api/v1/auth/pin"): "an account's PIN",
    ("POST", "/api/v1/auth/tokens"): "a token (access is checked before any lookup)",
    ("DELETE", "/api/v1/auth/tokens/{token_id}"): "a token (TestCacheSafety)",
    ("POST", "/api/v1/campaigns"): "a new campaign: nothing of it was cached",
    ("POST", "/api/v1/campaigns/{campaign_id}/webhooks"): "webhooks: no cached read shows them",
    ("DELETE", "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}"): "webhooks",
    (
        "POST",
        "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/resend",
    ): "a webhook delivery",
}


def test_every_write_route_is_driven_or_said_to_change_no_cached_read() -> None:
    writes = {(m, p) for (m, p) in POLICIES if m != "GET"}
    listed = set(_steps()) | set(ELSEWHERE)
    assert writes - listed == set(), "a new write route: add it to _steps() or ELSEWHERE"
    assert listed - writes == set()
    assert not set(_steps()) & set(ELSEWHERE)


def test_after_every_write_each_cached_read_equals_one_built_afresh(
    people: People, engine: Engine
) -> None:
    organizer = people["organizer"]
    public = organizer.patch(f"/api/v1/campaigns/{people['campaign']}", json={"public": True})
    assert public.status_code == 200, public.text
    visitor = TestClient(organizer.app)  # no session: the pages it is sent are kept whole
    state: dict[str, Any] = {}
    with TestClient(create_app(engine)) as fresh:  # the uncached builds: a cache emptied
        fresh.cookies.update(organizer.cookies)
        fresh_visitor = TestClient(fresh.app)
        kept: set[str] = set()  # what the last step's comparison left kept: asked again
        for route, step in _steps().items():  # it would only be found there
            reads, pages = cached_reads(people), visitor_pages(people)
            for path in reads:  # every cached read held by the organizer's process
                if path not in kept:
                    assert organizer.get(path).status_code == 200, path
            for path in pages:
                if path not in kept:
                    assert visitor.get(path).status_code == 200, path
                    assert organizer.get(path).status_code == 200, path  # a member's parts
            answer = step(people, state)
            if answer is not None:
                assert answer.status_code < 300, (route, answer.text)
            fresh.app.state.read_cache = VersionedBodies()
            fresh.app.state.battle_bodies = VersionedBodies()  # each battle's too
            compared = reads + cached_reads(people)
            for path in compared:
                cached, built = organizer.get(path), fresh.get(path)
                assert cached.status_code == built.status_code, (route, path)
                assert cached.json() == built.json(), (route, path)
            for path in pages:
                cached, built = visitor.get(path), fresh_visitor.get(path)
                assert cached.status_code == built.status_code, (route, path)
                assert cached.text == built.text, (route, path)
                cached, built = organizer.get(path), fresh.get(path)
                assert cached.status_code == built.status_code, (route, path)
                assert without_visit(cached.text) == without_visit(built.text), (route, path)
            kept = {*compared, *pages}


def visitor_pages(people: People) -> list[str]:
    """The pages a visitor is sent whole from the kept copy: the campaign's dashboard, its
    battles list, each player's first card, Order of Battle and Requisitions, and the page
    of every battle the campaign has so far (the steps change all of them)."""
    campaign = people["campaign"]
    players = [people[who] for who in ("ruby", "joel")]
    battles = people["organizer"].get(f"/api/v1/campaigns/{campaign}/battles?limit=100")
    return [
        f"/campaigns/{campaign}",
        f"/campaigns/{campaign}/battles",
        *(f"/cards/{player['card']}" for player in players),
        *(f"/forces/{player['force']}" for player in players),
        *(f"/forces/{player['force']}/requisitions" for player in players),
        *(f"/battles/{battle['id']}" for battle in battles.json()["items"]),
    ]


@pytest.mark.parametrize("size", [1, 2])
def test_the_store_keeps_any_hashable_key_and_ages_out_old_versions(size: int) -> None:
    store = VersionedBodies(size=size)
    store.put(("feed", 1, 5, "member"), b"five", {"Link": "<next>"})
    assert store.get_with_headers(("feed", 1, 5, "member")) == (b"five", {"Link": "<next>"})
    assert store.get(("feed", 1, 5, "anonymous")) is None
    store.put(("feed", 1, 6, "member"), b"six")
    assert store.get(("feed", 1, 6, "member")) == b"six"
    assert (store.get(("feed", 1, 5, "member")) is None) == (size == 1)
