"""Issue 34, deliveries in a second: each webhook is a queue of its own. A slow or dead
receiver holds only its own queue (its back-off too), and each target gets its events in
order, also when it catches up after an outage."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from app.db.models import WebhookDelivery, utcnow
from app.services.feed import webhook_worker
from tests.api.receiver import Receiver
from tests.api.test_battle_flow import setup_two_forces
from tests.api.test_query_counts import statements
from tests.api.test_webhooks import register

pytestmark = pytest.mark.usefixtures("allow_private")


def closed_port() -> int:
    """A local port nobody listens on: a dead receiver (connections refused at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def add_units(client: TestClient, force_id: int, count: int, name: str = "Squad") -> None:
    for n in range(count):
        body = {"name": f"{name} {n}", "power_rating": 1, "keywords": ["IMPERIUM", "INFANTRY"]}
        assert client.post(f"/api/v1/forces/{force_id}/cards", json=body).status_code == 201


def ids(received: Receiver) -> list[int]:
    return [int(json.loads(r.body)["id"]) for r in received.received]


def attempts(engine: Engine, webhook_id: int) -> list[int]:
    with Session(engine) as session:
        rows = session.exec(
            select(WebhookDelivery.attempts)
            .where(WebhookDelivery.webhook_id == webhook_id)
            .order_by(col(WebhookDelivery.id))
        ).all()
        return [int(a) for a in rows]


@pytest.fixture
def slow() -> Iterator[Receiver]:
    started = Receiver(hold=threading.Event()).start()
    yield started
    assert started.hold is not None
    started.hold.set()
    started.stop()


def test_a_dead_receiver_is_tried_once_per_back_off_and_delays_nobody(
    client: TestClient,
    engine: Engine,
    receiver: Receiver,
) -> None:
    world = setup_two_forces(client)
    dead = register(client, world["campaign"], f"http://127.0.0.1:{closed_port()}/hook")
    healthy = register(client, world["campaign"], receiver.url)
    add_units(client, world["blue"], 5)
    assert webhook_worker.run_once(engine) == 5
    assert ids(receiver) == sorted(ids(receiver)) and len(ids(receiver)) == 5
    # Only the dead target's head was tried; the rest wait behind its back-off.
    assert attempts(engine, dead["id"]) == [1, 0, 0, 0, 0]
    assert attempts(engine, healthy["id"]) == [1] * 5


def test_a_target_catches_up_in_event_order_after_an_outage(
    client: TestClient,
    engine: Engine,
    receiver: Receiver,
) -> None:
    world = setup_two_forces(client)
    register(client, world["campaign"], receiver.url)
    receiver.stop()
    add_units(client, world["blue"], 3)
    assert webhook_worker.run_once(engine) == 0
    add_units(client, world["blue"], 3, "Later squad")
    assert webhook_worker.run_once(engine) == 0  # the queue waits behind its head
    receiver.start()
    for _round in range(3):  # each retry after the back-off
        webhook_worker.run_once(engine, now=utcnow() + timedelta(hours=2))
    got = ids(receiver)
    assert len(got) == 6 and got == sorted(got)


def test_a_slow_receiver_holds_only_its_own_queue(
    client: TestClient,
    engine: Engine,
    receiver: Receiver,
    slow: Receiver,
) -> None:
    world = setup_two_forces(client)
    register(client, world["campaign"], slow.url)
    register(client, world["campaign"], receiver.url)
    worker = webhook_worker.Worker(engine, senders=4)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        add_units(client, world["blue"], 4)
        worker.notify()
        deadline = time.monotonic() + 20
        while len(receiver.received) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        # Every event reached the healthy target while the slow one still holds its first.
        assert len(ids(receiver)) == 4 and ids(receiver) == sorted(ids(receiver))
        assert slow.received == []
        assert slow.hold is not None
        slow.hold.set()
        while len(slow.received) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ids(slow) == ids(receiver)
    finally:
        worker.stop.set()
        worker.notify()
        thread.join(10)


def test_a_batch_is_claimed_in_the_statements_of_one_delivery(
    client: TestClient,
    engine: Engine,
    receiver: Receiver,
) -> None:
    """A target's batch (up to 20) is built in one read: built event by event, its first
    delivery waited for ~100 queries, most of the p95 lag on a loaded machine."""
    world = setup_two_forces(client)
    hook = register(client, world["campaign"], receiver.url)
    webhook_worker.run_once(engine)  # nothing is queued yet: the webhook came last
    add_units(client, world["blue"], 1)
    one = statements(engine, lambda: webhook_worker.claim_target(engine, hook["id"], utcnow()))
    webhook_worker.run_once(engine, now=utcnow() + timedelta(minutes=10))  # past the lease
    add_units(client, world["blue"], webhook_worker.BATCH, name="Batch")
    claimed: list[list[webhook_worker.Claimed]] = []
    many = statements(
        engine,
        lambda: claimed.append(webhook_worker.claim_target(engine, hook["id"], utcnow())),
    )
    assert len(claimed[0]) == webhook_worker.BATCH
    assert many == one
    bodies = [json.loads(job.body) for job in claimed[0]]
    assert [b["id"] for b in bodies] == sorted(b["id"] for b in bodies)
    assert {b["summary"] for b in bodies} == {
        f"Ultramarines added Batch {n} (Power Rating 1)." for n in range(webhook_worker.BATCH)
    }
