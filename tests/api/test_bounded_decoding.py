"""Issue 45: no upload holds the site. Pieces the header walks once missed or read one at a
time are counted and refused before the image library reads the file; every check and
decode runs in a worker process the kernel ends past its processor time or memory; the
decoding turns go round the users; uploads hold only their share of the admission gate.
Small versions of the attacks; the full-size ones and their timings are in
bench/upload_attacks_images.py."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy import Engine

from app.config import get_settings
from app.edge.admission import UPLOAD, Gate
from app.errors import DomainError
from app.services.campaigns import decoding, images, photos
from tests.api.helpers import assert_problem, dump
from tests.api.test_battle_flow import muster, setup_two_forces
from tests.api.test_battle_photos import phone_photo, photo_files, upload
from tests.hostile_images import fill_bytes, gif_comments, hidden_scans, png_chunks


@pytest.fixture
def battle(client: TestClient) -> dict[str, Any]:
    return muster(client, setup_two_forces(client))


@pytest.fixture
def setting(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str, str], None]]:
    """Set one setting (by its environment variable) for the rest of the test."""

    def change(name: str, value: str) -> None:
        monkeypatch.setenv(name, value)
        get_settings.cache_clear()

    yield change
    monkeypatch.undo()
    get_settings.cache_clear()


def refused(
    client: TestClient,
    engine: Engine,
    battle: dict[str, Any],
    data: bytes,
    code: str,
    status: int = 422,
) -> str:
    """The upload's refusal (its sentence), nothing kept."""
    before, files = dump(engine), photo_files()
    body = assert_problem(upload(client, battle, data), status, code)
    assert dump(engine) == before and photo_files() == files
    return str(body["detail"])


def noise_png(size: tuple[int, int]) -> bytes:
    out = io.BytesIO()
    Image.effect_noise(size, 60).convert("RGB").save(out, "PNG", compress_level=1)
    return out.getvalue()


