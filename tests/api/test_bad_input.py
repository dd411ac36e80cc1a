"""Bad input a hostile tester sent: each one must be a 4xx naming the field (problem+json, or
the site's error page with the same status) that changes nothing, never a 500."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.edge.hardening import MAX_BODY
from tests.api.helpers import account, assert_problem, campaign, dump, force, unit

SUPERSCRIPT_ONE = "%C2%B9"  # '¹': str.isdigit() says yes, int() says no
ARABIC_ONE = "%D9%A1"  # '١': int() reads it as 1


def assert_page(response: Any, status: int, words: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert words in response.text


class TestPathIds:
    @pytest.mark.parametrize(
        "raw", [SUPERSCRIPT_ONE, ARABIC_ONE, f"1{SUPERSCRIPT_ONE}", "-1", "0", "00"]
    )
    def test_unicode_digits_in_api_ids_are_refused(self, client: TestClient, raw: str) -> None:
        for path, name in (
            (f"/api/v1/forces/{raw}", "force_id"),
            (f"/api/v1/campaigns/{raw}/standings", "campaign_id"),
            (f"/api/v1/cards/{raw}", "card_id"),
            (f"/api/v1/battles/{raw}", "battle_id"),
            (f"/api/v1/decisions/{raw}", "decision_id"),
        ):
            body = assert_problem(client.get(path), 422, "request_invalid")
            assert body["field"] == f"path.{name}" and name in body["detail"], path

    def test_unicode_digits_in_page_ids_are_refused(self, client: TestClient) -> None:
        for path in (f"/forces/{SUPERSCRIPT_ONE}", f"/campaigns/{ARABIC_ONE}", "/cards/1%C2%B2"):
            assert_page(client.get(path), 422, "must be a whole number")

    def test_the_bounds_are_in_the_openapi_document(self, client: TestClient) -> None:
        schema = client.get("/openapi.json").json()
        ids = [
            p["schema"]
            for operations in schema["paths"].values()
            for operation in operations.values()
            for p in operation.get("parameters", [])
            if p["in"] == "path" and p["schema"].get("type") == "integer"
        ]
        assert ids and all((s["minimum"], s["maximum"]) == (1, 2**31 - 1) for s in ids)

    def test_anonymous_callers_get_the_same_answer(self, anonymous: TestClient) -> None:
        assert_problem(anonymous.get(f"/api/v1/forces/{SUPERSCRIPT_ONE}"), 422, "request_invalid")


class TestMemberIds:
    @pytest.mark.parametrize("user_id", [2**31, 2**63, 2**64])
    def test_huge_member_ids_are_refused(
        self, client: TestClient, engine: Engine, user_id: int
    ) -> None:
        """PostgreSQL refuses ids from 2^31, SQLite from 2^63: both were 500s."""
        campaign_id = campaign(client)
        before = dump(engine)
        members = f"/api/v1/campaigns/{campaign_id}/members/{user_id}"
        for response in (client.delete(members), client.post(f"{members}/reset-link")):
            body = assert_problem(response, 422, "request_invalid")
            assert body["field"] == "path.user_id"
        page = f"/campaigns/{campaign_id}/members/{user_id}"
        for response in (client.post(f"{page}/remove"), client.post(f"{page}/reset-link")):
            assert_page(response, 422, "user_id")
        assert dump(engine) == before

    def test_an_id_below_the_bound_is_simply_not_found(self, client: TestClient) -> None:
        response = client.delete(f"/api/v1/campaigns/{campaign(client)}/members/{2**31 - 1}")
        assert response.status_code == 404, response.text


class TestExportNames:
    @pytest.mark.parametrize("name", ["Крестовый поход", "十字军", "War für Vigilus"])
    def test_a_non_latin_name_downloads(self, client: TestClient, name: str) -> None:
        got = client.get(f"/api/v1/campaigns/{campaign(client, name)}/export")
        assert got.status_code == 200, got.text
        disposition = got.headers["content-disposition"]
        slug = "-".join(name.lower().split())
        assert f"filename*=UTF-8''{quote(slug)}-" in disposition
        fallback = disposition.split('filename="')[1].split('"')[0]
        assert fallback.isascii() and fallback.endswith(".json") and fallback[0].isalpha()
        assert got.json()["campaign"]["name"] == name


class TestNulCharacters:
    """U+0000 cannot be stored in a PostgreSQL text column; on SQLite it was stored."""

    def test_json_bodies(self, client: TestClient, engine: Engine) -> None:
        force_id = force(client, campaign(client))
        before = dump(engine)
        created = client.post("/api/v1/campaigns", json={"name": "War\x00"})
        body = assert_problem(created, 422, "text_invalid")
        assert body["field"] == "name" and "name" in body["detail"]
        nested = client.post(
            f"/api/v1/forces/{force_id}/cards",
            json={"name": "Squad", "power_rating": 5, "keywords": ["IMPERIUM", "\x00"]},
        )
        assert assert_problem(nested, 422, "text_invalid")["field"] == "keywords.1"
        escaped = client.patch(
            f"/api/v1/forces/{force_id}",
            content=b'{"notes": "a\\u0000b"}',
            headers={"content-type": "application/json"},
        )
        assert assert_problem(escaped, 422, "text_invalid")["field"] == "notes"
        assert dump(engine) == before

    def test_an_escaped_backslash_before_u0000_is_only_text(self, client: TestClient) -> None:
        response = client.post("/api/v1/campaigns", json={"name": "C:\\u0000"})
        assert response.status_code == 201 and response.json()["name"] == "C:\\u0000"

    def test_the_login_form_and_the_api_login(self, anonymous: TestClient, engine: Engine) -> None:
        before = dump(engine)
        page = anonymous.post("/login", data={"username": "orga\x00", "password": "a password"})
        assert_page(page, 422, "username")
        api = anonymous.post(
            "/api/v1/auth/login", json={"username": "orga\x00", "password": "a password"}
        )
        assert assert_problem(api, 422, "text_invalid")["field"] == "username"
        assert dump(engine) == before

    def test_query_strings_and_paths(self, client: TestClient, engine: Engine) -> None:
        before = dump(engine)
        query = client.get("/api/v1/rules/missions?battle_size=strike%00force")
        assert assert_problem(query, 422, "text_invalid")["field"] == "battle_size"
        path = client.post("/api/v1/invites/ab%00cd/accept")
        assert assert_problem(path, 422, "text_invalid")["field"] == "path"
        assert dump(engine) == before


def chunks(size: int, piece: int = 8 * 1024) -> Iterator[bytes]:
    """A body sent chunked: a generator gives no Content-Length to declare."""
    yield b'{"name": "'
    for _ in range(size // piece):
        yield b"x" * piece
    yield b'"}'


class TestChunkedBodies:
    @pytest.mark.parametrize("headers", [{}, {"Idempotency-Key": "chunked-1"}])
    def test_an_oversized_chunked_body_is_refused(
        self, client: TestClient, engine: Engine, headers: dict[str, str]
    ) -> None:
        before = dump(engine)
        response = client.post(
            "/api/v1/campaigns",
            content=chunks(MAX_BODY + 16 * 1024),
            headers={"content-type": "application/json", **headers},
        )
        assert "content-length" not in response.request.headers
        assert_problem(response, 413, "request_too_large")
        assert dump(engine) == before

    def test_a_small_chunked_body_still_reaches_the_route(self, client: TestClient) -> None:
        response = client.post(
            "/api/v1/campaigns",
            content=(c for c in (b'{"name": ', b'"Chunked"}')),
            headers={"content-type": "application/json", "Idempotency-Key": "chunked-2"},
        )
        assert response.status_code == 201 and response.json()["name"] == "Chunked"


class TestMusterAcrossCampaigns:
    def test_a_force_of_another_campaign_is_not_named(
        self, client: TestClient, engine: Engine
    ) -> None:
        """Ruby plays in Vigilus; a private campaign she is not in has a force named
        'Secret Host'. Mustering with its id answers as for an id that does not exist."""
        vigilus = campaign(client, "Vigilus")
        ruby = account(client.app, "ruby")
        code = client.post(f"/api/v1/campaigns/{vigilus}/invites", json={}).json()["code"]
        assert ruby.post(f"/api/v1/invites/{code}/accept").status_code == 201
        mine = ruby.post(
            f"/api/v1/campaigns/{vigilus}/forces",
            json={"name": "Ruby's Host", "crusade_faction": "IMPERIUM"},
        ).json()["id"]
        card = unit(ruby, mine)["id"]
        secret = force(client, campaign(client, "Hidden war"), name="Secret Host")
        before = dump(engine)

        def muster(other: int) -> Any:
            return ruby.post(
                f"/api/v1/campaigns/{vigilus}/battles",
                json={
                    "battle_size": "combat_patrol",
                    "mission": "sweep_and_clear",
                    "sides": [
                        {"force_id": mine, "role": "attacker", "roster": [card], "agendas": []},
                        {"force_id": other, "role": "defender", "roster": [1], "agendas": []},
                    ],
                },
            )

        foreign, missing = muster(secret), muster(9999)
        assert "Secret Host" not in foreign.text
        body = assert_problem(foreign, 404, "force_not_found")
        assert body["field"] == "sides"
        unknown = assert_problem(missing, 404, "force_not_found")["detail"]
        assert body["detail"] == unknown.replace("9999", str(secret))
        assert dump(engine) == before


class TestCampaignLimitedTokens:
    def test_it_lists_only_its_campaign(self, client: TestClient) -> None:
        mine, other = campaign(client, "Vigilus"), campaign(client, "Armageddon")
        client.patch(f"/api/v1/campaigns/{other}", json={"public": True})
        token = client.post(
            "/api/v1/auth/tokens", json={"name": "bot", "campaign_id": mine}
        ).json()["token"]
        bot = TestClient(client.app, headers={"Authorization": f"Bearer {token}"})
        listed = bot.get("/api/v1/campaigns").json()
        assert [c["id"] for c in listed["items"]] == [mine] and listed["next"] is None
        assert {c["id"] for c in client.get("/api/v1/campaigns").json()["items"]} == {
            mine,
            other,
        }


def test_a_file_part_may_hold_nul_bytes_but_a_text_part_may_not(client: TestClient) -> None:
    """Binary uploads (a zipped roster) carry NUL bytes; text fields beside them may not."""
    upload = {"file": ("army.rosz", b"PK\x03\x04\x00\x00binary", "application/zip")}
    passed = client.post("/api/v1/campaigns", files=upload, data={"note": "fine"})
    assert passed.status_code != 422 or passed.json()["code"] != "text_invalid"
    refused = client.post("/api/v1/campaigns", files=upload, data={"note": "bad\x00"})
    assert_problem(refused, 422, "text_invalid")
    assert refused.json()["field"] == "note"
