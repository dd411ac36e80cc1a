"""Hostile request bodies and uploads against one `crusade serve` process (issues 33 and 45).
Prints figures; asserts nothing.

    .venv/bin/python bench/upload_bench.py [--port 8210] [--database-url URL]
                                           [--only TEXT]... [--list]

To measure another version of the app with these attacks, put its checkout first on the
server's path: PYTHONPATH=/path/to/checkout .venv/bin/python bench/upload_bench.py ...

Each attack runs alone, with two probes beside it: GET /health every 50 ms, and another member
(of another campaign) reading her campaign's page every 100 ms. Printed for each: what the
attacker's requests got (status and code, counted), the seconds until the last was answered,
the server's peak resident memory during it (VmHWM, reset through /proc/<pid>/clear_refs
first) and its resident memory a second after, the worst /health and the worst read beside
it (ms), and how many of those probes were answered other than 200.

Goals (issue 45): no attack makes /health or the other member's read wait over 1 s or answer
503; peak under 400 MB and back under 250 MB after; the attacker's requests are the ones
refused. The attack bodies are the issue's, at their full size (48 MB and so on); the tests
(tests/api/test_hostile_bodies.py) hold small versions of them.

Attacks are a list of named entries, ``ATTACKS``: each an ``Attack(name, run, prepare)``
whose ``run(bench)`` makes its requests against the server (blocking until every one of them
is answered or given up) and returns one short outcome per request ("413 request_too_large",
"201", "reset"); ``prepare()`` (optional) makes its files first, outside the measuring; the
harness does the measuring around ``run``. ``bench`` is a ``Bench``: the
server's address, ``player`` (an httpx client signed in as a player of the mustered battle
``battle_id``, CSRF header set), ``anonymous()``, and ``raw(...)`` (one request written on a
socket, sent at the pace asked, stopped as soon as the server answers). Another module adds
attacks by defining ``ATTACKS`` the same way: bench/upload_attacks_images.py, if present, is
imported and its entries run after these (it may import ``Attack``, ``Bench`` and the
helpers from this module)."""

from __future__ import annotations

import argparse
import importlib
import io
import json
import os
import select
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench.* and tests.*

from app.db import migrate
from bench.serving import serving
from tests.api.test_battle_flow import muster, setup_two_forces
from tests.hostile_images import dimension_liar, png_bomb, png_liar, scan_bomb

CRUSADE = str(Path(sys.executable).with_name("crusade"))
MB = 1_000_000


# --- the server and what an attack may use ---------------------------------------------------


@dataclass
class Bench:
    """What an attack gets: the server's address, a signed-in player of a mustered battle."""

    base: str
    pid: int
    battle_id: int
    player: httpx.Client
    cookie: str = ""  # the player's session cookie, "crusade_session=..."
    csrf: str = ""
    neighbour: httpx.Client | None = None  # another member, player of a battle of her own
    neighbour_battle_id: int = 0

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.base.removeprefix("http://").split(":")
        return host, int(port)

    @property
    def photos(self) -> str:
        return f"/api/v1/battles/{self.battle_id}/photos"

    def anonymous(self) -> httpx.Client:
        return httpx.Client(base_url=self.base, timeout=300)

    def raw(
        self,
        path: str,
        body: bytes,
        content_type: str,
        *,
        signed_in: bool = False,
        chunked: bool = False,
        length: int | None = None,
        fast: int | None = None,
        trickle: float = 1.0,
        give_up: float = 120.0,
    ) -> str:
        """POST ``body`` on a socket of its own: the first ``fast`` bytes (all by default) at
        full speed, then one byte every ``trickle`` seconds; stopped as soon as the server
        answers. ``length`` is the Content-Length declared (the body's by default);
        ``chunked`` declares none. Returns "status code", "reset" or "no answer"."""
        head = [f"POST {path} HTTP/1.1", f"Host: {self.base[7:]}", f"Content-Type: {content_type}"]
        if signed_in:
            head += [f"Cookie: {self.cookie}", f"X-CSRF-Token: {self.csrf}"]
        if chunked:
            head.append("Transfer-Encoding: chunked")
            body = b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"
        else:
            head.append(f"Content-Length: {len(body) if length is None else length}")
        request = ("\r\n".join(head) + "\r\n\r\n").encode() + body
        return send_at_pace(self.address, request, fast, trickle, give_up)


