"""Reading roster files: real BattleScribe rosters (tests/fixtures/rosters, see SOURCES.md)
and hostile files made here. Parsing is pure, so these tests need no database."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from app.errors import DomainError
from app.rules.cards import never_gains_xp
from app.services.rosters.roster_parse import (
    MAX_ROSTER_BYTES,
    ParsedRoster,
    RosterUnit,
    parse_roster,
)
from tests.factories import book
from tests.factories import card as factory_card

ROSTERS = Path(__file__).parents[2] / "fixtures" / "rosters"
HEADER = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<roster xmlns="http://www.battlescribe.net/schema/rosterSchema" name="Tiny" '
    'gameSystemId="28ec-711c-d87f-3aeb" gameSystemName="Warhammer 40,000 9th Edition">'
)
TINY = (
    HEADER + '<forces><force name="Patrol" catalogueName="Necrons"><selections>'
    '<selection name="Necron Warriors" type="unit" number="1">'
    '<costs><cost name=" PL" value="6.0"/></costs>'
    '<categories><category name="Troops" primary="true"/>'
    '<category name="Faction: Necrons" primary="false"/>'
    '<category name="Infantry" primary="false"/></categories>'
    "</selection></selections></force></forces></roster>"
).encode()


def read(name: str) -> ParsedRoster:
    return parse_roster((ROSTERS / name).read_bytes())


def ros_of(name: str) -> bytes:
    """The plain .ros XML inside a fixture .rosz (kept zipped: see SOURCES.md)."""
    with zipfile.ZipFile(ROSTERS / name) as archive:
        return archive.read(archive.infolist()[0])


def unit(roster: ParsedRoster, name: str) -> RosterUnit:
    return next(u for u in roster.units if u.name == name)


def zipped(*entries: tuple[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            archive.writestr(name, data)
    return buffer.getvalue()


class TestRealRosters:
    def test_necrons_characters_warlord_trait_and_relic(self) -> None:
        roster = read("necrons_patrol.rosz")
        assert roster.factions == ("Necrons",)
        warden = unit(roster, "Royal Warden")
        assert (warden.power_rating, warden.battlefield_role, warden.warlord) == (4, "HQ", True)
        assert {"CHARACTER", "INFANTRY", "NECRONS"} <= set(warden.keywords)
        assert (warden.warlord_trait, warden.relic) == ("Enduring Will", "Veil of Darkness")
        warriors = unit(roster, "Necron Warriors")
        assert warriors.power_rating == 12
        assert warriors.models == ("20x Necron Warrior (Gauss Reaper)",)
        assert warriors.wargear == ("20x Gauss Reaper",)
        assert "SWARM" in unit(roster, "Canoptek Scarab Swarms").keywords
        assert roster.unreadable == ()  # its Bound Creation is read as the unit it holds
        names = {u.name for u in roster.units}
        assert not names & {"Dynasty Choice", "Battle Size", "Detachment Command Cost"}

    def test_two_detachments_monster_psyker_and_vehicles(self) -> None:
        roster = read("thousand_sons_magnus.rosz")
        assert len(roster.detachments) == 2
        magnus = unit(roster, "Magnus the Red")
        assert {"MONSTER", "PSYKER", "CHARACTER", "CHAOS"} <= set(magnus.keywords)
        assert (magnus.power_rating, magnus.battlefield_role) == (24, "Lord of War")
        assert magnus.detachment.startswith("Super-Heavy Auxiliary")
        assert "Smite" in magnus.psychic_powers
        assert "VEHICLE" in unit(roster, "Helbrute").keywords
        assert unit(roster, "Heldrake").battlefield_role == "Flyer"
        assert "THOUSAND SONS" in unit(roster, "Ahriman").faction_keywords
        assert sum(u.power_rating for u in roster.units) == 76

    def test_knights_keywords_come_from_the_model_not_the_lance_upgrade(self) -> None:
        brigand = unit(read("chaos_knights.rosz"), "War Dog Brigand Squadron")
        assert {"CHAOS", "CHAOS KNIGHTS", "VEHICLE", "HOUSE HERPETRAX"} <= set(brigand.keywords)
        assert "CHARACTER" not in brigand.keywords  # Traitoris Lance: not in Crusade
        assert "LORD OF WAR" not in brigand.keywords  # the role is not a keyword

    def test_psyker_character_with_prefixed_trait_and_relic(self) -> None:
        neurothrope = unit(read("tyranids_neurothrope.rosz"), "Neurothrope")
        assert (neurothrope.warlord_trait, neurothrope.relic) == ("Alien Cunning", "Resonance Barb")
        assert {"PSYKER", "CHARACTER", "TYRANIDS"} <= set(neurothrope.keywords)
        assert neurothrope.psychic_powers

    def test_same_datasheet_twice_gives_two_units(self) -> None:
        squads = [u for u in read("salamanders_battalion.rosz").units if u.name == "Tactical Squad"]
        assert len(squads) == 2 and squads[0].key != squads[1].key

    def test_an_eighth_edition_roster_is_the_wrong_game_system(self) -> None:
        with pytest.raises(DomainError) as refused:
            read("imperial_knights_8th.ros")
        assert refused.value.code == "roster_wrong_game_system"
        assert "8th Edition" in refused.value.message

    def test_a_rosz_and_its_ros_read_the_same(self) -> None:
        xml = ros_of("necrons_patrol.rosz")
        assert xml.startswith(b"<?xml")
        assert parse_roster(xml) == read("necrons_patrol.rosz")
        assert parse_roster(zipped(("renamed.ros", xml))) == parse_roster(xml)


BILLION_LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
    b'<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>'
    b"<roster>&lol3;</roster>"
)
EXTERNAL_ENTITY = (
    b'<?xml version="1.0"?><!DOCTYPE roster [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
    b"<roster>&x;</roster>"
)


class TestHostileFiles:
    @pytest.mark.parametrize(
        ("data", "code"),
        [
            (BILLION_LAUGHS, "roster_unreadable"),
            (EXTERNAL_ENTITY, "roster_unreadable"),
            (TINY[: len(TINY) // 2], "roster_unreadable"),
            (b"this is not a roster", "roster_unreadable"),
            (b"", "roster_unreadable"),
            (b"<html><body>hello</body></html>", "roster_unreadable"),
            (TINY.replace(b"9th Edition", b"10th Edition"), "roster_wrong_game_system"),
            (
                TINY.replace(b"28ec-711c-d87f-3aeb", b"sys-352e-adc2-7639-d6a9"),
                "roster_wrong_game_system",
            ),
            (zipped(("a.ros", TINY), ("b.ros", TINY)), "roster_unreadable"),
            (zipped(("notes.txt", b"no roster here")), "roster_unreadable"),
            (zipped(("a.ros", TINY))[:40], "roster_unreadable"),
            (zipped(*[(f"{n}.txt", b"x") for n in range(20)]), "roster_too_large"),
        ],
        ids=[
            "billion_laughs",
            "external_entity",
            "truncated",
            "not_xml",
            "empty",
            "other_xml",
            "tenth_edition",
            "other_game_system_id",
            "two_ros_in_a_zip",
            "no_ros_in_a_zip",
            "truncated_zip",
            "too_many_entries",
        ],
    )
    def test_refused_with_a_clear_problem(self, data: bytes, code: str) -> None:
        with pytest.raises(DomainError) as refused:
            parse_roster(data)
        assert refused.value.code == code
        assert refused.value.status in (413, 422)
        assert refused.value.field == "file"

    @pytest.mark.parametrize("value", [b"nan", b"inf", b"-inf", b"NaN", b"1e999"])
    def test_a_power_level_that_is_not_a_number_is_refused(self, value: bytes) -> None:
        with pytest.raises(DomainError) as refused:
            parse_roster(TINY.replace(b'value="6.0"', b'value="' + value + b'"'))
        assert refused.value.code == "roster_unreadable" and "not a number" in refused.value.message

    def test_a_huge_power_level_is_listed_as_over_the_cap(self) -> None:
        roster = parse_roster(TINY.replace(b'value="6.0"', b'value="1e300"'))
        assert roster.units == () and "over 200" in roster.unreadable[0].reason

    def test_an_unknown_encoding_is_refused(self) -> None:
        bogus = b'<?xml version="1.0" encoding="x-bogus"?>' + TINY.split(b"?>", 1)[-1]
        with pytest.raises(DomainError) as refused:
            parse_roster(bogus)
        assert refused.value.code == "roster_unreadable"
        assert "encoding" in refused.value.message

    def test_an_encrypted_zip_entry_is_refused(self) -> None:
        with pytest.raises(DomainError) as refused:
            parse_roster(encrypted(zipped(("a.ros", TINY))))
        assert refused.value.code == "roster_unreadable"
        assert "encrypted" in refused.value.message

    def test_selections_nested_thousands_deep_are_refused_without_recursion(self) -> None:
        with pytest.raises(DomainError) as refused:
            parse_roster(nested(3000))
        assert (refused.value.code, refused.value.status) == ("roster_too_deep", 422)

    def test_a_zip_bomb_is_stopped_at_the_cap(self) -> None:
        # Compresses to a few KB; inflating it would be well past the limit.
        padding = b" " * (MAX_ROSTER_BYTES + 1024)
        bomb = zipped(("bomb.ros", TINY.replace(b"</roster>", padding + b"</roster>")))
        assert len(bomb) < 64 * 1024
        with pytest.raises(DomainError) as refused:
            parse_roster(bomb)
        assert (refused.value.code, refused.value.status) == ("roster_too_large", 413)

    @pytest.mark.parametrize(
        ("change", "reason"),
        [
            ((b'value="6.0"', b'value="0.0"'), "no Power Rating"),
            ((b'value="6.0"', b'value="999.0"'), "over 200"),
            ((b'type="unit"', b'type="upgrade"'), "not a unit"),
            ((b'name="Necron Warriors"', b'name=""'), "no name"),
        ],
    )
    def test_a_unit_it_cannot_read_is_listed_with_the_reason(
        self, change: tuple[bytes, bytes], reason: str
    ) -> None:
        roster = parse_roster(TINY.replace(*change))
        assert roster.units == ()
        assert len(roster.unreadable) == 1 and reason in roster.unreadable[0].reason

    def test_a_tiny_roster_still_reads(self) -> None:
        roster = parse_roster(TINY)
        assert [(u.name, u.power_rating, u.keywords) for u in roster.units] == [
            ("Necron Warriors", 6, ("NECRONS", "INFANTRY"))
        ]


def encrypted(archive: bytes) -> bytes:
    """The same zip with each entry's 'encrypted' flag set (as a password-protected zip has
    it), in the local header and the central directory."""
    data = bytearray(archive)
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (start := data.find(signature, start)) != -1:
            data[start + flag_at] |= 0x1
            start += 4
    return bytes(data)


def nested(depth: int) -> bytes:
    """TINY with its unit holding selections nested ``depth`` deep."""
    inner = (
        b"".join(b'<selections><selection name="Layer" type="upgrade">' for _ in range(depth))
        + b"</selection></selections>" * depth
    )
    return TINY.replace(b"</selection>", inner + b"</selection>", 1)


def roster_with(selection: str) -> bytes:
    return (
        HEADER
        + '<forces><force name="Patrol" catalogueName="T&apos;au Empire"><selections>'
        + selection
        + "</selections></force></forces></roster>"
    ).encode()


COMMANDER = (
    '<selection name="Commander in XV8 Crisis Battlesuit" type="model" number="1">'
    '<costs><cost name=" PL" value="6.0"/></costs>'
    '<categories><category name="HQ" primary="true"/>'
    '<category name="Faction: T&apos;au Empire" primary="false"/>'
    '<category name="Character" primary="false"/><category name="Battlesuit" primary="false"/>'
    '<category name="Fly" primary="false"/><category name="Commander" primary="false"/>'
    "</categories><selections>"
    '<selection name="Gun Drone" type="model" number="2"><categories>'
    '<category name="Drone" primary="false"/><category name="Tactical Drones" primary="false"/>'
    '<category name="Fly" primary="false"/></categories></selection>'
    "</selections></selection>"
)

# keywords only on the models: every model's are the unit's, but a drone's among other models
STEALTH_TEAM = (
    '<selection name="XV25 Stealth Battlesuits" type="unit" number="1">'
    '<costs><cost name=" PL" value="5.0"/></costs>'
    '<categories><category name="Elites" primary="true"/>'
    '<category name="Faction: T&apos;au Empire" primary="false"/></categories><selections>'
    '<selection name="Stealth Shas&apos;ui" type="model" number="3"><categories>'
    '<category name="Infantry" primary="false"/><category name="Battlesuit" primary="false"/>'
    '<category name="Jet Pack" primary="false"/></categories></selection>'
    '<selection name="Marker Drone" type="model" number="1"><categories>'
    '<category name="Drone" primary="false"/></categories></selection>'
    "</selections></selection>"
)


class TestKeywordsOfTheUnitItself:
    """Rulings 45 and 76: drones riding with models of another kind add models and wargear,
    not keywords, so a Commander with Gun Drones is no DRONE (which would never gain XP)."""

    def test_a_commanders_drones_do_not_make_it_a_drone(self) -> None:
        (commander,) = parse_roster(roster_with(COMMANDER)).units
        assert "DRONE" not in commander.keywords
        assert "TACTICAL DRONES" not in commander.keywords
        assert {"CHARACTER", "BATTLESUIT", "FLY", "COMMANDER"} <= set(commander.keywords)
        assert any("Gun Drone" in m for m in commander.models)

    def test_keywords_on_the_models_come_from_the_main_kind(self) -> None:
        (team,) = parse_roster(roster_with(STEALTH_TEAM)).units
        assert {"INFANTRY", "BATTLESUIT", "JET PACK"} <= set(team.keywords)
        assert "DRONE" not in team.keywords

    def test_so_the_imported_commander_gains_experience(self) -> None:
        (commander,) = parse_roster(roster_with(COMMANDER)).units
        card = factory_card(keywords=set(commander.keywords), battlefield_role="HQ")
        assert not never_gains_xp(card, book())


CRAWLER = (
    '<selection name="Plagueburst Crawler" type="upgrade" number="1">'
    '<costs><cost name=" PL" value="9.0"/></costs>'
    '<profiles><profile name="Plagueburst Crawler" typeName="Unit"/></profiles>'
    '<categories><category name="Heavy Support" primary="true"/>'
    '<category name="Faction: Death Guard" primary="false"/>'
    '<category name="Vehicle" primary="false"/></categories></selection>'
)


class TestUnitsWrittenAsUpgrades:
    """Issue 25: a force-level 'upgrade' with a Battlefield Role and a Unit profile is a unit."""

    def test_it_is_read_as_a_unit(self) -> None:
        roster = parse_roster(roster_with(CRAWLER))
        assert [(u.name, u.power_rating, u.battlefield_role) for u in roster.units] == [
            ("Plagueburst Crawler", 9, "Heavy Support")
        ]
        assert {"DEATH GUARD", "VEHICLE"} <= set(roster.units[0].keywords)

    def test_a_real_death_guard_list_reads_its_crawlers(self) -> None:
        """A real 2,000-point list (SOURCES.md) whose two Plagueburst Crawlers BattleScribe
        writes as force-level upgrades: every unit is read, and their Power is the roster's."""
        roster = read("death_guard_2000.rosz")
        crawlers = [u for u in roster.units if u.name == "Plagueburst Crawler"]
        assert [(u.power_rating, u.battlefield_role, u.points) for u in crawlers] == [
            (9, "Heavy Support", 175)
        ] * 2
        assert {"DEATH GUARD", "VEHICLE"} <= set(crawlers[0].keywords)
        assert roster.unreadable == ()
        assert (len(roster.units), roster.read_power, roster.total_power) == (13, 109, 109)
        assert sum(u.points or 0 for u in roster.units) == roster.total_points == 2000

    def test_without_a_unit_profile_it_stays_unreadable_with_the_reason(self) -> None:
        roster = parse_roster(
            roster_with(CRAWLER.replace('typeName="Unit"', 'typeName="Abilities"'))
        )
        assert roster.units == () and "not a unit" in roster.unreadable[0].reason


