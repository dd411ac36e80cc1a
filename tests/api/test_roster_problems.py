"""Issue 39, case 7 (ruling 75): a unit the file itself gets wrong (no keywords at all, not
the force's faction) is flagged on that unit in the preview and left out by default, so the
rest of the roster imports in one go. Runs on SQLite and PostgreSQL (the client fixture)."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, force
from tests.api.test_roster_api import post
from tests.services.rosters.test_roster_parse import ros_of

BAD = (
    Path(__file__).parents[1] / "fixtures/rosters/constructed/necrons_bad_units.ros"
).read_bytes()


def necrons(client: TestClient) -> int:
    return force(client, campaign(client), "Szarekhan Dynasty", "NECRONS")


def test_the_preview_names_each_wrong_unit(client: TestClient, engine: Engine) -> None:
    force_id = necrons(client)
    before = dump(engine)
    body = post(client, force_id, BAD, preview=True).json()
    assert dump(engine) == before
    problems = {u["name"]: u["problem"] for u in body["units"]}
    assert problems["Royal Warden"] is None and problems["Necron Warriors"] is None
    assert problems["Immortals"] == "The roster gives this unit no keywords at all."
    assert "lacks the NECRONS keyword" in problems["Guardian Defenders"]


def test_the_rest_imports_in_one_go(client: TestClient) -> None:
    force_id = necrons(client)
    added = post(client, force_id, BAD)
    assert added.status_code == 201, added.text
    assert [c["name"] for c in added.json()["cards"]] == ["Royal Warden", "Necron Warriors"]
    again = post(client, force_id, BAD, preview=True).json()
    assert [u["name"] for u in again["units"] if u["present_card_id"] is None] == [
        "Immortals",
        "Guardian Defenders",
    ]


def test_naming_a_wrong_unit_is_refused_and_changes_nothing(
    client: TestClient, engine: Engine
) -> None:
    force_id = necrons(client)
    keys = {u["name"]: u["key"] for u in post(client, force_id, BAD, preview=True).json()["units"]}
    before = dump(engine)
    refused = post(client, force_id, BAD, units=[keys["Royal Warden"], keys["Guardian Defenders"]])
    problem = assert_problem(refused, 422, "crusade_faction_mismatch")
    assert "Guardian Defenders" in problem["detail"]
    assert dump(engine) == before


def test_a_real_file_with_units_that_lack_the_faction(client: TestClient, engine: Engine) -> None:
    """Case 7 on a real file (BlueWinds/bluescribe, SOURCES.md): the data gives the two
    Archaeopters SKITARII but neither IMPERIUM nor ADEPTUS MECHANICUS. The preview says so
    on those two (an IMPERIUM force); the others import in one go."""
    admech = ros_of("adeptus_mechanicus_mars.rosz")
    force_id = force(client, campaign(client), "Forge World Mars", "IMPERIUM")
    before = dump(engine)
    units = post(client, force_id, admech, preview=True).json()["units"]
    assert dump(engine) == before
    flagged = {u["name"]: u["problem"] for u in units if u["problem"]}
    assert set(flagged) == {"Archaeopter Stratoraptor", "Archaeopter Fusilave"}
    assert all("lacks the IMPERIUM keyword" in p for p in flagged.values())
    fits = [u["key"] for u in units if not u["problem"]][:6]  # within the 50 PL Supply Limit
    added = post(client, force_id, admech, units=fits)
    assert added.status_code == 201, added.text
    assert all("MARS" in c["keywords"] for c in added.json()["cards"])
