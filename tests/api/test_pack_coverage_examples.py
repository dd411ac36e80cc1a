"""docs/pack-coverage.md counts what the example packs of examples/packs/mixed/ show: the
Chaos Knights pack, which the six-faction walkthrough does not play (its sixth force is the
Votann one), played here in a campaign that mixes it with the other six, on SQLite and
PostgreSQL. A Knight's Damnation rises with its own deeds, its patron's boon is the only
reward it may take at Tainted, and the Sisters beside it move only their own Sanctity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.api.helpers import assert_problem, campaign, dump, unit
from tests.api.test_pack_scope_walkthrough import _force
from tests.api.test_rule_packs import attached

MIXED = Path(__file__).resolve().parents[2] / "examples" / "packs" / "mixed"
CULL = "cull_the_hordes"


Side = tuple[int, list[int]]


def _battle(client: TestClient, cid: int, a: Side, b: Side) -> int:
    sides = [
        {"force_id": f, "role": role, "roster": roster, "agendas": [CULL]}
        for (f, roster), role in ((a, "attacker"), (b, "defender"))
    ]
    body = {"battle_size": "combat_patrol", "mission": "sweep_and_clear", "sides": sides}
    mustered = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert mustered.status_code == 201, mustered.text
    return int(mustered.json()["id"])


def _result(client: TestClient, battle: int, *sides: dict[str, Any]) -> None:
    done = client.post(f"/api/v1/battles/{battle}/result", json={"sides": list(sides)})
    assert done.status_code == 200, done.text


def _card(client: TestClient, card: int) -> dict[str, Any]:
    return dict(client.get(f"/api/v1/cards/{card}").json())


def test_a_knights_damnation_patron_and_boon_in_a_mixed_campaign(
    client: TestClient, engine: Engine
) -> None:
    cid = campaign(client, "The Sundered Reach")
    for path in sorted(MIXED.glob("*.yaml")):  # all seven example packs, one campaign
        attached(client, cid, path.read_text())
    knights = _force(client, cid, "House Vargh", "CHAOS", ["CHAOS KNIGHTS"])
    sisters = _force(client, cid, "Order of the Ember", "IMPERIUM", ["ADEPTA SORORITAS"])
    knight = unit(client, knights, "Bloodhowl", 9, keywords=["CHAOS", "TITANIC", "VEHICLE"])["id"]
    canoness = unit(client, sisters, "Canoness Ysolde", 3, keywords=["IMPERIUM", "CHARACTER"])
    squad = unit(client, sisters, "Battle Sisters")["id"]
    assert client.get(f"/api/v1/forces/{knights}").json()["counters"] == {"dread": 0}

    # A Knight pledges to a patron only once it has fallen far enough (Damnation 2).
    before = dump(engine)
    pledge = {"requisition": "pledge_to_the_blood_god", "card_id": knight}
    early = client.post(f"/api/v1/forces/{knights}/requisitions", json=pledge)
    assert "Bloodhowl does not" in assert_problem(early, 422, "requisition_not_eligible")["detail"]
    assert dump(engine) == before

    # 1: the Knight destroys the squad and is Marked for Greatness: Damnation 1 + 1.
    first = _battle(client, cid, (knights, [knight]), (sisters, [squad, canoness["id"]]))
    _result(
        client,
        first,
        {
            "force_id": knights,
            "victory_points": 30,
            "units": [{"card_id": knight, "destroyed_ranged": 1, "marked_for_greatness": True}],
        },
        {
            "force_id": sisters,
            "victory_points": 10,
            "units": [
                {"card_id": squad, "destroyed": True},
                {"card_id": canoness["id"], "marked_for_greatness": True},
            ],
            "dice": [6],
        },
    )
    assert _card(client, knight)["counters"] == {"damnation": 2}
    assert client.get(f"/api/v1/forces/{knights}").json()["counters"] == {"dread": 1}
    # The Canoness, Marked for Greatness, gains her own pack's Sanctity (Chosen One: 2), and
    # nothing of the Knights'; her force holds no Dread.
    assert _card(client, canoness["id"])["counters"] == {"sanctity": 2}
    assert set(client.get(f"/api/v1/forces/{sisters}").json()["counters"]) == {"faith", "rite"}

    pledged = client.post(f"/api/v1/forces/{knights}/requisitions", json=pledge)
    assert pledged.status_code in (200, 201), pledged.text
    assert _card(client, knight)["choices"]["patron"] == "blood_god"

    # 2: again: Damnation 4 reaches Tainted; the boon is owed to Bloodhowl alone.
    second = _battle(client, cid, (knights, [knight]), (sisters, [squad, canoness["id"]]))
    _result(
        client,
        second,
        {
            "force_id": knights,
            "victory_points": 30,
            "units": [{"card_id": knight, "destroyed_ranged": 1, "marked_for_greatness": True}],
        },
        {
            "force_id": sisters,
            "victory_points": 10,
            "units": [{"card_id": squad, "destroyed": True}],
            "dice": [6],
        },
    )
    assert _card(client, knight)["counters"]["damnation"] == 4
    owed = [
        d
        for d in client.get(f"/api/v1/forces/{knights}/decisions").json()["items"]
        if d["kind"] == "victor_bonus"
    ]
    assert [(d["payload"]["threshold"]["id"], d["card_id"]) for d in owed] == [("tainted", knight)]
    # Another patron's boon is refused: the Knight is sworn to the Blood God.
    before = dump(engine)
    wrong = client.post(
        f"/api/v1/decisions/{owed[0]['id']}/answer",
        json={"requisitions": [{"requisition": "boon_of_rot"}]},
    )
    refused = assert_problem(wrong, 422, "requisition_not_eligible")
    assert "Boon of Rot" in refused["detail"]
    assert [r["requisition"] for r in refused["offer"]["requisitions"] if r["targets"]] == [
        "boon_of_slaughter"
    ]
    assert dump(engine) == before
    right = client.post(
        f"/api/v1/decisions/{owed[0]['id']}/answer",
        json={"requisitions": [{"requisition": "boon_of_slaughter"}]},
    )
    assert right.status_code == 200, right.text
    honours = [[e["id"] for e in h["entries"]] for h in _card(client, knight)["honours"]]
    assert honours == [["gift_of_slaughter"]]
    # No decision of the Knights' pack ever reaches the Sisters.
    theirs = client.get(f"/api/v1/forces/{sisters}/decisions").json()["items"]
    assert all(d["kind"] != "victor_bonus" for d in theirs)


def test_a_nobles_engram_collapse_in_a_mixed_campaign(client: TestClient, engine: Engine) -> None:
    """The Necrons' Engram Collapse as the-waking.yaml writes it: each time the noble is
    destroyed its Engram Decay rises; at 4 it loses 3 XP and rolls on the pack's own scar
    table with the battle's dice (after its Out of Action test's); a revert puts it back.
    The swarm it fights gathers only its own Biomass, and 12 of it deepens its invasion."""
    cid = campaign(client, "The Sundered Reach")
    for path in sorted(MIXED.glob("*.yaml")):
        attached(client, cid, path.read_text())
    tombs = _force(client, cid, "Dynasty of Ash", "NECRONS", [])
    swarm = _force(client, cid, "Hive Fleet Vora", "TYRANIDS", [])
    lord = unit(client, tombs, "Lord Sekhet", 6, keywords=["NECRONS", "CHARACTER"])["id"]
    brood = unit(client, swarm, "Termagants", keywords=["TYRANIDS", "INFANTRY"])["id"]

    def fight(dice: list[int]) -> int:
        battle = _battle(client, cid, (tombs, [lord]), (swarm, [brood]))
        lost = {"card_id": lord, "destroyed": True}
        _result(
            client,
            battle,
            {"force_id": tombs, "victory_points": 10, "units": [lost], "dice": dice},
            {"force_id": swarm, "victory_points": 30, "units": [{"card_id": brood}]},
        )
        return battle

    for _ in range(3):  # destroyed three times, each Out of Action test passed (6)
        fight([6])
    assert _card(client, lord)["counters"] == {"engram_decay": 3}
    assert _card(client, lord)["xp"] == 3
    # The swarm: 1 Biomass a battle (Feeding) and 2 for the enemy CHARACTER it destroyed
    # (Apex Prey), its own pack's only; the dynasty 1 Awakening a battle, its own.
    swarm_counters = client.get(f"/api/v1/forces/{swarm}").json()["counters"]
    assert swarm_counters == {"biomass": 9, "invasion": 1}
    assert client.get(f"/api/v1/forces/{tombs}").json()["counters"] == {"awakening": 3}

    last = fight([6, 3])  # the fourth: Engram Collapse; the table's D6 shows 3
    card = _card(client, lord)
    assert card["counters"] == {"engram_decay": 4}
    assert card["xp"] == 3 + 1 - 3
    assert [(s["id"], s["dice"]) for s in card["scars"]] == [("fractured_memory", [[6, 3]])]
    # 12 Biomass deepens the invasion (stage 2, Biomass from 0) and owes the swarm its
    # free Feeding Frenzy; the dynasty owes nothing of the swarm's.
    swarm_counters = client.get(f"/api/v1/forces/{swarm}").json()["counters"]
    assert swarm_counters == {"biomass": 0, "invasion": 2}
    owed = client.get(f"/api/v1/forces/{swarm}/decisions").json()["items"]
    assert [d["payload"]["threshold"]["id"] for d in owed if d["kind"] == "victor_bonus"] == [
        "next_stage"
    ]
    theirs = client.get(f"/api/v1/forces/{tombs}/decisions").json()["items"]
    assert all(d["kind"] != "victor_bonus" for d in theirs)

    reverted = client.post(f"/api/v1/battles/{last}/revert")
    assert reverted.status_code == 200, reverted.text
    card = _card(client, lord)
    assert (card["counters"], card["xp"], card["scars"]) == ({"engram_decay": 3}, 3, [])
    swarm_counters = client.get(f"/api/v1/forces/{swarm}").json()["counters"]
    assert swarm_counters == {"biomass": 9, "invasion": 1}


def _fight(
    client: TestClient, cid: int, a: dict[str, Any], b: dict[str, Any], vp: tuple[int, int]
) -> int:
    """One battle: each side a dict with ``force``, ``roster``, ``agenda`` and ``units`` (the
    units' result lines); the first side wins by ``vp``. A side's destroyed units pass
    their Out of Action tests (6s)."""
    sides = [
        {"force_id": s["force"], "role": r, "roster": s["roster"], "agendas": [s["agenda"]]}
        for s, r in ((a, "attacker"), (b, "defender"))
    ]
    body = {"battle_size": "combat_patrol", "mission": "sweep_and_clear", "sides": sides}
    mustered = client.post(f"/api/v1/campaigns/{cid}/battles", json=body)
    assert mustered.status_code == 201, mustered.text
    battle = int(mustered.json()["id"])
    results = []
    for side, points in zip((a, b), vp, strict=True):
        lost = sum(1 for u in side["units"] if u.get("destroyed"))
        line = {"force_id": side["force"], "victory_points": points, "units": side["units"]}
        results.append({**line, "dice": [6] * lost} if lost else line)
    _result(client, battle, *results)
    return battle


def _figures(client: TestClient, force: int, card: int) -> tuple[int, int, dict[str, int]]:
    """A force's RP, one unit's XP, and the force's own counters."""
    shown = client.get(f"/api/v1/forces/{force}").json()
    return shown["requisition_points"], _card(client, card)["xp"], shown["counters"]


def test_each_factions_failed_agenda_costs_what_its_pack_says(
    client: TestClient, engine: Engine
) -> None:
    """Every example Agenda has an ``on_fail`` (ruling 85): a battle in which the army
    chose it and a unit scored it takes nothing; the next, in which none did, takes the
    XP or RP the pack names, from that faction's force only; a revert gives it back. A
    core force beside them (no army keyword: no pack reaches it) is their opponent."""
    cid = campaign(client, "The Sundered Reach")
    for path in sorted(MIXED.glob("*.yaml")):
        attached(client, cid, path.read_text())
    rivals = _force(client, cid, "Ultramarines 4th", "IMPERIUM", [])
    foe = unit(client, rivals, "Intercessor Squad")["id"]
    foe_line = {"force": rivals, "roster": [foe], "agenda": CULL}
    # faction, army keywords, its unit's keywords, the Agenda, a scoring line for battle 1,
    # and the hand counts (RP, the unit's XP, the force counters) after each battle.
    Case = tuple[str, str, list[str], list[str], str, dict[str, Any], tuple[Any, ...]]
    cases: list[Case] = [
        # Hymn of War, 2 XP a mark; failed: each unit loses 1 XP (1 + 2, then 3 + 1 - 1).
        (
            "Order of the Ember",
            "IMPERIUM",
            ["ADEPTA SORORITAS"],
            ["IMPERIUM", "INFANTRY"],
            "hymn_of_war",
            {"agenda_tallies": {"hymn_of_war": 1}},
            ((5, 3, {"faith": 3, "rite": 0}), (5, 3, {"faith": 6, "rite": 0})),
        ),
        # Tyrant's Tithe, 2 XP a mark and 1 Dread; failed: the household loses 1 RP after
        # the battle's own (5, capped, - 1).
        (
            "House Vargh",
            "CHAOS",
            ["CHAOS KNIGHTS"],
            ["CHAOS", "TITANIC", "VEHICLE"],
            "tyrants_tithe",
            {"agenda_tallies": {"tyrants_tithe": 1}},
            ((5, 3, {"dread": 1}), (4, 4, {"dread": 1})),
        ),
        # Seed the Ground, 1 XP a mark and 1 Contagion; failed: 1 XP (2, then 2 + 1 - 1).
        (
            "The Rotting Host",
            "CHAOS",
            ["DEATH GUARD"],
            ["CHAOS", "INFANTRY"],
            "seed_the_ground",
            {"agenda_tallies": {"seed_the_ground": 1}},
            ((5, 2, {"virulence": 0, "contagion": 1}), (5, 2, {"virulence": 0, "contagion": 1})),
        ),
        # Trophy of the Hunt, 3 XP to the highest tally (a kill: the Intercessors fall, and
        # Renown is the unit's own); failed: the company loses 1 RP.
        (
            "Frostfang Pack",
            "IMPERIUM",
            ["SPACE WOLVES"],
            ["IMPERIUM", "INFANTRY"],
            "trophy_of_the_hunt",
            {"agenda_tallies": {"trophy_of_the_hunt": 1}, "destroyed_melee": 1},
            ((5, 4, {}), (4, 5, {})),
        ),
        # Reclaim the Tombs, 2 XP to each unit that achieved it and 1 Awakening (with 1 a
        # battle from Stirring); failed: the dynasty loses 1 RP.
        (
            "Dynasty of Ash",
            "NECRONS",
            [],
            ["NECRONS", "INFANTRY"],
            "reclaim_the_tombs",
            {"agenda_tallies": {"reclaim_the_tombs": 1}},
            ((5, 3, {"awakening": 2}), (4, 4, {"awakening": 3})),
        ),
    ]
    for name, faction, army, keywords, agenda, scored, (first, second) in cases:
        force = _force(client, cid, name, faction, army)
        card = unit(client, force, f"{name} line", keywords=keywords)["id"]
        mine = {"force": force, "roster": [card], "agenda": agenda}
        won = {**mine, "units": [{"card_id": card, **scored}]}
        lost_line = [{"card_id": foe, "destroyed": True}] if "destroyed_melee" in scored else []
        _fight(client, cid, won, {**foe_line, "units": lost_line}, (30, 10))
        assert _figures(client, force, card) == first, name
        failed = _fight(client, cid, {**mine, "units": []}, {**foe_line, "units": []}, (30, 10))
        assert _figures(client, force, card) == second, name
        assert client.post(f"/api/v1/battles/{failed}/revert").status_code == 200
        assert _figures(client, force, card) == first, name
    # The core force lost no XP and no RP to any of the packs' failures: 1 XP a battle.
    assert _figures(client, rivals, foe)[:2] == (5, 10 - 5)

    # Devour the Prey is for a swarm past its first stage: at stage 1 no brood could
    # score it, so failing it takes nothing (the brood keeps its battle's 1 XP).
    swarm = _force(client, cid, "Hive Fleet Vora", "TYRANIDS", [])
    brood = unit(client, swarm, "Termagants", keywords=["TYRANIDS", "INFANTRY"])["id"]
    mine = {"force": swarm, "roster": [brood], "agenda": "devour_the_prey", "units": []}
    _fight(client, cid, mine, {**foe_line, "units": []}, (30, 10))
    assert _figures(client, swarm, brood) == (5, 1, {"biomass": 1, "invasion": 1})


def _quests(client: TestClient, card: int) -> list[tuple[str, str, int, int]]:
    return [(q["quest"], q["state"], q["step"], q["tally"]) for q in _card(client, card)["quests"]]


def test_a_heroines_sanctity_and_trial_of_the_sword_read_her_named_kills(
    client: TestClient, engine: Engine
) -> None:
    """Sanctity grows with a heroine's own kills, however the units name theirs (ruling
    86: on ``melee_kill``, ``keywords_any`` picks the unit that killed); the Trial of the
    Sword's first step counts only an enemy CHARACTER she names, its second an Agenda she
    completes (``agenda_completed``); a battle moves the trial by one step at most."""
    cid = campaign(client, "The Sundered Reach")
    for path in sorted(MIXED.glob("*.yaml")):
        attached(client, cid, path.read_text())
    sisters = _force(client, cid, "Order of the Ember", "IMPERIUM", ["ADEPTA SORORITAS"])
    plague = _force(client, cid, "The Rotting Host", "CHAOS", ["DEATH GUARD"])
    canoness = unit(client, sisters, "Canoness Ysolde", 3, keywords=["IMPERIUM", "CHARACTER"])
    heroine = canoness["id"]
    squad = unit(client, sisters, "Battle Sisters")["id"]
    marines = unit(client, plague, "Plague Marines", keywords=["CHAOS", "INFANTRY"])["id"]
    lord = unit(client, plague, "Lord of Contagion", 6, keywords=["CHAOS", "CHARACTER"])["id"]
    vow = {"requisition": "take_up_the_sword", "card_id": heroine}
    taken = client.post(f"/api/v1/forces/{sisters}/requisitions", json=vow)
    assert taken.status_code in (200, 201), taken.text
    assert _card(client, heroine)["choices"]["trial"] == "trial_of_the_sword"
    assert _quests(client, heroine) == [("trial_of_the_sword", "under_way", 1, 0)]

    def battle(agenda: str, canoness_line: dict[str, Any], squad_line: dict[str, Any]) -> int:
        ours = {
            "force": sisters,
            "roster": [heroine, squad],
            "agenda": agenda,
            "units": [{"card_id": heroine, **canoness_line}, {"card_id": squad, **squad_line}],
        }
        lost = [{"card_id": marines, "destroyed": True}, {"card_id": lord, "destroyed": True}]
        theirs = {"force": plague, "roster": [marines, lord], "agenda": CULL, "units": lost}
        return _fight(client, cid, ours, theirs, (30, 10))

    # 1: she cuts down the Plague Marines, the squad shoots the Lord: her Sanctity 1 (her
    # kill), the squad's none (no heroine, whatever it slew); the trial's first step wants
    # a CHARACTER of hers: tally 0.
    melee = {"destroyed_melee": 1, "destroyed_enemies": [marines]}
    battle(CULL, melee, {"destroyed_ranged": 1, "destroyed_enemies": [lord]})
    assert (_card(client, heroine)["counters"], _card(client, squad)["counters"]) == (
        {"sanctity": 1, "trial": 2},  # the trial she is on: the second choice
        {},
    )
    assert _quests(client, heroine) == [("trial_of_the_sword", "under_way", 1, 0)]

    # 2: she slays the Lord (step 1 done) and sings the Hymn (completed; the step it would
    # count for starts with the next battle): Sanctity 2, XP 1 + 1 + 2.
    sung = {"destroyed_melee": 1, "destroyed_enemies": [lord], "agenda_tallies": {"hymn_of_war": 1}}
    battle("hymn_of_war", sung, {"destroyed_ranged": 1, "destroyed_enemies": [marines]})
    assert _card(client, heroine)["counters"] == {"sanctity": 2, "trial": 2}
    assert _card(client, heroine)["xp"] == 4
    assert _quests(client, heroine) == [("trial_of_the_sword", "under_way", 2, 0)]

    # 3: the Hymn again: the trial is done: Sanctity 2 + 2, XP 4 + 1 + 2 + 3 (Blooded at 6).
    last = battle("hymn_of_war", {"agenda_tallies": {"hymn_of_war": 1}}, {})
    card = _card(client, heroine)
    assert (card["counters"], card["xp"]) == ({"sanctity": 4, "trial": 2}, 10)
    # done: past its last step (3 of 2), nothing more to tally
    assert _quests(client, heroine) == [("trial_of_the_sword", "completed", 3, 0)]
    # The squad: 1 XP a battle, never a Sanctity; the plague host holds none of it.
    assert (_card(client, squad)["xp"], _card(client, squad)["counters"]) == (3, {})
    assert all(_card(client, c)["counters"] == {} for c in (marines, lord))

    reverted = client.post(f"/api/v1/battles/{last}/revert")
    assert reverted.status_code == 200, reverted.text
    card = _card(client, heroine)
    assert (card["counters"], card["xp"]) == ({"sanctity": 2, "trial": 2}, 4)
    assert _quests(client, heroine) == [("trial_of_the_sword", "under_way", 2, 0)]


def test_a_huntsmans_quarry_and_a_beastslayers_monsters(client: TestClient, engine: Engine) -> None:
    """The Space Wolves' sagas read what each hero names: the Huntsman's saga ends when his
    own kills name the quarry he named for that battle (``quarry_destroyed``); the
    Beastslayer's first deed counts only the MONSTERs (or VEHICLEs) he names. The swarm
    they hunt gathers only its own Biomass."""
    cid = campaign(client, "The Sundered Reach")
    for path in sorted(MIXED.glob("*.yaml")):
        attached(client, cid, path.read_text())
    wolves = _force(client, cid, "Frostfang Pack", "IMPERIUM", ["SPACE WOLVES"])
    swarm = _force(client, cid, "Hive Fleet Vora", "TYRANIDS", [])
    wolf_lord = unit(client, wolves, "Wolf Lord Hrothgar", 6, keywords=["IMPERIUM", "CHARACTER"])
    leader = unit(client, wolves, "Battle Leader Skar", 4, keywords=["IMPERIUM", "CHARACTER"])
    lord, skar = wolf_lord["id"], leader["id"]
    beasts = ["TYRANIDS", "MONSTER"]
    carnifex = unit(client, swarm, "Carnifex", 6, keywords=beasts)["id"]
    tyrannofex = unit(client, swarm, "Tyrannofex", 8, keywords=beasts)["id"]
    termagants = unit(client, swarm, "Termagants", 3, keywords=["TYRANIDS", "INFANTRY"])["id"]
    hormagaunts = unit(client, swarm, "Hormagaunts", 3, keywords=["TYRANIDS", "INFANTRY"])["id"]
    for requisition, hero in (("swear_the_huntsman", lord), ("swear_the_beastslayer", skar)):
        sworn = client.post(
            f"/api/v1/forces/{wolves}/requisitions",
            json={"requisition": requisition, "card_id": hero},
        )
        assert sworn.status_code in (200, 201), sworn.text

    def battle(lord_line: dict[str, Any], skar_line: dict[str, Any], fallen: list[int]) -> int:
        ours = {
            "force": wolves,
            "roster": [lord, skar],
            "agenda": CULL,
            "units": [{"card_id": lord, **lord_line}, {"card_id": skar, **skar_line}],
        }
        brood = [carnifex, tyrannofex, termagants, hormagaunts]
        lost = [{"card_id": c, "destroyed": True} for c in fallen]
        return _fight(
            client,
            cid,
            ours,
            {"force": swarm, "roster": brood, "agenda": CULL, "units": lost},
            (30, 10),
        )

    # 1: the Wolf Lord hunts the Carnifex but slays the Termagants; Skar slays the
    # Hormagaunts and the Tyrannofex: one MONSTER of his two deeds.
    battle(
        {"quarry": carnifex, "destroyed_melee": 1, "destroyed_enemies": [termagants]},
        {"destroyed_melee": 2, "destroyed_enemies": [hormagaunts, tyrannofex]},
        [termagants, hormagaunts, tyrannofex],
    )
    assert _quests(client, lord) == [("saga_of_the_huntsman", "under_way", 1, 0)]
    assert _quests(client, skar) == [("saga_of_the_beastslayer", "under_way", 1, 1)]
    # Biomass: 1 a battle (Feeding), 1 per brood lost (Reclaim); it destroyed nothing.
    assert client.get(f"/api/v1/forces/{swarm}").json()["counters"]["biomass"] == 1 + 3

    # 2: he names the Carnifex again and slays it: the saga is done (3 XP, Hailed
    # Huntsman); Skar's kill is no beast: still one of two.
    last = battle(
        {"quarry": carnifex, "destroyed_melee": 1, "destroyed_enemies": [carnifex]},
        {"destroyed_ranged": 1, "destroyed_enemies": [termagants]},
        [carnifex, termagants],
    )
    hero = _card(client, lord)
    assert _quests(client, lord) == [("saga_of_the_huntsman", "completed", 2, 0)]
    assert hero["xp"] == 1 + 1 + 3
    assert [[e["id"] for e in h["entries"]] for h in hero["honours"]] == [["hailed_huntsman"]]
    assert _quests(client, skar) == [("saga_of_the_beastslayer", "under_way", 1, 1)]
    # Renown: each hero's own kills (Deeds).
    assert (
        _card(client, lord)["counters"]["renown"],
        _card(client, skar)["counters"]["renown"],
    ) == (2, 3)
    assert client.get(f"/api/v1/forces/{swarm}").json()["counters"]["biomass"] == 4 + 1 + 2

    reverted = client.post(f"/api/v1/battles/{last}/revert")
    assert reverted.status_code == 200, reverted.text
    hero = _card(client, lord)
    assert (hero["xp"], hero["honours"], hero["counters"]["renown"]) == (1, [], 1)
    assert _quests(client, lord) == [("saga_of_the_huntsman", "under_way", 1, 0)]
    assert client.get(f"/api/v1/forces/{swarm}").json()["counters"]["biomass"] == 4
