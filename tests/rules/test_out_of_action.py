"""Out of Action tests, Devastating Blow and Battle Scars."""

from __future__ import annotations

import pytest

from app.rules.cards import BattleScar
from app.rules.dice import EnteredDice
from app.rules.errors import RuleError
from app.rules.out_of_action import (
    Consequence,
    allowed_consequences,
    check_consequence,
    devastating_blow,
    gain_battle_scar,
    out_of_action_test,
    remove_battle_scar,
    xp_cap,
)
from tests.factories import SIX_SCARS, book, card


class TestOutOfActionTest:
    @pytest.mark.parametrize(("roll", "passed"), [(1, False), (2, True), (6, True)])
    def test_one_fails_two_plus_passes(self, roll: int, passed: bool) -> None:
        test = out_of_action_test(card(), book(), EnteredDice([roll]))
        assert test.passed is passed
        assert test.roll is not None and test.roll.value == roll

    def test_units_that_never_gain_xp_pass_without_a_roll(self) -> None:
        dice = EnteredDice([1])
        test = out_of_action_test(card(keywords={"TYRANIDS", "SWARM"}), book(), dice)
        assert test.passed and test.automatic
        assert dice.unused == 1


class TestDevastatingBlow:
    def test_loses_d6_xp(self) -> None:
        hit, blow = devastating_blow(card(xp=12, rank="blooded"), book(), EnteredDice([4]))
        assert hit.xp == 8
        assert blow.xp_lost == 4 and blow.roll.value == 4
        assert hit.rank == "blooded"

    def test_xp_never_below_zero(self) -> None:
        hit, blow = devastating_blow(card(xp=2), book(), EnteredDice([6]))
        assert hit.xp == 0
        assert blow.xp_lost == 2

    def test_six_scars_force_devastating_blow(self) -> None:
        unit = card(scars=SIX_SCARS)
        assert allowed_consequences(unit, book()) == (Consequence.DEVASTATING_BLOW,)
        with pytest.raises(RuleError) as refused:
            check_consequence(unit, Consequence.BATTLE_SCAR, book())
        assert refused.value.code == "battle_scars_full"


class TestBattleScars:
    def test_rolled_on_the_units_own_table(self) -> None:
        scarred, scar = gain_battle_scar(card(keywords={"VEHICLE"}), book(), EnteredDice([1]))
        assert scar.entry_id == "engine_fault"
        assert scarred.scar_ids == {"engine_fault"}

    @pytest.mark.parametrize(
        ("keywords", "expected"),
        [
            ({"CHARACTER", "INFANTRY"}, "deep_scars"),
            ({"VEHICLE"}, "weakened_armour"),
            ({"MONSTER"}, "critical_wound"),
            ({"INFANTRY"}, "battle_weary"),
        ],
    )
    def test_result_three_on_each_table(self, keywords: set[str], expected: str) -> None:
        _, scar = gain_battle_scar(card(keywords=keywords), book(), EnteredDice([3]))
        assert scar.entry_id == expected

    def test_duplicates_are_rerolled_and_every_die_recorded(self) -> None:
        unit = card(scars=(BattleScar("fatigued"),))
        _, scar = gain_battle_scar(unit, book(), EnteredDice([2, 2, 5]))
        assert scar.entry_id == "disgraced"
        assert [d.value for d in scar.dice] == [2, 2, 5]

    def test_chosen_duplicate_is_refused(self) -> None:
        with pytest.raises(RuleError) as refused:
            gain_battle_scar(
                card(scars=(BattleScar("fatigued"),)), book(), EnteredDice([]), "fatigued"
            )
        assert refused.value.code == "battle_scar_duplicate"

    def test_chosen_scar_from_another_table_is_refused(self) -> None:
        with pytest.raises(RuleError) as refused:
            gain_battle_scar(card(), book(), EnteredDice([]), "engine_fault")
        assert refused.value.code == "battle_scar_unknown"

    def test_no_seventh_scar(self) -> None:
        with pytest.raises(RuleError) as refused:
            gain_battle_scar(card(scars=SIX_SCARS), book(), EnteredDice([1]))
        assert refused.value.code == "battle_scars_full"

    def test_remove_a_held_scar(self) -> None:
        healed = remove_battle_scar(card(scars=(BattleScar("fatigued"),)), "fatigued")
        assert healed.scars == ()
        with pytest.raises(RuleError) as refused:
            remove_battle_scar(healed, "fatigued")
        assert refused.value.code == "battle_scar_not_held"

    def test_battle_weary_caps_xp_at_one(self) -> None:
        assert xp_cap(card(scars=(BattleScar("battle_weary"),)), book()) == 1
        assert xp_cap(card(scars=(BattleScar("fatigued"),)), book()) is None
