"""Issue 34, events a bot can post without reading back: the webhook body is the feed's item
(same keys, nulls included, same time format), battle events name their forces, and
``battle_recorded`` says what the battle did to each force and unit."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.services.feed import webhook_worker
from tests.api import test_authorization as authz
from tests.api.receiver import Receiver
from tests.api.test_authorization import battle_between, table  # noqa: F401
from tests.api.test_battle_flow import lord_falls, muster, setup_two_forces
from tests.api.test_bot_friction import captain_ranks_up
from tests.api.test_webhooks import register


def feed_items(client: TestClient, campaign_id: int) -> list[dict[str, Any]]:
    response = client.get(f"/api/v1/campaigns/{campaign_id}/events", params={"limit": 200})
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def a_battle(client: TestClient) -> tuple[dict[str, Any], dict[str, Any]]:
    """Blue wins; its Captain reaches Blooded; Red's Chaos Lord falls and fails its test."""
    world = setup_two_forces(client)
    battle = muster(client, world)
    body = captain_ranks_up(world)
    body["sides"][1] = lord_falls(world)["sides"][1]
    recorded = client.post(f"/api/v1/battles/{battle['id']}/result", json=body)
    assert recorded.status_code == 200, recorded.text
    return world, battle


@pytest.mark.usefixtures("allow_private")
def test_the_webhook_body_is_exactly_the_feed_item(
    client: TestClient,
    engine: Engine,
    receiver: Receiver,
) -> None:
    world = setup_two_forces(client)
    register(client, world["campaign"], receiver.url)
    battle = muster(client, world)
    body = captain_ranks_up(world)
    body["sides"][1] = lord_falls(world)["sides"][1]
    client.post(f"/api/v1/battles/{battle['id']}/result", json=body)
    webhook_worker.run_once(engine)
    sent = [json.loads(r.body) for r in receiver.received]
    items = {e["id"]: e for e in feed_items(client, world["campaign"])}
    assert len(sent) >= 5 and {e["kind"] for e in sent} >= {"battle_recorded", "rank_gained"}
    for event in sent:
        assert event == items[event["id"]]  # keys, nulls, nested details and all
        assert event["created_at"].endswith("Z")
        assert event["card_id"] is None or isinstance(event["card_id"], int)
    assert {"force_id", "card_id", "decision_id", "actor"} <= set(sent[0])


def test_battle_events_name_their_forces(client: TestClient) -> None:
    world, battle = a_battle(client)
    both = [world["blue"], world["red"]]
    items = feed_items(client, world["campaign"])
    for kind in ("battle_mustered", "battle_recorded"):
        [event] = [e for e in items if e["kind"] == kind]
        assert event["force_id"] is None and sorted(event["force_ids"]) == sorted(both)
    rank = next(e for e in items if e["kind"] == "rank_gained")
    assert rank["force_ids"] == [world["blue"]]
    assert battle["id"]


def test_a_confirmed_result_names_its_forces(
    table: dict[str, Any],  # noqa: F811
) -> None:
    battle = battle_between(table, table["ruby"]["client"])
    ruby, joel = table["ruby"], table["joel"]
    body = authz.TestResultConfirmation.BODY(table)
    assert ruby["client"].post(f"/api/v1/battles/{battle}/result", json=body).status_code == 200
    assert joel["client"].post(f"/api/v1/battles/{battle}/confirm").status_code == 200
    items = feed_items(ruby["client"], table["campaign"])
    [confirmed] = [e for e in items if e["kind"] == "result_confirmed"]
    [recorded] = [e for e in items if e["kind"] == "battle_recorded"]
    forces = sorted(s["force_id"] for s in recorded["details"]["sides"])
    assert len(forces) == 2 and sorted(confirmed["force_ids"]) == forces


