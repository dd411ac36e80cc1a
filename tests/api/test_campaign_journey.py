"""A two-battle campaign played through HTTP only, every number worked out by hand from the
rules (the comments show the arithmetic)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.api.helpers import campaign, force, unit


def post(
    client: TestClient, url: str, body: dict[str, Any] | None = None, status: int = 200
) -> Any:
    response = client.post(url, json=body or {})
    assert response.status_code == status, response.text
    return response.json()


def pending(client: TestClient, force_id: int) -> list[dict[str, Any]]:
    return list(client.get(f"/api/v1/forces/{force_id}/decisions").json()["items"])


def card(client: TestClient, card_id: int) -> dict[str, Any]:
    return dict(client.get(f"/api/v1/cards/{card_id}").json())


def summary(c: dict[str, Any]) -> tuple[Any, ...]:
    t = c["tallies"]
    return (
        c["xp"],
        c["rank"],
        c["crusade_points"],
        t["battles_played"],
        t["battles_survived"],
        t["destroyed_psychic"],
        t["destroyed_ranged"],
        t["destroyed_melee"],
        t["marked_for_greatness"],
    )


def test_two_battles_by_the_book(client: TestClient) -> None:
    c = campaign(client)
    blue, red = force(client, c, "Blue", "IMPERIUM"), force(client, c, "Red", "CHAOS")
    b1 = unit(client, blue, "Captain", 5, keywords=["IMPERIUM", "INFANTRY", "CHARACTER"])["id"]
    b2 = unit(client, blue, "Squad", 5, champion="Sergeant")["id"]
    b3 = unit(client, blue, "Dreadnought", 11, keywords=["IMPERIUM", "VEHICLE"])["id"]
    r1 = unit(client, red, "Lord", 5, keywords=["CHAOS", "INFANTRY", "CHARACTER"])["id"]
    r2 = unit(client, red, "Legionaries", 6, keywords=["CHAOS", "INFANTRY"])["id"]

    # --- Battle 1: Combat Patrol, Sweep and Clear (victor may mark two units) -------------
    battle = post(
        client,
        f"/api/v1/campaigns/{c}/battles",
        {
            "battle_size": "combat_patrol",
            "mission": "sweep_and_clear",
            "sides": [
                {
                    "force_id": blue,
                    "role": "attacker",
                    "roster": [b1, b2, b3],
                    "agendas": ["assassins"],
                },
                {"force_id": red, "role": "defender", "roster": [r1, r2], "agendas": ["reaper"]},
            ],
        },
        201,
    )
    assert [s["crusade_points"] for s in battle["sides"]] == [0, 0]
    result = post(
        client,
        f"/api/v1/battles/{battle['id']}/result",
        {
            "sides": [
                {
                    "force_id": blue,
                    "victory_points": 60,
                    "painted": True,  # 60 + 10 = 70
                    "units": [
                        {
                            "card_id": b1,
                            "destroyed_melee": 1,
                            "agenda_tallies": {"assassins": 1},
                            "marked_for_greatness": True,
                        },
                        {"card_id": b2, "destroyed_ranged": 2, "marked_for_greatness": True},
                        {"card_id": b3, "destroyed": True},
                    ],
                    "dice": [1],  # the Dreadnought fails its Out of Action test
                },
                {
                    "force_id": red,
                    "victory_points": 50,
                    "units": [
                        {"card_id": r1, "destroyed": True},
                        {"card_id": r2, "destroyed_ranged": 1},
                    ],
                    "dice": [2],  # the Lord passes
                },
            ]
        },
    )
    assert (result["outcome"], [s["victory_points"] for s in result["sides"]]) == (
        "a_wins",
        [70, 50],
    )
    # Captain: 1 battle + 3 marked + 2 Assassins = 6 -> Blooded. Squad: 1 + 3 = 4.
    assert summary(card(client, b1)) == (6, "blooded", 0, 1, 1, 0, 0, 1, 1)
    assert summary(card(client, b2)) == (4, "battle_ready", 0, 1, 1, 0, 2, 0, 1)
    assert card(client, b3)["xp"] == 0  # waits for the Devastating Blow / scar choice
    # Lord: 1. Legionaries: 1 + 2 (Reaper: most enemy units destroyed).
    assert summary(card(client, r1)) == (1, "battle_ready", 0, 1, 0, 0, 0, 0, 0)
    assert summary(card(client, r2)) == (3, "battle_ready", 0, 1, 1, 0, 1, 0, 0)

    decisions = {d["kind"]: d for d in pending(client, blue)}
    assert set(decisions) == {"out_of_action", "battle_honour"}
    assert pending(client, red) == []
    post(
        client,
        f"/api/v1/decisions/{decisions['out_of_action']['id']}/answer",
        {"consequence": "battle_scar"},
    )
    scar = pending(client, blue)[-1]
    assert scar["kind"] == "battle_scar"
    post(client, f"/api/v1/decisions/{scar['id']}/answer", {"scar": "weakened_armour"})
    assert (card(client, b3)["xp"], card(client, b3)["crusade_points"]) == (1, -1)
    post(
        client,
        f"/api/v1/decisions/{decisions['battle_honour']['id']}/answer",
        {"category": "battle_trait", "entries": ["inspiring_hero"]},
    )
    assert card(client, b1)["honours"][0]["entries"][0]["name"] == "Inspiring Hero"

    # Between battles: heal the Dreadnought; the Captain just gained a rank -> Warlord Trait.
    post(
        client,
        f"/api/v1/forces/{blue}/requisitions",
        {"requisition": "repair_and_recuperate", "card_id": b3, "scar": "weakened_armour"},
        201,
    )
    post(
        client,
        f"/api/v1/forces/{blue}/requisitions",
        {"requisition": "warlord_trait", "card_id": b1, "warlord_trait": "Inspiring Leader"},
        201,
    )
    oob = client.get(f"/api/v1/forces/{blue}").json()
    # RP: 5 + 1 (battle) capped at 5, minus 2 requisitions = 3.
    assert (
        oob["requisition_points"],
        oob["battle_tally"],
        oob["victories"],
        oob["supply_used"],
    ) == (3, 1, 1, 21)
    assert [c_["crusade_points"] for c_ in oob["cards"]] == [2, 0, 0]  # honour 1 + trait 1

    # --- Battle 2: Incursion, Supply Cache; Red attacks ----------------------------------
    battle = post(
        client,
        f"/api/v1/campaigns/{c}/battles",
        {
            "battle_size": "incursion",
            "mission": "supply_cache",
            "sides": [
                {
                    "force_id": red,
                    "role": "attacker",
                    "roster": [r1, r2],
                    "agendas": ["priority_target", "survivor"],
                },
                {
                    "force_id": blue,
                    "role": "defender",
                    "roster": [b1, b2, b3],
                    "agendas": ["assassins", "first_strike"],
                },
            ],
        },
        201,
    )
    # Crusade Blessings: Blue's roster has 2 Crusade points, Red's 0 -> Red gets ceil(2/2) = 1 CP.
    assert [s["bonus_command_points"] for s in battle["sides"]] == [1, 0]
    result = post(
        client,
        f"/api/v1/battles/{battle['id']}/result",
        {
            "sides": [
                {
                    "force_id": red,
                    "victory_points": 80,
                    "units": [
                        {
                            "card_id": r1,
                            "destroyed_melee": 1,
                            "agenda_tallies": {"priority_target": 1, "survivor": 2},
                        },
                        {
                            "card_id": r2,
                            "destroyed": True,
                            "destroyed_ranged": 2,
                            "marked_for_greatness": True,
                        },
                    ],
                    "out_of_action_choices": {str(r2): "devastating_blow"},
                    "dice": [1, 5],  # Legionaries fail, then lose D6 = 5 XP (they have 3)
                },
                {
                    "force_id": blue,
                    "victory_points": 70,
                    "painted": True,  # 80 = 80: a draw, no victor bonus
                    "units": [
                        {
                            "card_id": b1,
                            "destroyed_psychic": 1,
                            "agenda_tallies": {"first_strike": 1},
                        },
                        {"card_id": b2, "marked_for_greatness": True},
                        {"card_id": b3, "destroyed": True},
                    ],
                    "dice": [6],
                },
            ]
        },
    )
    assert result["outcome"] == "draw"
    # Lord: 1 + 2 (Priority Target) + 4 (Survivor, 2 marks) = 7 -> 8 XP, Blooded.
    assert summary(card(client, r1)) == (8, "blooded", 0, 2, 1, 0, 0, 1, 0)
    # Legionaries: 3 - 3 (blow, to 0) + 1 Dealers of Death (3rd enemy unit in total) = 1;
    # the Marked for Greatness XP is lost to the blow, but the tally still counts it.
    assert summary(card(client, r2)) == (1, "battle_ready", 0, 2, 1, 0, 3, 0, 1)
    # Captain: 1 + 1 (First Strike) = 2 -> 8. Squad: 1 + 3 = 4 -> 8, Blooded.
    assert summary(card(client, b1)) == (8, "blooded", 2, 2, 2, 1, 0, 1, 1)
    assert summary(card(client, b2)) == (8, "blooded", 0, 2, 2, 0, 2, 0, 2)
    assert summary(card(client, b3)) == (2, "battle_ready", 0, 2, 0, 0, 0, 0, 0)

    red_honour = pending(client, red)[0]
    post(
        client,
        f"/api/v1/decisions/{red_honour['id']}/answer",
        {"category": "crusade_relic", "entries": ["laurels_of_victory"]},
    )
    blue_honour = pending(client, blue)[0]
    post(
        client,
        f"/api/v1/decisions/{blue_honour['id']}/answer",
        {
            "category": "weapon_enhancement",
            "weapon": {"model": "Sergeant", "weapon": "Bolt rifle", "weapon_type": "ranged"},
            "dice": [4, 2],  # D6 = Improved Sights, D3 = Armour Piercing
        },
    )
    squad = card(client, b2)
    assert [e["name"] for e in squad["honours"][0]["entries"]] == [
        "Improved Sights",
        "Armour Piercing",
    ]
    assert squad["honours"][0]["dice"] == [[6, 4], [3, 2]]
    assert (squad["crusade_points"], card(client, r1)["crusade_points"]) == (1, 1)

    post(
        client, f"/api/v1/forces/{red}/requisitions", {"requisition": "increase_supply_limit"}, 201
    )
    blue_oob = client.get(f"/api/v1/forces/{blue}").json()
    red_oob = client.get(f"/api/v1/forces/{red}").json()
    # Blue: 3 + 1 RP. Red: 5 + 1 capped at 5, then 1 spent.
    assert (blue_oob["requisition_points"], blue_oob["battle_tally"], blue_oob["victories"]) == (
        4,
        2,
        1,
    )
    assert (red_oob["requisition_points"], red_oob["battle_tally"], red_oob["victories"]) == (
        4,
        2,
        0,
    )
    assert (red_oob["supply_limit"], red_oob["supply_used"], blue_oob["crusade_points"]) == (
        55,
        11,
        3,
    )
    table = {
        s["name"]: (s["wins"], s["draws"], s["losses"])
        for s in client.get(f"/api/v1/campaigns/{c}/standings").json()
    }
    assert table == {"Blue": (1, 1, 0), "Red": (0, 1, 1)}