def send_at_pace(
    address: tuple[str, int], request: bytes, fast: int | None, trickle: float, give_up: float
) -> str:
    view = memoryview(request)
    head = request.index(b"\r\n\r\n") + 4
    fast_end = len(request) if fast is None else min(len(request), head + fast)
    sent, answer, writing = 0, b"", True
    next_byte = 0.0
    deadline = time.monotonic() + give_up
    with socket.create_connection(address, timeout=30) as sock:
        sock.setblocking(False)
        while time.monotonic() < deadline:
            now = time.monotonic()
            want = writing and sent < len(request) and (sent < fast_end or now >= next_byte)
            readable, writable, _ = select.select([sock], [sock] if want else [], [], 0.05)
            if readable:
                try:
                    chunk = sock.recv(65536)
                except OSError:
                    return outcome(answer) if answer else "reset"
                if not chunk:
                    break
                answer += chunk
                if complete(answer):
                    break
                continue
            if writable:
                try:
                    if sent < fast_end:
                        sent += sock.send(view[sent : min(fast_end, sent + 256 * 1024)])
                    else:
                        sent += sock.send(view[sent : sent + 1])
                        next_byte = now + trickle
                except OSError:  # the server closed its side: read what it said
                    writing = False
    return outcome(answer) if answer else "no answer"


def complete(answer: bytes) -> bool:
    head, found, body = answer.partition(b"\r\n\r\n")
    if not found:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return False


def outcome(answer: bytes) -> str:
    """ "status code" of a raw answer."""
    head, _, body = answer.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    status = parts[1].decode() if len(parts) > 1 else "?"
    try:
        return f"{status} {json.loads(body)['code']}"
    except (ValueError, KeyError, TypeError):
        return status


def answered(response: httpx.Response) -> str:
    if response.status_code < 300:
        return str(response.status_code)
    try:
        return f"{response.status_code} {response.json().get('code')}"
    except ValueError:
        return str(response.status_code)


@dataclass(frozen=True)
class Attack:
    """One named attack: ``run(bench)`` returns one outcome per request it made;
    ``prepare()``, if given, is called first, outside the measuring (to make its files)."""

    name: str
    run: Callable[[Bench], list[str]]
    prepare: Callable[[], object] | None = None


# --- issue 45, items 1 and 5: bodies ----------------------------------------------------------


@cache
def json_bomb() -> bytes:
    """48 MB: a JSON array of 0.5s ending in an escaped NUL."""
    return b"[" + b"0.5," * 12_582_891 + b'"\\u0000"]'


@cache
def form_bomb() -> bytes:
    """48 MB: empty form pairs, then one holding %00."""
    return b"a=&" * 16_777_194 + b"z=%00"


DEEP_LOGIN = b"[" * 100_000 + b'"\\u0000"' + b"]" * 100_000


def multipart_upload(size: int, caption: bytes = b"Turn 3") -> tuple[bytes, str]:
    """A multipart photo form of about ``size`` bytes: a caption and a 'photo' of noise."""
    noise = os.urandom(1024) * (size // 1024)
    body = (
        b'--xYzZy\r\nContent-Disposition: form-data; name="caption"\r\n\r\n' + caption + b"\r\n"
        b'--xYzZy\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\n'
        b"Content-Type: image/jpeg\r\n\r\n" + noise + b"\r\n--xYzZy--\r\n"
    )
    return body, "multipart/form-data; boundary=xYzZy"


def at_once(count: int, call: Callable[[], str]) -> list[str]:
    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(lambda _: call(), range(count)))


def trickled_uploads(bench: Bench, signed_in: bool) -> list[str]:
    """20 connections that each send 47 MB of a declared 48 MB, then a byte a second."""
    body, kind = multipart_upload(48 * MB)
    return at_once(
        20,
        lambda: bench.raw(bench.photos, body, kind, signed_in=signed_in, fast=47 * MB, give_up=90),
    )


