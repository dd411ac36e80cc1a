"""Importing a roster through HTTP: preview changes nothing, add is all or nothing,
re-import shows only what is new, hostile files are a clear 4xx."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force, unit
from tests.services.rosters.test_roster_parse import (
    BILLION_LAUGHS,
    COMMANDER,
    EXTERNAL_ENTITY,
    TINY,
    encrypted,
    nested,
    ros_of,
    roster_with,
    zipped,
)

ROSTERS = Path(__file__).parents[1] / "fixtures" / "rosters"
NECRONS = ros_of("necrons_patrol.rosz")  # the plain .ros XML


def post(
    client: TestClient,
    force_id: int,
    data: bytes,
    *,
    filename: str = "army.ros",
    preview: bool = False,
    **form: Any,
) -> Any:
    return client.post(
        f"/api/v1/forces/{force_id}/roster",
        params={"preview": "true"} if preview else None,
        files={"file": (filename, data, "application/octet-stream")},
        data=form,
    )


def necron_force(client: TestClient) -> int:
    return force(client, campaign(client), "Szarekhan Dynasty", "NECRONS")


class TestPreview:
    def test_answers_the_units_and_changes_nothing(
        self, client: TestClient, engine: Engine
    ) -> None:
        force_id = necron_force(client)
        before = dump(engine)
        answer = post(client, force_id, NECRONS, preview=True)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert dump(engine) == before
        assert body["factions"] == ["Necrons"]
        assert [u["name"] for u in body["units"]] == [
            "Royal Warden",
            "Necron Warriors",
            "Canoptek Scarab Swarms",
            "Skorpekh Destroyers",
            "Chronomancer",
            "Cryptothralls",  # inside a Bound Creation (issue 39)
        ]
        warden = body["units"][0]
        assert warden["offered_requisitions"] == ["warlord_trait", "relic"]
        assert warden["present_card_id"] is None
        assert body["unreadable"] == []
        assert (body["new_power"], body["supply_limit"]) == (31, 50)


class TestAdd:
    def test_all_new_units_become_cards_with_what_was_read(self, client: TestClient) -> None:
        force_id = necron_force(client)
        answer = post(client, force_id, NECRONS)
        assert answer.status_code == 201, answer.text
        cards = answer.json()["cards"]
        assert len(cards) == 6
        warriors = next(c for c in cards if c["name"] == "Necron Warriors")
        assert (warriors["power_rating"], warriors["battlefield_role"]) == (12, "Troops")
        assert warriors["datasheet"] == "Necron Warriors"
        assert "20x Gauss Reaper" in warriors["wargear"]
        oob = client.get(f"/api/v1/forces/{force_id}").json()
        assert (oob["supply_used"], oob["requisition_points"]) == (31, 5)

    def test_chosen_units_and_the_offered_requisitions(self, client: TestClient) -> None:
        force_id = necron_force(client)
        keys = [u["key"] for u in post(client, force_id, NECRONS, preview=True).json()["units"]]
        warden = keys[0]
        answer = post(
            client,
            force_id,
            NECRONS,
            units=[warden, keys[1]],
            buy=[f"{warden}:warlord_trait", f"{warden}:relic"],
        )
        assert answer.status_code == 201, answer.text
        body = answer.json()
        assert [c["name"] for c in body["cards"]] == ["Royal Warden", "Necron Warriors"]
        upgrades = {u["requisition"]: u["detail"] for u in body["cards"][0]["upgrades"]}
        assert upgrades == {"warlord_trait": "Enduring Will", "relic": "Veil of Darkness"}
        oob = client.get(f"/api/v1/forces/{force_id}").json()
        assert oob["requisition_points"] == 5 - 2

    def test_reimport_shows_only_what_is_new_and_never_changes_a_card(
        self, client: TestClient, engine: Engine
    ) -> None:
        force_id = necron_force(client)
        keys = [u["key"] for u in post(client, force_id, NECRONS, preview=True).json()["units"]]
        post(client, force_id, NECRONS, units=keys[:2])
        shown = post(client, force_id, NECRONS, preview=True).json()
        present = [u["name"] for u in shown["units"] if u["present_card_id"]]
        assert present == ["Royal Warden", "Necron Warriors"]
        assert shown["new_power"] == 31 - 16
        before = dump(engine)
        assert_problem(post(client, force_id, NECRONS, units=[keys[0]]), 409, "roster_unit_present")
        assert dump(engine) == before
        rest = post(client, force_id, NECRONS)
        assert [c["name"] for c in rest.json()["cards"]] == [
            "Canoptek Scarab Swarms",
            "Skorpekh Destroyers",
            "Chronomancer",
            "Cryptothralls",
        ]

    def test_over_the_supply_limit_nothing_is_added_and_the_unit_is_named(
        self, client: TestClient, engine: Engine
    ) -> None:
        force_id = force(client, campaign(client), "Cult of Magnus", "CHAOS")
        before = dump(engine)
        data = (ROSTERS / "thousand_sons_magnus.rosz").read_bytes()
        refused = post(client, force_id, data, filename="magnus.rosz")
        body = assert_problem(refused, 422, "supply_limit_exceeded")
        assert body["detail"].split(" (")[0] in {"Heldrake", "Exalted Sorcerer", "Magnus the Red"}
        assert dump(engine) == before

    def test_a_unit_of_another_faction_is_refused_by_name(
        self, client: TestClient, engine: Engine
    ) -> None:
        force_id = force(client, campaign(client), "Ultramarines", "IMPERIUM")
        before = dump(engine)
        body = assert_problem(post(client, force_id, NECRONS), 422, "crusade_faction_mismatch")
        assert body["detail"].startswith("Royal Warden (1.3):")
        assert dump(engine) == before


class TestHostileUploads:
    def test_each_is_a_clear_4xx_and_changes_nothing(
        self, client: TestClient, engine: Engine
    ) -> None:
        force_id = necron_force(client)
        before = dump(engine)
        cases = [
            (BILLION_LAUGHS, 422, "roster_unreadable"),
            (EXTERNAL_ENTITY, 422, "roster_unreadable"),
            (TINY[:100], 422, "roster_unreadable"),
            (b"\x89PNG not a roster", 422, "roster_unreadable"),
            ((ROSTERS / "imperial_knights_8th.ros").read_bytes(), 422, "roster_wrong_game_system"),
            (zipped(("a.ros", TINY), ("b.ros", TINY)), 422, "roster_unreadable"),
            (zipped(("bomb.ros", TINY + b" " * (5 * 1024 * 1024))), 413, "roster_too_large"),
            # each of these was a 500 (issue 19)
            (encrypted(zipped(("a.ros", TINY))), 422, "roster_unreadable"),
            (TINY.replace(b"UTF-8", b"x-bogus", 1), 422, "roster_unreadable"),
            (TINY.replace(b'value="6.0"', b'value="nan"'), 422, "roster_unreadable"),
            (TINY.replace(b'value="6.0"', b'value="inf"'), 422, "roster_unreadable"),
            (nested(3000), 422, "roster_too_deep"),
        ]
        for data, status, code in cases:
            for preview in (True, False):
                assert_problem(post(client, force_id, data, preview=preview), status, code)
        assert dump(engine) == before

    def test_an_unknown_unit_key_is_refused(self, client: TestClient, engine: Engine) -> None:
        force_id = necron_force(client)
        before = dump(engine)
        body = assert_problem(
            post(client, force_id, NECRONS, units=["9.9"]), 422, "roster_unit_unknown"
        )
        assert body["field"] == "units"
        assert dump(engine) == before

    def test_a_requisition_the_roster_does_not_offer_is_refused(
        self, client: TestClient, engine: Engine
    ) -> None:
        force_id = necron_force(client)
        before = dump(engine)
        refused = post(client, force_id, NECRONS, buy=["1.4:warlord_trait"])
        assert_problem(refused, 422, "roster_requisition_not_offered")
        assert dump(engine) == before


def test_idempotent_like_every_post(client: TestClient) -> None:
    """A retry sends the same bytes (one multipart boundary) with the same key."""
    force_id = necron_force(client)
    boundary = "roster-boundary"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="army.ros"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + NECRONS
        + f"\r\n--{boundary}--\r\n".encode()
    )
    headers = {
        "Idempotency-Key": "roster-import-1",
        "Content-Type": f"multipart/form-data; boundary={boundary}",
    }
    url = f"/api/v1/forces/{force_id}/roster"
    first = client.post(url, content=body, headers=headers)
    again = client.post(url, content=body, headers=headers)
    assert first.status_code == again.status_code == 201, again.text
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert len(client.get(f"/api/v1/forces/{force_id}").json()["cards"]) == 6


def test_a_commander_with_drones_imports_without_the_drone_keyword(
    client: TestClient,
) -> None:
    """Ruling 45 through HTTP: the card gets the Commander's own keywords, so it gains XP."""
    campaign_id = campaign(client)
    tau = force(client, campaign_id, "Vior'la Hunters", "T'AU EMPIRE")
    answer = post(client, tau, roster_with(COMMANDER))
    assert answer.status_code == 201, answer.text
    (card,) = answer.json()["cards"]
    assert "CHARACTER" in card["keywords"]
    assert not {"DRONE", "TACTICAL DRONES"} & set(card["keywords"])
    assert card["gains_experience"] is True

    # and it does: one battle played, the Commander has its XP for taking part
    enemy = force(client, campaign_id, "Black Legion", "CHAOS")
    lord = unit(client, enemy, "Chaos Lord", 5, keywords=["CHAOS", "INFANTRY", "CHARACTER"])
    mustered = client.post(
        f"/api/v1/campaigns/{campaign_id}/battles",
        json={
            "battle_size": "combat_patrol",
            "mission": "sweep_and_clear",
            "sides": [
                {
                    "force_id": tau,
                    "role": "attacker",
                    "roster": [card["id"]],
                    "agendas": ["cull_the_hordes"],
                },
                {
                    "force_id": enemy,
                    "role": "defender",
                    "roster": [lord["id"]],
                    "agendas": ["cull_the_hordes"],
                },
            ],
        },
    )
    assert mustered.status_code == 201, mustered.text
    result = client.post(
        f"/api/v1/battles/{mustered.json()['id']}/result",
        json={
            "sides": [
                {"force_id": tau, "victory_points": 10, "units": [{"card_id": card["id"]}]},
                {"force_id": enemy, "victory_points": 5, "units": [{"card_id": lord["id"]}]},
            ]
        },
    )
    assert result.status_code == 200, result.text
    assert client.get(f"/api/v1/cards/{card['id']}").json()["xp"] == 1


