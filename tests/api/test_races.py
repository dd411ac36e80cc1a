"""N identical requests at the same moment, against a real server on SQLite and on
PostgreSQL: exactly one takes effect, the others get a clear 4xx, and none answers 5xx."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, text

from app.config import get_settings
from app.services.feed import webhooks
from tests.api.live import PASSWORD, account, at_once, serve, statuses
from tests.api.test_battle_flow import battle_body, lord_falls, setup_two_forces

N = 10


@pytest.fixture
def base_url(engine: Engine) -> Iterator[str]:
    with serve(engine) as url:
        yield url


@pytest.fixture
def orga(base_url: str) -> Iterator[httpx.Client]:
    """The install's first account (site admin), who organizes the campaigns below."""
    client = account(base_url, "orga")
    yield client
    client.close()


def count(engine: Engine, sql: str) -> int:
    with engine.connect() as connection:
        return int(connection.execute(text(sql)).scalar_one())


def test_one_username_taken_once(base_url: str, engine: Engine) -> None:
    def sign_up() -> httpx.Response:
        body = {"username": "ruby", "password": PASSWORD}
        return httpx.post(f"{base_url}/api/v1/auth/signup", json=body, timeout=60)

    answers = at_once([sign_up] * N)
    assert statuses(answers) == [201] + [409] * (N - 1)
    assert {r.json()["code"] for r in answers if r.status_code == 409} == {"username_taken"}
    assert count(engine, "SELECT count(*) FROM user_account") == 1


def test_first_sign_ups_make_exactly_one_site_admin(base_url: str, engine: Engine) -> None:
    def sign_up(name: str) -> Any:
        return lambda: httpx.post(
            f"{base_url}/api/v1/auth/signup",
            json={"username": name, "password": PASSWORD},
            timeout=60,
        )

    answers = at_once([sign_up(f"player{i}") for i in range(N)])
    assert statuses(answers) == [201] * N
    assert [r.json()["is_admin"] for r in answers].count(True) == 1
    assert count(engine, "SELECT count(*) FROM user_account WHERE is_admin") == 1


def test_joining_an_open_campaign_twice_at_once(
    base_url: str, orga: httpx.Client, engine: Engine
) -> None:
    campaign = orga.post("/api/v1/campaigns", json={"name": "Open war"}).json()["id"]
    orga.patch(f"/api/v1/campaigns/{campaign}", json={"join_policy": "open"}).raise_for_status()
    kai = account(base_url, "kai")
    answers = at_once([lambda: kai.post(f"/api/v1/campaigns/{campaign}/join")] * N)
    kai.close()
    assert statuses(answers) == [201] + [409] * (N - 1)
    assert count(engine, f"SELECT count(*) FROM campaign_member WHERE campaign_id={campaign}") == 2


def test_a_single_use_invite_admits_one(base_url: str, orga: httpx.Client, engine: Engine) -> None:
    campaign = orga.post("/api/v1/campaigns", json={"name": "Closed war"}).json()["id"]
    code = orga.post(f"/api/v1/campaigns/{campaign}/invites", json={"max_uses": 1}).json()["code"]
    players = [account(base_url, f"player{i}") for i in range(N)]
    answers = at_once([lambda p=p: p.post(f"/api/v1/invites/{code}/accept") for p in players])
    for player in players:
        player.close()
    assert statuses(answers) == [201] + [410] * (N - 1)
    assert count(engine, f"SELECT count(*) FROM campaign_member WHERE campaign_id={campaign}") == 2
    assert count(engine, "SELECT uses FROM invite") == 1


def test_a_result_is_recorded_once(orga: httpx.Client, engine: Engine) -> None:
    world = setup_two_forces(orga)  # type: ignore[arg-type]
    battle = orga.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=battle_body(world))
    result = {
        "sides": [
            {"force_id": world["blue"], "victory_points": 20},
            {"force_id": world["red"], "victory_points": 10},
        ]
    }
    url = f"/api/v1/battles/{battle.json()['id']}/result"
    answers = at_once([lambda: orga.post(url, json=result)] * N)
    assert statuses(answers) == [200] + [409] * (N - 1)
    assert orga.get(f"/api/v1/forces/{world['blue']}").json()["battle_tally"] == 1
    assert count(engine, "SELECT count(*) FROM event WHERE kind = 'battle_resolved'") <= 1


def test_a_keyed_purchase_is_made_once(orga: httpx.Client, engine: Engine) -> None:
    world = setup_two_forces(orga)  # type: ignore[arg-type]
    url = f"/api/v1/forces/{world['blue']}/requisitions"
    body = {"requisition": "increase_supply_limit"}
    headers = {"Idempotency-Key": "buy-once"}
    answers = at_once([lambda: orga.post(url, json=body, headers=headers)] * N)
    assert set(statuses(answers)) <= {201, 409}, [r.text for r in answers]
    assert 201 in statuses(answers)
    assert count(engine, "SELECT count(*) FROM requisitionpurchase") == 1
    assert orga.get(f"/api/v1/forces/{world['blue']}").json()["requisition_points"] == 4
    again = orga.post(url, json=body, headers=headers)  # once settled, a retry replays
    assert (again.status_code, again.headers.get("Idempotent-Replayed")) == (201, "true")


