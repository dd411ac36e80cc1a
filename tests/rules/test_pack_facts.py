"""Pack facts and effects (issue 47, items 3 and 4), in the pure rules: a trigger with its
own effects (once per time it counts, for the side or the unit), a failed Agenda's
``on_fail`` (ruling 85), ``agenda_completed`` as a per-unit fact, and the enemy units a
unit's report names as destroyed by it, read by keyword-filtered unit counters and unit
quests (ruling 86)."""

from __future__ import annotations

import pytest

from app.rules import packs, triggers
from app.rules.aftermath import SideReport, UnitReport, resolve_side
from app.rules.data import Rulebook
from app.rules.dice import EnteredDice
from app.rules.order_of_battle import OrderOfBattle
from tests.factories import book, card, character, force

HEAD = """
format: crusade-rule-pack/1
id: facts
name: Facts
version: "1"
counters:
  - {id: glory, name: Glory, scope: force, start: 0, min: 0, max: 50}
  - {id: trophies, name: Trophies, scope: card, start: 0, min: 0, max: 50}
"""

TITHE = """
triggers:
  - id: tithe
    name: Tithe
    when: enemy_unit_destroyed
    effects: [{kind: change_requisition_points, amount: 1}]
    summary: Each enemy unit destroyed pays 1 RP.
"""

BLOODED = """
triggers:
  - id: blooded
    name: Blooded
    when: melee_kill
    scope: card
    effects:
      - {kind: add_xp, amount: 2}
      - {kind: change_counter, counter: trophies, amount: 1}
      - {kind: change_counter, counter: glory, amount: 1}
    summary: Each enemy unit a unit destroys in melee gives it 2 XP and a trophy.
"""

OATHS = """
agendas:
  - id: hold
    name: Hold Fast
    summary: Tally one per objective held.
    xp_per_tally: 2
    max_tally: 3
    on_fail:
      - {kind: remove_xp, amount: 3}
      - {kind: change_requisition_points, amount: -2}
  - id: hunt
    name: The Hunt
    category: Hunts
    summary: A hero tallies its prey; two marks are needed.
    xp: {kind: threshold, min_tally: 2, xp: 3}
    eligible: CHARACTER
    on_fail: [{kind: remove_xp, amount: 1}]
"""

NO_FAIL = "\n".join(
    line
    for line in OATHS.splitlines()
    if "on_fail" not in line and "remove_xp" not in line and "amount: -2" not in line
)

COMPLETED = """
triggers:
  - {id: honoured, name: Honoured, when: agenda_completed, counter: glory, amount: 1, summary: s}
  - id: proud
    name: Proud
    when: agenda_completed
    counter: trophies
    amount: 2
    summary: s
"""

MONSTERS = """
triggers:
  - id: monster_trophies
    name: Monster Trophies
    when: enemy_unit_destroyed
    keywords_any: [MONSTER]
    counter: trophies
    amount: 1
    summary: Each MONSTER the unit slays.
quests:
  - id: slayer
    name: Slayer
    automatic: true
    summary: Slay two MONSTERS.
    steps: [{name: Slay, when: enemy_unit_destroyed, keywords_any: [MONSTER], count: 2}]
    reward: [{kind: add_xp, amount: 5}]
"""


def played(*parts: str) -> Rulebook:
    pack, root = packs.read(HEAD + "".join(parts))
    packs.check_against(pack, book(), [], root)
    return packs.apply(book(), [pack])


def refused(*parts: str) -> str:
    with pytest.raises(packs.PackError) as error:
        played(*parts)
    return str(error.value)


def fought(
    army: OrderOfBattle,
    rules: Rulebook,
    *units: UnitReport,
    agendas: tuple[str, ...] = (),
    losses: int = 0,
) -> OrderOfBattle:
    side = SideReport(
        roster=tuple(c.id for c in army.cards),
        agendas=agendas,
        units=units,
        enemy_losses=tuple(frozenset({"INFANTRY"}) for _ in range(losses)),
    )
    return resolve_side(army, side, rules, EnteredDice([])).force


