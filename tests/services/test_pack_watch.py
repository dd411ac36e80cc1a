"""The battle wizard's lines for what a campaign's packs reward in a battle
(app/services/packs/pack_watch.py): a trigger that moves no counter and only applies its
``effects`` (issue 47) is named with what it gives, for the side and for each unit it may
count for; a trigger with a counter and effects says both."""

from __future__ import annotations

from app.services.packs import pack_watch
from tests.factories import card, character, force
from tests.rules.test_pack_facts import BLOODED, TITHE, played

HUNTERS = """
  - id: headhunters
    name: Headhunters
    when: enemy_unit_destroyed
    scope: card
    keywords_any: [CHARACTER]
    effects: [{kind: add_xp, amount: 1}]
    summary: A hero's kills teach it.
"""


def army(*parts: str) -> pack_watch.Watch:
    host = force(card(id="1"), character(id="2"))
    return pack_watch.army(played(*parts), host, [1, 2])


class TestRewardsWithoutACounter:
    def test_a_side_trigger_says_what_it_gives_each_time(self) -> None:
        watch = army(TITHE)
        assert watch.force == [
            "Tithe: per enemy unit destroyed, +1 RP (up to the cap) (at most 20 times a battle)"
        ]
        assert watch.units == {}
        assert watch.headline == []  # a headline names counters' values; this has none

    def test_a_units_trigger_is_shown_on_the_units_it_may_count_for(self) -> None:
        watch = army(TITHE, HUNTERS)
        hero = watch.units[2]
        assert hero == [
            "Headhunters: per enemy unit it destroys (CHARACTER, when its kills are named), "
            "the unit gains 1 XP (at most 20 times a battle)"
        ]
        # kills are counted by the enemy's keywords when named (ruling 86), so any unit may
        assert watch.units[1] == hero

    def test_a_trigger_with_a_counter_says_its_effects_beside_the_move(self) -> None:
        watch = army(
            BLOODED.replace("    effects:", "    counter: trophies\n    amount: 1\n    effects:", 1)
        )
        line = watch.units[1][0]
        assert line.startswith("Trophies 0: +1 per enemy unit it destroys in melee (Blooded; ")
        assert "each time: the unit gains 2 XP; Trophies +1; Glory +1" in line

    def test_without_packs_there_are_no_lines(self) -> None:
        assert not army()
