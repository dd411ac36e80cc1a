"""The photo store full or unwritable during an upload, and the database failing after the
files are written, on both engines: the upload answers 507 storage_full or 503
storage_unavailable with Retry-After, and nothing is half-written (no row without its
files, no files without their row, no partial file); uploads work again once the store does
(issue 35)."""

from __future__ import annotations

import errno
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy import Engine, text

from app.faults import PHOTO_STORE, STORAGE_RETRY_AFTER
from app.services.campaigns import photos
from tests.api.helpers import assert_problem
from tests.api.test_battle_flow import muster, setup_two_forces
from tests.faults.helpers import outage_lines, recovery_lines
from tests.faults.outages import commit_failing, disk_full_error


def big_photo() -> bytes:
    """A JPEG wide enough for three renditions (320, 960 and its own 1200)."""
    out = io.BytesIO()
    Image.new("RGB", (1200, 600), (30, 90, 200)).save(out, "JPEG")
    return out.getvalue()


def upload(client: TestClient, battle_id: int) -> Any:
    return client.post(
        f"/api/v1/battles/{battle_id}/photos",
        files={"file": ("IMG_0002.jpg", big_photo(), "image/jpeg")},
    )


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []


def photo_rows(engine: Engine) -> list[int]:
    with engine.connect() as connection:
        return [i for (i,) in connection.execute(text("SELECT id FROM battle_photo ORDER BY id"))]


@pytest.fixture
def battle(client: TestClient, tmp_path: Path) -> Iterator[int]:
    """A mustered battle; the app keeps its photos under tmp_path/photos."""
    client.app.state.photos = photos.FolderStore(tmp_path / "photos")  # type: ignore[attr-defined]
    yield int(muster(client, setup_two_forces(client))["id"])


class TestPhotoStoreUnwritable:
    def test_an_upload_is_503_and_leaves_nothing_until_the_folder_is_writable(
        self,
        client: TestClient,
        engine: Engine,
        battle: int,
        tmp_path: Path,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        root = tmp_path / "photos"
        root.write_text("a file where the folder should be")  # what the process cannot write
        for _ in range(2):
            refused = upload(client, battle)
            assert_problem(refused, 503, "storage_unavailable")
            assert refused.headers["Retry-After"] == str(STORAGE_RETRY_AFTER)
        assert photo_rows(engine) == []
        root.unlink()  # the operator fixes it
        added = upload(client, battle)
        assert added.status_code == 201, added.text
        assert photo_rows(engine) == [added.json()["id"]]
        assert [p.name for p in files_under(root)] == ["1200.jpg", "320.jpg", "960.jpg"]
        assert len(outage_lines(caplog, PHOTO_STORE)) == 1
        assert len(recovery_lines(caplog, PHOTO_STORE)) == 1


class TestPhotoStoreFull:
    def test_a_disk_full_half_way_through_the_renditions_leaves_no_file_and_no_row(
        self,
        client: TestClient,
        engine: Engine,
        battle: int,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        root = tmp_path / "photos"
        disk = FullDisk(root, room=1)  # one rendition fits, the second does not
        monkeypatch.setattr(os, "fdopen", disk.fdopen)
        refused = upload(client, battle)
        assert_problem(refused, 507, "storage_full")
        assert refused.headers["Retry-After"] == str(STORAGE_RETRY_AFTER)
        assert disk.refused == 1  # the fault did happen, after a first file was written
        assert files_under(root) == []  # neither the first file nor the partial second
        assert photo_rows(engine) == []
        disk.room = 10  # space freed
        added = upload(client, battle)
        assert added.status_code == 201, added.text
        assert photo_rows(engine) == [added.json()["id"]]
        assert len(files_under(root)) == 3

    def test_the_database_full_at_commit_takes_the_written_files_back(
        self, client: TestClient, engine: Engine, battle: int, tmp_path: Path
    ) -> None:
        root = tmp_path / "photos"
        with commit_failing(engine, disk_full_error(engine)):
            refused = upload(client, battle)
        assert_problem(refused, 507, "storage_full")
        assert files_under(root) == []
        assert photo_rows(engine) == []
        added = upload(client, battle)
        assert added.status_code == 201, added.text
        assert len(files_under(root)) == 3

    def test_a_deletion_that_is_not_committed_keeps_the_files(
        self, client: TestClient, engine: Engine, battle: int, tmp_path: Path
    ) -> None:
        root = tmp_path / "photos"
        added = upload(client, battle).json()
        path = f"/api/v1/battles/{battle}/photos/{added['id']}"
        with commit_failing(engine, disk_full_error(engine)):
            assert_problem(client.delete(path), 507, "storage_full")
        assert photo_rows(engine) == [added["id"]]
        assert len(files_under(root)) == 3
        assert client.get(added["url"]).status_code == 200
        assert client.delete(path).status_code == 200
        assert files_under(root) == [] and photo_rows(engine) == []


class FullDisk:
    """Files opened under ``root`` fill a disk with room for ``room`` more files: the next
    one fails half-way through its write with ENOSPC, as a full disk does."""

    def __init__(self, root: Path, room: int) -> None:
        self.root = str(root)
        self.room = room
        self.refused = 0
        self._fdopen = os.fdopen

    def fdopen(self, fd: int, *args: Any, **kwargs: Any) -> Any:
        handle = self._fdopen(fd, *args, **kwargs)
        if not os.readlink(f"/proc/self/fd/{fd}").startswith(self.root):
            return handle
        if self.room > 0:
            self.room -= 1
            return handle
        self.refused += 1
        return _Full(handle)


class _Full:
    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def __enter__(self) -> _Full:
        return self

    def __exit__(self, *_: object) -> None:
        self.handle.close()

    def write(self, data: bytes) -> int:
        self.handle.write(data[: len(data) // 2])
        self.handle.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class TestPhotoFormOnTheWebsite:
    def test_a_form_refused_at_its_second_photo_leaves_no_file_of_the_first(
        self, client: TestClient, engine: Engine, battle: int, tmp_path: Path
    ) -> None:
        """The form's photos are kept all or none (a savepoint): the first photo's files go
        with its row when the second is refused."""
        refused = client.post(
            f"/battles/{battle}/photos",
            files=[
                ("file", ("good.jpg", big_photo(), "image/jpeg")),
                ("file", ("notes.jpg", b"not a picture", "image/jpeg")),
            ],
            follow_redirects=False,
        )
        assert refused.status_code == 422 and 'data-code="photo_unreadable"' in refused.text
        assert files_under(tmp_path / "photos") == [] and photo_rows(engine) == []

    def test_the_store_unwritable_is_said_on_the_page(
        self, client: TestClient, engine: Engine, battle: int, tmp_path: Path
    ) -> None:
        (tmp_path / "photos").write_text("a file where the folder should be")
        refused = client.post(
            f"/battles/{battle}/photos",
            files=[("file", ("good.jpg", big_photo(), "image/jpeg"))],
            follow_redirects=False,
        )
        assert refused.status_code == 503 and 'data-code="storage_unavailable"' in refused.text
        assert photo_rows(engine) == []
