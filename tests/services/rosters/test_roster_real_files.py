"""Issue 39: real 9th-edition rosters from public repositories (tests/fixtures/rosters/SOURCES.md),
each compared unit by unit - name, Power Rating, keywords with placeholders filled - with a
reading of its XML done by hand, not by our reader.

How each file was read: every selection directly under a ``force`` was listed with its type,
its primary category (the slot), its categories, the PL of the selection and of everything
inside it, the categories of its models and of the options chosen for it. A detachment
setting (primary "Configuration") and any selection with no unit inside is not a unit.
A unit's keywords are then its own categories (``Faction: X`` gives X, the primary one is
its slot, not a keyword), those every model shares and those of its one CHARACTER model
(ruling 73), and those of its options (a Jump Pack's FLY and JUMP PACK; never a Lance's
CHARACTER, nor the per-battle Warlord); a placeholder such as ``<Brotherhood>`` is the option
the detachment's setting chose ("Brotherhood" → Rapiers), or nothing when it chose none
("Dynasty: <Custom>")."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.services.rosters.roster_parse import ParsedRoster, parse_roster
from tests.services.rosters.test_roster_parse import ros_of

ROSTERS = Path(__file__).parents[2] / "fixtures" / "rosters"
Unit = tuple[str, str, int, frozenset[str]]  # key, name, PL, keywords


def read(name: str) -> ParsedRoster:
    return parse_roster((ROSTERS / name).read_bytes())


def unit(key: str, name: str, power: int, *keywords: str) -> Unit:
    return key, name, power, frozenset(keywords)


BA = ("IMPERIUM", "ADEPTUS ASTARTES")
# mikeporterdev/battlescribe-sheet-builder, src/testfiles/DCBloodAngelsList.rosz (a 370,448-byte
# .ros inside): one Battalion, "**Chapter Selector**" = Blood Angels, Battle Size Strike Force,
# "Relics of the Chapter" (two extra Relics); 12 units, 106 PL. The file has no placeholder:
# the Codex units (Vanguard Veterans, Redemptor, Whirlwind, Intercessors, Infiltrators, the
# characters) carry no BLOOD ANGELS at all, only IMPERIUM and ADEPTUS ASTARTES.
BLOOD_ANGELS_2000 = [
    unit(
        "1.3", "Sanguinary Guard", 17, *BA, "BLOOD ANGELS", "INFANTRY", "FLY", "JUMP PACK",
        "SANGUINARY GUARD", "CORE",
    ),
    # its Jump Pack option (1 PL) gives FLY and JUMP PACK
    unit(
        "1.4", "Death Company Marines", 15, *BA, "BLOOD ANGELS", "DEATH COMPANY", "INFANTRY",
        "CORE", "FLY", "JUMP PACK",
    ),
    unit(
        "1.5", "Vanguard Veteran Squad", 14, *BA, "INFANTRY", "VANGUARD VETERAN SQUAD", "CORE",
        "MELTA BOMBS", "FLY", "JUMP PACK",
    ),
    unit(
        "1.6", "Redemptor Dreadnought", 9, *BA, "DREADNOUGHT", "REDEMPTOR DREADNOUGHT",
        "VEHICLE", "CORE",
    ),
    # Smoke launchers give SMOKESCREEN
    unit(
        "1.7", "Death Company Dreadnought", 7, *BA, "DEATH COMPANY DREADNOUGHT", "DREADNOUGHT",
        "BLOOD ANGELS", "DEATH COMPANY", "VEHICLE", "SMOKESCREEN",
    ),
    unit("1.8", "Whirlwind", 7, *BA, "WHIRLWIND", "VEHICLE", "SMOKESCREEN"),
    unit(
        "1.9", "Assault Intercessor Squad", 5, *BA, "PRIMARIS", "INFANTRY",
        "ASSAULT INTERCESSOR SQUAD", "CORE", "INTERCESSORS",
    ),
    unit(
        "1.10", "Infiltrator Squad", 6, *BA, "SMOKESCREEN", "PRIMARIS", "INFANTRY",
        "INFILTRATOR SQUAD", "PHOBOS", "CORE",
    ),
    unit(
        "1.11", "Infiltrator Squad", 6, *BA, "SMOKESCREEN", "PRIMARIS", "INFANTRY",
        "INFILTRATOR SQUAD", "PHOBOS", "CORE",
    ),
    # Jump Pack (1 PL) and "Chapter Command: Chapter Master" (2 PL); Warlord is per battle
    unit(
        "1.13", "Chapter Master", 8, *BA, "CHARACTER", "INFANTRY", "CAPTAIN", "FLY",
        "JUMP PACK", "CHAPTER MASTER",
    ),
    unit(
        "1.14", "Primaris Chaplain on Bike", 7, *BA, "CHARACTER", "CHAPLAIN", "PRIMARIS",
        "PRIEST", "BIKER", "MASTER OF SANCTITY",
    ),
    # written as a force-level upgrade with the HQ slot and a Unit profile (issue 25)
    unit(
        "1.16", "Primaris Techmarine", 5, *BA, "INFANTRY", "PRIMARIS", "TECHMARINE",
        "CHARACTER", "MASTER OF THE FORGE",
    ),
]  # fmt: skip

# mikeporterdev/battlescribe-sheet-builder, src/testfiles/JoshIrlGame.rosz: a Patrol whose
# "Dynasty Choice" is "Dynasty: <Custom>" (so `Faction: <Dynasty>` fills nothing) and a
# Supreme Command Detachment with the Silent King; 10 units, 80 PL. A "Dynastic Advisor"
# upgrade holds a Technomancer model, a "Bound Creation" unit holds the Cryptothralls unit.
NECRONS_SILENT_KING = [
    unit("1.3", "Chronomancer", 4, "NECRONS", "INFANTRY", "FLY", "CHARACTER", "CRYPTEK",
         "CHRONOMANCER"),
    unit("1.4", "Overlord", 6, "NECRONS", "CHARACTER", "INFANTRY", "OVERLORD", "NOBLE"),
    unit("1.5", "Necron Warriors", 12, "NECRONS", "INFANTRY", "CORE", "NECRON WARRIORS"),
    unit("1.6", "Lychguard", 14, "NECRONS", "INFANTRY", "LYCHGUARD", "CORE"),
    unit("1.8", "Immortals", 4, "NECRONS", "IMMORTALS", "INFANTRY", "CORE"),
    unit("1.9", "Canoptek Scarab Swarms", 6, "NECRONS", "CANOPTEK", "CANOPTEK SCARAB SWARMS",
         "FLY", "SWARM"),
    unit("1.10", "Technomancer", 4, "NECRONS", "CHARACTER", "CRYPTEK", "INFANTRY",
         "TECHNOMANCER", "DYNASTIC ADVISOR"),
    unit("1.11", "Cryptothralls", 2, "NECRONS", "CANOPTEK", "CRYPTOTHRALLS", "INFANTRY"),
    unit("1.12", "Skorpekh Destroyers", 5, "NECRONS", "DESTROYER CULT", "INFANTRY",
         "SKORPEKH DESTROYERS"),
    # the unit: Faction: Necrons, Faction: Szarekhan; its models, Szarekh (x1, a CHARACTER)
    # and two Triarchal Menhirs, give every keyword either has (ruling 76)
    unit("2.1", "The Silent King", 23, "NECRONS", "SZAREKHAN", "VEHICLE", "CHARACTER", "FLY",
         "SUPREME COMMANDER", "PHAERON", "NOBLE", "DYNASTIC AGENT", "THE SILENT KING",
         "SZAREKH", "TRIARCHAL MENHIRS"),
]  # fmt: skip

GK = ("IMPERIUM", "GREY KNIGHTS", "SANCTIC ASTARTES", "PSYKER", "PSYK-OUT GRENADES")
# SuperMechaCow/kroller, exampledata/1000GK_pallies.rosz: a Patrol whose "Brotherhood"
# setting chose Rapiers, filling the `<Brotherhood>` of five units (Paladins and Castellan
# Crowe have none); 7 units, 65 PL.
GREY_KNIGHTS_RAPIERS = [
    unit("1.3", "Paladin Squad", 26, *GK, "TERMINATOR", "INFANTRY", "PALADIN", "PALADIN SQUAD",
         "HONOURED KNIGHT", "CORE"),
    unit("1.4", "Nemesis Dreadknight", 9, "IMPERIUM", "GREY KNIGHTS", "SANCTIC ASTARTES",
         "PSYKER", "VEHICLE", "NEMESIS DREADKNIGHT", "CORE", "RAPIERS"),
    unit("1.5", "Strike Squad", 6, *GK, "INFANTRY", "STRIKE SQUAD", "RAPIERS", "CORE"),
    unit("1.6", "Strike Squad", 6, *GK, "INFANTRY", "STRIKE SQUAD", "RAPIERS", "CORE"),
    unit("1.7", "Purgation Squad", 7, *GK, "INFANTRY", "PURGATION SQUAD", "RAPIERS", "CORE"),
    # 5 PL and the Gem of Inoktu's 1
    unit("1.8", "Brotherhood Ancient", 6, *GK, "CHARACTER", "TERMINATOR", "ANCIENT",
         "BROTHERHOOD ANCIENT", "INFANTRY", "RAPIERS"),
    unit("1.10", "Castellan Crowe", 5, *GK, "CHARACTER", "INFANTRY", "CASTELLAN CROWE",
         "PURIFIER", "HONOURED KNIGHT"),
]  # fmt: skip

# pwestling/battlescribe-roster-parser, test_rosters/GreyKnights.rosz: two Battalions of one
# unit each, no sub-faction setting, 37 PL. This older data writes GREY KNIGHTS and ADEPTUS
# ASTARTES as plain categories beside `Faction: Imperium` and `Faction: Adeptus Astartes`.
GREY_KNIGHTS_TWO_BATTALIONS = [
    unit("1.1", "Strike Squad", 7, "IMPERIUM", "ADEPTUS ASTARTES", "GREY KNIGHTS", "INFANTRY",
         "PSYKER", "STRIKE SQUAD"),
    unit("2.1", "Paladin Squad", 30, "IMPERIUM", "ADEPTUS ASTARTES", "GREY KNIGHTS", "PSYKER",
         "TERMINATOR", "INFANTRY", "PALADIN", "PALADIN SQUAD"),
]  # fmt: skip

# pwestling/battlescribe-roster-parser, test_rosters/StormRaven.rosz: a Stormraven Gunship
# written as a force-level upgrade in the Flyer slot (with a Unit profile); 17 PL.
GREY_KNIGHTS_STORMRAVEN = [
    unit("1.1", "Stormraven Gunship", 17, "IMPERIUM", "ADEPTUS ASTARTES", "GREY KNIGHTS", "FLY",
         "TRANSPORT", "VEHICLE", "AIRCRAFT", "STORMRAVEN GUNSHIP"),
]  # fmt: skip

# pwestling/battlescribe-roster-parser, test_rosters/PlagueMarines9th.rosz: one Patrol, one
# unit of five Plague Marines, no Plague Company setting and no placeholder; 6 PL.
DEATH_GUARD_PLAGUE_MARINES = [
    unit("1.1", "Plague Marines", 6, "CHAOS", "NURGLE", "HERETIC ASTARTES", "DEATH GUARD",
         "INFANTRY", "PLAGUE MARINES"),
]  # fmt: skip

REAL = {
    "blood_angels_2000.rosz": (BLOOD_ANGELS_2000, 106),
    "necrons_silent_king.rosz": (NECRONS_SILENT_KING, 80),
    "grey_knights_rapiers.rosz": (GREY_KNIGHTS_RAPIERS, 65),
    "grey_knights_two_battalions.rosz": (GREY_KNIGHTS_TWO_BATTALIONS, 37),
    "grey_knights_stormraven.rosz": (GREY_KNIGHTS_STORMRAVEN, 17),
    "death_guard_plague_marines.rosz": (DEATH_GUARD_PLAGUE_MARINES, 6),
}


@pytest.mark.parametrize("fixture", sorted(REAL))
def test_every_unit_as_read_by_hand(fixture: str) -> None:
    assert_read_as(fixture, *REAL[fixture])


def assert_read_as(fixture: str, expected: list[Unit], total: int) -> None:
    """Our reader gives every unit of the file as read by hand, in order, and its total."""
    roster = read(fixture)
    read_units = [(u.key, u.name, u.power_rating, frozenset(u.keywords)) for u in roster.units]
    for ours, theirs in zip(read_units, expected, strict=False):
        assert ours == theirs, f"{theirs[1]} ({theirs[0]}): {ours[3] ^ theirs[3]}"
    assert len(read_units) == len(expected)
    assert roster.unreadable == ()
    assert roster.read_power == roster.total_power == total == sum(u[2] for u in expected)
    assert roster.unexplained_power == 0


def test_the_silent_king_has_szarekhs_keywords_and_his_menhirs() -> None:
    """Case 4 on a real file: the Warlord Trait the roster gives goes to a CHARACTER; the
    unit has every keyword of every model in it (ruling 76)."""
    king = read("necrons_silent_king.rosz").units[-1]
    assert king.models == ("Szarekh", "2x Triarchal Menhir") and king.warlord
    assert {"CHARACTER", "SZAREKH", "TRIARCHAL MENHIRS"} <= set(king.keywords)


def test_units_inside_an_advisor_and_a_bound_creation() -> None:
    """Case 5 on a real file: the Technomancer is a model inside a "Dynastic Advisor"
    upgrade, the Cryptothralls a unit inside a "Bound Creation" unit; both are read as
    themselves, with their own models, and neither wrapper becomes a card."""
    roster = read("necrons_silent_king.rosz")
    by_key = {u.key: u for u in roster.units}
    assert (by_key["1.10"].name, by_key["1.10"].models) == ("Technomancer", ("Technomancer",))
    assert (by_key["1.11"].name, by_key["1.11"].models) == ("Cryptothralls", ("2x Cryptothrall",))
    assert not {"Dynastic Advisor", "Bound Creation"} & {u.name for u in roster.units}


def test_the_big_file_is_a_plain_ros_past_the_usual_body_bound() -> None:
    """Case 6: the Blood Angels list's .ros is 370,448 bytes (the issue's was 371,950)."""
    xml = ros_of("blood_angels_2000.rosz")
    assert len(xml) == 370_448 and xml.startswith(b"<?xml")
    assert parse_roster(xml) == read("blood_angels_2000.rosz")
