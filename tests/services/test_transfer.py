"""A campaign exported as JSON imports anywhere, and export -> import -> export is identical."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from sqlmodel import Session
from typer.testing import CliRunner

from app import cli
from app.config import get_settings
from app.db.models import utcnow
from app.db.session import get_engine
from app.errors import DomainError
from app.services import demo, forces, transfer


def test_round_trip_is_identical(session: Session) -> None:
    original = demo.load_demo(session)
    session.flush()
    first = transfer.export_campaign(session, campaign_id=original.id or 0)
    copy = transfer.import_campaign(session, json.loads(json.dumps(first)))
    session.flush()
    assert copy.id != original.id
    second = transfer.export_campaign(session, campaign_id=copy.id or 0)
    assert json.dumps(second, sort_keys=True) == json.dumps(first, sort_keys=True)


def test_imported_cards_keep_their_numbers(session: Session) -> None:
    original = demo.load_demo(session)
    session.flush()
    document = transfer.export_campaign(session, campaign_id=original.id or 0)
    copy = transfer.import_campaign(session, document)
    session.flush()
    before = [v.value for v in forces.list_forces(session, campaign_id=original.id or 0, limit=10)]
    after = [v.value for v in forces.list_forces(session, campaign_id=copy.id or 0, limit=10)]
    assert [f.crusade_points for f in before] == [f.crusade_points for f in after]
    assert [[c.xp for c in f.cards] for f in before] == [[c.xp for c in f.cards] for f in after]
    assert [f.requisition_points for f in before] == [f.requisition_points for f in after]


@pytest.mark.parametrize(
    ("name", "stem"),
    [
        ("The Vigilus Crusade", "the-vigilus-crusade"),
        ("Waaagh! on Armageddon (2nd war)", "waaagh-on-armageddon-2nd-war"),
        ("!!!", "campaign"),
    ],
)
def test_export_file_is_named_after_the_campaign_and_the_day(
    session: Session, name: str, stem: str
) -> None:
    campaign = forces.create_campaign(session, name=name)
    session.flush()
    named = transfer.export_filename(session, campaign_id=campaign.id or 0)
    assert named == f"{stem}-{utcnow():%Y-%m-%d}.json"


def test_unknown_format_is_refused(session: Session) -> None:
    with pytest.raises(DomainError) as refused:
        transfer.import_campaign(session, {"format": "something-else"})
    assert refused.value.code == "import_format_unknown"


def test_cli_export_import_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    get_settings.cache_clear()
    get_engine.cache_clear()
    try:
        runner = CliRunner()
        assert runner.invoke(cli.app, ["demo"]).exit_code == 0
        first = tmp_path / "first.json"
        assert runner.invoke(cli.app, ["export", "1", "-o", str(first)]).exit_code == 0
        imported = runner.invoke(cli.app, ["import", str(first)])
        assert "as id 2" in imported.output
        second = runner.invoke(cli.app, ["export", "2"])
        assert second.output == first.read_text()
        assert runner.invoke(cli.app, ["demo"]).exit_code == 1  # never over existing data
    finally:
        get_settings.cache_clear()
        get_engine.cache_clear()


def test_a_streamed_export_imports_as_it_is_read(session: Session) -> None:
    original = demo.load_demo(session)
    session.flush()
    text = b"".join(transfer.export_chunks(session, campaign_id=original.id or 0)).decode()
    members = transfer.read_members(io.StringIO(text))
    names = []
    for name, value in members:
        names.append(name)
        if not isinstance(value, (dict, str)):
            assert iter(value) is value  # each table is read element by element
    assert names == ["format", "campaign", *transfer.TABLES]
    copy = transfer.import_file(session, io.StringIO(text))
    again = transfer.export_campaign(session, campaign_id=copy.id or 0)
    assert again == json.loads(text)


def test_a_document_with_sorted_keys_imports_too(session: Session) -> None:
    original = demo.load_demo(session)
    session.flush()
    document = transfer.export_campaign(session, campaign_id=original.id or 0)
    text = json.dumps(document, indent=2, sort_keys=True)
    copy = transfer.import_file(session, io.StringIO(text))
    assert transfer.export_campaign(session, campaign_id=copy.id or 0) == document


def test_a_broken_file_is_refused_in_words(session: Session) -> None:
    with pytest.raises(DomainError) as refused:
        transfer.import_file(session, io.StringIO('{"format": "crusade-campaign/1", "campa'))
    assert refused.value.code == "import_not_json"
