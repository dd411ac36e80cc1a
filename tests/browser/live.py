"""The live server and browser settings the browser tests, `scripts/screenshots.py` and
`make screenshots` share: `crusade serve` (as `make run` starts it) in its own process on a
free loopback port with a fresh database, and how Chromium is launched here. The process is
forked from a warm starter (tests/browser/starter.py: the imports and routes made once per
test process) unless `warm=False` asks for a cold `crusade` of its own."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags Chromium tries to reach Google's services, which
# this closed network refuses (and the refusals end up as noise).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE: dict[str, Any] = {
    "viewport": {"width": 360, "height": 740},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 2,
}
DESKTOP: dict[str, Any] = {"viewport": {"width": 1280, "height": 800}}
VIEWPORTS = {"phone": PHONE, "desktop": DESKTOP}
PASSWORD = "a good password"
ADMIN = "admin"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Started:
    """A server forked by the starter, watched and ended by its id as a Popen would be
    (poll, wait, terminate, kill). Its exit status stays with the starter, which let the
    kernel reap it: `returncode` is -1 once it has ended, whatever it said."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        try:
            self._ended: int | None = os.pidfd_open(pid)
        except ProcessLookupError:  # ended (and reaped) already
            self._ended, self.returncode = None, -1

    def poll(self) -> int | None:
        return self.wait(0) if self.returncode is None else self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if self.returncode is None and self._ended is not None:
            ready, _, _ = select.select([self._ended], [], [], timeout)
            if not ready:
                if timeout:
                    raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout)
                return None
            os.close(self._ended)
            self._ended, self.returncode = None, -1
        return self.returncode

    def send_signal(self, signal_number: int) -> None:
        if self.poll() is None and self._ended is not None:
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                signal.pidfd_send_signal(self._ended, signal_number)  # never a reused pid

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class _Starter:
    """The warm starter of this process, started on first use, one request at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None

    def fork(self, argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> Started:
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._process = subprocess.Popen(
                    [sys.executable, "-m", "tests.browser.starter"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                    cwd=_CHECKOUT,
                    env={**os.environ, "PYTHONPATH": os.pathsep.join(_import_path())},
                )
            assert self._process.stdin is not None and self._process.stdout is not None
            request = {"argv": argv, "env": env, "cwd": str(cwd), "log": str(log)}
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
            answer = self._process.stdout.readline()
            if not answer.strip():
                raise RuntimeError("the warm starter ended (its errors are in the test's log)")
            return Started(int(answer))


_starter = _Starter()
_CHECKOUT = Path(__file__).resolve().parents[2]


def crusade_process(args: list[str], *, env: dict[str, str], cwd: Path, log: Path) -> Started:
    """`crusade *args` in a process of its own, forked from the warm starter, with `env` as
    its whole environment, in `cwd`, its output appended to `log`."""
    return _starter.fork(args, env, cwd, log)


def _import_path() -> list[str]:
    """The checkout first (so `tests.browser.starter` imports), then what was set."""
    return [str(_CHECKOUT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]


@dataclass
class Server:
    url: str
    data_dir: Path
    process: subprocess.Popen[bytes] | Started
    log: Path

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def start_server(
    data_dir: Path,
    *,
    demo: bool = True,
    database_url: str = "",
    timeout: float = 60,
    warm: bool = True,
) -> Server:
    """`crusade serve` on a free loopback port with its database in data_dir (or at
    database_url, which must then be empty for the demo to load); waits until /health
    answers. The log goes to data_dir/server.log (shown if it never comes up). `warm`: the
    process is forked from the warm starter (tests/browser/starter.py), else a cold
    `crusade` executable."""
    port = free_port()
    env = {
        **os.environ,
        "DATA_DIR": str(data_dir),
        "DATABASE_URL": database_url,  # "": SQLite in DATA_DIR, whatever the environment says
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "SECRET_KEY": "test-only",
        "PASSWORD_HASHING": "fast",
        "LOG_LEVEL": "warning",
    }
    command = [str(Path(sys.executable).parent / "crusade"), "serve"]
    if demo:
        command.append("--demo-if-empty")
    log = data_dir / "server.log"
    # cwd is the data dir so a developer's .env in the checkout cannot change the set-up.
    process: subprocess.Popen[bytes] | Started
    if warm:
        log.touch()
        process = crusade_process(command[1:], env=env, cwd=data_dir, log=log)
    else:
        with log.open("wb") as out:
            process = subprocess.Popen(command, env=env, cwd=data_dir, stdout=out, stderr=out)
    server = Server(f"http://127.0.0.1:{port}", data_dir, process, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            if httpx.get(f"{server.url}/health", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"the server did not come up:\n{log.read_text(errors='replace')}")


def api_sign_up(base_url: str, username: str, password: str = PASSWORD) -> httpx.Client:
    """An account made through the JSON API (quick set-up); returns its logged-in client."""
    client = httpx.Client(base_url=base_url, timeout=30)
    response = client.post("/api/v1/auth/signup", json={"username": username, "password": password})
    assert response.status_code < 300, response.text
    return client


def csrf_form(client: httpx.Client) -> dict[str, str]:
    """The field a logged-in client's form posts carry (the pages' forms have it hidden)."""
    return {"csrf_token": client.get("/api/v1/auth/csrf").json()["csrf_token"]}


def two_forces(client: httpx.Client) -> tuple[int, int, int]:
    """A campaign with two forces of two units each, all made by the client's account
    through the JSON API; returns the campaign's and the forces' ids."""
    headers = {"X-CSRF-Token": csrf_form(client)["csrf_token"]}
    campaign = client.post("/api/v1/campaigns", json={"name": "Test"}, headers=headers).json()
    forces = []
    armies = (("Ultramarines", "IMPERIUM", ("Captain", "Intercessors")),)
    armies += (("Waaagh!", "ORKS", ("Warboss", "Boyz")),)
    for name, faction, units in armies:
        force = client.post(
            f"/api/v1/campaigns/{campaign['id']}/forces",
            json={"name": name, "crusade_faction": faction},
            headers=headers,
        ).json()
        for unit in units:
            client.post(
                f"/api/v1/forces/{force['id']}/cards",
                json={"name": unit, "power_rating": 5, "keywords": [faction, "INFANTRY"]},
                headers=headers,
            )
        forces.append(force["id"])
    return campaign["id"], forces[0], forces[1]


def battle_in_progress(client: httpx.Client, campaign: int, force: int, opponent: int) -> str:
    """A Combat Patrol recorded through the wizard's forms up to "after the game", with as
    many units of each force as fit its 25 PL; returns the draft's base URL."""
    csrf = csrf_form(client)
    started = client.post(f"/campaigns/{campaign}/battles/new", data=csrf)
    assert started.status_code == 303, started.text
    base = started.headers["location"].rsplit("/", 1)[0]
    setup = {"force_id": force, "opponent_id": opponent, "role": "attacker"}
    setup |= {"battle_size": "combat_patrol", "mission": "supply_drop"}
    setup |= {"agendas_0": "assassins", "agendas_1": "cull_the_hordes", "action": "next"}
    assert client.post(f"{base}/setup", data={**csrf, **setup}).status_code == 303
    rosters = {}
    for side, force_id in enumerate((force, opponent)):
        cards, total = [], 0
        for card in client.get(f"/api/v1/forces/{force_id}").json()["cards"]:
            if total + card["power_rating"] <= 25:  # the Combat Patrol limit
                cards.append(card["id"])
                total += card["power_rating"]
        rosters[f"roster_{side}"] = cards
    mustered = client.post(f"{base}/muster", data={**csrf, **rosters, "action": "muster"})
    assert mustered.status_code == 303, mustered.text
    return base
