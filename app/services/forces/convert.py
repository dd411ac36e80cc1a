"""The boundary between rows and rule values: services load rows, hand plain values to
app.rules, and write the new values back."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm.attributes import flag_modified, set_attribute

from app.db.models import CARD_NUMBERS, CARD_REST, Card, Force
from app.rules.cards import BattleHonour, BattleScar, CombatTallies, CrusadeCard, Upgrade
from app.rules.data import HonourCategory
from app.rules.dice import DieRoll
from app.rules.order_of_battle import OrderOfBattle


def _dice(rolls: list[list[int]]) -> tuple[DieRoll, ...]:
    return tuple(DieRoll(sides, value) for sides, value in rolls)


def dice_json(rolls: tuple[DieRoll, ...]) -> list[list[int]]:
    return [[r.sides, r.value] for r in rolls]


def honour_json(honour: BattleHonour) -> dict[str, Any]:
    return {
        "category": honour.category.value,
        "entry_ids": list(honour.entry_ids),
        "crusade_points": honour.crusade_points,
        "weapon": honour.weapon,
        "model": honour.model,
        "dice": dice_json(honour.dice),
    }


def _honour(data: dict[str, Any]) -> BattleHonour:
    return BattleHonour(
        category=HonourCategory(data["category"]),
        entry_ids=tuple(data["entry_ids"]),
        crusade_points=data["crusade_points"],
        weapon=data.get("weapon"),
        model=data.get("model"),
        dice=_dice(data.get("dice", [])),
    )


def scar_json(scar: BattleScar) -> dict[str, Any]:
    return {"entry_id": scar.entry_id, "dice": dice_json(scar.dice)}


def upgrade_json(upgrade: Upgrade) -> dict[str, Any]:
    return {
        "requisition": upgrade.requisition,
        "detail": upgrade.detail,
        "crusade_points": upgrade.crusade_points,
        "model": upgrade.model,
        "weapon": upgrade.weapon,
        "first_founding": upgrade.first_founding,
    }


def card_value(row: Card) -> CrusadeCard:
    return CrusadeCard(
        id=str(row.id),
        name=row.name,
        power_rating=row.power_rating,
        # getattr: the totals' rebuild reads a fixed set of columns, from before points
        points=getattr(row, "points", None),
        keywords=frozenset(row.keywords),
        battlefield_role=row.battlefield_role,
        champion=row.champion,
        named_character=row.named_character,
        split_unit=row.split_unit,
        datasheet=getattr(row, "datasheet", ""),
        wargear=row.wargear,
        psychic_powers=row.psychic_powers,
        narrative=row.narrative,
        xp=row.xp,
        rank=row.rank,
        honours=tuple(_honour(h) for h in row.honours),
        scars=tuple(BattleScar(s["entry_id"], _dice(s.get("dice", []))) for s in row.scars),
        upgrades=tuple(Upgrade(**u) for u in row.upgrades),
        tallies=CombatTallies(
            battles_played=row.battles_played,
            battles_survived=row.battles_survived,
            destroyed_psychic=row.destroyed_psychic,
            destroyed_ranged=row.destroyed_ranged,
            destroyed_melee=row.destroyed_melee,
        ),
        marked_for_greatness=row.marked_for_greatness,
        counters=dict(row.counters or {}),
    )


def write_card(row: Card, card: CrusadeCard) -> None:
    """Copy every field a rule may change back onto the row. A changed card writes its
    numbers, or its numbers and everything else (app.db.models.CARD_NUMBERS, CARD_REST):
    a battle moves the numbers of most units (XP, rank, tallies) and the rest of few, so
    most rows skip the five JSON columns (two hundred JSON values a resolution, issue 50).
    The ORM sends one UPDATE per set of columns; the flush gives a command's cards one set
    (app.db.models._cards_in_one_update)."""
    values = {
        "power_rating": card.power_rating,
        "points": card.points,
        "xp": card.xp,
        "rank": card.rank,
        "battles_played": card.tallies.battles_played,
        "battles_survived": card.tallies.battles_survived,
        "destroyed_psychic": card.tallies.destroyed_psychic,
        "destroyed_ranged": card.tallies.destroyed_ranged,
        "destroyed_melee": card.tallies.destroyed_melee,
        "marked_for_greatness": card.marked_for_greatness,
        "name": card.name,
        "keywords": sorted(card.keywords),
        "datasheet": card.datasheet,
        "wargear": card.wargear,
        "psychic_powers": card.psychic_powers,
        "narrative": card.narrative,
        "honours": [honour_json(h) for h in card.honours],
        "scars": [scar_json(s) for s in card.scars],
        "upgrades": [upgrade_json(u) for u in card.upgrades],
        "counters": dict(card.counters),
    }
    rest_changed = not _same(row, values, CARD_REST)
    if not rest_changed and _same(row, values, CARD_NUMBERS):
        return
    for name in CARD_NUMBERS + CARD_REST if rest_changed else CARD_NUMBERS:
        # SQLAlchemy's own setter: the model's __setattr__ would set each value twice (the
        # ORM's, then pydantic's copy of the same dict), a third of a resolution's writing
        set_attribute(row, name, values[name])
        flag_modified(row, name)


def _same(row: Card, values: dict[str, Any], names: tuple[str, ...]) -> bool:
    return all(getattr(row, name) == values[name] for name in names)


def force_value(force: Force, cards: list[Card]) -> OrderOfBattle:
    return OrderOfBattle(
        id=str(force.id),
        name=force.name,
        crusade_faction=force.crusade_faction,
        requisition_points=force.requisition_points,
        supply_limit=force.supply_limit,
        battle_tally=force.battle_tally,
        victories=force.victories,
        cards=tuple(card_value(c) for c in cards if not c.removed),
        removed_card_ids=frozenset(str(c.id) for c in cards if c.removed),
        counters=dict(force.counters or {}),
    )


def write_force(
    force: Force, cards: list[Card], value: OrderOfBattle, before: OrderOfBattle | None = None
) -> None:
    """Copy the force's numbers and every card still in the Order of Battle back. With
    ``before`` (the value the rules started from), a card the rules handed back untouched
    (the very same object: rule values are immutable) is not compared field by field."""
    numbers = {
        "requisition_points": value.requisition_points,
        "supply_limit": value.supply_limit,
        "battle_tally": value.battle_tally,
        "victories": value.victories,
    }
    if any(getattr(force, name) != number for name, number in numbers.items()):
        # All four written, changed or not: a battle's two forces (the winner's victories
        # move, the loser's do not) then go in one executemany UPDATE, not one each
        for name, number in numbers.items():
            set_attribute(force, name, number)
            flag_modified(force, name)
    if dict(force.counters or {}) != dict(value.counters):
        force.counters = dict(value.counters)
        flag_modified(force, "counters")
    by_id = {str(c.id): c for c in cards}
    unchanged = {id(c) for c in before.cards} if before is not None else set()
    for card in value.cards:
        if id(card) not in unchanged:
            write_card(by_id[card.id], card)
    for card_id in value.removed_card_ids:  # a rule pack's remove_unit (issue 38)
        row = by_id.get(card_id)
        if row is not None and not row.removed:
            row.removed = True
