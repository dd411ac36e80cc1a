"""The battle flow through HTTP: muster, record, decisions, requisitions, revert."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force, unit


def setup_two_forces(client: TestClient) -> dict[str, Any]:
    campaign_id = campaign(client)
    blue = force(client, campaign_id, "Ultramarines", "IMPERIUM")
    red = force(client, campaign_id, "Black Legion", "CHAOS")
    blue_units = [
        unit(client, blue, "Captain Severus", 5, keywords=["IMPERIUM", "INFANTRY", "CHARACTER"]),
        unit(client, blue, "Squad Vorn", 5),
    ]
    red_units = [
        unit(client, red, "Chaos Lord", 5, keywords=["CHAOS", "INFANTRY", "CHARACTER"]),
        unit(client, red, "Legionaries", 6, keywords=["CHAOS", "INFANTRY"]),
    ]
    return {
        "campaign": campaign_id,
        "blue": blue,
        "red": red,
        "blue_units": blue_units,
        "red_units": red_units,
    }


def battle_body(
    world: dict[str, Any],
    blue: list[int] | None = None,
    red: list[int] | None = None,
    **changes: Any,
) -> dict[str, Any]:
    """A Combat Patrol between Blue (attacking) and Red; rosters default to every unit."""
    return {
        "battle_size": "combat_patrol",
        "mission": "sweep_and_clear",
        "sides": [
            {
                "force_id": world["blue"],
                "role": "attacker",
                "roster": blue or [u["id"] for u in world["blue_units"]],
                "agendas": ["assassins"],
            },
            {
                "force_id": world["red"],
                "role": "defender",
                "roster": red or [u["id"] for u in world["red_units"]],
                "agendas": ["cull_the_hordes"],
            },
        ],
        **changes,
    }


def reapers(world: dict[str, Any], side: str) -> dict[str, int]:
    """Reaper's pick when no unit destroyed anything: every unit is tied at 0 (ruling 8)."""
    return {"reaper": world[f"{side}_units"][0]["id"]}


def lord_falls(world: dict[str, Any]) -> dict[str, Any]:
    """A drawn result in which Red's Chaos Lord is destroyed and fails its Out of Action
    test (a 1): Red then owes a decision, Devastating Blow or a Battle Scar."""
    lord = world["red_units"][0]["id"]
    return {
        "sides": [
            {"force_id": world["blue"], "victory_points": 10},
            {
                "force_id": world["red"],
                "victory_points": 10,
                "units": [{"card_id": lord, "destroyed": True}],
                "dice": [1],
            },
        ]
    }


def muster(client: TestClient, world: dict[str, Any], **changes: Any) -> dict[str, Any]:
    body = battle_body(world, **changes)
    response = client.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


