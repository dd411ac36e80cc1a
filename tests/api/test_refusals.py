"""Every refused command answers a clear 4xx problem and leaves the database exactly as it
was (a dump of every table before and after is compared)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import dump, unit
from tests.api.test_battle_flow import battle_body, muster, setup_two_forces

World = dict[str, Any]


def recorded(client: TestClient, world: World, *, red_dice: list[int] | None = None) -> int:
    """A battle whose result is recorded; Red's Lord is destroyed (dice decide his test)."""
    battle = muster(client, world)
    lord = world["red_units"][0]["id"]
    red: dict[str, Any] = {
        "force_id": world["red"],
        "victory_points": 10,
        "units": [{"card_id": lord, "destroyed": True}],
    }
    if red_dice is not None:
        red["dice"] = red_dice
    response = client.post(
        f"/api/v1/battles/{battle['id']}/result",
        json={"sides": [{"force_id": world["blue"], "victory_points": 30}, red]},
    )
    assert response.status_code == 200, response.text
    return int(battle["id"])


def red_decision(client: TestClient, world: World) -> int:
    recorded(client, world, red_dice=[1])
    return int(client.get(f"/api/v1/forces/{world['red']}/decisions").json()["items"][0]["id"])


Case = Callable[[TestClient, World], Any]

