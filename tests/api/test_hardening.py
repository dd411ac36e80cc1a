"""Hardening: CSRF on cookie-authenticated writes, security headers, body limits, malformed
bodies, rate limits, and errors that never leak internals."""

from __future__ import annotations

import inspect
import re

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.api import auth, battles, membership, webhooks
from app.edge.hardening import MAX_BODY, SECURITY_HEADERS
from tests.api.helpers import assert_problem, dump


class TestCsrf:
    def test_cookie_writes_need_the_token(self, client: TestClient, engine: Engine) -> None:
        before = dump(engine)
        missing = client.post("/api/v1/campaigns", json={"name": "X"}, headers={"X-CSRF-Token": ""})
        forged = client.post(
            "/api/v1/campaigns", json={"name": "X"}, headers={"X-CSRF-Token": "0" * 64}
        )
        assert_problem(missing, 403, "csrf_token_invalid")
        assert_problem(forged, 403, "csrf_token_invalid")
        assert dump(engine) == before
        assert client.post("/api/v1/campaigns", json={"name": "X"}).status_code == 201

    def test_reads_and_bearer_tokens_need_none(self, client: TestClient) -> None:
        token = client.post("/api/v1/auth/tokens", json={"name": "bot", "can_write": True}).json()[
            "token"
        ]
        bot = TestClient(client.app, headers={"Authorization": f"Bearer {token}"})
        assert bot.post("/api/v1/campaigns", json={"name": "By bot"}).status_code == 201
        del client.headers["X-CSRF-Token"]
        assert client.get("/api/v1/campaigns").status_code == 200


def failing_app(client: TestClient, message: str) -> TestClient:
    """The client's app with an API route and a page that raise (a bug, as far as the app
    knows), called without re-raising so the answer the user gets can be checked."""
    app = client.app

    @app.get("/api/v1/boom")  # type: ignore[attr-defined]
    @app.get("/boom")  # type: ignore[attr-defined]
    def boom() -> None:
        raise RuntimeError(message)

    return TestClient(app, raise_server_exceptions=False)


class TestHeadersAndBodies:
    def test_security_headers_on_every_response(self, client: TestClient) -> None:
        for response in (
            client.get("/health"),
            client.get("/api/v1/nothing"),
            client.get("/api/v1/rules"),
        ):
            csp = response.headers["content-security-policy"]
            assert "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
            # No <base> may move relative links, no form may post elsewhere (issue 33).
            assert "base-uri 'none'" in csp and "form-action 'self'" in csp
            assert response.headers["x-content-type-options"] == "nosniff"
            assert response.headers["referrer-policy"] == "same-origin"

    def test_oversized_body_is_refused(self, client: TestClient, engine: Engine) -> None:
        before = dump(engine)
        huge = "x" * (MAX_BODY + 1)
        response = client.post(
            "/api/v1/campaigns",
            content=f'{{"name": "{huge}"}}',
            headers={"content-type": "application/json"},
        )
        assert_problem(response, 413, "request_too_large")
        assert dump(engine) == before

    def test_malformed_json_is_a_clear_422(self, client: TestClient) -> None:
        response = client.post(
            "/api/v1/campaigns", content="{not json", headers={"content-type": "application/json"}
        )
        assert_problem(response, 422, "request_invalid")

    @pytest.mark.parametrize("value", [0, 1, "true", "no", None])
    def test_a_boolean_setting_takes_only_true_or_false(
        self, client: TestClient, engine: Engine, value: object
    ) -> None:
        """Issue 19: `0` was read as false; a boolean is refused unless it is one."""
        campaign = client.post("/api/v1/campaigns", json={"name": "Strict"}).json()["id"]
        before = dump(engine)
        body = {"organizer_results_need_confirmation": value}
        response = client.patch(f"/api/v1/campaigns/{campaign}", json=body)
        if value is None:  # null means "leave as it is", as for every setting
            assert response.status_code == 200, response.text
            assert response.json()["organizer_results_need_confirmation"] is True
        else:
            problem = assert_problem(response, 422, "request_invalid")
            assert problem["field"] == "organizer_results_need_confirmation"
            assert dump(engine) == before
        answered = client.patch(
            f"/api/v1/campaigns/{campaign}", json={"organizer_results_need_confirmation": False}
        )
        assert answered.json()["organizer_results_need_confirmation"] is False

    @pytest.mark.parametrize(
        ("method", "path", "allow"),
        [
            ("DELETE", "/api/v1/rules", "GET, HEAD"),
            ("DELETE", "/api/v1/campaigns", "GET, HEAD, POST"),
            ("PUT", "/api/v1/battles/1/result", "POST"),
            ("POST", "/health", "GET, HEAD"),
        ],
    )
    def test_a_405_names_every_allowed_method(
        self, client: TestClient, method: str, path: str, allow: str
    ) -> None:
        response = client.request(method, path)
        assert_problem(response, 405, "method_not_allowed")
        assert response.headers["allow"] == allow

    @pytest.mark.parametrize("path", ["/health", "/api/v1/rules", "/api/v1/campaigns", "/"])
    def test_head_answers_a_gets_headers_without_its_body(
        self, client: TestClient, path: str
    ) -> None:
        got, head = client.get(path), client.head(path)
        assert head.status_code == got.status_code == 200
        assert head.content == b""
        assert head.headers["content-type"] == got.headers["content-type"]

    def test_over_long_fields_are_refused(self, client: TestClient) -> None:
        assert_problem(
            client.post("/api/v1/campaigns", json={"name": "n" * 121}), 422, "request_invalid"
        )

    def test_an_unexpected_error_leaks_nothing(self, client: TestClient) -> None:
        quiet = failing_app(client, "SELECT secret FROM table")
        response = quiet.get("/api/v1/boom")
        body = response.json()
        assert (response.status_code, body["code"]) == (500, "internal_error")
        assert "SELECT" not in response.text and "Traceback" not in response.text
        page = quiet.get("/boom")  # a page: the same refusal, as HTML
        assert page.status_code == 500 and "text/html" in page.headers["content-type"]
        assert "Something went wrong" in page.text and "SELECT" not in page.text

    def test_a_500_carries_the_security_headers(self, client: TestClient) -> None:
        """Starlette answers an unexpected error outside every middleware of ours."""
        quiet = failing_app(client, "boom")
        for response in (quiet.get("/api/v1/boom"), quiet.get("/boom")):
            assert response.status_code == 500
            for name, value in SECURITY_HEADERS:
                assert response.headers[name.decode()] == value.decode(), response.url
        assert quiet.get("/api/v1/boom").headers["content-type"] == "application/problem+json"
        assert "Something went wrong" in quiet.get("/boom").text


