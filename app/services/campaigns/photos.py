"""Photos of a battle (issue 23): taken with a phone at the table, kept as a few JPEG
renditions with no metadata at all (a phone's camera writes its GPS position into EXIF, and
that must never be published).

An upload is checked by its content, not its name, and against limits that keep a hostile
file from costing time or memory (``app.services.campaigns.images``: bytes, pixels, scans;
``decoding``: processor time, memory and turns per user; here: count per battle and per
post). The pixels are decoded once, with no database transaction open, in a worker process,
the EXIF orientation applied to them, and each rendition re-encoded from bare pixels, so no
EXIF, XMP, IPTC or ICC data of the upload survives. Files live behind `PhotoStore`: a folder
under DATA_DIR by default."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from sqlmodel import Session, col, select

from app.config import get_settings
from app.db import afterwards
from app.db.models import Battle, BattlePhoto
from app.db.session import end_transaction
from app.errors import DomainError, NotFound
from app.faults import OUTAGES, PHOTO_STORE, storage_fault
from app.services.battles import lifecycle
from app.services.campaigns import decoding, image_headers, images
from app.services.feed import history

WIDTHS = (320, 960, 1920)  # a phone's list, a phone's full screen, a desktop
MAX_BYTES = image_headers.MAX_BYTES
MAX_PER_BATTLE = 24
# Files in one post of the website's form: a few photos of a table at a time.
MAX_PER_POST = 6
QUALITY = 82


class PhotoStore(Protocol):
    def save(self, photo_id: int, width: int, data: bytes) -> None: ...
    def read(self, photo_id: int, width: int) -> bytes | None: ...
    def delete(self, photo_id: int) -> None: ...


@dataclass(frozen=True)
class FolderStore:
    """One folder per photo, one file per width: <root>/<photo id>/<width>.jpg."""

    root: Path

    def _file(self, photo_id: int, width: int) -> Path:
        return self.root / str(photo_id) / f"{width}.jpg"

    def save(self, photo_id: int, width: int, data: bytes) -> None:
        """Write one rendition whole, or raise a typed error (storage_full when the disk has
        no room, storage_unavailable when the folder cannot be written) and leave no part
        of it behind."""
        path = self._file(photo_id, width)
        partial = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # A partial file of this writer's own: two processes saving the same photo must
            # not rename each other's file away. Readers never see half a file.
            handle, partial = tempfile.mkstemp(dir=path.parent, suffix=".part")
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(partial, path)
        except OSError as error:
            if partial is not None:
                Path(partial).unlink(missing_ok=True)
            raise storage_fault(error, PHOTO_STORE) from error
        OUTAGES.up(PHOTO_STORE)

    def read(self, photo_id: int, width: int) -> bytes | None:
        path = self._file(photo_id, width)
        return path.read_bytes() if path.is_file() else None

    def delete(self, photo_id: int) -> None:
        shutil.rmtree(self.root / str(photo_id), ignore_errors=True)


@dataclass(frozen=True)
class Renditions:
    width: int
    height: int
    files: tuple[tuple[int, bytes], ...]  # (width, JPEG), smallest first


def configured_store() -> FolderStore:
    """The store the settings name: PHOTO_DIR, or DATA_DIR/photos."""
    settings = get_settings()
    return FolderStore(settings.photo_dir or settings.data_dir / "photos")


def render(data: bytes, kind: str | None = None) -> Renditions:
    """The upload's renditions, or a clear refusal, made in a bounded worker process
    (``decoding.run``); ``kind``: the format its check found (None: checked there first).
    Nothing is stored here; it reads no database and should run with no transaction open
    (see ``read_uploads``)."""
    made = decoding.run(images.make, data, kind, WIDTHS, QUALITY)
    return Renditions(made.width, made.height, made.files)


# --- a battle's photos ------------------------------------------------------------------


def photos_for(session: Session, battle_ids: Iterable[int]) -> dict[int, list[BattlePhoto]]:
    """The photos of several battles in one query (a page of the battle list)."""
    ids = list(battle_ids)
    found: dict[int, list[BattlePhoto]] = {i: [] for i in ids}
    if ids:
        rows = session.exec(
            select(BattlePhoto)
            .where(col(BattlePhoto.battle_id).in_(ids))
            .order_by(col(BattlePhoto.id))
        )
        for row in rows:
            found[row.battle_id].append(row)
    return found


def photos_of(session: Session, battle_id: int) -> list[BattlePhoto]:
    return list(
        session.exec(
            select(BattlePhoto)
            .where(BattlePhoto.battle_id == battle_id)
            .order_by(col(BattlePhoto.id))
        )
    )


def upload(
    session: Session,
    store: PhotoStore,
    *,
    battle_id: int,
    data: bytes,
    caption: str = "",
    by: str = "",
) -> BattlePhoto:
    """One photo added: read with no transaction open, then kept in a short one."""
    (made,) = read_uploads(session, battle_id=battle_id, datas=[data], by=by)
    return add_photo(session, store, battle_id=battle_id, made=made, caption=caption, by=by)


def read_uploads(
    session: Session, *, battle_id: int, datas: list[bytes], by: str
) -> list[Renditions]:
    """The renditions of each upload for the battle, or the first refusal.

    What the battle allows is checked first (no image is read for a battle that takes no
    more photos); then the request's transaction ends (``end_transaction``) and the rest
    runs with no transaction open, in bounded worker processes (``decoding``): every file's
    headers are checked first, in one worker and without a turn (a post with one bad file
    is refused before any is decoded; a liar waits for nothing), then each file is decoded
    in a turn of its own, the turns shared round the users who wait (``decoding.turns``).
    ``by`` (the uploader) has one upload at the decoder at a time. ``add_photo`` checks the
    battle again."""
    _check_takes(session, battle_id, more=len(datas))
    end_transaction(session)
    try:
        kinds = decoding.run(images.check_all, datas)
        turns = decoding.turns()
        with turns.upload(by):
            made = []
            for data, kind in zip(datas, kinds, strict=True):
                with turns.turn(by):
                    made.append(render(data, kind))
            return made
    finally:
        decoding.give_memory_back()


def _check_takes(session: Session, battle_id: int, *, more: int) -> Battle:
    battle, _sides = lifecycle.get_battle(session, battle_id)
    if battle.status in ("reverted", "called_off"):
        raise DomainError(
            "battle_not_reportable",
            f"Battle {battle_id} was {battle.status.replace('_', ' ')}; it takes no photos.",
            status=409,
        )
    if len(photos_of(session, battle_id)) + more > MAX_PER_BATTLE:
        raise DomainError(
            "photo_limit",
            f"A battle keeps {MAX_PER_BATTLE} photos at most; delete one first.",
            status=409,
        )
    return battle


def add_photo(
    session: Session,
    store: PhotoStore,
    *,
    battle_id: int,
    made: Renditions,
    caption: str = "",
    by: str = "",
) -> BattlePhoto:
    """Keep an upload's renditions (from ``read_uploads``): the row, its files, its event."""
    battle = _check_takes(session, battle_id, more=1)
    row = BattlePhoto(
        battle_id=battle_id,
        width=made.width if made.width <= WIDTHS[-1] else made.files[-1][0],
        height=_height(made),
        widths=[w for w, _jpeg in made.files],
        caption=caption.strip()[:200],
        uploaded_by=by,
    )
    session.add(row)
    session.flush()
    assert row.id is not None
    photo_id = row.id
    # The files go if the row does not stay (this write refused, or the transaction rolled
    # back later: the database's disk full at commit); the row goes if the files do not.
    afterwards.on_rollback(session, lambda: store.delete(photo_id))
    try:
        for width, jpeg in made.files:
            store.save(photo_id, width, jpeg)
    except Exception:
        store.delete(photo_id)
        raise
    history.record(
        session,
        campaign_id=battle.campaign_id,
        battle_id=battle_id,
        kind="photo_added",
        photo_id=row.id,
        caption=row.caption,
    )
    return row


