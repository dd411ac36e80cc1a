"""Issue 39: five more real 9th-edition rosters, from the test data of BlueWinds/bluescribe
(tests/fixtures/rosters/SOURCES.md), each compared unit by unit with a reading of its XML
done apart from our reader (the method of test_roster_real_files.py). They bring real files
for cases the other fixtures had only constructed:

- case 1: a Chaos Space Marines "Legion" setting (Emperor's Children) filling `<Legion>`;
- case 2: a "Craftworld Selection" written "Ulthwe: Foresight of the Damned" (ULTHWE, not the
  whole option), and "Forge World: Mars" filling `<Forge World>`;
- case 5: a "Seer Council (Unit)" wrapper around Warlock Skyrunners, read as the Skyrunners;
- case 6: a real .ros of four detachments and three factions, 299,792 bytes;
- case 7: real units whose data lacks the army's faction (the Archaeopters carry SKITARII
  but neither IMPERIUM nor ADEPTUS MECHANICUS);
- a "Cult Creed" of "None (Mixed Detachment)", which fills nothing (ruling 74).

The tests take each file as it is: where the data gives a unit an odd keyword (the Master of
Executions' own KHORNE beside the Mark of Slaanesh it took; the Corsairs' NON-COMPULSORY
TROOP, a category the list builder uses for detachment slots), that is what a card gets."""

from __future__ import annotations

import pytest

from tests.services.rosters.test_roster_real_files import assert_read_as, read, unit

# MBH x EC.ros: a Death Guard Outrider (Plague Company: The Inexorable, two Plagueburst Crawlers
# written as force-level upgrades), Daemons Reinforcements (Chaos Allegiance: Nurgle), a Chaos
# Space Marines Patrol (Legion: Emperor's Children) and a Death Guard Supreme Command; 110 PL.
CHAOS_FOUR_DETACHMENTS_EMPERORS_CHILDREN = [
    unit("1.1", "Foetid Bloat-drone", 7, "CHAOS", "DAEMON", "DAEMON ENGINE", "DEATH GUARD", "FLY",
         "FOETID BLOAT-DRONE", "HERETIC ASTARTES", "INEXORABLE", "NURGLE", "VEHICLE"),
    unit("1.2", "Foetid Bloat-drone", 7, "CHAOS", "DAEMON", "DAEMON ENGINE", "DEATH GUARD", "FLY",
         "FOETID BLOAT-DRONE", "HERETIC ASTARTES", "INEXORABLE", "NURGLE", "VEHICLE"),
    unit("1.6", "Plagueburst Crawler", 8, "CHAOS", "DAEMON", "DAEMON ENGINE", "DEATH GUARD",
         "HERETIC ASTARTES", "INEXORABLE", "NURGLE", "PLAGUEBURST CRAWLER", "VEHICLE"),
    unit("1.7", "Plagueburst Crawler", 8, "CHAOS", "DAEMON", "DAEMON ENGINE", "DEATH GUARD",
         "HERETIC ASTARTES", "INEXORABLE", "NURGLE", "PLAGUEBURST CRAWLER", "VEHICLE"),
    unit("1.8", "Malignant Plaguecaster", 5, "BUBONIC ASTARTES", "CHAOS", "CHARACTER",
         "DEATH GUARD", "HERETIC ASTARTES", "INEXORABLE", "INFANTRY", "MALIGNANT PLAGUECASTER",
         "NURGLE", "PSYKER"),
    unit("1.9", "Foetid Bloat-drone", 7, "CHAOS", "DAEMON", "DAEMON ENGINE", "DEATH GUARD", "FLY",
         "FOETID BLOAT-DRONE", "HERETIC ASTARTES", "INEXORABLE", "NURGLE", "VEHICLE"),
    unit("2.3", "Furies", 2, "CHAOS", "DAEMON", "FLY", "INFANTRY", "NURGLE"),
    unit("3.4", "Master of Executions", 4, "CHAOS", "CHARACTER", "EMPEROR'S CHILDREN",
         "HERETIC ASTARTES", "INFANTRY", "KHORNE", "MASTER OF EXECUTIONS", "SLAANESH"),
    unit("3.5", "Terminators", 16, "CHAOS", "EMPEROR'S CHILDREN", "HERETIC ASTARTES", "INFANTRY",
         "SLAANESH", "TERMINATOR"),
    unit("3.6", "Dreadclaw Drop Pod", 6, "CHAOS", "DREADCLAW DROP POD", "EMPEROR'S CHILDREN",
         "FLY", "HERETIC ASTARTES", "SLAANESH", "TRANSPORT", "VEHICLE"),
    unit("3.7", "Chaos Cultists", 3, "CHAOS", "EMPEROR'S CHILDREN", "HERETIC ASTARTES",
         "INFANTRY", "SLAANESH"),
    unit("3.8", "Chosen", 12, "CHAOS", "EMPEROR'S CHILDREN", "HERETIC ASTARTES", "INFANTRY",
         "SLAANESH"),
    unit("4.1", "Mortarion", 25, "BUBONIC ASTARTES", "CHAOS", "CHARACTER", "DAEMON",
         "DEATH GUARD", "FLY", "HERETIC ASTARTES", "MONSTER", "MORTARION", "NURGLE", "PRIMARCH",
         "PSYKER", "SUPREME COMMANDER"),
]  # fmt: skip

