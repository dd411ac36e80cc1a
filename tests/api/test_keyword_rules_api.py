"""Keyword-dependent rules through HTTP: each refusal is a 4xx problem that changes nothing."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, dump, unit
from tests.api.test_battle_flow import battle_body, muster, setup_two_forces

HERO = ["IMPERIUM", "INFANTRY", "CHARACTER"]


def result(world: dict[str, Any], *blue_units: dict[str, Any]) -> dict[str, Any]:
    return {
        "sides": [
            {"force_id": world["blue"], "victory_points": 50, "units": list(blue_units)},
            {"force_id": world["red"], "victory_points": 10},
        ]
    }


def blue_agenda(world: dict[str, Any], agenda: str, **changes: Any) -> dict[str, Any]:
    body = battle_body(world, **changes)
    body["sides"][0]["agendas"] = [agenda]
    return body


def muster_with(client: TestClient, body: dict[str, Any], world: dict[str, Any]) -> Any:
    return client.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=body)


class TestAgendaEligibility:
    def test_survivor_pays_nothing_to_a_destroyed_unit(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        battle = muster_with(client, blue_agenda(world, "survivor"), world).json()
        squad = world["blue_units"][1]["id"]
        before = dump(engine)
        refused = client.post(
            f"/api/v1/battles/{battle['id']}/result",
            json=result(
                world, {"card_id": squad, "destroyed": True, "agenda_tallies": {"survivor": 1}}
            ),
        )
        body = assert_problem(refused, 422, "agenda_unit_ineligible")
        assert "Survivor" in body["detail"]
        assert dump(engine) == before

    def test_survivor_below_half_strength_gets_one_mark(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        battle = muster_with(client, blue_agenda(world, "survivor"), world).json()
        squad = world["blue_units"][1]["id"]
        url = f"/api/v1/battles/{battle['id']}/result"
        two = {"card_id": squad, "below_half_strength": True, "agenda_tallies": {"survivor": 2}}
        assert_problem(client.post(url, json=result(world, two)), 422, "agenda_unit_ineligible")
        one = {**two, "agenda_tallies": {"survivor": 1}}
        assert client.post(url, json=result(world, one)).status_code == 200
        assert client.get(f"/api/v1/cards/{squad}").json()["xp"] == 1 + 2

    def test_a_character_cannot_secure_the_area(self, client: TestClient, engine: Engine) -> None:
        world = setup_two_forces(client)
        battle = muster_with(client, blue_agenda(world, "secure_the_area"), world).json()
        captain = world["blue_units"][0]["id"]
        before = dump(engine)
        refused = client.post(
            f"/api/v1/battles/{battle['id']}/result",
            json=result(world, {"card_id": captain, "agenda_tallies": {"secure_the_area": 1}}),
        )
        body = assert_problem(refused, 422, "agenda_unit_ineligible")
        assert "CHARACTER" in body["detail"]
        assert dump(engine) == before


class TestWarlord:
    def test_only_a_character_leads_a_roster_that_has_one(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        captain, squad = (u["id"] for u in world["blue_units"])
        body = battle_body(world)
        body["sides"][0]["warlord_card_id"] = squad
        before = dump(engine)
        assert_problem(muster_with(client, body, world), 422, "warlord_not_character")
        assert dump(engine) == before
        body["sides"][0]["warlord_card_id"] = captain
        assert muster_with(client, body, world).status_code == 201


class TestNamedCharacters:
    def test_own_trait_is_free_and_the_requisition_refused(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        named = unit(
            client,
            world["blue"],
            "Marneus Calgar",
            12,
            keywords=HERO,
            named_character=True,
            warlord_trait="Adept of the Codex",
        )
        assert named["upgrades"] == [
            {
                "requisition": "warlord_trait",
                "detail": "Adept of the Codex",
                "crusade_points": 0,
                "model": "Marneus Calgar",
                "weapon": None,
                "first_founding": False,
            }
        ]
        assert client.get(f"/api/v1/forces/{world['blue']}").json()["requisition_points"] == 5
        before = dump(engine)
        refused = client.post(
            f"/api/v1/forces/{world['blue']}/cards",
            json={
                "name": "Chief Librarian Tigurius",
                "power_rating": 6,
                "keywords": HERO,
                "named_character": True,
                "requisitions": [{"requisition": "warlord_trait", "warlord_trait": "Rites"}],
            },
        )
        assert_problem(refused, 422, "named_character_has_warlord_trait")
        assert dump(engine) == before

    def test_only_named_characters_come_with_a_trait(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        before = dump(engine)
        refused = client.post(
            f"/api/v1/forces/{world['blue']}/cards",
            json={
                "name": "Lieutenant",
                "power_rating": 4,
                "keywords": HERO,
                "warlord_trait": "Rites of War",
            },
        )
        assert_problem(refused, 422, "warlord_trait_needs_requisition")
        assert dump(engine) == before


class TestKnightCharacters:
    def test_knight_baron_makes_a_character_that_can_then_take_a_trait(
        self, client: TestClient
    ) -> None:
        world = setup_two_forces(client)
        knight = unit(
            client,
            world["blue"],
            "Knight Paladin",
            24,
            keywords=["IMPERIUM", "IMPERIAL KNIGHT", "VEHICLE", "TITANIC"],
            requisitions=[
                {
                    "requisition": "specialist_reinforcements",
                    "stratagem": "Knight Baron",
                    "stratagem_cp": 1,
                },
                {"requisition": "warlord_trait", "warlord_trait": "Inspiring Leader"},
            ],
        )
        assert "CHARACTER" in knight["keywords"]
        assert knight["crusade_points"] == 1 + 2


class TestRankUpWindow:
    def test_open_after_the_battle_until_the_next_muster(self, client: TestClient) -> None:
        """Ruling: a CHARACTER promoted in a battle may take a Warlord Trait or Relic until
        its force musters again."""
        world = setup_two_forces(client)
        battle = muster(client, world)
        captain = world["blue_units"][0]["id"]
        promoted = {
            "card_id": captain,
            "destroyed_melee": 1,
            "agenda_tallies": {"assassins": 1},
            "marked_for_greatness": True,
        }
        client.post(f"/api/v1/battles/{battle['id']}/result", json=result(world, promoted))
        assert client.get(f"/api/v1/cards/{captain}").json()["rank"] == "blooded"
        buy = f"/api/v1/forces/{world['blue']}/requisitions"
        trait = {"requisition": "warlord_trait", "card_id": captain, "warlord_trait": "Rites"}
        assert client.post(buy, json=trait).status_code == 201
        for decision in client.get(f"/api/v1/forces/{world['blue']}/decisions").json()["items"]:
            answer = {"category": "battle_trait", "entries": ["inspiring_hero"]}
            client.post(f"/api/v1/decisions/{decision['id']}/answer", json=answer)
        relic = {"requisition": "relic", "card_id": captain, "relic": "Sword of Ages"}
        second = muster(client, world)
        assert_problem(client.post(buy, json=relic), 422, "requisition_during_battle")
        client.post(f"/api/v1/battles/{second['id']}/result", json=result(world))
        assert_problem(client.post(buy, json=relic), 422, "requisition_timing")
