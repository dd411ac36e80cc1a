"""Gaining Battle Honours: Battle Traits, Weapon Enhancements, Psychic Fortitudes and
Crusade Relics, rolled with injected dice or chosen by the player."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import Literal

from app.rules import eligibility, pack_tables
from app.rules.cards import BattleHonour, CrusadeCard, honour_crusade_points, never_gains_xp
from app.rules.data import (
    CrusadeRelic,
    DiceTable,
    GrantHonour,
    HonourCategory,
    PackHonour,
    Rulebook,
    TableEntry,
    WeaponType,
    listing,
)
from app.rules.dice import Dice, DieRoll
from app.rules.errors import RuleError
from app.rules.ranks import at_least


@dataclass(frozen=True)
class WeaponChoice:
    """The model and weapon a Weapon Enhancement (or Artificer Weapon) is given to.
    ``is_relic`` marks a Codex Relic weapon, which the card cannot know about by itself."""

    model: str
    weapon: str
    weapon_type: Literal["ranged", "melee", "both"] = "ranged"
    is_relic: bool = False


@dataclass(frozen=True)
class HonourRequest:
    """What the player asks for: a category and either chosen entries or a roll."""

    category: HonourCategory
    choice: tuple[str, ...] = ()  # chosen entry ids; empty means roll
    weapon: WeaponChoice | None = None
    table: str | None = None  # a rule pack's own table to roll (or choose) on, issue 38


def roll_unique(
    table: DiceTable, taken: Collection[str], dice: Dice, purpose: str, sides: int | None = None
) -> tuple[TableEntry, tuple[DieRoll, ...]]:
    """Roll on ``table`` until a result not already held comes up (the rules' re-roll of
    duplicates). Every die thrown is returned."""
    sides = sides or table.sides
    open_entries = [e for e in table.entries if e.id not in taken and e.low <= sides]
    if not open_entries:
        raise RuleError(
            "table_exhausted", f"The unit already has every result {purpose} could give."
        )
    rolls: list[DieRoll] = []
    while True:
        rolled = dice.roll(sides, purpose)
        rolls.append(rolled)
        entry = table.entry_for(rolled.value)
        if entry.id not in taken:
            return entry, tuple(rolls)


def check_can_gain_honour(card: CrusadeCard, book: Rulebook) -> None:
    if never_gains_xp(card, book):
        raise RuleError(
            "unit_never_gains_experience",
            f"{card.name} never gains experience, so it can never gain Battle Honours.",
        )
    if len(card.honours) >= book.numbers.max_battle_honours:
        raise RuleError(
            "battle_honours_full",
            f"{card.name} already has {book.numbers.max_battle_honours} Battle Honours, "
            "the most a unit can have.",
        )


def open_categories(
    card: CrusadeCard,
    categories: Collection[HonourCategory],
    book: Rulebook,
    *,
    relics_taken: Collection[str] = (),
    requisition_points: int | None = None,
) -> tuple[HonourCategory, ...]:
    """Of ``categories``, those in which ``card`` can gain a Battle Honour now (an answer
    exists that ``gain_battle_honour`` accepts): none while the unit cannot gain honours at
    all (it never gains experience, or it holds the most a unit may). A Crusade Relic is
    open while one relic is left that the unit may bear, that is not in its Order of Battle
    (``relics_taken``) and that the force can pay for (``requisition_points``)."""
    try:
        check_can_gain_honour(card, book)
    except RuleError:
        return ()
    return tuple(
        c for c in categories if _category_open(card, c, book, relics_taken, requisition_points)
    )


def relics_open(
    card: CrusadeCard,
    book: Rulebook,
    relics_taken: Collection[str] = (),
    requisition_points: int | None = None,
) -> tuple[CrusadeRelic, ...]:
    """The Crusade Relics ``card`` may be given now: each that ``check_crusade_relic``
    accepts (not withdrawn, a bearer it allows, the rank it needs, not already in the Order
    of Battle) and, for one that costs Requisition points, that the force can pay for."""
    found = []
    for relic in book.honours.crusade_relics:
        try:
            check_crusade_relic(card, relic.id, book, relics_taken)
        except RuleError:
            continue
        if relic.selects_weapon and wargear_weapons(card) and not weapons_to_enhance(card):
            continue  # every weapon its wargear lists is enhanced or a Relic already
        cost = book.honours.relic_categories[relic.category].requisition_points
        if requisition_points is None or cost <= requisition_points:
            found.append(relic)
    return tuple(found)


def _category_open(
    card: CrusadeCard,
    category: HonourCategory,
    book: Rulebook,
    relics_taken: Collection[str],
    requisition_points: int | None,
) -> bool:
    if category == HonourCategory.CRUSADE_RELIC:  # a pack's relic may name any bearer
        return bool(relics_open(card, book, relics_taken, requisition_points))
    if category == HonourCategory.PSYCHIC_FORTITUDE and not card.has("PSYKER"):
        return False
    held = card.honour_ids(category)
    if any(e.id not in held for e in book.honours.pack_entries(category)):
        return True  # a rule pack's own entry of this kind is still open
    if category == HonourCategory.BATTLE_TRAIT:
        table = book.honours.battle_traits.get(card.unit_type)
        return table is not None and _any_left(table, card.honour_ids(category))
    if category == HonourCategory.PSYCHIC_FORTITUDE:
        return card.has("PSYKER") and _any_left(
            book.honours.psychic_fortitudes, card.honour_ids(category)
        )
    # a Weapon Enhancement: a weapon of its wargear not yet enhanced (any, where it lists none)
    return not wargear_weapons(card) or bool(weapons_to_enhance(card))


_COUNT = re.compile(r"^\d+\s*x\s+", re.IGNORECASE)


def weapon_name(text: str) -> str:
    """A weapon's name as the wargear lists it: spaces collapsed, its count left off."""
    return _COUNT.sub("", " ".join(text.split())).strip()


