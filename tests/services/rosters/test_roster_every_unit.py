"""Issue 39: rosters read exactly, unit by unit (name, Power Rating, keywords with their
placeholders filled), against a reading of each file done by hand. Real files are in
tests/fixtures/rosters (the newest, read by hand in full: test_roster_real_files.py),
constructed ones (the same BattleScribe structure, one case each, for cases no real file
covers) in tests/fixtures/rosters/constructed; SOURCES.md says which is which."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.services.rosters.roster_factions import Setting, fill_placeholders
from app.services.rosters.roster_parse import ParsedRoster, parse_roster
from tests.services.rosters.test_roster_parse import COMMANDER, roster_with

ROSTERS = Path(__file__).parents[2] / "fixtures" / "rosters"


def read(name: str) -> ParsedRoster:
    return parse_roster((ROSTERS / name).read_bytes())


def units_of(roster: ParsedRoster) -> list[tuple[str, int, set[str]]]:
    return [(u.name, u.power_rating, set(u.keywords)) for u in roster.units]


CHAOS = {"CHAOS", "HERETIC ASTARTES", "BLACK LEGION"}
ORKS = {"ORK", "GOFFS"}
KNIGHTS = {"IMPERIUM", "IMPERIAL KNIGHTS", "QUESTOR IMPERIALIS", "HOUSE CADMUS"}
SAIM_HANN = {"AELDARI", "ASURYANI", "SAIM-HANN"}
SISTERS = {"IMPERIUM", "ADEPTUS MINISTORUM", "ADEPTA SORORITAS"}

SUB_FACTIONS = {
    "constructed/chaos_legion.ros": [
        ("Chaos Lord", 5, CHAOS | {"CHARACTER", "INFANTRY", "CHAOS LORD"}),
        ("Legionaries", 6, CHAOS | {"CORE", "INFANTRY", "LEGIONARIES"}),
    ],
    "constructed/orks_clan_kultur.ros": [
        ("Warboss", 4, ORKS | {"CHARACTER", "INFANTRY", "WARBOSS"}),
        ("Boyz", 8, ORKS | {"CORE", "INFANTRY", "MOB", "BOYZ"}),
        ("Gretchin", 2, ORKS | {"INFANTRY", "GRETCHIN"}),
    ],
    "constructed/sisters_order_convictions.ros": [
        (
            "Celestine",
            9,
            SISTERS | {"JUMP PACK", "FLY", "CELESTINE", "INFANTRY", "CHARACTER", "GEMINAE SUPERIA"},
        ),
        (
            "Battle Sisters Squad",
            5,
            SISTERS | {"ORDER OF OUR MARTYRED LADY", "CORE", "INFANTRY", "BATTLE SISTERS SQUAD"},
        ),
    ],
    "constructed/imperial_knights_household.ros": [
        (
            "Knight Paladin",
            23,
            KNIGHTS | {"TITANIC", "VEHICLE", "QUESTORIS CLASS", "KNIGHT PALADIN"},
        ),
        ("Armiger Warglaives", 9, KNIGHTS | {"VEHICLE", "ARMIGER CLASS", "ARMIGER WARGLAIVE"}),
    ],
    "constructed/craftworlds_saim_hann.ros": [
        ("Farseer Skyrunner", 6, SAIM_HANN | {"CHARACTER", "BIKER", "FLY", "PSYKER", "FARSEER"}),
        ("Windriders", 6, SAIM_HANN | {"CORE", "BIKER", "FLY", "GUARDIAN", "WINDRIDERS"}),
    ],
    "constructed/astra_militarum_valkyries.ros": [
        (
            "Company Commander",
            2,
            {"IMPERIUM", "ASTRA MILITARUM", "CADIAN", "CHARACTER", "INFANTRY", "OFFICER"}
            | {"COMPANY COMMANDER"},
        ),
        (
            "Infantry Squad",
            3,
            {"IMPERIUM", "ASTRA MILITARUM", "CADIAN", "CORE", "INFANTRY"} | {"INFANTRY SQUAD"},
        ),
        (
            "Valkyries",
            9,
            {"IMPERIUM", "ASTRA MILITARUM", "AERONAUTICA IMPERIALIS", "VEHICLE", "FLY"}
            | {"TRANSPORT", "VALKYRIES", "AIRCRAFT", "VALKYRIE"},
        ),
    ],
    "tyranids_neurothrope.rosz": [
        (
            "Neurothrope",
            5,
            {"TYRANIDS", "LEVIATHAN", "FLY", "PSYKER", "INFANTRY", "CHARACTER", "SYNAPSE"}
            | {"HORNED CHITIN"},
        ),
        (
            "Gargoyles",
            4,
            {"HIVE TENDRIL", "TYRANIDS", "LEVIATHAN", "FLY", "INFANTRY", "CORE"}
            | {"ENDLESS MULTITUDE"},
        ),
    ],
}


class TestSubFactionsByWhatTheySelect:
    """Cases 1 and 2: a setting is read by the placeholder it resolves, whatever its name
    ("Legion", "Brotherhood", "Clan Kultur", "Order Convictions", "Regimental Doctrine",
    "Hive Fleet"), and gives the right value (ruling 74)."""

    @pytest.mark.parametrize("fixture", sorted(SUB_FACTIONS))
    def test_every_unit_as_the_file_has_it(self, fixture: str) -> None:
        roster = read(fixture)
        assert units_of(roster) == SUB_FACTIONS[fixture]
        assert roster.unreadable == ()
        assert roster.read_power == roster.total_power

    def test_one_setting_fills_the_household_and_the_allegiance(self) -> None:
        household = Setting(
            "Household Choice",
            ("Questor Imperialis", "House Cadmus", "Household Tradition: Glory of the Hunt"),
        )
        assert fill_placeholders([household], ["Questor Allegiance", "Household"]) == {
            "questor allegiance": "QUESTOR IMPERIALIS",
            "household": "HOUSE CADMUS",
        }
        # the house is the option named like the placeholder, even with no allegiance asked
        assert fill_placeholders([household], ["Household"]) == {"household": "HOUSE CADMUS"}

    @pytest.mark.parametrize(
        ("setting", "options", "placeholder", "expected"),
        [
            ("Craftworld Selection", ("Saim-Hann: Wild Host",), "Craftworld", "SAIM-HANN"),
            ("Dynasty Choice", ("Dynasty: Szarekhan",), "Dynasty", "SZAREKHAN"),
            (
                "Dynasty Choice",
                ("Dynasty: <Custom>", "Dynastic Tradition: Unyielding"),
                "Dynasty",
                None,
            ),
            ("Legion", ("Black Legion",), "Legion", "BLACK LEGION"),
            ("Clan Kultur", ("Goffs",), "Clan", "GOFFS"),
            ("Plague Company", ("The Wretched",), "Plague Company", "THE WRETCHED"),
            ("Regimental Doctrine", ("Cadian",), "Regiment", "CADIAN"),
            ("**Chapter Selector**", ("Salamanders",), "Chapter", "SALAMANDERS"),
            ("Hive Fleet Choice", ("Kraken",), "Dynasty", None),  # another placeholder's
            ("Gametype", ("Matched",), "Legion", None),
            ("Cult Creed", ("None (Mixed Detachment)",), "Cult", None),
            ("Cults of the Legion", ("*No Cult*",), "Cult of the Legion", None),
            ("Legion", ("Nova Legion",), "Legion", "NOVA LEGION"),  # "No" is a whole word
        ],
    )
    def test_a_setting_and_the_value_it_gives(
        self, setting: str, options: tuple[str, ...], placeholder: str, expected: str | None
    ) -> None:
        filled = fill_placeholders([Setting(setting, options)], [placeholder])
        assert filled.get(placeholder.casefold()) == expected


MODELS = {
    "constructed/tau_tactical_drones.ros": [
        (
            "Cadre Fireblade",
            3,
            {"T'AU EMPIRE", "T'AU SEPT", "CHARACTER", "INFANTRY", "FIRE CASTE", "CADRE FIREBLADE"},
        ),
        ("Tactical Drones", 4, {"T'AU EMPIRE", "T'AU SEPT", "DRONE", "FLY", "TACTICAL DRONES"}),
        (
            "Strike Team",
            4,
            {"T'AU EMPIRE", "T'AU SEPT", "CORE", "INFANTRY", "FIRE WARRIOR", "STRIKE TEAM"},
        ),
    ],
    "tau_aunva.rosz": [
        (
            "Aun'Va",
            4,
            {
                "T'AU EMPIRE",
                "T'AU SEPT",
                "INFANTRY",
                "CHARACTER",
                "ETHEREAL",
                "AUN'VA",
                "ETHEREAL GUARD",
            },
        )
    ],
}


class TestKeywordsOfTheModels:
    """Cases 3 and 4 (ruling 76, which replaced ruling 73's principal model): a unit has
    every keyword of every model in it (Aun'Va's ETHEREAL and her Ethereal Guard's); a drone
    riding with models of another kind gives none (ruling 45). The Silent King of a real
    file: tests/services/rosters/test_roster_real_files.py."""

    @pytest.mark.parametrize("fixture", sorted(MODELS))
    def test_every_unit_as_the_file_has_it(self, fixture: str) -> None:
        assert units_of(read(fixture)) == MODELS[fixture]

    def test_a_real_death_guard_blight_hauler_keeps_its_company(self) -> None:
        """Both Blight-hauler models carry `Faction: Wretched`; the unit does not."""
        roster = read("death_guard_2000.rosz")
        haulers = next(u for u in roster.units if u.name == "Myphitic Blight-haulers")
        assert "WRETCHED" in haulers.keywords and "WRETCHED" in haulers.faction_keywords
        assert all("WRETCHED" in u.keywords for u in roster.units if u.name != "Typhus")


class TestUnitsInsideOtherSelections:
    """Case 5: a force-level selection that holds a unit (a Dynastic Advisor holding a
    Technomancer, a Bound Creation around Cryptothralls) is read as that unit. A real file
    with both: tests/services/rosters/test_roster_real_files.py."""

    def test_a_real_bound_creation_is_its_cryptothralls(self) -> None:
        roster = read("necrons_patrol.rosz")
        thralls = roster.units[-1]
        assert (thralls.key, thralls.name, thralls.power_rating, set(thralls.keywords)) == (
            "1.9",
            "Cryptothralls",
            2,
            {"CRYPTOTHRALLS", "CANOPTEK", "NECRONS", "INFANTRY"},
        )
        assert thralls.models == ("2x Cryptothrall",)
        assert roster.unreadable == () and roster.read_power == roster.total_power


def _option(name: str, *categories: str) -> str:
    cats = "".join(f'<category name="{c}" primary="false"/>' for c in categories)
    return (
        f'<selection name="{name}" type="upgrade" number="1">'
        f"<categories>{cats}</categories></selection>"
    )


class TestKeywordsOfTheOptions:
    """Ruling 73 (real files: blood_angels_2000.rosz, chaos_knights.rosz): an option chosen
    for the unit gives it the keywords the file puts on it - a Jump Pack's FLY and JUMP
    PACK - when it is the unit's or its principal model's; never CHARACTER (a Lance,
    rulings 31 and 35) nor the per-battle Warlord."""

    def test_the_commanders_options_count_its_drones_do_not(self) -> None:
        commander_options = (
            _option("Jump Pack", "Fly", "Jump Pack")
            + _option("Character (Lance)", "Character")
            + _option("Warlord", "Warlord")
        )
        drone_option = _option("Shield Generator", "Shielded")
        drone = '<category name="Fly" primary="false"/></categories></selection>'
        with_options = COMMANDER.replace(
            drone,
            drone.replace("</selection>", f"<selections>{drone_option}</selections></selection>"),
        ).replace("</categories><selections>", "</categories><selections>" + commander_options, 1)
        assert with_options.count("Shield Generator") == with_options.count("Jump Pack") // 2 == 1
        (commander,) = parse_roster(roster_with(with_options)).units
        assert {"JUMP PACK", "FLY", "CHARACTER"} <= set(commander.keywords)
        assert "SHIELDED" not in commander.keywords and "DRONE" not in commander.keywords
        assert "WARLORD" not in commander.keywords and commander.warlord

    def test_a_lance_alone_makes_no_character(self) -> None:
        knight = read("chaos_knights.rosz").units[0]
        assert "KHORNE" in knight.keywords  # its Khorne dedication, an option of its model
        assert "CHARACTER" not in knight.keywords and knight.character_option
