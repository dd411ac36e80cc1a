"""A force's army keywords (issue 47), on SQLite and PostgreSQL: a force made before a
scoped pack was attached, keywords set and changed later, what it holds kept, content it
left no longer moving, and the refusals, with the database untouched."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force, unit
from tests.api.test_pack_scope_walkthrough import SISTERS
from tests.api.test_rule_packs import attached

ROSTERS = Path(__file__).resolve().parents[1] / "fixtures" / "rosters"


def _fight(client: TestClient, cid: int, blue: int, mine: int, red: int, foe: int) -> int:
    sides = [
        {"force_id": blue, "role": "attacker", "roster": [mine], "agendas": ["cull_the_hordes"]},
        {"force_id": red, "role": "defender", "roster": [foe], "agendas": ["cull_the_hordes"]},
    ]
    body = {"battle_size": "combat_patrol", "mission": "sweep_and_clear", "sides": sides}
    mustered = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert mustered.status_code == 201, mustered.text
    return int(mustered.json()["id"])


def _won(client: TestClient, battle: int, blue: int, mine: int, red: int, foe: int) -> None:
    sides = [
        {"force_id": blue, "victory_points": 30, "units": [{"card_id": mine}]},
        {"force_id": red, "victory_points": 10, "units": [{"card_id": foe}]},
    ]
    done = client.post(f"/api/v1/battles/{battle}/result", json={"sides": sides})
    assert done.status_code == 200, done.text


def _keywords(client: TestClient, force_id: int, words: list[str]) -> dict[str, object]:
    changed = client.patch(f"/api/v1/forces/{force_id}", json={"army_keywords": words})
    assert changed.status_code == 200, changed.text
    return dict(changed.json())


def test_keywords_set_later_bring_the_pack_and_a_change_keeps_what_is_held(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    blue, red = force(client, cid), force(client, cid, "Black Legion", "CHAOS")
    mine, foe = unit(client, blue)["id"], unit(client, red, keywords=["CHAOS", "INFANTRY"])["id"]
    preview = client.post(
        f"/api/v1/campaigns/{cid}/rule-packs",
        params={"preview": "true"},
        files={"file": ("faith.yaml", SISTERS.encode(), "application/yaml")},
    )
    assert preview.status_code == 200, preview.text
    assert preview.json()["reach"] == {
        "factions": ["ADEPTA SORORITAS"],
        "forces": [],
        "other_forces": ["Ultramarines", "Black Legion"],
    }
    attached(client, cid, SISTERS)
    # Made before the pack: nothing beyond its Crusade faction, so none of the pack's content.
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"] == {}
    _won(client, _fight(client, cid, blue, mine, red, foe), blue, mine, red, foe)
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"] == {}

    shown = _keywords(client, blue, ["adepta sororitas"])
    # Faith, and the Sacred Rite (a named choice: 0 until one is kept), from their start.
    faith = {"faith": 0, "rite": 0}
    assert (shown["army_keywords"], shown["counters"]) == (["ADEPTA SORORITAS"], faith)
    _won(client, _fight(client, cid, blue, mine, red, foe), blue, mine, red, foe)
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"] == {"faith": 3, "rite": 0}

    # It leaves the faction: Faith is kept as it was and no longer moves; back, it moves on.
    # (the Rite, never kept, is not held: it shows only while the pack reaches the force)
    assert _keywords(client, blue, [])["counters"] == {"faith": 3}
    _won(client, _fight(client, cid, blue, mine, red, foe), blue, mine, red, foe)
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"] == {"faith": 3}
    _keywords(client, blue, ["ADEPTA SORORITAS"])
    _won(client, _fight(client, cid, blue, mine, red, foe), blue, mine, red, foe)
    assert client.get(f"/api/v1/forces/{blue}").json()["counters"] == {"faith": 6, "rite": 0}
    assert client.get(f"/api/v1/forces/{red}").json()["counters"] == {}

    feed = client.get(f"/api/v1/campaigns/{cid}/events?limit=200").json()["items"]
    changes = [
        (e["details"]["army_keywords_before"], e["details"]["army_keywords"])
        for e in feed
        if e["kind"] == "army_keywords_changed"
    ]
    assert changes == [
        ([], ["ADEPTA SORORITAS"]),
        (["ADEPTA SORORITAS"], []),
        ([], ["ADEPTA SORORITAS"]),
    ]
    summaries = [e["summary"] for e in feed if e["kind"] == "army_keywords_changed"]
    assert summaries[0] == "Ultramarines's army keywords are now ADEPTA SORORITAS."


def test_unknown_keywords_and_a_battle_under_way_are_refused(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    blue, red = force(client, cid), force(client, cid, "Black Legion", "CHAOS")
    mine, foe = unit(client, blue)["id"], unit(client, red, keywords=["CHAOS", "INFANTRY"])["id"]
    before = dump(engine)
    made = client.post(
        f"/api/v1/campaigns/{cid}/forces",
        json={"name": "Soup", "crusade_faction": "IMPERIUM", "army_keywords": ["SISTERS OF SOUP"]},
    )
    problem = assert_problem(made, 422, "army_keyword_unknown")
    assert problem["field"] == "army_keywords" and "ADEPTA SORORITAS" in problem["detail"]
    assert dump(engine) == before
    _fight(client, cid, blue, mine, red, foe)
    before = dump(engine)
    during = client.patch(f"/api/v1/forces/{blue}", json={"army_keywords": ["SPACE WOLVES"]})
    assert assert_problem(during, 422, "army_keywords_fixed_during_battle")["field"] == (
        "army_keywords"
    )
    assert dump(engine) == before


def test_a_first_imported_roster_gives_the_keywords_its_units_share(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client)
    plague = force(client, cid, "The Rotting Host", "CHAOS")
    rosz = (ROSTERS / "death_guard_plague_marines.rosz").read_bytes()
    added = client.post(
        f"/api/v1/forces/{plague}/roster",
        files={"file": ("dg.rosz", rosz, "application/octet-stream")},
    )
    assert added.status_code == 201, added.text
    assert "DEATH GUARD" in client.get(f"/api/v1/forces/{plague}").json()["army_keywords"]
    feed = client.get(f"/api/v1/campaigns/{cid}/events?limit=200").json()["items"]
    assert [e["kind"] for e in feed].count("army_keywords_changed") == 1
