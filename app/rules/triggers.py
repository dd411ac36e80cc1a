"""A rule pack's triggers and thresholds (issue 38): counters that move with what happens in
every battle, outside the Agenda limit, and rewards for a counter reaching a value.

Run once at the end of a side's post-battle update, over values only: the force before the
battle and after it. Bounded by construction: each trigger moves its counter once per
holder, each threshold fires at most once per holder and battle, and a threshold's effect
that moves another counter may reach another threshold only for ``MAX_PASSES`` passes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from app.rules.cards import CrusadeCard, spellings
from app.rules.data import (
    AddXp,
    BonusTarget,
    ChangeCounter,
    ChangeRequisitionPoints,
    ChangeSupplyLimit,
    Counter,
    CounterThreshold,
    FreeRequisitions,
    GrantHonour,
    Quest,
    RemoveXp,
    RequisitionTarget,
    RollTable,
    Rulebook,
    ThresholdEffect,
    Trigger,
    TriggerEffect,
    TriggerWhen,
    VictorBonus,
)
from app.rules.dice import Dice
from app.rules.honours import grant_pack_honour
from app.rules.order_of_battle import OrderOfBattle
from app.rules.pack_effects import move_counters, roll_pack_table
from app.rules.ranks import Promotion, change_xp

MAX_PASSES = 5  # a threshold's effect may reach another threshold, this many times at most

Holder = str | None  # a card's id, or None for the force
Fired = tuple[Holder, CounterThreshold]


MAX_FIRES = 20  # a trigger's effects apply at most this many times per holder and battle


def moved_by_triggers(
    force: OrderOfBattle, book: Rulebook, *, roster: Sequence[str], facts: Facts
) -> OrderOfBattle:
    """Each trigger's counter moved by what the battle's report says (``facts``)."""
    return fire_triggers(force, book, roster=roster, facts=facts)[0]


def fire_triggers(
    force: OrderOfBattle,
    book: Rulebook,
    *,
    roster: Sequence[str],
    facts: Facts,
    dice: Dice | None = None,
) -> tuple[OrderOfBattle, list[Promotion]]:
    """Each trigger counts what the battle's report says (``facts``) for the side or for
    each unit of the roster: its counter moves by ``amount`` per time, and its ``effects``
    (issue 47) apply once per time, up to ``MAX_FIRES``, for that holder (a unit's XP,
    honour or roll goes to the unit). Returns the force and the promotions XP gave."""
    promotions: list[Promotion] = []
    if not book.triggers:
        return force, promotions
    counters = {c.id: c for c in book.counters}
    for trigger in book.triggers:
        holders: list[Holder] = [None] if trigger.scope == "force" else list(roster)
        for holder in holders:
            count = happened(trigger.when, trigger.keywords_any, holder, force, roster, facts)
            if trigger.counter is not None:
                force = _add(force, holder, counters[trigger.counter], trigger.amount * count)
            for _ in range(min(count, MAX_FIRES) if trigger.effects else 0):
                force = apply_effects(
                    force, holder, trigger.effects, trigger, counters, book, promotions, [], dice
                )
    return force, promotions


def battle_facts(
    *,
    won: bool,
    destroyed: Iterable[str],
    failed_tests: Iterable[str],
    enemy_losses: Sequence[frozenset[str]],
    kills: dict[str, int],
    marked: Iterable[str] = (),
    worn: Iterable[str] = (),
    kinds: dict[str, dict[str, int]] | None = None,
    completed: Iterable[str] = (),
    named_kills: dict[str, tuple[frozenset[str], ...]] | None = None,
    quarry_slain: Iterable[str] = (),
) -> Facts:
    return Facts(
        won,
        set(destroyed),
        set(failed_tests),
        enemy_losses,
        kills,
        set(marked),
        set(worn),
        kinds or {},
        set(completed),
        named_kills or {},
        set(quarry_slain),
    )


def happened(
    when: TriggerWhen,
    keywords_any: Sequence[str],
    holder: Holder,
    force: OrderOfBattle,
    roster: Sequence[str],
    facts: Facts,
) -> int:
    """How many times ``when`` happened in the battle to the side (``holder`` None) or to
    one unit of its roster."""
    if holder is None:
        return _side(when, keywords_any, force, roster, facts)
    return _unit(when, keywords_any, force.card(holder), facts)


@dataclass(frozen=True)
class Facts:
    """What a battle's report says, as triggers and quests read it: ``lost`` and
    ``failed`` are own units (card ids), ``enemy_losses`` the keywords of each enemy unit
    the opponent reported destroyed, ``kills`` each own unit's enemy units destroyed."""

    won: bool
    lost: set[str]
    failed: set[str]
    enemy_losses: Sequence[frozenset[str]]
    kills: dict[str, int]
    marked: set[str] = field(default_factory=set)  # Marked for Greatness
    worn: set[str] = field(default_factory=set)  # ended destroyed or below Half-strength
    kinds: dict[str, dict[str, int]] = field(default_factory=dict)  # kills: ranged, melee...
    # issue 47: units that gained XP from one of the army's chosen Agendas
    completed: set[str] = field(default_factory=set)
    # issue 47: the keywords of each enemy unit a unit's report names as destroyed by it
    # (a unit whose report names none is not here)
    named_kills: dict[str, tuple[frozenset[str], ...]] = field(default_factory=dict)
    # issue 47: units that destroyed the enemy unit they named as their quarry
    quarry_slain: set[str] = field(default_factory=set)