@cache
def phone_jpeg(size: tuple[int, int], progressive: bool = False) -> bytes:
    """A photo-like JPEG (noise over a gradient: megabytes, as a camera's are)."""
    image = Image.linear_gradient("L").resize(size).convert("RGB")
    noise = Image.effect_noise(size, 12).convert("RGB")
    out = io.BytesIO()
    Image.blend(image, noise, 0.5).save(out, "JPEG", quality=85, progressive=progressive)
    return out.getvalue()


def twelve_mp() -> bytes:
    return phone_jpeg((4032, 3024))


def honest_beside_bombs(bench: Bench) -> list[str]:
    """A player's 12 MP phone photo, sent while ten anonymous 48 MB bodies come in."""
    photo = phone_jpeg((4032, 3024))
    with ThreadPoolExecutor(11) as pool:
        bombs = [
            pool.submit(bench.raw, bench.photos, json_bomb(), "application/json") for _ in range(10)
        ]
        time.sleep(0.2)
        started = time.perf_counter()
        honest = bench.player.post(bench.photos, files={"file": ("p.jpg", photo, "image/jpeg")})
        seconds = time.perf_counter() - started
        return [f"honest {answered(honest)} in {seconds:.1f} s"] + [b.result() for b in bombs]


def honest_beside_trickles(bench: Bench) -> list[str]:
    """Another member's 12 MP phone photo (to her own battle), sent while the player's 20
    connections each send 47 MB and then a byte a second."""
    photo = phone_jpeg((4032, 3024))
    assert bench.neighbour is not None
    with ThreadPoolExecutor(1) as pool:
        attack = pool.submit(trickled_uploads, bench, True)
        time.sleep(3)  # the trickles have taken their share by now
        started = time.perf_counter()
        honest = bench.neighbour.post(
            f"/api/v1/battles/{bench.neighbour_battle_id}/photos",
            files={"file": ("p.jpg", photo, "image/jpeg")},
        )
        seconds = time.perf_counter() - started
        return [f"honest {answered(honest)} in {seconds:.1f} s", *attack.result()]


BODY_ATTACKS = [
    Attack(
        '45.1 anon: 48 MB JSON [0.5,…"\\u0000"] to photos',
        lambda b: [b.raw(b.photos, json_bomb(), "application/json")],
        json_bomb,
    ),
    Attack(
        "45.1 anon: 48 MB form a=&…z=%00 to photos",
        lambda b: [b.raw(b.photos, form_bomb(), "application/x-www-form-urlencoded")],
        form_bomb,
    ),
    Attack(
        "45.1 anon: 48 MB JSON, chunked (no length)",
        lambda b: [b.raw(b.photos, json_bomb(), "application/json", chunked=True)],
    ),
    Attack(
        "45.1 anon: four 48 MB JSON bodies at once",
        lambda b: at_once(4, lambda: b.raw(b.photos, json_bomb(), "application/json")),
    ),
    Attack(
        "45.1 anon: four 48 MB forms at once",
        lambda b: at_once(
            4, lambda: b.raw(b.photos, form_bomb(), "application/x-www-form-urlencoded")
        ),
    ),
    Attack(
        "45.1 player: four 48 MB JSON bodies at once",
        lambda b: at_once(
            4, lambda: b.raw(b.photos, json_bomb(), "application/json", signed_in=True)
        ),
    ),
    Attack(
        "45.1 player: 48 MB multipart, NUL in caption",
        lambda b: [
            b.raw(b.photos, *multipart_upload(48 * MB - 4096, b"bad\x00caption"), signed_in=True)
        ],
    ),
    Attack(
        "45.1 anon: 20 × (47 MB, then 1 byte/s)",
        lambda b: trickled_uploads(b, signed_in=False),
    ),
    Attack(
        "45.1 player: 20 × (47 MB, then 1 byte/s)",
        lambda b: trickled_uploads(b, signed_in=True),
    ),
    Attack(
        '45.5 anon: log-in [×100,000 "\\u0000" ]×100,000',
        lambda b: [b.raw("/api/v1/auth/login", DEEP_LOGIN, "application/json")],
    ),
    Attack("45.1 honest 12 MP photo beside 10 anon bombs", honest_beside_bombs, twelve_mp),
    Attack("45.1 honest 12 MP photo beside 20 trickles", honest_beside_trickles, twelve_mp),
]


# --- issue 33: hostile images, one at a time, then six at once ---------------------------------


