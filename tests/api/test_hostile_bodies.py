"""Hostile request bodies (issue 45): the large upload allowance only for a caller the route
lets in, decided before the body is read; a budget of body bytes held at once; a least rate
for a body; JSON nested past a bound refused, never a 500; NUL found without parsing a large
body. Small versions of the attacks of bench/upload_bench.py, which measures them at size."""

from __future__ import annotations

import io
import select
import socket
from collections.abc import Iterator
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy import Engine

from app.config import Settings
from app.edge.bodies import BodyLimits
from app.edge.hardening import MAX_BODY
from app.main import create_app
from tests.api.helpers import assert_problem, dump
from tests.api.live import serve
from tests.api.test_battle_flow import muster, setup_two_forces
from tests.api.test_battle_photos import photo_files
from tests.hostile_images import multipart


@pytest.fixture
def battle(client: TestClient) -> dict[str, Any]:
    return muster(client, setup_two_forces(client))


def large_photo() -> bytes:
    """A JPEG of noise, past the small body limit (a phone photo is megabytes)."""
    out = io.BytesIO()
    Image.effect_noise((700, 500), 80).convert("RGB").save(out, "JPEG", quality=95)
    data = out.getvalue()
    assert len(data) > MAX_BODY
    return data


class Pulled:
    """A body sent in chunks, counting how many the server asked for."""

    def __init__(self, data: bytes, chunk: int = 64 * 1024) -> None:
        self.data, self.chunk, self.count = data, chunk, 0

    def __iter__(self) -> Iterator[bytes]:
        for at in range(0, len(self.data), self.chunk):
            self.count += 1
            yield self.data[at : at + self.chunk]


def post_photo(
    client: TestClient, battle: dict[str, Any], data: bytes, *, web: bool = False
) -> tuple[Any, Pulled]:
    """A multipart photo upload with its length declared, the body sent in chunks."""
    body = multipart(
        "xYzZy",
        [
            ('Content-Disposition: form-data; name="file"; filename="a.jpg"', data),
            ('Content-Disposition: form-data; name="caption"', b"Turn 3"),
        ],
    )
    pulled = Pulled(body)
    prefix = "" if web else "/api/v1"
    answer = client.post(
        f"{prefix}/battles/{battle['id']}/photos",
        content=pulled,
        headers={
            "Content-Type": "multipart/form-data; boundary=xYzZy",
            "Content-Length": str(len(body)),
        },
    )
    return answer, pulled


def stranger(client: TestClient) -> TestClient:
    """Another account, in no campaign, with its CSRF header."""
    other = TestClient(client.app)
    signed = other.post(
        "/api/v1/auth/signup", json={"username": "stranger", "password": "stranger password"}
    )
    assert signed.status_code == 201, signed.text
    other.headers["X-CSRF-Token"] = other.get("/api/v1/auth/csrf").json()["csrf_token"]
    return other


def limits(client: TestClient, **changes: Any) -> None:
    client.app.state.body_limits = replace(client.app.state.body_limits, **changes)  # type: ignore[attr-defined]


# --- the large allowance --------------------------------------------------------------------


