"""Issue 48 through HTTP: a real roster previewed and then imported gives the same units,
Power and keywords, whichever list builder wrote it (ruling 76): New Recruit's costs read
once, a nested force's own Chapter, two Lieutenants of one wrapper as two cards, Celestine
with every keyword of her unit. The Supply Limit used is what the file says."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.helpers import campaign, force
from tests.api.test_roster_api import post
from tests.services.rosters.test_roster_parse import ros_of
from tests.services.rosters.test_roster_real_files_issue48 import LIEUTENANTS_NEW_RECRUIT

SUPPLY_LIMIT = 50  # a new force's


def fitting(units: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The units without a problem, in the file's order, as many as the Supply Limit holds."""
    chosen: list[dict[str, Any]] = []
    for shown in units:
        used = sum(u["power_rating"] for u in chosen)
        if shown["problem"] is None and used + shown["power_rating"] <= SUPPLY_LIMIT:
            chosen.append(shown)
    return chosen


@pytest.mark.parametrize(
    ("fixture", "faction", "must_have"),
    [
        # 12 PL / 255 pts per Ironstrider Ballistarii, not 24 / 540; the Manipulus 6, not 8
        ("new_recruit_adeptus_mechanicus.rosz", "IMPERIUM", {"Tech-Priest Manipulus": 6}),
        # the two Lieutenants of one "Lieutenants" wrapper, two cards
        ("blood_angels.rosz", "IMPERIUM", {"Primaris Lieutenant": 5}),
        # Celestine with CELESTINE, LIVING SAINT and CHARACTER
        ("sisters_celestine.rosz", "IMPERIUM", {"Celestine and Geminae Superia": 10}),
        # the Black Templars Patrol nested in a Thousand Sons one; the Fire Raptor's Chapter
        ("black_templars_nested_in_thousand_sons.rosz", "IMPERIUM", {"Fire Raptor Gunship": 22}),
    ],
)
def test_preview_then_import_gives_the_same_units(
    client: TestClient, fixture: str, faction: str, must_have: dict[str, int]
) -> None:
    data = ros_of(fixture)
    force_id = force(client, campaign(client), "Issue 48", faction)
    shown = post(client, force_id, data, preview=True)
    assert shown.status_code == 200, shown.text
    body = shown.json()
    assert body["read_power"] == body["roster_power_level"] and body["unreadable"] == []
    chosen = fitting(body["units"])
    assert {u["name"]: u["power_rating"] for u in chosen if u["name"] in must_have} == must_have
    added = post(client, force_id, data, units=[u["key"] for u in chosen])
    assert added.status_code == 201, added.text
    cards = added.json()["cards"]
    assert [(c["name"], c["power_rating"], set(c["keywords"])) for c in cards] == [
        (u["name"], u["power_rating"], set(u["keywords"])) for u in chosen
    ]
    again = post(client, force_id, data, preview=True).json()
    assert again["supply_used"] == sum(u["power_rating"] for u in chosen)


def test_the_new_recruit_roster_previews_what_the_file_totals(client: TestClient) -> None:
    """The preview's Power read is the roster's own 106 (it was 132), its points 1,997."""
    force_id = force(client, campaign(client), "Forge World Mars", "IMPERIUM")
    body = post(client, force_id, ros_of("new_recruit_adeptus_mechanicus.rosz"), preview=True)
    shown = body.json()
    assert (shown["read_power"], shown["roster_power_level"], shown["roster_points"]) == (
        106,
        106,
        1997,
    )
    assert sum(u["points"] for u in shown["units"]) == 1997
    ballistarii = [u for u in shown["units"] if u["name"] == "Ironstrider Ballistarii"]
    assert [(u["power_rating"], u["points"]) for u in ballistarii] == [(12, 255), (12, 255)]
    flagged = {u["name"] for u in shown["units"] if u["problem"]}
    assert flagged == {"Archaeopter Fusilave"}  # the data gives it no IMPERIUM


def test_celestine_and_the_fire_raptor_keep_their_keywords_on_the_card(
    client: TestClient,
) -> None:
    force_id = force(client, campaign(client), "Bloody Rose", "IMPERIUM")
    sisters = ros_of("sisters_celestine.rosz")
    units = post(client, force_id, sisters, preview=True).json()["units"]
    key = next(u["key"] for u in units if u["name"] == "Celestine and Geminae Superia")
    (card,) = post(client, force_id, sisters, units=[key]).json()["cards"]
    assert {"CELESTINE", "LIVING SAINT", "CHARACTER", "GEMINAE SUPERIA"} <= set(card["keywords"])
    nested = ros_of("black_templars_nested_in_thousand_sons.rosz")
    units = post(client, force_id, nested, preview=True).json()["units"]
    key = next(u["key"] for u in units if u["name"] == "Fire Raptor Gunship")
    (card,) = post(client, force_id, nested, units=[key]).json()["cards"]
    assert "BLACK TEMPLARS" in card["keywords"]
    assert next(u for u in units if u["name"] == "Ahriman")["problem"]  # not IMPERIUM


def test_two_talonmasters_in_one_wrapper_become_two_cards(client: TestClient) -> None:
    """Issue 48, case 5 (a constructed file: the issue's own was not found in public
    repositories): two 8-PL cards, not one 16-PL "Lieutenant(s)"."""
    force_id = force(client, campaign(client), "Ravenwing", "IMPERIUM")
    shown = post(client, force_id, LIEUTENANTS_NEW_RECRUIT, preview=True).json()
    assert [(u["key"], u["power_rating"]) for u in shown["units"]] == [("1.1.1", 8), ("1.1.2", 8)]
    added = post(client, force_id, LIEUTENANTS_NEW_RECRUIT)
    assert added.status_code == 201, added.text
    cards = added.json()["cards"]
    assert [(c["name"], c["power_rating"]) for c in cards] == [("Ravenwing Talonmaster", 8)] * 2
    assert post(client, force_id, LIEUTENANTS_NEW_RECRUIT, preview=True).json()["supply_used"] == 16
