"""API tokens have rate limits (issue 34): RateLimit-Limit / -Remaining / -Reset on every
answer to a token, 429 rate_limited with Retry-After past the limit, one budget per token,
counted in the shared store or, while it is unreachable, by the process itself; on both
engines (today 600 GETs from 32 threads all passed)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.config import Settings
from app.edge.limits import RateLimits
from app.main import create_app
from tests.api.helpers import account, assert_problem, dump
from tests.faults.helpers import closed_port

LIMIT = 5


def token_for(client: TestClient, name: str = "bot") -> str:
    made = client.post("/api/v1/auth/tokens", json={"name": name})
    assert made.status_code == 201, made.text
    return str(made.json()["token"])


def bot(app: Any, token: str) -> TestClient:
    return TestClient(app, headers={"Authorization": f"Bearer {token}"})


def limited_app(engine: Engine, uri: str = "memory://", limit: int = LIMIT) -> Any:
    app = create_app(engine)
    app.state.rate_limits = RateLimits(uri, token_requests_per_minute=limit)
    return app


class TestTokenRateLimits:
    def test_each_answer_says_what_is_left_and_the_one_past_it_is_429(self, engine: Engine) -> None:
        app = limited_app(engine)
        owner = account(app, "ruby")
        client = bot(app, token_for(owner))
        for left in range(LIMIT - 1, -1, -1):
            answer = client.get("/api/v1/auth/me")
            assert answer.status_code == 200, answer.text
            assert answer.headers["RateLimit-Limit"] == str(LIMIT)
            assert answer.headers["RateLimit-Remaining"] == str(left)
            assert 0 <= int(answer.headers["RateLimit-Reset"]) <= 60
        refused = client.get("/api/v1/auth/me")
        assert_problem(refused, 429, "rate_limited")
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        assert refused.headers["RateLimit-Remaining"] == "0"
        assert "content-security-policy" in refused.headers  # answered inside the hardening
        # Another token of the same account has a budget of its own; the website none.
        assert bot(app, token_for(owner, "other")).get("/api/v1/auth/me").status_code == 200
        browsed = owner.get("/api/v1/auth/me")
        assert browsed.status_code == 200 and "RateLimit-Limit" not in browsed.headers

    def test_threads_racing_get_exactly_the_limit(self, engine: Engine) -> None:
        """The trial's 600 GETs from 32 threads, scaled down: 60 GETs from 8 threads against
        a limit of 30 a minute."""
        app = limited_app(engine, limit=30)
        client = bot(app, token_for(account(app, "ruby")))
        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(lambda _: client.get("/api/v1/rules").status_code, range(60)))
        assert sorted(statuses) == [200] * 30 + [429] * 30

    def test_a_refused_write_changes_nothing(self, engine: Engine) -> None:
        app = limited_app(engine, limit=1)
        client = bot(app, token_for(account(app, "ruby")))
        assert client.get("/api/v1/auth/me").status_code == 200
        before = dump(engine)
        refused = client.post("/api/v1/campaigns", json={"name": "Never"})
        assert_problem(refused, 429, "rate_limited")
        assert dump(engine) == before

    def test_with_the_shared_store_unreachable_the_process_counts(self, engine: Engine) -> None:
        app = limited_app(engine, f"redis://127.0.0.1:{closed_port()}/0")
        client = bot(app, token_for(account(app, "ruby")))
        statuses = [client.get("/api/v1/auth/me").status_code for _ in range(LIMIT + 2)]
        assert statuses == [200] * LIMIT + [429] * 2

    def test_the_default_is_the_documented_number(self) -> None:
        assert Settings.model_fields["api_token_requests_per_minute"].default == 300