def _side(
    when: TriggerWhen,
    keywords_any: Sequence[str],
    force: OrderOfBattle,
    roster: Sequence[str],
    facts: Facts,
) -> int:
    """How many times it happened to the side (a force counter): ``keywords_any`` picks
    the own units counted, or for kills the enemy units counted."""
    mine = [u for u in roster if _fits(keywords_any, force.card(u).keywords)]
    match when:
        case "battle_played":
            return 1
        case "victory":
            return int(facts.won)
        case "own_unit_destroyed":
            return sum(1 for u in mine if u in facts.lost)
        case "out_of_action_failed":
            return sum(1 for u in mine if u in facts.failed)
        case "enemy_unit_destroyed":
            return sum(1 for loss in facts.enemy_losses if _fits(keywords_any, loss))
        case "marked_for_greatness":
            return sum(1 for u in mine if u in facts.marked)
        case "below_half_strength":
            return sum(1 for u in mine if u in facts.worn)
        case "agenda_completed":
            return sum(1 for u in mine if u in facts.completed)
        case "quarry_destroyed":
            return sum(1 for u in mine if u in facts.quarry_slain)
        case "ranged_kill" | "melee_kill" | "psychic_kill":
            kind = when.removesuffix("_kill")
            return sum(facts.kinds.get(u, {}).get(kind, 0) for u in mine)
    raise AssertionError(when)


def _unit(when: TriggerWhen, keywords_any: Sequence[str], card: CrusadeCard, facts: Facts) -> int:
    """How many times it happened to one unit of the roster (a card counter): only units
    with one of ``keywords_any`` count; its kills are its own enemy units destroyed. A
    unit whose report names the enemy units it destroyed (issue 47, ruling 86) counts, for
    ``enemy_unit_destroyed`` with ``keywords_any``, the named enemy units with one of them."""
    named = facts.named_kills.get(card.id)
    if when == "enemy_unit_destroyed" and keywords_any and named is not None:
        return sum(1 for loss in named if _fits(keywords_any, loss))
    if not _fits(keywords_any, card.keywords):
        return 0
    match when:
        case "battle_played":
            return 1
        case "victory":
            return int(facts.won)
        case "own_unit_destroyed":
            return int(card.id in facts.lost)
        case "out_of_action_failed":
            return int(card.id in facts.failed)
        case "enemy_unit_destroyed":
            return facts.kills.get(card.id, 0)
        case "marked_for_greatness":
            return int(card.id in facts.marked)
        case "below_half_strength":
            return int(card.id in facts.worn)
        case "agenda_completed":
            return int(card.id in facts.completed)
        case "quarry_destroyed":
            return int(card.id in facts.quarry_slain)
        case "ranged_kill" | "melee_kill" | "psychic_kill":
            return facts.kinds.get(card.id, {}).get(when.removesuffix("_kill"), 0)
    raise AssertionError(when)


