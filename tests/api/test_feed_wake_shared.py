"""Issue 50: long polls woken together share one page body per (campaign, cursor, limit,
reader kind, head) and decide their access again in batches; the sharing never hands a page
to a poll that may no longer read (a campaign turned private, a revoked token). The polls
run in one event loop (httpx over ASGI), as a server's do. On both engines."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.api import events as feed_route
from tests.api.helpers import account


@pytest.fixture
def org(client: TestClient) -> dict[str, Any]:
    """A public campaign run by the organizer (``client``), and its feed's newest cursor."""
    campaign_id = client.post("/api/v1/campaigns", json={"name": "Vigilus"}).json()["id"]
    assert client.patch(f"/api/v1/campaigns/{campaign_id}", json={"public": True}).is_success
    return {"campaign": campaign_id, "cursor": newest(client, campaign_id)}


def newest(client: TestClient, campaign_id: int) -> str:
    page = client.get(f"/api/v1/campaigns/{campaign_id}/events", params={"limit": 200}).json()
    assert not page["more"]
    return str(page["next"])


def token_of(owner: TestClient) -> str:
    made = owner.post("/api/v1/auth/tokens", json={"name": "feed bot"})
    assert made.status_code == 201, made.text
    return str(made.json()["token"])


Act = Callable[[httpx.AsyncClient], Awaitable[None]]


def woken_together(
    app: FastAPI, campaign_id: int, cursor: str, polls: list[dict[str, str]], act: Act
) -> list[httpx.Response]:
    """Each of ``polls`` (its headers) long-polls the feed after ``cursor`` in one event
    loop; once all of them wait, ``act`` runs (with a client of its own) and wakes them."""

    async def run() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            url = f"/api/v1/campaigns/{campaign_id}/events"
            waiting = [
                asyncio.create_task(
                    http.get(url, params={"after": cursor, "wait": 20}, headers=headers)
                )
                for headers in polls
            ]
            for _ in range(1000):  # until every poll waits for news (10 s at most)
                if len(feed_route._waiters.get(campaign_id, ())) == len(polls):
                    break
                await asyncio.sleep(0.01)
            else:
                done = [t.result().text[:300] for t in waiting if t.done() and not t.exception()]
                raise AssertionError(f"the polls never all waited: {done}")
            await act(http)
            return list(await asyncio.gather(*waiting))

    # In a thread of its own: an earlier test can leave an event loop running in this one.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result()


def organizer_writes(client: TestClient, campaign_id: int, change: dict[str, Any]) -> Act:
    """The organizer's change (a campaign setting: one event), sent in the polls' loop."""
    headers = {
        "Cookie": "; ".join(f"{k}={v}" for k, v in client.cookies.items()),
        "X-CSRF-Token": client.headers["X-CSRF-Token"],
    }

    async def act(http: httpx.AsyncClient) -> None:
        answer = await http.patch(f"/api/v1/campaigns/{campaign_id}", json=change, headers=headers)
        assert answer.status_code == 200, answer.text

    return act


class TestOnePageForAllWokenTogether:
    def test_each_reader_kind_gets_its_own_build_and_every_poll_the_same_events(
        self, client: TestClient, org: dict[str, Any]
    ) -> None:
        organizer = {"Authorization": f"Bearer {token_of(client)}"}
        outsider = {"Authorization": f"Bearer {token_of(account(client.app, 'ivo'))}"}
        pages, rechecks = feed_route._woken_pages, feed_route._rechecks
        # Kept pages are keyed by campaign id, which the other engine's run of this test
        # (in the same process, within the pages' second) has used too.
        pages.clear()
        decisions = rechecks.decisions
        answers = woken_together(
            client.app,
            org["campaign"],
            org["cursor"],
            [organizer, outsider, organizer, outsider, organizer, outsider],
            organizer_writes(client, org["campaign"], {"description": "for all"}),
        )
        assert [a.status_code for a in answers] == [200] * 6
        kinds = {tuple(e["kind"] for e in a.json()["items"]) for a in answers}
        assert kinds == {("campaign_settings_changed",)}
        # Pages built for the organizer's polls and for the outsider's (a reader of a public
        # campaign), each kind under its own key: never one kind's page served to the other.
        built = [key for key in pages.built if key[0] == org["campaign"]]
        assert sorted({key[3] for key in built}) == ["organizer", "reader"]  # type: ignore[index]
        assert len(built) < 6
        # Each credential decided once per batch, not once per poll.
        assert rechecks.decisions - decisions < 6

    def test_a_reader_woken_by_the_campaign_turning_private_gets_no_page(
        self, client: TestClient, anonymous: TestClient, org: dict[str, Any]
    ) -> None:
        """The organizer's polls and an outsider's wait on a public campaign; the organizer
        makes it private (an event): the organizer's polls get the event, while the
        outsider's, which may no longer read, are refused instead of being handed the page
        built for the organizer."""
        organizer = {"Authorization": f"Bearer {token_of(client)}"}
        outsider = {"Authorization": f"Bearer {token_of(account(client.app, 'ivo'))}"}
        nobody: dict[str, str] = {}  # no cookie, no token: a public campaign's visitor
        answers = woken_together(
            client.app,
            org["campaign"],
            org["cursor"],
            [organizer, outsider, nobody, organizer],
            organizer_writes(client, org["campaign"], {"public": False}),
        )
        assert [a.status_code for a in answers] == [200, 403, 401, 200]
        for refused in answers[1:3]:
            assert "campaign_settings_changed" not in refused.text
            assert "items" not in refused.json()
        assert answers[0].json() == answers[3].json()
        assert [e["kind"] for e in answers[0].json()["items"]] == ["campaign_settings_changed"]
        # The visitor sees nothing of it afterwards either.
        url = f"/api/v1/campaigns/{org['campaign']}/events"
        assert anonymous.get(url).status_code == 401

    def test_a_token_revoked_while_it_waits_with_others_gets_401_and_they_the_event(
        self, client: TestClient, org: dict[str, Any]
    ) -> None:
        ruby = account(client.app, "ruby")
        code = client.post(f"/api/v1/campaigns/{org['campaign']}/invites", json={}).json()
        assert ruby.post(f"/api/v1/invites/{code['code']}/accept").status_code == 201
        made = ruby.post("/api/v1/auth/tokens", json={"name": "ruby's bot"}).json()
        rubys = {"Authorization": f"Bearer {made['token']}"}
        organizer = {"Authorization": f"Bearer {token_of(client)}"}
        write = organizer_writes(client, org["campaign"], {"description": "after it"})
        ruby_cookie = "; ".join(f"{k}={v}" for k, v in ruby.cookies.items())

        async def revoke_then_write(http: httpx.AsyncClient) -> None:
            revoked = await http.delete(
                f"/api/v1/auth/tokens/{made['id']}",
                headers={"Cookie": ruby_cookie, "X-CSRF-Token": ruby.headers["X-CSRF-Token"]},
            )
            assert revoked.status_code == 200, revoked.text
            await write(http)

        answers = woken_together(
            client.app,
            org["campaign"],
            newest(client, org["campaign"]),  # after the invite's events
            [rubys, organizer, rubys, organizer],
            revoke_then_write,
        )
        assert [a.status_code for a in answers] == [401, 200, 401, 200]
        for refused in answers[::2]:
            assert refused.json()["code"] == "token_invalid"
            assert "after it" not in refused.text and "items" not in refused.json()
        for answered in answers[1::2]:
            kinds = [e["kind"] for e in answered.json()["items"]]
            assert kinds == ["campaign_settings_changed"]