def _height(made: Renditions) -> int:
    width = made.files[-1][0]
    return max(1, round(made.height * width / made.width))


def get_photo(session: Session, *, battle_id: int, photo_id: int) -> BattlePhoto:
    row = session.get(BattlePhoto, photo_id)
    if row is None or row.battle_id != battle_id:
        raise NotFound("photo_not_found", f"Battle {battle_id} has no photo {photo_id}.")
    return row


def delete_photo(
    session: Session, store: PhotoStore, *, battle_id: int, photo_id: int
) -> BattlePhoto:
    row = get_photo(session, battle_id=battle_id, photo_id=photo_id)
    session.delete(row)
    session.flush()
    # The files go with the row, once its deletion is committed: a deletion rolled back
    # (the database down at commit) keeps a photo whole.
    afterwards.on_commit(session, lambda: store.delete(photo_id))
    return row


def rendition(
    session: Session, store: PhotoStore, *, battle_id: int, photo_id: int, width: int
) -> bytes:
    row = get_photo(session, battle_id=battle_id, photo_id=photo_id)
    data = store.read(photo_id, width) if width in row.widths else None
    if data is None:
        raise NotFound(
            "photo_not_found",
            f"Photo {photo_id} comes in widths {', '.join(map(str, row.widths))}.",
        )
    return data