def _fits(keywords_any: Sequence[str], keywords: Iterable[str]) -> bool:
    if not keywords_any:
        return True
    held = {k for word in keywords for k in spellings(word)}
    return any(not spellings(k).isdisjoint(held) for k in keywords_any)


def _add(force: OrderOfBattle, holder: Holder, rule: Counter, amount: int) -> OrderOfBattle:
    if amount == 0:
        return force
    return _set(force, holder, rule, _value(force, holder, rule) + amount)


def _value(force: OrderOfBattle, holder: Holder, rule: Counter) -> int:
    if holder is None:
        return force.counters.get(rule.id, rule.start)
    return force.card(holder).counters.get(rule.id, rule.start)


def _set(force: OrderOfBattle, holder: Holder, rule: Counter, value: int) -> OrderOfBattle:
    value = max(rule.min, min(rule.max, value))
    if holder is None:
        return replace(force, counters={**force.counters, rule.id: value})
    card = force.card(holder)
    return force.with_card(replace(card, counters={**card.counters, rule.id: value}))


# a free-requisition decision, the threshold or quest that owes it and its holder (the unit
# whose counter rose or whose quest ended; None: the force's) (issue 47)
Owed = tuple["CounterThreshold | Quest", VictorBonus, Holder]


def reached_thresholds(
    before: OrderOfBattle,
    force: OrderOfBattle,
    book: Rulebook,
    roster: Sequence[str],
    dice: Dice | None = None,
) -> tuple[OrderOfBattle, list[Promotion], list[Fired], list[Owed]]:
    """Each threshold whose counter rose to its ``at`` since ``before`` (the force before the
    battle, the purchase or the answer): its effects, then its ``reset_to``. Returns the
    force, the promotions its XP gave, what fired (holder, threshold) and the free
    requisitions owed as decisions (each with the threshold that owes it)."""
    if not book.thresholds:
        return force, [], [], []
    counters = {c.id: c for c in book.counters}
    fired: list[tuple[Holder, CounterThreshold]] = []
    promotions: list[Promotion] = []
    owed: list[Owed] = []
    for _ in range(MAX_PASSES):
        progressed = False
        for threshold in book.thresholds:
            rule = counters[threshold.counter]
            holders: list[Holder] = [None] if rule.scope == "force" else list(roster)
            for holder in holders:
                if (holder, threshold) in fired:
                    continue
                was, now = _value(before, holder, rule), _value(force, holder, rule)
                if not was < threshold.at <= now:
                    continue
                fired.append((holder, threshold))
                progressed = True
                force = apply_effects(
                    force,
                    holder,
                    threshold.effects,
                    threshold,
                    counters,
                    book,
                    promotions,
                    owed,
                    dice,
                )
                if threshold.reset_to is not None:
                    force = _set(force, holder, rule, threshold.reset_to)
        if not progressed:
            break
    return force, promotions, fired, owed


def changed_holders(before: OrderOfBattle, after: OrderOfBattle) -> list[str]:
    """The cards whose counters a command (a purchase, a decision's answer) changed: the
    only units whose card counters may have risen to a threshold."""
    was = {c.id: c.counters for c in before.cards}
    return [c.id for c in after.cards if c.id in was and c.counters != was[c.id]]