class TestTheRostersOwnTotals:
    """Issue 25: the roster's own PL total is read, and what was read accounts for it."""

    @pytest.mark.parametrize(
        ("fixture", "units", "power", "points"),
        [
            ("chaos_knights.rosz", 3, 28, 530),
            ("dark_angels_two_patrols.rosz", None, 28, 540),
            ("thousand_sons_magnus.rosz", None, 76, 1410),
            ("tyranids_neurothrope.rosz", None, 9, 180),
            ("tyranids_zoanthropes.rosz", 3, 21, 450),
            ("tau_aunva.rosz", 1, 4, 80),
            ("blood_angels.rosz", 6, 30, 625),  # two Lieutenants, two units
            ("chaos_space_marines.rosz", 2, 11, 185),
            ("thousand_sons_cabal.rosz", 2, 14, 265),
            ("long_weapon_names.rosz", 1, 8, 170),
        ],
    )
    def test_units_read_add_up_to_the_rosters_total(
        self, fixture: str, units: int | None, power: int, points: int
    ) -> None:
        roster = read(fixture)
        assert (roster.total_power, roster.total_points) == (power, points)
        carried = sum(u.power_rating for u in roster.unreadable)
        assert roster.read_power + carried == roster.total_power
        assert roster.unexplained_power == 0
        assert all(u.points is not None and u.points > 0 for u in roster.units)
        if units is not None:
            assert len(roster.units) == units

    def test_a_roster_without_totals_says_none(self) -> None:
        assert (parse_roster(TINY).total_power, parse_roster(TINY).total_points) == (None, None)