def wargear_weapons(card: CrusadeCard) -> tuple[str, ...]:
    """Every weapon the card's wargear lists (each line or comma-separated item, its count
    left off), once each; empty when it lists none (ruling 80)."""
    found: dict[str, str] = {}
    for item in re.split(r"[\n;,]", card.wargear):
        name = weapon_name(item)
        if name and len(name) <= 120:
            found.setdefault(name.casefold(), name)
    return tuple(found.values())


def weapons_to_enhance(card: CrusadeCard) -> tuple[str, ...]:
    """The weapons of the card's wargear that a Weapon Enhancement or a weapon-upgrading
    relic may be given: not already enhanced, not a Relic (ruling 78)."""
    closed = card.enhanced_weapons | card.relic_weapons
    return tuple(w for w in wargear_weapons(card) if w.casefold() not in closed)


def _any_left(table: DiceTable, taken: Collection[str]) -> bool:
    return any(e.id not in taken and e.low <= table.sides for e in table.entries)


def gain_battle_honour(
    card: CrusadeCard,
    request: HonourRequest,
    book: Rulebook,
    dice: Dice,
    *,
    relics_in_order_of_battle: Collection[str] = (),
) -> tuple[CrusadeCard, BattleHonour]:
    """Give ``card`` one Battle Honour of the requested category."""
    check_can_gain_honour(card, book)
    if request.category == HonourCategory.BATTLE_TRAIT:
        honour = _battle_trait(card, request, book, dice)
    elif request.category == HonourCategory.PSYCHIC_FORTITUDE:
        honour = _psychic_fortitude(card, request, book, dice)
    elif request.category == HonourCategory.WEAPON_ENHANCEMENT:
        honour = _weapon_enhancement(card, request, book, dice)
    else:
        honour = _crusade_relic(card, request, book, relics_in_order_of_battle)
    return replace(card, honours=(*card.honours, honour)), honour


def _single_choice(request: HonourRequest, what: str) -> str:
    if len(request.choice) != 1:
        raise RuleError("honour_choice_invalid", f"Choose exactly one {what}.", field="choice")
    return request.choice[0]


def _pick_or_roll(
    card: CrusadeCard, request: HonourRequest, table: DiceTable, dice: Dice, what: str
) -> tuple[TableEntry, tuple[DieRoll, ...]]:
    taken = card.honour_ids(request.category)
    if not request.choice:
        return roll_unique(table, taken, dice, what)
    entry_id = _single_choice(request, what)
    entry = _entry(table, entry_id, what)
    if entry.id in taken:
        raise RuleError(
            "honour_duplicate",
            f"{card.name} already has the {what} {entry.name}; a unit cannot have it twice.",
            field="choice",
        )
    return entry, ()


