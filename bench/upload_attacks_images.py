"""Issue 45's image attacks against one `crusade serve` process, full size. Prints figures;
asserts nothing.

    .venv/bin/python bench/upload_attacks_images.py [--database-url URL] [--port 8220]

Two members, each with a campaign and a battle of their own: the attacker sends the
attack; the other member meanwhile reads her campaign's page every 100 ms, and /health is
asked every 50 ms. For each attack: its answers, how long it took, the server's memory
(proportional set size of the server and every process under it: the decoding workers and
the process they are forked from) at its peak and after, the slowest /health and the
slowest read by the other member (and how many were answered 503). Goals (issue 45): no
/health or read over 1 s or 503; peak under 400 MB and under 250 MB after; the honest
12 MP photo beside the attacks stored within 10 s; the attacker's requests the ones refused.

``ATTACKS`` (``Attack(name, run, prepare)``, the shape of bench/upload_bench.py's, ``run``
taking that bench's ``Bench`` or this one's ``Stage``) is imported by bench/upload_bench.py."""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for its hostile files

from app.db import migrate
from bench.serving import serving
from tests.api.test_battle_flow import muster, setup_two_forces
from tests.hostile_images import fill_bytes, gif_comments, hidden_scans, png_chunks, scan_bomb

CRUSADE = str(Path(sys.executable).with_name("crusade"))
PASSWORD = "bench password"


# --- the files ---------------------------------------------------------------------------


@cache
def phone_jpeg(size: tuple[int, int] = (4032, 3024)) -> bytes:
    """A photo-like JPEG (noise over a gradient: megabytes, as a camera's are); 12 MP."""
    image = Image.linear_gradient("L").resize(size).convert("RGB")
    noise = Image.effect_noise(size, 12).convert("RGB")
    out = io.BytesIO()
    Image.blend(image, noise, 0.5).save(out, "JPEG", quality=85)
    return out.getvalue()


@cache
def six_thousand_scans() -> bytes:
    """The issue's: 8160 × 6120 grey, 6,501 scans, 6,500 of them behind ``FF 00 FD EA``."""
    return hidden_scans(6500, (8160, 6120))


@cache
def slowest_accepted() -> bytes:
    """The slowest JPEG the header checks let through: 50 MP grey, progressive, with scans
    added up to the bound on passes over its blocks (24 million)."""
    return scan_bomb(24, (8160, 6120))


@cache
def ff_fill() -> bytes:
    return fill_bytes(15_727_884)


@cache
def gif_pieces() -> bytes:
    return gif_comments(7_800_000)


@cache
def png_pieces() -> bytes:
    return png_chunks(1_300_000)


# --- the stage ---------------------------------------------------------------------------


@dataclass
class Stage:
    """What an attack gets (the attributes bench/upload_bench.py's ``Bench`` has too): the
    server, the attacker (``player``, a signed-in player of battle ``battle_id``) and
    another member (``neighbour``, a player of battle ``neighbour_battle_id`` of her own
    campaign)."""

    base: str
    player: httpx.Client
    battle_id: int
    neighbour: httpx.Client
    neighbour_battle_id: int
    neighbour_page: str = ""

    @property
    def photos(self) -> str:
        return f"/api/v1/battles/{self.battle_id}/photos"


@dataclass(frozen=True)
class Attack:
    """One named attack (the shape of bench/upload_bench.py's): ``run(stage)`` makes its
    requests and returns one outcome per request; ``prepare()`` makes its files first,
    outside the measuring."""

    name: str
    run: Callable[[Any], list[str]]
    prepare: Callable[[], object] | None = None


def member(base: str, name: str) -> tuple[httpx.Client, dict[str, Any]]:
    http = httpx.Client(base_url=base, timeout=300)
    signed = http.post("/api/v1/auth/signup", json={"username": name, "password": PASSWORD})
    assert signed.status_code == 201, signed.text
    http.headers["X-CSRF-Token"] = http.get("/api/v1/auth/csrf").json()["csrf_token"]
    battle = muster(http, setup_two_forces(http))  # type: ignore[arg-type]
    return http, battle


