"""The campaign's event feed (issue 15): typed events with summaries, opaque cursors, an
ETag on the first page and long polling."""

from __future__ import annotations

import base64
import threading
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.services.feed import events
from tests.api.helpers import assert_problem
from tests.api.test_battle_flow import lord_falls, muster, setup_two_forces
from tests.api.test_bot_friction import captain_ranks_up


def feed(client: TestClient, campaign_id: int, **query: Any) -> Any:
    response = client.get(f"/api/v1/campaigns/{campaign_id}/events", params=query)
    assert response.status_code == 200, response.text
    return response.json()


def everything(client: TestClient, campaign_id: int) -> list[dict[str, Any]]:
    return list(feed(client, campaign_id, limit=200)["items"])


class TestFeed:
    def test_a_battle_reads_as_typed_events_with_summaries(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        battle = muster(client, world)
        body = captain_ranks_up(world)
        body["sides"][1] = lord_falls(world)["sides"][1]
        recorded = client.post(f"/api/v1/battles/{battle['id']}/result", json=body)
        assert recorded.status_code == 200, recorded.text
        events = everything(client, world["campaign"])
        by_kind = {e["kind"]: e for e in events}
        mustered = by_kind["battle_mustered"]
        assert mustered["battle_id"] == battle["id"]
        assert mustered["summary"] == (
            f"Battle {battle['id']} mustered: Ultramarines vs Black Legion "
            "(Combat Patrol, Sweep and Clear)."
        )
        assert by_kind["battle_recorded"]["summary"] == (
            f"Battle {battle['id']}: Ultramarines 60 – 10 Black Legion, Ultramarines won."
        )
        rank = by_kind["rank_gained"]
        assert (rank["card_id"], rank["details"]["rank"]) == (
            world["blue_units"][0]["id"],
            "blooded",
        )
        assert rank["summary"] == "Captain Severus (Ultramarines) reached the rank of Blooded."
        pending = [e for e in events if e["kind"] == "decision_pending"]
        assert {(e["force_id"], e["details"]["decision"]) for e in pending} == {
            (world["blue"], "battle_honour"),
            (world["red"], "out_of_action"),
        }
        assert all(e["decision_id"] for e in pending)
        assert [e["id"] for e in events] == sorted(e["id"] for e in events)

    def test_a_scar_chosen_later_is_an_event(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        battle = muster(client, world)
        client.post(f"/api/v1/battles/{battle['id']}/result", json=lord_falls(world))
        start = feed(client, world["campaign"], limit=200)["next"]
        decision = client.get(f"/api/v1/forces/{world['red']}/decisions").json()["items"][0]
        client.post(
            f"/api/v1/decisions/{decision['id']}/answer", json={"consequence": "battle_scar"}
        )
        scar = client.get(f"/api/v1/forces/{world['red']}/decisions").json()["items"][0]
        client.post(f"/api/v1/decisions/{scar['id']}/answer", json={"scar": "deep_scars"})
        kinds = [
            (e["kind"], e["summary"]) for e in feed(client, world["campaign"], after=start)["items"]
        ]
        assert (
            "scar_gained",
            "Chaos Lord (Black Legion) gained the Battle Scar Deep Scars.",
        ) in kinds
        assert [k for k, _ in kinds] == [
            "decision_answered",
            "decision_pending",
            "decision_answered",
            "scar_gained",
        ]


class TestCursor:
    def test_pages_follow_one_another_without_gaps_or_repeats(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        whole = [e["id"] for e in everything(client, world["campaign"])]
        seen: list[int] = []
        cursor = None
        while True:
            page = feed(client, world["campaign"], limit=2, **({"after": cursor} if cursor else {}))
            seen += [e["id"] for e in page["items"]]
            cursor = page["next"]
            if not page["more"]:
                break
        assert seen == whole and len(whole) == 7  # campaign, 2 forces, 4 cards
        assert feed(client, world["campaign"], after=cursor)["items"] == []
        assert feed(client, world["campaign"], after=cursor)["next"] == cursor

    def test_a_made_up_cursor_is_refused(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        response = client.get(f"/api/v1/campaigns/{world['campaign']}/events?after=12")
        problem = assert_problem(response, 422, "cursor_invalid")
        assert problem["field"] == "after"

    @pytest.mark.parametrize("event_id", [2**31 - 1 + 1, 2**31 + 5, 2**63, 10**40])
    def test_a_forged_cursor_with_a_huge_id_is_refused(
        self, client: TestClient, event_id: int
    ) -> None:
        """Issue 19: an id past PostgreSQL's integer range answered 500; now 422."""
        world = setup_two_forces(client)
        forged = base64.urlsafe_b64encode(f"ev1:{event_id}".encode()).decode().rstrip("=")
        url = f"/api/v1/campaigns/{world['campaign']}/events"
        problem = assert_problem(client.get(url, params={"after": forged}), 422, "cursor_invalid")
        assert problem["field"] == "after"
        largest = base64.urlsafe_b64encode(f"ev1:{2**31 - 1}".encode()).decode().rstrip("=")
        assert feed(client, world["campaign"], after=largest)["items"] == []

    def test_the_first_page_has_an_etag(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        url = f"/api/v1/campaigns/{world['campaign']}/events"
        first = client.get(url)
        etag = first.headers["etag"]
        assert client.get(url, headers={"If-None-Match": etag}).status_code == 304
        muster(client, world)
        changed = client.get(url, headers={"If-None-Match": etag})
        assert changed.status_code == 200 and changed.headers["etag"] != etag


class TestLongPolling:
    def test_an_existing_event_is_answered_at_once(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        page = feed(client, world["campaign"], wait=60)
        assert len(page["items"]) == 7

    def test_a_waiting_reader_gets_the_event_committed_meanwhile(
        self, client: TestClient, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        world = setup_two_forces(client)
        cursor = feed(client, world["campaign"], limit=200)["next"]
        waiting = threading.Event()
        look = events.newest_id

        def looked(*args: Any, **kwargs: Any) -> int:
            found = look(*args, **kwargs)
            if found <= events.read_cursor(cursor):
                waiting.set()  # the reader found nothing and is now waiting
            return found

        monkeypatch.setattr(events, "newest_id", looked)

        def muster_meanwhile() -> None:
            waiting.wait()
            muster(client, world)

        writer = threading.Thread(target=muster_meanwhile)
        writer.start()
        page = feed(client, world["campaign"], after=cursor, wait=30)
        writer.join()
        assert waiting.is_set()
        assert [e["kind"] for e in page["items"]] == ["battle_mustered"]


def test_a_settings_change_names_its_fields_and_no_change_records_nothing(
    client: TestClient,
) -> None:
    world = setup_two_forces(client)
    url = f"/api/v1/campaigns/{world['campaign']}"
    cursor = feed(client, world["campaign"], limit=200)["next"]
    for body in ({}, {"name": None, "public": None}):
        assert client.patch(url, json=body).status_code == 200
    current = client.get(url).json()
    assert client.patch(url, json={"name": current["name"]}).status_code == 200  # the same
    assert feed(client, world["campaign"], after=cursor)["items"] == []
    assert client.patch(url, json={"description": "Vigilus burns", "public": False}).is_success
    (changed,) = feed(client, world["campaign"], after=cursor)["items"]
    assert changed["kind"] == "campaign_settings_changed"
    assert changed["details"]["fields"] == ["description"]  # it was not public before either
