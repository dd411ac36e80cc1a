"""A rule pack's own rolled tables (issue 38): a codex's D6, 2D6 or D33 table of Battle
Traits, Weapon Enhancements, Psychic Fortitudes or Battle Scars, rolled with entered or
seeded dice apart from the core's tables (which keep their meaning), or chosen where the
pack says (``chosen: true``).

As on the core's tables, a result the unit already holds is rolled again; so is a result
it may not take (its entry's ``eligible``, a weapon of the wrong kind). Bounded: a table
none of whose results the unit may take is refused before any die is thrown, and a roll
gives up after ``MAX_ROLLS`` dice (entered dice run out long before)."""

from __future__ import annotations

from collections.abc import Callable, Collection

from app.rules import eligibility
from app.rules.cards import CrusadeCard
from app.rules.data import PackTable, Rulebook
from app.rules.dice import Dice, DieRoll
from app.rules.errors import RuleError

MAX_ROLLS = 60

Usable = Callable[[str], bool]  # may the unit take this entry (by id)?


def table_for(book: Rulebook, table_id: str, category: str, card: CrusadeCard) -> PackTable:
    """The pack's table of ``category`` that ``card`` may roll on."""
    table = book.pack_table(table_id)
    if table is None or table.category != category:
        offered = ", ".join(t.id for t in book.pack_tables if t.category == category) or "none"
        raise RuleError(
            "pack_table_unknown",
            f"'{table_id}' is not a rule pack's {category.replace('_', ' ')} table "
            f"(tables: {offered}).",
            field="table",
        )
    eligibility.require(table.name, table.eligible, card, book, "pack_table_not_eligible")
    return table


def roll_on(
    table: PackTable, held: Collection[str], usable: Usable, dice: Dice, purpose: str
) -> tuple[str, tuple[DieRoll, ...]]:
    """Roll until a result the unit does not hold and may take comes up; every die thrown
    is returned with the entry's id."""
    if not any(e not in held and usable(e) for e in table.entries()):
        raise RuleError(
            "table_exhausted",
            f"The unit already has, or may not take, every result of {table.name}.",
            field="table",
        )
    thrown: list[DieRoll] = []
    for _ in range(MAX_ROLLS):
        value, dice_used = _throw(table, dice, purpose)
        thrown += dice_used
        entry = table.entry_for(value)
        if entry not in held and usable(entry):
            return entry, tuple(thrown)
    raise RuleError(
        "table_roll_limit",
        f"{MAX_ROLLS} dice on {table.name} gave nothing the unit may take; choose again.",
        field="dice",
    )


def choose_on(table: PackTable, entry_id: str, held: Collection[str], usable: Usable) -> str:
    """A result picked on a table the pack lets players choose from."""
    if not table.chosen:
        raise RuleError(
            "pack_table_rolled",
            f"{table.name} is rolled on, never chosen from: leave the choice empty to roll.",
            field="choice",
        )
    if entry_id not in table.entries():
        raise RuleError(
            "pack_table_entry_unknown",
            f"'{entry_id}' is not on {table.name}; choose one of: {', '.join(table.entries())}.",
            field="choice",
        )
    if entry_id in held or not usable(entry_id):
        raise RuleError(
            "pack_table_entry_taken",
            f"The unit already has {entry_id}, or may not take it.",
            field="choice",
        )
    return entry_id


def _throw(table: PackTable, dice: Dice, purpose: str) -> tuple[int, list[DieRoll]]:
    """One result: a D6, the sum of 2D6, or a D33 (a D3 for tens, then one for units)."""
    where = f"{purpose} on {table.name}"
    if table.dice == "D6":
        die = dice.roll(6, where)
        return die.value, [die]
    if table.dice == "2D6":
        first, second = dice.roll(6, where), dice.roll(6, where)
        return first.value + second.value, [first, second]
    tens, units = dice.roll(3, f"{where} (tens)"), dice.roll(3, f"{where} (units)")
    return 10 * tens.value + units.value, [tens, units]