def stage(base: str) -> Stage:
    attacker, theirs = member(base, "attacker")
    honest, hers = member(base, "member")
    return Stage(
        base, attacker, theirs["id"], honest, hers["id"], f"/campaigns/{hers['campaign_id']}"
    )


def send(http: httpx.Client, url: str, data: bytes) -> httpx.Response:
    answer = http.post(url, files={"file": ("photo", data, "application/octet-stream")})
    if answer.status_code == 201:  # an attacker deletes what was kept, to send it again
        http.delete(f"{url}/{answer.json()['id']}")
    return answer


def said(answer: httpx.Response) -> str:
    if answer.status_code in (201, 303):
        return str(answer.status_code)
    try:
        return f"{answer.status_code} {answer.json().get('code')}"
    except ValueError:
        return str(answer.status_code)


def counted(outcomes: list[str]) -> str:
    tally: dict[str, int] = {}
    for one in outcomes:
        tally[one] = tally.get(one, 0) + 1
    return ", ".join(f"{n}× {k}" if n > 1 else k for k, n in sorted(tally.items()))


# --- the attacks -------------------------------------------------------------------------


def once(data: Callable[[], bytes]) -> Callable[[Any], list[str]]:
    return lambda s: [said(send(s.player, s.photos, data()))]


def eight_at_once(data: Callable[[], bytes]) -> Callable[[Any], list[str]]:
    def attack(s: Any) -> list[str]:
        body = data()
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda _: send(s.player, s.photos, body), range(8)))
        return [said(a) for a in answers]

    return attack


def honest_upload(s: Any, seconds: float = 120) -> str:
    """The other member's 12 MP photo, sent again after each 503 as its Retry-After says:
    its last answer, the seconds until it and the tries."""
    url = f"/api/v1/battles/{s.neighbour_battle_id}/photos"
    started, tries = time.perf_counter(), 0
    while True:
        tries += 1
        answer = s.neighbour.post(url, files={"file": ("IMG.jpg", phone_jpeg())})
        waited = time.perf_counter() - started
        if answer.status_code != 503 or waited > seconds:
            return f"honest {said(answer)} after {waited:.1f} s ({tries} tries)"
        time.sleep(float(answer.headers.get("retry-after", "2")))


def resending_beside_honest(s: Any) -> list[str]:
    """The attacker re-sends the slowest accepted JPEG back to back while the member's
    12 MP photo is sent, honouring Retry-After."""
    stop = threading.Event()
    outcomes: list[str] = []

    def resend() -> None:
        while not stop.is_set():
            outcomes.append(said(send(s.player, s.photos, slowest_accepted())))

    with ThreadPoolExecutor(1) as pool:
        loop = pool.submit(resend)
        time.sleep(1.0)  # the attacker holds the decoder first
        honest = honest_upload(s)
        stop.set()
        loop.result()
    return [honest, *outcomes]


def ten_beside_honest(s: Any) -> list[str]:
    """Ten attacks at once (each kind, and the slowest accepted JPEG six times) and the
    member's 12 MP photo sent among them."""
    files = [six_thousand_scans, ff_fill, gif_pieces, png_pieces] + [slowest_accepted] * 6
    bodies = [f() for f in files]
    with ThreadPoolExecutor(11) as pool:
        attacks = [pool.submit(send, s.player, s.photos, b) for b in bodies]
        time.sleep(0.2)
        honest = pool.submit(honest_upload, s)
        outcomes = [honest.result(), *(said(a.result()) for a in attacks)]
    return outcomes


def _all_files() -> None:
    for make in (six_thousand_scans, ff_fill, gif_pieces, png_pieces, slowest_accepted):
        make()
    phone_jpeg()


ATTACKS: list[Attack] = [
    Attack("JPEG: 6,501 scans behind FF 00 (196 KB)", once(six_thousand_scans), six_thousand_scans),
    Attack("JPEG: FF D8 + 15.7 M fill bytes", once(ff_fill), ff_fill),
    Attack("GIF: 7.8 M one-byte comment sub-blocks", once(gif_pieces), gif_pieces),
    Attack("GIF: the same, eight at once", eight_at_once(gif_pieces), gif_pieces),
    Attack("PNG: 1.3 M empty private chunks", once(png_pieces), png_pieces),
    Attack(
        "JPEG: the slowest accepted (50 MP, 24 M passes)", once(slowest_accepted), slowest_accepted
    ),
    Attack("re-sending the slowest beside an honest 12 MP", resending_beside_honest, _all_files),
    Attack("ten attacks beside an honest 12 MP", ten_beside_honest, _all_files),
]