def test_battle_recorded_says_what_the_battle_did(client: TestClient) -> None:
    world, battle = a_battle(client)
    items = feed_items(client, world["campaign"])
    [event] = [e for e in items if e["kind"] == "battle_recorded"]
    blue, red = event["details"]["sides"]
    force = client.get(f"/api/v1/forces/{world['blue']}").json()
    assert (blue["force_id"], blue["result"], blue["victory_points"]) == (world["blue"], "won", 60)
    assert blue["requisition_points"] == force["requisition_points"]
    assert blue["crusade_points"] == force["crusade_points"]
    captain = next(u for u in blue["units"] if u["card_id"] == world["blue_units"][0]["id"])
    card = next(c for c in force["cards"] if c["id"] == captain["card_id"])
    assert captain == {
        "card_id": card["id"],
        "name": "Captain Severus",
        "xp_gained": card["xp"],
        "xp": card["xp"],
        "rank": "blooded",
        "rank_reached": "blooded",
        "destroyed": False,
        "out_of_action": None,
        "honours_owed": 1,
        "scars_owed": 0,
    }
    assert captain["xp_gained"] >= 6
    assert (red["result"], red["victory_points"]) == ("lost", 10)
    lord = next(u for u in red["units"] if u["card_id"] == world["red_units"][0]["id"])
    assert (lord["destroyed"], lord["out_of_action"], lord["xp_gained"]) == (True, "pending", 0)
    squad = next(u for u in red["units"] if u["card_id"] == world["red_units"][1]["id"])
    assert (squad["destroyed"], squad["out_of_action"], squad["rank_reached"]) == (
        False,
        None,
        None,
    )
    assert [u["card_id"] for u in red["units"]] == [u["id"] for u in world["red_units"]]
    assert battle["id"] == event["battle_id"]


# --- a webhook's format --------------------------------------------------------------------


@pytest.mark.usefixtures("allow_private")
class TestWebhookFormat:
    def test_a_discord_format_webhook_can_be_tried_on_a_local_receiver(
        self,
        client: TestClient,
        engine: Engine,
        receiver: Receiver,
    ) -> None:
        world = setup_two_forces(client)
        hook = register(client, world["campaign"], receiver.url, format="discord")
        assert (hook["format"], hook["discord"]) == ("discord", True)
        muster(client, world)
        webhook_worker.run_once(engine)
        [got] = receiver.received
        message = json.loads(got.body)
        assert set(message) == {"content", "username", "allowed_mentions"}
        assert message["allowed_mentions"] == {"parse": []}
        assert message["content"].startswith("Battle ")

    def test_the_format_defaults_by_host_and_can_be_chosen(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        local = register(client, world["campaign"], "http://127.0.0.1:9/hook")
        discord_url = "https://discord.com/api/webhooks/123/abc"
        discord = register(client, world["campaign"], discord_url)
        plain = register(client, world["campaign"], discord_url, format="generic")
        assert [h["format"] for h in (local, discord, plain)] == ["generic", "discord", "generic"]
        assert [h["discord"] for h in (local, discord, plain)] == [False, True, False]
        listed = client.get(f"/api/v1/campaigns/{world['campaign']}/webhooks").json()
        assert [h["format"] for h in listed] == ["generic", "discord", "generic"]
        refused = client.post(
            f"/api/v1/campaigns/{world['campaign']}/webhooks",
            json={"url": "http://127.0.0.1:9/hook", "format": "slack"},
        )
        assert refused.status_code == 422 and refused.json()["field"] == "format"


def test_every_event_about_a_battle_names_its_forces(
    table: dict[str, Any],  # noqa: F811
) -> None:
    """Found by the walkthrough: a result proposed, disputed, a revert and a report had
    ``force_ids: []``, so a bot filtering by force missed that its battle was reverted."""
    ruby, joel, organizer = table["ruby"], table["joel"], table["organizer"]
    both = sorted([ruby["force"], joel["force"]])
    called_off = battle_between(table, ruby["client"])
    assert ruby["client"].post(f"/api/v1/battles/{called_off}/call-off").status_code == 200
    battle = battle_between(table, ruby["client"])
    body = authz.TestResultConfirmation.BODY(table)
    assert ruby["client"].post(f"/api/v1/battles/{battle}/result", json=body).status_code == 200
    assert joel["client"].post(f"/api/v1/battles/{battle}/dispute").status_code == 200
    assert organizer.post(f"/api/v1/battles/{battle}/confirm").status_code == 200
    story = {"title": "The Fall", "narrative": "It fell."}
    assert ruby["client"].put(f"/api/v1/battles/{battle}/report", json=story).status_code == 200
    assert organizer.post(f"/api/v1/battles/{battle}/revert").status_code == 200
    items = [e for e in feed_items(organizer, table["campaign"]) if e["battle_id"]]
    kinds = {e["kind"] for e in items}
    assert {
        "battle_mustered",
        "result_proposed",
        "result_disputed",
        "battle_called_off",
        "battle_recorded",
        "result_confirmed",
        "report_written",
        "battle_reverted",
    } <= kinds
    for event in items:
        if event["force_id"] is None:
            assert sorted(event["force_ids"]) == both, event
        else:
            assert event["force_ids"] == [event["force_id"]], event
