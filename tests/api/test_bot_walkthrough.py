"""Issue 46, done when: a bot with a client generated from the app's OpenAPI schema (by
openapi-python-client) plays 20 battles across the missions beside the players, answers
every decision only from the offers with no refusal, follows the feed, and takes the
campaign's signed webhooks; it keeps every card's XP from the feed alone
(``battle_recorded`` and ``decision_answered``), as the cards say at the end, and every
webhook body is a feed item, signed, in order. The generated client runs over the app's
TestClient transport (no server: the test stays quick)."""

from __future__ import annotations

import hashlib
import hmac
import importlib
import json
import random
from types import ModuleType
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from app.services.feed import webhook_worker
from tests.api.generated_client import Generator
from tests.api.offer_bot import mission_battle, missions, offer_world, one_answer, pending
from tests.api.receiver import Receiver
from tests.api.test_battle_flow import lord_falls, muster, setup_two_forces

# The kinds the bot's webhook asks for: what a league's bot replays XP from.
OUTCOMES = ("battle_recorded", "decision_answered")


class Bot:
    """What the bot does, each step one operation of the generated client, with an API
    token that may write (made by the organizer through the same client)."""

    def __init__(self, generated: ModuleType, organizer: TestClient) -> None:
        self.generated = generated
        self.models = importlib.import_module(f"{generated.__name__}.models")
        self.refusals: list[tuple[str, int, bytes]] = []
        self.last: Any = None  # the last answer, as the generated client got it
        as_organizer = generated.Client(base_url=str(organizer.base_url))
        as_organizer.set_httpx_client(organizer)
        made = self.call(
            "accounts.create_token",
            client=as_organizer,
            body=self.models.TokenCreate(name="walkthrough bot", can_write=True),
        )
        self.client = generated.AuthenticatedClient(base_url="http://testserver", token="")
        self.client.set_httpx_client(
            TestClient(organizer.app, headers={"Authorization": f"Bearer {made.token}"})
        )

    def call(self, operation: str, *args: Any, **kwargs: Any) -> Any:
        """``operation`` (``tag.operation_id``) with the bot's client; its parsed answer.
        A refusal is kept (the walkthrough expects none) and fails the step."""
        kwargs.setdefault("client", getattr(self, "client", None))
        module = importlib.import_module(f"{self.generated.__name__}.api.{operation}")
        response = self.last = module.sync_detailed(*args, **kwargs)
        if response.status_code >= 300:
            self.refusals.append((operation, int(response.status_code), response.content))
        assert response.status_code < 300, (operation, response.status_code, response.content)
        return response.parsed

    def answer_all(self, world: dict[str, Any], rng: random.Random) -> list[str]:
        """Answer every pending decision of both forces from its offer until none is left
        (an answer may owe another: a Battle Scar after an Out of Action); the kinds."""
        kinds = []
        for name in ("blue", "red"):
            while waiting := self.call("battles.list_decisions", world[name], limit=200).items:
                decision = waiting[0].to_dict()
                body = self.models.DecisionAnswer.from_dict(one_answer(decision, rng))
                answered = self.call("battles.answer_decision", decision["id"], body=body)
                assert answered.status == "answered"
                kinds.append(decision["kind"])
        return kinds


class Follower:
    """A feed follower: each page after the cursor it holds, until no more; ``items`` as
    the generated models read them, ``sent`` as the server sent them."""

    def __init__(self, bot: Bot, campaign_id: int) -> None:
        self.bot, self.campaign_id = bot, campaign_id
        self.items: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.after: str | None = None

    def follow(self) -> None:
        while True:
            after = {"after": self.after} if self.after else {}
            page = self.bot.call("events.list_events", self.campaign_id, limit=200, **after)
            self.items += [item.to_dict() for item in page.items]
            self.sent += json.loads(self.bot.last.content)["items"]
            self.after = page.next_ or self.after
            if not page.more:
                return


def signed(secret: str, body: bytes, header: str) -> bool:
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header)


def feed(client: TestClient, campaign_id: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    after: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 200, **({"after": after} if after else {})}
        page = client.get(f"/api/v1/campaigns/{campaign_id}/events", params=params).json()
        items += page["items"]
        after = page["next"] or after
        if not page["more"]:
            return items


def xp_from_feed(items: list[dict[str, Any]]) -> dict[int, int]:
    """Every card's XP as a bot keeps it from the feed alone: 0 when added, the battle's
    `xp` after it, and each answer's `xp_after` (its `xp_before` must be what the bot has)."""
    xp: dict[int, int] = {}
    for item in items:
        details = item["details"]
        if item["kind"] == "card_added":
            xp[item["card_id"]] = 0
        elif item["kind"] == "battle_recorded":
            for side in details["sides"]:
                for u in side["units"]:
                    xp[u["card_id"]] = u["xp"]
        elif item["kind"] == "decision_answered":
            for u in details["unit_xp"]:
                assert xp[u["card_id"]] == u["xp_before"], (item, xp)
                xp[u["card_id"]] = u["xp_after"]
    return xp


