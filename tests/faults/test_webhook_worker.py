"""The webhook worker losing its database (PostgreSQL stopped under it; SQLite's file
unusable) carries on once the database is back: nothing is lost, nothing is sent twice,
the outage is one log line and no traceback per round (issue 35)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func
from sqlmodel import Session, col, select

from app.config import get_settings
from app.db.models import WebhookDelivery
from app.faults import DATABASE
from app.services.feed import webhook_worker
from tests.api.helpers import campaign
from tests.api.receiver import Receiver
from tests.faults.helpers import outage_lines
from tests.faults.outages import Database
from tests.faults.test_database_down import add_force


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    monkeypatch.setenv("WEBHOOK_ALLOW_PRIVATE", "true")  # the receiver is on 127.0.0.1
    get_settings.cache_clear()
    started = Receiver().start()
    yield started
    started.stop()
    get_settings.cache_clear()


def until(condition: Callable[[], bool], why: Callable[[], str], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within the time: {why()}"
        time.sleep(0.05)


def delivered(engine: Engine) -> int:
    with Session(engine) as session:
        found = session.exec(
            select(func.count()).where(col(WebhookDelivery.delivered_at).is_not(None))
        )
        return int(found.one())


def force_names(receiver: Receiver) -> list[str]:
    return [
        json.loads(r.body)["summary"]
        for r in receiver.received
        if json.loads(r.body)["kind"] == "force_created"
    ]


class TestWorkerLosingItsDatabase:
    def test_it_carries_on_when_the_database_is_back(
        self,
        client: TestClient,
        engine: Engine,
        receiver: Receiver,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        campaign_id = campaign(client)
        hook = client.post(
            f"/api/v1/campaigns/{campaign_id}/webhooks",
            json={"url": receiver.url, "events": ["force_created"]},
        )
        assert hook.status_code == 201, hook.text
        database = Database(engine)  # the worker's way to the database
        stop = threading.Event()
        worker = threading.Thread(
            target=webhook_worker.run_forever,
            args=(database.engine, stop),
            kwargs={"idle_seconds": 0.05},
            daemon=True,
        )
        worker.start()
        try:
            assert add_force(client, campaign_id, "Before").status_code == 201
            until(lambda: len(receiver.received) == 1, lambda: caplog.text)
            # ...and recorded: a sender still recording when the file is moved away does so
            # on the connection it holds (the moved file), and its success read as the
            # database back for a moment (two outage lines, under load)
            until(lambda: delivered(engine) == 1, lambda: caplog.text)
            database.take_away()
            time.sleep(0.5)  # ten rounds of the worker, each failing
            assert len(outage_lines(caplog, DATABASE)) == 1  # said once, not once a round
            if database.proxy is not None:  # PostgreSQL: the app still reaches it directly
                assert add_force(client, campaign_id, "During").status_code == 201
                time.sleep(0.3)
                assert len(receiver.received) == 1
            database.bring_back()
            assert add_force(client, campaign_id, "After").status_code == 201
            wanted = 3 if database.proxy is not None else 2
            until(lambda: len(receiver.received) == wanted, lambda: caplog.text)
            time.sleep(0.3)  # nothing more comes: each event once
            assert worker.is_alive()
        finally:
            stop.set()
            worker.join(5)
            database.close()
        summaries = force_names(receiver)
        assert len(summaries) == wanted and len(set(summaries)) == wanted
        tracebacks = [r for r in caplog.records if r.name == "crusade.webhooks" and r.exc_info]
        assert tracebacks == [], caplog.text