class TestRateLimits:
    def test_login_says_when_to_try_again(self, anonymous: TestClient) -> None:
        attempt = {"username": "nobody", "password": "wrong password"}
        codes = [anonymous.post("/api/v1/auth/login", json=attempt).status_code for _ in range(10)]
        assert codes == [401] * 10
        limited = anonymous.post("/api/v1/auth/login", json=attempt)
        body = assert_problem(limited, 429, "rate_limited")
        assert "try again in" in body["detail"]
        assert 1 <= int(limited.headers["Retry-After"]) <= 60

    def test_token_creation_is_limited(self, client: TestClient) -> None:
        codes = [
            client.post("/api/v1/auth/tokens", json={"name": f"t{n}"}).status_code
            for n in range(11)
        ]
        assert codes[:10] == [201] * 10
        assert codes[10] == 429

    def test_setting_a_pin_is_limited(self, client: TestClient) -> None:
        wrong = {"current_password": "not my password", "pin": "1234"}
        codes = [client.post("/api/v1/auth/pin", json=wrong).status_code for _ in range(11)]
        assert codes[:10] == [422] * 10
        assert_problem(client.post("/api/v1/auth/pin", json=wrong), 429, "rate_limited")

    def test_every_rate_limited_route_documents_its_429(self, client: TestClient) -> None:
        """A bot reads the OpenAPI document to learn what to retry: each route whose handler
        counts tries against a limit must list 429 (schemathesis cannot reach most limits)."""
        paths = client.get("/openapi.json").json()["paths"]
        routers = (auth.router, battles.router, membership.router, webhooks.router)
        limited = [
            (method.lower(), f"/api/v1{route.path}")
            for router in routers
            for route in router.routes
            if isinstance(route, APIRoute) and "limits.hit(" in inspect.getsource(route.endpoint)
            for method in route.methods
        ]
        assert len(limited) >= 4
        undocumented = [(m, p) for m, p in limited if "429" not in paths[p][m]["responses"]]
        assert undocumented == []


def test_every_path_answers_a_method_it_does_not_take_with_405_and_allow(
    client: TestClient,
) -> None:
    """What schemathesis's unsupported_method check asks of every operation, for every path
    of the OpenAPI document at once: 405, and an Allow header naming the documented methods."""
    paths = client.get("/openapi.json").json()["paths"]
    wrong = []
    for template, operations in paths.items():
        path = re.sub(r"\{[^}]+\}", "1", template)
        documented = {method.upper() for method in operations}
        allowed = documented | ({"HEAD"} if "GET" in documented else set())
        for method in {"GET", "POST", "PUT", "PATCH", "DELETE"} - documented:
            response = client.request(method, path)
            allow = {m.strip() for m in response.headers.get("allow", "").split(",") if m}
            if response.status_code != 405 or allow != allowed:
                wrong.append((method, template, response.status_code, sorted(allow)))
    assert len(paths) > 50
    assert wrong == []