def _entry(table: DiceTable, entry_id: str, what: str) -> TableEntry:
    try:
        return table.entry(entry_id)
    except KeyError:
        raise RuleError(
            "honour_unknown",
            f"'{entry_id}' is not on this unit's {what} table; choose one of: {table.choices()}.",
            field="choice",
        ) from None


def _pack_choice(
    card: CrusadeCard, request: HonourRequest, book: Rulebook, what: str
) -> PackHonour | None:
    """A rule pack's entry, when that is what was chosen (never rolled: a pack's entries
    are a table of their own, chosen in place of a roll on the core table)."""
    if len(request.choice) != 1:
        return None
    entry = book.honours.pack_entry(request.category, request.choice[0])
    if entry is None:
        return None
    if book.rolled_only(request.category.value, entry.id):
        raise RuleError(
            "pack_entry_rolled",
            f"{entry.name} is on a rule pack's rolled table: roll on the table for it "
            "(give 'table'), it is never chosen.",
            field="choice",
        )
    if entry.id in card.honour_ids(request.category):
        raise RuleError(
            "honour_duplicate",
            f"{card.name} already has the {what} {entry.name}; a unit cannot have it twice.",
            field="choice",
        )
    eligibility.require(entry.name, entry.eligible, card, book, "honour_not_eligible")
    return entry


def _from_pack_table(
    card: CrusadeCard,
    request: HonourRequest,
    book: Rulebook,
    dice: Dice,
    what: str,
    fits: Callable[[PackHonour], bool] = lambda _entry: True,
) -> tuple[PackHonour, tuple[DieRoll, ...]]:
    """A roll (or, where the pack allows, a choice) on a rule pack's own table (issue 38):
    a result the unit holds, may not take (``eligible``) or that does not ``fits`` is
    rolled again."""
    assert request.table is not None
    table = pack_tables.table_for(book, request.table, request.category.value, card)
    held = card.honour_ids(request.category)

    def usable(entry_id: str) -> bool:
        entry = book.honours.pack_entry(request.category, entry_id)
        return (
            entry is not None
            and (not entry.eligible or eligibility.meets(entry.eligible, card, {}, book))
            and fits(entry)
        )

    if request.choice:
        entry_id = pack_tables.choose_on(table, _single_choice(request, what), held, usable)
        rolls: tuple[DieRoll, ...] = ()
    else:
        entry_id, rolls = pack_tables.roll_on(table, held, usable, dice, f"a {what}")
    found = book.honours.pack_entry(request.category, entry_id)
    assert found is not None  # the table's entries are checked on loading
    return found, rolls


def _battle_trait(
    card: CrusadeCard, request: HonourRequest, book: Rulebook, dice: Dice
) -> BattleHonour:
    if request.table is not None:
        found, thrown = _from_pack_table(card, request, book, dice, "Battle Trait")
        points = honour_crusade_points(card, book)
        return BattleHonour(request.category, (found.id,), points, dice=thrown)
    if (chosen := _pack_choice(card, request, book, "Battle Trait")) is not None:
        return BattleHonour(request.category, (chosen.id,), honour_crusade_points(card, book))
    table = book.honours.battle_traits[card.unit_type]
    entry, rolls = _pick_or_roll(card, request, table, dice, "Battle Trait")
    return BattleHonour(
        request.category, (entry.id,), honour_crusade_points(card, book), dice=rolls
    )


def _psychic_fortitude(
    card: CrusadeCard, request: HonourRequest, book: Rulebook, dice: Dice
) -> BattleHonour:
    if not card.has("PSYKER"):
        raise RuleError(
            "psychic_fortitude_requires_psyker",
            f"Only PSYKER units can gain Psychic Fortitudes, and {card.name} is not a PSYKER.",
            field="category",
        )
    if request.table is not None:
        found, thrown = _from_pack_table(card, request, book, dice, "Psychic Fortitude")
        points = honour_crusade_points(card, book)
        return BattleHonour(request.category, (found.id,), points, dice=thrown)
    if (chosen := _pack_choice(card, request, book, "Psychic Fortitude")) is not None:
        return BattleHonour(request.category, (chosen.id,), honour_crusade_points(card, book))
    table = book.honours.psychic_fortitudes
    entry, rolls = _pick_or_roll(card, request, table, dice, "Psychic Fortitude")
    return BattleHonour(
        request.category, (entry.id,), honour_crusade_points(card, book), dice=rolls
    )


