"""The live server and browser settings the browser tests, `scripts/screenshots.py` and
`make screenshots` share: `crusade serve` (as `make run` starts it) in its own process on a
free loopback port with a fresh database, and how Chromium is launched here."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
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


@dataclass
class Server:
    url: str
    data_dir: Path
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def start_server(
    data_dir: Path, *, demo: bool = True, database_url: str = "", timeout: float = 60
) -> Server:
    """`crusade serve` on a free loopback port with its database in data_dir (or at
    database_url, which must then be empty for the demo to load); waits until /health
    answers. The log goes to data_dir/server.log (shown if it never comes up)."""
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
    with log.open("wb") as out:
        # cwd is the data dir so a developer's .env in the checkout cannot change the set-up.
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
