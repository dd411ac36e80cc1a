"""Every API route, taken from the app itself, for five kinds of caller: anonymous, a
stranger, a player of another force, the owning player and the organizer. Each gets the
answer its route's rule promises, and a refused request changes nothing."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy import Engine

from app.api.plumbing.route_access import POLICIES, api_operations, policy_for
from app.main import create_app
from app.services.accounts.access import Access
from tests.api.helpers import account, dump
from tests.conftest import Snapshots

CALLERS = ("anonymous", "stranger", "other_player", "owner", "organizer")
ALLOWED: dict[Access, tuple[str, ...]] = {
    Access.PUBLIC: CALLERS,
    Access.USER: CALLERS[1:],
    Access.CAMPAIGN_READ: ("other_player", "owner", "organizer"),
    Access.CAMPAIGN_PLAY: ("other_player", "owner", "organizer"),
    Access.CAMPAIGN_ORGANIZE: ("organizer",),
    Access.FORCE_OWN: ("owner", "organizer"),
    Access.BATTLE_PLAY: ("owner", "organizer"),
    Access.BATTLE_ORGANIZE: ("organizer",),
}
OPERATIONS = sorted(api_operations(create_app()))
HOUSE_RULES = Path(__file__).resolve().parents[2] / "examples" / "packs" / "house-rules.yaml"
ACCESS_REFUSALS = {"not_authenticated", "forbidden", "csrf_token_invalid"}


def world(client: TestClient) -> dict[str, Any]:
    """The site admin is `client`; a separate organizer runs the campaign, so no caller below
    is an admin. Ruby (the owner) and Kim (another player) have forces; Ruby has fought a
    battle against Joel and has a decision waiting."""
    app = client.app
    organizer = account(app, "orga2")
    campaign = organizer.post("/api/v1/campaigns", json={"name": "Matrix"}).json()["id"]
    # A public address (never sent to: no worker runs here); later events give it deliveries.
    webhook = organizer.post(
        f"/api/v1/campaigns/{campaign}/webhooks", json={"url": "http://93.184.215.14/hook"}
    ).json()["id"]
    players: dict[str, Any] = {}
    for name, faction in (("ruby", "IMPERIUM"), ("joel", "CHAOS"), ("kim", "ORKS")):
        player = account(app, name)
        code = organizer.post(f"/api/v1/campaigns/{campaign}/invites", json={}).json()["code"]
        player.post(f"/api/v1/invites/{code}/accept")
        force = player.post(
            f"/api/v1/campaigns/{campaign}/forces", json={"name": name, "crusade_faction": faction}
        ).json()["id"]
        card = player.post(
            f"/api/v1/forces/{force}/cards",
            json={"name": "Squad", "power_rating": 5, "keywords": [faction]},
        ).json()["id"]
        players[name] = {"client": player, "force": force, "card": card}
    ruby, joel = players["ruby"], players["joel"]
    battle = organizer.post(
        f"/api/v1/campaigns/{campaign}/battles",
        json={
            "battle_size": "combat_patrol",
            "mission": "sweep_and_clear",
            "sides": [
                {
                    "force_id": ruby["force"],
                    "role": "attacker",
                    "roster": [ruby["card"]],
                    "agendas": ["assassins"],
                },
                {
                    "force_id": joel["force"],
                    "role": "defender",
                    "roster": [joel["card"]],
                    "agendas": ["cull_the_hordes"],
                },
            ],
        },
    ).json()["id"]
    organizer.post(
        f"/api/v1/battles/{battle}/result",
        json={
            "sides": [
                {
                    "force_id": ruby["force"],
                    "victory_points": 5,
                    "units": [{"card_id": ruby["card"], "destroyed": True}],
                    "dice": [1],
                },
                {"force_id": joel["force"], "victory_points": 50},
            ]
        },
    )
    decision = (
        ruby["client"].get(f"/api/v1/forces/{ruby['force']}/decisions").json()["items"][0]["id"]
    )
    token = ruby["client"].post("/api/v1/auth/tokens", json={"name": "bot"}).json()["id"]
    invite = organizer.post(f"/api/v1/campaigns/{campaign}/invites", json={}).json()["code"]
    kim_id = next(
        m["user_id"]
        for m in organizer.get(f"/api/v1/campaigns/{campaign}/members").json()["items"]
        if m["username"] == "kim"
    )
    delivery = organizer.get(f"/api/v1/campaigns/{campaign}/webhooks/{webhook}/deliveries")
    picture = io.BytesIO()
    Image.new("RGB", (40, 30)).save(picture, "PNG")
    photo = organizer.post(
        f"/api/v1/battles/{battle}/photos", files={"file": ("a.png", picture.getvalue())}
    )
    assert photo.status_code == 201, photo.text
    territory = organizer.post(f"/api/v1/campaigns/{campaign}/territories", json={"name": "Vigil"})
    assert territory.status_code == 201, territory.text
    pack = organizer.post(
        f"/api/v1/campaigns/{campaign}/rule-packs",
        files={"file": ("house-rules.yaml", HOUSE_RULES.read_bytes(), "application/yaml")},
    )
    assert pack.status_code == 201, pack.text
    return {
        "callers": {
            "anonymous": TestClient(app),
            "stranger": account(app, "stranger"),
            "other_player": players["kim"]["client"],
            "owner": ruby["client"],
            "organizer": organizer,
        },
        "params": {
            "campaign_id": campaign,
            "force_id": ruby["force"],
            "card_id": ruby["card"],
            "battle_id": battle,
            "decision_id": decision,
            "token_id": token,
            "user_id": kim_id,
            "code": invite,
            "mission_id": "ambush",
            "unit_type": "vehicle",
            "weapon_type": "melee",
            "webhook_id": webhook,
            "delivery_id": delivery.json()["items"][0]["id"],
            "photo_id": photo.json()["id"],
            "width": 40,
            "territory_id": territory.json()["id"],
            "pack_id": pack.json()["pack_id"],
        },
    }


def test_the_matrix_covers_every_rule() -> None:
    assert {(m, p) for m, p in OPERATIONS if not p.startswith("/api/v1/rules")} == set(POLICIES)


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_every_route_for_every_caller(
    method: str, path: str, client: TestClient, engine: Engine, snapshots: Snapshots
) -> None:
    # The world is made once per backend, then restored from a snapshot of the database.
    setup = snapshots.prepared(
        engine, "authorization matrix", lambda: world(client), lambda: TestClient(client.app)
    )
    url = path.format(**setup["params"])
    allowed = ALLOWED[policy_for(method, path)]
    for caller in CALLERS:  # refused callers come first, before any allowed call changes things
        before = dump(engine) if caller not in allowed else None
        kwargs: dict[str, Any] = {"json": {}} if method in ("POST", "PATCH") else {}
        response = setup["callers"][caller].request(method, url, **kwargs)
        json_body = response.headers.get("content-type", "").endswith("json")
        body = response.json() if response.content and json_body else None
        code = body.get("code") if isinstance(body, dict) else None
        if caller in allowed:
            # The rules may still refuse it (409, 422, or a 403 such as an invite-only
            # campaign); what matters is that access control did not.
            assert code not in ACCESS_REFUSALS, f"{caller}: {response.text}"
            assert response.status_code < 500, f"{caller}: {response.text}"
        else:
            expected = 401 if caller == "anonymous" else 403
            assert response.status_code == expected, f"{caller}: {response.text}"
            assert code in ACCESS_REFUSALS
            assert response.headers["content-type"] == "application/problem+json"
            assert dump(engine) == before, f"{caller}'s refused {method} changed the database"