def test_a_sub_faction_fills_the_placeholder_on_import(client: TestClient) -> None:
    """Issue 25: `Faction: <Sept>` becomes the chosen sept, not a literal keyword."""
    tau = force(client, campaign(client), "Vior'la Hunters", "T'AU EMPIRE")
    choice = (
        '<selection name="Sept Choice" type="upgrade" number="1"><categories>'
        '<category name="Configuration" primary="true"/></categories><selections>'
        '<selection name="Vior&apos;la Sept" type="upgrade" number="1"/></selections>'
        "</selection>"
    )
    commander = COMMANDER.replace(
        "</categories>", '<category name="Faction: &lt;Sept&gt;" primary="false"/></categories>', 1
    )
    answer = post(client, tau, roster_with(choice + commander))
    assert answer.status_code == 201, answer.text
    (card,) = answer.json()["cards"]
    assert "VIOR'LA SEPT" in card["keywords"]
    assert card["points"] is None  # the file gives no points
    assert not [k for k in card["keywords"] if "<" in k]


def test_the_preview_shows_the_rosters_own_totals(client: TestClient, engine: Engine) -> None:
    campaign_id = campaign(client)
    knights = force(client, campaign_id, "House Herpetrax", "CHAOS")
    before = dump(engine)
    shown = post(client, knights, (ROSTERS / "chaos_knights.rosz").read_bytes(), preview=True)
    assert shown.status_code == 200, shown.text
    body = shown.json()
    assert (body["roster_power_level"], body["roster_points"], body["read_power"]) == (28, 530, 28)
    assert dump(engine) == before


