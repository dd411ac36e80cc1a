"""Account takeover, sessions, token bookkeeping and Idempotency-Keys: the defects a hostile
test found, each held here on SQLite and PostgreSQL."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text
from sqlmodel import select

from app.db.models import ApiToken, Campaign, utcnow
from app.db.session import session_scope
from app.errors import DomainError
from app.main import create_app
from app.services.accounts import idempotency
from tests.api.helpers import account, assert_problem, dump


@pytest.fixture
def app(engine: Engine) -> FastAPI:
    return create_app(engine)


@pytest.fixture
def admin(app: FastAPI) -> Iterator[TestClient]:
    """The install's first account: the site admin."""
    with account(app, "admin") as client:
        yield client


def campaign_run_by(organizer: TestClient, name: str) -> int:
    return int(organizer.post("/api/v1/campaigns", json={"name": name}).json()["id"])


def join(organizer: TestClient, campaign: int, who: TestClient, role: str = "player") -> int:
    code = organizer.post(f"/api/v1/campaigns/{campaign}/invites", json={"role": role}).json()
    member = who.post(f"/api/v1/invites/{code['code']}/accept")
    assert member.status_code == 201, member.text
    return int(member.json()["user_id"])


def reset_link(organizer: TestClient, campaign: int, user_id: int) -> Any:
    return organizer.post(f"/api/v1/campaigns/{campaign}/members/{user_id}/reset-link")


def token_of(link: str) -> str:
    return link.split("token=", 1)[1]


class TestResetLinks:
    """An organizer hands out reset links only for accounts wholly inside their campaigns."""

    @pytest.fixture
    def league(self, app: FastAPI, admin: TestClient) -> dict[str, Any]:
        alice, bob = account(app, "alice"), account(app, "bob")
        first, second = campaign_run_by(alice, "First"), campaign_run_by(bob, "Second")
        return {"alice": alice, "bob": bob, "first": first, "second": second}

    def test_not_for_an_organizer_of_another_campaign(
        self, app: FastAPI, league: dict[str, Any], engine: Engine
    ) -> None:
        bob_id = join(league["alice"], league["first"], league["bob"])
        before = dump(engine)
        refused = reset_link(league["alice"], league["first"], bob_id)
        assert_problem(refused, 403, "reset_needs_site_admin")
        assert "organizes a campaign" in refused.json()["detail"]
        assert dump(engine) == before

    def test_not_for_a_player_who_also_plays_elsewhere(
        self, app: FastAPI, league: dict[str, Any]
    ) -> None:
        carol = account(app, "carol")
        carol_id = join(league["alice"], league["first"], carol)
        join(league["bob"], league["second"], carol)
        refused = reset_link(league["alice"], league["first"], carol_id)
        assert_problem(refused, 403, "reset_needs_site_admin")
        assert "campaign you do not organize" in refused.json()["detail"]

    def test_not_for_a_fellow_organizer(self, app: FastAPI, league: dict[str, Any]) -> None:
        dave = account(app, "dave")
        dave_id = join(league["alice"], league["first"], dave, role="organizer")
        assert_problem(
            reset_link(league["alice"], league["first"], dave_id), 403, "reset_needs_site_admin"
        )

    def test_for_a_player_of_only_their_campaigns(
        self, app: FastAPI, league: dict[str, Any]
    ) -> None:
        erin = account(app, "erin")
        erin_id = join(league["alice"], league["first"], erin)
        assert reset_link(league["alice"], league["first"], erin_id).status_code == 200

    def test_the_site_admin_may_reset_an_organizer(
        self, app: FastAPI, admin: TestClient, league: dict[str, Any]
    ) -> None:
        bob_id = join(league["alice"], league["first"], league["bob"])
        assert reset_link(admin, league["first"], bob_id).status_code == 200


def test_a_reset_ends_every_session_and_revokes_every_token(
    app: FastAPI, admin: TestClient, engine: Engine
) -> None:
    player = account(app, "frank")
    player_id = join(admin, campaign_run_by(admin, "Third"), player)
    token = player.post("/api/v1/auth/tokens", json={"name": "bot", "can_write": True}).json()
    link = reset_link(admin, 1, player_id).json()["link"]
    with TestClient(app) as stranger:
        body = {"token": token_of(link), "new_password": "a brand new password"}
        assert stranger.post("/api/v1/auth/reset-password", json=body).status_code == 200
    assert_problem(player.get("/api/v1/auth/me"), 401, "not_authenticated")
    bearer = {"Authorization": f"Bearer {token['token']}"}
    with TestClient(app) as bot:
        assert_problem(bot.get("/api/v1/auth/me", headers=bearer), 401, "token_invalid")
    with session_scope(engine) as session:
        row = session.exec(select(ApiToken)).one()
        assert row.revoked_at is not None