def encoded(size: tuple[int, int], kind: str, **options: Any) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (40, 90, 40)).save(out, kind, **options)
    return out.getvalue()


def uploaded(make: Callable[[], bytes], times: int = 1) -> Callable[[Bench], list[str]]:
    """An attack that uploads ``make()``'s file, ``times`` at once."""

    def run(bench: Bench) -> list[str]:
        data = make()

        def one() -> str:
            return answered(bench.player.post(bench.photos, files={"file": ("f", data)}))

        return at_once(times, one) if times > 1 else [one()]

    return run


def image_attacks() -> list[Attack]:
    files: list[tuple[str, Callable[[], bytes]]] = [
        ("scan bomb: 50 MP + 2000 scans", lambda: scan_bomb(2000)),
        ("scan bomb: 50 MP + 58 scans", lambda: scan_bomb(58)),
        ("dimension liar: JPEG 7000² progressive", dimension_liar),
        ("dimension liar: JPEG 7000² baseline", lambda: dimension_liar(progressive=False)),
        ("dimension liar: PNG 7071²", png_liar),
        ("PNG bomb: 7071² RGBA, one colour", png_bomb),
        ("PNG bomb: 7071² RGB, one colour", lambda: png_bomb(mode="RGB")),
        ("WebP 3999² (its limit: 16 MP)", lambda: encoded((3999, 3999), "WEBP", quality=50)),
        ("HEIC 4032×3024 (an iPhone's 12 MP)", lambda: encoded((4032, 3024), "HEIF", quality=50)),
        ("phone JPEG 4032×3024", lambda: phone_jpeg((4032, 3024))),
        ("phone JPEG 8160×6120 (50 MP)", lambda: phone_jpeg((8160, 6120))),
        ("phone JPEG 8160×6120 progressive", lambda: phone_jpeg((8160, 6120), progressive=True)),
    ]
    files += [("six JPEG liars at once", dimension_liar), ("six PNG bombs at once", png_bomb)]
    made = [(name, cache(make)) for name, make in files]
    return [
        Attack(f"33 {name}", uploaded(make, 6 if name.startswith("six") else 1), make)
        for name, make in made
    ]


ATTACKS: list[Attack] = BODY_ATTACKS


def every_attack() -> list[Attack]:
    """These, issue 33's images, then any other module's (bench/upload_attacks_images.py)."""
    found: list[Attack] = [*ATTACKS, *image_attacks()]
    try:
        extra = importlib.import_module("upload_attacks_images")
    except ModuleNotFoundError as missing:
        if missing.name != "upload_attacks_images":
            raise
    else:
        found += list(extra.ATTACKS)
    return found


# --- measuring -------------------------------------------------------------------------------


