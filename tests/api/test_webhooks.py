"""Webhooks (issue 15) against a real receiving HTTP server in the test process: signed
deliveries from a transactional outbox, retries while the receiver is down, the delivery
log, resend, SSRF refusals, and workers that never send one delivery twice."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text
from sqlmodel import Session, select

from app.db.models import WebhookDelivery, utcnow
from app.services.feed import events, webhook_worker, webhooks
from tests.api.helpers import assert_problem, dump
from tests.api.receiver import Receiver
from tests.api.test_battle_flow import battle_body, muster, setup_two_forces


def register(client: TestClient, campaign_id: int, url: str, **extra: Any) -> dict[str, Any]:
    response = client.post(f"/api/v1/campaigns/{campaign_id}/webhooks", json={"url": url, **extra})
    assert response.status_code == 201, response.text
    return dict(response.json())


def log(client: TestClient, campaign_id: int, webhook_id: int) -> list[dict[str, Any]]:
    response = client.get(f"/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}/deliveries")
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def verified(secret: str, body: bytes, header: str) -> bool:
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header)


@pytest.mark.usefixtures("allow_private")
class TestDelivery:
    def test_an_event_is_posted_signed_once_the_worker_runs(
        self, client: TestClient, engine: Engine, receiver: Receiver
    ) -> None:
        world = setup_two_forces(client)
        hook = register(client, world["campaign"], receiver.url)
        assert hook["secret"] and hook["events"] == [] and not hook["discord"]
        listed = client.get(f"/api/v1/campaigns/{world['campaign']}/webhooks").json()
        assert "secret" not in listed[0]
        battle = muster(client, world)
        assert receiver.received == []  # nothing is sent inside the request
        assert webhook_worker.run_once(engine) == 1
        [got] = receiver.received
        assert got.path == "/hooks/crusade"
        assert verified(hook["secret"], got.body, got.headers["x-crusade-signature"])
        assert not verified("another secret", got.body, got.headers["x-crusade-signature"])
        event = json.loads(got.body)
        assert (event["kind"], event["battle_id"]) == ("battle_mustered", battle["id"])
        assert got.headers["x-crusade-event-id"] == str(event["id"])
        assert abs(int(got.headers["x-crusade-timestamp"]) - utcnow().timestamp()) < 3600
        assert event["summary"].startswith(f"Battle {battle['id']} mustered")
        [delivery] = log(client, world["campaign"], hook["id"])
        assert (delivery["status"], delivery["attempts"], delivery["last_status_code"]) == (
            "delivered",
            1,
            204,
        )
        assert webhook_worker.run_once(engine) == 0  # delivered once, never again

    def test_only_the_kinds_asked_for_are_sent(
        self, client: TestClient, engine: Engine, receiver: Receiver
    ) -> None:
        world = setup_two_forces(client)
        hook = register(
            client, world["campaign"], receiver.url, events=["battle_called_off", "battle_recorded"]
        )
        battle = muster(client, world)
        client.post(f"/api/v1/battles/{battle['id']}/call-off")
        battle = muster(client, world)
        result = {
            "sides": [
                {"force_id": world["blue"], "victory_points": 30},
                {"force_id": world["red"], "victory_points": 20},
            ]
        }
        client.post(f"/api/v1/battles/{battle['id']}/result", json=result)
        webhook_worker.run_once(engine)
        kinds = [json.loads(r.body)["kind"] for r in receiver.received]
        assert kinds == ["battle_called_off", "battle_recorded"]
        # Sent alone, the event still names its forces.
        recorded = json.loads(receiver.received[1].body)
        assert recorded["summary"] == (
            f"Battle {battle['id']}: Ultramarines 30 – 20 Black Legion, Ultramarines won."
        )
        assert recorded["details"]["victory_points"] == [
            {"force_id": world["blue"], "victory_points": 30},
            {"force_id": world["red"], "victory_points": 20},
        ]
        assert len(log(client, world["campaign"], hook["id"])) == 2

    def test_a_refused_change_sends_nothing(
        self, client: TestClient, engine: Engine, receiver: Receiver
    ) -> None:
        world = setup_two_forces(client)
        register(client, world["campaign"], receiver.url)
        before = dump(engine)
        body = battle_body(world)
        body["sides"][0]["agendas"] = []
        refused = client.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=body)
        assert_problem(refused, 422, "agenda_count")
        assert dump(engine) == before  # no event, no outbox row
        assert webhook_worker.run_once(engine) == 0 and receiver.received == []

    def test_a_receiver_that_is_down_gets_it_when_it_comes_back(
        self, client: TestClient, engine: Engine, receiver: Receiver
    ) -> None:
        world = setup_two_forces(client)
        hook = register(client, world["campaign"], receiver.url)
        receiver.stop()
        muster(client, world)
        assert webhook_worker.run_once(engine) == 0
        [failed] = log(client, world["campaign"], hook["id"])
        assert (failed["status"], failed["attempts"]) == ("pending", 1)
        assert failed["last_error"] and failed["last_status_code"] is None
        assert webhook_worker.run_once(engine) == 0  # not due again yet: backoff
        receiver.start()  # the same port again
        later = utcnow() + webhook_worker.backoff(1) + timedelta(seconds=1)
        assert webhook_worker.run_once(engine, now=later) == 1
        assert len(receiver.received) == 1
        [delivered] = log(client, world["campaign"], hook["id"])
        assert (delivered["status"], delivered["attempts"]) == ("delivered", 2)

    def test_an_error_answer_is_retried_and_given_up_after_a_day(
        self, client: TestClient, engine: Engine, receiver: Receiver
    ) -> None:
        world = setup_two_forces(client)
        hook = register(client, world["campaign"], receiver.url)
        receiver.answer = 500
        muster(client, world)
        webhook_worker.run_once(engine)
        [retried] = log(client, world["campaign"], hook["id"])
        assert (retried["status"], retried["last_status_code"]) == ("pending", 500)
        webhook_worker.run_once(engine, now=utcnow() + timedelta(days=1, minutes=1))
        [given_up] = log(client, world["campaign"], hook["id"])
        assert (given_up["status"], given_up["attempts"]) == ("failed", 2)

    def test_the_organizer_can_resend(
        self, client: TestClient, engine: Engine, receiver: Receiver
    ) -> None:
        world = setup_two_forces(client)
        hook = register(client, world["campaign"], receiver.url)
        muster(client, world)
        webhook_worker.run_once(engine)
        [first] = log(client, world["campaign"], hook["id"])
        again = client.post(
            f"/api/v1/campaigns/{world['campaign']}/webhooks/{hook['id']}"
            f"/deliveries/{first['id']}/resend"
        )
        assert again.status_code == 201, again.text
        assert (again.json()["status"], again.json()["event_id"]) == ("pending", first["event_id"])
        webhook_worker.run_once(engine)
        ids = {r.headers["x-crusade-event-id"] for r in receiver.received}
        assert len(receiver.received) == 2 and ids == {str(first["event_id"])}

    def test_the_log_is_a_page_by_key_newest_first(
        self, client: TestClient, receiver: Receiver
    ) -> None:
        """Issue 46: the log answered a bare list; now the page every list answers."""
        world = setup_two_forces(client)
        hook = register(client, world["campaign"], receiver.url)
        for said in ("one", "two", "three"):
            client.patch(f"/api/v1/campaigns/{world['campaign']}", json={"description": said})
        url = f"/api/v1/campaigns/{world['campaign']}/webhooks/{hook['id']}/deliveries"
        first = client.get(url, params={"limit": 2})
        page = first.json()
        assert len(page["items"]) == 2 and page["limit"] == 2
        assert first.headers["Link"] == f'<{page["next"]}>; rel="next"'
        rest = client.get(page["next"]).json()
        ids = [d["id"] for d in page["items"] + rest["items"]]
        assert ids == sorted(ids, reverse=True) and len(ids) == 3
        assert rest["next"] is None and rest["next_cursor"] is None
        # The old parameter still reads the same page.
        old = client.get(url, params={"limit": 2, "before": page["next_cursor"]}).json()
        assert old["items"] == rest["items"]

    def test_deleting_a_webhook_stops_its_deliveries(
        self, client: TestClient, engine: Engine, receiver: Receiver
    ) -> None:
        world = setup_two_forces(client)
        hook = register(client, world["campaign"], receiver.url)
        muster(client, world)
        url = f"/api/v1/campaigns/{world['campaign']}/webhooks/{hook['id']}"
        assert client.delete(url).status_code == 200
        assert_problem(client.get(url), 404, "webhook_not_found")
        assert webhook_worker.run_once(engine) == 0 and receiver.received == []


class TestWorkers:
    @pytest.mark.usefixtures("allow_private")
    def test_two_workers_never_claim_one_delivery(
        self, client: TestClient, engine: Engine, receiver: Receiver
    ) -> None:
        world = setup_two_forces(client)
        register(client, world["campaign"], receiver.url)
        for _ in range(3):
            battle = muster(client, world)
            client.post(f"/api/v1/battles/{battle['id']}/call-off")
        now = utcnow()
        first = webhook_worker.claim(engine, now=now)
        second = webhook_worker.claim(engine, now=now)  # the first one's lease holds
        assert len(first) == 6 and second == []
        if engine.dialect.name == "postgresql":
            self._skips_rows_another_worker_has_locked(engine)

    def _skips_rows_another_worker_has_locked(self, engine: Engine) -> None:
        with Session(engine) as holder:
            holder.execute(text("UPDATE webhook_delivery SET claimed_until = NULL"))
            holder.commit()
            locked = holder.exec(select(WebhookDelivery).with_for_update()).all()
            assert len(locked) == 6
            # While another transaction holds the rows, a claim takes none (and waits for none).
            assert webhook_worker.claim(engine, now=utcnow()) == []
            holder.rollback()
        assert len(webhook_worker.claim(engine, now=utcnow())) == 6


class TestRefusals:
    @pytest.mark.parametrize(
        ("url", "code"),
        [
            ("http://127.0.0.1:9/hook", "webhook_url_private"),
            ("http://169.254.169.254/latest/meta-data", "webhook_url_private"),
            ("http://10.1.2.3/hook", "webhook_url_private"),
            ("http://[::1]/hook", "webhook_url_private"),
            ("ftp://example.org/hook", "webhook_url_invalid"),
            # Issue 19: each of these answered 500 (urllib raised) or was accepted.
            ("http://example.org:99999/hook", "webhook_url_invalid"),
            ("http://example.org:abc/hook", "webhook_url_invalid"),
            ("http://[::1/hook", "webhook_url_invalid"),
            ("http://[v1.x]/hook", "webhook_url_invalid"),
            ("http://[::127.0.0.1]/hook", "webhook_url_private"),
            ("http://[64:ff9b::7f00:1]/hook", "webhook_url_private"),
            ("http://[64:ff9b::a00:1]/hook", "webhook_url_private"),
            ("http://[2002:7f00:1::]/hook", "webhook_url_private"),
            ("http://[2002:c0a8:101::]/hook", "webhook_url_private"),
            ("http://[ff0e::1]/hook", "webhook_url_private"),
            ("http://224.0.0.1/hook", "webhook_url_private"),
            ("http://[::ffff:10.0.0.1]/hook", "webhook_url_private"),
        ],
    )
    def test_private_and_odd_urls_are_refused(
        self, client: TestClient, engine: Engine, url: str, code: str
    ) -> None:
        world = setup_two_forces(client)
        before = dump(engine)
        response = client.post(f"/api/v1/campaigns/{world['campaign']}/webhooks", json={"url": url})
        problem = assert_problem(response, 422, code)
        assert problem["field"] == "url"
        assert dump(engine) == before


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2606:4700::1111", True),
        ("64:ff9b::808:808", True),  # NAT64 of a public address
        ("2002:808:808::", True),  # 6to4 of a public address
        ("::127.0.0.1", False),
        ("64:ff9b::7f00:1", False),
        ("2002:7f00:1::", False),
        ("ff02::1", False),
        ("239.1.2.3", False),
    ],
)
def test_only_public_addresses_embedded_ones_included_may_receive(
    address: str, public: bool
) -> None:
    assert webhooks.is_public(ipaddress.ip_address(address)) is public


def test_a_delivery_connects_to_the_address_that_was_checked(
    monkeypatch: pytest.MonkeyPatch, receiver: Receiver
) -> None:
    """DNS rebinding: the host is resolved once, checked, and the connection goes to that
    address. Here the host does not resolve at all through DNS, so the delivery can only
    arrive if the worker connected to the pinned address (127.0.0.1, let through by a
    patched check) with the URL's host in the Host header."""
    monkeypatch.setattr(webhooks, "resolve", lambda host, port: [ipaddress.ip_address("127.0.0.1")])
    monkeypatch.setattr(webhooks, "is_public", lambda address: True)
    job = webhook_worker.Claimed(
        delivery_id=1,
        webhook_id=1,
        event_id=1,
        url=f"http://rebound.invalid:{receiver.port}/hooks/crusade",
        secret="s",
        body=b"{}",
    )
    outcome = webhook_worker.post(job)
    assert outcome.status_code is not None and outcome.status_code < 300, outcome.error
    [received] = receiver.received
    assert received.headers["host"] == f"rebound.invalid:{receiver.port}"


