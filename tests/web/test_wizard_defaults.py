"""The wizard's defaults (issue 12): your force and the only other force preselected, the
opponent list without your own forces, "Next" rolling a mission when none is chosen, the
muster starting from the whole Order of Battle when it fits, "Next: Review" letting the app
roll Out of Action, and "Same as last battle" for a rematch."""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlalchemy import Engine

from tests.web.conftest import Browser, campaign_with_two_players
from tests.web.test_wizard_pages import draft_row, start, units


def selected(html: str, name: str) -> str | None:
    select = re.search(rf'<select[^>]*name="{name}"[^>]*>(.*?)</select>', html, re.S)
    assert select, name
    found = re.search(r'<option value="([^"]*)"[^>]*selected', select.group(1))
    return found.group(1) if found else None


def test_defaults_and_a_rematch_in_few_taps(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    base, draft_id = start(world)
    page = ruby.get(f"{base}/setup").text
    assert selected(page, "force_id") == str(world["ruby_force"])
    assert selected(page, "opponent_id") == str(world["kai_force"])
    opponents = re.search(r'name="opponent_id".*?</select>', page, re.S)
    assert opponents and f'value="{world["ruby_force"]}"' not in opponents.group(0)
    assert "Same as last battle" not in page  # they never met

    setup = {"role": "attacker", "battle_size": "combat_patrol", "version": ""}
    setup |= {"force_id": world["ruby_force"], "opponent_id": world["kai_force"]}
    setup |= {"agendas_0": "assassins", "agendas_1": "cull_the_hordes", "action": "next"}
    moved = ruby.post(f"{base}/setup", setup)
    assert moved.status_code == 303 and moved.headers["location"] == f"{base}/muster"
    stored = draft_row(engine, draft_id)["data"]
    assert stored["setup"]["mission"] and stored["setup"]["mission_roll"]  # rolled by "Next"
    mine, theirs = units(ruby, world["ruby_force"]), units(kai, world["kai_force"])
    # 16 PL a side fits a Combat Patrol's 25: the whole Order of Battle is ticked.
    assert stored["rosters"] == [list(mine.values()), list(theirs.values())]
    assert ruby.post(f"{base}/muster", {"action": "muster", **_rosters(stored)}).status_code == 303
    reviewed = ruby.post(
        f"{base}/after", {"form": "after", "vp_0": "20", "vp_1": "10", "action": "review"}
    )
    assert reviewed.headers["location"] == f"{base}/review"
    assert draft_row(engine, draft_id)["step"] == "review"
    assert ruby.post(f"{base}/review", {"action": "submit"}).status_code == 303

    # A rematch: one tap brings back the size, role, Agendas and armies.
    base2, draft2 = start(world)
    page = ruby.get(f"{base2}/setup").text
    assert 'value="combat_patrol" checked' in page  # the size they last played
    assert "Same as last battle" in page
    again = ruby.post(
        f"{base2}/setup",
        {
            "force_id": world["ruby_force"],
            "opponent_id": world["kai_force"],
            "battle_size": "combat_patrol",
            "action": "same_as_last",
        },
    )
    assert again.status_code == 303
    copied = draft_row(engine, draft2)["data"]
    assert copied["setup"]["agendas"] == [["assassins"], ["cull_the_hordes"]]
    assert copied["setup"]["role"] == "attacker"
    assert copied["rosters"] == stored["rosters"]


def test_a_rematch_musters_the_same_armies_in_one_tap(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    """ "Muster the same armies" is offered once both armies are known (after "Same as last
    battle", or back from the muster step) and musters at once; a set-up the rules refuse
    (an army without its Agenda) stays on set-up, says why and musters nothing."""
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    base, draft_id = start(world)
    assert 'value="muster_now"' not in ruby.get(f"{base}/setup").text  # no armies yet
    # Supply Drop: its victor bonus owes no decision, so the rematch is not held up.
    setup = {"role": "attacker", "battle_size": "combat_patrol", "mission": "supply_drop"}
    setup |= {"force_id": world["ruby_force"], "opponent_id": world["kai_force"]}
    setup |= {"agendas_0": "assassins", "agendas_1": "cull_the_hordes", "version": ""}
    assert ruby.post(f"{base}/setup", {**setup, "action": "next"}).status_code == 303
    assert all(draft_row(engine, draft_id)["data"]["rosters"])
    assert 'value="muster_now"' in ruby.get(f"{base}/setup").text  # back from the muster
    refused = ruby.post(f"{base}/setup", {**setup, "agendas_0": "", "action": "muster_now"})
    assert refused.status_code == 422
    assert draft_row(engine, draft_id)["battle_id"] is None
    mustered = ruby.post(f"{base}/setup", {**setup, "action": "muster_now"})
    assert mustered.status_code == 303 and mustered.headers["location"] == f"{base}/after"
    ruby.post(f"{base}/after", {"form": "after", "vp_0": "20", "vp_1": "10", "action": "review"})
    submitted = ruby.post(f"{base}/review", {"action": "submit"})
    battle = int(submitted.headers["location"].rsplit("/", 1)[1])
    assert kai.post(f"/battles/{battle}/confirm", {}).status_code == 303

    base2, draft2 = start(world)
    same = {k: v for k, v in setup.items() if k != "mission"}
    assert ruby.post(f"{base2}/setup", {**same, "action": "same_as_last"}).status_code == 303
    page = ruby.get(f"{base2}/setup").text
    assert 'value="muster_now"' in page and "Muster the same armies" in page
    mustered = ruby.post(f"{base2}/setup", {**setup, "action": "muster_now"})
    assert mustered.status_code == 303, re.findall(r'data-code="[^"]+"', mustered.text)
    assert mustered.headers["location"] == f"{base2}/after"
    row = draft_row(engine, draft2)
    assert row["battle_id"] is not None and row["step"] == "after"


def _rosters(stored: dict[str, object]) -> dict[str, object]:
    rosters = stored["rosters"]
    assert isinstance(rosters, list)
    return {"roster_0": rosters[0], "roster_1": rosters[1]}


def test_rematch_from_the_campaign_page_then_one_tap_on_the_mission(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    """ "Rematch" on the campaign page starts the battle as the player's last one (forces,
    size, role, Agendas, armies); on set-up each mission of that size is a button that
    musters at once. A mission of another size is refused and musters nothing."""
    world = campaign_with_two_players(person)
    ruby, kai = world["ruby"], world["kai"]
    url = f"/campaigns/{world['campaign_id']}"
    assert "Rematch:" not in ruby.get(url).text  # no battle yet
    base, _ = start(world)
    setup = {"role": "defender", "battle_size": "combat_patrol", "mission": "supply_drop"}
    setup |= {"force_id": world["ruby_force"], "opponent_id": world["kai_force"]}
    setup |= {"agendas_0": "assassins", "agendas_1": "cull_the_hordes", "version": ""}
    assert ruby.post(f"{base}/setup", {**setup, "action": "muster_now"}).status_code == 303
    ruby.post(f"{base}/after", {"form": "after", "vp_0": "20", "vp_1": "10", "action": "review"})
    battle = ruby.post(f"{base}/review", {"action": "submit"}).headers["location"]
    assert kai.post(f"{battle}/confirm", {}).status_code == 303
    first = draft_row(engine, int(base.rsplit("/", 1)[1]))["data"]

    page = ruby.get(url).text
    assert "Rematch: <bdi>Ultramarines 4th</bdi> vs <bdi>Waaagh! Gorbad</bdi>" in page
    started = ruby.post(f"{url}/battles/new", {"rematch": "1"})
    assert started.status_code == 303
    base2 = started.headers["location"].rsplit("/", 1)[0]
    draft2 = int(base2.rsplit("/", 1)[1])
    copied = draft_row(engine, draft2)["data"]
    assert copied["setup"]["role"] == "defender"
    assert copied["setup"]["agendas"] == [["assassins"], ["cull_the_hordes"]]
    assert copied["rosters"] == first["rosters"] and not copied["setup"].get("mission")
    page = ruby.get(f"{base2}/setup").text
    assert "Same armies, pick the mission" in page
    assert "Assassins / Cull the Hordes" in page
    buttons = re.findall(r'name="action" value="muster:([a-z_]+)"', page)
    assert buttons == ["sweep_and_clear", "supply_drop", "assassinate"]  # Combat Patrol

    form = {**setup, "mission": ""}
    refused = ruby.post(f"{base2}/setup", {**form, "action": "muster:grand_assault"})
    assert refused.status_code == 422 and draft_row(engine, draft2)["battle_id"] is None
    mustered = ruby.post(f"{base2}/setup", {**form, "action": f"muster:{buttons[1]}"})
    assert mustered.status_code == 303 and mustered.headers["location"] == f"{base2}/after"
    row = draft_row(engine, draft2)
    assert row["battle_id"] is not None and row["data"]["setup"]["mission"] == buttons[1]
