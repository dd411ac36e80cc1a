"""Hostile uploads against a real server (issue 33): while photos are decoded, or a rule
pack's YAML is read, the server keeps answering (/health within 1 s); six uploads at once
are either read (one per user at a time) or answered 503 photo_busy with Retry-After. The
memory figures are measured in bench/upload_bench.py."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Engine

from app.services.campaigns import decoding
from tests.api.live import at_once
from tests.browser.live import crusade_process
from tests.hostile_images import dimension_liar, png_bomb


def while_polling_health(base_url: str, work: Callable[[], Any]) -> tuple[Any, list[float]]:
    """``work()``'s answer, and how long each /health asked meanwhile took (every 50 ms)."""
    waits: list[float] = []
    done = threading.Event()

    def poll() -> None:
        with httpx.Client(base_url=base_url, timeout=30) as probe:
            while not done.is_set():
                started = time.monotonic()
                assert probe.get("/health").status_code == 200
                waits.append(time.monotonic() - started)
                time.sleep(0.05)

    with ThreadPoolExecutor(1) as pool:
        poller = pool.submit(poll)
        time.sleep(0.1)
        try:
            answer = work()
        finally:
            done.set()
        poller.result()
    return answer, waits


def test_health_answers_while_the_page_form_reads_two_50_mp_pngs(
    live: tuple[httpx.Client, dict[str, Any]],
) -> None:
    """The website's photo form once ran Pillow on the event loop: ten small 50 MP PNGs
    left the server answering nothing for 16.6 s."""
    http, battle = live
    bomb = png_bomb()  # 7071 × 7071 RGBA of one colour: ~200 KB, 200 MB decoded
    added, waits = while_polling_health(
        str(http.base_url),
        lambda: http.post(
            f"/battles/{battle['id']}/photos",
            files=[("file", (f"{n}.png", bomb, "image/png")) for n in range(2)],
            follow_redirects=False,
        ),
    )
    assert added.status_code == 303, added.text
    assert len(waits) >= 5 and max(waits) < 1.0, waits
    photos = http.get(f"/api/v1/battles/{battle['id']}").json()["photos"]
    assert [(p["width"], p["height"], len(p["renditions"])) for p in photos] == [
        (1920, 1920, 3)
    ] * 2


@contextmanager
def served_elsewhere(engine: Engine) -> Iterator[str]:
    """`crusade serve` in a process of its own on the test's database (a thread in this
    process would share its interpreter lock with the test's own threads), forked from the
    warm starter (tests/browser/starter.py); its output is printed when it stops."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = engine.url.render_as_string(hide_password=False)
    environment = {**os.environ, "DATABASE_URL": url, "LOG_LEVEL": "warning"}
    command = ["serve", "--host", "127.0.0.1", "--port", str(port)]
    log = Path(tempfile.mkdtemp(prefix="crusade-served-")) / "server.log"
    server = crusade_process(command, env=environment, cwd=Path.cwd(), log=log)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=20)
        print(log.read_text(errors="replace"))
        shutil.rmtree(log.parent, ignore_errors=True)


def test_health_answers_while_the_rules_page_reads_a_big_pack(
    live: tuple[httpx.Client, dict[str, Any]], engine: Engine
) -> None:
    """The Rules page's pack form read YAML on the event loop (a 190 KB pack: 2.85 s)."""
    http, battle = live
    campaign = http.get(f"/api/v1/battles/{battle['id']}").json()["campaign_id"]
    pack = "id: big\nname: Big\nversion: '1'\nnotes:\n" + "  - [a, b, c, d, e]\n" * 9000
    assert 150_000 < len(pack) < 192 * 1024
    with served_elsewhere(engine) as base, httpx.Client(base_url=base, timeout=120) as other:
        other.cookies.update(http.cookies)
        other.headers["X-CSRF-Token"] = http.headers["X-CSRF-Token"]
        answer, waits = while_polling_health(
            base,
            lambda: other.post(
                f"/campaigns/{campaign}/rules/packs",
                files={"file": ("big.yaml", pack.encode(), "application/yaml")},
            ),
        )
    assert answer.status_code == 422  # not a pack the rules know: refused on its page
    assert len(waits) >= 1 and max(waits) < 1.0, waits


def test_six_uploads_at_once(live: tuple[httpx.Client, dict[str, Any]]) -> None:
    """Six liars at once: each refused from its headers. Six real 16 MP images at once from
    one user: one read (a user has one upload at the decoder at a time); the others
    answered 503 photo_busy with Retry-After, nothing kept for them."""
    http, battle = live
    url = f"/api/v1/battles/{battle['id']}/photos"

    def sender(data: bytes) -> Callable[[], httpx.Response]:
        return lambda: http.post(url, files={"file": ("x", data, "image/jpeg")})

    # Made before the first round: made between the rounds, on a loaded machine, they took
    # about the server's keep-alive time, and a reused connection closed by it just as a
    # request went out came back with no answer (the test's own race, not the server's).
    bomb = png_bomb(4000)
    liars = at_once([sender(dimension_liar()) for _ in range(6)])
    assert {(r.status_code, r.json()["code"]) for r in liars} == {(422, "photo_unreadable")}
    answers = at_once([sender(bomb) for _ in range(6)])
    kept = [r for r in answers if r.status_code == 201]
    busy = [r for r in answers if r.status_code == 503]
    assert len(kept) + len(busy) == 6 and kept and busy, [r.text for r in answers]
    for refused in busy:
        assert refused.json()["code"] == "photo_busy"
        assert refused.headers["retry-after"] == str(decoding.BUSY_SECONDS)
    photos = http.get(f"/api/v1/battles/{battle['id']}").json()["photos"]
    assert sorted(p["id"] for p in photos) == sorted(r.json()["id"] for r in kept)
