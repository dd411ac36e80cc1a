"""Issue 34, a contract a generator reads well: every operation has a chosen operationId,
the schema says what the server checks, and a body that is not JSON (or not UTF-8) is
refused in words a person can act on."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.api.plumbing.operations import OPERATION_IDS
from tests.api.helpers import assert_problem


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
