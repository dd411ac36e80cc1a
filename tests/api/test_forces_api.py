"""Campaigns, Orders of Battle and Crusade cards through HTTP."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force, unit


class TestCampaigns:
    def test_create_list_get(self, client: TestClient) -> None:
        first = campaign(client, "Vigilus")
        campaign(client, "Octarius")
        page = client.get("/api/v1/campaigns", params={"limit": 1})
        body = page.json()
        assert (len(body["items"]), body["items"][0]["name"]) == (1, "Vigilus")
        assert page.headers["Link"] == f'<{body["next"]}>; rel="next"'
        rest = client.get(body["next"]).json()
        assert [c["name"] for c in rest["items"]] == ["Octarius"] and rest["next"] is None
        assert client.get(f"/api/v1/campaigns/{first}").json()["name"] == "Vigilus"

    def test_missing_campaign(self, client: TestClient) -> None:
        assert_problem(client.get("/api/v1/campaigns/999"), 404, "campaign_not_found")

    def test_blank_name_is_refused(self, client: TestClient, engine: Engine) -> None:
        before = dump(engine)
        body = assert_problem(
            client.post("/api/v1/campaigns", json={"name": "  "}), 422, "request_invalid"
        )
        assert body["field"] == "name"
        assert dump(engine) == before


class TestOrderOfBattle:
    def test_a_new_force_starts_with_five_rp_and_fifty_supply(self, client: TestClient) -> None:
        force_id = force(client, campaign(client))
        oob = client.get(f"/api/v1/forces/{force_id}").json()
        assert (oob["requisition_points"], oob["supply_limit"], oob["supply_used"]) == (5, 50, 0)
        assert (oob["battle_tally"], oob["victories"], oob["cards"]) == (0, 0, [])

    def test_unknown_faction_is_refused_and_nothing_changes(
        self, client: TestClient, engine: Engine
    ) -> None:
        campaign_id = campaign(client)
        before = dump(engine)
        response = client.post(
            f"/api/v1/campaigns/{campaign_id}/forces",
            json={"name": "X", "crusade_faction": "SPACE ELVES"},
        )
        assert_problem(response, 422, "crusade_faction_invalid")
        assert dump(engine) == before

    def test_adding_units_counts_supply(self, client: TestClient) -> None:
        force_id = force(client, campaign(client))
        unit(client, force_id, power=20)
        unit(client, force_id, "Redemptor Dreadnought", 10, keywords=["IMPERIUM", "VEHICLE"])
        oob = client.get(f"/api/v1/forces/{force_id}").json()
        assert oob["supply_used"] == 30
        assert [c["name"] for c in oob["cards"]] == ["Intercessor Squad", "Redemptor Dreadnought"]
        card = oob["cards"][0]
        assert (card["xp"], card["rank_name"], card["crusade_points"], card["next_rank_xp"]) == (
            0,
            "Battle-ready",
            0,
            6,
        )

    def test_over_the_supply_limit_is_refused_and_nothing_changes(
        self, client: TestClient, engine: Engine
    ) -> None:
        force_id = force(client, campaign(client))
        unit(client, force_id, power=45)
        before = dump(engine)
        response = client.post(
            f"/api/v1/forces/{force_id}/cards",
            json={"name": "Gladiator", "power_rating": 6, "keywords": ["IMPERIUM"]},
        )
        assert_problem(response, 422, "supply_limit_exceeded")
        assert dump(engine) == before

    def test_wrong_faction_unit_refused(self, client: TestClient) -> None:
        force_id = force(client, campaign(client))
        response = client.post(
            f"/api/v1/forces/{force_id}/cards",
            json={"name": "Boyz", "power_rating": 5, "keywords": ["ORKS"]},
        )
        assert_problem(response, 422, "crusade_faction_mismatch")

    def test_removing_frees_supply_and_is_for_good(
        self, client: TestClient, engine: Engine
    ) -> None:
        force_id = force(client, campaign(client))
        card = unit(client, force_id, power=45)
        assert client.delete(f"/api/v1/cards/{card['id']}").json()["removed"] is True
        oob = client.get(f"/api/v1/forces/{force_id}").json()
        assert (oob["supply_used"], oob["cards"]) == (0, [])
        before = dump(engine)
        assert_problem(client.delete(f"/api/v1/cards/{card['id']}"), 422, "unit_removed_for_good")
        assert_problem(
            client.patch(f"/api/v1/cards/{card['id']}", json={"name": "Back"}),
            422,
            "unit_removed_for_good",
        )
        assert dump(engine) == before

    def test_only_name_and_narrative_can_be_edited(self, client: TestClient) -> None:
        card = unit(client, force(client, campaign(client)))
        edited = client.patch(
            f"/api/v1/cards/{card['id']}",
            json={"name": "Squad Vorn", "narrative": "Held the line."},
        )
        assert (edited.json()["name"], edited.json()["narrative"]) == (
            "Squad Vorn",
            "Held the line.",
        )
        refused = client.patch(f"/api/v1/cards/{card['id']}", json={"power_rating": 3})
        assert_problem(refused, 422, "request_invalid")

    def test_history_lists_what_happened(self, client: TestClient) -> None:
        campaign_id = campaign(client)
        unit(client, force(client, campaign_id))
        events = client.get(f"/api/v1/campaigns/{campaign_id}/history").json()["items"]
        assert [e["kind"] for e in events] == ["campaign_created", "force_created", "card_added"]