def warriors(power: str, models: int = 0) -> bytes:
    """TINY's Necron Warriors at another Power, with ``models`` models if given."""
    data = TINY.replace(b'value="6.0"', f'value="{power}"'.encode())
    if models:
        model = f'<selections><selection name="Necron Warrior" type="model" number="{models}"/>'
        data = data.replace(b"</categories>", b"</categories>" + model.encode() + b"</selections>")
    return data


class TestUpdateFromANewerRoster:
    """Issue 25 and ruling 52: a newer roster shows what differs on each card, and carries
    it over through the Requisitions that allow it, keeping XP and history."""

    def test_preview_then_update_through_fresh_recruits(
        self, client: TestClient, engine: Engine
    ) -> None:
        force_id = necron_force(client)
        (card,) = post(client, force_id, TINY).json()["cards"]
        shown = post(client, force_id, warriors("12.0", models=20), preview=True).json()
        (line,) = shown["units"]
        assert line["present_card_id"] == card["id"]
        assert [(c["field"], c["card"], c["roster"]) for c in line["changes"]] == [
            ("power_rating", "6", "12"),
            ("wargear", "", "20x Necron Warrior"),
        ]
        assert line["update_requisitions"] == ["fresh_recruits"]
        assert line["update_refused"] is None
        before = dump(engine)
        wrong = post(client, force_id, warriors("12.0", models=20), update=["9.9"])
        assert_problem(wrong, 422, "roster_update_invalid")
        assert dump(engine) == before
        applied = post(client, force_id, warriors("12.0", models=20), update=[line["key"]])
        assert applied.status_code == 200, applied.text
        assert applied.json()["updated_card_ids"] == [card["id"]]
        assert applied.json()["requisitions"] == [f"{line['key']}:fresh_recruits"]
        after = client.get(f"/api/v1/cards/{card['id']}").json()
        assert (after["power_rating"], after["wargear"], after["xp"]) == (
            12,
            "20x Necron Warrior",
            card["xp"],
        )
        oob = client.get(f"/api/v1/forces/{force_id}").json()
        assert oob["requisition_points"] == 4
        again = post(client, force_id, warriors("12.0", models=20), preview=True).json()
        assert again["units"][0]["changes"] == []

    def test_a_lower_power_is_shown_not_applied(self, client: TestClient, engine: Engine) -> None:
        force_id = necron_force(client)
        post(client, force_id, warriors("12.0"))
        (line,) = post(client, force_id, warriors("3.0"), preview=True).json()["units"]
        assert [c["field"] for c in line["changes"]] == ["power_rating"]
        assert line["update_requisitions"] == [] and line["not_applied"]
        before = dump(engine)
        assert_problem(
            post(client, force_id, warriors("3.0"), update=[line["key"]]),
            422,
            "roster_update_invalid",
        )
        assert dump(engine) == before

    def test_a_refused_requisition_is_said_in_the_preview(self, client: TestClient) -> None:
        force_id = necron_force(client)
        post(client, force_id, TINY)
        client.post(
            f"/api/v1/forces/{force_id}/requisitions",
            json={"requisition": "increase_supply_limit"},
        )
        for _ in range(4):  # spend every RP left
            client.post(
                f"/api/v1/forces/{force_id}/requisitions",
                json={"requisition": "increase_supply_limit"},
            )
        (line,) = post(client, force_id, warriors("12.0"), preview=True).json()["units"]
        assert line["update_requisitions"] == ["fresh_recruits"]
        assert "Fresh Recruits costs 1 RP" in line["update_refused"]

    def test_cards_the_roster_no_longer_has_are_shown(self, client: TestClient) -> None:
        force_id = necron_force(client)
        post(client, force_id, TINY)
        client.post(
            f"/api/v1/forces/{force_id}/cards",
            json={"name": "Lychguard", "power_rating": 5, "keywords": ["NECRONS", "INFANTRY"]},
        )
        shown = post(client, force_id, TINY, preview=True).json()
        assert [c["name"] for c in shown["missing_cards"]] == ["Lychguard"]