def status(pid: int, name: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def reset_peak(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


@dataclass
class Probe:
    """One kind of request asked again and again beside an attack."""

    worst_ms: float = 0.0
    refused: Counter[int] = field(default_factory=Counter)

    def ask(self, call: Callable[[], httpx.Response]) -> None:
        started = time.perf_counter()
        try:
            code = call().status_code
        except httpx.HTTPError:
            code = 0
        self.worst_ms = max(self.worst_ms, (time.perf_counter() - started) * 1000)
        if code != 200:
            self.refused[code] += 1

    def shown(self) -> str:
        bad = ",".join(f"{n}×{c}" for c, n in sorted(self.refused.items()))
        return f"{self.worst_ms:7.0f}{'!' + bad if bad else ''}"


@contextmanager
def probes(base: str, reader: httpx.Client, page: str) -> Iterator[tuple[Probe, Probe]]:
    health, read = Probe(), Probe()
    done = threading.Event()

    def every(seconds: float, work: Callable[[], None]) -> None:
        while not done.is_set():
            work()
            time.sleep(seconds)

    with httpx.Client(base_url=base, timeout=60) as probe, ThreadPoolExecutor(2) as pool:
        runs = [
            pool.submit(every, 0.05, lambda: health.ask(lambda: probe.get("/health"))),
            pool.submit(every, 0.1, lambda: read.ask(lambda: reader.get(page))),
        ]
        try:
            yield health, read
        finally:
            done.set()
            for run in runs:
                run.result()


def counted(outcomes: list[str]) -> str:
    counts = Counter(outcomes)
    return ", ".join(f"{n}× {o}" if n > 1 else o for o, n in counts.most_common())


@contextmanager
def server(database_url: str, port: int, folder: Path) -> Iterator[tuple[str, int]]:
    """`crusade serve` in its own process on 127.0.0.1:``port``."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "LOG_LEVEL": "warning",
        "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-only-secret-key"),
        "PHOTO_DIR": str(folder / "photos"),
        "PASSWORD_HASHING": "fast",
    }
    command = [CRUSADE, "serve", "--host", "127.0.0.1", "--port", str(port), "--no-worker"]
    with serving(command, env, port) as running:
        yield running


def account(base: str, username: str) -> httpx.Client:
    http = httpx.Client(base_url=base, timeout=300)
    signed = http.post(
        "/api/v1/auth/signup", json={"username": username, "password": "bench password"}
    )
    assert signed.status_code == 201, signed.text
    http.headers["X-CSRF-Token"] = http.get("/api/v1/auth/csrf").json()["csrf_token"]
    return http


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--database-url", default="")
    parser.add_argument("--port", type=int, default=8210)
    parser.add_argument(
        "--only", action="append", default=[], help="run the attacks whose name holds this"
    )
    parser.add_argument("--list", action="store_true", help="list the attacks and stop")
    args = parser.parse_args()
    attacks = [a for a in every_attack() if not args.only or any(o in a.name for o in args.only)]
    if args.list:
        print("\n".join(a.name for a in attacks))
        return
    with tempfile.TemporaryDirectory(prefix="upload-bench-") as temp:
        measure(attacks, args.database_url, args.port, Path(temp))


def measure(attacks: list[Attack], database_url: str, port: int, folder: Path) -> None:
    """Each attack against a new server on ``port``, its figures printed as it ends."""
    url = database_url or f"sqlite:///{folder / 'bench.db'}"
    migrate.upgrade(url)
    with server(url, port, folder) as (base, pid):
        account(base, "admin").close()  # the first account is the site's admin: not these
        player = account(base, "player")
        battle = muster(player, setup_two_forces(player))  # type: ignore[arg-type]
        reader = account(base, "reader")
        theirs = reader.post("/api/v1/campaigns", json={"name": "Reader's league"}).json()["id"]
        neighbour = account(base, "neighbour")
        hers = muster(neighbour, setup_two_forces(neighbour))  # type: ignore[arg-type]
        cookie = "; ".join(f"{c.name}={c.value}" for c in player.cookies.jar)
        csrf = player.headers["X-CSRF-Token"]
        bench = Bench(base, pid, battle["id"], player, cookie, csrf, neighbour, hers["id"])
        for _ in range(5):  # warm: the first page and photo reads are not the attacks'
            reader.get(f"/campaigns/{theirs}")
        start = status(pid, "VmRSS")
        print(f"server pid {pid} on {base}, resident at start: {start:.0f} MB")
        if not reset_peak(pid):
            print("(cannot reset VmHWM: peaks below are since the server started)")
        print(
            f"{'attack':48} {'seconds':>7} {'peak MB':>7} {'after':>5} {'/health ms':>10} "
            f"{'read ms':>7}  attacker's answers"
        )
        for attack in attacks:
            time.sleep(1)
            prepare = getattr(attack, "prepare", None)
            if prepare is not None:
                prepare()
            reset_peak(pid)
            with probes(base, reader, f"/campaigns/{theirs}") as (health, read):
                started = time.perf_counter()
                try:
                    outcomes = attack.run(bench)
                except Exception as error:  # a bench keeps going: say what broke
                    outcomes = [f"bench error: {error!r}"[:80]]
                seconds = time.perf_counter() - started
            peak = status(pid, "VmHWM")
            time.sleep(1)
            after = status(pid, "VmRSS")
            print(
                f"{attack.name[:48]:48} {seconds:7.1f} {peak:7.0f} {after:5.0f} "
                f"{health.shown():>10} {read.shown():>7}  {counted(outcomes)}",
                flush=True,
            )
        print(f"resident at the end: {status(pid, 'VmRSS'):.0f} MB (at start: {start:.0f} MB)")


if __name__ == "__main__":
    main()
