"""examples/feed_bot.py, run as a bot author would: a real server, an API token, the bot as
a separate process following the campaign's feed."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from app.edge.limits import RateLimits
from app.main import create_app
from tests.api.live import account, serve
from tests.api.test_battle_flow import battle_body

BOT = Path(__file__).resolve().parents[2] / "examples" / "feed_bot.py"


def test_the_example_bot_prints_each_applied_battle(engine: Engine, tmp_path: Path) -> None:
    with serve(engine) as base_url:
        organizer = account(base_url, "bot_owner")
        campaign = organizer.post("/api/v1/campaigns", json={"name": "Vigilus"}).json()["id"]
        world: dict[str, object] = {"campaign": campaign}
        for side, (name, faction) in enumerate((("Ultramarines", "IMPERIUM"), ("Orks", "ORKS"))):
            force = organizer.post(
                f"/api/v1/campaigns/{campaign}/forces",
                json={"name": name, "crusade_faction": faction},
            ).json()["id"]
            card = organizer.post(
                f"/api/v1/forces/{force}/cards",
                json={"name": "Squad", "power_rating": 5, "keywords": [faction]},
            ).json()["id"]
            world["blue" if side == 0 else "red"] = force
            world["blue_units" if side == 0 else "red_units"] = [{"id": card}]
        token = organizer.post(
            "/api/v1/auth/tokens", json={"name": "feed bot", "campaign_id": campaign}
        ).json()["token"]
        state = tmp_path / "cursor"

        def run_bot() -> list[str]:
            command = [sys.executable, str(BOT), "--url", base_url, "--campaign", str(campaign)]
            done = subprocess.run(
                [*command, "--state", str(state), "--once"],
                env={**os.environ, "CRUSADE_TOKEN": token},
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            )
            return done.stdout.splitlines()

        assert run_bot() == []  # nothing fought yet
        battle = organizer.post(
            f"/api/v1/campaigns/{campaign}/battles", json=battle_body(world)
        ).json()["id"]
        result = {
            "sides": [
                {"force_id": world["blue"], "victory_points": 30},
                {"force_id": world["red"], "victory_points": 20},
            ]
        }
        assert organizer.post(f"/api/v1/battles/{battle}/result", json=result).status_code == 200
        assert run_bot() == [f"Battle {battle}: Ultramarines 30 – 20 Orks, Ultramarines won."]
        assert run_bot() == []  # the saved cursor: nothing is printed twice


def load_bot() -> Any:
    spec = importlib.util.spec_from_file_location("feed_bot", BOT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_bot_waits_out_a_429_and_stops_on_a_revoked_token(
    engine: Engine, tmp_path: Path
) -> None:
    """Found by the walkthrough: the bot took every HTTP error for an unreachable server, so
    it retried a revoked token forever and ignored Retry-After."""
    app = create_app(engine)
    app.state.rate_limits = RateLimits(token_requests_per_minute=2)
    with serve(engine, app) as base_url:
        organizer = account(base_url, "bot_owner")
        campaign = organizer.post("/api/v1/campaigns", json={"name": "Vigilus"}).json()["id"]
        made = organizer.post("/api/v1/auth/tokens", json={"name": "bot"}).json()
        url = f"/api/v1/campaigns/{campaign}/events"
        headers = {"Authorization": f"Bearer {made['token']}"}
        for _ in range(2):
            assert organizer.get(url, headers=headers).status_code == 200
        assert organizer.get(url, headers=headers).status_code == 429  # the budget is spent
        bot = load_bot()
        slept: list[float] = []

        def sleep(seconds: float) -> None:
            slept.append(seconds)
            app.state.rate_limits = RateLimits(token_requests_per_minute=2)  # a new minute

        said: list[str] = []
        cursor = bot.follow(
            base_url, campaign, made["token"], once=True, say=said.append, sleep=sleep
        )
        assert len(slept) == 1 and 1 <= slept[0] <= 60
        assert cursor and said == []  # campaign_created is no battle
        assert organizer.delete(f"/api/v1/auth/tokens/{made['id']}").status_code in (200, 204)
        done = subprocess.run(
            [sys.executable, str(BOT), "--url", base_url, "--campaign", str(campaign)],
            env={**os.environ, "CRUSADE_TOKEN": made["token"]},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 1, done.stderr
        assert "the server refused: 401" in done.stderr
