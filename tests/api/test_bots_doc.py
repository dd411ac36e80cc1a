"""docs/bots.md says what the code does: its code examples run, its numbers are the code's,
every event kind, webhook format and battle_recorded field is named, every path it shows
exists, and the decision answers it shows are accepted (on both engines)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from app.api import events as feed_route
from app.config import Settings
from app.edge.limits import RateLimits
from app.edge.schemas.battles import NamedDice
from app.edge.schemas.decisions import DecisionAnswer
from app.services.feed import webhook_worker, webhooks
from app.services.feed.feed_items import ForceOutcome, UnitOutcome
from tests.api.test_battle_flow import lord_falls, muster, setup_two_forces
from tests.api.test_bot_friction import captain_ranks_up

DOC = (Path(__file__).resolve().parents[2] / "docs" / "bots.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, flags=re.DOTALL)


def named(word: str) -> bool:
    return f"`{word}`" in DOC


def test_the_signature_check_shown_accepts_what_the_server_signs() -> None:
    [code] = [b for b in blocks("python") if "def verify_signature" in b]
    scope: dict[str, Any] = {}
    exec(compile(code, "docs/bots.md", "exec"), scope)
    body = b'{"id": 7, "kind": "battle_recorded"}'
    header = webhook_worker.signature("the secret", body)
    assert scope["verify_signature"]("the secret", body, header)
    assert not scope["verify_signature"]("another secret", body, header)
    assert not scope["verify_signature"]("the secret", body + b" ", header)
    expected = hmac.new(b"the secret", body, hashlib.sha256).hexdigest()
    assert header == f"sha256={expected}"


def test_the_json_examples_are_what_the_api_takes() -> None:
    [dice] = [json.loads("{" + b + "}") for b in blocks("json") if '"rolls"' in b]
    NamedDice.model_validate(dice["dice"])


def test_the_numbers_are_the_codes() -> None:
    limits = RateLimits()
    per_minute = Settings.model_fields["api_token_requests_per_minute"].default
    assert f"**{per_minute} requests in any minute**" in DOC
    assert f"RateLimit-Limit: {per_minute}" in DOC
    assert f"The {per_minute + 1}st request within a\nminute is the first refused" in DOC
    assert (limits.login.amount, limits.token.amount) == (10, 10)
    assert "Log-in and token creation keep their own\nlimits (10 a minute)" in DOC
    assert webhook_worker.FIRST_RETRY.total_seconds() == 30
    assert webhook_worker.LONGEST_WAIT.total_seconds() == 3600
    assert webhook_worker.GIVE_UP_AFTER.days == 1
    assert "after\n30 s, then doubling up to once an hour, for a day" in DOC
    assert webhook_worker.TIMEOUT_SECONDS == 5
    assert "(within 5 s)" in DOC
    assert feed_route.MAX_WAIT == 60
    assert "`wait` (seconds, at most 60)" in DOC
    assert (feed_route.WOKEN_COLLECT_SECONDS, feed_route.COLLECT_SECONDS) == (0.05, 0.1)
    assert "server answers\n  0.05 s after an event is committed" in DOC
    assert "newest events answers\n  0.1 s after it came" in DOC
    assert feed_route.KEEPING_UP.total_seconds() == 1
    assert "committed in the\nsecond before it came" in DOC


def test_every_event_kind_and_webhook_format_is_named() -> None:
    missing = [kind for kind in webhooks.KINDS if not named(kind)]
    assert missing == []
    assert all(named(fmt) for fmt in webhooks.FORMATS)
    assert named("decision_cancelled") and named("battle_reverted")


def test_every_field_of_what_a_battle_did_is_named() -> None:
    fields = set(ForceOutcome.model_fields) | set(UnitOutcome.model_fields)
    missing = [f for f in sorted(fields - {"force_id", "card_id", "units"}) if not named(f)]
    assert missing == []


def test_every_path_shown_exists(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    shown = set(re.findall(r"(?:GET |POST |DELETE |PATCH |PUT |8000)(/api/v1/[^\s?`'\"]+)", DOC))
    assert len(shown) >= 5
    templates = [re.sub(r"\{[^}]+\}", "[^/]+", p) for p in schema["paths"]]
    for path in shown:
        path = re.sub(r"\{[^}]+\}", "1", path.replace("...", "1"))
        assert any(re.fullmatch(t, path) for t in templates), path


def answers_shown() -> dict[str, dict[str, Any]]:
    """The first JSON answer of each row of the table under "Answering decisions"."""
    table = DOC.split("### Answering decisions", 1)[1].split("\n\n")[2]
    found = {}
    for row in table.splitlines()[2:]:
        kind = re.match(r"\| `(\w+)` \|", row)
        body = re.search(r"`(\{.*?\})`", row)
        assert kind and body, row
        found[kind.group(1)] = json.loads(body.group(1))
    return found


def test_the_decision_answers_shown_are_accepted(client: TestClient) -> None:
    shown = answers_shown()
    assert set(shown) == {"out_of_action", "battle_scar", "battle_honour", "victor_bonus"}
    for body in shown.values():
        DecisionAnswer.model_validate(body)
    world = setup_two_forces(client)
    battle = muster(client, world)
    result = captain_ranks_up(world)
    result["sides"][1] = lord_falls(world)["sides"][1]
    assert client.post(f"/api/v1/battles/{battle['id']}/result", json=result).status_code == 200

    def pending(force_id: int, kind: str) -> int:
        items = client.get(f"/api/v1/forces/{force_id}/decisions").json()["items"]
        return int(next(d["id"] for d in items if d["kind"] == kind))

    def answer(decision_id: int, body: dict[str, Any]) -> dict[str, Any]:
        answered = client.post(f"/api/v1/decisions/{decision_id}/answer", json=body)
        assert answered.status_code == 200, answered.text
        return dict(answered.json())

    scar = dict(shown["out_of_action"], consequence="battle_scar")
    answer(pending(world["red"], "out_of_action"), scar)
    assert answer(pending(world["red"], "battle_scar"), shown["battle_scar"])["answer"]["gained"]
    honour = answer(pending(world["blue"], "battle_honour"), shown["battle_honour"])
    assert honour["answer"]["gained"][0].split(":")[1] == shown["battle_honour"]["category"]
