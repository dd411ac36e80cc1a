"""A rule pack's roll on its own table as an effect (issue 47): from a threshold, a quest's
reward or penalty, or a requisition, not only from a Battle Honour's or Scar's decision (a
pathogen's side effect, a mutation). The roll is the decision's roll: the table's dice,
injected, re-rolling what the unit holds or may not take; the dice are kept with the
honour or scar gained, so the result is on the card and a revert takes it back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from app.rules.cards import BattleHonour, BattleScar, CrusadeCard, never_gains_xp
from app.rules.data import HonourCategory, RollTable, Rulebook
from app.rules.dice import Dice
from app.rules.errors import RuleError
from app.rules.honours import HonourRequest, gain_battle_honour
from app.rules.order_of_battle import OrderOfBattle
from app.rules.out_of_action import gain_battle_scar

Gained = BattleHonour | BattleScar


def roll_pack_table(
    card: CrusadeCard, effect: RollTable, book: Rulebook, dice: Dice, *, refuse: bool
) -> tuple[CrusadeCard, Gained | None]:
    """The unit rolls on the pack's table and gains the result: a Battle Honour (a trait or
    fortitude table) or a Battle Scar (a scar table). The core's limits hold (ruling 84):
    six Battle Honours, the most Battle Scars, a unit that never gains experience (nor
    scars), the table's and each entry's ``eligible``, a table with nothing left for the
    unit. Where one stops it, a purchase is refused (``refuse``); a battle's threshold or
    quest rolls nothing (None). Dice missing from those entered are always refused."""
    table = book.pack_table(effect.table)
    assert table is not None  # checked on loading: the pack's own table
    try:
        if table.category == "battle_scar":
            if never_gains_xp(card, book):
                raise RuleError(
                    "unit_never_gains_experience",
                    f"{card.name} never gains experience, so it never gains Battle Scars.",
                )
            card, scar = gain_battle_scar(card, book, dice, table_id=table.id)
            return card, scar
        request = HonourRequest(HonourCategory(table.category), table=table.id)
        card, honour = gain_battle_honour(card, request, book, dice)
        return card, honour
    except RuleError as error:
        if refuse or error.code == "dice_missing":
            raise
        return card, None


def rolled_counters(gained: Gained | None, book: Rulebook) -> Mapping[str, int]:
    """The counters the pack's entry just gained moves (ruling 59), by id: none for a core
    entry or nothing gained."""
    if isinstance(gained, BattleScar):
        scar = book.scars.pack_scar(gained.entry_id)
        return scar.counters if scar is not None else {}
    if isinstance(gained, BattleHonour):
        entry = book.honours.pack_entry(gained.category, gained.entry_ids[0])
        return entry.counters if entry is not None else {}
    return {}


def move_counters(
    force: OrderOfBattle, card_id: str, moves: Mapping[str, int], book: Rulebook
) -> OrderOfBattle:
    """An entry's ``counters`` when a unit gains it: a force counter of its force, a card
    counter on the unit, kept within the counter's bounds (ruling 59)."""
    rules = {c.id: c for c in book.counters}
    for counter_id, amount in moves.items():
        rule = rules[counter_id]
        if rule.scope == "card":
            card = force.card(card_id)
            value = max(rule.min, min(rule.max, card.counters.get(rule.id, rule.start) + amount))
            force = force.with_card(replace(card, counters={**card.counters, rule.id: value}))
        else:
            value = max(rule.min, min(rule.max, force.counters.get(rule.id, rule.start) + amount))
            force = replace(force, counters={**force.counters, rule.id: value})
    return force