def _check_weapon(card: CrusadeCard, weapon: WeaponChoice | None, what: str) -> WeaponChoice:
    if weapon is None or not weapon.weapon.strip() or not weapon.model.strip():
        raise RuleError(
            "weapon_required", f"{what} needs a model and one of its weapons.", field="weapon"
        )
    names = {weapon.weapon.casefold(), weapon_name(weapon.weapon).casefold()}
    if weapon.is_relic or names & card.relic_weapons:
        raise RuleError(
            "weapon_is_relic",
            f"{weapon.weapon} is a Relic; {what} cannot be given to a Relic weapon.",
            field="weapon",
        )
    if names & card.enhanced_weapons:
        raise RuleError(
            "weapon_already_enhanced",
            f"{weapon.weapon} is already enhanced or a Crusade Relic; pick another weapon.",
            field="weapon",
        )
    listed = {w.casefold(): w for w in wargear_weapons(card)}
    if listed and (named := weapon_name(weapon.weapon).casefold()) in listed:
        # kept as the wargear spells it, so the offer leaves it out once it is enhanced
        return replace(weapon, weapon=listed[named])
    if listed:
        # ruling 80: where the card lists its wargear, the weapon is one of those it lists
        open_ones = weapons_to_enhance(card)
        left = ", ".join(open_ones[:10]) + (", …" if open_ones[10:] else "") or "none is left"
        raise RuleError(
            "weapon_not_in_wargear",
            f"{card.name}'s wargear does not list {weapon.weapon}: name a weapon it lists "
            f"that is not enhanced nor a Relic ({left}).",
            field="weapon",
        )
    return weapon


def weapon_enhancements_to_choose(card: CrusadeCard) -> int:
    """How many different enhancements the weapon gains: one for a TITANIC, CHARACTER,
    VEHICLE or MONSTER unit, two for any other unit."""
    return 1 if any(card.has(k) for k in ("TITANIC", "CHARACTER", "VEHICLE", "MONSTER")) else 2


def _weapon_enhancement(
    card: CrusadeCard, request: HonourRequest, book: Rulebook, dice: Dice
) -> BattleHonour:
    weapon = _check_weapon(card, request.weapon, "A Weapon Enhancement")
    if card.champion and weapon.model.casefold() != card.champion.casefold():
        raise RuleError(
            "weapon_enhancement_champion_only",
            f"{card.name} has a champion ({card.champion}); the enhanced weapon must be theirs.",
            field="weapon",
        )
    if request.table is not None:

        def fits(entry: PackHonour) -> bool:
            kind = getattr(entry, "weapon_type", "any")
            return kind == "any" or weapon.weapon_type in (kind, "both")

        found, thrown = _from_pack_table(card, request, book, dice, "Weapon Enhancement", fits)
        return BattleHonour(
            request.category,
            (found.id,),
            honour_crusade_points(card, book),
            weapon=weapon.weapon,
            model=weapon.model,
            dice=thrown,
        )
    if (chosen := _pack_enhancement(card, request, weapon, book)) is not None:
        return BattleHonour(
            request.category,
            (chosen.id,),
            honour_crusade_points(card, book),
            weapon=weapon.weapon,
            model=weapon.model,
        )
    # A weapon with both a ranged and a melee profile uses the melee table.
    kind = WeaponType.RANGED if weapon.weapon_type == "ranged" else WeaponType.MELEE
    table = book.honours.weapon_enhancements[kind]
    if card.has("TITANIC"):
        entries, rolls = _enhance_titanic(request, table, dice)
    elif card.has("CHARACTER") or card.has("VEHICLE") or card.has("MONSTER"):
        entries, rolls = _enhance_elite(request, table, dice)
    else:
        entries, rolls = _enhance_other(request, table, dice)
    return BattleHonour(
        request.category,
        tuple(e.id for e in entries),
        honour_crusade_points(card, book),
        weapon=weapon.weapon,
        model=weapon.model,
        dice=rolls,
    )


