"""examples/retry_after.py (issue 46, item 6): the transport a generated client is given so
that it honours Retry-After, against scripted answers and against the server's own 429."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import httpx
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.edge.limits import RateLimits
from app.main import create_app
from tests.api.helpers import account

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "retry_after.py"


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("retry_after_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def scripted(*answers: tuple[int, dict[str, str]]) -> tuple[httpx.MockTransport, list[bytes]]:
    """A transport answering these in turn; what it was sent is kept (the bodies)."""
    sent: list[bytes] = []
    queue = list(answers)

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.read())
        status, headers = queue.pop(0)
        return httpx.Response(status, headers=headers)

    return httpx.MockTransport(answer), sent


class TestRetryAfter:
    def test_a_busy_answer_is_waited_out_and_the_same_request_sent_again(self) -> None:
        inner, sent = scripted(
            (429, {"Retry-After": "7"}),
            (409, {"Retry-After": "1"}),  # idempotency_request_in_progress
            (503, {"Retry-After": "2"}),
            (201, {}),
        )
        slept: list[float] = []
        client = httpx.Client(transport=example().RetryAfter(inner, sleep=slept.append))
        answer = client.post(
            "http://tracker/api/v1/campaigns",
            json={"name": "Vigilus"},
            headers={"Idempotency-Key": "k1"},
        )
        assert answer.status_code == 201
        assert slept == [7, 1, 2]
        assert len(sent) == 4 and len(set(sent)) == 1  # the same body each time

    def test_what_is_not_a_wait_is_answered_as_it_came(self) -> None:
        retry = example().RetryAfter
        for answers in (
            [(409, {})],  # a conflict that needs another request
            [(422, {"Retry-After": "1"})],
            [(429, {"Retry-After": "3600"})],  # longer than `longest`: report it
        ):
            inner, sent = scripted(*answers)
            slept: list[float] = []
            client = httpx.Client(transport=retry(inner, sleep=slept.append))
            assert client.get("http://tracker/x").status_code == answers[0][0]
            assert slept == [] and len(sent) == 1

    def test_it_gives_up_after_its_tries(self) -> None:
        inner, sent = scripted(*[(503, {"Retry-After": "1"})] * 3)
        slept: list[float] = []
        client = httpx.Client(transport=example().RetryAfter(inner, tries=3, sleep=slept.append))
        assert client.get("http://tracker/x").status_code == 503
        assert slept == [1, 1] and len(sent) == 3

    def test_the_async_transport_waits_too(self) -> None:
        async def run() -> tuple[int, list[float]]:
            sent: list[float] = []

            async def sleep(seconds: float) -> None:
                sent.append(seconds)

            inner, _ = scripted((429, {"Retry-After": "4"}), (200, {}))
            transport = example().AsyncRetryAfter(inner, sleep=sleep)
            async with httpx.AsyncClient(transport=transport) as client:
                answer = await client.get("http://tracker/x")
            return answer.status_code, sent

        # In a thread of its own: a browser test earlier on the same xdist worker can leave
        # an event loop running in this one, and asyncio.run refuses to nest.
        with ThreadPoolExecutor(1) as pool:
            assert pool.submit(asyncio.run, run()).result() == (200, [4])

    def test_it_waits_for_the_seconds_the_server_says(self, engine: Engine) -> None:
        app = create_app(engine)
        app.state.rate_limits = RateLimits("memory://", token_requests_per_minute=1)
        owner = account(app, "ruby")
        token = owner.post("/api/v1/auth/tokens", json={"name": "bot"}).json()["token"]
        inner = TestClient(app)._transport  # the app, in process
        slept: list[float] = []
        client = httpx.Client(
            base_url="http://testserver",
            headers={"Authorization": f"Bearer {token}"},
            transport=example().RetryAfter(inner, tries=2, sleep=slept.append),
        )
        assert client.get("/api/v1/auth/me").status_code == 200
        refused = client.get("/api/v1/auth/me")  # 429, waited out (not really), then again
        assert refused.status_code == 429
        assert slept == [int(refused.headers["Retry-After"])] and 1 <= slept[0] <= 60
