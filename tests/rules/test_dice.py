"""Injected dice: seeded for the server, entered for the table."""

from __future__ import annotations

import pytest

from app.rules.dice import DieRoll, EnteredDice, KeyedDice, SeededDice
from app.rules.errors import RuleError


class TestSeededDice:
    def test_same_seed_same_rolls(self) -> None:
        first, second = SeededDice(42), SeededDice(42)
        assert [first.roll(6, "t") for _ in range(20)] == [second.roll(6, "t") for _ in range(20)]

    def test_rolls_stay_on_the_die(self) -> None:
        dice = SeededDice(7)
        values = {dice.roll(3, "t").value for _ in range(200)}
        assert values == {1, 2, 3}


class TestEnteredDice:
    def test_consumed_in_order(self) -> None:
        dice = EnteredDice([4, 1])
        assert dice.roll(6, "a") == DieRoll(6, 4)
        assert dice.roll(6, "b") == DieRoll(6, 1)
        assert dice.unused == 0

    def test_running_out_is_a_clear_error(self) -> None:
        with pytest.raises(RuleError) as refused:
            EnteredDice([]).roll(6, "the Out of Action test of Squad A")
        assert refused.value.code == "dice_missing"
        assert "Squad A" in refused.value.message

    @pytest.mark.parametrize("value", [0, 7, -1])
    def test_a_value_off_the_die_is_refused(self, value: int) -> None:
        with pytest.raises(RuleError) as refused:
            EnteredDice([value]).roll(6, "x")
        assert refused.value.code == "dice_out_of_range"

    def test_a_d3_cannot_show_four(self) -> None:
        with pytest.raises(RuleError):
            EnteredDice([4]).roll(3, "x")

    def test_str(self) -> None:
        assert str(DieRoll(6, 3)) == "D6=3"


class TestKeyedDice:
    """Dice entered for named rolls (``out_of_action:<card>``), the rest in order."""

    def test_a_named_roll_takes_its_own_die_and_the_others_go_in_order(self) -> None:
        dice = KeyedDice({"out_of_action:7": 2}, EnteredDice([5, 3]))
        assert dice.roll(6, "a", "scar") == DieRoll(6, 5)
        assert dice.roll(6, "b", "out_of_action:7") == DieRoll(6, 2)
        assert dice.roll(6, "c", "out_of_action:7") == DieRoll(6, 3)  # its die was used

    def test_named_dice_no_roll_asked_for_are_listed(self) -> None:
        dice = KeyedDice({"out_of_action:9": 1, "out_of_action:4": 6}, EnteredDice([]))
        dice.roll(6, "a", "out_of_action:9")
        assert dice.unused_keys == ["out_of_action:4"]

    @pytest.mark.parametrize("value", [0, 7])
    def test_a_named_value_off_the_die_is_refused(self, value: int) -> None:
        dice = KeyedDice({"k": value}, EnteredDice([]))
        with pytest.raises(RuleError) as refused:
            dice.roll(6, "the Out of Action test of Squad B", "k")
        assert refused.value.code == "dice_out_of_range"
        assert "Squad B" in refused.value.message

    def test_a_roll_past_the_entered_dice_is_a_clear_error(self) -> None:
        with pytest.raises(RuleError) as refused:
            KeyedDice({"k": 1}, EnteredDice([])).roll(6, "x", "other")
        assert refused.value.code == "dice_missing"
