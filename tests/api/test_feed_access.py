"""Issue 46, items 1 and 3: a long poll decides its access again when it wakes (a revoked
token or a removed member gets no event committed after), a webhook whose owner lost the
campaign stops, and a feed follower that asks again at once never trips its token's rate
limit (a poll that waits is free). On both engines."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.api import events as feed_route
from app.edge.limits import RateLimits
from app.services.feed import events, webhook_worker
from tests.api.helpers import account, assert_problem
from tests.api.receiver import Receiver

Write = Callable[[], None]


@pytest.fixture
def league(client: TestClient) -> dict[str, Any]:
    """A private campaign run by the organizer (``client``) with a player, Ruby, who joined
    by invite."""
    campaign_id = client.post("/api/v1/campaigns", json={"name": "Vigilus"}).json()["id"]
    assert client.patch(f"/api/v1/campaigns/{campaign_id}", json={"public": False}).is_success
    ruby = account(client.app, "ruby")
    code = client.post(f"/api/v1/campaigns/{campaign_id}/invites", json={}).json()["code"]
    assert ruby.post(f"/api/v1/invites/{code}/accept").status_code == 201
    ruby_id = ruby.get("/api/v1/auth/me").json()["id"]
    return {"campaign": campaign_id, "ruby": ruby, "ruby_id": ruby_id}


def token_of(owner: TestClient, **extra: Any) -> tuple[int, str]:
    made = owner.post("/api/v1/auth/tokens", json={"name": "feed bot", **extra})
    assert made.status_code == 201, made.text
    return int(made.json()["id"]), str(made.json()["token"])


def newest_cursor(client: TestClient, campaign_id: int) -> str:
    url = f"/api/v1/campaigns/{campaign_id}/events"
    page: dict[str, Any] = {"more": True, "next": None}
    while page["more"]:
        params = {"limit": 200, **({"after": page["next"]} if page["next"] else {})}
        page = client.get(url, params=params).json()
    return str(page["next"])


def write_event(client: TestClient, campaign_id: int, text: str) -> None:
    """An event by the organizer: a settings change."""
    changed = client.patch(f"/api/v1/campaigns/{campaign_id}", json={"description": text})
    assert changed.status_code == 200, changed.text


Arm = Callable[[Callable[[], int], Write], threading.Event]


@pytest.fixture
def when_waiting(monkeypatch: pytest.MonkeyPatch) -> Iterator[Arm]:
    """``arm(after, act)``: run ``act`` (in a thread of its own) as soon as a poll looks for
    news after the cursor ``after()`` and finds none: that poll then waits, so what ``act``
    commits arrives while it waits. Once; set the returned event to have it run again at
    the next poll. Every ``act`` has ended before the test's app is closed (a write still
    reading its answer then failed in its thread: "This portal is not running")."""
    started: list[threading.Thread] = []

    def arm(after: Callable[[], int], act: Write) -> threading.Event:
        look = events.newest_id
        armed = threading.Event()
        armed.set()
        lock = threading.Lock()

        def looked(*args: Any, **kwargs: Any) -> int:
            found = look(*args, **kwargs)
            with lock:
                fire = found <= after() and armed.is_set()
                if fire:
                    armed.clear()
            if fire:
                thread = threading.Thread(target=act)
                started.append(thread)
                thread.start()
            return found

        monkeypatch.setattr(events, "newest_id", looked)
        return armed

    yield arm
    for thread in started:
        thread.join(timeout=30)
        assert not thread.is_alive(), "a write made while a poll waited did not end"


class TestALongPollDecidesAgainWhenItWakes:
    def test_a_token_revoked_while_it_waits_gets_401_not_the_event(
        self, client: TestClient, league: dict[str, Any], when_waiting: Arm
    ) -> None:
        """The trial: a poll waiting with a token, the token revoked, then another member
        writes; the poll answered 200 with that event."""
        ruby, campaign_id = league["ruby"], league["campaign"]
        token_id, token = token_of(ruby)
        cursor = newest_cursor(client, campaign_id)
        written = threading.Event()

        def revoke_then_write() -> None:
            assert ruby.delete(f"/api/v1/auth/tokens/{token_id}").status_code == 200
            write_event(client, campaign_id, "after the revocation")
            written.set()

        when_waiting(lambda: events.read_cursor(cursor), revoke_then_write)
        bot = TestClient(client.app, headers={"Authorization": f"Bearer {token}"})
        answer = bot.get(
            f"/api/v1/campaigns/{campaign_id}/events", params={"after": cursor, "wait": 20}
        )
        assert written.wait(10)
        assert_problem(answer, 401, "token_invalid")
        assert "after the revocation" not in answer.text

    def test_a_member_removed_while_polling_gets_403_not_the_events(
        self, client: TestClient, league: dict[str, Any], when_waiting: Arm
    ) -> None:
        ruby, campaign_id = league["ruby"], league["campaign"]
        _, token = token_of(ruby)
        cursor = newest_cursor(client, campaign_id)
        written = threading.Event()

        def remove_then_write() -> None:
            removed = client.delete(f"/api/v1/campaigns/{campaign_id}/members/{league['ruby_id']}")
            assert removed.status_code == 204, removed.text
            write_event(client, campaign_id, "after the removal")
            written.set()

        when_waiting(lambda: events.read_cursor(cursor), remove_then_write)
        bot = TestClient(client.app, headers={"Authorization": f"Bearer {token}"})
        answer = bot.get(
            f"/api/v1/campaigns/{campaign_id}/events", params={"after": cursor, "wait": 20}
        )
        assert written.wait(10)
        assert_problem(answer, 403, "forbidden")
        assert "member_removed" not in answer.text
        # The website's cookie is decided again too.
        cursor = newest_cursor(client, campaign_id)
        assert_problem(
            ruby.get(f"/api/v1/campaigns/{campaign_id}/events", params={"after": cursor}),
            403,
            "forbidden",
        )

    def test_a_member_who_keeps_access_gets_the_event(
        self, client: TestClient, league: dict[str, Any], when_waiting: Arm
    ) -> None:
        campaign_id = league["campaign"]
        _, token = token_of(league["ruby"])
        cursor = newest_cursor(client, campaign_id)
        when_waiting(
            lambda: events.read_cursor(cursor),
            lambda: write_event(client, campaign_id, "for everyone"),
        )
        bot = TestClient(client.app, headers={"Authorization": f"Bearer {token}"})
        answer = bot.get(
            f"/api/v1/campaigns/{campaign_id}/events", params={"after": cursor, "wait": 20}
        )
        assert answer.status_code == 200, answer.text
        assert [e["kind"] for e in answer.json()["items"]] == ["campaign_settings_changed"]


@pytest.mark.usefixtures("allow_private")
class TestAWebhookStopsWhenItsOwnerLosesTheCampaign:
    def test_a_removed_organizers_webhook_sends_nothing_more_and_says_why(
        self, client: TestClient, engine: Engine, league: dict[str, Any], receiver: Receiver
    ) -> None:
        campaign_id = league["campaign"]
        hooks = f"/api/v1/campaigns/{campaign_id}/webhooks"
        helper = account(client.app, "joel")
        code = client.post(
            f"/api/v1/campaigns/{campaign_id}/invites", json={"role": "organizer"}
        ).json()["code"]
        assert helper.post(f"/api/v1/invites/{code}/accept").status_code == 201
        hook = helper.post(hooks, json={"url": receiver.url}).json()
        assert hook["status"] == "active" and hook["status_reason"] is None
        write_event(client, campaign_id, "while Joel organizes")
        webhook_worker.run_once(engine)
        assert len(receiver.received) == 1
        # Written before the removal, not yet sent: withheld too (the worker checks).
        write_event(client, campaign_id, "just before")
        helper_id = helper.get("/api/v1/auth/me").json()["id"]
        removed = client.delete(f"/api/v1/campaigns/{campaign_id}/members/{helper_id}")
        assert removed.status_code == 204
        write_event(client, campaign_id, "after Joel left")
        webhook_worker.run_once(engine)
        assert len(receiver.received) == 1
        shown = client.get(f"{hooks}/{hook['id']}").json()
        assert shown["status"] == "suspended"
        assert "joel" in shown["status_reason"] and "organize" in shown["status_reason"]
        log = client.get(f"{hooks}/{hook['id']}/deliveries").json()["items"]
        statuses = [(d["status"], d["last_error"]) for d in log]
        assert statuses[-1] == ("delivered", "")
        assert [s for s, _ in statuses[:-1]] == ["failed"]  # "just before"; none after
        assert "no longer" in statuses[0][1]
        # An organizer's own webhook goes on.
        own = client.post(hooks, json={"url": receiver.url}).json()
        assert own["status"] == "active"
        write_event(client, campaign_id, "the organizer's")
        webhook_worker.run_once(engine)
        assert len(receiver.received) == 2


def limited(app: Any, limit: int) -> None:
    app.state.rate_limits = RateLimits("memory://", token_requests_per_minute=limit)


class TestALongPollDoesNotEatTheBudget:
    def test_a_follower_asking_again_at_once_is_never_refused(
        self,
        client: TestClient,
        league: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch,
        when_waiting: Arm,
    ) -> None:
        """Scaled down: a budget of 3 requests a minute, a follower that asks again at once
        and 8 events each written while it waits: 8 answers with an event, 0 x 429 (the
        trial: 6 x 429 with Retry-After up to 40 s)."""
        campaign_id = league["campaign"]
        _, token = token_of(league["ruby"])
        limited(client.app, 3)
        # Waiting readers look again sooner than the server's 0.25 s: a quicker test.
        monkeypatch.setattr(feed_route, "POLL_SECONDS", 0.02)
        monkeypatch.setattr(feed_route, "COLLECT_SECONDS", 0.0, raising=False)
        monkeypatch.setattr(feed_route, "WOKEN_COLLECT_SECONDS", 0.0, raising=False)
        cursor = [newest_cursor(client, campaign_id)]
        writes = iter(range(8))

        def look_after() -> int:
            return events.read_cursor(cursor[0])

        def next_write() -> None:
            number = next(writes, None)
            if number is not None:
                write_event(client, campaign_id, f"event {number}")

        bot = TestClient(client.app, headers={"Authorization": f"Bearer {token}"})
        url = f"/api/v1/campaigns/{campaign_id}/events"
        statuses, kinds, left = [], [], []
        armed = when_waiting(look_after, next_write)
        for _ in range(8):
            armed.set()
            answer = bot.get(url, params={"after": cursor[0], "wait": 20})
            statuses.append(answer.status_code)
            if answer.status_code != 200:
                continue
            kinds += [e["kind"] for e in answer.json()["items"]]
            cursor[0] = answer.json()["next"]
            left.append(answer.headers["RateLimit-Remaining"])
        assert statuses.count(429) == 0
        assert kinds == ["campaign_settings_changed"] * 8
        assert left == ["3"] * 8  # none of them cost a request

    def test_a_poll_that_reads_older_events_counts_as_any_request(
        self, client: TestClient, league: dict[str, Any], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        campaign_id = league["campaign"]
        _, token = token_of(league["ruby"])
        limited(client.app, 3)
        monkeypatch.setattr(feed_route, "KEEPING_UP", timedelta(0))  # every event is old
        bot = TestClient(client.app, headers={"Authorization": f"Bearer {token}"})
        url = f"/api/v1/campaigns/{campaign_id}/events"
        left = [bot.get(url, params={"wait": 20}).headers["RateLimit-Remaining"] for _ in range(3)]
        assert left == ["2", "1", "0"]  # events were there: each answered at once
        refused = bot.get(url, params={"wait": 20})
        assert_problem(refused, 429, "rate_limited")
        assert int(refused.headers["Retry-After"]) >= 1
        # A refused request, an invalid one too, is refused before it waits.
        assert_problem(bot.get(url, params={"wait": 20, "after": "x"}), 429, "rate_limited")

    def test_a_poll_that_finds_what_came_just_before_it_is_free(
        self, client: TestClient, league: dict[str, Any], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A follower asking again at once finds what was committed meanwhile: it keeps up,
        as one that waited does (KEEPING_UP: its first event is younger than a second; here
        an hour, so that a slow machine does not matter)."""
        campaign_id = league["campaign"]
        _, token = token_of(league["ruby"])
        limited(client.app, 3)
        monkeypatch.setattr(feed_route, "KEEPING_UP", timedelta(hours=1))
        monkeypatch.setattr(feed_route, "COLLECT_SECONDS", 0.0, raising=False)
        bot = TestClient(client.app, headers={"Authorization": f"Bearer {token}"})
        url = f"/api/v1/campaigns/{campaign_id}/events"
        cursor = newest_cursor(client, campaign_id)
        for number in range(5):
            write_event(client, campaign_id, f"event {number}")
            answer = bot.get(url, params={"after": cursor, "wait": 20})
            assert answer.status_code == 200, answer.text
            assert answer.headers["RateLimit-Remaining"] == "3"
            cursor = answer.json()["next"]
        # Not a long poll: counted, whatever it finds.
        assert bot.get(url, params={"after": cursor}).headers["RateLimit-Remaining"] == "2"
        # A backlog's full page counts too.
        full = bot.get(url, params={"wait": 20, "limit": 1})
        assert full.json()["more"] and full.headers["RateLimit-Remaining"] == "1"