def test_a_generated_client_answers_twenty_battles_from_the_offers_alone(
    client: TestClient,
    engine: Engine,
    generate_client: Generator,
    receiver: Receiver,
    allow_private: None,
) -> None:
    bot = Bot(generate_client(client.get("/openapi.json").json()), client)
    rng = random.Random(46)
    world = offer_world(client)
    follower = Follower(bot, world["campaign"])
    follower.follow()
    hook = bot.call(
        "webhooks.create_webhook",
        world["campaign"],
        body=bot.models.WebhookCreate(url=receiver.url, events=list(OUTCOMES)),
    )
    follower.follow()
    since_hook = len(follower.items)
    every = missions(client)
    answered: list[str] = []
    for n in range(20):
        mission = every[n % len(every)]
        mission_battle(client, world, mission, blue_wins=n % 2 == 0)  # the players
        answered += bot.answer_all(world, rng)  # each one accepted: no refusal
        follower.follow()
    assert bot.refusals == []
    assert {m["id"] for m in every} <= {i["details"].get("mission") for i in follower.items}
    assert set(answered) == {"out_of_action", "battle_scar", "battle_honour", "victor_bonus"}
    ids = [i["id"] for i in follower.items]
    assert ids == sorted(set(ids))  # no duplicate, in order
    assert len([i for i in follower.items if i["kind"] == "decision_answered"]) == len(answered)
    kept = xp_from_feed(follower.items)
    for name in ("blue", "red"):
        cards = bot.call("campaigns.get_force", world[name]).to_dict()["cards"]
        assert {c["id"]: c["xp"] for c in cards} == {c["id"]: kept[c["id"]] for c in cards}
    webhook_worker.run_once(engine)  # the delivery worker (a process of its own when served)
    bodies = [json.loads(r.body) for r in receiver.received]
    assert all(
        signed(hook.secret, r.body, r.headers["x-crusade-signature"]) for r in receiver.received
    )
    # each body is the feed's item, in order; with the feed read before the webhook came,
    # they keep every card's XP as the feed does
    assert bodies == [i for i in follower.sent[since_hook:] if i["kind"] in OUTCOMES]
    assert xp_from_feed(follower.sent[:since_hook] + bodies) == kept


def test_an_answered_out_of_action_says_what_it_did_to_the_units_xp(client: TestClient) -> None:
    """The chain a bot keeps broke after each pending Out of Action: the XP the battle held
    back came with the answer, which the feed did not say (issue 46, item 4)."""
    world = setup_two_forces(client)
    lord = world["red_units"][0]["id"]
    for _ in range(2):  # the first battle's XP, for the second's Devastating Blow to take
        battle = muster(client, world)
        assert client.post(f"/api/v1/battles/{battle['id']}/result", json=lord_falls(world))
        [test] = pending(client, world["red"])
        body = {"consequence": "devastating_blow", "dice": [4]}
        answered = client.post(f"/api/v1/decisions/{test['id']}/answer", json=body)
        assert answered.status_code == 200, answered.text
    items = feed(client, world["campaign"])
    last = [i for i in items if i["kind"] == "decision_answered"][-1]["details"]
    assert last["consequence"] == "devastating_blow"
    assert last["rolled"] == [
        {"purpose": "the Devastating Blow to Chaos Lord", "sides": 6, "value": 4}
    ]
    [moved] = last["unit_xp"]
    assert moved["card_id"] == lord
    cards = client.get(f"/api/v1/forces/{world['red']}").json()["cards"]
    kept = xp_from_feed(items)
    assert {c["id"]: c["xp"] for c in cards} == {c["id"]: kept[c["id"]] for c in cards}
    scarred = setup_two_forces(client)
    battle = muster(client, scarred)
    client.post(f"/api/v1/battles/{battle['id']}/result", json=lord_falls(scarred))
    [test] = pending(client, scarred["red"])
    client.post(f"/api/v1/decisions/{test['id']}/answer", json={"consequence": "battle_scar"})
    [scar] = pending(client, scarred["red"])
    chosen = client.post(f"/api/v1/decisions/{scar['id']}/answer", json={"scar": "deep_scars"})
    assert chosen.status_code == 200, chosen.text
    items = feed(client, scarred["campaign"])
    last = [i for i in items if i["kind"] == "decision_answered"][-1]["details"]
    assert last["gained"] == [
        {
            "card_id": scarred["red_units"][0]["id"],
            "kind": "battle_scar",
            "entries": ["deep_scars"],
            "weapon": None,
        }
    ]
