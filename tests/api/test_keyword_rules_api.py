"""Keyword-dependent rules through HTTP: each refusal is a 4xx problem that changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, dump, unit
from tests.api.test_battle_flow import battle_body, muster, setup_two_forces
from tests.api.test_rule_packs import attach, attached

HERO = ["IMPERIUM", "INFANTRY", "CHARACTER"]


def result(
    world: dict[str, Any], *blue_units: dict[str, Any], lord_falls: bool = False
) -> dict[str, Any]:
    """Blue wins with ``blue_units``' report; with ``lord_falls`` Red's Chaos Lord (a
    CHARACTER) is destroyed and passes its Out of Action test."""
    red: dict[str, Any] = {"force_id": world["red"], "victory_points": 10}
    if lord_falls:
        red |= {"units": [{"card_id": world["red_units"][0]["id"], "destroyed": True}]}
        red["dice"] = [6]
    return {
        "sides": [
            {"force_id": world["blue"], "victory_points": 50, "units": list(blue_units)},
            red,
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

    @pytest.mark.parametrize(
        ("side", "roster_keywords", "stratagem", "named", "status"),
        [
            # keywords as the roster importer reads the Chaos Knights fixture
            # (tests/fixtures/rosters/chaos_knights.rosz) and an Imperial Knights roster
            (
                "red",
                ["CHAOS", "CHAOS KNIGHTS", "VEHICLE", "WAR DOG-CLASS"],
                "Tyrannical Court",
                False,
                201,
            ),
            (
                "red",
                ["CHAOS", "CHAOS KNIGHTS", "VEHICLE", "WAR DOG-CLASS"],
                "Knight Baron",
                False,
                422,
            ),
            (
                "blue",
                ["IMPERIUM", "IMPERIAL KNIGHTS", "VEHICLE", "TITANIC"],
                "Knight Baron",
                False,
                201,
            ),
            (
                "blue",
                ["IMPERIUM", "IMPERIAL KNIGHTS", "VEHICLE", "TITANIC"],
                "Tyrannical Court",
                False,
                422,
            ),
            (
                "blue",
                ["IMPERIUM", "IMPERIAL KNIGHTS", "VEHICLE", "TITANIC"],
                "Knight Baron",
                True,
                422,
            ),
        ],
    )
    def test_each_stratagem_for_its_own_faction_with_the_importers_keywords(
        self,
        client: TestClient,
        engine: Engine,
        side: str,
        roster_keywords: list[str],
        stratagem: str,
        named: bool,
        status: int,
    ) -> None:
        world = setup_two_forces(client)
        before = dump(engine)
        answer = client.post(
            f"/api/v1/forces/{world[side]}/cards",
            json={
                "name": "Sir Hekhtur" if named else "Knight Errant",
                "power_rating": 9,
                "keywords": roster_keywords,
                "named_character": named,
                "requisitions": [
                    {
                        "requisition": "specialist_reinforcements",
                        "stratagem": stratagem,
                        "stratagem_cp": 1,
                    }
                ],
            },
        )
        if status == 201:
            assert answer.status_code == 201, answer.text
            assert "CHARACTER" in answer.json()["keywords"]
        else:
            assert_problem(answer, 422, "stratagem_not_for_unit")
            assert dump(engine) == before


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
        body = result(world, promoted, lord_falls=True)
        client.post(f"/api/v1/battles/{battle['id']}/result", json=body)
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


class TestKillBounds:
    """Ruling 43 through HTTP: King Slayer needs the enemy WARLORD reported destroyed."""

    def test_king_slayer_needs_the_enemy_warlord_destroyed(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        body = blue_agenda(world, "king_slayer")
        body["sides"][1]["warlord_card_id"] = red_warlord = world["red_units"][0]["id"]
        battle = muster_with(client, body, world).json()
        captain = world["blue_units"][0]["id"]
        slayer = {"card_id": captain, "destroyed_melee": 1, "agenda_tallies": {"king_slayer": 1}}
        before = dump(engine)
        alive = client.post(f"/api/v1/battles/{battle['id']}/result", json=result(world, slayer))
        problem = assert_problem(alive, 422, "agenda_tally_over_enemy_losses")
        assert "King Slayer" in problem["detail"] and "WARLORD" in problem["detail"]
        assert dump(engine) == before
        fallen = result(world, slayer)
        fallen["sides"][1] |= {"units": [{"card_id": red_warlord, "destroyed": True}], "dice": [6]}
        recorded = client.post(f"/api/v1/battles/{battle['id']}/result", json=fallen)
        assert recorded.status_code == 200, recorded.text
        gained = {e["card_id"]: e for e in recorded.json()["sides"][0]["report"]["experience"]}
        assert gained[captain]["gain"]["agendas"] == {"king_slayer": 3}

    def test_titan_hunter_against_an_army_with_no_titanic_unit(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        battle = muster_with(client, blue_agenda(world, "titan_hunter"), world).json()
        hunter = {
            "card_id": world["blue_units"][1]["id"],
            "destroyed_ranged": 1,
            "agenda_tallies": {"titan_hunter": 1},
        }
        body = result(world, hunter, lord_falls=True)  # a CHARACTER fell, not a TITANIC unit
        before = dump(engine)
        refused = client.post(f"/api/v1/battles/{battle['id']}/result", json=body)
        assert_problem(refused, 422, "agenda_tally_over_enemy_losses")
        assert dump(engine) == before


EXALTED_COURT = """
format: crusade-rule-pack/1
id: older_codex
name: Older codex
version: "1"
core:
  character_stratagems:
    - {stratagem: Exalted Court, keyword: IMPERIAL KNIGHTS, excludes_named_characters: true}
"""


class TestKnightCharactersAsTheTextNamesThem:
    """Issue 36 (ruling 31): Exalted Court is refused in the core and works once a rule pack
    adds it; the campaign's rules list it then."""

    def knight(self, client: TestClient, force_id: int) -> Any:
        return client.post(
            f"/api/v1/forces/{force_id}/cards",
            json={
                "name": "Knight Errant",
                "power_rating": 22,
                "keywords": ["IMPERIUM", "IMPERIAL KNIGHTS", "VEHICLE", "TITANIC"],
                "requisitions": [
                    {
                        "requisition": "specialist_reinforcements",
                        "stratagem": "Exalted Court",
                        "stratagem_cp": 1,
                    }
                ],
            },
        )

    def test_refused_in_the_core_then_added_by_a_pack(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        before = dump(engine)
        refused = assert_problem(
            self.knight(client, world["blue"]), 422, "stratagem_not_in_crusade_rules"
        )
        assert refused["field"] == "requisitions[0].stratagem"
        assert "Knight Baron or Tyrannical Court" in refused["detail"]
        assert dump(engine) == before
        attached(client, world["campaign"], EXALTED_COURT)
        added = self.knight(client, world["blue"])
        assert added.status_code == 201, added.text
        assert "CHARACTER" in added.json()["keywords"]
        rules = client.get(f"/api/v1/campaigns/{world['campaign']}/rules").json()
        reinforcements = next(
            r for r in rules["requisitions"] if r["id"] == "specialist_reinforcements"
        )
        assert reinforcements["character_stratagems"][-1] == "Exalted Court"
        again = attach(
            client, world["campaign"], EXALTED_COURT.replace("older_codex", "older_codex_two")
        )
        assert_problem(again, 422, "rule_pack_invalid")