def test_points_are_kept_on_the_card(client: TestClient) -> None:
    """Issue 25: the roster's points are stored beside the Power Rating and read back."""
    knights = force(client, campaign(client), "House Herpetrax", "CHAOS")
    answer = post(client, knights, (ROSTERS / "chaos_knights.rosz").read_bytes())
    assert answer.status_code == 201, answer.text
    cards = answer.json()["cards"]
    assert sum(c["points"] for c in cards) == answer.json()["roster"]["roster_points"] == 530
    again = client.get(f"/api/v1/cards/{cards[0]['id']}").json()
    assert again["points"] == cards[0]["points"] > 0


def test_a_real_chaos_knights_roster_takes_tyrannical_court(
    client: TestClient, engine: Engine
) -> None:
    """Issue 20 / ruling 31: the Chaos Knights fixture's War Dog Brigand has the Traitoris
    Lance's CHARACTER option; the import offers Specialist Reinforcements with Tyrannical
    Court (the only way in Crusade), and buying it makes the knight a CHARACTER."""
    knights = force(client, campaign(client), "House Herpetrax", "CHAOS")
    data = (ROSTERS / "chaos_knights.rosz").read_bytes()
    shown = post(client, knights, data, preview=True).json()
    offers = {u["name"]: u["offered_requisitions"] for u in shown["units"]}
    assert offers["War Dog Brigand Squadron"] == ["specialist_reinforcements"]
    assert offers["War Dog Executioner Squadron"] == []
    brigand = next(u for u in shown["units"] if u["name"] == "War Dog Brigand Squadron")
    assert "CHAOS KNIGHTS" in brigand["keywords"] and "CHARACTER" not in brigand["keywords"]
    answer = post(client, knights, data, buy=[f"{brigand['key']}:specialist_reinforcements"])
    assert answer.status_code == 201, answer.text
    cards = {c["name"]: c for c in answer.json()["cards"]}
    knight = cards["War Dog Brigand Squadron"]
    assert "CHARACTER" in knight["keywords"]
    assert knight["crusade_points"] == 1  # Tyrannical Court costs 1 CP
    assert "CHARACTER" not in cards["War Dog Huntsman Squadron"]["keywords"]
    oob = client.get(f"/api/v1/forces/{knights}").json()
    assert oob["requisition_points"] == 4
