"""The Order of Battle: a Crusade force's units, Requisition points, Supply Limit and tallies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from app.rules.cards import CrusadeCard
from app.rules.data import HonourCategory, Rulebook
from app.rules.errors import RuleError
from app.rules.values import evolve


@dataclass(frozen=True)
class OrderOfBattle:
    id: str
    name: str
    crusade_faction: str
    requisition_points: int
    supply_limit: int
    battle_tally: int = 0
    victories: int = 0
    cards: tuple[CrusadeCard, ...] = ()
    removed_card_ids: frozenset[str] = field(default_factory=frozenset)
    counters: Mapping[str, int] = field(default_factory=dict)  # a rule pack's force counters

    @property
    def supply_used(self) -> int:
        """Power Rating used; ``supply_used(force, book)`` counts what the campaign musters by."""
        return sum(c.power_rating for c in self.cards)

    @property
    def crusade_points(self) -> int:
        return sum(c.crusade_points for c in self.cards)

    def card(self, card_id: str) -> CrusadeCard:
        for card in self.cards:
            if card.id == card_id:
                return card
        raise RuleError(
            "unit_not_in_order_of_battle",
            f"Unit {card_id} is not in the Order of Battle of {self.name}.",
            field="card_id",
        )

    def with_card(self, card: CrusadeCard) -> OrderOfBattle:
        """The same force with ``card`` replacing the card of the same id."""
        self.card(card.id)
        return evolve(self, cards=tuple(card if c.id == card.id else c for c in self.cards))

    @cached_property
    def crusade_relics(self) -> frozenset[str]:
        # Worked out once per value (it is immutable): whether a Battle Honour can still be
        # taken asks it for every unit and every decision a battle leaves
        return frozenset(i for c in self.cards for i in c.honour_ids(HonourCategory.CRUSADE_RELIC))


def start_order_of_battle(
    *, id: str, name: str, crusade_faction: str, book: Rulebook
) -> OrderOfBattle:
    """A new force: 5 Requisition points and a Supply Limit of 50."""
    faction = crusade_faction.strip().upper()
    if faction not in book.numbers.crusade_factions:
        raise RuleError(
            "crusade_faction_invalid",
            f"The Crusade Faction must be one of {', '.join(book.numbers.crusade_factions)}.",
            field="crusade_faction",
        )
    if not name.strip():
        raise RuleError("force_name_missing", "A Crusade force needs a name.", field="name")
    return OrderOfBattle(
        id=id,
        name=name.strip(),
        crusade_faction=faction,
        requisition_points=book.numbers.starting_requisition_points,
        supply_limit=book.numbers.starting_supply_limit,
    )


def unit_supply(card: CrusadeCard, book: Rulebook) -> int:
    """What a unit counts against the Supply Limit (and a battle size's limit): its Power
    Rating, or its points where the campaign musters by points (a unit whose points are
    not known yet counts 0 there: it cannot be mustered until they are, see ``require_points``)."""
    if book.numbers.muster_by == "points":
        return card.points or 0
    return card.power_rating


def supply_used(force: OrderOfBattle, book: Rulebook) -> int:
    return sum(unit_supply(c, book) for c in force.cards)


def supply_unit(book: Rulebook) -> str:
    """The Supply Limit's unit, as a sentence names it."""
    return "points" if book.numbers.muster_by == "points" else "Power"


def require_points(card: CrusadeCard, book: Rulebook, field: str = "points") -> None:
    """Where forces muster by points, every unit needs its points value (ruling 57)."""
    if book.numbers.muster_by == "points" and card.points is None:
        raise RuleError(
            "points_missing",
            f"This campaign musters by points: give {card.name} its points value.",
            field=field,
        )


def check_supply(force: OrderOfBattle, extra: int, book: Rulebook) -> None:
    used = supply_used(force, book)
    if used + extra > force.supply_limit:
        field = "points" if book.numbers.muster_by == "points" else "power_rating"
        raise RuleError(
            "supply_limit_exceeded",
            f"That would bring Supply Used to {used + extra} {supply_unit(book)}, over "
            f"the Supply Limit of {force.supply_limit}.",
            field=field,
        )


def add_unit(
    force: OrderOfBattle,
    card: CrusadeCard,
    book: Rulebook,
    *,
    mustered: frozenset[str] = frozenset(),
) -> OrderOfBattle:
    """Add a unit within the Supply Limit. Every unit shares the Crusade Faction keyword
    (or is UNALIGNED), and a unit once removed can never come back. A new card may join a
    split unit only while that unit's cards have not fought (``link_split_unit``)."""
    if card.id in force.removed_card_ids:
        raise RuleError(
            "unit_removed_for_good",
            f"{card.name} was removed from the Order of Battle and can never be added back.",
            field="card_id",
        )
    if any(c.id == card.id for c in force.cards):
        raise RuleError(
            "unit_already_added", f"{card.name} is already in the Order of Battle.", field="id"
        )
    check_joins(force, card, book)
    check_supply(force, unit_supply(card, book), book)
    if card.split_unit:
        _check_split_unit_open(force, card, (card.split_unit,), mustered)
    return replace(force, cards=(*force.cards, card))


def check_joins(force: OrderOfBattle, card: CrusadeCard, book: Rulebook) -> None:
    """What a unit must be to join this force, whatever else it holds: the Crusade Faction
    keyword (or UNALIGNED), and points when the force musters by points."""
    if not (card.has(force.crusade_faction) or card.has(book.numbers.unaligned_keyword)):
        raise RuleError(
            "crusade_faction_mismatch",
            f"{card.name} lacks the {force.crusade_faction} keyword (or UNALIGNED), so it "
            "cannot join this Crusade force.",
            field="keywords",
        )
    require_points(card, book)


def link_split_unit(
    force: OrderOfBattle,
    card_id: str,
    label: str | None,
    *,
    mustered: frozenset[str] = frozenset(),
) -> OrderOfBattle:
    """The card joins the split unit ``label`` ("" or None: it leaves its own). Which cards
    make up a split unit is part of the unit's details, fixed once it is added (its models):
    the link may change only while the card, and every card of the split unit it leaves or
    joins, has not fought a battle nor stands on the roster of a battle under way
    (``mustered``), as keywords may be corrected (docs/rulings.md, 50 and 40)."""
    card = force.card(card_id)
    wanted = (label or "").strip() or None
    if wanted == card.split_unit:
        return force
    labels = tuple(x for x in (card.split_unit, wanted) if x)
    _check_split_unit_open(force, card, labels, mustered)
    return force.with_card(replace(card, split_unit=wanted))


def split_unit_fixed(
    card: CrusadeCard,
    partners: Sequence[CrusadeCard],
    *,
    mustered: frozenset[str] = frozenset(),
) -> RuleError | None:
    """Why the card can no longer leave its split unit (nor join another), or None;
    ``partners`` holds at least the other cards of its split unit still on the Order of
    Battle."""
    labels = (card.split_unit,) if card.split_unit else ()
    try:
        _check_split_unit_open(partners, card, labels, mustered)
    except RuleError as fixed:
        return fixed
    return None


def _check_split_unit_open(
    cards: Sequence[CrusadeCard] | OrderOfBattle,
    card: CrusadeCard,
    labels: tuple[str, ...],
    mustered: frozenset[str],
) -> None:
    found = cards.cards if isinstance(cards, OrderOfBattle) else cards
    concerned = [card, *(c for c in found if c.id != card.id and c.split_unit in labels)]
    for other in concerned:
        part = "" if other.id == card.id else f", part of split unit {other.split_unit},"
        if other.tallies.battles_played:
            raise RuleError(
                "split_unit_fixed",
                f"{other.name}{part} has fought a battle: a unit's details, its models "
                "included, are fixed once it is added, so the cards of a split unit can no "
                "longer be linked or unlinked (Split Units).",
                field="split_unit",
            )
        if other.id in mustered:
            raise RuleError(
                "split_unit_fixed_during_battle",
                f"{other.name}{part} is on the roster of a battle under way: a split unit's "
                "cards cannot be linked or unlinked until that battle is resolved.",
                field="split_unit",
            )


def remove_unit(force: OrderOfBattle, card_id: str) -> OrderOfBattle:
    """Remove a unit for good; its Power no longer counts against the Supply Limit."""
    force.card(card_id)
    return replace(
        force,
        cards=tuple(c for c in force.cards if c.id != card_id),
        removed_card_ids=force.removed_card_ids | {card_id},
    )


def gain_requisition_points(force: OrderOfBattle, amount: int, book: Rulebook) -> OrderOfBattle:
    """Requisition points above the maximum (5) are lost."""
    points = min(book.numbers.max_requisition_points, force.requisition_points + amount)
    return replace(force, requisition_points=points)


def spend_requisition_points(force: OrderOfBattle, amount: int, what: str) -> OrderOfBattle:
    if amount > force.requisition_points:
        raise RuleError(
            "requisition_points_insufficient",
            f"{what} costs {amount} RP but {force.name} has only {force.requisition_points}.",
            field="requisition",
        )
    return replace(force, requisition_points=force.requisition_points - amount)


def record_battle_played(
    force: OrderOfBattle, *, won: bool, extra_requisition_points: int, book: Rulebook
) -> OrderOfBattle:
    """After every battle, win, lose or draw: +1 battle tally and +1 RP (more if a victor
    bonus says so); a victory is counted."""
    played = replace(
        force, battle_tally=force.battle_tally + 1, victories=force.victories + int(won)
    )
    gained = book.numbers.requisition_points_per_battle + extra_requisition_points
    return gain_requisition_points(played, gained, book)