CASES: dict[str, tuple[Case, int, str]] = {
    "unknown battle size": (
        lambda c, w: c.post(
            f"/api/v1/campaigns/{w['campaign']}/battles",
            json=battle_body(w, battle_size="apocalypse"),
        ),
        422,
        "battle_size_unknown",
    ),
    "mission of another size": (
        lambda c, w: c.post(
            f"/api/v1/campaigns/{w['campaign']}/battles", json=battle_body(w, mission="ambush")
        ),
        422,
        "mission_not_for_battle_size",
    ),
    "wrong number of agendas for the size": (
        lambda c, w: c.post(
            f"/api/v1/campaigns/{w['campaign']}/battles",
            json=battle_body(w, battle_size="incursion", mission="sabotage"),
        ),
        422,
        "agenda_count",
    ),
    "same force twice": (
        lambda c, w: c.post(
            f"/api/v1/campaigns/{w['campaign']}/battles",
            json=battle_body(
                w,
                sides=[
                    battle_body(w)["sides"][0],
                    {**battle_body(w)["sides"][0], "role": "defender"},
                ],
            ),
        ),
        422,
        "battle_needs_two_forces",
    ),
    "roster unit from another force": (
        lambda c, w: c.post(
            f"/api/v1/campaigns/{w['campaign']}/battles",
            json=battle_body(
                w,
                sides=[
                    {**battle_body(w)["sides"][0], "roster": [w["red_units"][0]["id"]]},
                    battle_body(w)["sides"][1],
                ],
            ),
        ),
        422,
        "unit_not_in_order_of_battle",
    ),
    "force already in a battle": (
        lambda c, w: (
            muster(c, w),
            c.post(f"/api/v1/campaigns/{w['campaign']}/battles", json=battle_body(w)),
        )[1],
        409,
        "battle_in_progress",
    ),
    "requisition during a battle": (
        lambda c, w: (
            muster(c, w),
            c.post(
                f"/api/v1/forces/{w['blue']}/requisitions",
                json={"requisition": "increase_supply_limit"},
            ),
        )[1],
        422,
        "requisition_during_battle",
    ),
    "result recorded twice": (
        lambda c, w: c.post(
            f"/api/v1/battles/{recorded(c, w)}/result",
            json={
                "sides": [
                    {"force_id": w["blue"], "victory_points": 1},
                    {"force_id": w["red"], "victory_points": 1},
                ]
            },
        ),
        409,
        "battle_already_recorded",
    ),
    "result for a unit not on the roster": (
        lambda c, w: c.post(
            f"/api/v1/battles/{muster(c, w)['id']}/result",
            json={
                "sides": [
                    {
                        "force_id": w["blue"],
                        "victory_points": 1,
                        "units": [{"card_id": w["red_units"][0]["id"]}],
                    },
                    {"force_id": w["red"], "victory_points": 1},
                ]
            },
        ),
        422,
        "unit_not_in_roster",
    ),
    "entered dice run out": (
        lambda c, w: c.post(
            f"/api/v1/battles/{muster(c, w)['id']}/result",
            json={
                "sides": [
                    {
                        "force_id": w["blue"],
                        "victory_points": 1,
                        "units": [{"card_id": w["blue_units"][1]["id"], "destroyed": True}],
                        "dice": [],
                    },
                    {"force_id": w["red"], "victory_points": 1},
                ]
            },
        ),
        422,
        "dice_missing",
    ),
    "two units marked for greatness": (
        lambda c, w: c.post(
            f"/api/v1/battles/{muster(c, w)['id']}/result",
            json={
                "sides": [
                    {"force_id": w["blue"], "victory_points": 1},
                    {
                        "force_id": w["red"],
                        "victory_points": 1,
                        "units": [
                            {"card_id": u["id"], "marked_for_greatness": True}
                            for u in w["red_units"]
                        ],
                    },
                ]
            },
        ),
        422,
        "marked_for_greatness_limit",
    ),
    "agenda tally for an agenda not chosen": (
        lambda c, w: c.post(
            f"/api/v1/battles/{muster(c, w)['id']}/result",
            json={
                "sides": [
                    {
                        "force_id": w["blue"],
                        "victory_points": 1,
                        "units": [
                            {
                                "card_id": w["blue_units"][0]["id"],
                                "agenda_tallies": {"titan_hunter": 1},
                            }
                        ],
                    },
                    {"force_id": w["red"], "victory_points": 1},
                ]
            },
        ),
        422,
        "agenda_not_selected",
    ),
    "decision answered without its choice": (
        lambda c, w: c.post(f"/api/v1/decisions/{red_decision(c, w)}/answer", json={}),
        422,
        "decision_answer_incomplete",
    ),
    "decision answered twice": (
        lambda c, w: (
            d := red_decision(c, w),
            c.post(
                f"/api/v1/decisions/{d}/answer",
                json={"consequence": "devastating_blow", "dice": [3]},
            ),
            c.post(f"/api/v1/decisions/{d}/answer", json={"consequence": "battle_scar"}),
        )[2],
        409,
        "decision_already_answered",
    ),
    "revert blocked by a requisition bought after": (
        lambda c, w: (
            b := recorded(c, w, red_dice=[4]),
            c.post(
                f"/api/v1/forces/{w['blue']}/requisitions",
                json={"requisition": "increase_supply_limit"},
            ),
            c.post(f"/api/v1/battles/{b}/revert"),
        )[2],
        409,
        "battle_revert_blocked",
    ),
    "requisition without enough RP": (
        lambda c, w: [
            c.post(
                f"/api/v1/forces/{w['blue']}/requisitions",
                json={"requisition": "increase_supply_limit"},
            )
            for _ in range(6)
        ][-1],
        422,
        "requisition_points_insufficient",
    ),
    "fresh recruits on a character": (
        lambda c, w: c.post(
            f"/api/v1/forces/{w['blue']}/requisitions",
            json={
                "requisition": "fresh_recruits",
                "card_id": w["blue_units"][0]["id"],
                "new_power_rating": 8,
            },
        ),
        422,
        "requisition_target_invalid",
    ),
    "relic requisition on a card being added that is no character": (
        lambda c, w: c.post(
            f"/api/v1/forces/{w['blue']}/cards",
            json={
                "name": "Scouts",
                "power_rating": 3,
                "keywords": ["IMPERIUM"],
                "requisitions": [{"requisition": "relic", "relic": "The Armour Indomitus"}],
            },
        ),
        422,
        "requisition_target_invalid",
    ),
    "unknown decision": (
        lambda c, w: c.post("/api/v1/decisions/999/answer", json={}),
        404,
        "decision_not_found",
    ),
    "unknown battle": (lambda c, w: c.post("/api/v1/battles/999/revert"), 404, "battle_not_found"),
    "oversized victory points": (
        lambda c, w: c.post(
            f"/api/v1/battles/{muster(c, w)['id']}/result",
            json={
                "sides": [
                    {"force_id": w["blue"], "victory_points": 5000},
                    {"force_id": w["red"], "victory_points": 1},
                ]
            },
        ),
        422,
        "request_invalid",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_refused_and_nothing_changed(name: str, client: TestClient, engine: Engine) -> None:
    world = setup_two_forces(client)
    unit(client, world["blue"], "Spare Squad", 5)
    action, status, code = CASES[name]
    snapshots: list[Any] = []
    original_post = client.post

    def post_and_remember(*args: Any, **kwargs: Any) -> Any:
        snapshots.append(dump(engine))
        return original_post(*args, **kwargs)

    client.post = post_and_remember  # type: ignore[method-assign]
    try:
        response = action(client, world)
    finally:
        client.post = original_post  # type: ignore[method-assign]
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == code
    assert body["detail"]
    assert dump(engine) == snapshots[-1]  # the refused (last) command changed nothing
