"""The API as a bot author meets it (issue 15): request field paths in problems, names as
well as ids, named dice, typed bodies, consistent status codes."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, dump
from tests.api.test_battle_flow import battle_body, lord_falls, muster, setup_two_forces


def result(client: TestClient, battle_id: int, body: dict[str, Any]) -> Any:
    return client.post(f"/api/v1/battles/{battle_id}/result", json=body)


def captain_ranks_up(world: dict[str, Any]) -> dict[str, Any]:
    """Blue wins; Captain Severus kills the Chaos Lord (an Assassins mark: Red reports the
    Lord destroyed, and it passes its Out of Action test), reaches 6 XP (Blooded) and owes a
    Battle Honour."""
    captain = world["blue_units"][0]["id"]
    lord = world["red_units"][0]["id"]
    return {
        "sides": [
            {
                "force_id": world["blue"],
                "victory_points": 60,
                "units": [
                    {
                        "card_id": captain,
                        "destroyed_melee": 1,
                        "agenda_tallies": {"assassins": 1},
                        "marked_for_greatness": True,
                    }
                ],
            },
            {
                "force_id": world["red"],
                "victory_points": 40,
                "units": [{"card_id": lord, "destroyed": True}],
                "dice": [6],
            },
        ]
    }


class TestStatusCodes:
    def test_creating_answers_201_with_location_acting_answers_200(
        self, client: TestClient
    ) -> None:
        world = setup_two_forces(client)
        created = client.post(
            f"/api/v1/campaigns/{world['campaign']}/battles", json=battle_body(world)
        )
        assert created.status_code == 201
        location = created.headers["location"]
        assert location == f"/api/v1/battles/{created.json()['id']}"
        assert client.get(location).json() == created.json()
        recorded = result(client, created.json()["id"], lord_falls(world))
        assert recorded.status_code == 200 and "location" not in recorded.headers
        card = client.post(
            f"/api/v1/forces/{world['blue']}/cards",
            json={"name": "Scouts", "power_rating": 4, "keywords": ["IMPERIUM", "INFANTRY"]},
        )
        assert card.status_code == 201, card.text
        assert card.headers["location"] == f"/api/v1/cards/{card.json()['id']}"


class TestProblemFields:
    def test_a_refused_scar_names_the_answer_field_and_lists_the_scars(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        battle = muster(client, world)
        body = lord_falls(world)
        body["sides"][1]["out_of_action_choices"] = {
            str(world["red_units"][0]["id"]): "battle_scar"
        }
        assert result(client, battle["id"], body).status_code == 200
        scar = client.get(f"/api/v1/forces/{world['red']}/decisions").json()["items"][0]
        assert scar["kind"] == "battle_scar"
        before = dump(engine)
        refused = client.post(
            f"/api/v1/decisions/{scar['id']}/answer", json={"scar": "Broken Spirit"}
        )
        problem = assert_problem(refused, 422, "battle_scar_unknown")
        assert problem["field"] == "scar"
        assert "deep_scars (Deep Scars)" in problem["detail"]
        assert dump(engine) == before
        # The name a player reads on the card works as well as the id, in any case.
        answered = client.post(
            f"/api/v1/decisions/{scar['id']}/answer", json={"scar": "deep scars"}
        )
        assert answered.status_code == 200, answered.text
        assert answered.json()["answer"]["scar"] == "deep scars"
        card = client.get(f"/api/v1/cards/{world['red_units'][0]['id']}").json()
        assert [s["id"] for s in card["scars"]] == ["deep_scars"]

    def test_a_side_refusal_names_the_side(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        battle = muster(client, world)
        body = lord_falls(world)
        body["sides"][1]["dice"] = [7]
        problem = assert_problem(result(client, battle["id"], body), 422, "request_invalid")
        assert problem["field"] == "sides[1].dice[0]"
        body["sides"][1]["dice"] = []
        problem = assert_problem(result(client, battle["id"], body), 422, "dice_missing")
        assert problem["field"] == "sides[1].dice"

    def test_muster_refusals_name_the_side(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        body = battle_body(world)
        body["sides"][1]["agendas"] = []
        problem = assert_problem(
            client.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=body),
            422,
            "agenda_count",
        )
        assert problem["field"] == "sides[1].agendas"
        assert "none is not an option" in problem["detail"]

    def test_agendas_by_name_are_kept_by_id(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        body = battle_body(world)
        body["sides"][0]["agendas"] = ["Assassins"]
        created = client.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=body)
        assert created.status_code == 201, created.text
        assert created.json()["sides"][0]["agendas"] == ["assassins"]


class TestNamedDice:
    def test_a_die_given_to_a_units_test(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        battle = muster(client, world)
        lord = world["red_units"][0]["id"]
        body = lord_falls(world)
        body["sides"][1]["dice"] = {
            "rolls": [{"roll": "out_of_action", "card_id": lord, "value": 1}]
        }
        recorded = result(client, battle["id"], body)
        assert recorded.status_code == 200, recorded.text
        report = recorded.json()["sides"][1]["report"]
        assert report["tests"] == [{"card_id": lord, "passed": False, "roll": 1}]
        assert report["dice"] == []  # the Agendas' dice: none for these two

    def test_a_die_for_a_roll_that_never_happened_is_refused(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        battle = muster(client, world)
        legion = world["red_units"][1]["id"]
        body = lord_falls(world)
        body["sides"][1]["dice"] = {
            "rolls": [{"roll": "out_of_action", "card_id": legion, "value": 4}],
            "others": [1],
        }
        before = dump(engine)
        problem = assert_problem(result(client, battle["id"], body), 422, "dice_not_rolled")
        assert problem["field"] == "sides[1].dice"
        assert dump(engine) == before

    def test_a_die_must_name_its_roll(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        battle = muster(client, world)
        body = lord_falls(world)
        body["sides"][1]["dice"] = {"rolls": [{"roll": "out_of_action", "value": 1}]}
        problem = assert_problem(result(client, battle["id"], body), 422, "die_roll_unnamed")
        assert problem["field"] == "sides[1].dice.rolls[0]"


class TestTypedBodies:
    def test_report_and_honour_decision_carry_integer_ids_and_the_rank(
        self, client: TestClient
    ) -> None:
        world = setup_two_forces(client)
        battle = muster(client, world)
        captain = world["blue_units"][0]["id"]
        recorded = result(client, battle["id"], captain_ranks_up(world))
        report = recorded.json()["sides"][0]["report"]
        assert report["promotions"] == [{"card_id": captain, "rank": "blooded"}]
        gained = {e["card_id"]: e for e in report["experience"]}
        assert gained[captain]["xp_gained"] == 6
        assert gained[captain]["gain"]["agendas"] == {"assassins": 2}
        honour = client.get(f"/api/v1/forces/{world['blue']}/decisions").json()["items"][0]
        assert honour["kind"] == "battle_honour"
        assert (honour["payload"]["reason"], honour["payload"]["rank"]) == ("rank", "blooded")
        assert honour["answer"] is None
        assert recorded.json()["sides"][0]["report"] is not None
        # the honour is settled before the player's next battle (ruling 37)
        answer = {"category": "battle_trait", "entries": ["inspiring_hero"]}
        settled = client.post(f"/api/v1/decisions/{honour['id']}/answer", json=answer)
        assert settled.status_code == 200, settled.text
        assert muster_report_is_empty(client, world)

    def test_every_success_body_has_a_closed_schema(self, client: TestClient) -> None:
        """No 2xx body is a free-form object: a generated client gets a type for each."""
        schema = client.get("/openapi.json").json()
        components = schema["components"]["schemas"]
        open_objects = []
        for path, operations in schema["paths"].items():
            for method, operation in operations.items():
                for status, answer in operation["responses"].items():
                    if not status.startswith("2"):
                        continue
                    for content in answer.get("content", {}).values():
                        for where in _free_form(content.get("schema", {}), components, set()):
                            open_objects.append(f"{method.upper()} {path} {status}: {where}")
        assert open_objects == []


def muster_report_is_empty(client: TestClient, world: dict[str, Any]) -> bool:
    """A side not yet resolved has no report (null), not an empty object."""
    body = battle_body(world, [world["blue_units"][1]["id"]], [world["red_units"][1]["id"]])
    body["mission"] = "supply_drop"
    created = client.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=body)
    assert created.status_code == 201, created.text
    return all(s["report"] is None for s in created.json()["sides"])


def _free_form(node: Any, components: dict[str, Any], seen: set[str]) -> list[str]:
    """Paths inside a schema where an object allows any value."""
    if not isinstance(node, dict):
        return []
    ref = node.get("$ref")
    if ref:
        name = ref.rsplit("/", 1)[-1]
        if name in seen:
            return []
        seen.add(name)
        return [f"{name}.{p}" for p in _free_form(components[name], components, seen)]
    found = []
    if node.get("type") == "object" and "properties" not in node:
        extra = node.get("additionalProperties", True)
        if extra is True or extra == {}:
            found.append("(object)")
    for key, child in node.get("properties", {}).items():
        found += [f"{key}.{p}" for p in _free_form(child, components, seen)]
    for key in ("items", "additionalProperties"):
        found += _free_form(node.get(key), components, seen)
    for key in ("anyOf", "oneOf", "allOf"):
        for child in node.get(key, []):
            found += _free_form(child, components, seen)
    if node == {}:
        found.append("(any)")
    return found


def test_a_refused_requisition_on_a_new_card_names_its_place(
    client: TestClient, engine: Engine
) -> None:
    world = setup_two_forces(client)
    before = dump(engine)
    response = client.post(
        f"/api/v1/forces/{world['blue']}/cards",
        json={
            "name": "Scouts",
            "power_rating": 4,
            "keywords": ["IMPERIUM", "INFANTRY"],
            "requisitions": [{"requisition": "warlord_trait", "warlord_trait": "Inspiring"}],
        },
    )
    assert response.status_code == 422, response.text
    assert response.json()["field"].startswith("requisitions[0].")
    assert dump(engine) == before
