"""A bot that answers decisions from their offer alone (issue 46): every answer the offer of a
pending decision allows (``every_answer``) or one of them (``one_answer``), built only from
the decision's JSON as the API gives it."""

from __future__ import annotations

import random
from typing import Any

from fastapi.testclient import TestClient

from tests.api.helpers import campaign, force, unit
from tests.api.test_battle_flow import battle_body

AGENDAS = {  # one of a category each, none needing a choice: as many as the size has
    "blue": ["assassins", "cull_the_hordes", "secure_the_area", "breakthrough"],
    "red": ["assassins", "cull_the_hordes", "secure_the_area", "breakthrough"],
}
SIZES = {"combat_patrol": 1, "incursion": 2, "strike_force": 3, "onslaught": 4}


def throw(dice: dict[str, Any], rng: random.Random) -> list[int]:
    """Dice for an answer, as a player throws them: once, and again while the offer says the
    throw is thrown again."""
    thrown: list[int] = []
    while True:
        faces = [rng.randint(1, sides) for sides in dice["sides"]]
        thrown += faces
        if dice["again_on_double"] and len(set(faces)) < len(faces):
            continue
        if len(faces) == 1 and faces[0] in dice["again_on"]:
            continue
        assert len(thrown) <= dice["at_most"]
        return thrown


def _weapon(category: dict[str, Any], weapon_type: str | None) -> dict[str, Any]:
    """The first weapon the offer lists or, for a card that lists no wargear, one named in
    the bot's words for the model the offer names (ruling 80)."""
    if category["weapons"]:
        first = category["weapons"][0]
    else:
        assert category["free_weapon"], category
        first = {"model": category["free_weapon"]["model"], "weapon": "Bot's own rifle"}
    kind = weapon_type if weapon_type in ("ranged", "melee") else "ranged"
    return {**first, "weapon_type": kind}


