"""Injected dice: a seeded source for server-side rolls and an entered source for dice
rolled at the table. Every roll is returned as a ``DieRoll`` so outcomes can record the
dice that made them."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from app.rules.errors import RuleError


@dataclass(frozen=True)
class DieRoll:
    sides: int
    value: int

    def __str__(self) -> str:
        return f"D{self.sides}={self.value}"


class Dice(Protocol):
    def roll(self, sides: int, purpose: str, key: str = "") -> DieRoll:
        """Roll one die with ``sides`` faces; ``purpose`` names it in error messages and
        ``key`` (e.g. ``out_of_action:12``) lets a source hand a die to one named roll."""
        ...


class SeededDice:
    """Reproducible server-side dice: the same seed gives the same rolls."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._random = random.Random(seed)

    def roll(self, sides: int, purpose: str, key: str = "") -> DieRoll:
        return DieRoll(sides, self._random.randint(1, sides))


class EnteredDice:
    """Dice the players rolled at the table, consumed in order."""

    def __init__(self, values: Iterable[int]) -> None:
        self._values = list(values)
        self._next = 0

    def roll(self, sides: int, purpose: str, key: str = "") -> DieRoll:
        if self._next >= len(self._values):
            raise RuleError(
                "dice_missing",
                f"Another D{sides} is needed for {purpose}, but no more entered dice are left.",
                field="dice",
            )
        value = self._values[self._next]
        if not 1 <= value <= sides:
            raise RuleError(
                "dice_out_of_range",
                f"The D{sides} entered for {purpose} must be between 1 and {sides}, not {value}.",
                field="dice",
            )
        self._next += 1
        return DieRoll(sides, value)

    @property
    def unused(self) -> int:
        return len(self._values) - self._next


class KeyedDice:
    """Dice entered for named rolls (by key), the rest taken from ``others`` in order."""

    def __init__(self, keyed: Mapping[str, int], others: Dice) -> None:
        self._keyed = dict(keyed)
        self._others = others

    def roll(self, sides: int, purpose: str, key: str = "") -> DieRoll:
        if key not in self._keyed:
            return self._others.roll(sides, purpose, key)
        value = self._keyed.pop(key)
        if not 1 <= value <= sides:
            raise RuleError(
                "dice_out_of_range",
                f"The D{sides} entered for {purpose} must be between 1 and {sides}, not {value}.",
                field="dice",
            )
        return DieRoll(sides, value)

    @property
    def unused_keys(self) -> list[str]:
        """Named dice no roll asked for (a unit that was not tested, say)."""
        return sorted(self._keyed)
