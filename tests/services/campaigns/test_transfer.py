"""A campaign exported as JSON imports anywhere, and export -> import -> export is identical."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import Session, select
from typer.testing import CliRunner

from app import cli
from app.config import get_settings
from app.db.models import Battle, utcnow
from app.db.session import get_engine
from app.errors import DomainError
from app.services.campaigns import demo, photos, transfer
from app.services.forces import forces


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


@pytest.fixture
def fresh_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The CLI on an install of its own: SQLite in a fresh DATA_DIR."""
    monkeypatch.setenv("DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DATABASE_URL", raising=False)
    get_settings.cache_clear()
    get_engine.cache_clear()
    yield tmp_path
    get_settings.cache_clear()
    get_engine.cache_clear()


def test_cli_export_import_export(fresh_install: Path) -> None:
    tmp_path = fresh_install
    runner = CliRunner()
    assert runner.invoke(cli.app, ["demo"]).exit_code == 0
    first = tmp_path / "first.json"
    assert runner.invoke(cli.app, ["export", "1", "-o", str(first)]).exit_code == 0
    imported = runner.invoke(cli.app, ["import", str(first)])
    assert "as id 2" in imported.output
    second = runner.invoke(cli.app, ["export", "2"])
    assert second.output == first.read_text()
    assert runner.invoke(cli.app, ["demo"]).exit_code == 1  # never over existing data


def test_cli_refuses_a_document_naming_a_row_it_does_not_hold(fresh_install: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli.app, ["demo"]).exit_code == 0
    document = json.loads(runner.invoke(cli.app, ["export", "1"]).output)
    document["battle_sides"][0]["roster"].append(len(document["cards"]) + 1)
    broken = fresh_install / "broken.json"
    broken.write_text(json.dumps(document), encoding="utf-8")
    refused = runner.invoke(cli.app, ["import", str(broken)])
    assert refused.exit_code == 1
    assert "not imported (import_reference_unknown)" in refused.output
    assert "in roster" in refused.output
    second = runner.invoke(cli.app, ["export", "2"])
    assert second.exit_code != 0  # no campaign 2: the refused import left nothing


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
    # a JSON document leaves the photos out: their files cannot travel in it
    assert names == ["format", "campaign", *(t for t in transfer.TABLES if t != transfer.PHOTOS)]
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


def test_a_reference_the_document_does_not_hold_is_refused_in_words(session: Session) -> None:
    """A document of an older version wrote a side's roster with its database's ids: one
    past the document's cards is refused by name, not a KeyError."""
    original = demo.load_demo(session)
    session.flush()
    document = transfer.export_campaign(session, campaign_id=original.id or 0)
    side = document["battle_sides"][0]
    side["roster"] = [*side["roster"], len(document["cards"]) + 1]
    with pytest.raises(DomainError) as refused:
        transfer.import_campaign(session, document)
    assert (refused.value.code, refused.value.field) == (
        "import_reference_unknown",
        "battle_sides.roster",
    )
    assert f"battle_sides row {side['id']}" in refused.value.message


def test_a_broken_file_is_refused_in_words(session: Session) -> None:
    with pytest.raises(DomainError) as refused:
        transfer.import_file(session, io.StringIO('{"format": "crusade-campaign/1", "campa'))
    assert refused.value.code == "import_not_json"


def test_an_archive_carries_the_photos_and_round_trips(session: Session, tmp_path: Path) -> None:
    original = demo.load_demo(session)
    session.commit()  # the events are written at the commit
    store = photos.configured_store()
    first = io.BytesIO()
    transfer.export_archive(session, campaign_id=original.id or 0, store=store, out=first)
    with zipfile.ZipFile(first) as archive:
        document = json.loads(archive.read(transfer.ARCHIVE_DOCUMENT))
        [row] = document["battle_photos"]
        files = {n: archive.read(n) for n in archive.namelist() if n.startswith("photos/")}
    assert sorted(files) == [f"photos/1/{w}.jpg" for w in sorted(row["widths"], key=str)]
    [added] = [e for e in document["events"] if e["kind"] == "photo_added"]
    assert added["payload"]["photo_id"] == 1

    elsewhere = photos.FolderStore(tmp_path / "elsewhere")
    copy = transfer.import_archive(session, io.BytesIO(first.getvalue()), store=elsewhere)
    session.flush()
    [battle_id] = [
        b.id
        for b in session.exec(select(Battle).where(Battle.campaign_id == copy.id))
        if photos.photos_of(session, b.id or 0)
    ]
    [photo] = photos.photos_of(session, battle_id)
    for width in photo.widths:
        assert elsewhere.read(photo.id or 0, width) == files[f"photos/1/{width}.jpg"]
    second = io.BytesIO()
    transfer.export_archive(session, campaign_id=copy.id or 0, store=elsewhere, out=second)
    with zipfile.ZipFile(second) as archive:
        assert json.loads(archive.read(transfer.ARCHIVE_DOCUMENT)) == document
        assert {n: archive.read(n) for n in archive.namelist() if n != "campaign.json"} == files


def test_a_json_document_names_no_photo(session: Session) -> None:
    original = demo.load_demo(session)
    session.commit()  # the events are written at the commit
    document = transfer.export_campaign(session, campaign_id=original.id or 0)
    assert "battle_photos" not in document
    [added] = [e for e in document["events"] if e["kind"] == "photo_added"]
    assert added["payload"]["photo_id"] is None  # the event stays; its photo did not travel


def test_an_older_document_without_a_table_keeps_everything_after_it(session: Session) -> None:
    """A backup written before the map existed has no "territories": its battles (which
    come after it) must still arrive, not be held and dropped."""
    original = demo.load_demo(session)
    session.flush()
    document = transfer.export_campaign(session, campaign_id=original.id or 0)
    older = {k: v for k, v in document.items() if k != "territories"}
    for battle in older["battles"]:
        battle.pop("territory_id", None), battle.pop("territory_holder_before", None)
    text = json.dumps(older)
    copy = transfer.import_file(session, io.StringIO(text))
    again = transfer.export_campaign(session, campaign_id=copy.id or 0)
    assert len(again["battles"]) == len(document["battles"]) > 0
    assert len(again["battle_sides"]) == len(document["battle_sides"])
    assert len(again["events"]) == len(document["events"])
    assert again["territories"] == []


def test_a_broken_archive_is_refused_in_words(session: Session) -> None:
    for data, why in (
        (b"PK\x03\x04 nonsense", "not a ZIP"),
        (_zip({"x.txt": b"hi"}), "no campaign"),
    ):
        with pytest.raises(DomainError) as refused:
            transfer.import_archive(session, io.BytesIO(data), store=photos.configured_store())
        assert refused.value.code == "import_not_archive" and why in refused.value.message


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def test_cli_archive_export_and_import(fresh_install: Path) -> None:
    tmp_path = fresh_install
    runner = CliRunner()
    assert runner.invoke(cli.app, ["demo"]).exit_code == 0
    archive = tmp_path / "campaign.zip"
    exported = runner.invoke(cli.app, ["export", "1", "--photos", "-o", str(archive)])
    assert exported.exit_code == 0, exported.output
    imported = runner.invoke(cli.app, ["import", str(archive)])
    assert "as id 2" in imported.output, imported.output
    with Session(get_engine()) as session:
        copies = [
            p
            for b in session.exec(select(Battle).where(Battle.campaign_id == 2))
            for p in photos.photos_of(session, b.id or 0)
        ]
    [copy] = copies
    assert all(photos.configured_store().read(copy.id or 0, w) for w in copy.widths)
