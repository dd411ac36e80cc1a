"""Issue 38's organizer walkthrough, on SQLite and PostgreSQL, through the website as the
players use it: the Rustwake Reclaimers pack (examples/packs/, written from
docs/rule-packs.md alone) attached on the Rules page; two battles recorded in the battle
wizard, which says before the result what the pack will count and in the review what it did;
a crew that becomes another datasheet; a threshold that brings a new unit; a roll on the
pack's own table; a revert that puts every figure back; the feed and the export agreeing
with the force at every step."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from tests.web.conftest import Browser, campaign_with_two_players

PACK_DIR = Path(__file__).resolve().parents[2] / "examples" / "packs"
PACK = (PACK_DIR / "rustwake-reclaimers.yaml").read_bytes()


def _units(who: Browser, force_id: int) -> dict[str, int]:
    return {c["name"]: c["id"] for c in who.api("GET", f"/forces/{force_id}")["cards"]}


def _force(who: Browser, force_id: int) -> tuple[Any, ...]:
    found = who.api("GET", f"/forces/{force_id}")
    quests = [(q["quest"], q["state"], q["step"], q["tally"]) for q in found["quests"]]
    return (
        found["requisition_points"],
        found["supply_limit"],
        found["supply_used"],
        found["counters"],
        quests,
    )


def _section(page: str, testid: str) -> str:
    """The text of the element marked ``data-testid``, tags dropped."""
    part = page.split(f'data-testid="{testid}"', 1)[1].split("</ul>", 1)[0]
    text = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", part)))
    return text.replace(" :", ":")  # a unit's name in <strong>, then its lines


def _battle(world: dict[str, Any], destroyed: list[int], dice: str) -> tuple[str, str, str]:
    """Ruby records a Supply Drop against Kai in the wizard (her Captain Marked for
    Greatness, ``destroyed`` Kai's units, 40-15): returns the after page, the review page
    and the battle's id, the result still to confirm."""
    ruby, cid = world["ruby"], world["campaign_id"]
    started = ruby.post(f"/campaigns/{cid}/battles/new")
    base = started.headers["location"].removesuffix("/setup")
    setup = {
        "force_id": world["ruby_force"],
        "opponent_id": world["kai_force"],
        "role": "attacker",
        "battle_size": "combat_patrol",
        "mission": "supply_drop",
        "agendas_0": "assassins",
        "agendas_1": "cull_the_hordes",
        "action": "next",
    }
    assert ruby.post(f"{base}/setup", setup).status_code == 303
    mine = _units(ruby, world["ruby_force"])
    theirs = _units(world["kai"], world["kai_force"])
    roster = {"roster_0": list(mine.values()), "roster_1": list(theirs.values())}
    mustered = ruby.post(f"{base}/muster", {**roster, "action": "muster"})
    assert mustered.status_code == 303, mustered.text
    after = ruby.get(f"{base}/after").text
    entries: dict[str, Any] = {
        "vp_0": 40,
        "vp_1": 15,
        "marked_0": mine["Captain"],
        "dice": dice,
        "action": "review",
        **{f"destroyed_{card}": 1 for card in destroyed},
    }
    reviewed = ruby.post(f"{base}/after", entries)
    assert reviewed.status_code == 303, reviewed.text
    review = ruby.get(f"{base}/review").text
    submitted = ruby.post(f"{base}/review", {"action": "submit"})
    assert submitted.status_code == 303, submitted.text
    return after, review, submitted.headers["location"].removeprefix("/battles/")


def test_the_organizer_walkthrough(person: Callable[[str], Browser], engine: Engine) -> None:
    world = campaign_with_two_players(person)
    orga, ruby, kai = world["orga"], world["ruby"], world["kai"]
    cid, blue = world["campaign_id"], world["ruby_force"]

    # The organizer previews the pack on the Rules page, then attaches it.
    files = {"file": ("rustwake-reclaimers.yaml", PACK, "application/yaml")}
    shown = orga.post(f"/campaigns/{cid}/rules/packs", {"action": "preview"}, files=files)
    assert shown.status_code == 200, shown.text
    preview = shown.text.split('data-testid="pack-preview"')[1].split("</article>")[0]
    assert "3 battle traits (Magnetic Grapples, Spare Parts, Scrap-eyes)" in preview
    assert "1 counter (Salvage); 2 triggers (Strip the Field, Scrap the Fallen)" in preview
    assert "1 threshold (The Great Haul); 1 table (Scrapyard Lessons); 1 quest (The Long Haul)" in (
        preview
    )
    attached = orga.post(
        f"/campaigns/{cid}/rules/packs", {"action": "attach", "text": PACK.decode()}
    )
    assert attached.status_code == 303, attached.text

    # Four Increase Supply Limits first, so that no RP below is lost to the cap of 5.
    for _ in range(4):
        ruby.api(
            "POST", f"/forces/{blue}/requisitions", json={"requisition": "increase_supply_limit"}
        )
    assert _force(ruby, blue) == (1, 70, 16, {"salvage": 0}, [])
    theirs = _units(kai, world["kai_force"])

    # Battle 1: two of Kai's units destroyed.
    after, review, first = _battle(
        world, [theirs["Intercessor Squad"], theirs["Hellblasters"]], "/ 4 5"
    )
    watch = _section(after, "pack-watch-0")
    assert (
        "Salvage 0: +2 per battle (Strip the Field), +1 per enemy unit destroyed "
        "(Scrap the Fallen), at 6: The Great Haul" in watch
    )
    assert "The Long Haul begins with this battle, step 1 of 3 (Scout the Wrecks): 0 of 1" in watch
    news = _section(review, "pack-news-0")
    assert "Ultramarines 4th: Salvage went from 0 to 4." in news  # 2 per battle + 2 destroyed
    assert "Ultramarines 4th began The Long Haul (step 1 of 3, Scout the Wrecks: 0 of 1)." in news
    assert "completed a step of The Long Haul; now step 2 of 3, Strip the Hulks: 0 of 2." in news
    assert "Waaagh! Gorbad: Salvage went from 0 to 2." in _section(review, "pack-news-1")
    kai.api("POST", f"/battles/{first}/confirm")
    # RP 1 + 1 per battle + 1 for Supply Drop's victor
    assert _force(ruby, blue) == (3, 70, 16, {"salvage": 4}, [("the_long_haul", "under_way", 2, 0)])

    # A crew becomes another datasheet, spending 2 Salvage, on the Requisitions page.
    mine = _units(ruby, blue)
    bought = ruby.post(
        f"/forces/{blue}/requisitions",
        {"requisition": "reforge_crew", "card_id": mine["Intercessor Squad"]},
    )
    assert bought.status_code == 303, bought.text
    crew = ruby.api("GET", f"/cards/{mine['Intercessor Squad']}")
    assert (crew["name"], crew["datasheet"], crew["power_rating"], crew["xp"]) == (
        "Iron Reclaimers",
        "Iron Reclaimers",
        6,
        1,
    )
    assert crew["keywords"] == ["ARMOURED", "IMPERIUM", "INFANTRY"]
    assert _force(ruby, blue) == (2, 70, 17, {"salvage": 2}, [("the_long_haul", "under_way", 2, 0)])
    feed = ruby.api("GET", f"/campaigns/{cid}/events?limit=200")["items"]
    said = [e["summary"] for e in feed[-3:]]
    assert said == [
        "Ultramarines 4th used the Reforge the Crew Requisition (1 RP).",
        "Ultramarines 4th: Salvage went from 4 to 2.",
        "Intercessor Squad (Ultramarines 4th) became Iron Reclaimers (Power Rating 6).",
    ]

    # Battle 2: all three of Kai's units; Salvage rises past 6, the Captain to Blooded.
    everything = list(theirs.values())
    after, review, second = _battle(world, everything, "/ 2 3 4")
    assert "Salvage 2: " in _section(after, "pack-watch-0")
    assert "step 2 of 3 (Strip the Hulks): 0 of 2, per enemy unit destroyed" in _section(
        after, "pack-watch-0"
    )
    news = _section(review, "pack-news-0")
    assert "Ultramarines 4th reached The Great Haul: Salvage rose to 6 or more." in news
    assert "Ultramarines 4th: Salvage went from 2 to 7." in news  # 2 + 2 + 3
    assert "now step 3 of 3, Haul it Home: 0 of 1." in news
    assert "free requisitions from The Great Haul" in review
    assert "a Battle Honour to choose: Captain (or a roll on Scrapyard Lessons)" in review
    kai.api("POST", f"/battles/{second}/confirm")
    # RP 2 + 1 per battle + 1 Supply Drop + 1 The Great Haul
    assert _force(ruby, blue) == (5, 70, 17, {"salvage": 7}, [("the_long_haul", "under_way", 3, 0)])

    # The Captain's Battle Honour, rolled on the pack's table with the die cast at the table.
    pending = ruby.api("GET", f"/forces/{blue}/decisions")["items"]
    honour = next(d for d in pending if d["kind"] == "battle_honour")
    page = ruby.get(f"/decisions/{honour['id']}").text
    assert 'name="table_battle_trait" value="scrapyard_lessons"' in page
    answered = ruby.post(
        f"/decisions/{honour['id']}/answer",
        {
            "category": "battle_trait",
            "table_battle_trait": "scrapyard_lessons",
            "dice_mode": "enter",
            "dice": "5",
        },
    )
    assert answered.status_code == 303, answered.text
    captain = ruby.api("GET", f"/cards/{mine['Captain']}")
    assert (captain["xp"], captain["rank"]) == (8, "blooded")  # 1 + 3, twice
    assert [[e["id"] for e in h["entries"]] for h in captain["honours"]] == [["scrap_eyes"]]

    # The organizer reverts battle 2: every figure comes back, and the feed says so.
    reverted = orga.post(f"/battles/{second}/revert")
    assert reverted.status_code == 303, reverted.text
    assert _force(ruby, blue) == (2, 70, 17, {"salvage": 2}, [("the_long_haul", "under_way", 2, 0)])
    captain = ruby.api("GET", f"/cards/{mine['Captain']}")
    assert (captain["xp"], captain["rank"], captain["honours"]) == (4, "battle_ready", [])
    assert ruby.api("GET", f"/forces/{blue}/decisions")["items"] == []
    feed = ruby.api("GET", f"/campaigns/{cid}/events?limit=200")["items"]
    told = [e["summary"] for e in feed if e["battle_id"] == int(second)][-5:]
    assert told == [
        "Ultramarines 4th: Salvage went from 7 to 2.",
        "Ultramarines 4th: The Long Haul was put back by a revert.",
        "Waaagh! Gorbad: Salvage went from 4 to 2.",  # 2 + 2 per battle, back
        f"Battle {second} was reverted.",
        # the Haul's free requisitions were never taken: the revert cancels them (issue 34)
        "Ultramarines 4th's victor bonus choice was cancelled: its battle was reverted.",
    ]

    # Played again: The Great Haul's Scrap Walker joins through the decision page.
    _after, _review, again = _battle(world, everything, "/ 2 3 4")
    kai.api("POST", f"/battles/{again}/confirm")
    pending = ruby.api("GET", f"/forces/{blue}/decisions")["items"]
    haul = next(d for d in pending if d["kind"] == "victor_bonus")
    assert haul["payload"]["threshold"]["name"] == "The Great Haul"
    assert "Use Scrap Walker for free" in ruby.get(f"/decisions/{haul['id']}").text
    taken = ruby.post(f"/decisions/{haul['id']}/answer", {"use": "0"})
    assert taken.status_code == 303, taken.text
    walker = ruby.api("GET", f"/forces/{blue}")["cards"][-1]
    assert (walker["name"], walker["power_rating"], walker["keywords"]) == (
        "Scrap Walker",
        4,
        ["IMPERIUM", "VEHICLE", "WALKER"],
    )
    assert _force(ruby, blue) == (5, 70, 21, {"salvage": 7}, [("the_long_haul", "under_way", 3, 0)])

    # The export carries the same figures, the quest's state with the force's counters.
    export = orga.api("GET", f"/campaigns/{cid}/export")
    [kept] = [f for f in export["forces"] if f["name"] == "Ultramarines 4th"]
    assert (kept["requisition_points"], kept["supply_limit"]) == (5, 70)
    assert kept["counters"] == {
        "salvage": 7,
        "quest:the_long_haul": 3,
        "quest:the_long_haul:tally": 0,
    }
    cards = {c["name"]: c for c in export["cards"] if c["force_id"] == kept["id"]}
    assert (cards["Iron Reclaimers"]["datasheet"], cards["Iron Reclaimers"]["power_rating"]) == (
        "Iron Reclaimers",
        6,
    )
    assert cards["Scrap Walker"]["power_rating"] == 4
    assert [p["pack_id"] for p in export["rule_packs"]] == ["rustwake_reclaimers"]


def test_the_wizard_names_what_each_unit_will_count(
    person: Callable[[str], Browser], engine: Engine
) -> None:
    """A card counter's trigger and a unit's quest are named on the unit's line: the Ashen
    Pilgrims' Martyrdom for every unit, the Cinder Brood's automatic Trial of the Alpha for
    the CHARACTER only; a campaign without packs shows nothing of the kind."""
    world = campaign_with_two_players(person)
    orga, ruby, cid = world["orga"], world["ruby"], world["campaign_id"]
    started = ruby.post(f"/campaigns/{cid}/battles/new")
    base = started.headers["location"].removesuffix("/setup")
    setup = {
        "force_id": world["ruby_force"],
        "opponent_id": world["kai_force"],
        "battle_size": "combat_patrol",
        "mission": "sweep_and_clear",
        "agendas_0": "assassins",
        "agendas_1": "cull_the_hordes",
        "action": "next",
    }
    for name in ("ashen-pilgrims.yaml", "cinder-brood.yaml"):
        text = (PACK_DIR / name).read_text()
        made = orga.post(f"/campaigns/{cid}/rules/packs", {"action": "attach", "text": text})
        assert made.status_code == 303, made.text
    assert ruby.post(f"{base}/setup", setup).status_code == 303
    mine = _units(ruby, world["ruby_force"])
    theirs = _units(world["kai"], world["kai_force"])
    roster = {"roster_0": list(mine.values()), "roster_1": list(theirs.values())}
    assert ruby.post(f"{base}/muster", {**roster, "action": "muster"}).status_code == 303
    after = ruby.get(f"{base}/after").text
    watch = _section(after, "pack-watch-0")
    martyrdom = "Martyrdom 0: +1 per time it is destroyed (Fall in Faith), at 3: Thrice Risen"
    assert f"Intercessor Squad: {martyrdom}" in watch
    assert (
        f"Captain: {martyrdom}; Trial of the Alpha begins with this battle, step 1 of 2 "
        "(First Kill): 0 of 1, per enemy unit it destroys; it fails if it is destroyed" in watch
    )
    assert "Biomass" not in watch  # no trigger moves it: nothing to count in a battle


def test_no_pack_no_watch(person: Callable[[str], Browser]) -> None:
    world = campaign_with_two_players(person)
    ruby, cid = world["ruby"], world["campaign_id"]
    started = ruby.post(f"/campaigns/{cid}/battles/new")
    base = started.headers["location"].removesuffix("/setup")
    setup = {
        "force_id": world["ruby_force"],
        "opponent_id": world["kai_force"],
        "battle_size": "combat_patrol",
        "mission": "sweep_and_clear",
        "agendas_0": "assassins",
        "agendas_1": "cull_the_hordes",
        "action": "next",
    }
    assert ruby.post(f"{base}/setup", setup).status_code == 303
    mine = _units(ruby, world["ruby_force"])
    theirs = _units(world["kai"], world["kai_force"])
    roster = {"roster_0": list(mine.values()), "roster_1": list(theirs.values())}
    assert ruby.post(f"{base}/muster", {**roster, "action": "muster"}).status_code == 303
    assert "pack-watch" not in ruby.get(f"{base}/after").text