def _pack_enhancement(
    card: CrusadeCard, request: HonourRequest, weapon: WeaponChoice, book: Rulebook
) -> PackHonour | None:
    """A rule pack's Weapon Enhancement, when one was chosen: alone, for a weapon of its
    kind, by a unit that meets its expression (ruling 60)."""
    found = [book.honours.pack_entry(request.category, c) for c in request.choice]
    entry = next((e for e in found if e is not None), None)
    if entry is None:
        return None
    if book.rolled_only(request.category.value, entry.id):
        raise RuleError(
            "pack_entry_rolled",
            f"{entry.name} is on a rule pack's rolled table: roll on the table for it "
            "(give 'table'), it is never chosen.",
            field="choice",
        )
    if len(request.choice) != 1:
        raise RuleError(
            "weapon_enhancement_pack_alone",
            f"{entry.name} comes from a rule pack: choose it alone, without another enhancement.",
            field="choice",
        )
    kind = getattr(entry, "weapon_type", "any")
    if kind != "any" and weapon.weapon_type not in (kind, "both"):
        raise RuleError(
            "weapon_enhancement_wrong_weapon",
            f"{entry.name} is for a {kind} weapon; {weapon.weapon} is {weapon.weapon_type}.",
            field="weapon",
        )
    eligibility.require(entry.name, entry.eligible, card, book, "honour_not_eligible")
    return entry


def _enhance_titanic(
    request: HonourRequest, table: DiceTable, dice: Dice
) -> tuple[list[TableEntry], tuple[DieRoll, ...]]:
    if not request.choice:
        rolled = dice.roll(3, "a TITANIC Weapon Enhancement")
        return [table.entry_for(rolled.value)], (rolled,)
    entry = _entry(table, _single_choice(request, "Weapon Enhancement"), "Weapon Enhancement")
    if entry.low > 3:
        raise RuleError(
            "weapon_enhancement_titanic_limit",
            "A TITANIC model's weapon can only be given results 1-3 of the enhancement table.",
            field="choice",
        )
    return [entry], ()


def _enhance_elite(
    request: HonourRequest, table: DiceTable, dice: Dice
) -> tuple[list[TableEntry], tuple[DieRoll, ...]]:
    if not request.choice:
        rolled = dice.roll(6, "a Weapon Enhancement")
        return [table.entry_for(rolled.value)], (rolled,)
    entry_id = _single_choice(request, "Weapon Enhancement")
    return [_entry(table, entry_id, "Weapon Enhancement")], ()


def _enhance_other(
    request: HonourRequest, table: DiceTable, dice: Dice
) -> tuple[list[TableEntry], tuple[DieRoll, ...]]:
    """Any other unit gains two different enhancements: a D6 and a D3 (re-rolled together
    on a double), or two chosen of which one is from results 1-3."""
    if not request.choice:
        rolls: list[DieRoll] = []
        while True:
            d6, d3 = (
                dice.roll(6, "a Weapon Enhancement (D6)"),
                dice.roll(3, "a Weapon Enhancement (D3)"),
            )
            rolls += [d6, d3]
            if d6.value != d3.value:
                return [table.entry_for(d6.value), table.entry_for(d3.value)], tuple(rolls)
    if len(set(request.choice)) != 2:
        raise RuleError(
            "honour_choice_invalid",
            "This unit's weapon gains two different Weapon Enhancements; choose two.",
            field="choice",
        )
    entries = [_entry(table, i, "Weapon Enhancement") for i in request.choice]
    if min(e.low for e in entries) > 3:
        raise RuleError(
            "weapon_enhancement_choice_limit",
            "When choosing two Weapon Enhancements, one must be result 1, 2 or 3.",
            field="choice",
        )
    return entries, ()