def honour_answers(decision: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """Every answer a battle_honour's offer allows: per unit and category, rolled (with the
    server's dice and with the bot's own) and each entry chosen."""
    found = []
    for offered in decision["offer"]["units"]:
        for category in offered["categories"]:
            base: dict[str, Any] = {"category": category["category"]}
            if decision["card_id"] is None:
                base["card_id"] = offered["card_id"]
            needs_weapon = "weapon" in category["needs"]
            if category["rolled"]:
                rolled = {**base, **({"weapon": _weapon(category, None)} if needs_weapon else {})}
                found.append(rolled)
                found.append({**rolled, "dice": throw(category["dice"], rng)})
            entries = category["entries"]
            for entry in entries:
                body = {**base, "entries": [entry["id"]]}
                if needs_weapon or "weapon" in entry["needs"]:
                    body["weapon"] = _weapon(category, entry["weapon_type"])
                if category["choose"] == 2 and entry["pack"] is None:
                    partner = next(
                        e
                        for e in category.get("partners", entries)
                        if e["pack"] is None
                        and e["weapon_type"] == entry["weapon_type"]
                        and e["id"] != entry["id"]
                        and min(e["low"], entry["low"]) <= 3
                    )
                    body["entries"].append(partner["id"])
                found.append(body)
    return found


def scar_answers(decision: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    [offered] = decision["offer"]["units"]
    [category] = offered["categories"]
    found: list[dict[str, Any]] = [{"scar": e["id"]} for e in category["entries"]]
    if category["rolled"]:
        found += [{}, {"dice": throw(category["dice"], rng)}]
    return found


def _order(requisition: dict[str, Any], target: dict[str, Any] | None, n: int) -> dict[str, Any]:
    """One free requisition, its details filled in as the offer says they are needed."""
    order: dict[str, Any] = {"requisition": requisition["requisition"]}
    if target is not None:
        order["card_id"] = target["card_id"]
    fills = {
        "wargear": "Plasma gun, Bolt pistol",
        "scar": (target or {}).get("scars", [None])[0] if target and target["scars"] else None,
        "warlord_trait": f"Tactical Genius {n}",
        "relic": f"Relic of the Bot {n}",
        "psychic_powers": "Smite",
        "stratagem": "Veteran Cadre",
        "stratagem_cp": 1,
    }
    for need in requisition["needs"]:
        if need in fills:
            order[need] = fills[need]
    if target is not None and target["warlord_traits"] and "warlord_trait" in order:
        order["warlord_trait"] = target["warlord_traits"][0]["id"]
    return order


def bonus_answers(decision: dict[str, Any]) -> list[dict[str, Any]]:
    """Every free requisition on every target it offers, each alone; all of them together
    where the bonus grants them all; and taking nothing."""
    offer = decision["offer"]
    found: list[dict[str, Any]] = [{"requisitions": []}]
    together = []
    for n, requisition in enumerate(offer["requisitions"]):
        targets = requisition["targets"] if requisition["target"] == "unit" else [None]
        orders = [_order(requisition, t, n) for t in targets]
        found += [{"requisitions": [o]} for o in orders]
        if orders:
            together += [orders[0]] * requisition["times"]
    if offer["mode"] == "all" and len(together) > 1:
        found.append({"requisitions": together})
    return found


def every_answer(decision: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    kind = decision["kind"]
    if kind == "out_of_action":
        [offered] = decision["offer"]["units"]
        found = []
        for option in offered["options"]:
            found.append({"consequence": option["consequence"]})
            if option["dice"]:
                dice = throw(option["dice"], rng)
                found.append({"consequence": option["consequence"], "dice": dice})
        return found
    if kind == "battle_scar":
        return scar_answers(decision, rng)
    if kind == "battle_honour":
        return honour_answers(decision, rng)
    return bonus_answers(decision)


def one_answer(decision: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """What a bot picks: one of the answers the offer allows, at random (a victor bonus:
    the most it grants)."""
    answers = every_answer(decision, rng)
    assert answers, decision
    if decision["kind"] == "victor_bonus":
        return max(answers, key=lambda a: len(a["requisitions"]))
    return rng.choice(answers)


def pending(client: TestClient, force_id: int, limit: int = 200) -> list[dict[str, Any]]:
    response = client.get(f"/api/v1/forces/{force_id}/decisions", params={"limit": limit})
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


def mission_battle(
    client: TestClient,
    world: dict[str, Any],
    mission: dict[str, Any],
    *,
    blue_wins: bool,
    destroyed: bool = True,
) -> dict[str, Any]:
    """Muster and record a battle of ``mission`` between the worlds' forces: Blue attacks;
    the winner's units exfiltrate where the mission has it and one is Marked for Greatness;
    each side's last unit is ``destroyed`` and fails its Out of Action test."""
    count = SIZES[mission["battle_size"]]
    sides = battle_body(world)["sides"]
    for side, name in zip(sides, ("blue", "red"), strict=True):
        side["agendas"] = AGENDAS[name][:count]
        side["warlord_card_id"] = world[f"{name}_units"][0]["id"]
    muster = client.post(
        f"/api/v1/campaigns/{world['campaign']}/battles",
        json={"battle_size": mission["battle_size"], "mission": mission["id"], "sides": sides},
    )
    assert muster.status_code == 201, muster.text
    battle = muster.json()
    results = []
    for name, won in (("blue", blue_wins), ("red", not blue_wins)):
        units = [u["id"] for u in world[f"{name}_units"]]
        reports: list[dict[str, Any]] = [{"card_id": units[-1], "destroyed": destroyed}]
        if won:
            reports.append({"card_id": units[0], "marked_for_greatness": True})
            if mission.get("exfiltration"):
                reports += [{"card_id": u, "exfiltrated": True} for u in units[1:-1]]
        results.append(
            {
                "force_id": world[name],
                "victory_points": 40 if won else 10,
                "units": reports,
                "dice": {
                    "rolls": [{"roll": "out_of_action", "card_id": units[-1], "value": 1}]
                    if destroyed
                    else [],
                    "others": [3] * 8,
                },
            }
        )
    recorded = client.post(f"/api/v1/battles/{battle['id']}/result", json={"sides": results})
    assert recorded.status_code == 200, recorded.text
    return dict(battle)


def offer_world(client: TestClient) -> dict[str, Any]:
    """Two forces of four units each (two CHARACTERs, one a PSYKER), with wargear."""
    campaign_id = campaign(client)
    world: dict[str, Any] = {"campaign": campaign_id}
    for name, faction, lord in (("blue", "IMPERIUM", "Captain"), ("red", "CHAOS", "Chaos Lord")):
        force_id = force(client, campaign_id, f"{name.title()} Host", faction)
        world[name] = force_id
        world[f"{name}_units"] = [
            unit(
                client,
                force_id,
                lord,
                5,
                keywords=[faction, "INFANTRY", "CHARACTER"],
                wargear="Bolt pistol\nPower sword",
            ),
            unit(
                client,
                force_id,
                "Librarian",
                5,
                keywords=[faction, "INFANTRY", "CHARACTER", "PSYKER"],
                wargear="Force sword, Bolt pistol",
            ),
            unit(client, force_id, "Squad", 5, keywords=[faction, "INFANTRY"], wargear="4x Bolter"),
            unit(client, force_id, "Scouts", 5, keywords=[faction, "INFANTRY"], wargear="Bolter"),
        ]
    return world


def missions(client: TestClient) -> list[dict[str, Any]]:
    response = client.get("/api/v1/rules/missions")
    assert response.status_code == 200, response.text
    body = response.json()
    return list(body["missions"] if isinstance(body, dict) else body)
