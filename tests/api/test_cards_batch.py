"""Several units in one request: POST /api/v1/forces/{id}/cards/batch adds them all, or
none when one is refused (named by its path), on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import account, assert_problem, campaign, dump, force, unit
from tests.api.test_battle_flow import muster, setup_two_forces


def squad(name: str, power: int = 5, *keywords: str, **extra: Any) -> dict[str, Any]:
    words = ["IMPERIUM", *(keywords or ("INFANTRY",))]
    return {"name": name, "power_rating": power, "keywords": words, **extra}


def batch(client: TestClient, force_id: int, units: list[dict[str, Any]], **kw: Any) -> Any:
    return client.post(f"/api/v1/forces/{force_id}/cards/batch", json={"units": units}, **kw)


def test_adds_every_unit_in_order_with_its_requisitions(client: TestClient) -> None:
    campaign_id = campaign(client)
    force_id = force(client, campaign_id)
    captain = squad(
        "Captain Severus",
        5,
        "INFANTRY",
        "CHARACTER",
        requisitions=[{"requisition": "warlord_trait", "warlord_trait": "Rites of War"}],
    )
    answer = batch(client, force_id, [captain, squad("Squad Vorn"), squad("Squad Aquila", 6)])
    assert answer.status_code == 201, answer.text
    cards = answer.json()["cards"]
    assert [c["name"] for c in cards] == ["Captain Severus", "Squad Vorn", "Squad Aquila"]
    assert cards[0]["crusade_points"] == 1  # the Warlord Trait bought as it joined
    assert cards[0]["keywords"] == ["CHARACTER", "IMPERIUM", "INFANTRY"]
    oob = client.get(f"/api/v1/forces/{force_id}").json()
    assert (oob["supply_used"], oob["requisition_points"]) == (16, 4)
    assert [c["id"] for c in oob["cards"]] == [c["id"] for c in cards]
    events = client.get(f"/api/v1/campaigns/{campaign_id}/history").json()["items"]
    kinds = [e["kind"] for e in events]
    assert kinds.count("card_added") == 3


def test_the_third_over_the_supply_limit_adds_none(client: TestClient, engine: Engine) -> None:
    force_id = force(client, campaign(client))
    unit(client, force_id, power=30)
    before = dump(engine)
    units = [squad("Squad Vorn", 10), squad("Squad Aquila", 5), squad("Land Raider", 6, "VEHICLE")]
    body = assert_problem(batch(client, force_id, units), 422, "supply_limit_exceeded")
    assert body["field"] == "units[2].power_rating"
    assert body["detail"].startswith("Unit 3 (Land Raider): ")
    assert dump(engine) == before


def test_a_refused_requisition_adds_none_and_names_its_path(
    client: TestClient, engine: Engine
) -> None:
    force_id = force(client, campaign(client))
    before = dump(engine)
    trait = [{"requisition": "warlord_trait", "warlord_trait": "Rites of War"}]
    units = [squad("Squad Vorn"), squad("Squad Aquila", requisitions=trait)]
    body = assert_problem(batch(client, force_id, units), 422, "requisition_target_invalid")
    assert body["field"].startswith("units[1].requisitions[0].")
    assert "Unit 2 (Squad Aquila)" in body["detail"]
    assert dump(engine) == before


def test_a_unit_of_another_faction_is_refused_with_its_path(
    client: TestClient, engine: Engine
) -> None:
    force_id = force(client, campaign(client))
    before = dump(engine)
    boyz = {"name": "Boyz", "power_rating": 5, "keywords": ["ORKS"]}
    body = assert_problem(
        batch(client, force_id, [squad("A"), boyz]), 422, "crusade_faction_mismatch"
    )
    assert body["field"] == "units[1].keywords"
    assert dump(engine) == before


def test_bad_input_is_refused_with_its_path_and_changes_nothing(
    client: TestClient, engine: Engine
) -> None:
    force_id = force(client, campaign(client))
    before = dump(engine)
    cases: list[tuple[Any, str]] = [
        ({"units": [squad("A"), squad("B"), squad("C", 0)]}, "units[2].power_rating"),
        ({"units": [squad("A"), {"power_rating": 5}]}, "units[1].name"),
        ({"units": [squad("A", 5, "X" * 41)]}, "units[0].keywords[1]"),
        ({"units": []}, "units"),
        ({"units": [squad(f"S{n}", 1) for n in range(31)]}, "units"),
        ({"units": [squad("A")], "extra": 1}, "extra"),
        ({"units": "A"}, "units"),
    ]
    for sent, path in cases:
        answer = client.post(f"/api/v1/forces/{force_id}/cards/batch", json=sent)
        body = assert_problem(answer, 422, "request_invalid")
        assert body["field"] == path, (sent, body)
    assert_problem(batch(client, 99999, [squad("A")]), 404, "force_not_found")
    assert dump(engine) == before


def test_an_idempotency_key_adds_the_units_once(client: TestClient, engine: Engine) -> None:
    force_id = force(client, campaign(client))
    headers = {"Idempotency-Key": "batch-1"}
    units = [squad("Squad Vorn"), squad("Squad Aquila")]
    first = batch(client, force_id, units, headers=headers)
    after = dump(engine)
    second = batch(client, force_id, units, headers=headers)
    assert (first.status_code, second.status_code) == (201, 201)
    assert second.json() == first.json()
    assert dump(engine) == after
    assert len(client.get(f"/api/v1/forces/{force_id}").json()["cards"]) == 2


def test_only_the_owner_may_add(client: TestClient, engine: Engine) -> None:
    force_id = force(client, campaign(client))
    stranger = account(client.app, "stranger")
    before = dump(engine)
    refused = batch(stranger, force_id, [squad("A")])
    assert refused.status_code in (403, 404), refused.text
    assert dump(engine) == before


class TestKeywordCorrection:
    """PATCH /cards/{id} with keywords (docs/rulings.md, 40)."""

    def test_a_fresh_unit_is_corrected(self, client: TestClient) -> None:
        force_id = force(client, campaign(client))
        card = unit(client, force_id, "Librarian", keywords=["IMPERIUM", "INFANTRY"])
        patched = client.patch(
            f"/api/v1/cards/{card['id']}", json={"keywords": ["IMPERIUM", "INFANTRY", "PSYKER"]}
        )
        assert patched.status_code == 200, patched.text
        assert patched.json()["keywords"] == ["IMPERIUM", "INFANTRY", "PSYKER"]
        assert patched.json()["name"] == "Librarian"

    def test_refused_once_fixed_or_without_the_faction(
        self, client: TestClient, engine: Engine
    ) -> None:
        world = setup_two_forces(client)
        captain, squad_vorn = world["blue_units"]
        before = dump(engine)
        orks = client.patch(f"/api/v1/cards/{squad_vorn['id']}", json={"keywords": ["ORKS"]})
        assert assert_problem(orks, 422, "crusade_faction_mismatch")["field"] == "keywords"
        assert dump(engine) == before
        muster(client, world)  # a battle under way
        before = dump(engine)
        during = client.patch(
            f"/api/v1/cards/{captain['id']}", json={"keywords": ["IMPERIUM", "INFANTRY"]}
        )
        assert_problem(during, 422, "keywords_fixed_during_battle")
        renamed = client.patch(f"/api/v1/cards/{captain['id']}", json={"name": "Severus"})
        assert renamed.status_code == 200  # names may change at any time
        trait = [{"requisition": "warlord_trait", "warlord_trait": "Rites of War"}]
        other = force(client, world["campaign"], "Crimson Fists")
        lord = unit(client, other, "Lord", keywords=["IMPERIUM", "CHARACTER"], requisitions=trait)
        before = dump(engine)
        bought = client.patch(f"/api/v1/cards/{lord['id']}", json={"keywords": ["IMPERIUM"]})
        assert_problem(bought, 422, "keywords_fixed")
        assert dump(engine) == before
