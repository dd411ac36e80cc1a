"""Out of Action tests and what follows a failed one: Devastating Blow or a Battle Scar."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, replace
from enum import StrEnum

from app.rules import eligibility, pack_tables
from app.rules.cards import BattleScar, CrusadeCard, never_gains_xp
from app.rules.data import PackScar, Rulebook, TableEntry
from app.rules.dice import Dice, DieRoll
from app.rules.errors import RuleError
from app.rules.honours import roll_unique


class Consequence(StrEnum):
    DEVASTATING_BLOW = "devastating_blow"
    BATTLE_SCAR = "battle_scar"


@dataclass(frozen=True)
class OutOfActionTest:
    card_id: str
    passed: bool
    roll: DieRoll | None  # None: the unit never gains XP and passes without a roll

    @property
    def automatic(self) -> bool:
        return self.roll is None


@dataclass(frozen=True)
class DevastatingBlow:
    card_id: str
    xp_lost: int
    roll: DieRoll


def out_of_action_test(card: CrusadeCard, book: Rulebook, dice: Dice) -> OutOfActionTest:
    """One D6 for a unit destroyed at the end of the battle: a 1 fails."""
    if never_gains_xp(card, book):
        return OutOfActionTest(card.id, passed=True, roll=None)
    roll = dice.roll(6, f"the Out of Action test of {card.name}", f"out_of_action:{card.id}")
    return OutOfActionTest(card.id, roll.value > book.numbers.out_of_action_fail_max, roll)


def allowed_consequences(card: CrusadeCard, book: Rulebook) -> tuple[Consequence, ...]:
    """A unit that already has the most Battle Scars must take the Devastating Blow."""
    if len(card.scars) >= book.numbers.max_battle_scars:
        return (Consequence.DEVASTATING_BLOW,)
    return (Consequence.DEVASTATING_BLOW, Consequence.BATTLE_SCAR)


def check_consequence(card: CrusadeCard, choice: Consequence, book: Rulebook) -> None:
    if choice not in allowed_consequences(card, book):
        raise RuleError(
            "battle_scars_full",
            f"{card.name} already has {book.numbers.max_battle_scars} Battle Scars, so a "
            "failed Out of Action test must be a Devastating Blow.",
            field="choice",
        )


def devastating_blow(
    card: CrusadeCard, book: Rulebook, dice: Dice
) -> tuple[CrusadeCard, DevastatingBlow]:
    """Lose D6 XP, to a minimum of 0. Rank (and honours) already earned stay."""
    roll = dice.roll(6, f"the Devastating Blow to {card.name}", f"devastating_blow:{card.id}")
    lost = min(card.xp, roll.value)
    return replace(card, xp=card.xp - lost), DevastatingBlow(card.id, lost, roll)


def gain_battle_scar(
    card: CrusadeCard,
    book: Rulebook,
    dice: Dice,
    choice: str | None = None,
    table_id: str | None = None,
) -> tuple[CrusadeCard, BattleScar]:
    """Roll (re-rolling duplicates) or choose a Battle Scar from the unit's table, or from
    a rule pack's own scar table (``table_id``, issue 38)."""
    if len(card.scars) >= book.numbers.max_battle_scars:
        raise RuleError(
            "battle_scars_full",
            f"{card.name} already has {book.numbers.max_battle_scars} Battle Scars, the most "
            "a unit can have.",
        )
    if table_id is not None:
        return _pack_table_scar(card, book, dice, choice, table_id)
    table = book.scars.battle_scars[card.unit_type]
    if choice is None:
        entry, rolls = roll_unique(table, card.scar_ids, dice, f"a Battle Scar for {card.name}")
        scar = BattleScar(entry.id, rolls)
    else:
        chosen = _chosen_scar(card, choice, book)
        if chosen.id in card.scar_ids:
            raise RuleError(
                "battle_scar_duplicate",
                f"{card.name} already has {chosen.name}; a unit cannot have the same scar twice.",
                field="choice",
            )
        scar = BattleScar(chosen.id)
    return replace(card, scars=(*card.scars, scar)), scar


def _pack_table_scar(
    card: CrusadeCard, book: Rulebook, dice: Dice, choice: str | None, table_id: str
) -> tuple[CrusadeCard, BattleScar]:
    table = pack_tables.table_for(book, table_id, "battle_scar", card)

    def usable(entry_id: str) -> bool:
        scar = book.scars.pack_scar(entry_id)
        return scar is not None and (
            not scar.eligible or eligibility.meets(scar.eligible, card, {}, book)
        )

    if choice is not None:
        scar = BattleScar(pack_tables.choose_on(table, choice, card.scar_ids, usable))
    else:
        entry_id, rolls = pack_tables.roll_on(table, card.scar_ids, usable, dice, "a Battle Scar")
        scar = BattleScar(entry_id, rolls)
    return replace(card, scars=(*card.scars, scar)), scar


def _chosen_scar(card: CrusadeCard, choice: str, book: Rulebook) -> TableEntry | PackScar:
    """A scar named on the unit type's core table, or a rule pack's (ruling 58) that the
    unit meets the ``eligible`` expression of."""
    table = book.scars.battle_scars[card.unit_type]
    with contextlib.suppress(KeyError):
        return table.entry(choice)
    pack_scar = book.scars.pack_scar(choice)
    if pack_scar is not None and book.rolled_only("battle_scar", pack_scar.id):
        raise RuleError(
            "pack_entry_rolled",
            f"{pack_scar.name} is on a rule pack's rolled table: roll on the table for it "
            "(give 'table'), it is never chosen.",
            field="choice",
        )
    if pack_scar is None:
        raise RuleError(
            "battle_scar_unknown",
            f"'{choice}' is not on the Battle Scar table for {card.name}'s unit type; "
            f"choose one of: {table.choices()}.",
            field="choice",
        )
    eligibility.require(pack_scar.name, pack_scar.eligible, card, book, "battle_scar_not_eligible")
    return pack_scar


def held_scars(card: CrusadeCard, book: Rulebook) -> list[TableEntry | PackScar]:
    """The scars the unit holds, as their entries (a scar whose pack was detached is
    left out: it no longer caps or forbids anything)."""
    held = []
    for scar in card.scars:
        with contextlib.suppress(KeyError):
            held.append(book.scars.scar(card.unit_type, scar.entry_id))
    return held


def remove_battle_scar(card: CrusadeCard, scar_id: str) -> CrusadeCard:
    if scar_id not in card.scar_ids:
        raise RuleError(
            "battle_scar_not_held",
            f"{card.name} has no Battle Scar '{scar_id}' to remove; it has: "
            f"{', '.join(sorted(card.scar_ids)) or 'none'}.",
            field="scar",
        )
    kept = tuple(s for s in card.scars if s.entry_id != scar_id)
    return replace(card, scars=kept)


def xp_cap(card: CrusadeCard, book: Rulebook) -> int | None:
    """The most XP the unit may gain after a battle, if a scar it holds caps it."""
    caps = [e.max_xp_per_battle for e in held_scars(card, book) if e.max_xp_per_battle is not None]
    return min(caps) if caps else None