def chosen_roster(setting: str, option: str, placeholder: str) -> bytes:
    """TINY with a detachment setting (e.g. "Sept Choice") whose option is ``option``, and
    the unit's faction keyword written as ``placeholder``."""
    choice = (
        f'<selection name="{setting}" type="upgrade" number="1"><categories>'
        '<category name="Configuration" primary="true"/></categories><selections>'
        f'<selection name="{option}" type="upgrade" number="1"/></selections></selection>'
    )
    data = TINY.replace(b"<selections>", b"<selections>" + choice.encode(), 1)
    return data.replace(b"Faction: Necrons", f"Faction: {placeholder}".encode())


class TestSubFactionPlaceholders:
    """Issue 25: a placeholder like <Sept> is filled from the detachment's chosen
    sub-faction, or left out; never kept as a keyword."""

    @pytest.mark.parametrize(
        ("setting", "option", "placeholder", "expected"),
        [
            ("Sept Choice", "Vior&apos;la Sept", "&lt;Sept&gt;", "VIOR'LA SEPT"),
            ("**Chapter Selector**", "Salamanders", "&lt;Chapter&gt;", "SALAMANDERS"),
            ("Dynasty Choice", "Dynasty: Szarekhan", "&lt;Dynasty&gt;", "SZAREKHAN"),
            ("Dynasty Choice", "Dynasty: &lt;Custom&gt;", "&lt;Dynasty&gt;", None),
            ("Hive Fleet Choice", "Kraken", "&lt;Dynasty&gt;", None),  # another placeholder
        ],
    )
    def test_filled_from_the_chosen_sub_faction(
        self, setting: str, option: str, placeholder: str, expected: str | None
    ) -> None:
        (warriors,) = parse_roster(chosen_roster(setting, option, placeholder)).units
        assert not [k for k in warriors.keywords if "<" in k or ">" in k]
        if expected is None:
            assert warriors.faction_keywords == ()
        else:
            assert expected in warriors.keywords
            assert warriors.faction_keywords == (expected,)

    def test_real_rosters_keep_no_placeholder(self) -> None:
        for fixture in ("tyranids_zoanthropes.rosz", "necrons_patrol.rosz", "tau_aunva.rosz"):
            for read_unit in read(fixture).units:
                assert not [k for k in read_unit.keywords if k.startswith("<")], fixture
        zoanthrope = read("tyranids_zoanthropes.rosz").units[0]
        assert {"TYRANIDS", "HIVE TENDRIL", "PSYKER"} <= set(zoanthrope.keywords)
        assert "T'AU EMPIRE" in read("tau_aunva.rosz").units[0].keywords

    def test_a_real_roster_with_its_dynasty_chosen(self) -> None:
        """The Psychomancer's `Faction: <Dynasty>` takes the detachment's "Dynasty:
        Szarekhan"; the roster's own total (27 PL) does not match its one unit (4 PL), which
        the preview shows rather than hides."""
        roster = read("necrons_psychomancer.rosz")
        (psychomancer,) = roster.units
        assert psychomancer.faction_keywords == ("SZAREKHAN", "NECRONS")
        assert (roster.read_power, roster.total_power, roster.unreadable) == (4, 27, ())
        assert (roster.options_power, roster.unexplained_power) == (0, 23)