class TestTriggerEffects:
    def test_a_side_trigger_pays_once_per_time_it_counts(self) -> None:
        army = force(card(id="a"), requisition_points=0)
        plain = fought(army, played(), losses=3)
        paid = fought(army, played(TITHE), losses=3)
        assert paid.requisition_points == plain.requisition_points + 3
        none = fought(army, played(TITHE), losses=0)
        assert none.requisition_points == plain.requisition_points

    def test_a_units_trigger_rewards_the_unit_that_did_it(self) -> None:
        army = force(card(id="a"), card(id="b"))
        kills = (UnitReport("a", destroyed_melee=2), UnitReport("b", destroyed_ranged=2))
        plain = fought(army, played(), *kills)
        after = fought(army, played(BLOODED), *kills)
        assert after.card("a").xp == plain.card("a").xp + 4
        assert after.card("b").xp == plain.card("b").xp  # its kills were not in melee
        assert after.card("a").counters["trophies"] == 2
        assert "trophies" not in after.card("b").counters
        assert after.counters["glory"] == 2  # a force counter moved by a unit's trigger

    def test_its_effects_apply_at_most_twenty_times_a_battle(self) -> None:
        army = force(card(id="a"))
        kills = (UnitReport("a", destroyed_melee=25),)
        plain = fought(army, played(), *kills)
        after = fought(army, played(BLOODED), *kills)
        assert after.card("a").xp == plain.card("a").xp + 2 * triggers.MAX_FIRES
        assert after.card("a").counters["trophies"] == 20

    def test_a_rank_reached_by_a_triggers_xp_owes_a_battle_honour(self) -> None:
        army = force(card(id="a", xp=3))
        side = SideReport(roster=("a",), agendas=(), units=(UnitReport("a", destroyed_melee=1),))
        result = resolve_side(army, side, played(BLOODED), EnteredDice([]))
        assert result.force.card("a").xp == 6 and result.force.card("a").rank == "blooded"
        assert [getattr(d, "reason", None) for d in result.pending] == ["rank:blooded"]

    def test_a_trigger_with_a_counter_and_effects_does_both(self) -> None:
        both = TITHE.replace("    effects:", "    counter: glory\n    amount: 2\n    effects:", 1)
        after = fought(force(card(id="a")), played(both), losses=2)
        assert after.counters["glory"] == 4

    @pytest.mark.parametrize(
        ("change", "words"),
        [
            (
                ("    effects: [{kind: change_requisition_points, amount: 1}]\n", ""),
                "give a counter (with its amount) or effects, or both",
            ),
            (
                ("    effects:", "    counter: glory\n    effects:"),
                "a counter and its amount go together",
            ),
            (
                ("kind: change_requisition_points, amount: 1", "kind: add_xp, amount: 1"),
                "triggers[0].effects[0]",
            ),
            (
                (
                    "{kind: change_requisition_points, amount: 1}",
                    "{kind: free_requisitions, requisitions: [x], mode: all, target: force}",
                ),
                "triggers[0].effects[0]",
            ),
            (
                (
                    "    effects:",
                    "    counter: glory\n    amount: 1\n    scope: card\n    effects:",
                ),
                "triggers[0].scope",
            ),
        ],
    )
    def test_a_trigger_that_could_never_work_is_refused(
        self, change: tuple[str, str], words: str
    ) -> None:
        assert words in refused(TITHE.replace(*change))

    def test_a_side_trigger_gives_no_unit_xp(self) -> None:
        text = refused(
            TITHE.replace("kind: change_requisition_points, amount: 1", "kind: add_xp, amount: 1")
        )
        assert "add_xp needs a unit" in text

    def test_a_trigger_never_counts_on_a_named_choice(self) -> None:
        patron = "  - {id: patron, name: Patron, scope: force, choices: [khorne, nurgle]}\n"
        head = HEAD.replace("counters:\n", "counters:\n" + patron)
        counting = TITHE.replace("    effects:", "    counter: patron\n    amount: 1\n    effects:")
        with pytest.raises(packs.PackError) as error:
            pack, root = packs.read(head + counting)
            packs.check_against(pack, book(), [], root)
        assert "triggers[0].counter" in str(error.value)
        assert "Patron is a named choice" in str(error.value)


