"""Injected dice: seeded for the server, entered for the table."""

from __future__ import annotations

import pytest

from app.rules.dice import DieRoll, EnteredDice, SeededDice
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
