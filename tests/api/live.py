"""A real uvicorn server on a test's engine, in a thread, for tests that need requests to
run truly at the same time (TestClient runs one request at a time)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

import httpx
import uvicorn
from fastapi import FastAPI
from sqlalchemy import Engine

from app.cli import before_first_request
from app.main import create_app

T = TypeVar("T")
PASSWORD = "a good password"


@contextmanager
def serve(engine: Engine, app: FastAPI | None = None) -> Iterator[str]:
    """The app on ``engine`` (or ``app`` as given) at a free loopback port; yields its base
    URL."""
    # Idle connections kept a minute (uvicorn's default: 5 s): a test that pauses about that
    # long between requests would otherwise race the server closing the connection its
    # client reuses, and get no answer at all (encode/httpx#2487).
    served = app or create_app(engine)
    before_first_request(served)  # as `crusade serve` does
    config = uvicorn.Config(
        served,
        host="127.0.0.1",
        port=0,
        log_level="critical",
        timeout_keep_alive=60,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "the test server did not start"
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def account(base_url: str, username: str) -> httpx.Client:
    """A signed-up, logged-in client with its CSRF header set."""
    client = httpx.Client(base_url=base_url, timeout=60)
    signed_up = client.post(
        "/api/v1/auth/signup", json={"username": username, "password": PASSWORD}
    )
    assert signed_up.status_code == 201, signed_up.text
    client.headers["X-CSRF-Token"] = client.get("/api/v1/auth/csrf").json()["csrf_token"]
    return client


def at_once(calls: list[Callable[[], T]]) -> list[T]:
    """Run every call at the same moment (a barrier releases them together)."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], T]) -> T:
        barrier.wait(timeout=30)
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def statuses(responses: list[Any]) -> list[int]:
    return sorted(r.status_code for r in responses)