def test_points_of_a_unit_add_up_its_models_and_wargear() -> None:
    """Issue 25: the points beside the Power Rating, summed like the PL over the unit."""
    (aunva,) = read("tau_aunva.rosz").units
    assert (aunva.power_rating, aunva.points) == (4, 80)
    zoanthropes = read("tyranids_zoanthropes.rosz").units
    assert sum(u.points or 0 for u in zoanthropes) == 450
    assert parse_roster(TINY).units[0].points is None  # no pts in the file


def test_power_on_a_detachment_option_is_told_apart() -> None:
    """A setting that costs Power (no unit carries it) explains that much of the total."""
    option = (
        '<selection name="Specialist Detachment" type="upgrade" number="1">'
        '<costs><cost name=" PL" value="2.0"/></costs><categories>'
        '<category name="Configuration" primary="true"/></categories></selection>'
    )
    data = TINY.replace(b"<selections>", b"<selections>" + option.encode(), 1)
    data = data.replace(
        b'gameSystemName="Warhammer 40,000 9th Edition">',
        b'gameSystemName="Warhammer 40,000 9th Edition">'
        b'<costs><cost name=" PL" value="8.0"/></costs>',
        1,
    )
    roster = parse_roster(data)
    assert (roster.total_power, roster.read_power, roster.options_power) == (8, 6, 2)
    assert roster.unexplained_power == 0
