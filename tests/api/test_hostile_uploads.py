"""Hostile uploads (issue 33): files of a few hundred bytes that claim, or need, a great deal
of work or memory are refused from their headers (a scan bomb, a dimension liar); what is
read is read with no database transaction open, in one of the process's few decoding slots;
text fields cannot smuggle NUL past the check; a deleted photo's id is never given again.
The same server under load (and /health meanwhile) is in test_hostile_uploads_live.py; the
memory figures in bench/upload_bench.py."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy import Engine

from app.config import get_settings
from app.services.campaigns import decoding, photos
from tests.api.helpers import assert_problem, dump
from tests.api.test_battle_flow import muster, setup_two_forces
from tests.api.test_battle_photos import phone_photo, photo_files, upload
from tests.hostile_images import dimension_liar, multipart, png_liar, scan_bomb


@pytest.fixture
def battle(client: TestClient) -> dict[str, Any]:
    return muster(client, setup_two_forces(client))


def refused_and_nothing_kept(
    client: TestClient, engine: Engine, battle: dict[str, Any], data: bytes, code: str
) -> str:
    before, files = dump(engine), photo_files()
    body = assert_problem(upload(client, battle, data), 422, code)
    assert dump(engine) == before and photo_files() == files
    return str(body["detail"])


class TestRefusedFromTheHeaders:
    def test_a_scan_bomb(self, client: TestClient, engine: Engine, battle: dict[str, Any]) -> None:
        """A valid 50 MP progressive JPEG and 2,000 empty scans (each a pass over 780,000
        blocks): refused before a pixel is decoded."""
        bomb = scan_bomb(2000)
        assert len(bomb) < 400_000
        detail = refused_and_nothing_kept(client, engine, battle, bomb, "photo_too_complex")
        assert "more than 64 scans" in detail

    def test_a_scan_bomb_under_the_scan_count(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        """58 extra scans are under the count, not under the passes over the blocks."""
        detail = refused_and_nothing_kept(
            client, engine, battle, scan_bomb(58), "photo_too_complex"
        )
        assert "passes over its 8 × 8 blocks" in detail

    @pytest.mark.parametrize("progressive", [True, False])
    def test_a_jpeg_claiming_7000_by_7000_in_a_few_hundred_bytes(
        self, client: TestClient, engine: Engine, battle: dict[str, Any], progressive: bool
    ) -> None:
        liar = dimension_liar(progressive=progressive)
        assert len(liar) < 700
        detail = refused_and_nothing_kept(client, engine, battle, liar, "photo_unreadable")
        assert "cut short" in detail and "7000 × 7000" in detail

    def test_a_png_claiming_50_million_pixels_in_86_bytes(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        detail = refused_and_nothing_kept(client, engine, battle, png_liar(), "photo_unreadable")
        assert "cut short" in detail and "7071 × 7071" in detail

    def test_a_liar_takes_no_decoding_turn(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        """Refused from its headers even while every turn is taken: it never waits for one."""
        with every_turn_taken():
            refused_and_nothing_kept(client, engine, battle, dimension_liar(), "photo_unreadable")

    def test_a_webp_over_its_format_limit(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        """WebP's decoder holds its own copies of the canvas: 16 MP at most."""
        out = io.BytesIO()
        Image.new("RGB", (4100, 4100), (1, 2, 3)).save(out, "WEBP", quality=1)
        detail = refused_and_nothing_kept(
            client, engine, battle, out.getvalue(), "photo_too_many_pixels"
        )
        assert "a WebP image may have at most 16 million pixels" in detail


@contextmanager
def every_turn_taken(who: str = "someone else") -> Iterator[None]:
    """Every decoding turn of this process held, as by another user's uploads being read."""
    turns = decoding.turns()
    with ExitStack() as held:
        for _ in range(turns.size):
            held.enter_context(turns.turn(who))
        yield


@pytest.fixture
def short_queue(monkeypatch: pytest.MonkeyPatch) -> decoding.Turns:
    """One decoding turn, waited for a fifth of a second at most."""
    turns = decoding.Turns(1, 0.2)
    monkeypatch.setattr(decoding, "_turns", turns)
    return turns