def test_a_decision_is_answered_once(orga: httpx.Client, engine: Engine) -> None:
    world = setup_two_forces(orga)  # type: ignore[arg-type]
    battle = orga.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=battle_body(world))
    orga.post(f"/api/v1/battles/{battle.json()['id']}/result", json=lord_falls(world))
    decision = orga.get(f"/api/v1/forces/{world['red']}/decisions").json()["items"][0]
    url = f"/api/v1/decisions/{decision['id']}/answer"
    answers = at_once([lambda: orga.post(url, json={"consequence": "battle_scar"})] * N)
    assert statuses(answers)[0] == 200
    assert all(400 <= s < 500 for s in statuses(answers)[1:]), [r.text for r in answers]
    assert count(engine, "SELECT count(*) FROM decision WHERE kind = 'battle_scar'") == 1


def test_keyed_writes_at_once_answer_and_replay(orga: httpx.Client, engine: Engine) -> None:
    """Distinct keys racing for the write lock: every one answers its real response, and a
    retry of each replays it (never a 500, never a key stuck 'in progress')."""

    def create(i: int) -> Any:
        return lambda: orga.post(
            "/api/v1/campaigns", json={"name": f"War {i}"}, headers={"Idempotency-Key": f"k{i}"}
        )

    first = at_once([create(i) for i in range(N)])
    assert statuses(first) == [201] * N, [r.text for r in first]
    retried = at_once([create(i) for i in range(N)])
    assert [r.json() for r in retried] == [r.json() for r in first]
    assert {r.headers.get("Idempotent-Replayed") for r in retried} == {"true"}
    assert count(engine, "SELECT count(*) FROM campaign") == N


def test_reads_with_a_token_never_fail_while_others_write(
    base_url: str, orga: httpx.Client
) -> None:
    """Bearer-token reads recorded the token's use inside the read: on SQLite nearly every
    one failed with 'database is locked' while two clients wrote."""
    world = setup_two_forces(orga)  # type: ignore[arg-type]
    token = orga.post("/api/v1/auth/tokens", json={"name": "bot"}).json()["token"]
    bot = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=60)

    def write(i: int) -> Any:
        body = {"name": f"Squad {i}", "power_rating": 1, "keywords": ["IMPERIUM"]}
        return lambda: orga.post(f"/api/v1/forces/{world['blue']}/cards", json=body)

    def read() -> httpx.Response:
        return bot.get(f"/api/v1/forces/{world['blue']}")

    answers = at_once([write(i) if i % 3 == 0 else read for i in range(30)])
    bot.close()
    assert all(r.status_code < 500 for r in answers), [
        r.text for r in answers if r.status_code >= 500
    ]
    assert statuses(answers).count(200) == 20


def test_batches_at_once_stay_within_the_supply_limit(
    base_url: str, orga: httpx.Client, engine: Engine
) -> None:
    """N rosters of two units (30 Power together) for a force with 40 free: one joins whole,
    every other is refused whole (no unit of it added), none answers 5xx."""
    world = setup_two_forces(orga)  # type: ignore[arg-type]
    force_id = world["blue"]

    def batch(i: int) -> Any:
        units = [
            {"name": f"Squad {i}a", "power_rating": 15, "keywords": ["IMPERIUM"]},
            {"name": f"Squad {i}b", "power_rating": 15, "keywords": ["IMPERIUM"]},
        ]
        return lambda: orga.post(f"/api/v1/forces/{force_id}/cards/batch", json={"units": units})

    answers = at_once([batch(i) for i in range(N)])
    assert statuses(answers) == [201] + [422] * (N - 1)
    assert {r.json()["field"] for r in answers if r.status_code == 422} == {"units[0].power_rating"}
    added = count(engine, f"SELECT count(*) FROM crusade_card WHERE force_id={force_id}")
    assert added == 2 + 2


def test_parallel_webhook_registrations_stay_within_the_limit(
    orga: httpx.Client, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19: on PostgreSQL, 15 parallel registrations all counted 9 and all got in."""
    monkeypatch.setenv("WEBHOOK_ALLOW_PRIVATE", "true")  # the targets are on loopback
    get_settings.cache_clear()
    try:
        campaign = orga.post("/api/v1/campaigns", json={"name": "Hooked"}).json()["id"]
        url = f"/api/v1/campaigns/{campaign}/webhooks"
        for i in range(webhooks.MAX_PER_CAMPAIGN - 1):
            orga.post(url, json={"url": f"http://127.0.0.1:9/{i}"}).raise_for_status()
        answers = at_once([lambda: orga.post(url, json={"url": "http://127.0.0.1:9/x"})] * N)
    finally:
        get_settings.cache_clear()
    assert statuses(answers) == [201] + [409] * (N - 1)
    sql = f"SELECT count(*) FROM webhook WHERE campaign_id={campaign}"
    assert count(engine, sql) == webhooks.MAX_PER_CAMPAIGN