class TestTheLargeAllowance:
    def test_only_a_player_of_the_battle_may_send_a_large_photo(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        """Anonymous, a stranger to the campaign, a read-only token: refused from the
        declared length, before a byte of the body is read. The player's upload is taken."""
        photo = large_photo()
        anonymous = TestClient(client.app)
        token = client.post("/api/v1/auth/tokens", json={"name": "bot", "can_write": False})
        bot = TestClient(client.app, headers={"Authorization": f"Bearer {token.json()['token']}"})
        callers = (anonymous, stranger(client), bot)
        before, files = dump(engine), photo_files()
        for caller in callers:
            answer, pulled = post_photo(caller, battle, photo)
            detail = assert_problem(answer, 413, "request_too_large")["detail"]
            assert "player of the battle" in detail
            assert pulled.count == 0  # never read
        page, pulled = post_photo(anonymous, battle, photo, web=True)
        assert page.status_code == 413 and pulled.count == 0
        assert dump(engine) == before and photo_files() == files
        taken, pulled = post_photo(client, battle, photo)
        assert taken.status_code == 201, taken.text
        assert pulled.count > 1

    def test_a_small_upload_still_gets_the_routes_own_answer(
        self, client: TestClient, battle: dict[str, Any]
    ) -> None:
        answer, _ = post_photo(TestClient(client.app), battle, b"tiny")
        assert_problem(answer, 401, "not_authenticated")

    def test_a_json_or_form_body_to_the_photo_route_keeps_the_small_limit(
        self, client: TestClient, battle: dict[str, Any]
    ) -> None:
        """The attack of issue 45: a JSON array of 0.5s ending in "\\u0000", or a form of
        empty pairs ending in %00, to the photo route with no account: once read and parsed
        in full (a 422 after seconds); now refused from its length, even for a player."""
        count = MAX_BODY // 3 + 1
        json_bomb = b"[" + b"0.5," * count + b'"\\u0000"]'
        form_bomb = b"a=&" * count + b"z=%00"
        url = f"/api/v1/battles/{battle['id']}/photos"
        for caller in (TestClient(client.app), client):
            for body, kind in (
                (json_bomb, "application/json"),
                (form_bomb, "application/x-www-form-urlencoded"),
            ):
                answer = caller.post(url, content=body, headers={"Content-Type": kind})
                assert_problem(answer, 413, "request_too_large")

    def test_a_chunked_body_is_held_to_the_small_limit_too(
        self, client: TestClient, battle: dict[str, Any]
    ) -> None:
        """No declared length: counted as it comes, and cut past the small limit."""
        pulled = Pulled(b"[" + b"0.5," * MAX_BODY + b"0]")
        answer = TestClient(client.app).post(
            f"/api/v1/battles/{battle['id']}/photos",
            content=pulled,
            headers={"Content-Type": "multipart/form-data; boundary=x"},
        )
        assert_problem(answer, 413, "request_too_large")


# --- the budget and the least rate ----------------------------------------------------------


class TestBodiesHeldAtOnce:
    def test_an_upload_past_the_budget_waits_its_turn_while_small_bodies_get_in(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        photo = large_photo()
        limits(client, in_flight=8 * len(photo))
        budget = client.app.state.body_budget  # type: ignore[attr-defined]
        budget.held = 6 * len(photo)  # other uploads are being read: their 3/4 is taken
        before = dump(engine)
        busy, pulled = post_photo(client, battle, photo)
        assert_problem(busy, 503, "server_busy")
        assert busy.headers["Retry-After"] == "2" and pulled.count == 0
        assert dump(engine) == before
        small = client.patch(
            f"/api/v1/campaigns/{battle['campaign_id']}", json={"description": "Still here"}
        )
        assert small.status_code == 200, small.text  # a small body still gets in
        assert budget.held == 6 * len(photo)  # each request gave back what it took
        budget.held = 0
        taken, _ = post_photo(client, battle, photo)
        assert taken.status_code == 201, taken.text
        assert budget.held == 0

    def test_one_account_takes_at_most_half_of_the_uploads_share(
        self, client: TestClient, engine: Engine, battle: dict[str, Any]
    ) -> None:
        """One member sending many uploads at once holds at most half of what uploads may
        hold: the rest stays for the other members."""
        photo = large_photo()
        limits(client, in_flight=16 * len(photo))  # uploads: 12 photos; one account: 6
        budget = client.app.state.body_budget  # type: ignore[attr-defined]
        me = client.get("/api/v1/auth/me").json()["id"]
        budget.held = budget.by_account[me] = 5 * len(photo)
        before = dump(engine)
        mine, _ = post_photo(client, battle, photo)
        assert "one account's uploads" in assert_problem(mine, 503, "server_busy")["detail"]
        assert dump(engine) == before
        budget.by_account = {me + 1: 5 * len(photo)}  # someone else's: room is left for me
        taken, _ = post_photo(client, battle, photo)
        assert taken.status_code == 201, taken.text
        assert budget.held == 5 * len(photo) and budget.by_account == {me + 1: 5 * len(photo)}

    def test_a_body_larger_than_the_whole_budget_is_too_large(
        self, client: TestClient, battle: dict[str, Any]
    ) -> None:
        photo = large_photo()
        limits(client, in_flight=len(photo))
        answer, pulled = post_photo(client, battle, photo)
        assert_problem(answer, 413, "request_too_large")
        assert pulled.count == 0


def sent_slowly(url: str, first: bytes, then: bytes, pause: float) -> bytes:
    """A POST whose body starts with ``first``, then comes as ``then`` every ``pause``
    seconds (nothing more when empty) until the server answers; its answer's first bytes."""
    address = urlsplit(url)
    assert address.hostname is not None and address.port is not None
    with socket.create_connection((address.hostname, address.port), timeout=20) as sock:
        sock.sendall(
            b"POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\nContent-Length: 5000\r\n\r\n" + first
        )
        for _ in range(400):  # 20 s at most
            if select.select([sock], [], [], pause)[0]:
                return sock.recv(65536)
            if then:
                sock.sendall(then)
        return b""


class TestTheLeastRate:
    def test_a_trickled_body_and_a_stopped_one_are_cut(self, engine: Engine) -> None:
        """On a real server: a body trickled a byte at a time, and one that stops coming,
        are answered 408 once a span past the grace brings too few bytes; the budget they
        held is given back, and others are served."""
        app = create_app(engine)
        app.state.body_limits = replace(app.state.body_limits, min_rate=1000, rate_seconds=0.2)
        with serve(engine, app) as url:
            trickled = sent_slowly(url, b'{"username": "', b"x", 0.05)
            stopped = sent_slowly(url, b'{"username": "', b"", 0.05)
            with httpx.Client(base_url=url, timeout=20) as http:
                honest = http.post("/api/v1/auth/login", json={"username": "a", "password": "b"})
        for answer in (trickled, stopped):
            assert answer.startswith(b"HTTP/1.1 408"), answer[:300]
            assert b"request_too_slow" in answer
        assert honest.status_code == 401, honest.text
        assert app.state.body_budget.held == 0


def test_the_limits_are_settings_an_operator_tunes() -> None:
    settings = Settings(
        body_bytes_in_flight_mb=64,
        body_min_bytes_per_second=0,
        body_rate_seconds=30,
        json_max_depth=16,
    )
    limits = BodyLimits.from_settings(settings)
    assert limits.in_flight == 64 * 1024 * 1024 and limits.large_in_flight == 48 * 1024 * 1024
    assert limits.one_account == 24 * 1024 * 1024
    assert (limits.min_rate, limits.rate_seconds, limits.json_depth) == (0, 30, 16)
    with pytest.raises(ValueError):
        Settings(json_max_depth=0)


# --- JSON nested past the bound --------------------------------------------------------------


class TestDeepJson:
    def test_the_login_with_100000_brackets_and_a_nul_is_a_422(
        self, anonymous: TestClient, engine: Engine
    ) -> None:
        """Issue 45: a RecursionError in the NUL check, a 500."""
        before = dump(engine)
        deep = b"[" * 100_000 + b'"\\u0000"' + b"]" * 100_000
        for body, kind in ((deep, "application/json"), (deep, "text/plain"), (deep, None)):
            headers = {"Content-Type": kind} if kind else {}
            answer = anonymous.post("/api/v1/auth/login", content=body, headers=headers)
            assert answer.status_code == 422, answer.text
            assert answer.json()["code"] in ("json_too_deep", "text_invalid")
        plain = anonymous.post(
            "/api/v1/auth/login",
            content=b"[" * 100_000 + b"]" * 100_000,
            headers={"Content-Type": "application/json"},
        )
        assert assert_problem(plain, 422, "json_too_deep")["field"] == "body"
        assert dump(engine) == before

    def test_brackets_inside_strings_do_not_count(self, client: TestClient) -> None:
        name = "[{" * 40
        created = client.post("/api/v1/campaigns", json={"name": name})
        assert created.status_code == 201, created.text
        assert created.json()["name"] == name

    @pytest.mark.parametrize(
        ("body", "deeper"),
        [
            (b"[" * 65 + b"]" * 65, True),
            (b"[" * 64 + b"]" * 64, False),
            (b'["' + b"[" * 100 + b'"]', False),
            (b'["\\"' + b"[" * 100 + b'"]', False),  # an escaped quote does not end it
            (b'["\\\\"' + b"[" * 100, True),  # an escaped backslash does
            (b'"' + b"[" * 100, False),  # a string running to the end
            (b'"\\"\\"\\"' * 10_000 + b"[" * 100, False),  # one string: read once
            (b"{" * 30 + b"[" * 35 + b"0", True),
        ],
    )
    def test_the_depth_is_read_without_parsing(self, body: bytes, deeper: bool) -> None:
        from app.edge.hardening import nests_deeper_than

        assert nests_deeper_than(body, 64) is deeper


# --- NUL found without parsing a large body ---------------------------------------------------


class TestNulWithoutParsing:
    def test_a_form_names_the_field_from_a_byte_search(self, anonymous: TestClient) -> None:
        """A form's NUL is found by a byte search, the field named from its pair alone."""
        body = b"a=&" * 20_000 + b"user%6Eame=orga%00&password=x"
        answer = anonymous.post(
            "/login", content=body, headers={"Content-Type": "application/x-www-form-urlencoded"}
        )
        assert answer.status_code == 422 and "username" in answer.text
        api = anonymous.post(
            "/api/v1/auth/login",
            content=b"a=&" * 20_000 + b"z=%00",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert assert_problem(api, 422, "text_invalid")["field"] == "z"