def test_logging_out_ends_the_session_on_the_server(app: FastAPI, admin: TestClient) -> None:
    copied = admin.cookies.get("crusade_session")
    assert admin.post("/api/v1/auth/logout").status_code == 204
    with TestClient(app, cookies={"crusade_session": copied}) as thief:
        assert_problem(thief.get("/api/v1/auth/me"), 401, "not_authenticated")


def test_logging_out_of_the_website_ends_the_session_too(app: FastAPI, admin: TestClient) -> None:
    copied = admin.cookies.get("crusade_session")
    csrf = admin.get("/account").text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    out = admin.post("/logout", data={"csrf_token": csrf}, follow_redirects=False)
    assert out.status_code == 303
    with TestClient(app, cookies={"crusade_session": copied}) as thief:
        assert_problem(thief.get("/api/v1/auth/me"), 401, "not_authenticated")


def test_a_password_change_ends_other_sessions_but_not_this_one(
    app: FastAPI, admin: TestClient
) -> None:
    other = TestClient(app, cookies={"crusade_session": admin.cookies.get("crusade_session")})
    body = {"current_password": "admin password", "new_password": "another fine password"}
    assert admin.post("/api/v1/auth/password", json=body).status_code == 200
    assert admin.get("/api/v1/auth/me").status_code == 200
    assert_problem(other.get("/api/v1/auth/me"), 401, "not_authenticated")


def test_the_json_password_reset_is_rate_limited(app: FastAPI) -> None:
    with TestClient(app) as guesser:
        body = {"token": "guess", "new_password": "whatever password"}
        answers = [guesser.post("/api/v1/auth/reset-password", json=body) for _ in range(11)]
    assert {a.status_code for a in answers[:10]} == {400}
    assert_problem(answers[10], 429, "rate_limited")


def last_use(engine: Engine) -> Any:
    with engine.connect() as connection:
        return connection.execute(text("SELECT last_used_at FROM api_token")).scalar_one()


def test_a_token_records_its_use_once_a_minute_outside_the_read(
    app: FastAPI, admin: TestClient, engine: Engine
) -> None:
    token = admin.post("/api/v1/auth/tokens", json={"name": "bot"}).json()["token"]
    with TestClient(app, headers={"Authorization": f"Bearer {token}"}) as bot:
        assert bot.get("/api/v1/auth/me").status_code == 200
        first = last_use(engine)
        assert first is not None
        assert bot.get("/api/v1/auth/me").status_code == 200
        assert last_use(engine) == first  # within the minute: nothing written
        with engine.begin() as connection:
            connection.execute(
                text("UPDATE api_token SET last_used_at = :then"),
                {"then": utcnow() - timedelta(minutes=2)},
            )
        assert bot.get("/api/v1/auth/me").status_code == 200
        assert last_use(engine) != first


def test_a_read_only_transaction_refuses_to_write(engine: Engine) -> None:
    with (
        pytest.raises(RuntimeError, match="read-only"),
        session_scope(engine, writes=False) as session,
    ):
        session.add(Campaign(name="Written by a read"))
        session.flush()


# --- Idempotency-Key ---------------------------------------------------------------------


@pytest.fixture
def bot(app: FastAPI, admin: TestClient) -> Iterator[TestClient]:
    """A cookie-less client with a read-write token, so the key's caller is known exactly."""
    token = admin.post("/api/v1/auth/tokens", json={"name": "bot", "can_write": True}).json()
    with TestClient(app, headers={"Authorization": f"Bearer {token['token']}"}) as client:
        yield client


def claim_as(bot: TestClient, engine: Engine, key: str, path: str, body: bytes) -> Any:
    """Claim ``key`` as the bot's request would, as a process that then died would have."""
    caller = bot.headers["Authorization"].encode()
    target = f"POST {path}"
    digest = hashlib.sha256(target.encode() + b"\0" + caller + b"\0" + body).hexdigest()
    return idempotency.claim(engine, idempotency.record_key(caller, key), target, digest)


def age_claims(engine: Engine, seconds: int) -> None:
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE idempotency_record SET created_at = :then"),
            {"then": utcnow() - timedelta(seconds=seconds)},
        )


BODY = json.dumps({"name": "Vigilus"}).encode()
JSON = {"content-type": "application/json"}