class TestMuster:
    def test_blessings_and_mission(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        battle = muster(client, world)
        assert battle["mission_name"] == "Sweep and Clear"
        assert [s["bonus_command_points"] for s in battle["sides"]] == [0, 0]

    def test_rolled_mission_from_entered_die(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        battle = muster(client, world, mission=None, mission_roll=5)
        assert (battle["mission"], battle["mission_roll"]) == ("assassinate", 5)

    def test_power_level_over_the_limit_is_refused(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        big = unit(client, world["blue"], "Land Raider", 20, keywords=["IMPERIUM", "VEHICLE"])
        world["blue_units"].append(big)
        before = dump(engine)
        response = client.post(
            f"/api/v1/campaigns/{world['campaign']}/battles",
            json=battle_body(world, red=[world["red_units"][0]["id"]]),
        )
        assert_problem(response, 422, "power_level_exceeded")
        assert dump(engine) == before


class TestRecordResult:
    def test_both_sides_resolved_at_once(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        battle = muster(client, world)
        captain, squad = (u["id"] for u in world["blue_units"])
        lord, legion = (u["id"] for u in world["red_units"])
        result = client.post(
            f"/api/v1/battles/{battle['id']}/result",
            json={
                "sides": [
                    {
                        "force_id": world["blue"],
                        "victory_points": 60,
                        "painted": True,
                        "units": [
                            {
                                "card_id": captain,
                                "destroyed_melee": 1,
                                "agenda_tallies": {"assassins": 1},
                                "marked_for_greatness": True,
                            },
                            {"card_id": squad, "destroyed": True},
                        ],
                        "dice": [4],
                    },
                    {
                        "force_id": world["red"],
                        "victory_points": 40,
                        "units": [
                            {"card_id": lord, "destroyed": True},
                            {"card_id": legion, "destroyed_ranged": 1},
                        ],
                        "dice": [1],
                    },
                ]
            },
        )
        assert result.status_code == 200, result.text
        body = result.json()
        assert (body["status"], body["outcome"]) == ("resolved", "a_wins")
        blue = client.get(f"/api/v1/forces/{world['blue']}").json()
        red = client.get(f"/api/v1/forces/{world['red']}").json()
        assert (blue["battle_tally"], blue["victories"], blue["requisition_points"]) == (1, 1, 5)
        assert (red["battle_tally"], red["victories"]) == (1, 0)
        xp = {c["name"]: c["xp"] for c in blue["cards"]}
        assert xp == {"Captain Severus": 1 + 3 + 2, "Squad Vorn": 1}
        pending = client.get(f"/api/v1/forces/{world['red']}/decisions").json()["items"]
        assert [d["kind"] for d in pending] == ["out_of_action"]
        assert {c["name"]: c["xp"] for c in red["cards"]}["Chaos Lord"] == 0

    def test_a_pending_decision_holds_the_players_next_muster(
        self, client: TestClient, engine: Engine
    ) -> None:
        """Ruling 37: a scar or honour owed by one unit must be settled before its player's
        next battle: no force of that player musters meanwhile, with or without the unit,
        and the refusal names the unit and the decision."""
        world = setup_two_forces(client)
        battle = muster(client, world)
        lord, legion = (u["id"] for u in world["red_units"])
        client.post(f"/api/v1/battles/{battle['id']}/result", json=lord_falls(world))
        before = dump(engine)
        for red_roster in ([lord], [legion]):
            blocked = client.post(
                f"/api/v1/campaigns/{world['campaign']}/battles",
                json=battle_body(
                    world, [world["blue_units"][1]["id"]], red_roster, mission="supply_drop"
                ),
            )
            problem = assert_problem(blocked, 409, "decisions_pending")
            assert "Chaos Lord" in problem["detail"] and "Out of Action" in problem["detail"]
            assert "/decisions/" in problem["detail"]
        assert dump(engine) == before
        decision = client.get(f"/api/v1/forces/{world['red']}/decisions").json()["items"][0]
        answered = client.post(
            f"/api/v1/decisions/{decision['id']}/answer", json={"consequence": "battle_scar"}
        )
        assert answered.status_code == 200, answered.text
        scar = client.get(f"/api/v1/forces/{world['red']}/decisions").json()["items"][0]
        assert scar["kind"] == "battle_scar"
        client.post(f"/api/v1/decisions/{scar['id']}/answer", json={"scar": "deep_scars"})
        card = client.get(f"/api/v1/cards/{lord}").json()
        assert ([s["name"] for s in card["scars"]], card["crusade_points"], card["xp"]) == (
            ["Deep Scars"],
            -1,
            1,
        )
        settled = client.post(
            f"/api/v1/campaigns/{world['campaign']}/battles",
            json=battle_body(world, [world["blue_units"][1]["id"]], [lord], mission="supply_drop"),
        )
        assert settled.status_code == 201, settled.text

    def test_revert_restores_everything(self, client: TestClient, engine: Engine) -> None:
        world = setup_two_forces(client)
        before = client.get(f"/api/v1/forces/{world['blue']}").json()
        battle = muster(client, world)
        client.post(
            f"/api/v1/battles/{battle['id']}/result",
            json={
                "sides": [
                    {"force_id": world["blue"], "victory_points": 50},
                    {"force_id": world["red"], "victory_points": 0},
                ]
            },
        )
        reverted = client.post(f"/api/v1/battles/{battle['id']}/revert")
        assert reverted.json()["status"] == "reverted"
        assert client.get(f"/api/v1/forces/{world['blue']}").json() == before
        kinds = [
            e["kind"]
            for e in client.get(f"/api/v1/campaigns/{world['campaign']}/history").json()["items"]
        ]
        assert kinds[-3:] == ["battle_mustered", "battle_recorded", "battle_reverted"]


class TestRequisitions:
    def test_increase_supply_limit(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        bought = client.post(
            f"/api/v1/forces/{world['blue']}/requisitions",
            json={"requisition": "increase_supply_limit"},
        )
        assert bought.status_code == 201, bought.text
        oob = client.get(f"/api/v1/forces/{world['blue']}").json()
        assert (oob["supply_limit"], oob["requisition_points"]) == (55, 4)

    def test_warlord_trait_only_when_added(self, client: TestClient, engine: Engine) -> None:
        world = setup_two_forces(client)
        captain = world["blue_units"][0]["id"]
        before = dump(engine)
        refused = client.post(
            f"/api/v1/forces/{world['blue']}/requisitions",
            json={
                "requisition": "warlord_trait",
                "card_id": captain,
                "warlord_trait": "Inspiring Leader",
            },
        )
        assert_problem(refused, 422, "requisition_timing")
        assert dump(engine) == before
        added = unit(
            client,
            world["blue"],
            "Lieutenant Aquila",
            4,
            keywords=["IMPERIUM", "INFANTRY", "CHARACTER"],
            requisitions=[{"requisition": "warlord_trait", "warlord_trait": "Inspiring Leader"}],
        )
        assert added["crusade_points"] == 1
        assert client.get(f"/api/v1/forces/{world['blue']}").json()["requisition_points"] == 4


def test_battles_list_newest_first_with_sides(client: TestClient) -> None:
    world = setup_two_forces(client)
    first = muster(client, world)
    client.post(f"/api/v1/battles/{first['id']}/revert")
    second = muster(client, world, mission="assassinate")
    page = client.get(f"/api/v1/campaigns/{world['campaign']}/battles").json()
    assert page["next"] is None
    assert [(b["id"], b["status"]) for b in page["items"]] == [
        (second["id"], "mustered"),
        (first["id"], "reverted"),
    ]
    assert all(len(b["sides"]) == 2 for b in page["items"])


def test_retrieval_defender_bonus_is_for_a_new_character(client: TestClient) -> None:
    world = setup_two_forces(client)
    battle = client.post(
        f"/api/v1/campaigns/{world['campaign']}/battles",
        json=battle_body(
            world,
            battle_size="strike_force",
            mission="retrieval",
            sides=[
                {**battle_body(world)["sides"][0], "agendas": ["assassins", "reaper", "sentinel"]},
                {**battle_body(world)["sides"][1], "agendas": ["assassins", "reaper", "sentinel"]},
            ],
        ),
    ).json()
    client.post(
        f"/api/v1/battles/{battle['id']}/result",
        json={
            "sides": [
                # nobody destroyed anything: Reaper goes to the unit each player picks
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
        },
    )
    bonus = client.get(f"/api/v1/forces/{world['red']}/decisions").json()["items"][0]
    assert bonus["kind"] == "victor_bonus"
    old_lord = world["red_units"][0]["id"]
    refused = client.post(
        f"/api/v1/decisions/{bonus['id']}/answer",
        json={
            "requisitions": [
                {
                    "requisition": "warlord_trait",
                    "card_id": old_lord,
                    "warlord_trait": "Eternal Hatred",
                }
            ]
        },
    )
    assert_problem(refused, 422, "victor_bonus_needs_new_character")
    sorcerer = unit(
        client, world["red"], "Sorcerer", 5, keywords=["CHAOS", "INFANTRY", "CHARACTER", "PSYKER"]
    )
    rp_before = client.get(f"/api/v1/forces/{world['red']}").json()["requisition_points"]
    granted = client.post(
        f"/api/v1/decisions/{bonus['id']}/answer",
        json={
            "requisitions": [
                {
                    "requisition": "warlord_trait",
                    "card_id": sorcerer["id"],
                    "warlord_trait": "Eternal Hatred",
                }
            ]
        },
    )
    assert granted.status_code == 200, granted.text
    assert client.get(f"/api/v1/cards/{sorcerer['id']}").json()["crusade_points"] == 1
    assert client.get(f"/api/v1/forces/{world['red']}").json()["requisition_points"] == rp_before


def test_raze_and_ruin_grants_two_free_supply_increases(client: TestClient) -> None:
    world = setup_two_forces(client)
    agendas = ["assassins", "reaper", "sentinel"]
    sides = [{**s, "agendas": agendas} for s in battle_body(world)["sides"]]
    battle = client.post(
        f"/api/v1/campaigns/{world['campaign']}/battles",
        json=battle_body(world, battle_size="strike_force", mission="raze_and_ruin", sides=sides),
    ).json()
    client.post(
        f"/api/v1/battles/{battle['id']}/result",
        json={
            "sides": [
                {
                    "force_id": world["blue"],
                    "victory_points": 50,
                    "agenda_choices": reapers(world, "blue"),
                },
                {
                    "force_id": world["red"],
                    "victory_points": 5,
                    "agenda_choices": reapers(world, "red"),
                },
            ]
        },
    )
    bonus = client.get(f"/api/v1/forces/{world['blue']}/decisions").json()["items"][0]
    supply = {"requisition": "increase_supply_limit"}
    too_many = client.post(
        f"/api/v1/decisions/{bonus['id']}/answer", json={"requisitions": [supply] * 3}
    )
    assert_problem(too_many, 422, "victor_bonus_requisition_invalid")
    done = client.post(
        f"/api/v1/decisions/{bonus['id']}/answer", json={"requisitions": [supply, supply]}
    )
    assert done.status_code == 200, done.text
    oob = client.get(f"/api/v1/forces/{world['blue']}").json()
    assert (oob["supply_limit"], oob["requisition_points"]) == (60, 5)


def test_battles_are_paged_by_key_with_a_link_to_the_next_page(client: TestClient) -> None:
    world = setup_two_forces(client)
    ids = []
    for _ in range(3):
        ids.append(muster(client, world)["id"])
        client.post(f"/api/v1/battles/{ids[-1]}/call-off")
    url = f"/api/v1/campaigns/{world['campaign']}/battles"
    first = client.get(url, params={"limit": 2})
    body = first.json()
    assert [b["id"] for b in body["items"]] == ids[:0:-1]
    assert body["next_cursor"] == ids[1]
    assert first.headers["Link"] == f'<{body["next"]}>; rel="next"'
    rest = client.get(body["next"]).json()
    assert [b["id"] for b in rest["items"]] == ids[:1] and rest["next"] is None
    assert_problem(client.get(url, params={"cursor": -1}), 422, "request_invalid")


def test_a_forces_decisions_are_paged_by_key(client: TestClient) -> None:
    """A force's decisions pile up over a campaign: the list is paged like the others."""
    world = setup_two_forces(client)
    battle = muster(client, world)
    client.post(f"/api/v1/battles/{battle['id']}/result", json=lord_falls(world))
    url = f"/api/v1/forces/{world['red']}/decisions"
    test = client.get(url).json()["items"][0]
    client.post(f"/api/v1/decisions/{test['id']}/answer", json={"consequence": "battle_scar"})
    scar = client.get(url).json()["items"][0]
    client.post(f"/api/v1/decisions/{scar['id']}/answer", json={"scar": "deep_scars"})
    first = client.get(url, params={"status": "answered", "limit": 1})
    page = first.json()
    assert [d["id"] for d in page["items"]] == [test["id"]]
    assert (
        page["next_cursor"] == test["id"]
        and first.headers["Link"] == f'<{page["next"]}>; rel="next"'
    )
    rest = client.get(page["next"]).json()
    assert [d["id"] for d in rest["items"]] == [scar["id"]] and rest["next"] is None
    assert client.get(url, params={"limit": 0}).status_code == 422


class TestTalliesBoundedByTheMission:
    """Issue 20: Sweep and Clear sets up four objective markers, so an army's Deploy
    Vox-relays cannot have more than four relays, and the markers are the mission's."""

    def vox_result(self, world: dict[str, Any], relays: int, **side: Any) -> dict[str, Any]:
        squad = world["blue_units"][1]["id"]
        return {
            "sides": [
                {
                    "force_id": world["blue"],
                    "victory_points": 30,
                    "units": [{"card_id": squad, "agenda_tallies": {"deploy_vox_relays": relays}}],
                    **side,
                },
                {"force_id": world["red"], "victory_points": 10},
            ]
        }

    def muster_vox(self, client: TestClient, world: dict[str, Any]) -> dict[str, Any]:
        body = battle_body(world)
        body["sides"][0]["agendas"] = ["deploy_vox_relays"]
        response = client.post(f"/api/v1/campaigns/{world['campaign']}/battles", json=body)
        assert response.status_code == 201, response.text
        return dict(response.json())

    def test_more_relays_than_markers_is_refused(self, client: TestClient, engine: Engine) -> None:
        world = setup_two_forces(client)
        battle = self.muster_vox(client, world)
        before = dump(engine)
        url = f"/api/v1/battles/{battle['id']}/result"
        response = client.post(url, json=self.vox_result(world, 5))
        assert_problem(response, 422, "agenda_tally_above_mission")
        assert "4 objective markers" in response.json()["detail"]
        wrong_count = client.post(url, json=self.vox_result(world, 4, objective_markers=6))
        assert_problem(wrong_count, 422, "objective_markers_invalid")
        assert "Sweep and Clear sets up 4" in wrong_count.json()["detail"]
        assert dump(engine) == before
        accepted = client.post(url, json=self.vox_result(world, 4))
        assert accepted.status_code == 200, accepted.text
        squad = next(
            c
            for c in client.get(f"/api/v1/forces/{world['blue']}").json()["cards"]
            if c["name"] == "Squad Vorn"
        )
        assert squad["xp"] == 1 + 4 * 2


class TestTalliesBoundedByTheMissionsEnd:
    """Issue 36 (ruling 48): Supply Drop leaves one objective marker at the end, so one
    Vox-relay at most; Recover Mission Archives counts one search per battle round but the
    last. A refusal names the unit's place in the request."""

    def result(self, world: dict[str, Any], agenda: str, marks: list[int]) -> dict[str, Any]:
        units = [
            {"card_id": u["id"], "agenda_tallies": {agenda: n}}
            for u, n in zip(world["blue_units"], marks, strict=False)
        ]
        return {
            "sides": [
                {
                    "force_id": world["blue"],
                    "victory_points": 30,
                    "units": units,
                    "agenda_choices": {agenda: world["blue_units"][0]["id"]},
                    "dice": [1],
                },
                {"force_id": world["red"], "victory_points": 10},
            ]
        }

    def test_supply_drop_leaves_one_relay(self, client: TestClient, engine: Engine) -> None:
        world = setup_two_forces(client)
        sides = battle_body(world)["sides"]
        sides[0]["agendas"] = ["deploy_vox_relays"]
        battle = muster(client, world, mission="supply_drop", sides=sides)
        url = f"/api/v1/battles/{battle['id']}/result"
        before = dump(engine)
        two = client.post(url, json=self.result(world, "deploy_vox_relays", [0, 2]))
        body = assert_problem(two, 422, "agenda_tally_above_mission")
        assert body["field"] == "sides[0].units[1].agenda_tallies"
        assert "the 1 objective marker the mission can leave on the battlefield" in body["detail"]
        assert dump(engine) == before
        one = client.post(url, json=self.result(world, "deploy_vox_relays", [0, 1]))
        assert one.status_code == 200, one.text

    def test_archives_count_one_round_fewer_than_the_battle(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        sides = battle_body(world)["sides"]
        sides[0]["agendas"] = ["assassins", "reaper", "recover_mission_archives"]
        sides[1]["agendas"] = ["assassins", "reaper", "sentinel"]
        battle = muster(
            client, world, battle_size="strike_force", mission="supplies_from_above", sides=sides
        )
        url = f"/api/v1/battles/{battle['id']}/result"
        before = dump(engine)
        five = self.result(world, "recover_mission_archives", [2, 3])
        five["sides"][0]["agenda_choices"]["reaper"] = world["blue_units"][0]["id"]
        five["sides"][1]["agenda_choices"] = {"reaper": world["red_units"][0]["id"]}
        refused = client.post(url, json=five)
        body = assert_problem(refused, 422, "agenda_tally_above_mission")
        assert body["field"] == "sides[0].units[1].agenda_tallies"
        assert "more than the 4 searches that can complete" in body["detail"]
        assert dump(engine) == before
        four = self.result(world, "recover_mission_archives", [2, 2])
        four["sides"][0]["agenda_choices"]["reaper"] = world["blue_units"][0]["id"]
        four["sides"][1]["agenda_choices"] = {"reaper": world["red_units"][0]["id"]}
        accepted = client.post(url, json=four)
        assert accepted.status_code == 200, accepted.text


class TestBehindEnemyLines:
    """Issue 20: the victor bonus goes only to a unit the report says was exfiltrated, and
    only Behind Enemy Lines exfiltrates (ruling 49)."""

    def muster(self, client: TestClient, world: dict[str, Any]) -> dict[str, Any]:
        sides = battle_body(world)["sides"]
        sides[0]["agendas"] = ["assassins", "secure_the_area"]
        sides[1]["agendas"] = ["cull_the_hordes", "secure_the_area"]
        return muster(
            client, world, battle_size="incursion", mission="behind_enemy_lines", sides=sides
        )

    def result(self, world: dict[str, Any], **unit_fields: Any) -> dict[str, Any]:
        squad = world["blue_units"][1]["id"]
        return {
            "sides": [
                {
                    "force_id": world["blue"],
                    "victory_points": 40,
                    "units": [{"card_id": squad, **unit_fields}],
                    "dice": [4],
                },
                {"force_id": world["red"], "victory_points": 10},
            ]
        }

    def test_only_an_exfiltrated_unit_takes_the_bonus(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        battle = self.muster(client, world)
        url = f"/api/v1/battles/{battle['id']}/result"
        before = dump(engine)
        both = client.post(url, json=self.result(world, exfiltrated=True, destroyed=True))
        assert_problem(both, 422, "exfiltrated_unit_destroyed")
        assert dump(engine) == before
        assert client.post(url, json=self.result(world, exfiltrated=True)).status_code == 200
        [bonus] = client.get(f"/api/v1/forces/{world['blue']}/decisions").json()["items"]
        assert (bonus["kind"], bonus["payload"]["reason"]) == ("battle_honour", "victor_bonus")
        assert bonus["payload"]["eligible"] == [world["blue_units"][1]["id"]]

    def test_nobody_exfiltrated_means_no_bonus(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        battle = self.muster(client, world)
        url = f"/api/v1/battles/{battle['id']}/result"
        assert client.post(url, json=self.result(world)).status_code == 200
        assert client.get(f"/api/v1/forces/{world['blue']}/decisions").json()["items"] == []

    def test_other_missions_exfiltrate_nobody(self, client: TestClient, engine: Engine) -> None:
        world = setup_two_forces(client)
        battle = muster(client, world)
        before = dump(engine)
        refused = client.post(
            f"/api/v1/battles/{battle['id']}/result", json=self.result(world, exfiltrated=True)
        )
        assert_problem(refused, 422, "exfiltration_not_in_mission")
        assert dump(engine) == before


class TestSplitUnits:
    """Issue 20: the cards of a split unit are linked, and a muster takes all or none."""

    def test_a_split_unit_is_mustered_whole(self, client: TestClient, engine: Engine) -> None:
        world = setup_two_forces(client)
        label = "Leman Russ Squadron"
        tanks = [
            unit(client, world["blue"], f"Leman Russ {n}", 4, split_unit=f"  {label} ")
            for n in ("Alpha", "Beta")
        ]
        assert [t["split_unit"] for t in tanks] == [label, label]
        assert unit(client, world["blue"], "Scout Squad", 2, split_unit="")["split_unit"] is None
        url = f"/api/v1/campaigns/{world['campaign']}/battles"
        half = battle_body(world, blue=[world["blue_units"][0]["id"], tanks[0]["id"]])
        before = dump(engine)
        refused = client.post(url, json=half)
        body = assert_problem(refused, 422, "split_unit_incomplete")
        assert "Leman Russ Beta" in body["detail"] and body["field"] == "sides[0].roster"
        assert dump(engine) == before
        whole = battle_body(world, blue=[tanks[0]["id"], tanks[1]["id"]])
        assert client.post(url, json=whole).status_code == 201

    def test_a_card_joins_and_leaves_a_split_unit(self, client: TestClient) -> None:
        world = setup_two_forces(client)
        squad = world["blue_units"][1]["id"]
        joined = client.patch(f"/api/v1/cards/{squad}", json={"split_unit": "Attack Bike Squadron"})
        assert joined.status_code == 200 and joined.json()["split_unit"] == "Attack Bike Squadron"
        kept = client.patch(f"/api/v1/cards/{squad}", json={"narrative": "Held the line."})
        assert kept.json()["split_unit"] == "Attack Bike Squadron"
        left = client.patch(f"/api/v1/cards/{squad}", json={"split_unit": ""})
        assert left.status_code == 200 and left.json()["split_unit"] is None

    def test_once_fought_the_split_unit_stays_whole(
        self, client: TestClient, engine: Engine
    ) -> None:
        """Issue 36: linking or unlinking is part of the unit's details: refused while its
        cards are mustered, and for good once they have fought (ruling 50)."""
        world = setup_two_forces(client)
        tanks = [
            unit(client, world["blue"], f"Leman Russ {n}", 4, split_unit="Squadron")
            for n in ("Alpha", "Beta")
        ]
        url = f"/api/v1/campaigns/{world['campaign']}/battles"
        battle = client.post(url, json=battle_body(world, blue=[t["id"] for t in tanks]))
        assert battle.status_code == 201, battle.text
        before = dump(engine)
        during = client.patch(f"/api/v1/cards/{tanks[0]['id']}", json={"split_unit": ""})
        body = assert_problem(during, 422, "split_unit_fixed_during_battle")
        assert body["field"] == "split_unit"
        assert dump(engine) == before
        result = {
            "sides": [
                {"force_id": world["blue"], "victory_points": 20},
                {"force_id": world["red"], "victory_points": 10},
            ]
        }
        recorded = client.post(f"/api/v1/battles/{battle.json()['id']}/result", json=result)
        assert recorded.status_code == 200, recorded.text
        newcomer = unit(client, world["blue"], "Leman Russ Gamma", 4)
        before = dump(engine)
        for card_id, label in (
            (tanks[0]["id"], ""),
            (tanks[1]["id"], "Another Squadron"),
            (newcomer["id"], "Squadron"),
        ):
            refused = client.patch(f"/api/v1/cards/{card_id}", json={"split_unit": label})
            body = assert_problem(refused, 422, "split_unit_fixed")
            assert body["field"] == "split_unit" and "Split Units" in body["detail"]
        joining = {"name": "Leman Russ Delta", "power_rating": 4, "split_unit": "Squadron"}
        added = client.post(
            f"/api/v1/forces/{world['blue']}/cards",
            json={**joining, "keywords": ["IMPERIUM", "VEHICLE"]},
        )
        assert_problem(added, 422, "split_unit_fixed")
        assert dump(engine) == before
        renamed = client.patch(f"/api/v1/cards/{tanks[0]['id']}", json={"name": "Old Faithful"})
        assert renamed.status_code == 200 and renamed.json()["split_unit"] == "Squadron"
        same = client.patch(f"/api/v1/cards/{tanks[0]['id']}", json={"split_unit": "Squadron"})
        assert same.status_code == 200