# Ulthwe test warp.ros: one Battalion, Craftworld Selection "Ulthwe: Foresight of the Damned";
# Baharroth (a Phoenix Lord, no craftworld) and a Seer Council wrapper; 109 PL.
CRAFTWORLDS_ULTHWE = [
    unit("1.2", "Baharroth", 7, "AELDARI", "ASPECT WARRIOR", "ASURYANI", "BAHARROTH", "CHARACTER",
         "FLY", "INFANTRY", "JUMP PACK", "PHOENIX LORD", "SWOOPING HAWKS"),
    unit("1.3", "Farseer Skyrunner", 6, "AELDARI", "ASURYANI", "BIKER", "CHARACTER", "FARSEER",
         "FARSEER SKYRUNNER", "FLY", "PSYKER", "ULTHWE"),
    unit("1.5", "Rangers", 4, "AELDARI", "ASURYANI", "CORE", "INFANTRY", "OUTCASTS", "RANGERS",
         "RESONATOR SHARD", "ULTHWE"),
    unit("1.6", "Rangers", 4, "AELDARI", "ASURYANI", "CORE", "INFANTRY", "OUTCASTS", "RANGERS",
         "RESONATOR SHARD", "ULTHWE"),
    unit("1.7", "Rangers", 4, "AELDARI", "ASURYANI", "CORE", "INFANTRY", "OUTCASTS", "RANGERS",
         "RESONATOR SHARD", "ULTHWE"),
    unit("1.8", "Warp Spiders", 11, "AELDARI", "ASPECT WARRIOR", "ASURYANI", "CORE", "INFANTRY",
         "JUMP PACK", "ULTHWE", "WARP SPIDERS"),
    unit("1.9", "Night Spinner", 8, "AELDARI", "ASURYANI", "FLY", "NIGHT SPINNER",
         "ULTHWE", "VEHICLE"),
    unit("1.10", "Night Spinner", 8, "AELDARI", "ASURYANI", "FLY", "NIGHT SPINNER",
         "ULTHWE", "VEHICLE"),
    unit("1.11", "Wave Serpent", 8, "AELDARI", "ASURYANI", "FLY", "TRANSPORT", "ULTHWE",
         "VEHICLE", "WAVE SERPENT"),
    unit("1.12", "Howling Banshees", 5, "AELDARI", "ASPECT WARRIOR", "ASURYANI", "CORE",
         "HOWLING BANSHEES", "INFANTRY", "ULTHWE"),
    unit("1.13", "Howling Banshees", 5, "AELDARI", "ASPECT WARRIOR", "ASURYANI", "CORE",
         "HOWLING BANSHEES", "INFANTRY", "ULTHWE"),
    unit("1.14", "Warlock Skyrunners", 3, "AELDARI", "ASURYANI", "BIKER", "FLY", "PSYKER",
         "ULTHWE", "WARLOCK SKYRUNNERS", "WARLOCKS"),
    unit("1.15", "Swooping Hawks", 5, "AELDARI", "ASPECT WARRIOR", "ASURYANI", "CORE", "FLY",
         "INFANTRY", "JUMP PACK", "SWOOPING HAWKS", "ULTHWE"),
    unit("1.17", "Wave Serpent", 8, "AELDARI", "ASURYANI", "FLY", "TRANSPORT", "ULTHWE",
         "VEHICLE", "WAVE SERPENT"),
    unit("1.18", "Warlocks", 5, "AELDARI", "ASURYANI", "INFANTRY", "PSYKER", "ULTHWE",
         "WARLOCKS"),
    unit("1.20", "Eldrad Ulthran", 8, "AELDARI", "ASURYANI", "CHARACTER", "ELDRAD ULTHRAN",
         "FARSEER", "INFANTRY", "PSYKER", "ULTHWE"),
    unit("1.21", "Shroud Runners", 10, "AELDARI", "ASURYANI", "BIKER", "CORE", "FLY", "OUTCASTS",
         "SHROUD RUNNERS", "ULTHWE"),
]  # fmt: skip

