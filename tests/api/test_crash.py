"""The server process is killed (SIGKILL) in the middle of a stream of battle results sent
with Idempotency-Keys, then started again on the same database, on SQLite and PostgreSQL:
no battle is half-applied, and every key either replays its answer or can be retried."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Engine, text

from tests.browser.live import ADMIN, Server, api_sign_up, start_server

BATTLES = 16


def server_on(engine: Engine, folder: Path) -> Server:
    url = engine.url.render_as_string(hide_password=False)
    folder.mkdir()
    return start_server(folder, demo=False, database_url=url)


def bot_for(server: Server, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
    )


def result_for(sides: list[dict[str, Any]]) -> dict[str, Any]:
    first, second = (s["force_id"] for s in sides)
    return {
        "sides": [
            {"force_id": first, "victory_points": 15, "dice": [6] * 12},
            {"force_id": second, "victory_points": 5, "dice": [6] * 12},
        ]
    }


def muster_battles(bot: httpx.Client, campaign: int) -> list[dict[str, Any]]:
    """BATTLES battles, each between two forces of its own (a force fights one at a time)."""
    battles = []
    for i in range(BATTLES):
        sides = []
        for role in ("attacker", "defender"):
            force = bot.post(
                f"/api/v1/campaigns/{campaign}/forces",
                json={"name": f"{role} {i}", "crusade_faction": "IMPERIUM"},
            ).json()["id"]
            card = bot.post(
                f"/api/v1/forces/{force}/cards",
                json={"name": "Squad", "power_rating": 5, "keywords": ["IMPERIUM", "INFANTRY"]},
            ).json()["id"]
            sides.append(
                {"force_id": force, "role": role, "roster": [card], "agendas": ["cull_the_hordes"]}
            )
        body = {"battle_size": "combat_patrol", "mission": "supply_drop", "sides": sides}
        mustered = bot.post(f"/api/v1/campaigns/{campaign}/battles", json=body)
        assert mustered.status_code == 201, mustered.text
        battles.append(mustered.json())
    return battles


def send_results(
    server: Server, token: str, battles: list[dict[str, Any]], answers: list[int]
) -> None:
    """Sends every result with its key until the server dies under it."""
    with bot_for(server, token) as bot:
        for battle in battles:
            try:
                answer = bot.post(
                    f"/api/v1/battles/{battle['id']}/result",
                    json=result_for(battle["sides"]),
                    headers={"Idempotency-Key": f"result-{battle['id']}"},
                )
            except httpx.TransportError:
                return
            answers.append(answer.status_code)


def check_nothing_half_applied(engine: Engine) -> int:
    """Each battle is wholly recorded or not at all; returns how many are recorded."""
    with engine.connect() as db:
        resolved = db.execute(
            text("SELECT count(*) FROM battle WHERE status = 'resolved'")
        ).scalar_one()
        reported = db.execute(
            text(
                "SELECT count(DISTINCT battle_id) FROM battle_side WHERE victory_points IS NOT NULL"
            )
        ).scalar_one()
        tally = db.execute(text("SELECT sum(battle_tally) FROM force")).scalar_one() // 2
        events = db.execute(
            text("SELECT count(*) FROM event WHERE kind = 'battle_resolved'")
        ).scalar_one()
    assert resolved == reported == tally, (resolved, reported, tally)
    assert events in (0, resolved)  # whatever the service records per battle, it is all or nothing
    return int(resolved)


def age_claims(engine: Engine) -> None:
    """As if the claims' expiry time had passed (a minute, in real life)."""
    with engine.begin() as db:
        db.execute(
            text("UPDATE idempotency_record SET created_at = created_at - INTERVAL '1 hour'")
            if engine.dialect.name == "postgresql"
            else text("UPDATE idempotency_record SET created_at = datetime(created_at, '-1 hour')")
        )


def test_a_killed_server_leaves_no_half_battle_and_no_stuck_key(
    engine: Engine, tmp_path: Path
) -> None:
    server = server_on(engine, tmp_path / "first")
    admin = api_sign_up(server.url, ADMIN)
    csrf = {"X-CSRF-Token": admin.get("/api/v1/auth/csrf").json()["csrf_token"]}
    campaign = admin.post("/api/v1/campaigns", json={"name": "Crash"}, headers=csrf).json()["id"]
    token = admin.post(
        "/api/v1/auth/tokens", json={"name": "bot", "can_write": True}, headers=csrf
    ).json()["token"]
    admin.close()
    with bot_for(server, token) as bot:
        battles = muster_battles(bot, campaign)

    answers: list[int] = []
    sender = threading.Thread(target=send_results, args=(server, token, battles, answers))
    sender.start()
    deadline = time.monotonic() + 30
    while len(answers) < BATTLES // 3 and time.monotonic() < deadline:
        time.sleep(0.005)
    server.process.kill()  # SIGKILL: no clean shutdown, mid-request if one is running
    server.process.wait(timeout=10)
    sender.join(timeout=30)
    assert 0 < len(answers) < BATTLES, "the kill should land in the middle of the stream"
    assert set(answers) == {200}
    recorded = check_nothing_half_applied(engine)
    assert recorded >= len(answers)

    server = server_on(engine, tmp_path / "second")
    try:
        with bot_for(server, token) as bot:
            retried = _retry_all(bot, battles)
            assert all(s < 500 for s in retried.values()), retried
            stuck = [b for b, s in retried.items() if s == 409]
            print(f"answered {len(answers)}, recorded {recorded}, stuck claims {len(stuck)}")
            if stuck:  # claims of the dead process: usable again once they expire
                age_claims(engine)
                retried |= _retry_all(bot, [b for b in battles if b["id"] in stuck])
            assert set(retried.values()) <= {200, 409}, retried
            lost = [b for b, s in retried.items() if s == 409]
            for battle_id in lost:  # applied, answer lost: must say so, not run twice
                answer = _retry_all(bot, [b for b in battles if b["id"] == battle_id], full=True)
                assert answer[battle_id]["code"] == "idempotency_request_applied"
    finally:
        server.stop()
    assert check_nothing_half_applied(engine) == BATTLES


def _retry_all(
    bot: httpx.Client, battles: list[dict[str, Any]], full: bool = False
) -> dict[int, Any]:
    answers: dict[int, Any] = {}
    for battle in battles:
        answer = bot.post(
            f"/api/v1/battles/{battle['id']}/result",
            json=result_for(battle["sides"]),
            headers={"Idempotency-Key": f"result-{battle['id']}"},
        )
        answers[battle["id"]] = answer.json() if full else answer.status_code
    return answers