class TestFailedAgendas:
    def test_no_mark_takes_xp_from_each_unit_that_could_score_it_and_rp(self) -> None:
        army = force(card(id="a", xp=2), card(id="b", xp=10), requisition_points=0)
        plain = fought(army, played(NO_FAIL), agendas=("hold",))
        after = fought(army, played(OATHS), agendas=("hold",))
        assert after.card("a").xp == 0  # 2 + 1 for the battle - 3: never below 0
        assert after.card("b").xp == plain.card("b").xp - 3
        assert after.card("b").rank == plain.card("b").rank  # the rank is kept
        assert (plain.requisition_points, after.requisition_points) == (1, 0)  # never below 0

    def test_one_mark_is_no_failure(self) -> None:
        army = force(card(id="a", xp=2), card(id="b", xp=10))
        plain = fought(
            army,
            played(NO_FAIL),
            UnitReport("a", agenda_tallies={"hold": 1}),
            agendas=("hold",),
        )
        after = fought(
            army, played(OATHS), UnitReport("a", agenda_tallies={"hold": 1}), agendas=("hold",)
        )
        assert after == plain

    def test_a_threshold_agenda_fails_below_its_min_tally_for_its_eligible_units_only(
        self,
    ) -> None:
        army = force(character(id="c", xp=4), card(id="a", xp=4))
        short = UnitReport("c", agenda_tallies={"hunt": 1})
        plain = fought(army, played(NO_FAIL), short, agendas=("hunt",))
        after = fought(army, played(OATHS), short, agendas=("hunt",))
        assert after.card("c").xp == plain.card("c").xp - 1
        assert after.card("a").xp == plain.card("a").xp  # no CHARACTER: could not score it
        reached = UnitReport("c", agenda_tallies={"hunt": 2})
        done = fought(army, played(OATHS), reached, agendas=("hunt",))
        assert done.card("c").xp == plain.card("c").xp + 3  # achieved: nothing taken

    def test_an_agenda_not_chosen_never_fails(self) -> None:
        army = force(card(id="a", xp=4))
        assert fought(army, played(OATHS)) == fought(army, played())

    def test_on_fail_gives_no_rp(self) -> None:
        text = refused(OATHS.replace("amount: -2", "amount: 2"))
        assert "on_fail takes RP away" in text


class TestAgendaCompleted:
    def test_each_unit_that_gained_xp_from_an_agenda_counts(self) -> None:
        army = force(card(id="a"), card(id="b"), card(id="c"))
        after = fought(
            army,
            played(OATHS, COMPLETED),
            UnitReport("a", agenda_tallies={"hold": 2}),
            UnitReport("b", agenda_tallies={"hold": 1}),
            agendas=("hold",),
        )
        assert after.counters["glory"] == 2  # per unit, not per mark
        assert after.card("a").counters["trophies"] == 2
        assert after.card("b").counters["trophies"] == 2
        assert after.card("c").counters.get("trophies", 0) == 0

    def test_a_tally_below_the_threshold_completed_nothing(self) -> None:
        army = force(character(id="c"))
        after = fought(
            army,
            played(OATHS, COMPLETED),
            UnitReport("c", agenda_tallies={"hunt": 1}),
            agendas=("hunt",),
        )
        assert after.counters.get("glory", 0) == 0


MONSTER, GRUNT = frozenset({"MONSTER", "TYRANIDS"}), frozenset({"INFANTRY", "TYRANIDS"})


