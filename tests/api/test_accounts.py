"""Accounts: sign-up, log in/out, password change and reset, API tokens."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session

from app.config import get_settings, secret_key
from app.edge.sessions import TokenUses
from app.services.accounts import accounts
from tests.api.helpers import assert_problem, dump
from tests.conftest import with_csrf

ALICE = {"username": "alice", "password": "correct horse battery", "display_name": "Alice"}


def sign_up(anonymous: TestClient, **body: str) -> dict[str, object]:
    response = anonymous.post("/api/v1/auth/signup", json={**ALICE, **body})
    assert response.status_code == 201, response.text
    with_csrf(anonymous)
    return dict(response.json())


def test_first_account_is_the_admin_and_is_logged_in(anonymous: TestClient) -> None:
    alice = sign_up(anonymous)
    assert alice["is_admin"] is True
    assert anonymous.get("/api/v1/auth/me").json()["username"] == "alice"
    anonymous.cookies.clear()
    bob = sign_up(anonymous, username="bob")
    assert bob["is_admin"] is False


def test_cookie_is_httponly_and_samesite(anonymous: TestClient) -> None:
    response = anonymous.post("/api/v1/auth/signup", json=ALICE)
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie


def test_wrong_password_and_unknown_user_look_the_same(anonymous: TestClient) -> None:
    sign_up(anonymous)
    anonymous.cookies.clear()
    wrong = anonymous.post(
        "/api/v1/auth/login", json={"username": "alice", "password": "nope nope nope"}
    )
    unknown = anonymous.post(
        "/api/v1/auth/login", json={"username": "zed", "password": "nope nope nope"}
    )
    assert assert_problem(wrong, 401, "invalid_credentials") == assert_problem(
        unknown, 401, "invalid_credentials"
    )
    assert_problem(anonymous.get("/api/v1/auth/me"), 401, "not_authenticated")


def test_bad_sign_ups_change_nothing(anonymous: TestClient, engine: Engine) -> None:
    sign_up(anonymous)
    before = dump(engine)
    assert_problem(anonymous.post("/api/v1/auth/signup", json={**ALICE}), 409, "username_taken")
    assert_problem(
        anonymous.post("/api/v1/auth/signup", json={**ALICE, "username": "B!"}),
        422,
        "username_invalid",
    )
    assert_problem(
        anonymous.post(
            "/api/v1/auth/signup", json={**ALICE, "username": "carol", "password": "short"}
        ),
        422,
        "password_length",
    )
    assert dump(engine) == before


def test_logout_ends_the_session(anonymous: TestClient) -> None:
    sign_up(anonymous)
    assert anonymous.post("/api/v1/auth/logout").status_code == 204
    assert_problem(anonymous.get("/api/v1/auth/me"), 401, "not_authenticated")


def test_password_change_ends_other_sessions(anonymous: TestClient) -> None:
    sign_up(anonymous)
    old_cookie = anonymous.cookies.get("crusade_session")
    changed = anonymous.post(
        "/api/v1/auth/password",
        json={"current_password": ALICE["password"], "new_password": "a brand new secret"},
    )
    assert changed.status_code == 200
    assert anonymous.get("/api/v1/auth/me").status_code == 200  # this session was renewed
    anonymous.cookies.set("crusade_session", old_cookie or "")
    assert_problem(anonymous.get("/api/v1/auth/me"), 401, "not_authenticated")
    login = anonymous.post(
        "/api/v1/auth/login", json={"username": "alice", "password": "a brand new secret"}
    )
    assert login.status_code == 200


def test_reset_link_works_once(anonymous: TestClient, engine: Engine) -> None:
    sign_up(anonymous)
    with Session(engine) as session:
        token = accounts.reset_token(
            accounts.get_user(session, "alice"), secret_key(get_settings())
        )
    body = {"token": token, "new_password": "reset to this one"}
    assert anonymous.post("/api/v1/auth/reset-password", json=body).status_code == 200
    assert_problem(
        anonymous.post("/api/v1/auth/reset-password", json=body), 400, "reset_link_invalid"
    )
    assert_problem(
        anonymous.post("/api/v1/auth/reset-password", json={**body, "token": "forged"}),
        400,
        "reset_link_invalid",
    )


def test_api_tokens_shown_once_stored_hashed_and_revocable(
    anonymous: TestClient, engine: Engine
) -> None:
    sign_up(anonymous)
    created = anonymous.post(
        "/api/v1/auth/tokens", json={"name": "discord bot", "can_write": True}
    ).json()
    plain = created["token"]
    assert plain.startswith("crt_") and created["prefix"] == plain[:12]
    assert "token" not in anonymous.get("/api/v1/auth/tokens").json()["items"][0]
    assert plain not in str(dump(engine))
    anonymous.cookies.clear()
    bot = {"Authorization": f"Bearer {plain}"}
    assert anonymous.get("/api/v1/auth/me", headers=bot).json()["username"] == "alice"
    anonymous.post("/api/v1/auth/login", json={"username": "alice", "password": ALICE["password"]})
    with_csrf(anonymous)
    listed = anonymous.get("/api/v1/auth/tokens").json()["items"][0]
    assert listed["last_used_at"] is not None
    anonymous.delete(f"/api/v1/auth/tokens/{created['id']}")
    anonymous.cookies.clear()
    assert_problem(anonymous.get("/api/v1/auth/me", headers=bot), 401, "token_invalid")
    assert_problem(
        anonymous.get("/api/v1/auth/me", headers={"Authorization": "Bearer crt_made_up"}),
        401,
        "token_invalid",
    )


def test_api_tokens_are_paged_by_key(anonymous: TestClient) -> None:
    sign_up(anonymous)
    ids = [
        anonymous.post("/api/v1/auth/tokens", json={"name": f"bot {n}"}).json()["id"]
        for n in range(5)
    ]
    seen, address = [], "/api/v1/auth/tokens?limit=2"
    while address:
        response = anonymous.get(address)
        page = response.json()
        assert response.status_code == 200 and len(page["items"]) in (1, 2)
        if page["next"]:
            assert response.headers["Link"] == f'<{page["next"]}>; rel="next"'
        seen += [t["id"] for t in page["items"]]
        address = page["next"]
    assert seen == ids  # oldest first, each once
    assert_problem(anonymous.get("/api/v1/auth/tokens?limit=0"), 422, "request_invalid")


def test_a_tokens_use_is_planned_once_until_recorded_or_forgotten() -> None:
    """Requests that see the same stale 'last used' plan one write between them; the write
    done, the next stale sight plans again; a plan nobody ran is forgotten after a while."""
    now = [1000.0]
    uses = TokenUses(clock=lambda: now[0])
    assert uses.plan(7) and not uses.plan(7) and uses.plan(8)
    uses.done(7)
    assert uses.plan(7)
    now[0] += TokenUses.FORGET_AFTER_SECONDS - 1
    assert not uses.plan(8)
    now[0] += 2
    assert uses.plan(8)