class TestPiecesCountedBeforeTheLibraryReads:
    def test_scans_hidden_behind_a_stuffed_zero(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        """``FF 00`` between segments is skipped by libjpeg, not a marker with a length: the
        100 scans after it are counted (the walk once saw one)."""
        bomb = hidden_scans(100)
        assert len(bomb) < 2000
        detail = refused(client, engine, battle, bomb, "photo_too_complex")
        assert "more than 64 scans" in detail

    def test_fill_bytes_between_segments(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        detail = refused(client, engine, battle, fill_bytes(100_000), "photo_too_complex")
        assert "65,536 bytes of padding" in detail

    def test_a_gif_comment_in_one_byte_pieces(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        detail = refused(client, engine, battle, gif_comments(5000), "photo_too_complex")
        assert "The GIF is cut into more pieces" in detail

    def test_a_png_of_empty_private_chunks(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        detail = refused(client, engine, battle, png_chunks(300), "photo_too_complex")
        assert "more than 256 that are not pixel data" in detail

    def test_a_file_far_larger_than_its_pixels_need(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        """16 × 16 pixels and one private chunk of 3 MB: one piece, but far too many bytes."""
        padded = png_chunks(1, size=3_000_000)
        detail = refused(client, engine, battle, padded, "photo_too_large", status=413)
        assert "16 × 16 pixels needs at most 2,099,200" in detail


class TestTheWorkerProcess:
    def test_a_decode_past_its_processor_time_is_ended(
        self,
        client: TestClient,
        engine: Engine,
        battle: dict[str, Any],
        setting: Callable[[str, str], None],
    ) -> None:
        """The kernel ends the worker in the middle of the decoder's C code; the next
        upload gets a fresh worker."""
        photo = noise_png((1600, 1200))
        setting("PHOTO_DECODE_CPU_SECONDS", "0.01")
        detail = refused(client, engine, battle, photo, "photo_too_complex")
        assert "more than 0.01 s of processor time" in detail
        setting("PHOTO_DECODE_CPU_SECONDS", "30")
        assert upload(client, battle, photo).status_code == 201

    def test_a_decode_past_its_memory_is_refused(
        self,
        client: TestClient,
        engine: Engine,
        battle: dict[str, Any],
        setting: Callable[[str, str], None],
    ) -> None:
        """3000 × 3000 RGB: 27 MB decoded, more with its copies; 32 MB are given."""
        setting("PHOTO_DECODE_MEMORY_MB", "32")
        detail = refused(client, engine, battle, noise_png((3000, 3000)), "photo_too_complex")
        assert "needs more than 32 MB" in detail

    def test_no_file_is_read_in_the_request_process(
        self, client: TestClient, battle: dict[str, Any], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The check runs in the worker, once: this process's own copy is never called."""

        def here(data: bytes) -> str:
            raise AssertionError("checked in the request's process")

        monkeypatch.setattr(images, "check", here)
        assert upload(client, battle, phone_photo()).status_code == 201

    def test_a_post_with_a_bad_file_is_refused_before_any_is_decoded(
        self,
        client: TestClient,
        engine: Engine,
        battle: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        jobs: list[str] = []
        run = decoding.run

        def counted(job: Callable[..., Any], *args: Any, **options: Any) -> Any:
            jobs.append(job.__name__)
            return run(job, *args, **options)

        monkeypatch.setattr(decoding, "run", counted)
        before = dump(engine)

        def post(second: bytes) -> Any:
            return client.post(
                f"/battles/{battle['id']}/photos",
                files=[
                    ("file", ("a.jpg", phone_photo(), "image/jpeg")),
                    ("file", ("b.jpg", second, "image/jpeg")),
                ],
                follow_redirects=False,
            )

        assert post(hidden_scans(100)).status_code == 422
        assert jobs == ["check_all"] and dump(engine) == before
        assert post(phone_photo()).status_code == 303
        assert jobs == ["check_all", "check_all", "make", "make"]

    def test_the_website_form_takes_six_files_at_most(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        before = dump(engine)
        page = client.post(
            f"/battles/{battle['id']}/photos",
            files=[("file", (f"{n}.jpg", phone_photo(), "image/jpeg")) for n in range(7)],
            follow_redirects=False,
        )
        assert page.status_code == 400 and "Maximum number of files is 6" in page.text
        assert dump(engine) == before
        assert "Add photos, up to 6 at a time" in client.get(f"/battles/{battle['id']}").text


# --- turns round the users ------------------------------------------------------------------


def waits_for(condition: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.01)


class TestTurns:
    def test_a_freed_turn_goes_to_the_user_served_least_recently(self) -> None:
        """Alice's next file asked first, but Bob has had no turn yet: his goes first (a
        post's files each take a turn; the turn is given up between them)."""
        turns = decoding.Turns(1, 10)
        order: list[str] = []

        def decode(who: str) -> None:
            with turns.turn(who):
                order.append(who)

        alices = turns.turn("alice")
        alices.__enter__()
        with ThreadPoolExecutor(2) as pool:
            nxt = pool.submit(decode, "alice")
            waits_for(lambda: turns.waiting == 1)
            bob = pool.submit(decode, "bob")
            waits_for(lambda: turns.waiting == 2)
            alices.__exit__(None, None, None)
            nxt.result(), bob.result()
        assert order == ["bob", "alice"]

    def test_one_upload_per_user_at_a_time(self) -> None:
        turns = decoding.Turns(1, 10)
        with turns.upload("alice"):
            with pytest.raises(DomainError) as again, turns.upload("alice"):
                pass
            with turns.upload("bob"):
                pass
        assert again.value.code == "photo_busy" and again.value.retry_after == 2
        with turns.upload("alice"):
            pass

    def test_a_turn_is_waited_for_a_bounded_time(self) -> None:
        turns = decoding.Turns(1, 0.05)
        with turns.turn("alice"), pytest.raises(DomainError) as busy, turns.turn("bob"):
            pass
        assert busy.value.code == "photo_busy" and turns.waiting == 0


def test_while_one_user_holds_the_decode_another_reads_and_gets_the_next_turn(
    live: tuple[httpx.Client, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An attacker's file is being decoded and the attacker's next one waits; the
    organizer's read is answered meanwhile, and her upload, asked after the attacker's
    next file, is decoded before it."""
    http, battle = live
    turns = decoding.Turns(1, 30)
    monkeypatch.setattr(decoding, "_turns", turns)
    decoded: list[str] = []
    render = photos.render

    def watched(data: bytes, kind: str | None = None) -> photos.Renditions:
        decoded.append("organizer")
        return render(data, kind)

    monkeypatch.setattr(photos, "render", watched)

    def attackers_next() -> None:
        with turns.turn("attacker"):
            decoded.append("attacker")

    attackers = turns.turn("attacker")
    attackers.__enter__()
    with ThreadPoolExecutor(2) as pool:
        nxt = pool.submit(attackers_next)
        waits_for(lambda: turns.waiting == 1)
        mine = pool.submit(
            http.post,
            f"/api/v1/battles/{battle['id']}/photos",
            files={"file": ("IMG_0001.jpg", phone_photo(), "image/jpeg")},
        )
        waits_for(lambda: turns.waiting == 2)
        read = http.get(f"/api/v1/battles/{battle['id']}")
        assert read.status_code == 200 and read.json()["photos"] == []
        attackers.__exit__(None, None, None)
        assert mine.result().status_code == 201, mine.result().text
        nxt.result()
    assert decoded == ["organizer", "attacker"]


# --- the admission gate's places -------------------------------------------------------------


class TestUploadPlaces:
    def test_uploads_hold_at_most_their_places_and_wait_after_the_rest(self) -> None:
        async def scenario() -> None:
            gate = Gate(capacity=4, queue_limit=100, wait_seconds=5, upload_places=2)
            for _ in range(2):
                await gate.enter(2, upload=True)
            third = asyncio.create_task(gate.enter(2, upload=True))
            await asyncio.sleep(0.02)
            assert not third.done() and gate.holders == 2
            await asyncio.wait_for(gate.enter(1), 1)  # a read gets in meanwhile
            await asyncio.wait_for(gate.enter(0), 1)  # and a change
            later_read = asyncio.create_task(gate.enter(1))
            await asyncio.sleep(0.02)
            gate.leave()  # a read's place: the read waiting goes first, not the upload
            await asyncio.wait_for(later_read, 1)
            assert not third.done() and gate.uploads == 2
            gate.leave(upload=True)  # an upload's place: the upload waiting takes it
            await asyncio.wait_for(third, 1)
            assert (gate.holders, gate.uploads, gate.waiting) == (4, 2, 0)

        # in a thread of its own: an earlier test on the worker may leave a loop running here
        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, scenario()).result()

    def test_all_but_one_place_at_most(self) -> None:
        assert Gate(8, 10, 1, upload_places=20).upload_places == 7
        assert Gate(1, 10, 1, upload_places=3).upload_places == 1

    @pytest.mark.parametrize(
        ("path", "upload"),
        [
            ("/api/v1/battles/3/photos", True),
            ("/battles/3/photos", True),
            ("/battles/3/photos/9/delete", False),
            ("/api/v1/battles/3/photos/9/960", False),
            ("/api/v1/battles/3", False),
        ],
    )
    def test_what_counts_as_an_upload(self, path: str, upload: bool) -> None:
        assert (UPLOAD.match(path) is not None) is upload