class TestNamedKills:
    def test_named_kills_count_only_the_enemies_with_the_keyword(self) -> None:
        army = force(card(id="a"), card(id="b"))
        after = fought(
            army,
            played(MONSTERS),
            UnitReport("a", destroyed_melee=2, destroyed_enemies=(MONSTER, GRUNT)),
            UnitReport("b", destroyed_ranged=1, destroyed_enemies=(GRUNT,)),
        )
        assert after.card("a").counters["trophies"] == 1
        assert after.card("b").counters.get("trophies", 0) == 0

    def test_without_the_list_the_units_own_keywords_are_read_as_before(self) -> None:
        army = force(card(id="a"), card(id="m", keywords={"MONSTER"}))
        after = fought(
            army,
            played(MONSTERS),
            UnitReport("a", destroyed_melee=2),
            UnitReport("m", destroyed_melee=2),
        )
        assert after.card("a").counters.get("trophies", 0) == 0
        assert after.card("m").counters["trophies"] == 2

    def test_a_units_quest_step_counts_the_named_monsters(self) -> None:
        army = force(card(id="a", xp=0))
        once = fought(
            army, played(MONSTERS), UnitReport("a", destroyed_melee=1, destroyed_enemies=(MONSTER,))
        )
        assert once.card("a").counters["quest:slayer:tally"] == 1
        twice = fought(
            once,
            played(MONSTERS),
            UnitReport("a", destroyed_melee=2, destroyed_enemies=(MONSTER, GRUNT)),
        )
        assert twice.card("a").counters["quest:slayer"] == 2  # done: its one step passed
        plain = fought(once, played(), UnitReport("a", destroyed_melee=2))
        assert twice.card("a").xp == plain.card("a").xp + 5


def test_the_schema_has_trigger_effects_on_fail_and_agenda_completed() -> None:
    schema = packs.schema()["$defs"]
    trigger = schema["PackTrigger"]
    assert {"effects", "scope", "counter", "amount"} <= set(trigger["properties"])
    assert set(trigger["required"]) == {"id", "name", "when", "summary"}
    assert trigger["properties"]["effects"]["maxItems"] == 5
    assert schema["PackAgenda"]["properties"]["on_fail"]["maxItems"] == 5
    assert "agenda_completed" in trigger["properties"]["when"]["enum"]
    assert "agenda_completed" in schema["PackQuestStep"]["properties"]["when"]["enum"]


QUARRY = """
quests:
  - id: the_hunt
    name: The Hunt
    automatic: true
    summary: Name a quarry and slay it.
    steps: [{name: Slay the quarry, when: quarry_destroyed, count: 1}]
    reward: [{kind: add_xp, amount: 4}]
triggers:
  - {id: hunted, name: Hunted, when: quarry_destroyed, counter: glory, amount: 3, summary: s}
"""


class TestQuarry:
    def test_a_unit_that_destroys_its_named_quarry_counts(self) -> None:
        army = force(card(id="a"), card(id="b"), card(id="c"))
        after = fought(
            army,
            played(QUARRY),
            UnitReport(
                "a",
                destroyed_melee=1,
                destroyed_enemies=(MONSTER,),
                destroyed_enemy_ids=("e1",),
                quarry="e1",
            ),
            # b destroyed something, but not its quarry; c named one and destroyed none
            UnitReport(
                "b",
                destroyed_melee=1,
                destroyed_enemies=(GRUNT,),
                destroyed_enemy_ids=("e2",),
                quarry="e3",
            ),
            UnitReport("c", quarry="e3"),
        )
        assert after.counters["glory"] == 3  # one unit slew its quarry
        assert after.card("a").counters["quest:the_hunt"] == 2  # done
        assert after.card("b").counters["quest:the_hunt"] == 1
        assert after.card("c").counters["quest:the_hunt"] == 1