def _crusade_relic(
    card: CrusadeCard,
    request: HonourRequest,
    book: Rulebook,
    relics_in_order_of_battle: Collection[str],
) -> BattleHonour:
    relic_id = _single_choice(request, "Crusade Relic")
    relic = check_crusade_relic(card, relic_id, book, relics_in_order_of_battle)
    rule = book.honours.relic_categories[relic.category]
    weapon = _check_weapon(card, request.weapon, relic.name) if relic.selects_weapon else None
    return BattleHonour(
        request.category,
        (relic.id,),
        honour_crusade_points(card, book) + rule.extra_crusade_points,
        weapon=weapon.weapon if weapon else None,
        model=weapon.model if weapon else None,
    )


def check_crusade_relic(
    card: CrusadeCard, relic_id: str, book: Rulebook, relics_in_order_of_battle: Collection[str]
) -> CrusadeRelic:
    """Refuse a Crusade Relic the card may not have; return it otherwise."""
    try:
        relic = book.honours.relic(relic_id)
    except KeyError:
        raise RuleError(
            "honour_unknown",
            f"'{relic_id}' is not a Crusade Relic; choose one of: "
            f"{listing(book.honours.crusade_relics)}.",
            field="choice",
        ) from None
    if relic.withdrawn_by:
        raise RuleError(
            "crusade_relic_withdrawn",
            f"{relic.name} is not given in this campaign: the rule pack "
            f"'{relic.withdrawn_by}' withdraws it.",
            field="choice",
        )
    if relic.bearer == "character" and not card.has("CHARACTER"):
        raise RuleError(
            "crusade_relic_requires_character",
            f"Only CHARACTER models can gain Crusade Relics, and {card.name} is not a CHARACTER.",
            field="category",
        )
    if relic.keywords_any and not any(card.has(k) for k in relic.keywords_any):
        raise RuleError(
            "crusade_relic_keywords",
            f"{relic.name} is for {' or '.join(relic.keywords_any)} models only.",
            field="choice",
        )
    eligibility.require(relic.name, relic.eligible, card, book, "crusade_relic_not_eligible")
    min_rank = book.honours.relic_categories[relic.category].min_rank
    if not at_least(card, min_rank, book):
        raise RuleError(
            "crusade_relic_rank_too_low",
            f"{relic.name} is a {relic.category.value.title()} Relic: the bearer must be "
            f"{book.rank(min_rank).name} or higher.",
            field="choice",
        )
    if relic.id in relics_in_order_of_battle:
        raise RuleError(
            "crusade_relic_taken",
            f"{relic.name} is already in this Order of Battle; each Crusade Relic is unique.",
            field="choice",
        )
    return relic


def grant_pack_honour(
    card: CrusadeCard, effect: GrantHonour, book: Rulebook, *, refuse: bool
) -> tuple[CrusadeCard, PackHonour | None]:
    """A threshold's, quest's or requisition's ``grant_honour`` (issue 47): the unit gains
    the pack's entry it names as a Battle Honour, worth the Crusade points any honour is,
    and loses ``replaces_scar`` if it holds it. The core's limits hold (ruling 83): the most
    Battle Honours a unit may have, a unit that never gains them, an entry held already,
    its ``eligible`` and a Psychic Fortitude's PSYKER. Where it cannot take it, a purchase
    is refused (``refuse``); a battle's threshold or quest gives nothing (None)."""
    category = HonourCategory(effect.category)
    entry = book.honours.pack_entry(category, effect.entry)
    assert entry is not None  # checked on loading: the pack's own entry
    try:
        check_can_gain_honour(card, book)
        if category == HonourCategory.PSYCHIC_FORTITUDE and not card.has("PSYKER"):
            raise RuleError(
                "psychic_fortitude_requires_psyker",
                f"Only PSYKER units can gain Psychic Fortitudes, and {card.name} is not a PSYKER.",
            )
        if entry.id in card.honour_ids(category):
            raise RuleError(
                "honour_duplicate",
                f"{card.name} already has {entry.name}; a unit cannot have it twice.",
            )
        eligibility.require(entry.name, entry.eligible, card, book, "honour_not_eligible")
    except RuleError:
        if refuse:
            raise
        return card, None
    honour = BattleHonour(category, (entry.id,), honour_crusade_points(card, book))
    scars = card.scars
    if effect.replaces_scar is not None:
        scars = tuple(s for s in scars if s.entry_id != effect.replaces_scar)
    return replace(card, honours=(*card.honours, honour), scars=scars), entry
