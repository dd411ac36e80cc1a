"""Experience after a battle: where each unit's XP comes from, and what may block it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from app.rules.cards import CombatTallies, CrusadeCard, never_gains_xp
from app.rules.data import Rulebook
from app.rules.out_of_action import xp_cap


@dataclass(frozen=True)
class ExperienceGain:
    """One unit's XP from one battle, by source, before any Devastating Blow or cap."""

    battle_experience: int = 0
    marked_for_greatness: int = 0
    dealers_of_death: int = 0
    agendas: Mapping[str, int] = field(default_factory=dict)
    cap: int | None = None

    def total(self, *, devastating_blow: bool = False) -> int:
        """A Devastating Blow cancels every source but Dealers of Death; a capping scar
        (Battle-weary) limits the whole gain, Dealers of Death included."""
        if devastating_blow:
            gross = self.dealers_of_death
        else:
            gross = (
                self.battle_experience
                + self.marked_for_greatness
                + self.dealers_of_death
                + sum(self.agendas.values())
            )
        return gross if self.cap is None else min(gross, self.cap)


def dealers_of_death(before: CombatTallies, after: CombatTallies, book: Rulebook) -> int:
    """+1 XP for every third enemy unit destroyed in total, counted across battles."""
    every = book.numbers.dealers_of_death_every
    return after.units_destroyed // every - before.units_destroyed // every


def experience_gain(
    card: CrusadeCard,
    tallies_after: CombatTallies,
    *,
    marked: bool,
    agenda_xp: Mapping[str, int],
    book: Rulebook,
) -> ExperienceGain:
    """What ``card`` earns from the battle just played (nothing if it never gains XP).
    Scars are those held when the battle began: one gained from this battle's Out of
    Action test is determined afterwards (see docs/rulings.md)."""
    if never_gains_xp(card, book):
        return ExperienceGain()
    numbers = book.numbers
    return ExperienceGain(
        battle_experience=numbers.battle_experience_xp,
        marked_for_greatness=numbers.marked_for_greatness_xp if marked else 0,
        dealers_of_death=dealers_of_death(card.tallies, tallies_after, book),
        agendas=dict(agenda_xp),
        cap=xp_cap(card, book),
    )