def test_discord_urls_get_discords_message_format() -> None:
    url = "https://discord.com/api/webhooks/123/abc"
    assert webhook_worker.is_discord(url)
    assert not webhook_worker.is_discord("https://discord.com.evil.example/api/webhooks/1/x")
    event = events.FeedEvent(
        id=1,
        cursor=events.cursor_for(1),
        kind="battle_recorded",
        campaign_id=1,
        force_id=None,
        force_ids=[1, 2],
        battle_id=3,
        card_id=None,
        decision_id=None,
        actor=None,
        summary="Battle 3: Ultramarines 60 – 10 Black Legion, Ultramarines won.",
        created_at=utcnow(),
        details={},
    )
    assert json.loads(webhook_worker.body_for(url, event)) == {
        "content": "Battle 3: Ultramarines 60 – 10 Black Legion, Ultramarines won.",
        "username": "Crusade tracker",
        "allowed_mentions": {"parse": []},
    }


def test_an_unknown_event_kind_is_refused_with_the_known_ones(client: TestClient) -> None:
    world = setup_two_forces(client)
    response = client.post(
        f"/api/v1/campaigns/{world['campaign']}/webhooks",
        json={"url": "http://93.184.215.14/hook", "events": ["battle_recorded", "battle_won"]},
    )
    problem = assert_problem(response, 422, "webhook_event_unknown")
    assert problem["field"] == "events[1]" and "battle_recorded" in problem["detail"]
