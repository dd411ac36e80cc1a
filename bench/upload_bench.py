"""Hostile uploads against one `crusade serve` process (issue 33). Prints figures; asserts
nothing.

    .venv/bin/python bench/upload_bench.py [--database-url URL]

For each upload (the hostile files of tests/hostile_images.py, and ordinary phone photos to
compare): the answer, how long it took, the server's peak memory increase while it was read
(VmHWM reset through /proc/<pid>/clear_refs before each, minus VmRSS before), and the slowest
/health answer meanwhile (a probe every 50 ms). Then six uploads at once, and the server's
resident memory at the start and at the end (memory handed back or not). Goal: under 300 MB
for any single upload, /health under 1 s throughout."""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for its hostile files
from league_bench import server

from app.db import migrate
from tests.api.test_battle_flow import muster, setup_two_forces
from tests.hostile_images import dimension_liar, png_bomb, png_liar, scan_bomb


def status(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def reset_peak(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def phone_jpeg(size: tuple[int, int], progressive: bool = False) -> bytes:
    """A photo-like JPEG (noise over a gradient: megabytes, as a camera's are)."""
    image = Image.linear_gradient("L").resize(size).convert("RGB")
    noise = Image.effect_noise(size, 12).convert("RGB")
    out = io.BytesIO()
    Image.blend(image, noise, 0.5).save(out, "JPEG", quality=85, progressive=progressive)
    return out.getvalue()


def encoded(size: tuple[int, int], kind: str, **options: Any) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (40, 90, 40)).save(out, kind, **options)
    return out.getvalue()


def uploads() -> list[tuple[str, bytes]]:
    return [
        ("scan bomb: 50 MP + 2000 scans", scan_bomb(2000)),
        ("scan bomb: 50 MP + 58 scans", scan_bomb(58)),
        ("dimension liar: JPEG 7000² progressive", dimension_liar()),
        ("dimension liar: JPEG 7000² baseline", dimension_liar(progressive=False)),
        ("dimension liar: PNG 7071²", png_liar()),
        ("PNG bomb: 7071² RGBA, one colour", png_bomb()),
        ("PNG bomb: 7071² RGB, one colour", png_bomb(mode="RGB")),
        ("WebP 3999² (its limit: 16 MP)", encoded((3999, 3999), "WEBP", quality=50)),
        ("HEIC 4032×3024 (an iPhone's 12 MP)", encoded((4032, 3024), "HEIF", quality=50)),
        ("phone JPEG 4032×3024", phone_jpeg((4032, 3024))),
        ("phone JPEG 8160×6120 (50 MP)", phone_jpeg((8160, 6120))),
        ("phone JPEG 8160×6120 progressive", phone_jpeg((8160, 6120), progressive=True)),
    ]


def while_polling(base: str, work: Callable[[], Any]) -> tuple[Any, float, float]:
    """work()'s answer, its seconds, and the slowest /health meanwhile (ms)."""
    slowest = 0.0
    done = threading.Event()

    def poll() -> None:
        nonlocal slowest
        with httpx.Client(base_url=base, timeout=60) as probe:
            while not done.is_set():
                started = time.perf_counter()
                probe.get("/health")
                slowest = max(slowest, (time.perf_counter() - started) * 1000)
                time.sleep(0.05)

    with ThreadPoolExecutor(1) as pool:
        poller = pool.submit(poll)
        started = time.perf_counter()
        try:
            answer = work()
        finally:
            seconds = time.perf_counter() - started
            done.set()
        poller.result()
    return answer, seconds, slowest


def outcome(response: httpx.Response) -> str:
    if response.status_code == 201:
        body = response.json()
        return f"201 {body['width']}×{body['height']}"
    return f"{response.status_code} {response.json().get('code')}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="upload-bench-"))
    url = args.database_url or f"sqlite:///{folder / 'bench.db'}"
    migrate.upgrade(url)
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key")
    os.environ["PHOTO_DIR"] = str(folder / "photos")
    files = uploads()
    with server(url) as (base, pid), httpx.Client(base_url=base, timeout=300) as http:
        signed = http.post(
            "/api/v1/auth/signup", json={"username": "bench", "password": "bench password"}
        )
        assert signed.status_code == 201, signed.text
        http.headers["X-CSRF-Token"] = http.get("/api/v1/auth/csrf").json()["csrf_token"]
        battles = [muster(http, setup_two_forces(http)) for _ in range(2)]  # type: ignore[arg-type]
        photos_url = f"/api/v1/battles/{battles[0]['id']}/photos"
        start = status(pid, "VmRSS")
        print(f"server pid {pid}, resident at start: {start:.0f} MB")
        if not reset_peak(pid):
            print("(cannot reset VmHWM: peaks below are since the server started)")
        print(
            f"{'upload':42} {'bytes':>9}  {'answer':28} {'seconds':>7} {'peak +MB':>8} "
            f"{'worst /health ms':>16}"
        )
        for name, data in files:
            reset_peak(pid)
            before = status(pid, "VmRSS")
            answer, seconds, slowest = while_polling(
                base, lambda d=data: http.post(photos_url, files={"file": ("f", d, "image/x")})
            )
            peak = status(pid, "VmHWM") - before
            print(
                f"{name:42} {len(data):9,}  {outcome(answer):28} {seconds:7.2f} {peak:8.0f} "
                f"{slowest:16.0f}"
            )
        many = f"/api/v1/battles/{battles[1]['id']}/photos"
        for name, data in (("six liars at once", dimension_liar()), ("six PNG bombs", png_bomb())):
            reset_peak(pid)
            before = status(pid, "VmRSS")

            def six(d: bytes = data) -> list[httpx.Response]:
                with ThreadPoolExecutor(6) as pool:
                    calls = [
                        pool.submit(http.post, many, files={"file": ("f", d)}) for _ in range(6)
                    ]
                    return [c.result() for c in calls]

            answers, seconds, slowest = while_polling(base, six)
            peak = status(pid, "VmHWM") - before
            counts: dict[str, int] = {}
            for one in answers:
                key = outcome(one).split(" ")[0] + (
                    "" if one.status_code == 201 else " " + one.json().get("code")
                )
                counts[key] = counts.get(key, 0) + 1
            shown = ", ".join(f"{n}× {k}" for k, n in sorted(counts.items()))
            print(
                f"{name:42} {6 * len(data):9,}  {shown:28} {seconds:7.2f} {peak:8.0f} "
                f"{slowest:16.0f}"
            )
        print(f"resident at the end: {status(pid, 'VmRSS'):.0f} MB (at start: {start:.0f} MB)")


if __name__ == "__main__":
    main()
