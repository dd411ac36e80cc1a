"""Issue 34, a contract a generator reads well: every operation has a chosen operationId,
the schema says what the server checks, and a body that is not JSON (or not UTF-8) is
refused in words a person can act on."""

from __future__ import annotations

import re
from typing import Any

import fastapi.applications
import fastapi.openapi.utils
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.api.plumbing.operations import OPERATION_IDS
from app.main import create_app
from tests.api.helpers import assert_problem, dump


def operations(client: TestClient) -> dict[tuple[str, str], dict[str, object]]:
    schema = client.get("/openapi.json").json()
    return {
        (method.upper(), path): operation
        for path, methods in schema["paths"].items()
        for method, operation in methods.items()
    }


class TestOperationIds:
    def test_every_operation_has_its_chosen_snake_case_id(self, client: TestClient) -> None:
        found = operations(client)
        ids = [str(op["operationId"]) for op in found.values()]
        assert len(ids) == len(set(ids))
        assert all(re.fullmatch(r"[a-z]+(_[a-z0-9]+)*", i) for i in ids), ids
        assert not [i for i in ids if "api_v1" in i]
        for key, operation in found.items():
            if key[1].startswith("/api/v1"):
                assert operation["operationId"] == OPERATION_IDS[key]
        assert found[("GET", "/api/v1/campaigns/{campaign_id}/battles")]["operationId"] == (
            "list_battles"
        )
        assert found[("POST", "/api/v1/battles/{battle_id}/result")]["operationId"] == (
            "record_result"
        )
        assert found[("POST", "/api/v1/decisions/{decision_id}/answer")]["operationId"] == (
            "answer_decision"
        )

    def test_links_name_the_new_ids(self, client: TestClient) -> None:
        mustered = operations(client)[("POST", "/api/v1/campaigns/{campaign_id}/battles")]
        links = mustered["responses"]["201"]["links"]  # type: ignore[index]
        assert links["record_result"]["operationId"] == "record_result"


class TestSchemaSaysWhatTheServerChecks:
    def test_the_username_rule_is_in_the_schema_and_held(self, client: TestClient) -> None:
        schema = client.get("/openapi.json").json()["components"]["schemas"]
        username = schema["SignUp"]["properties"]["username"]
        assert (username["minLength"], username["maxLength"]) == (3, 40)
        pattern = re.compile(username["pattern"])
        for name in ("ab", "-abc", "a b c", "x" * 41):
            assert not pattern.fullmatch(name)
            refused = client.post(
                "/api/v1/auth/signup", json={"username": name, "password": "p" * 12}
            )
            assert refused.status_code == 422, (name, refused.text)
        assert pattern.fullmatch("Grukk.the-2nd")
        made = client.post(
            "/api/v1/auth/signup", json={"username": "Grukk.the-2nd", "password": "p" * 12}
        )
        assert made.status_code in (200, 201), made.text

    def test_a_photo_is_documented_as_a_jpeg(self, client: TestClient) -> None:
        photo = operations(client)[("GET", "/api/v1/battles/{battle_id}/photos/{photo_id}/{width}")]
        content = photo["responses"]["200"]["content"]  # type: ignore[index]
        assert list(content) == ["image/jpeg"]

    def test_a_cards_rolled_dice_say_how_a_pair_reads(self, client: TestClient) -> None:
        """[[6, 3]] is one D6 that rolled a 3, not two dice: the schema says so."""
        schemas = client.get("/openapi.json").json()["components"]["schemas"]
        for model in ("ScarPublic", "HonourPublic"):
            assert "[sides, value]" in schemas[model]["properties"]["dice"]["description"]


class TestBodiesThatAreNotJson:
    def test_malformed_json_names_the_line_and_column(self, client: TestClient) -> None:
        response = client.post(
            "/api/v1/campaigns",
            content=b'{"name": "Vigilus",\n  "public": nope}',
            headers={"content-type": "application/json"},
        )
        body = assert_problem(response, 422, "request_invalid")
        assert body["detail"] == "The body is not valid JSON: expecting value at line 2, column 13."
        assert "field" not in body

    def test_a_body_that_is_not_utf8_has_its_own_code(self, client: TestClient) -> None:
        response = client.post(
            "/api/v1/campaigns",
            content=b'{"name": "Vigilus \xff"}',
            headers={"content-type": "application/json"},
        )
        body = assert_problem(response, 400, "utf8_invalid")
        assert "line 1, column 19" in body["detail"] and "UTF-8" in body["detail"]
        documented = operations(client)[("POST", "/api/v1/campaigns")]["responses"]["400"]
        assert "utf8_invalid" in documented["description"]  # type: ignore[index]

    def test_a_body_without_a_json_content_type_says_so(
        self, client: TestClient, engine: Engine
    ) -> None:
        """Issue 46: it was "Input should be a valid dictionary or object to extract fields
        from", with no field."""
        before = dump(engine)
        for sent, said in (
            ({"content-type": "text/plain"}, "this request's is text/plain."),
            ({}, "this request sent none."),
        ):
            response = client.post(
                "/api/v1/campaigns", content=b'{"name": "Vigilus"}', headers=sent
            )
            body = assert_problem(response, 422, "request_invalid")
            assert body["field"] == "Content-Type"
            assert "Content-Type: application/json" in body["detail"]
            assert body["detail"].endswith(said)
        assert dump(engine) == before
        # JSON by another name is JSON.
        made = client.post(
            "/api/v1/campaigns",
            content=b'{"name": "Vigilus"}',
            headers={"content-type": "application/vnd.crusade+json; charset=utf-8"},
        )
        assert made.status_code == 201, made.text