@pytest.fixture
def setting(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Set one setting (by its environment variable) for the rest of the test."""

    def change(name: str, value: str) -> None:
        monkeypatch.setenv(name, value)
        get_settings.cache_clear()

    yield change
    monkeypatch.undo()
    get_settings.cache_clear()


class TestDecodingSlots:
    def test_one_upload_too_many_is_answered_503_with_retry_after(
        self,
        client: TestClient,
        engine: Engine,
        battle: dict[str, Any],
        short_queue: decoding.Turns,
    ) -> None:
        """Every turn taken for longer than an upload may wait: 503, nothing kept."""
        before = dump(engine)
        with every_turn_taken():
            busy = upload(client, battle, phone_photo())
            page = client.post(
                f"/battles/{battle['id']}/photos",
                files={"file": ("IMG_0001.jpg", phone_photo(), "image/jpeg")},
            )
        assert_problem(busy, 503, "photo_busy")
        assert busy.headers["retry-after"] == str(decoding.BUSY_SECONDS)
        assert page.status_code == 503 and page.headers["retry-after"] == "2"
        assert "reading as many photos as it reads at once" in page.text
        assert dump(engine) == before
        assert upload(client, battle, phone_photo()).status_code == 201  # free again

    def test_an_image_is_read_with_no_database_connection_held(
        self, client: TestClient, engine: Engine, battle: dict[str, Any], monkeypatch: Any
    ) -> None:
        """No transaction, so no lock (SQLite's write lock above all), while pixels are read:
        the request's connection went back to the pool before, and the photo's row is
        written after, in a short transaction of its own."""
        held: list[int] = []
        render = photos.render

        def watched(data: bytes, kind: str | None = None) -> photos.Renditions:
            held.append(engine.pool.checkedout())  # type: ignore[attr-defined]
            return render(data, kind)

        monkeypatch.setattr(photos, "render", watched)
        assert upload(client, battle, phone_photo()).status_code == 201
        page = client.post(
            f"/battles/{battle['id']}/photos",
            files=[("file", (f"{n}.jpg", phone_photo(), "image/jpeg")) for n in range(2)],
            follow_redirects=False,
        )
        assert page.status_code == 303, page.text
        assert held == [0, 0, 0]
        assert len(client.get(f"/api/v1/battles/{battle['id']}").json()["photos"]) == 3

    def test_reading_stops_at_its_time_limit(
        self, client: TestClient, engine: Engine, battle: dict[str, Any], setting: Any
    ) -> None:
        """The worker is killed at the deadline, whatever it is doing."""
        setting("PHOTO_DECODE_SECONDS", "0.001")
        detail = refused_and_nothing_kept(
            client, engine, battle, phone_photo(), "photo_too_complex"
        )
        assert "took more than" in detail

    def test_the_page_form_shows_a_refusal_in_place(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        before = dump(engine)
        page = client.post(
            f"/battles/{battle['id']}/photos",
            files=[
                ("file", ("ok.jpg", phone_photo(), "image/jpeg")),
                ("file", ("bomb.jpg", scan_bomb(100), "image/jpeg")),
            ],
        )
        assert page.status_code == 422
        assert "at most 64 are taken" in page.text
        assert dump(engine) == before  # all kept or none


# --- NUL in multipart text fields ---------------------------------------------------------


def posted(client: TestClient, battle: dict[str, Any], content_type: str, body: bytes) -> Any:
    return client.post(
        f"/api/v1/battles/{battle['id']}/photos",
        content=body,
        headers={"Content-Type": content_type},
    )


FILE_PART = ('Content-Disposition: form-data; name="file"; filename="a.jpg"', b"")


class TestNulInMultipartText:
    @pytest.mark.parametrize(
        "caption_headers",
        [
            'Content-Disposition: form-data; name="caption"; x="filename="',
            "Content-Disposition: form-data; name=\"caption\"; filename*=utf-8''a.txt",
            'Content-Type: text/plain; filename="a.txt"\r\n'
            'Content-Disposition: form-data; name="caption"',
            'Content-Disposition: form-data; name="caption"; filename="a.txt"\r\n'
            'Content-Disposition: form-data; name="caption"',
        ],
    )
    def test_a_text_part_that_mentions_a_filename_is_still_text(
        self, client: TestClient, engine: Engine, battle: dict[str, Any], caption_headers: str
    ) -> None:
        before = dump(engine)
        photo = (FILE_PART[0], phone_photo())
        body = multipart("xYzZy", [(caption_headers, b"before\x00after"), photo])
        answer = posted(client, battle, "multipart/form-data; boundary=xYzZy", body)
        assert assert_problem(answer, 422, "text_invalid")["field"] == "caption"
        assert dump(engine) == before

    @pytest.mark.parametrize(
        "content_type",
        [
            "multipart/form-data; BOUNDARY=xYzZy",
            'Multipart/Form-Data; Boundary="xYzZy"',
            " multipart/form-data ;boundary=xYzZy",
        ],
    )
    def test_the_boundary_is_read_as_starlette_reads_it(
        self, client: TestClient, engine: Engine, battle: dict[str, Any], content_type: str
    ) -> None:
        before = dump(engine)
        caption = 'Content-Disposition: form-data; name="caption"'
        body = multipart("xYzZy", [(caption, b"before\x00after"), (FILE_PART[0], phone_photo())])
        answer = posted(client, battle, content_type, body)
        assert assert_problem(answer, 422, "text_invalid")["field"] == "caption"
        assert dump(engine) == before

    def test_a_boundary_look_alike_inside_a_value_hides_nothing(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        """'--xYzZyX' is not a delimiter (Starlette reads on), so what follows it is still
        the caption's text, fake file headers and all."""
        before = dump(engine)
        fake = (
            b"before\r\n--xYzZyX\r\n"
            b'Content-Disposition: form-data; name="f"; filename="b.txt"\r\n\r\nin\x00side'
        )
        caption = 'Content-Disposition: form-data; name="caption"'
        body = multipart("xYzZy", [(caption, fake), (FILE_PART[0], phone_photo())])
        answer = posted(client, battle, "multipart/form-data; boundary=xYzZy", body)
        assert assert_problem(answer, 422, "text_invalid")["field"] == "caption"
        assert dump(engine) == before

    def test_a_photo_full_of_nul_bytes_is_still_taken(
        self, client: TestClient, battle: dict[str, Any]
    ) -> None:
        photo = phone_photo()
        assert b"\x00" in photo
        caption = 'Content-Disposition: form-data; name="caption"'
        body = multipart(
            "xYzZy", [(caption, b"Turn 3"), (FILE_PART[0] + "\r\nContent-Type: image/jpeg", photo)]
        )
        answer = posted(client, battle, "multipart/form-data; BOUNDARY=xYzZy", body)
        assert answer.status_code == 201, answer.text
        assert answer.json()["caption"] == "Turn 3"

    def test_the_page_form_too(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        before = dump(engine)
        caption = 'Content-Disposition: form-data; name="caption"; x="filename="'
        body = multipart("xYzZy", [(caption, b"before\x00after"), (FILE_PART[0], phone_photo())])
        page = client.post(
            f"/battles/{battle['id']}/photos",
            content=body,
            headers={"Content-Type": "multipart/form-data; boundary=xYzZy"},
        )
        assert page.status_code == 422 and "NUL" in page.text
        assert dump(engine) == before


# --- ids -----------------------------------------------------------------------------------


def test_a_deleted_photos_id_is_never_given_again(
    client: TestClient, battle: dict[str, Any]
) -> None:
    """Renditions are cached by browsers for a year: a new photo at a deleted one's address
    would show the old picture (SQLite reused the largest rowid before issue 33)."""
    first = upload(client, battle, phone_photo()).json()
    second = upload(client, battle, phone_photo()).json()
    for photo in (second, first):
        gone = client.delete(f"/api/v1/battles/{battle['id']}/photos/{photo['id']}")
        assert gone.status_code == 200, gone.text
    third = upload(client, battle, phone_photo()).json()
    assert third["id"] > second["id"] > first["id"]
    assert_problem(client.get(second["url"]), 404, "photo_not_found")
