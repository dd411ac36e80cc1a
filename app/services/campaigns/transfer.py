"""A campaign as one JSON document, and back.

Ids in the document are local to it (numbered 1, 2, ... per table in id order) and every
reference uses them, so a document imports into any database, and export -> import ->
export gives the same document.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from datetime import date, datetime
from typing import IO, Any, cast

from sqlalchemy import Select, Table
from sqlalchemy import select as sa_select
from sqlmodel import Session, SQLModel

from app.db.models import (
    Battle,
    BattlePhoto,
    BattleReport,
    BattleSide,
    Campaign,
    Card,
    Decision,
    Event,
    Force,
    RequisitionPurchase,
    RulePack,
    Territory,
    utcnow,
)
from app.errors import DomainError
from app.services.campaigns import kept_totals
from app.services.campaigns.photos import PhotoStore
from app.services.forces.forces import get_campaign

FORMAT = "crusade-campaign/1"

# table name in the document -> (model, {field: table it refers to})
TABLES: dict[str, tuple[type[SQLModel], dict[str, str]]] = {
    "rule_packs": (RulePack, {"campaign_id": "campaign"}),
    "forces": (Force, {"campaign_id": "campaign"}),
    "cards": (Card, {"force_id": "forces"}),
    "territories": (Territory, {"campaign_id": "campaign", "holder_force_id": "forces"}),
    "battles": (
        Battle,
        {
            "campaign_id": "campaign",
            "territory_id": "territories",
            "territory_holder_before": "forces",
        },
    ),
    "battle_sides": (
        BattleSide,
        {"battle_id": "battles", "force_id": "forces", "warlord_card_id": "cards"},
    ),
    # Only in an archive (`export_archive`): a JSON document leaves photos out, since their
    # files cannot travel in it; an event about a photo then names none.
    "battle_photos": (BattlePhoto, {"battle_id": "battles"}),
    "requisitions": (RequisitionPurchase, {"force_id": "forces", "card_id": "cards"}),
    "decisions": (Decision, {"force_id": "forces", "battle_id": "battles", "card_id": "cards"}),
    "events": (Event, {"campaign_id": "campaign", "force_id": "forces", "battle_id": "battles"}),
    "battle_reports": (BattleReport, {"battle_id": "battles"}),
}


# JSON columns that carry ids: keys whose values are ids (or lists of ids), and keys whose
# value is a dict keyed by ids.
JSON_FIELDS = {
    "battles": ("proposal",),  # a result waiting for confirmation: forces, units
    "battle_sides": ("roster", "report", "snapshot"),
    "requisitions": ("details",),  # the unit bought for, the units promoted
    "decisions": ("payload", "answer"),
    "events": ("payload",),
    "battle_reports": ("unit_notes",),
    "territories": ("neighbours",),  # on import: once every territory is there (see below)
}
ID_KEYS = {
    "card_id": "cards",
    "force_id": "forces",  # a side of a proposal, of a battle_recorded event
    "destroyed_enemies": "cards",  # a unit's result names the enemy units it destroyed
    "quarry": "cards",  # and the enemy unit it named its quarry
    "eligible": "cards",
    "roster": "cards",
    "joined": "cards",  # the units an answer brought in (a revert removes them)
    "promoted": "cards",  # the units a requisition promoted
    "forces": "forces",
    "decision_id": "decisions",
    "neighbours": "territories",
    "photo_id": "battle_photos",
}
PHOTOS = "battle_photos"
ID_KEYED_DICTS = {
    "experience": "cards",
    "gains": "cards",
    "cards": "cards",
    "out_of_action_choices": "cards",
    "victory_points": "forces",
    "unit_notes": "cards",
}
# Dicts whose values (not keys) are ids, as a key of ID_KEYS holds: a proposal's agenda
# choices, {agenda: card id}.
ID_VALUED_DICTS = {"agenda_choices": "card_id"}
# Text that names a card id: a proposal's named dice are keyed "out_of_action:<card id>"
# (an agenda's, "agenda:<agenda>", names none), and an answer's "gained" lists
# "<card id>:<kind>:<entry>".
NAMED_DICE = "named_dice"
DIE_KEY = re.compile(r"^(out_of_action|devastating_blow):(\d+)$")
GAINED = re.compile(r"^(\d+)(:.+)$")
IdMaps = dict[str, dict[int, int]]


def export_campaign(session: Session, *, campaign_id: int) -> dict[str, Any]:
    """The whole document in memory (the CLI and tests); the website streams it."""
    document: dict[str, Any] = json.loads(b"".join(export_chunks(session, campaign_id=campaign_id)))
    return document


def export_chunks(
    session: Session, *, campaign_id: int, maps: IdMaps | None = None
) -> Iterator[bytes]:
    """The document as JSON text in pieces of about 64 kB (each piece sent is a hop between
    threads for the server: one per row was most of the export's time). With ``maps`` (an
    archive's), the photos' rows are in it too."""
    buffer = bytearray()
    for piece in _export_pieces(session, campaign_id=campaign_id, maps=maps):
        buffer += piece
        if len(buffer) >= EXPORT_CHUNK:
            yield bytes(buffer)
            buffer.clear()
    if buffer:
        yield bytes(buffer)


EXPORT_CHUNK = 64 * 1024


def _export_pieces(
    session: Session, *, campaign_id: int, maps: IdMaps | None = None
) -> Iterator[bytes]:
    """The document as JSON text, written as the rows are read: only the id maps (a few
    integers per row) are held, so memory stays flat however long the campaign's past.
    Rows are read with plain SQL a batch at a time, never kept by the session. On
    PostgreSQL a fresh session reads in one REPEATABLE READ snapshot, so a battle recorded
    meanwhile cannot leave a side without its battle."""
    _one_snapshot(session)
    campaign = get_campaign(session, campaign_id)
    photos = maps is not None
    maps = maps or _id_maps(session, campaign_id)
    yield b'{"format":' + _dumps(FORMAT) + b',"campaign":' + _dumps(_plain(campaign) | {"id": 1})
    connection = session.connection()
    for name, query in _queries(campaign_id, photos=photos).items():
        yield b',"' + name.encode() + b'":['
        rows = connection.execute(query.execution_options(yield_per=EXPORT_BATCH))
        for number, row in enumerate(rows):
            data = _without_accounts(name, _plain_row(row._mapping))
            local = _translate(name, data, maps) | {"id": maps[name][row.id]}
            yield (b"," if number else b"") + _dumps(local)
        yield b"]"
    yield b"}"


EXPORT_BATCH = 100


def _one_snapshot(session: Session) -> None:
    bind = session.get_bind()
    if bind.dialect.name == "postgresql" and not session.in_transaction():
        session.connection(execution_options={"isolation_level": "REPEATABLE READ"})


# --- with the photos: a ZIP archive -------------------------------------------------------

ARCHIVE_DOCUMENT = "campaign.json"
MAX_PHOTO_FILE = 16 * 1024 * 1024  # a rendition is far smaller; more is not one of ours


def export_archive(
    session: Session, *, campaign_id: int, store: PhotoStore, out: IO[bytes]
) -> None:
    """The campaign with its photos, as a ZIP: the document (the photos' rows in it) as
    campaign.json, and beside it each rendition as photos/<id in the document>/<width>.jpg.
    JPEGs are stored as they are (compressing them again gains nothing)."""
    _one_snapshot(session)
    maps = _id_maps(session, campaign_id, photos=True)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open(ARCHIVE_DOCUMENT, "w", force_zip64=True) as document:
            for chunk in export_chunks(session, campaign_id=campaign_id, maps=maps):
                document.write(chunk)
        rows = session.connection().execute(
            sa_select(_t(BattlePhoto).c.id, _t(BattlePhoto).c.widths)
            .where(_t(BattlePhoto).c.id.in_(list(maps[PHOTOS])))
            .order_by(_t(BattlePhoto).c.id)
        )
        for photo_id, widths in rows:
            for width in widths if isinstance(widths, list) else json.loads(widths):
                data = store.read(photo_id, width)
                if data is not None:  # a file lost on disk: the row still says what it was
                    name = f"photos/{maps[PHOTOS][photo_id]}/{width}.jpg"
                    archive.writestr(name, data, compress_type=zipfile.ZIP_STORED)


def import_archive(session: Session, source: IO[bytes], *, store: PhotoStore) -> Campaign:
    """Create the campaign of an archive `export_archive` wrote, its photos put in
    ``store`` under their new ids."""
    try:
        archive = zipfile.ZipFile(source)
    except zipfile.BadZipFile:
        raise _not_archive("it is not a ZIP file") from None
    with archive:
        names = {info.filename: info for info in archive.infolist()}
        if ARCHIVE_DOCUMENT not in names:
            raise _not_archive(f"it holds no {ARCHIVE_DOCUMENT}")

        def photo_file(old_id: int, new_id: int, width: int) -> None:
            info = names.get(f"photos/{old_id}/{width}.jpg")
            if info is None or info.file_size > MAX_PHOTO_FILE:
                raise _not_archive(f"photo {old_id} has no {width} px file of a sane size")
            data = archive.read(info)
            if not data.startswith(b"\xff\xd8"):
                raise _not_archive(f"photo {old_id}'s {width} px file is not a JPEG")
            store.save(new_id, width, data)

        with archive.open(ARCHIVE_DOCUMENT) as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8")
            return import_members(session, read_members(text), photo_file)


def _not_archive(why: str) -> DomainError:
    return DomainError(
        "import_not_archive", f"The file is not a campaign archive: {why}.", status=422
    )


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _queries(campaign_id: int, *, photos: bool = False) -> dict[str, Select[Any]]:
    """Each table's rows of the campaign, in id order (the document's numbering)."""
    forces = sa_select(_t(Force).c.id).where(_t(Force).c.campaign_id == campaign_id)
    battles = sa_select(_t(Battle).c.id).where(_t(Battle).c.campaign_id == campaign_id)
    owner = {"forces": forces, "battles": battles}
    queries: dict[str, Select[Any]] = {}
    for name, (model, _refs) in TABLES.items():
        table = _t(model)
        if name in ("forces", "battles", "events", "territories", "rule_packs"):
            where = table.c.campaign_id == campaign_id
        elif name in ("battle_sides", "battle_reports", PHOTOS):
            where = table.c.battle_id.in_(owner["battles"])
        else:
            where = table.c.force_id.in_(owner["forces"])
        queries[name] = sa_select(table).where(where).order_by(table.c.id)
    if not photos:
        del queries[PHOTOS]
    return queries


def _id_maps(session: Session, campaign_id: int, *, photos: bool = False) -> IdMaps:
    """Each table's ids numbered 1, 2, ... in id order: one narrow query per table."""
    maps: IdMaps = {"campaign": {campaign_id: 1}, PHOTOS: {}}
    connection = session.connection()
    for name, query in _queries(campaign_id, photos=photos).items():
        ids = connection.execute(query.with_only_columns(_t(TABLES[name][0]).c.id)).scalars()
        maps[name] = {row_id: n for n, row_id in enumerate(ids, start=1)}
    return maps


def _t(model: Any) -> Table:
    return cast(Table, model.__table__)


def _plain_row(mapping: Any) -> dict[str, Any]:
    data = {k: v for k, v in mapping.items() if k not in EXCLUDED}
    return {k: v.isoformat() if isinstance(v, datetime | date) else v for k, v in data.items()}


def export_filename(session: Session, *, campaign_id: int) -> str:
    """campaign name and today's date, e.g. the-vigilus-crusade-2026-11-23.json"""
    name = get_campaign(session, campaign_id).name.lower()
    slug = "-".join("".join(c if c.isalnum() else " " for c in name).split())[:60]
    return f"{slug or 'campaign'}-{utcnow():%Y-%m-%d}.json"


# version only keys caches; accounts (owners, actors, who proposed a result) belong to an
# install, not a campaign: a copy in another install would name someone else, or no one
# (a foreign key refused), so a document names none
EXCLUDED = frozenset({"id", "version", "owner_id", "actor_id"})
NULLED = frozenset({"proposed_by"})  # kept in the document's shape (the API's contract)
ACCOUNT_KEYS = frozenset({"user_id"})  # in an event's payload (a member's): the name stays
DROPPED = EXCLUDED - {"id"}  # the id is the document's own, mapped on import


def _without_accounts(name: str, data: dict[str, Any]) -> dict[str, Any]:
    """A row without the install's account ids: on export, and on import for a document
    written before they were left out."""
    data = {k: (None if k in NULLED else v) for k, v in data.items() if k not in DROPPED}
    payload = data.get("payload")
    if name == "events" and isinstance(payload, dict) and ACCOUNT_KEYS & payload.keys():
        data["payload"] = {k: v for k, v in payload.items() if k not in ACCOUNT_KEYS}
    return data


def _plain(row: SQLModel) -> dict[str, Any]:
    data = row.model_dump(exclude=set(EXCLUDED))
    return {k: v.isoformat() if isinstance(v, datetime | date) else v for k, v in data.items()}


def _translate(table: str, data: dict[str, Any], maps: IdMaps) -> dict[str, Any]:
    """Rewrite every id in a row (columns and JSON) through ``maps``."""
    out = dict(data)
    for field, target in TABLES[table][1].items():
        if out.get(field) is not None:
            out[field] = maps[target][out[field]]
    for field in JSON_FIELDS.get(table, ()):
        out[field] = _map_json(out[field], maps, field)
    return out


def _map_json(value: Any, maps: IdMaps, key: str = "") -> Any:
    if isinstance(value, dict):
        if key in ID_KEYED_DICTS:
            table = maps[ID_KEYED_DICTS[key]]
            return {str(table[int(k)]): _map_json(v, maps) for k, v in value.items()}
        if key in ID_VALUED_DICTS:
            return {k: _map_json(v, maps, ID_VALUED_DICTS[key]) for k, v in value.items()}
        if key == NAMED_DICE:
            return {_die_key(k, maps): v for k, v in value.items()}
        return {k: _map_json(v, maps, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_json(v, maps, key) for v in value]
    if key == "gained" and isinstance(value, str):
        return _gained(value, maps)
    if key == "photo_id" and value is not None:  # photos may be left out (see TABLES)
        return maps[PHOTOS].get(int(value))
    if key in ID_KEYS and isinstance(value, int) and not isinstance(value, bool):
        return maps[ID_KEYS[key]][value]
    if key in ID_KEYS and isinstance(value, str) and value.isdigit():
        return str(maps[ID_KEYS[key]][int(value)])
    return value


def _die_key(text: str, maps: IdMaps) -> str:
    found = DIE_KEY.match(text)
    return f"{found[1]}:{maps['cards'][int(found[2])]}" if found else text


def _gained(text: str, maps: IdMaps) -> str:
    found = GAINED.match(text)
    return f"{maps['cards'][int(found[1])]}{found[2]}" if found else text


def import_campaign(session: Session, document: dict[str, Any]) -> Campaign:
    """Create the campaign in this database: ids are assigned anew, references kept."""
    members = [(k, document[k]) for k in ("format", "campaign", *TABLES) if k in document]
    return import_members(session, iter(members))


def import_file(session: Session, source: IO[str]) -> Campaign:
    """Import a document read from ``source`` as it is parsed: with the tables in the
    order the export writes them, one row at a time is held, whatever the file's size."""
    return import_members(session, read_members(source))


PhotoFiles = Callable[[int, int, int], None]  # (photo id in the document, new id, width)


def import_members(
    session: Session, members: Iterator[tuple[str, Any]], photo_files: PhotoFiles | None = None
) -> Campaign:
    """Rows are created table by table in the order of ``TABLES``, each table's ids and the
    ids inside its JSON mapped through the tables before it (which is where they point).
    A table met before one it refers to (a document with sorted keys) is held until then;
    a table the document leaves out (one older than the table) is empty. Photos come in
    only with ``photo_files``, which stores each rendition from the archive."""
    held: dict[str, list[Any]] = {}
    head: dict[str, Any] = {}
    maps: IdMaps = {}
    campaign: Campaign | None = None
    pending = list(TABLES)
    if photo_files is None:
        pending.remove(PHOTOS)
        maps[PHOTOS] = {}
    for name, value in members:
        if name in ("format", "campaign"):
            head[name] = value
        elif name == PHOTOS and photo_files is None:
            continue  # rows without their files would be broken pictures
        elif name in TABLES:
            held[name] = value if campaign is not None and name == pending[0] else list(value)
        if campaign is None and {"format", "campaign"} <= head.keys():
            campaign = _create_campaign(session, head, maps)
        while campaign is not None and pending and pending[0] in held:
            table = pending.pop(0)
            _import_rows(session, table, held.pop(table), maps, photo_files)
    if campaign is None:
        campaign = _create_campaign(session, head, maps)
    for table in pending:  # the rest in order; a table the document left out is empty
        _import_rows(session, table, held.pop(table, []), maps, photo_files)
    session.flush()
    # Records, chart points and battle lists come from the imported battles, as a rebuild
    # makes them; the lines the flushes above started are replaced, so forget them.
    kept_totals.rebuild(session.connection(), campaign.id)
    session.expire_all()
    return campaign


def _create_campaign(session: Session, head: dict[str, Any], maps: IdMaps) -> Campaign:
    if head.get("format") != FORMAT:
        raise DomainError(
            "import_format_unknown", f"Expected a '{FORMAT}' document.", status=422, field="format"
        )
    campaign = Campaign(**_typed(Campaign, _without_id(head.get("campaign") or {})))
    session.add(campaign)
    session.flush()
    maps["campaign"] = {1: campaign.id or 0}
    return campaign


def _import_rows(
    session: Session,
    name: str,
    rows: Iterable[Any],
    maps: IdMaps,
    photo_files: PhotoFiles | None = None,
) -> None:
    model, refs = TABLES[name]
    maps[name] = {}
    later: dict[int, list[int]] = {}  # territories: neighbours named before they exist
    for data in rows:
        fields = _without_accounts(name, _without_id(data))
        if name == "territories":
            later[data["id"]] = list(fields.pop("neighbours", None) or [])
        for field, target in refs.items():
            if fields.get(field) is not None:
                fields[field] = _local(maps, target, fields[field], name, data, field)
        for field in JSON_FIELDS.get(name, ()):
            if field in fields:
                try:
                    fields[field] = _map_json(fields[field], maps, field)
                except (KeyError, ValueError):
                    raise _unknown_reference(name, data, field) from None
        row = model(**_typed(model, fields))
        session.add(row)
        session.flush()
        maps[name][data["id"]] = row.id  # type: ignore[attr-defined]
        if name == PHOTOS and photo_files is not None:
            for width in fields.get("widths") or []:
                photo_files(data["id"], row.id, int(width))  # type: ignore[attr-defined]
        session.expunge(row)  # nothing reads it again: keep the session (and memory) small
    for old_id, neighbours in later.items():
        territory = session.get(Territory, maps[name][old_id])
        assert territory is not None
        territory.neighbours = [maps[name][n] for n in neighbours if n in maps[name]]
        session.add(territory)
        session.flush()
        session.expunge(territory)


def _local(maps: IdMaps, target: str, value: Any, name: str, data: Any, field: str) -> Any:
    try:
        return maps[target][value]
    except (KeyError, TypeError):
        raise _unknown_reference(name, data, field) from None


def _unknown_reference(name: str, data: Any, field: str) -> DomainError:
    """An id the document does not hold: a hand-edited file, or one exported before every
    id inside the JSON columns was written local to the document (a side's roster, say)."""
    return DomainError(
        "import_reference_unknown",
        f"The document's {name} row {data.get('id')} names, in {field}, a row the document "
        "does not hold (a document exported by an older version may hold its database's own "
        "ids there: export the campaign again).",
        status=422,
        field=f"{name}.{field}",
    )


def read_members(source: IO[str]) -> Iterator[tuple[str, Any]]:
    """The members of a JSON object read a piece at a time: each (name, value), where the
    value of an array member is an iterator over its elements, each parsed as it is
    reached (consume it before asking for the next member)."""
    reader = _JsonReader(source)
    reader.expect("{")
    if reader.peek() == "}":
        return
    while True:
        name = reader.value()
        reader.expect(":")
        if reader.peek() == "[":
            reader.expect("[")
            elements = reader.elements()
            yield name, elements
            for _rest in elements:  # the caller stopped early: skip what it left
                pass
        else:
            yield name, reader.value()
        if reader.peek() == ",":
            reader.expect(",")
            continue
        reader.expect("}")
        return


class _JsonReader:
    """Just enough of an incremental JSON reader for a document of arrays of rows: a
    buffer refilled from the source, and the standard decoder for each value."""

    def __init__(self, source: IO[str]) -> None:
        self._source = source
        self._buffer = ""
        self._at = 0
        self._decoder = json.JSONDecoder()

    def _fill(self) -> bool:
        more = self._source.read(READ_SIZE)
        self._buffer = self._buffer[self._at :] + more
        self._at = 0
        return bool(more)

    def peek(self) -> str:
        while True:
            while self._at < len(self._buffer) and self._buffer[self._at] in " \t\r\n":
                self._at += 1
            if self._at < len(self._buffer) or not self._fill():
                return self._buffer[self._at : self._at + 1]

    def expect(self, token: str) -> None:
        if self.peek() != token:
            raise _not_json(f"expected '{token}'")
        self._at += 1

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = self._decoder.raw_decode(self._buffer, self._at)
            except json.JSONDecodeError:
                if self._fill():
                    continue
                raise _not_json("a value is cut short") from None
            if end == len(self._buffer) and self._fill():
                continue  # a number may go on in the next piece
            self._at = end
            return value

    def elements(self) -> Iterator[Any]:
        if self.peek() == "]":
            self._at += 1
            return
        while True:
            yield self.value()
            if self.peek() == ",":
                self._at += 1
                continue
            self.expect("]")
            return


READ_SIZE = 256 * 1024


def _not_json(why: str) -> DomainError:
    return DomainError(
        "import_not_json", f"The file is not a campaign document: {why}.", status=422
    )


def _without_id(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "id"}


def _typed(model: type[SQLModel], data: dict[str, Any]) -> dict[str, Any]:
    out = dict(data)
    for name, field in model.model_fields.items():
        if name in out and isinstance(out[name], str) and "datetime" in str(field.annotation):
            out[name] = datetime.fromisoformat(out[name])
        elif name in out and isinstance(out[name], str) and "date" in str(field.annotation):
            out[name] = date.fromisoformat(out[name])
    return out
