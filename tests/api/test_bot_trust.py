"""Issue 34, trust: a player's text never pings or formats a Discord server, a decision offers
only what its answer accepts (and one that nothing can take lapses instead of holding the
player's musters), a cancelled decision says so, and a long poll with an ETag waits."""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlalchemy.orm.attributes import flag_modified
from sqlmodel import Session, col, select

from app.db.models import Card, Event
from app.services.feed import events, webhook_worker
from tests.api.helpers import assert_problem, campaign, force
from tests.api.test_battle_flow import (
    battle_body,
    lord_falls,
    muster,
    reapers,
    setup_two_forces,
)
from tests.api.test_bot_friction import captain_ranks_up

DISCORD = "https://discord.com/api/webhooks/123/abc"


def discord_message(engine: Engine, kind: str) -> dict[str, Any]:
    """What a Discord webhook is sent for the newest event of a kind."""
    with Session(engine) as session:
        row = session.exec(
            select(Event).where(Event.kind == kind).order_by(col(Event.id).desc())
        ).first()
        assert row is not None and row.id is not None
        event = events.one_event(session, row.id)
        embed = webhook_worker.story_embed(session, DISCORD, event)
        return dict(json.loads(webhook_worker.body_for(DISCORD, event, embed=embed)))


class TestDiscordShowsWhatPlayersTyped:
    def test_a_force_named_at_everyone_pings_nobody(
        self, client: TestClient, engine: Engine
    ) -> None:
        campaign_id = campaign(client)
        force(client, campaign_id, "@everyone **Free** [loot](https://evil.example) _now_")
        message = discord_message(engine, "force_created")
        assert message["allowed_mentions"] == {"parse": []}
        assert message["content"] == (
            r"\@everyone \*\*Free\*\* \[loot\](https\://evil.example) \_now\_ joined the crusade."
        )

    def test_every_discord_message_carries_no_mentions(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        battle = muster(client, world)
        client.post(f"/api/v1/battles/{battle['id']}/result", json=lord_falls(world))
        with Session(engine) as session:
            ids = session.exec(select(Event.id)).all()
            for event_id in ids:
                body = webhook_worker.body_for(DISCORD, events.one_event(session, int(event_id)))
                assert json.loads(body)["allowed_mentions"] == {"parse": []}

    def test_a_story_card_shows_its_markdown_as_typed(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        battle = muster(client, world)
        client.post(f"/api/v1/battles/{battle['id']}/result", json=lord_falls(world))
        story = {
            "title": "# <@&123> ||spoiler||",
            "narrative": "> quoted\n- a list\n1. first\n[click](https://evil.example) `code`",
        }
        assert client.put(f"/api/v1/battles/{battle['id']}/report", json=story).status_code == 200
        message = discord_message(engine, "report_written")
        assert message["allowed_mentions"] == {"parse": []}
        [card] = message["embeds"]
        assert card["title"] == r"\# \<\@&123> \|\|spoiler\|\|"
        assert card["description"].endswith(
            "\\> quoted\n\\- a list\n1\\. first\n\\[click\\](https\\://evil.example) \\`code\\`"
        )

    def test_a_bare_address_stays_text(self) -> None:
        """Issue 45: Discord links (and unfurls) a bare ``https://...`` a player typed; the
        escaped colon shows the same characters and links nothing."""
        text = "raid at https://evil.example/x or HTTP://b.example, not at 10:30"
        shown = webhook_worker.discord_text(text, 200)
        assert shown == "raid at https\\://evil.example/x or HTTP\\://b.example, not at 10:30"
        assert re.search(r"[A-Za-z]://", shown) is None  # nothing Discord would link

    def test_a_long_text_is_cut_without_half_an_escape(self) -> None:
        text = webhook_worker.discord_text("a" * 8 + "*" * 10, 10)
        assert text == "aaaaaaaa…" and len(text) <= 10
        assert webhook_worker.discord_text("aaaaaaa" + "*" * 10, 10) == "aaaaaaa\\*…"


# --- decisions: what they offer is what their answer accepts ------------------------------


def decisions_of(client: TestClient, force_id: int, status: str = "pending") -> Any:
    response = client.get(f"/api/v1/forces/{force_id}/decisions", params={"status": status})
    assert response.status_code == 200, response.text
    return response.json()["items"]


def answer(client: TestClient, decision_id: int, body: dict[str, Any]) -> Any:
    return client.post(f"/api/v1/decisions/{decision_id}/answer", json=body)


def relic_ids(client: TestClient) -> list[str]:
    relics = client.get("/api/v1/rules/crusade-relics")
    assert relics.status_code == 200, relics.text
    return [r["id"] for r in relics.json()["relics"]]


def honour_answers(client: TestClient, category: str, card: dict[str, Any]) -> list[Any]:
    """Answers that take an honour of ``category`` for ``card``, one of which the rules
    should accept if the category is offered."""
    if category == "weapon_enhancement":
        return [{"category": category, "weapon": {"model": card["name"], "weapon": "Bolt pistol"}}]
    if category == "crusade_relic":
        return [{"category": category, "entries": [r]} for r in relic_ids(client)]
    return [{"category": category}]


def accepted(client: TestClient, decision_id: int, answers: list[Any]) -> bool:
    return any(answer(client, decision_id, body).status_code == 200 for body in answers)


def exfiltration(client: TestClient, world: dict[str, Any], both: bool = True) -> dict[str, Any]:
    """Behind Enemy Lines won by Blue with its Captain and squad exfiltrated: a victor bonus
    Battle Honour for one of them."""
    sides = battle_body(world)["sides"]
    sides[0]["agendas"] = ["assassins", "secure_the_area"]
    sides[1]["agendas"] = ["cull_the_hordes", "secure_the_area"]
    battle = muster(
        client, world, battle_size="incursion", mission="behind_enemy_lines", sides=sides
    )
    captain, squad = (u["id"] for u in world["blue_units"])
    units = [{"card_id": squad, "exfiltrated": True}]
    if both:
        units.append({"card_id": captain, "exfiltrated": True})
    body = {
        "sides": [
            {"force_id": world["blue"], "victory_points": 40, "units": units},
            {"force_id": world["red"], "victory_points": 10},
        ]
    }
    response = client.post(f"/api/v1/battles/{battle['id']}/result", json=body)
    assert response.status_code == 200, response.text
    [bonus] = [d for d in decisions_of(client, world["blue"]) if d["card_id"] is None]
    return dict(bonus)


def fill_honours(engine: Engine, card_id: int) -> None:
    """Give a unit the six Battle Honours a unit may hold at most (as other decisions could)."""
    with Session(engine) as session:
        card = session.get(Card, card_id)
        assert card is not None
        honour = {
            "category": "battle_trait",
            "entry_ids": ["x"],
            "crusade_points": 1,
            "weapon": None,
            "model": None,
            "dice": [],
        }
        card.honours = [{**honour, "entry_ids": [f"filler_{n}"]} for n in range(6)]
        flag_modified(card, "honours")
        session.add(card)
        session.commit()


def exfiltration_battle(client: TestClient, world: dict[str, Any]) -> int:
    [bonus] = [d for d in decisions_of(client, world["blue"]) if d["card_id"] is None]
    return int(bonus["battle_id"])


class TestEveryOfferIsAccepted:
    """The property of issue 34: whatever a pending decision offers (its options, its
    categories, its eligible units), answering with it is accepted. Each offer is tried on a
    fresh world, since an accepted answer settles the decision."""

    def test_out_of_action_and_battle_scar(self, client: TestClient) -> None:
        for option in ("devastating_blow", "battle_scar"):
            world = setup_two_forces(client)
            battle = muster(client, world)
            client.post(f"/api/v1/battles/{battle['id']}/result", json=lord_falls(world))
            [test] = decisions_of(client, world["red"])
            assert test["kind"] == "out_of_action"
            assert option in test["payload"]["options"]
            done = answer(client, test["id"], {"consequence": option})
            assert done.status_code == 200, done.text
        [scar] = decisions_of(client, world["red"])
        assert scar["kind"] == "battle_scar"
        rolled = answer(client, scar["id"], {})
        assert rolled.status_code == 200, rolled.text

    def test_a_rank_honour_in_each_category_offered(self, client: TestClient) -> None:
        offered = None
        for index in range(4):
            world = setup_two_forces(client)
            battle = muster(client, world)
            body = captain_ranks_up(world)
            assert client.post(f"/api/v1/battles/{battle['id']}/result", json=body).status_code
            [honour] = [d for d in decisions_of(client, world["blue"]) if d["card_id"]]
            offered = offered or honour["payload"]["categories"]
            assert "psychic_fortitude" not in offered  # the Captain is no PSYKER
            if index >= len(offered):
                break
            card = world["blue_units"][0]
            assert accepted(client, honour["id"], honour_answers(client, offered[index], card))
        assert offered == ["battle_trait", "weapon_enhancement", "crusade_relic"]

    def test_a_victor_bonus_honour_for_each_eligible_unit(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        eligible = exfiltration(client, world)["payload"]["eligible"]
        assert sorted(eligible) == sorted(u["id"] for u in world["blue_units"])
        reverted = client.post(f"/api/v1/battles/{exfiltration_battle(client, world)}/revert")
        assert reverted.status_code == 200, reverted.text
        for card_id in eligible:
            bonus = exfiltration(client, world)
            assert card_id in bonus["payload"]["eligible"]
            body = {"card_id": card_id, "category": bonus["payload"]["categories"][0]}
            taken = answer(client, bonus["id"], body)
            assert taken.status_code == 200, taken.text
            client.post(f"/api/v1/battles/{bonus['battle_id']}/revert")

    def test_a_victor_bonus_can_be_answered_with_what_it_grants_or_nothing(
        self, client: TestClient
    ) -> None:
        world = setup_two_forces(client)
        three = ["assassins", "reaper", "sentinel"]
        sides = [{**side, "agendas": three} for side in battle_body(world)["sides"]]
        battle = muster(client, world, battle_size="strike_force", mission="retrieval", sides=sides)
        body = {
            "sides": [
                {
                    "force_id": world["blue"],
                    "victory_points": 10,
                    "agenda_choices": reapers(world, "blue"),
                },
                {
                    "force_id": world["red"],
                    "victory_points": 60,
                    "agenda_choices": reapers(world, "red"),
                },
            ]
        }
        client.post(f"/api/v1/battles/{battle['id']}/result", json=body)
        bonuses = [d for d in decisions_of(client, world["red"]) if d["kind"] == "victor_bonus"]
        assert bonuses
        for bonus in bonuses:
            assert answer(client, bonus["id"], {"requisitions": []}).status_code == 200


class TestAFullUnitIsNotOffered:
    def test_a_unit_that_filled_its_honours_drops_out_of_the_offer(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        bonus = exfiltration(client, world)
        captain, squad = (u["id"] for u in world["blue_units"])
        fill_honours(engine, squad)
        offered = client.get(f"/api/v1/decisions/{bonus['id']}").json()["payload"]
        assert offered["eligible"] == [captain]
        body = {"card_id": squad, "category": "battle_trait"}
        refused = assert_problem(answer(client, bonus["id"], body), 422, "honour_unit_not_eligible")
        assert refused["field"] == "card_id" and str(captain) in refused["detail"]
        taken = answer(client, bonus["id"], {**body, "card_id": captain})
        assert taken.status_code == 200, taken.text

    def test_an_honour_no_unit_can_take_lapses_and_never_holds_a_muster(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        bonus = exfiltration(client, world, both=False)
        squad = world["blue_units"][1]["id"]
        fill_honours(engine, squad)
        assert client.get(f"/api/v1/decisions/{bonus['id']}").json()["payload"]["eligible"] == []
        again = client.post(
            f"/api/v1/campaigns/{world['campaign']}/battles", json=battle_body(world)
        )
        assert again.status_code == 201, again.text  # not 409 decisions_pending
        [lapsed] = decisions_of(client, world["blue"], status="cancelled")
        assert lapsed["payload"]["cancelled_because"] == "no_unit_can_take_it"
        refused = assert_problem(
            answer(client, bonus["id"], {"card_id": squad, "category": "battle_trait"}),
            409,
            "decision_cancelled",
        )
        assert "no unit can take" in refused["detail"]
        feed = client.get(f"/api/v1/campaigns/{world['campaign']}/events?limit=200").json()
        [event] = [e for e in feed["items"] if e["kind"] == "decision_cancelled"]
        assert (event["decision_id"], event["details"]["reason"]) == (
            bonus["id"],
            "no_unit_can_take_it",
        )


def test_a_victor_bonus_no_unit_can_take_is_not_owed_nor_news(
    client: TestClient, engine: Engine
) -> None:
    """The victor bonus may go only to the squad, which already holds six honours: no
    decision is made (ruling 71's lapse has nothing to cancel), and the feed's news of the
    battle, which counts the decisions the result made, owes Blue nothing."""
    world = setup_two_forces(client)
    squad = world["blue_units"][1]["id"]
    fill_honours(engine, squad)
    sides = battle_body(world)["sides"]
    sides[0]["agendas"] = ["assassins", "secure_the_area"]
    sides[1]["agendas"] = ["cull_the_hordes", "secure_the_area"]
    battle = muster(
        client, world, battle_size="incursion", mission="behind_enemy_lines", sides=sides
    )
    body = {
        "sides": [
            {
                "force_id": world["blue"],
                "victory_points": 40,
                "units": [{"card_id": squad, "exfiltrated": True}],
            },
            {"force_id": world["red"], "victory_points": 10},
        ]
    }
    response = client.post(f"/api/v1/battles/{battle['id']}/result", json=body)
    assert response.status_code == 200, response.text
    assert decisions_of(client, world["blue"]) == []
    assert decisions_of(client, world["blue"], status="cancelled") == []
    feed = client.get(f"/api/v1/campaigns/{world['campaign']}/events?limit=200").json()
    [recorded] = [e for e in feed["items"] if e["kind"] == "battle_recorded"]
    blue = next(s for s in recorded["details"]["sides"] if s["force_id"] == world["blue"])
    assert blue["victor_bonuses_owed"] == 0
    assert all(u["honours_owed"] == 0 for u in blue["units"])


def test_a_decision_of_a_reverted_battle_answers_decision_cancelled(client: TestClient) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    client.post(f"/api/v1/battles/{battle['id']}/result", json=lord_falls(world))
    [test] = decisions_of(client, world["red"])
    assert client.post(f"/api/v1/battles/{battle['id']}/revert").status_code == 200
    refused = assert_problem(
        answer(client, test["id"], {"consequence": "battle_scar"}), 409, "decision_cancelled"
    )
    assert "reverted" in refused["detail"]
    [cancelled] = decisions_of(client, world["red"], status="cancelled")
    assert cancelled["payload"]["cancelled_because"] == "battle_reverted"
    schema = client.get("/openapi.json").json()
    conflict = schema["paths"]["/api/v1/decisions/{decision_id}/answer"]["post"]["responses"]
    assert "decision_cancelled" in json.dumps(conflict["409"])


def test_a_revert_tells_the_feed_each_pending_decision_is_gone(client: TestClient) -> None:
    """Found by the walkthrough: a bot that kept the decisions it saw pending (from
    ``decision_pending``) never heard that a revert cancelled them."""
    world = setup_two_forces(client)
    battle = muster(client, world)
    client.post(f"/api/v1/battles/{battle['id']}/result", json=lord_falls(world))
    [test] = decisions_of(client, world["red"])
    url = f"/api/v1/campaigns/{world['campaign']}/events"
    pending = client.get(url, params={"limit": 200}).json()
    [asked] = [e for e in pending["items"] if e["kind"] == "decision_pending"]
    assert asked["summary"] == ("Black Legion has an Out of Action choice to make for Chaos Lord.")
    assert client.post(f"/api/v1/battles/{battle['id']}/revert").status_code == 200
    after = client.get(url, params={"after": pending["next"]}).json()["items"]
    assert [e["kind"] for e in after] == ["battle_reverted", "decision_cancelled"]
    gone = after[1]
    assert (gone["decision_id"], gone["force_ids"], gone["battle_id"]) == (
        test["id"],
        [world["red"]],
        battle["id"],
    )
    assert (gone["details"]["reason"], gone["details"]["decision"]) == (
        "battle_reverted",
        "out_of_action",
    )
    assert gone["summary"] == (
        "Black Legion's Out of Action choice for Chaos Lord was cancelled: its battle was reverted."
    )
    refused = answer(client, test["id"], {})
    assert_problem(refused, 409, "decision_cancelled")


def test_an_incomplete_answer_names_the_decision_in_words(client: TestClient) -> None:
    world = setup_two_forces(client)
    battle = muster(client, world)
    client.post(f"/api/v1/battles/{battle['id']}/result", json=lord_falls(world))
    [test] = decisions_of(client, world["red"])
    refused = assert_problem(answer(client, test["id"], {}), 422, "decision_answer_incomplete")
    assert refused["detail"] == "An answer to an Out of Action decision needs 'consequence'."
    assert refused["field"] == "consequence"


# --- a long poll with an ETag -------------------------------------------------------------


class TestLongPollWithETag:
    def test_a_matching_etag_waits_the_whole_time_then_304(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        url = f"/api/v1/campaigns/{world['campaign']}/events"
        etag = client.get(url).headers["etag"]
        started = time.monotonic()
        waited = client.get(url, params={"wait": 1}, headers={"If-None-Match": etag})
        assert waited.status_code == 304 and waited.headers["etag"] == etag
        assert time.monotonic() - started >= 0.9

    def test_a_matching_etag_answers_when_an_event_is_committed(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        url = f"/api/v1/campaigns/{world['campaign']}/events"
        etag = client.get(url).headers["etag"]

        def muster_soon() -> None:
            time.sleep(0.5)
            muster(client, world)

        writer = threading.Thread(target=muster_soon)
        writer.start()
        started = time.monotonic()
        waited = client.get(url, params={"wait": 30}, headers={"If-None-Match": etag})
        writer.join()
        assert waited.status_code == 200 and waited.headers["etag"] != etag
        assert waited.json()["items"][-1]["kind"] == "battle_mustered"
        assert time.monotonic() - started < 20

    def test_the_schema_offers_if_none_match_to_a_generated_client(
        self, client: TestClient
    ) -> None:
        schema = client.get("/openapi.json").json()
        for path in ("/api/v1/campaigns/{campaign_id}/events", "/api/v1/forces/{force_id}"):
            read = schema["paths"][path]["get"]
            [header] = [p for p in read["parameters"] if p["in"] == "header"]
            assert (header["name"], header["required"]) == ("If-None-Match", False)
            for answered in ("200", "304"):
                assert "ETag" in read["responses"][answered]["headers"]