# Test admec.ros: one Battalion, Forge World Choice "Forge World: Mars", the Skitarii Veteran
# Cohort Army of Renown; the two Archaeopters carry no IMPERIUM or ADEPTUS MECHANICUS; 104 PL.
ADEPTUS_MECHANICUS_MARS = [
    unit("1.3", "Skitarii Marshal", 3, "ADEPTUS MECHANICUS", "CHARACTER", "DOCTRINA ASSEMBLER",
         "IMPERIUM", "INFANTRY", "MARS", "SKITARII", "SKITARII MARSHAL",
         "SKITARII VETERAN COHORT"),
    unit("1.4", "Tech-Priest Manipulus", 6, "ADEPTUS MECHANICUS", "CHARACTER", "CULT MECHANICUS",
         "DOCTRINA ASSEMBLER", "IMPERIUM", "INFANTRY", "MARS", "TECH-PRIEST",
         "TECH-PRIEST MANIPULUS"),
    unit("1.5", "Skitarii Marshal", 3, "ADEPTUS MECHANICUS", "CHARACTER", "DOCTRINA ASSEMBLER",
         "IMPERIUM", "INFANTRY", "MARS", "SKITARII", "SKITARII MARSHAL",
         "SKITARII VETERAN COHORT"),
    unit("1.9", "Skitarii Rangers", 14, "ADEPTUS MECHANICUS", "CORE", "IMPERIUM", "INFANTRY",
         "MARS", "SKITARII", "SKITARII RANGERS", "SKITARII VETERAN COHORT", "VETERANS"),
    unit("1.10", "Skitarii Vanguards", 13, "ADEPTUS MECHANICUS", "CORE", "IMPERIUM", "INFANTRY",
         "MARS", "SKITARII", "SKITARII VANGUARD", "SKITARII VETERAN COHORT", "VETERANS"),
    unit("1.11", "Skitarii Vanguards", 3, "ADEPTUS MECHANICUS", "CORE", "IMPERIUM", "INFANTRY",
         "MARS", "SKITARII", "SKITARII VANGUARD", "SKITARII VETERAN COHORT", "VETERANS"),
    unit("1.12", "Skitarii Vanguards", 3, "ADEPTUS MECHANICUS", "CORE", "IMPERIUM", "INFANTRY",
         "MARS", "SKITARII", "SKITARII VANGUARD", "SKITARII VETERAN COHORT", "VETERANS"),
    unit("1.13", "Ironstrider Ballistarii", 8, "ADEPTUS MECHANICUS", "DATA-TETHER", "IMPERIUM",
         "IRONSTRIDER BALISTARII", "IRONSTRIDER ENGINE", "MARS", "SKITARII",
         "SKITARII VETERAN COHORT", "VEHICLE"),
    unit("1.14", "Pteraxii Sterylizors", 4, "ADEPTUS MECHANICUS", "CORE", "FLY", "IMPERIUM",
         "INFANTRY", "JUMP PACK", "MARS", "PTERAXII", "PTERAXII STERYLIZORS", "SKITARII",
         "SKITARII VETERAN COHORT"),
    unit("1.15", "Ironstrider Ballistarii", 8, "ADEPTUS MECHANICUS", "DATA-TETHER", "IMPERIUM",
         "IRONSTRIDER BALISTARII", "IRONSTRIDER ENGINE", "MARS", "SKITARII",
         "SKITARII VETERAN COHORT", "VEHICLE"),
    unit("1.16", "Archaeopter Stratoraptor", 10, "ARCHAEOPTER ENGINE", "ARCHAEOPTER STRATORAPTOR",
         "DATA-TETHER", "FLY", "MARS", "SKITARII", "SKITARII VETERAN COHORT"),
    unit("1.17", "Archaeopter Fusilave", 8, "ARCHAEOPTER ENGINE", "ARCHAEOPTER FUSILAVE",
         "DATA-TETHER", "FLY", "MARS", "SKITARII", "SKITARII VETERAN COHORT"),
    unit("1.18", "Skorpius Dunerider", 5, "ADEPTUS MECHANICUS", "DATA-TETHER", "IMPERIUM", "MARS",
         "SKITARII", "SKITARII VETERAN COHORT", "SKORPIUS DUNERIDER", "SKORPIUS ENGINE",
         "TRANSPORT", "VEHICLE"),
    unit("1.19", "Sicarian Infiltrators", 4, "ADEPTUS MECHANICUS", "CORE", "IMPERIUM", "INFANTRY",
         "MARS", "SICARIAN", "SICARIAN INFILTRATORS", "SKITARII", "SKITARII VETERAN COHORT"),
    unit("1.20", "Sicarian Ruststalkers", 4, "ADEPTUS MECHANICUS", "CORE", "IMPERIUM", "INFANTRY",
         "MARS", "SICARIAN", "SICARIAN RUSTSTALKERS", "SKITARII", "SKITARII VETERAN COHORT"),
    unit("1.21", "Sicarian Ruststalkers", 8, "ADEPTUS MECHANICUS", "CORE", "IMPERIUM", "INFANTRY",
         "MARS", "SICARIAN", "SICARIAN RUSTSTALKERS", "SKITARII", "SKITARII VETERAN COHORT"),
]  # fmt: skip

