"""examples/feed_bot.py, run as a bot author would: a real server, an API token, the bot as
a separate process following the campaign's feed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import Engine

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