def apply_effects(
    force: OrderOfBattle,
    holder: Holder,
    effects: Sequence[ThresholdEffect | TriggerEffect],
    source: CounterThreshold | Quest | Trigger,
    counters: dict[str, Counter],
    book: Rulebook,
    promotions: list[Promotion],
    owed: list[Owed],
    dice: Dice | None = None,
) -> OrderOfBattle:
    """A threshold's effects, or a quest's reward or penalty, for ``holder``: counters, RP,
    Supply Limit and XP at once, free requisitions owed as decisions naming ``source``; a
    roll on a pack's table with ``dice`` (the battle's, entered or seeded)."""
    for effect in effects:
        match effect:
            case ChangeCounter(counter=counter_id, amount=amount):
                rule = counters[counter_id]
                force = _add(force, holder if rule.scope == "card" else None, rule, amount)
            case ChangeRequisitionPoints(amount=amount):
                points = max(0, force.requisition_points + amount)
                points = min(points, book.numbers.max_requisition_points)
                force = replace(force, requisition_points=points)
            case ChangeSupplyLimit(amount=amount):
                force = replace(force, supply_limit=max(0, force.supply_limit + amount))
            case AddXp(amount=amount) | RemoveXp(amount=amount):
                # issue 47: a failed quest's penalty may take XP away (never below 0, the
                # rank kept, as the remove_xp requisition effect)
                assert holder is not None  # checked on loading: a card counter's threshold
                card: CrusadeCard
                delta = amount if isinstance(effect, AddXp) else -amount
                card, gained = change_xp(force.card(holder), delta, book)
                force = force.with_card(card)
                promotions += gained
            case GrantHonour():
                assert holder is not None  # checked on loading, as add_xp
                force = _granted(force, holder, effect, book)
            case RollTable():
                assert holder is not None and dice is not None  # a unit's; dice given
                card, _gained = roll_pack_table(
                    force.card(holder), effect, book, dice, refuse=False
                )
                force = force.with_card(card)
            case FreeRequisitions():
                assert not isinstance(source, Trigger)  # checked on loading: never a trigger's
                owed.append((source, VictorBonus(effect=effect, summary=source.summary), holder))
    return force


def _granted(
    force: OrderOfBattle, holder: str, effect: GrantHonour, book: Rulebook
) -> OrderOfBattle:
    """The unit that earned it gains the pack's honour, unless the core's limits stop it
    (ruling 83: a battle's update is never refused for it); the entry's own ``counters``
    move as when a decision gives it (ruling 59)."""
    card, entry = grant_pack_honour(force.card(holder), effect, book, refuse=False)
    if entry is None:
        return force
    return move_counters(force.with_card(card), holder, entry.counters, book)


def reward_units(
    force: OrderOfBattle, holder: Holder, bonus: VictorBonus, book: Rulebook
) -> tuple[str, ...]:
    """The units that may take a threshold's or quest's free requisitions (issue 47): the
    holder alone when a unit earned them (its card counter rose, its quest ended), else the
    force's units; only those the reward's ``target`` allows and that one of its
    requisitions for a unit may target. Empty when no requisition it grants is a unit's."""
    from app.rules.requisitions import may_target  # requisitions -> quests -> triggers

    effect = bonus.effect
    if not isinstance(effect, FreeRequisitions):
        return ()
    for_units = [
        r for r in effect.requisitions if book.requisition(r).target == RequisitionTarget.UNIT
    ]
    if not for_units:
        return ()
    present = {c.id for c in force.cards}
    candidates = [holder] if holder is not None else [c.id for c in force.cards]
    return tuple(
        i
        for i in candidates
        if i in present
        and bonus_target_fits(effect.target, force.card(i))
        and any(may_target(force, book.requisition(r), i, book) for r in for_units)
    )


def bonus_target_fits(target: BonusTarget, card: CrusadeCard) -> bool:
    """Whether the unit is of the kind a pack reward's ``target`` names (a CHARACTER...)."""
    if target in (BonusTarget.CHARACTER, BonusTarget.NEW_CHARACTER):
        return bool(card.has("CHARACTER"))
    if target == BonusTarget.NON_CHARACTER_VEHICLE_MONSTER:
        return not any(card.has(k) for k in ("CHARACTER", "VEHICLE", "MONSTER"))
    return True