def post_campaign(bot: TestClient, key: str) -> Any:
    return bot.post("/api/v1/campaigns", content=BODY, headers={**JSON, "Idempotency-Key": key})


def test_a_claim_left_by_a_dead_process_expires(bot: TestClient, engine: Engine) -> None:
    claim_as(bot, engine, "k1", "/api/v1/campaigns", BODY)
    waiting = assert_problem(post_campaign(bot, "k1"), 409, "idempotency_request_in_progress")
    assert "can be used again in" in waiting["detail"]
    age_claims(engine, idempotency.CLAIM_SECONDS + 1)
    created = post_campaign(bot, "k1")
    assert created.status_code == 201, created.text
    again = post_campaign(bot, "k1")
    assert (again.status_code, again.json()) == (201, created.json())


def test_an_attempt_whose_claim_was_taken_over_cannot_commit(
    bot: TestClient, engine: Engine
) -> None:
    held = claim_as(bot, engine, "k2", "/api/v1/campaigns", BODY)
    age_claims(engine, idempotency.CLAIM_SECONDS + 1)
    assert post_campaign(bot, "k2").status_code == 201  # the retry took the key over
    with pytest.raises(DomainError) as refused, session_scope(engine) as session:
        session.add(Campaign(name="from the slow first attempt"))
        idempotency.mark_committed(session, held)
    assert refused.value.code == "idempotency_claim_lost"
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM campaign")).scalar_one() == 1


def test_a_committed_request_whose_answer_was_lost_is_not_run_again(
    bot: TestClient, engine: Engine
) -> None:
    held = claim_as(bot, engine, "k3", "/api/v1/campaigns", BODY)
    with session_scope(engine) as session:  # committed, then the process died
        session.add(Campaign(name="Vigilus"))
        idempotency.mark_committed(session, held)
    assert_problem(post_campaign(bot, "k3"), 409, "idempotency_request_in_progress")
    age_claims(engine, idempotency.CLAIM_SECONDS + 1)
    assert_problem(post_campaign(bot, "k3"), 409, "idempotency_request_applied")
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM campaign")).scalar_one() == 1


def test_a_server_error_releases_the_key(app: FastAPI, engine: Engine) -> None:
    calls: list[int] = []

    @app.post("/flaky")
    def flaky() -> dict[str, int]:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the first call fails")
        return {"calls": len(calls)}

    with TestClient(app, raise_server_exceptions=False) as client:
        assert client.post("/flaky", headers={"Idempotency-Key": "f"}).status_code == 500
        retried = client.post("/flaky", headers={"Idempotency-Key": "f"})
        assert (retried.status_code, retried.json()) == (200, {"calls": 2})
        replayed = client.post("/flaky", headers={"Idempotency-Key": "f"})
        assert (replayed.json(), replayed.headers["Idempotent-Replayed"]) == ({"calls": 2}, "true")


def test_a_refusal_and_a_redirect_replay_with_their_headers(
    app: FastAPI, admin: TestClient
) -> None:
    csrf = admin.get("/account").text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    form = {"csrf_token": csrf, "name": "Armageddon"}
    headers = {"Idempotency-Key": "web-form"}
    first = admin.post("/campaigns", data=form, headers=headers, follow_redirects=False)
    again = admin.post("/campaigns", data=form, headers=headers, follow_redirects=False)
    assert first.status_code == again.status_code == 303
    assert again.headers["location"] == first.headers["location"]


def test_a_long_key_and_a_long_path_are_refused_cleanly(bot: TestClient, engine: Engine) -> None:
    before = dump(engine)
    long_key = post_campaign(bot, "k" * 201)
    assert_problem(long_key, 422, "idempotency_key_invalid")
    long_path = bot.post("/api/v1/" + "x" * 2000, json={}, headers={"Idempotency-Key": "p"})
    assert long_path.status_code == 404
    assert {k: v for k, v in dump(engine).items() if k != "idempotency_record"} == {
        k: v for k, v in before.items() if k != "idempotency_record"
    }


def test_two_callers_may_use_the_same_key(app: FastAPI, admin: TestClient, bot: TestClient) -> None:
    other = account(app, "other")
    mine = post_campaign(bot, "shared")
    theirs = other.post(
        "/api/v1/campaigns", content=BODY, headers={**JSON, "Idempotency-Key": "shared"}
    )
    assert (mine.status_code, theirs.status_code) == (201, 201)
    assert mine.json()["id"] != theirs.json()["id"]
