"""One `crusade serve` process for a benchmark: started, waited for until /health answers,
ended at the end (the bench scripts shared three copies of this)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx


@contextmanager
def serving(command: list[str], env: dict[str, str], port: int) -> Iterator[tuple[str, int]]:
    """``command`` run with ``env``, listening on 127.0.0.1:``port``; yields its base URL
    and process id once it answers /health (or after 60 s, to let the bench report why)."""
    process = subprocess.Popen(command, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        yield base, process.pid
    finally:
        process.terminate()
        process.wait(timeout=20)
