"""app/rules/values.py: ``evolve`` is ``dataclasses.replace``, only quicker."""

from __future__ import annotations

import dataclasses

import pytest

from app.rules.cards import BattleHonour, CombatTallies
from app.rules.data import HonourCategory
from app.rules.values import evolve
from tests.factories import card, force


def _relic(entry: str) -> BattleHonour:
    return BattleHonour(HonourCategory.CRUSADE_RELIC, (entry,), 1)


def test_a_card_evolved_equals_the_card_replaced() -> None:
    old = card(xp=3, honours=(_relic("the_armour_indomitable"),))
    changes = {"xp": 9, "rank": "blooded", "tallies": CombatTallies(destroyed_ranged=2)}
    new = evolve(old, **changes)
    assert new == dataclasses.replace(old, **changes)
    assert type(new) is type(old)
    assert (old.xp, old.rank) == (3, "battle_ready")  # the old value unchanged
    with pytest.raises(dataclasses.FrozenInstanceError):
        new.xp = 1  # type: ignore[misc]


def test_what_a_force_worked_out_from_its_cards_is_worked_out_again() -> None:
    """OrderOfBattle.crusade_relics is a cached property: a force evolved with a card that
    gained a relic must not keep the old answer."""
    unit = card()
    before = force(unit)
    assert before.crusade_relics == frozenset()
    after = before.with_card(evolve(unit, honours=(_relic("the_armour_indomitable"),)))
    assert after.crusade_relics == {"the_armour_indomitable"}
    assert before.crusade_relics == frozenset()
    assert after == dataclasses.replace(before, cards=after.cards)


def test_an_unknown_field_is_refused_as_replace_refuses_it() -> None:
    with pytest.raises(TypeError, match="power"):
        evolve(card(), power=3)


def test_a_value_whose_init_does_more_is_replaced_by_replace_itself() -> None:
    @dataclasses.dataclass(frozen=True)
    class Shouted:
        word: str
        loud: str = ""

        def __post_init__(self) -> None:
            object.__setattr__(self, "loud", self.word.upper())

    assert evolve(Shouted("waagh"), word="dakka") == Shouted("dakka", "DAKKA")
