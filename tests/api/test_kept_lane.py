"""The kept reads' early lane (issue 50, app/api/plumbing/kept_lane.py): a cached JSON read
whose body the process keeps is answered before FastAPI's routing, by the route's own
access check and key. Here the lane's answers are compared with the route's (an app without
the lane, on the same database) for every kind of caller, path and ETag, on both engines;
and a hit is shown to reach no route while a miss costs no second access check."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine, event

from app.api.plumbing import route_access
from app.api.plumbing.kept_lane import KeptReadLane
from app.db.session import loop_engine_of
from app.main import create_app
from tests.api.test_authorization import battle_between
from tests.api.test_read_cache import People
from tests.api.test_read_cache import people as people  # the fixture, by name

# Headers that say when or how often, not what: the two apps count a token's requests apart.
UNCOMPARED = {"date", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"}


def route_only(engine: Engine) -> FastAPI:
    """The app as it was before the lane: every read goes through its route."""
    app = create_app(engine)
    app.user_middleware = [m for m in app.user_middleware if m.cls is not KeptReadLane]
    return app


@pytest.fixture
def routed(engine: Engine) -> Iterator[TestClient]:
    with TestClient(route_only(engine)) as client:
        yield client


def callers(people: People) -> dict[str, dict[str, str]]:
    """The headers each kind of caller sends: a session cookie, a token (read-only, one
    limited to another campaign, a revoked one, a made-up one), or nothing."""
    organizer, ruby = people["organizer"], people["ruby"]["client"]

    def token(**body: Any) -> str:
        made = ruby.post("/api/v1/auth/tokens", json={"name": "bot", **body})
        assert made.status_code == 201, made.text
        return str(made.json()["token"])

    revoked = ruby.post("/api/v1/auth/tokens", json={"name": "old bot"}).json()
    assert ruby.delete(f"/api/v1/auth/tokens/{revoked['id']}").status_code == 200
    elsewhere = organizer.post("/api/v1/campaigns", json={"name": "Elsewhere"}).json()["id"]
    return {
        "visitor": {},
        "organizer": _cookie(organizer),
        "member": _cookie(ruby),
        "stranger": _cookie(people["stranger"]),
        "token": {"Authorization": f"Bearer {token()}"},
        "token elsewhere": {"Authorization": f"Bearer {token(campaign_id=elsewhere)}"},
        "revoked token": {"Authorization": f"Bearer {revoked['token']}"},
        "made-up token": {"Authorization": "Bearer crusade_not_a_token"},
        "other scheme": {"Authorization": "Basic cnVieTpwYXNz"},
    }


def _cookie(client: TestClient) -> dict[str, str]:
    return {"Cookie": "; ".join(f"{k}={v}" for k, v in client.cookies.items())}


def paths(people: People) -> list[str]:
    campaign, ruby = people["campaign"], people["ruby"]
    battles = [f"/api/v1/battles/{people['battle']}"] if "battle" in people else []
    return [
        *battles,
        "/api/v1/battles/99999",
        "/api/v1/battles/0",
        f"/api/v1/campaigns/{campaign}/standings",
        f"/api/v1/campaigns/{campaign}/battles",
        f"/api/v1/campaigns/{campaign}/battles?limit=1",
        f"/api/v1/campaigns/{campaign}/battles?limit=nine",
        f"/api/v1/forces/{ruby['force']}",
        f"/api/v1/cards/{ruby['card']}",
        "/api/v1/forces/99999",
        "/api/v1/cards/99999",
        "/api/v1/campaigns/99999/standings",
        "/api/v1/forces/0",
        f"/api/v1/forces/00{ruby['force']}",
        "/api/v1/forces/1234567890",
    ]


def answer(client: TestClient, path: str, headers: dict[str, str]) -> tuple[Any, ...]:
    got = client.get(path, headers=headers)
    kept = {k: v for k, v in got.headers.items() if k not in UNCOMPARED}
    return got.status_code, got.content, sorted(kept.items())


class TestSameAnswers:
    @pytest.mark.parametrize("public", [False, True], ids=["private", "public"])
    def test_the_lane_answers_every_caller_as_the_route_does(
        self, people: People, routed: TestClient, public: bool
    ) -> None:
        organizer = people["organizer"]
        organizer.patch(f"/api/v1/campaigns/{people['campaign']}", json={"public": public})
        people["battle"] = battle_between(people, people["ruby"]["client"])
        laned = TestClient(organizer.app)
        statuses = set()
        for who, headers in callers(people).items():
            for path in paths(people):
                expected = answer(routed, path, headers)
                answer(laned, path, headers)  # a first read keeps the body (a route's build)
                assert answer(laned, path, headers) == expected, (who, path)
                statuses.add(expected[0])
                etag = routed.get(path, headers=headers).headers.get("ETag")
                for sent in (etag, '"force-1-v0.0"', "*"):
                    if sent is None:
                        continue
                    conditional = {**headers, "If-None-Match": sent}
                    expected = answer(routed, path, conditional)
                    assert answer(laned, path, conditional) == expected, (who, path, sent)
                    statuses.add(expected[0])
        # the comparison met every kind of answer
        assert statuses >= {200, 304, 401, 404, 422} | ({403} if not public else set())


class TestPlumbingSkipped:
    def test_a_kept_read_reaches_no_route_and_a_miss_asks_its_check_once(
        self, people: People, engine: Engine, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        organizer, ruby = people["organizer"], people["ruby"]
        decided: list[str] = []
        through_route = route_access._decide

        def counted(request: Any, session: Any, background: Any) -> None:
            if request.method == "GET":
                decided.append(request.url.path)
            through_route(request, session, background)

        monkeypatch.setattr(route_access, "_decide", counted)
        asked: list[str] = []

        def count(*args: Any) -> None:  # the force's facts (the session's user is asked too)
            if "JOIN campaign" in str(args[2]) and "force.id =" in str(args[2]):
                asked.append(str(args[2]))

        path = f"/api/v1/forces/{ruby['force']}"
        loop_engine = loop_engine_of(engine)
        assert loop_engine is not None
        event.listen(loop_engine, "before_cursor_execute", count)
        try:
            first = organizer.get(path)  # a miss: the route builds, from the lane's decision
            assert first.status_code == 200 and decided == []
            assert len(asked) == 1, asked  # the check's one statement, asked once
            for headers in ({}, {"If-None-Match": first.headers["ETag"]}):
                asked.clear()
                kept = organizer.get(path, headers=headers)
                assert kept.status_code in (200, 304) and decided == []
                assert len(asked) == 1, asked
            ruby["client"].patch(f"/api/v1/forces/{path.rsplit('/', 1)[1]}", json={"notes": "x"})
            changed = organizer.get(path, headers={"If-None-Match": first.headers["ETag"]})
            assert changed.status_code == 200 and changed.headers["ETag"] != first.headers["ETag"]
        finally:
            event.remove(loop_engine, "before_cursor_execute", count)
        assert decided == [], "no kept read went through the route's own check"

    def test_other_methods_and_paths_go_to_the_route(self, people: People) -> None:
        organizer, ruby = people["organizer"], people["ruby"]
        path = f"/api/v1/forces/{ruby['force']}"
        organizer.get(path)
        head = organizer.head(path)  # the route's own HEAD: the headers, no body
        assert head.status_code == 200 and head.content == b""
        assert organizer.get(path + "/", follow_redirects=False).status_code in (307, 404)
        assert organizer.get(f"/api/v1/forces/{ruby['force']}/decisions").status_code == 200


def test_a_lane_is_made_for_each_cached_read() -> None:
    """Each cached JSON read is answered early: its route is marked, its lane made."""
    app = create_app()
    laned = next(m for m in app.user_middleware if m.cls is KeptReadLane)
    made = {lane.path for lane in laned.kwargs["lanes"]}
    assert made == {
        "/forces/{force_id}",
        "/cards/{card_id}",
        "/campaigns/{campaign_id}/standings",
        "/campaigns/{campaign_id}/battles",
        "/battles/{battle_id}",
    }