def header(schema: dict[str, Any], declared: dict[str, Any]) -> dict[str, Any]:
    """A response header as declared, its $ref followed."""
    if "$ref" in declared:
        return dict(schema["components"]["headers"][declared["$ref"].rsplit("/", 1)[1]])
    return declared


class TestTheSchemaDeclaresTheHeaders:
    """Issue 46: what a generated client needs to read, declared where it is sent."""

    def test_every_answer_declares_the_rate_limit_headers(self, client: TestClient) -> None:
        schema = client.get("/openapi.json").json()
        for (method, path), operation in operations(client).items():
            if not path.startswith("/api/v1/"):
                continue
            for status, answer in operation["responses"].items():  # type: ignore[attr-defined]
                declared = answer.get("headers", {})
                for name in ("RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"):
                    assert name in declared, (method, path, status, name)
                    assert header(schema, declared[name])["schema"] == {"type": "integer"}
                replayed = "Idempotent-Replayed" in declared
                assert replayed == (method == "POST"), (method, path, status)

    def test_retry_after_is_declared_where_it_is_sent(self, client: TestClient) -> None:
        found = operations(client)
        for (method, path), operation in found.items():
            if not path.startswith("/api/v1/"):
                continue
            responses: dict[str, Any] = operation["responses"]  # type: ignore[assignment]
            for status in ("429", "503"):
                assert "Retry-After" in responses[status]["headers"], (method, path, status)
            conflict = responses.get("409", {})
            in_progress = "idempotency_request_in_progress" in conflict.get("description", "")
            assert in_progress == (method == "POST")
            if in_progress:
                retry = conflict["headers"]["Retry-After"]
                assert "idempotency_request_in_progress" in retry["description"]
        login = found[("POST", "/api/v1/auth/login")]["responses"]
        assert "Retry-After" not in login["401"].get("headers", {})  # type: ignore[index]

    def test_the_reads_with_an_etag_declare_it_and_if_none_match(self, client: TestClient) -> None:
        found = operations(client)
        for path in ("/api/v1/forces/{force_id}", "/api/v1/campaigns/{campaign_id}/events"):
            operation: dict[str, Any] = found[("GET", path)]  # type: ignore[assignment]
            for status in ("200", "304"):
                assert "ETag" in operation["responses"][status]["headers"]
            assert "If-None-Match" in [p["name"] for p in operation["parameters"]]

    def test_a_replayed_answer_says_so_as_declared(self, client: TestClient) -> None:
        key = {"Idempotency-Key": "contract-46"}
        first = client.post("/api/v1/campaigns", json={"name": "Once"}, headers=key)
        again = client.post("/api/v1/campaigns", json={"name": "Once"}, headers=key)
        assert first.status_code == again.status_code == 201
        assert "Idempotent-Replayed" not in first.headers
        assert again.headers["Idempotent-Replayed"] == "true"

    def test_the_delivery_log_is_a_page_like_every_list(self, client: TestClient) -> None:
        schema = client.get("/openapi.json").json()
        path = "/api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}/deliveries"
        answer = schema["paths"][path]["get"]["responses"]["200"]["content"]
        ref = answer["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        tokens = schema["paths"]["/api/v1/auth/tokens"]["get"]["responses"]["200"]["content"]
        token_ref = tokens["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        shape = set(schema["components"]["schemas"][ref]["properties"])
        assert shape == set(schema["components"]["schemas"][token_ref]["properties"])
        assert shape == {"items", "limit", "next_cursor", "next"}
        parameters = {p["name"] for p in schema["paths"][path]["get"]["parameters"]}
        assert {"cursor", "limit", "before"} <= parameters


def test_the_contract_is_sent_with_an_etag_and_a_304_for_a_bot_that_holds_it(
    client: TestClient,
) -> None:
    """Issue 50: /openapi.json is made once per process; a generator that fetches it again
    with its ETag gets a 304, another tag the whole contract, compressed or not."""
    first = client.get("/openapi.json")
    assert first.status_code == 200 and first.headers["content-type"] == "application/json"
    assert first.json() == client.app.openapi()  # type: ignore[attr-defined]
    etag = first.headers["ETag"]
    again = client.get("/openapi.json", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.headers["ETag"] == etag and again.content == b""
    other = client.get("/openapi.json", headers={"If-None-Match": '"openapi-0"'})
    assert other.status_code == 200 and other.content == first.content
    plain = client.get("/openapi.json", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.content == first.content
    assert client.get("/docs").status_code == 200


def test_every_app_of_a_process_shares_one_built_contract_but_not_its_copy(
    engine: Engine, monkeypatch: Any
) -> None:
    """Building the schema takes seconds: the second app of a process (the tests make one
    per test) takes the contract the first built, as a copy of its own."""
    first = create_app(engine).openapi()
    built = []
    monkeypatch.setattr(
        fastapi.applications,
        "get_openapi",
        lambda **fields: built.append(fields) or fastapi.openapi.utils.get_openapi(**fields),
    )
    second = create_app(engine)
    assert second.openapi() == first and built == []
    first["info"]["title"] = "changed in the first app's copy"
    assert create_app(engine).openapi()["info"]["title"] == "Crusade tracker"
    assert second.openapi()["info"]["title"] == "Crusade tracker"
