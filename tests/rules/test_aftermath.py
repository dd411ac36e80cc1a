"""After a battle: XP from every source, Out of Action, tallies, and the Order of Battle."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.rules.aftermath import (
    BattleHonourDecision,
    BattleScarDecision,
    OutOfActionDecision,
    SideReport,
    UnitReport,
    VictorBonusDecision,
    answer_battle_honour,
    answer_battle_scar,
    answer_out_of_action,
    resolve_side,
)
from app.rules.battle import victor_bonuses
from app.rules.cards import BattleScar, CombatTallies
from app.rules.data import HonourCategory, VictorRole
from app.rules.dice import EnteredDice
from app.rules.errors import RuleError
from app.rules.honours import HonourRequest
from app.rules.out_of_action import Consequence
from tests.factories import SIX_SCARS, book, card, character, force

SQUAD = card(id="a", name="Squad A")
TANK = card(id="t", name="Predator", power_rating=8, keywords={"IMPERIUM", "VEHICLE"})
HERO = character(id="h", name="Captain", xp=5)


def two_unit_force():  # type: ignore[no-untyped-def]
    return force(SQUAD, TANK, HERO, requisition_points=2)


def report(*units: UnitReport, **overrides: object) -> SideReport:
    defaults: dict[str, object] = {"roster": ("a", "t", "h"), "agendas": (), "units": units}
    defaults.update(overrides)
    return SideReport(**defaults)  # type: ignore[arg-type]


class TestBattleExperience:
    def test_every_unit_on_the_roster_gains_one(self) -> None:
        after = resolve_side(two_unit_force(), report(), book(), EnteredDice([]))
        assert {c.id: c.xp for c in after.force.cards} == {"a": 1, "t": 1, "h": 6}

    def test_units_not_on_the_roster_gain_nothing(self) -> None:
        after = resolve_side(two_unit_force(), report(roster=("a",)), book(), EnteredDice([]))
        assert after.force.card("t").xp == 0
        assert after.force.card("t").tallies.battles_played == 0

    def test_units_that_never_gain_xp_stay_at_zero(self) -> None:
        named = character(id="n", name="Marneus Calgar", named_character=True)
        after = resolve_side(
            force(named),
            report(UnitReport("n", marked_for_greatness=True), roster=("n",)),
            book(),
            EnteredDice([]),
        )
        assert after.force.card("n").xp == 0
        assert after.force.card("n").tallies.battles_played == 1


class TestMarkedForGreatness:
    def test_gains_three_and_the_tally(self) -> None:
        after = resolve_side(
            two_unit_force(),
            report(UnitReport("a", marked_for_greatness=True)),
            book(),
            EnteredDice([]),
        )
        assert after.force.card("a").xp == 4
        assert after.force.card("a").marked_for_greatness == 1

    def test_only_one_unit_normally(self) -> None:
        marked = (
            UnitReport("a", marked_for_greatness=True),
            UnitReport("t", marked_for_greatness=True),
        )
        with pytest.raises(RuleError) as refused:
            resolve_side(two_unit_force(), report(*marked), book(), EnteredDice([]))
        assert refused.value.code == "marked_for_greatness_limit"

    def test_victor_bonus_allows_two(self) -> None:
        bonuses = victor_bonuses(
            book().mission("sweep_and_clear"), won=True, role=VictorRole.ATTACKER
        )
        marked = (
            UnitReport("a", marked_for_greatness=True),
            UnitReport("t", marked_for_greatness=True),
        )
        after = resolve_side(
            two_unit_force(),
            report(*marked, won=True, victor_bonuses=bonuses),
            book(),
            EnteredDice([]),
        )
        assert after.force.card("a").xp == 4 and after.force.card("t").xp == 4


class TestDealersOfDeath:
    @pytest.mark.parametrize(
        ("before", "this_battle", "xp"),
        [(0, 2, 1), (0, 3, 2), (2, 1, 2), (5, 4, 3), (3, 2, 1), (0, 6, 3)],
    )
    def test_one_xp_per_third_enemy_unit_in_total(
        self, before: int, this_battle: int, xp: int
    ) -> None:
        veteran = replace(SQUAD, tallies=CombatTallies(destroyed_ranged=before))
        after = resolve_side(
            force(veteran),
            report(UnitReport("a", destroyed_melee=this_battle), roster=("a",)),
            book(),
            EnteredDice([]),
        )
        assert after.force.card("a").xp == xp  # 1 battle experience + dealers of death
        assert after.gains["a"].dealers_of_death == xp - 1


class TestCombatTallies:
    def test_played_survived_and_destroyed_by_type(self) -> None:
        after = resolve_side(
            two_unit_force(),
            report(
                UnitReport("a", destroyed_psychic=1, destroyed_ranged=2, destroyed_melee=3),
                UnitReport("t", destroyed=True),
            ),
            book(),
            EnteredDice([4]),
        )
        squad, tank = after.force.card("a"), after.force.card("t")
        assert squad.tallies == CombatTallies(1, 1, 1, 2, 3)
        assert squad.tallies.units_destroyed == 6
        assert (tank.tallies.battles_played, tank.tallies.battles_survived) == (1, 0)

    def test_agenda_tallies_reset_after_every_battle(self) -> None:
        tallied = replace(SQUAD, agenda_tallies={"assassins": 2})
        after = resolve_side(
            force(tallied),
            report(
                UnitReport("a", destroyed_melee=1, agenda_tallies={"assassins": 1}),
                roster=("a",),
                agendas=("assassins",),
            ),
            book(),
            EnteredDice([]),
        )
        assert after.force.card("a").agenda_tallies == {}
        assert after.force.card("a").xp == 1 + 2


class TestOutOfActionAfterBattle:
    def test_passed_test_changes_nothing(self) -> None:
        after = resolve_side(
            two_unit_force(), report(UnitReport("a", destroyed=True)), book(), EnteredDice([2])
        )
        assert after.tests[0].passed
        assert after.force.card("a").xp == 1
        assert not [d for d in after.pending if isinstance(d, OutOfActionDecision)]

    def test_failed_test_waits_for_the_players_choice(self) -> None:
        after = resolve_side(
            two_unit_force(),
            report(UnitReport("a", destroyed=True, marked_for_greatness=True)),
            book(),
            EnteredDice([1]),
        )
        decision = after.pending[0]
        assert isinstance(decision, OutOfActionDecision)
        assert decision.options == (Consequence.DEVASTATING_BLOW, Consequence.BATTLE_SCAR)
        assert after.force.card("a").xp == 0  # XP waits for the decision
        assert decision.gain.total() == 4

    def test_devastating_blow_keeps_only_dealers_of_death(self) -> None:
        veteran = replace(SQUAD, xp=10, rank="blooded", tallies=CombatTallies(destroyed_melee=2))
        unit = UnitReport("a", destroyed=True, destroyed_ranged=1, marked_for_greatness=True)
        after = resolve_side(
            force(veteran),
            report(unit, roster=("a",), out_of_action_choices={"a": Consequence.DEVASTATING_BLOW}),
            book(),
            EnteredDice([1, 5]),
        )
        assert after.blows[0].xp_lost == 5
        assert after.force.card("a").xp == 10 - 5 + 1  # only Dealers of Death
        assert after.force.card("a").rank == "blooded"

    def test_battle_scar_keeps_the_xp_and_owes_a_scar(self) -> None:
        after = resolve_side(
            two_unit_force(),
            report(
                UnitReport("a", destroyed=True),
                out_of_action_choices={"a": Consequence.BATTLE_SCAR},
            ),
            book(),
            EnteredDice([1]),
        )
        assert after.force.card("a").xp == 1
        assert BattleScarDecision("a") in after.pending
        scarred = answer_battle_scar(after.force, "a", book(), EnteredDice([2]))
        assert scarred.card("a").scar_ids == {"fatigued"}
        assert scarred.card("a").crusade_points == -1

    def test_answering_later_gives_the_deferred_xp(self) -> None:
        after = resolve_side(
            two_unit_force(),
            report(UnitReport("a", destroyed=True, marked_for_greatness=True)),
            book(),
            EnteredDice([1]),
        )
        decision = after.pending[0]
        assert isinstance(decision, OutOfActionDecision)
        settled = answer_out_of_action(
            after.force, "a", decision.gain, Consequence.BATTLE_SCAR, book(), EnteredDice([])
        )
        assert settled.force.card("a").xp == 4

    def test_six_scars_take_the_devastating_blow_without_asking(self) -> None:
        worn = replace(SQUAD, xp=8, rank="blooded", scars=SIX_SCARS)
        after = resolve_side(
            force(worn),
            report(UnitReport("a", destroyed=True), roster=("a",)),
            book(),
            EnteredDice([1, 3]),
        )
        assert not after.pending
        assert after.force.card("a").xp == 5

    def test_never_xp_units_roll_no_dice(self) -> None:
        swarm = card(id="s", name="Rippers", keywords={"TYRANIDS", "SWARM"})
        after = resolve_side(
            force(swarm, crusade_faction="TYRANIDS"),
            report(UnitReport("s", destroyed=True), roster=("s",)),
            book(),
            EnteredDice([]),
        )
        assert after.tests[0].automatic and after.tests[0].passed


class TestBattleWeary:
    def test_caps_all_xp_at_one_including_dealers_of_death(self) -> None:
        weary = replace(
            SQUAD, scars=(BattleScar("battle_weary"),), tallies=CombatTallies(destroyed_melee=2)
        )
        after = resolve_side(
            force(weary),
            report(UnitReport("a", destroyed_ranged=4, marked_for_greatness=True), roster=("a",)),
            book(),
            EnteredDice([]),
        )
        assert after.force.card("a").xp == 1


class TestRanksAfterBattle:
    def test_rank_gained_owes_a_battle_honour(self) -> None:
        after = resolve_side(two_unit_force(), report(), book(), EnteredDice([]))
        assert after.force.card("h").rank == "blooded"
        assert BattleHonourDecision("h", "rank:blooded") in after.pending

    def test_answering_the_honour_adds_it_and_its_points(self) -> None:
        after = resolve_side(two_unit_force(), report(), book(), EnteredDice([]))
        decision = next(d for d in after.pending if isinstance(d, BattleHonourDecision))
        honoured = answer_battle_honour(
            after.force,
            decision,
            HonourRequest(HonourCategory.BATTLE_TRAIT),
            book(),
            EnteredDice([2]),
        )
        assert honoured.card("h").honour_ids(HonourCategory.BATTLE_TRAIT) == {"heroic_constitution"}
        assert honoured.card("h").crusade_points == 1

    def test_no_honour_owed_past_six(self) -> None:
        from app.rules.cards import BattleHonour

        full = replace(
            HERO,
            xp=50,
            rank="heroic",
            honours=tuple(
                BattleHonour(HonourCategory.BATTLE_TRAIT, (f"t{i}",), 1) for i in range(6)
            ),
        )
        after = resolve_side(force(full), report(roster=("h",)), book(), EnteredDice([]))
        assert after.force.card("h").rank == "legendary"
        assert not [d for d in after.pending if isinstance(d, BattleHonourDecision)]


class TestOrderOfBattleAfterBattle:
    def test_tally_and_one_rp_whatever_the_result(self) -> None:
        after = resolve_side(two_unit_force(), report(won=False), book(), EnteredDice([]))
        assert (after.force.battle_tally, after.force.victories) == (1, 0)
        assert after.force.requisition_points == 3

    def test_victories_are_counted(self) -> None:
        after = resolve_side(two_unit_force(), report(won=True), book(), EnteredDice([]))
        assert after.force.victories == 1

    def test_rp_never_above_five(self) -> None:
        rich = replace(two_unit_force(), requisition_points=5)
        after = resolve_side(rich, report(), book(), EnteredDice([]))
        assert after.force.requisition_points == 5

    def test_victor_bonus_extra_rp(self) -> None:
        bonuses = victor_bonuses(book().mission("supply_drop"), won=True, role=VictorRole.DEFENDER)
        after = resolve_side(
            two_unit_force(), report(won=True, victor_bonuses=bonuses), book(), EnteredDice([])
        )
        assert after.force.requisition_points == 4


class TestVictorBonusHonours:
    def test_eligible_units_and_categories(self) -> None:
        bonuses = victor_bonuses(book().mission("sabotage"), won=True, role=VictorRole.ATTACKER)
        after = resolve_side(
            two_unit_force(), report(won=True, victor_bonuses=bonuses), book(), EnteredDice([])
        )
        decision = next(
            d for d in after.pending if isinstance(d, BattleHonourDecision) and d.card_id is None
        )
        assert decision.eligible == ("a",)  # not the CHARACTER, not the VEHICLE
        assert decision.categories == (HonourCategory.BATTLE_TRAIT,)
        with pytest.raises(RuleError) as refused:
            answer_battle_honour(
                after.force,
                decision,
                HonourRequest(HonourCategory.BATTLE_TRAIT),
                book(),
                EnteredDice([1]),
                card_id="t",
            )
        assert refused.value.code == "honour_unit_not_eligible"
        honoured = answer_battle_honour(
            after.force,
            decision,
            HonourRequest(HonourCategory.BATTLE_TRAIT, choice=("grizzled",)),
            book(),
            EnteredDice([]),
            card_id="a",
        )
        assert honoured.card("a").honour_ids(HonourCategory.BATTLE_TRAIT) == {"grizzled"}

    @pytest.mark.parametrize(
        ("exfiltrated", "eligible"),
        [((), None), (("a",), ("a",)), (("a", "t", "h"), ("a", "t", "h"))],
    )
    def test_behind_enemy_lines_only_exfiltrated_units(
        self, exfiltrated: tuple[str, ...], eligible: tuple[str, ...] | None
    ) -> None:
        mission = book().mission("behind_enemy_lines")
        bonuses = victor_bonuses(mission, won=True, role=VictorRole.ATTACKER)
        units = tuple(UnitReport(c, exfiltrated=True) for c in exfiltrated)
        side = report(*units, won=True, victor_bonuses=bonuses, exfiltration=True)
        after = resolve_side(two_unit_force(), side, book(), EnteredDice([]))
        found = [
            d.eligible
            for d in after.pending
            if isinstance(d, BattleHonourDecision) and d.reason == "victor_bonus"
        ]
        assert found == ([] if eligible is None else [eligible])

    @pytest.mark.parametrize(
        ("unit", "exfiltration", "code"),
        [
            (UnitReport("a", exfiltrated=True), False, "exfiltration_not_in_mission"),
            (UnitReport("a", exfiltrated=True, destroyed=True), True, "exfiltrated_unit_destroyed"),
        ],
    )
    def test_exfiltration_refusals(self, unit: UnitReport, exfiltration: bool, code: str) -> None:
        with pytest.raises(RuleError) as refused:
            resolve_side(
                two_unit_force(),
                report(unit, exfiltration=exfiltration),
                book(),
                EnteredDice([6]),
            )
        assert refused.value.code == code

    def test_free_requisitions_wait_as_decisions(self) -> None:
        bonuses = victor_bonuses(
            book().mission("raze_and_ruin"), won=True, role=VictorRole.ATTACKER
        )
        after = resolve_side(
            two_unit_force(), report(won=True, victor_bonuses=bonuses), book(), EnteredDice([])
        )
        assert any(isinstance(d, VictorBonusDecision) for d in after.pending)

    def test_a_draw_claims_no_bonus(self) -> None:
        assert (
            victor_bonuses(book().mission("supply_drop"), won=False, role=VictorRole.ATTACKER) == ()
        )


class TestRefusedReports:
    def test_unit_not_on_roster(self) -> None:
        with pytest.raises(RuleError) as refused:
            resolve_side(
                two_unit_force(), report(UnitReport("x"), roster=("a",)), book(), EnteredDice([])
            )
        assert refused.value.code == "unit_not_in_roster"

    def test_negative_kills(self) -> None:
        with pytest.raises(RuleError) as refused:
            resolve_side(
                two_unit_force(),
                report(UnitReport("a", destroyed_melee=-1)),
                book(),
                EnteredDice([]),
            )
        assert refused.value.code == "tally_invalid"

    def test_roster_unit_not_in_force(self) -> None:
        with pytest.raises(RuleError) as refused:
            resolve_side(two_unit_force(), report(roster=("zz",)), book(), EnteredDice([]))
        assert refused.value.code == "unit_not_in_order_of_battle"