# --- measuring ---------------------------------------------------------------------------


def tree(pid: int) -> list[int]:
    """``pid`` and every process under it."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        todo.extend(int(c) for c in children)
    return found


def memory_mb(pid: int) -> float:
    """Proportional set size of the process tree (shared pages counted once in all)."""
    total = 0
    for one_pid in tree(pid):
        try:
            for line in Path(f"/proc/{one_pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


@dataclass
class Watch:
    health_ms: float = 0.0
    read_ms: float = 0.0
    read_503: int = 0
    peak_mb: float = 0.0


@contextmanager
def watched(s: Stage, pid: int) -> Iterator[Watch]:
    """/health every 50 ms, the member's page every 100 ms, memory every 20 ms."""
    seen = Watch()
    done = threading.Event()

    def health() -> None:
        with httpx.Client(base_url=s.base, timeout=60) as probe:
            while not done.is_set():
                started = time.perf_counter()
                probe.get("/health")
                seen.health_ms = max(seen.health_ms, (time.perf_counter() - started) * 1000)
                time.sleep(0.05)

    def read() -> None:
        with httpx.Client(base_url=s.base, timeout=60, cookies=s.neighbour.cookies) as reader:
            while not done.is_set():
                started = time.perf_counter()
                page = reader.get(s.neighbour_page)
                seen.read_ms = max(seen.read_ms, (time.perf_counter() - started) * 1000)
                seen.read_503 += page.status_code == 503
                time.sleep(0.1)

    def memory() -> None:
        while not done.is_set():
            seen.peak_mb = max(seen.peak_mb, memory_mb(pid))
            time.sleep(0.02)

    with ThreadPoolExecutor(3) as pool:
        probes = [pool.submit(f) for f in (health, read, memory)]
        try:
            yield seen
        finally:
            done.set()
            for probe in probes:
                probe.result()


def measure(s: Stage, pid: int, attack: Attack) -> None:
    if attack.prepare is not None:
        attack.prepare()
    with watched(s, pid) as seen:
        started = time.perf_counter()
        outcomes = attack.run(s)
        seconds = time.perf_counter() - started
    time.sleep(1.0)
    after = memory_mb(pid)
    print(
        f"{attack.name:50} {seconds:7.1f} {seen.peak_mb:7.0f} {after:7.0f} "
        f"{seen.health_ms:8.0f} {seen.read_ms:8.0f} {seen.read_503:4}  {counted(outcomes)}",
        flush=True,
    )


@contextmanager
def server(database_url: str, port: int) -> Iterator[tuple[str, int]]:
    """`crusade serve` in its own process on 127.0.0.1:``port``."""
    command = [CRUSADE, "serve", "--host", "127.0.0.1", "--port", str(port)]
    env = {**os.environ, "DATABASE_URL": database_url, "LOG_LEVEL": "warning"}
    with serving(command, env, port) as running:
        yield running


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--database-url", default="")
    parser.add_argument("--port", type=int, default=8220)
    parser.add_argument("--only", default="", help="run the attacks whose name has this")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="upload-attacks-"))
    url = args.database_url or f"sqlite:///{folder / 'bench.db'}"
    migrate.upgrade(url)
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key")
    os.environ["PHOTO_DIR"] = str(folder / "photos")
    chosen = [a for a in ATTACKS if args.only.lower() in a.name.lower()]
    print("making the files…", flush=True)
    _all_files()
    with server(url, args.port) as (base, pid):
        s = stage(base)
        print(f"server pid {pid}; memory at start {memory_mb(pid):.0f} MB (PSS, its tree)")
        print(
            f"{'attack':50} {'seconds':>7} {'peak MB':>7} {'after':>7} {'/health':>8} "
            f"{'read ms':>8} {'503':>4}  answers"
        )
        for attack in chosen:
            measure(s, pid, attack)
        print(f"memory at the end: {memory_mb(pid):.0f} MB")


if __name__ == "__main__":
    main()