# GenestealerHidden.ros: one Patrol, Cult Creed "None (Mixed Detachment)": `<Cult>` stays
# empty; 11 PL.
GENESTEALER_CULTS_MIXED = [
    unit("1.3", "Acolyte Iconward", 4, "ACOLYTE ICONWARD", "CHARACTER", "GENESTEALER CULTS",
         "INFANTRY", "TYRANIDS"),
    unit("1.5", "Acolyte Hybrids", 3, "ACOLYTE HYBRIDS", "CORE", "CROSSFIRE", "GENESTEALER CULTS",
         "INFANTRY", "TYRANIDS"),
    unit("1.6", "Sanctus", 4, "CHARACTER", "GENESTEALER CULTS", "HIVECULT", "INFANTRY", "SANCTUS",
         "TYRANIDS"),
]  # fmt: skip

# Chaos-Aeldari-CategoryConstraints.ros: a Death Guard Patrol (Plague Company left open) and a
# Craftworlds Patrol (Alaitoc) of Corsair Voidreavers, which have no `<Craftworld>`; 32 PL.
DEATH_GUARD_AND_CRAFTWORLD_CORSAIRS = [
    unit("1.4", "Chaos Lord on Palanquin of Nurgle [Legends]", 6, "CAVALRY", "CHAOS",
         "CHAOS LORD", "CHARACTER", "DAEMON", "DEATH GUARD", "HERETIC ASTARTES", "NURGLE"),
    unit("1.5", "Typhus", 9, "BUBONIC ASTARTES", "CHAOS", "CHARACTER", "DEATH GUARD",
         "HERETIC ASTARTES", "INFANTRY", "LORD OF CONTAGION", "LORD OF THE DEATH GUARD", "NURGLE",
         "PSYKER", "TERMINATOR", "TYPHUS"),
    unit("1.6", "Malignant Plaguecaster", 5, "BUBONIC ASTARTES", "CHAOS", "CHARACTER",
         "DEATH GUARD", "HERETIC ASTARTES", "INFANTRY", "MALIGNANT PLAGUECASTER", "NURGLE",
         "PSYKER"),
    unit("2.3", "Corsair Voidreavers", 3, "AELDARI", "ANHRATHE", "ASURYANI",
         "CORSAIR VOIDREAVERS", "DRUKHARI", "INFANTRY", "NON-COMPULSORY TROOP"),
    unit("2.4", "Corsair Voidreavers", 3, "AELDARI", "ANHRATHE", "ASURYANI",
         "CORSAIR VOIDREAVERS", "DRUKHARI", "INFANTRY", "NON-COMPULSORY TROOP"),
    unit("2.5", "Corsair Voidreavers", 3, "AELDARI", "ANHRATHE", "ASURYANI",
         "CORSAIR VOIDREAVERS", "DRUKHARI", "INFANTRY", "NON-COMPULSORY TROOP"),
    unit("2.6", "Corsair Voidreavers", 3, "AELDARI", "ANHRATHE", "ASURYANI",
         "CORSAIR VOIDREAVERS", "DRUKHARI", "INFANTRY", "NON-COMPULSORY TROOP"),
]  # fmt: skip

MORE_REAL = {
    "chaos_four_detachments_emperors_children.rosz": (
        CHAOS_FOUR_DETACHMENTS_EMPERORS_CHILDREN,
        110,
    ),
    "craftworlds_ulthwe.rosz": (CRAFTWORLDS_ULTHWE, 109),
    "adeptus_mechanicus_mars.rosz": (ADEPTUS_MECHANICUS_MARS, 104),
    "genestealer_cults_mixed.rosz": (GENESTEALER_CULTS_MIXED, 11),
    "death_guard_and_craftworld_corsairs.rosz": (DEATH_GUARD_AND_CRAFTWORLD_CORSAIRS, 32),
}


@pytest.mark.parametrize("fixture", sorted(MORE_REAL))
def test_every_unit_as_read_apart(fixture: str) -> None:
    assert_read_as(fixture, *MORE_REAL[fixture])


def test_four_detachments_three_factions_in_one_file() -> None:
    roster = read("chaos_four_detachments_emperors_children.rosz")
    assert roster.factions == (
        "Chaos - Death Guard",
        "Chaos - Daemons",
        "Chaos - Chaos Space Marines",
    )
    assert len(roster.detachments) == 4
    assert {u.detachment for u in roster.units} == set(roster.detachments)


def test_a_creed_of_none_fills_no_cult() -> None:
    for card in read("genestealer_cults_mixed.rosz").units:
        assert "GENESTEALER CULTS" in card.keywords
        assert not any("NONE" in k or "MIXED" in k for k in card.keywords)
