"""Photos of a battle (issue 23): taken with a phone at the table, kept as a few JPEG
renditions with no metadata at all (a phone's camera writes its GPS position into EXIF, and
that must never be published).

An upload is checked by its content, not its name, and against limits that keep a hostile
file from costing memory (bytes, pixels, count per battle). The pixels are decoded once, the
EXIF orientation applied to them, and each rendition re-encoded from bare pixels, so no
EXIF, XMP, IPTC or ICC data of the upload survives. Files live behind `PhotoStore`: a
folder under DATA_DIR by default."""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from PIL import Image, ImageOps, UnidentifiedImageError
from pillow_heif import register_heif_opener
from sqlmodel import Session, col, select

from app.config import get_settings
from app.db import afterwards
from app.db.models import BattlePhoto
from app.errors import DomainError, NotFound
from app.faults import OUTAGES, PHOTO_STORE, storage_fault
from app.services import battles, history

register_heif_opener()  # Pillow opens HEIC/HEIF files from here on

WIDTHS = (320, 960, 1920)  # a phone's list, a phone's full screen, a desktop
MAX_BYTES = 15 * 1024 * 1024
MAX_PIXELS = 50_000_000  # a 50 MP camera; a bigger image is a bomb, not a photo
MAX_PER_BATTLE = 24
# MPO: what some phones' JPEGs are; HEIF: an iPhone's photos (HEIC), read by pillow-heif
FORMATS = ("JPEG", "PNG", "WEBP", "GIF", "MPO", "HEIF")
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


def _refused(code: str, message: str, status: int = 422) -> DomainError:
    return DomainError(code, message, status=status, field="file")


def render(data: bytes) -> Renditions:
    """The upload's renditions, or a clear refusal. Nothing is stored here."""
    if len(data) > MAX_BYTES:
        raise _refused(
            "photo_too_large", f"A photo may be {MAX_BYTES // 2**20} MB at most.", status=413
        )
    try:
        with Image.open(io.BytesIO(data)) as probe:  # reads the header only
            kind, (width, height) = probe.format, probe.size
        if kind not in FORMATS:
            raise _refused("photo_type", "A photo must be a JPEG, HEIC, PNG, WebP or GIF image.")
        if width * height > MAX_PIXELS:
            raise _refused(
                "photo_too_many_pixels",
                f"The image is {width} × {height} pixels; at most {MAX_PIXELS // 10**6} "
                "million pixels are taken.",
            )
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            upright = ImageOps.exif_transpose(image)  # the camera's rotation, into the pixels
            pixels = _bare_rgb(upright)
    except DomainError:
        raise
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError, ValueError):
        raise _refused("photo_unreadable", "The file is not an image that can be read.") from None
    return Renditions(pixels.width, pixels.height, tuple(_sizes(pixels)))


def _bare_rgb(image: Image.Image) -> Image.Image:
    """The pixels and nothing else: a new image holds no info, EXIF, XMP or ICC profile."""
    if image.mode in ("RGBA", "LA", "P"):
        image = image.convert("RGBA")
        white = Image.new("RGB", image.size, (255, 255, 255))
        white.paste(image, mask=image.getchannel("A"))
        image = white
    else:
        image = image.convert("RGB")
    return Image.frombytes("RGB", image.size, image.tobytes())


def _sizes(pixels: Image.Image) -> list[tuple[int, bytes]]:
    wanted = [w for w in WIDTHS if w < pixels.width] + [min(pixels.width, WIDTHS[-1])]
    files = []
    for width in sorted(set(wanted)):
        copy = pixels.copy()
        copy.thumbnail((width, width * 20), Image.Resampling.LANCZOS)
        out = io.BytesIO()
        copy.save(out, "JPEG", quality=QUALITY, optimize=True, progressive=True)
        files.append((copy.width, out.getvalue()))
    return files


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


def add_photo(
    session: Session,
    store: PhotoStore,
    *,
    battle_id: int,
    data: bytes,
    caption: str = "",
    by: str = "",
) -> BattlePhoto:
    battle, _sides = battles.get_battle(session, battle_id)
    if battle.status in ("reverted", "called_off"):
        raise DomainError(
            "battle_not_reportable",
            f"Battle {battle_id} was {battle.status.replace('_', ' ')}; it takes no photos.",
            status=409,
        )
    if len(photos_of(session, battle_id)) >= MAX_PER_BATTLE:
        raise DomainError(
            "photo_limit",
            f"A battle keeps {MAX_PER_BATTLE} photos at most; delete one first.",
            status=409,
        )
    made = render(data)
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
