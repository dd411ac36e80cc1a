"""`crusade worker --once`: sends what the outbox holds, to a real receiver."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app import cli
from app.config import get_settings
from app.db.session import get_engine, session_scope
from app.services.feed import webhooks
from app.services.forces import forces
from tests.api.receiver import Receiver


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("DATA_DIR", str(tmp_path))
    monkeypatch.setenv("WEBHOOK_ALLOW_PRIVATE", "true")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    get_settings.cache_clear()
    get_engine.cache_clear()
    yield tmp_path
    get_settings.cache_clear()
    get_engine.cache_clear()


def test_the_worker_command_sends_the_outbox(install: Path) -> None:
    receiver = Receiver().start()
    try:
        runner = CliRunner()
        assert runner.invoke(cli.app, ["db", "upgrade"]).exit_code == 0
        with session_scope() as session:
            campaign_id = forces.create_campaign(session, name="Vigilus").id
            assert campaign_id is not None
        # Registered once the campaign exists (as through the API): it hears what follows.
        with session_scope() as session:
            webhooks.register(
                session, campaign_id=campaign_id, url=receiver.url, events=[], by=None
            )
            forces.create_force(
                session, campaign_id=campaign_id, name="Blue", crusade_faction="IMPERIUM"
            )
        sent = runner.invoke(cli.app, ["worker", "--once"])
        assert sent.exit_code == 0, sent.output
        assert sent.output.strip() == "1 delivered"
        assert [json.loads(r.body)["kind"] for r in receiver.received] == ["force_created"]
        assert runner.invoke(cli.app, ["worker", "--once"]).output.strip() == "0 delivered"
    finally:
        receiver.stop()
