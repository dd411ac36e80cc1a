"""Requisitions: when each may be bought, on which unit, and what it changes."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from app.rules import eligibility, quests
from app.rules.cards import CrusadeCard, Upgrade, new_card, normalise_keywords, spellings
from app.rules.data import (
    AddUnit,
    AddUpgrade,
    AddXp,
    ChangeCounter,
    ChangeRequisitionPoints,
    ChangeSupplyLimit,
    CharacterStratagem,
    Counter,
    Effect,
    GrantHonour,
    RemoveBattleScar,
    RemoveUnit,
    RemoveXp,
    Requisition,
    RequisitionTarget,
    RequisitionTiming,
    RollTable,
    Rulebook,
    SetChoice,
    StartQuest,
    Transform,
)
from app.rules.dice import Dice, EnteredDice, SeededDice
from app.rules.errors import RuleError
from app.rules.honours import grant_pack_honour
from app.rules.order_of_battle import (
    OrderOfBattle,
    add_unit,
    check_supply,
    remove_unit,
    require_points,
    spend_requisition_points,
    unit_supply,
)
from app.rules.out_of_action import remove_battle_scar
from app.rules.pack_effects import move_counters, roll_pack_table, rolled_counters
from app.rules.ranks import Promotion, change_xp, rank_index


@dataclass(frozen=True)
class PurchaseWindow:
    """The moment of a purchase. Requisitions are never bought during a battle; some only
    when a card is added, or when a CHARACTER has just gained a rank."""

    during_battle: bool = False
    card_added: str | None = None
    rank_gained: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class RequisitionOrder:
    """A purchase request; only the fields the requisition uses are read."""

    requisition: str
    card_id: str | None = None
    new_power_rating: int | None = None
    new_points: int | None = None  # Fresh Recruits where forces muster by points
    wargear: str | None = None
    replaced_weapons: tuple[str, ...] = ()
    scar: str | None = None
    psychic_powers: str | None = None
    stratagem: str | None = None
    stratagem_cp: int | None = None
    warlord_trait: str | None = None
    relic: str | None = None
    model: str | None = None
    first_founding: bool = False
    replaces_weapon: str | None = None
    # A rule pack's add_unit with chosen: the unit the buyer names (name, power_rating,
    # points, keywords), as plain data (kept with the purchase).
    new_unit: Mapping[str, Any] | None = None
    # A rule pack's roll_table (issue 47): the dice rolled at the table, in order; none:
    # the app's dice from ``seed`` (the edge draws it)
    dice: tuple[int, ...] = ()
    seed: int | None = None


@dataclass(frozen=True)
class RequisitionPurchase:
    requisition: str
    card_id: str | None
    requisition_points_spent: int
    crusade_points_gained: int
    # Ranks a unit reached through it (a rule pack's add_xp): each owes a Battle Honour.
    promotions: tuple[Promotion, ...] = ()


def knight_character_stratagem(
    keywords: Iterable[str], book: Rulebook
) -> CharacterStratagem | None:
    """The Stratagem that makes a knight with these keywords a CHARACTER in a Crusade force
    (Knight Baron for IMPERIAL KNIGHTS, Tyrannical Court for CHAOS KNIGHTS: the first of its
    faction whose cost the rules give), or None for any other unit. A roster's Knight Lance
    or Traitoris Lance option means this (Knight Characters, docs/rulings.md 31)."""
    words = {" ".join(k.split()).upper() for k in keywords}
    requisition = book.requisition("specialist_reinforcements")
    for stratagem in requisition.character_stratagem_factions:
        if stratagem.cp is not None and not spellings(stratagem.keyword).isdisjoint(words):
            return stratagem
    return None


def purchase_requisition(
    force: OrderOfBattle,
    order: RequisitionOrder,
    window: PurchaseWindow,
    book: Rulebook,
    *,
    free: bool = False,
    ignore_timing: bool = False,
) -> tuple[OrderOfBattle, RequisitionPurchase]:
    """Check timing, target and RP, then apply the requisition. ``free`` and
    ``ignore_timing`` are for victor bonuses that grant a requisition."""
    requisition = _requisition(order.requisition, book)
    if window.during_battle:
        raise RuleError(
            "requisition_during_battle",
            "Requisitions can never be bought during a battle.",
            field="requisition",
        )
    if requisition.only_as_bonus and not free:
        raise RuleError(
            "requisition_only_as_bonus",
            f"{requisition.name} is never bought: only a victor bonus, or a rule pack's "
            "threshold or quest, grants it.",
            field="requisition",
        )
    if requisition.withdrawn_by and not free:
        raise RuleError(
            "requisition_withdrawn",
            f"{requisition.name} is not bought in this campaign: the rule pack "
            f"'{requisition.withdrawn_by}' withdraws it (a victor bonus may still grant it).",
            field="requisition",
        )
    card = _target(force, requisition, order, book)
    if not ignore_timing:
        _check_timing(requisition, card, window)
    cost = 0 if free else cost_of(requisition, card)
    paid = spend_requisition_points(force, cost, requisition.name)
    before = card.crusade_points if card else 0
    apply = _apply_effects if requisition.effects else APPLY[requisition.id]
    changed = apply(paid, card, order, book)
    gone = card is None or card.id in changed.removed_card_ids  # a pack's remove_unit
    after = changed.card(card.id).crusade_points if card and not gone else before
    promotions = _promotions(force, changed, book)
    return changed, RequisitionPurchase(
        requisition.id, order.card_id, cost, after - before, promotions
    )


def cost_of(requisition: Requisition, card: CrusadeCard | None) -> int:
    """Its RP cost for ``card`` (a rule pack's cost per Power Rating adds to its own)."""
    per = requisition.cost_per_power
    if per is None or card is None:
        return requisition.cost_rp
    return requisition.cost_rp + per.extra(card.power_rating)


def _promotions(
    before: OrderOfBattle, after: OrderOfBattle, book: Rulebook
) -> tuple[Promotion, ...]:
    """Each rank a unit of the force reached between ``before`` and ``after``."""
    old = {c.id: rank_index(c.rank, book) for c in before.cards}
    return tuple(
        Promotion(card.id, rank.id)
        for card in after.cards
        if card.id in old
        for rank in book.ranks[old[card.id] + 1 : rank_index(card.rank, book) + 1]
    )


def _requisition(requisition_id: str, book: Rulebook) -> Requisition:
    try:
        return book.requisition(requisition_id)
    except KeyError:
        raise RuleError(
            "requisition_unknown", f"'{requisition_id}' is not a Requisition.", field="requisition"
        ) from None


def _target(
    force: OrderOfBattle, requisition: Requisition, order: RequisitionOrder, book: Rulebook
) -> CrusadeCard | None:
    if requisition.target == RequisitionTarget.FORCE:
        _check_eligible(requisition, None, force, book)
        return None
    if order.card_id is None:
        raise RuleError(
            "requisition_target_missing",
            f"{requisition.name} needs a unit from the Order of Battle.",
            field="card_id",
        )
    card = force.card(order.card_id)
    trait = (
        book.pack_warlord_trait(order.warlord_trait) if requisition.id == "warlord_trait" else None
    )
    # a rule pack's Warlord Trait whose bearer need not be a CHARACTER (issue 38)
    anyone = trait is not None and trait.bearer == "any_unit"
    missing = [
        k
        for k in requisition.required_keywords
        if not card.has(k) and not (anyone and k == "CHARACTER")
    ]
    banned = [k for k in requisition.excluded_keywords if card.has(k)]
    if missing or banned:
        rule = (
            f"is only for {' '.join(requisition.required_keywords)} units"
            if missing
            else f"cannot target {', '.join(requisition.excluded_keywords)} units"
        )
        raise RuleError(
            "requisition_target_invalid", f"{requisition.name} {rule}.", field="card_id"
        )
    if requisition.max_rank and rank_index(card.rank, book) > rank_index(
        requisition.max_rank, book
    ):
        raise RuleError(
            "requisition_rank_too_high",
            f"{requisition.name} cannot target a unit above {book.rank(requisition.max_rank).name}"
            f"; {card.name} is {book.rank(card.rank).name}.",
            field="card_id",
        )
    _check_eligible(requisition, card, force, book)
    if requisition.needs_battle_scar and not card.scars:
        raise RuleError(
            "requisition_target_invalid",
            f"{requisition.name} needs a unit with a Battle Scar; {card.name} has none.",
            field="card_id",
        )
    return card


def may_target(
    force: OrderOfBattle, requisition: Requisition, card_id: str, book: Rulebook
) -> bool:
    """Whether ``requisition`` (one for a unit) may be used on that unit as it stands: its
    keywords, rank and ``eligible`` (what a purchase checks before anything else)."""
    try:
        _target(force, requisition, RequisitionOrder(requisition.id, card_id=card_id), book)
    except RuleError:
        return False
    return True


def _check_eligible(
    requisition: Requisition, card: CrusadeCard | None, force: OrderOfBattle, book: Rulebook
) -> None:
    """A rule pack's requisition: who may buy it, as its expression says."""
    if requisition.eligible and not eligibility.meets(
        requisition.eligible, card, force.counters, book
    ):
        who = card.name if card else force.name
        raise RuleError(
            "requisition_not_eligible",
            f"{requisition.name} is only for {'units' if card else 'forces'} that meet: "
            f"{requisition.eligible}; {who} does not.",
            field="card_id" if card else "requisition",
        )


def _check_timing(
    requisition: Requisition, card: CrusadeCard | None, window: PurchaseWindow
) -> None:
    timing = requisition.timing
    if timing in (RequisitionTiming.ANY_TIME, RequisitionTiming.BEFORE_OR_AFTER_BATTLE):
        return
    card_id = card.id if card else None
    allowed = {window.card_added}
    if timing == RequisitionTiming.CARD_ADDED_OR_CHARACTER_RANK:
        allowed |= window.rank_gained
    if card_id not in allowed:
        when = (
            "when its unit is added to the Order of Battle"
            if timing == RequisitionTiming.CARD_ADDED
            else "when its CHARACTER is added or has just gained a rank"
        )
        raise RuleError(
            "requisition_timing",
            f"{requisition.name} can only be bought {when}.",
            field="requisition",
        )


_T = TypeVar("_T")


def _required(value: _T | None, field_name: str, requisition: str) -> _T:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise RuleError(
            "requisition_detail_missing", f"{requisition} needs '{field_name}'.", field=field_name
        )
    return value


Apply = Callable[[OrderOfBattle, CrusadeCard | None, RequisitionOrder, Rulebook], OrderOfBattle]


def _increase_supply_limit(
    force: OrderOfBattle, card: CrusadeCard | None, order: RequisitionOrder, book: Rulebook
) -> OrderOfBattle:
    return replace(force, supply_limit=force.supply_limit + book.numbers.supply_limit_increase)


def _fresh_recruits(
    force: OrderOfBattle, card: CrusadeCard | None, order: RequisitionOrder, book: Rulebook
) -> OrderOfBattle:
    assert card is not None
    power = _required(order.new_power_rating, "new_power_rating", "Fresh Recruits")
    if power <= card.power_rating:
        raise RuleError(
            "power_rating_invalid",
            f"Fresh Recruits adds models, so the new Power Rating must be above "
            f"{card.power_rating}.",
            field="new_power_rating",
        )
    grown = replace(card, power_rating=power, points=_fresh_points(card, order, book))
    check_supply(force, unit_supply(grown, book) - unit_supply(card, book), book)
    upgrades = card.upgrades
    threshold = book.numbers.honour_power_rating_threshold
    if card.rank == "blooded" and card.power_rating <= threshold < power:
        upgrades = (*upgrades, Upgrade("fresh_recruits", f"Power {power}", 1))
    wargear = card.wargear if order.wargear is None else order.wargear
    return force.with_card(replace(grown, upgrades=upgrades, wargear=wargear))


def _fresh_points(card: CrusadeCard, order: RequisitionOrder, book: Rulebook) -> int | None:
    """The unit's points after Fresh Recruits: needed, and above the old value, where forces
    muster by points; elsewhere taken when given (shown beside the Power Rating)."""
    if order.new_points is None:
        if book.numbers.muster_by == "points":
            _required(None, "new_points", "Fresh Recruits")
        return card.points
    if order.new_points <= (card.points or 0):
        raise RuleError(
            "points_invalid",
            f"Fresh Recruits adds models, so the new points must be above {card.points}.",
            field="new_points",
        )
    return order.new_points


def _rearm_and_resupply(
    force: OrderOfBattle, card: CrusadeCard | None, order: RequisitionOrder, book: Rulebook
) -> OrderOfBattle:
    assert card is not None
    wargear = _required(order.wargear, "wargear", "Rearm and Resupply")
    enhanced = [w for w in order.replaced_weapons if w.casefold() in card.enhanced_weapons]
    if enhanced:
        raise RuleError(
            "weapon_enhanced_cannot_be_replaced",
            f"{', '.join(enhanced)} carries a Weapon Enhancement or Crusade Relic and cannot "
            "be swapped out.",
            field="replaced_weapons",
        )
    return force.with_card(replace(card, wargear=wargear))


def _repair_and_recuperate(
    force: OrderOfBattle, card: CrusadeCard | None, order: RequisitionOrder, book: Rulebook
) -> OrderOfBattle:
    assert card is not None
    scar = _required(order.scar, "scar", "Repair and Recuperate")
    # A scar may be named as the card shows it; an unknown one is refused below.
    with contextlib.suppress(KeyError):
        scar = book.scars.scar(card.unit_type, scar).id
    return force.with_card(remove_battle_scar(card, scar))


def _psychic_meditations(
    force: OrderOfBattle, card: CrusadeCard | None, order: RequisitionOrder, book: Rulebook
) -> OrderOfBattle:
    assert card is not None
    powers = _required(order.psychic_powers, "psychic_powers", "Psychic Meditations")
    return force.with_card(replace(card, psychic_powers=powers))


def _specialist_reinforcements(
    force: OrderOfBattle, card: CrusadeCard | None, order: RequisitionOrder, book: Rulebook
) -> OrderOfBattle:
    assert card is not None
    stratagem = _required(order.stratagem, "stratagem", "Specialist Reinforcements")
    cost = _required(order.stratagem_cp, "stratagem_cp", "Specialist Reinforcements")
    if cost < 1:
        raise RuleError(
            "stratagem_cp_invalid",
            "The Stratagem's Command point cost must be at least 1.",
            field="stratagem_cp",
        )
    _check_stratagem(stratagem, cost, book)
    upgrade = Upgrade("specialist_reinforcements", stratagem.strip(), cost)
    keywords = card.keywords | _stratagem_keywords(card, stratagem, book)
    return force.with_card(replace(card, upgrades=(*card.upgrades, upgrade), keywords=keywords))


# Stratagems that hand out a Relic or a Warlord Trait, by the words their names use: the
# Requisition cannot be used for those (others are taken on the player's word: ruling 46).
_RELIC_OR_TRAIT = ("relic", "warlord trait", "heirloom")


def _check_stratagem(stratagem: str, cost: int, book: Rulebook) -> None:
    """The Stratagem's own CP cost where the rules give it (it becomes Crusade points), and
    never one that gives a Relic or a Warlord Trait."""
    name = " ".join(stratagem.split()).casefold()
    if any(word in name for word in _RELIC_OR_TRAIT):
        raise RuleError(
            "stratagem_gives_relic_or_trait",
            f"Specialist Reinforcements cannot give a Relic or a Warlord Trait ({stratagem.strip()}"
            "); buy the Relic or Warlord Trait Requisition instead.",
            field="stratagem",
        )
    requisition = book.requisition("specialist_reinforcements")
    known = next(
        (r for r in requisition.character_stratagem_factions if r.stratagem.casefold() == name),
        None,
    )
    if known is not None and known.cp is not None and cost != known.cp:
        raise RuleError(
            "stratagem_cp_invalid",
            f"{known.stratagem} costs {known.cp} CP, so it adds {known.cp} Crusade point(s); "
            f"{cost} was entered.",
            field="stratagem_cp",
        )


def _stratagem_keywords(card: CrusadeCard, stratagem: str, book: Rulebook) -> frozenset[str]:
    """Knight Characters: a Knight Baron Stratagem on an IMPERIAL KNIGHTS unit, or a
    Tyrannical Court on a CHAOS KNIGHTS unit, bought this way, is how a knight gains
    CHARACTER (it brings no Warlord Trait); Knight Baron excludes named characters. A rule
    pack may add another such Stratagem (``core.character_stratagems``); one the rules do
    not name (Exalted Court) is refused until it does (docs/rulings.md, 31)."""
    requisition = book.requisition("specialist_reinforcements")
    chosen = " ".join(stratagem.split()).casefold()
    rule = next(
        (r for r in requisition.character_stratagem_factions if r.stratagem.casefold() == chosen),
        None,
    )
    if rule is None:
        others = requisition.character_stratagems_elsewhere
        elsewhere = [s for s in others if s.casefold() == chosen]
        if elsewhere:
            named = " or ".join(requisition.character_stratagems)
            raise RuleError(
                "stratagem_not_in_crusade_rules",
                f"{elsewhere[0]} is not one of the Stratagems the Knight Characters rule "
                f"names ({named}), so it gives no knight the CHARACTER keyword here; a "
                "campaign that plays it adds it with a rule pack (core.character_stratagems).",
                field="stratagem",
            )
        return frozenset()
    if not card.has(rule.keyword):
        raise RuleError(
            "stratagem_not_for_unit",
            f"{rule.stratagem} gives the CHARACTER keyword only to a {rule.keyword} unit; "
            f"{card.name} is not one.",
            field="stratagem",
        )
    if rule.excludes_named_characters and card.named_character:
        raise RuleError(
            "stratagem_not_for_unit",
            f"{rule.stratagem} cannot be used on a named character such as {card.name}.",
            field="stratagem",
        )
    return frozenset({"CHARACTER"})


def _bearer(card: CrusadeCard, order: RequisitionOrder) -> str:
    return (order.model or card.champion or card.name).strip()


def _check_one_per_model(
    force: OrderOfBattle, card: CrusadeCard, requisition: str, detail: str, model: str, what: str
) -> None:
    for other in force.cards:
        # A named character's own trait does not stop another model having the same one.
        if other.named_character and other.id != card.id:
            continue
        for upgrade in other.upgrades:
            if upgrade.requisition != requisition:
                continue
            if upgrade.detail.casefold() == detail.casefold():
                raise RuleError(
                    f"{requisition}_taken",
                    f"{other.name} already has the {what} {upgrade.detail}; each {what} may "
                    "appear only once in an Order of Battle.",
                    field=requisition,
                )
            if other.id == card.id and (upgrade.model or "").casefold() == model.casefold():
                raise RuleError(
                    f"{requisition}_one_per_model",
                    f"{model} already has a {what}; no model can have more than one.",
                    field="model",
                )


def _warlord_trait(
    force: OrderOfBattle, card: CrusadeCard | None, order: RequisitionOrder, book: Rulebook
) -> OrderOfBattle:
    assert card is not None
    if card.named_character:
        raise RuleError(
            "named_character_has_warlord_trait",
            f"{card.name} is a named character: it always has its own Warlord Trait, and no "
            "model may have a second one.",
            field="card_id",
        )
    trait = _required(order.warlord_trait, "warlord_trait", "Warlord Trait").strip()
    own = book.pack_warlord_trait(trait)
    if own is not None:  # a rule pack's trait: its own expression, its name
        eligibility.require(own.name, own.eligible, card, book, "warlord_trait_not_eligible")
        trait = own.name
    model = _bearer(card, order)
    _check_one_per_model(force, card, "warlord_trait", trait, model, "Warlord Trait")
    points = 2 if card.has("TITANIC") else 1
    upgrade = Upgrade("warlord_trait", trait, points, model=model)
    return force.with_card(replace(card, upgrades=(*card.upgrades, upgrade)))


def _relic(
    force: OrderOfBattle, card: CrusadeCard | None, order: RequisitionOrder, book: Rulebook
) -> OrderOfBattle:
    assert card is not None
    relic = _required(order.relic, "relic", "Relic").strip()
    crusade_relics = {n.casefold() for r in book.honours.crusade_relics for n in (r.id, r.name)}
    if relic.casefold() in crusade_relics:
        raise RuleError(
            "relic_is_crusade_relic",
            f"{relic} is a Crusade Relic: those come only as Battle Honours, never through the "
            "Relic requisition.",
            field="relic",
        )
    model = _bearer(card, order)
    _check_one_per_model(force, card, "relic", relic, model, "Relic")
    if order.first_founding and any(u.first_founding for c in force.cards for u in c.upgrades):
        raise RuleError(
            "first_founding_relic_taken",
            "Only one CHARACTER in an Order of Battle may have a First Founding Chapter Relic.",
            field="first_founding",
        )
    weapon = order.replaces_weapon
    if weapon and weapon.casefold() in card.enhanced_weapons:
        raise RuleError(
            "weapon_enhanced_cannot_be_replaced",
            f"{weapon} carries a Weapon Enhancement or Crusade Relic; a Relic cannot replace it.",
            field="replaces_weapon",
        )
    points = 2 if card.has("TITANIC") or order.first_founding else 1
    upgrade = Upgrade(
        "relic", relic, points, model=model, weapon=weapon, first_founding=order.first_founding
    )
    return force.with_card(replace(card, upgrades=(*card.upgrades, upgrade)))


def _apply_effects(
    force: OrderOfBattle, card: CrusadeCard | None, order: RequisitionOrder, book: Rulebook
) -> OrderOfBattle:
    """A rule pack's requisition: its effects, in order, from the fixed vocabulary."""
    requisition = book.requisition(order.requisition)
    counters = {c.id: c for c in requisition.counters}
    dice: Dice = EnteredDice(order.dice) if order.dice else SeededDice(order.seed or 0)
    for effect in requisition.effects:
        force, card = _effect(force, card, effect, counters, requisition, order, book, dice)
    return force


def _effect(
    force: OrderOfBattle,
    card: CrusadeCard | None,
    effect: Effect,
    counters: dict[str, Counter],
    requisition: Requisition,
    order: RequisitionOrder,
    book: Rulebook,
    dice: Dice,
) -> tuple[OrderOfBattle, CrusadeCard | None]:
    match effect:
        case ChangeSupplyLimit(amount=amount):
            return replace(force, supply_limit=max(0, force.supply_limit + amount)), card
        case ChangeRequisitionPoints(amount=amount):
            # Like any RP gained, past the cap is lost; spending more than there is, refused.
            value = _within(force.requisition_points + amount, 0, 10**6, "RP", requisition)
            points = min(value, book.numbers.max_requisition_points)
            return replace(force, requisition_points=points), card
        case AddUnit():
            return add_unit(force, _joining(force, effect, order, requisition), book), card
        case ChangeCounter(counter=counter_id, amount=amount):
            rule = counters[counter_id]
            if rule.scope == "card":
                assert card is not None
                value = card.counters.get(counter_id, rule.start) + amount
                changed = replace(
                    card,
                    counters={
                        **card.counters,
                        counter_id: _within(value, rule.min, rule.max, rule.name, requisition),
                    },
                )
                return force.with_card(changed), changed
            value = force.counters.get(counter_id, rule.start) + amount
            return replace(
                force,
                counters={
                    **force.counters,
                    counter_id: _within(value, rule.min, rule.max, rule.name, requisition),
                },
            ), card
    if isinstance(effect, SetChoice):
        rule = counters[effect.counter]
        value = rule.choices.index(effect.value) + 1  # checked on loading: one of its choices
        holder = card if rule.scope == "card" else None
        if holder is not None:
            chosen = replace(holder, counters={**holder.counters, rule.id: value})
            return force.with_card(chosen), chosen
        return replace(force, counters={**force.counters, rule.id: value}), card
    if isinstance(effect, StartQuest):
        quest = book.quest(effect.quest)
        assert quest is not None  # checked on loading
        holder_id = card.id if quest.scope == "card" and card is not None else None
        force = quests.start(force, holder_id, quest, book)
        return force, force.card(card.id) if card is not None else None
    assert card is not None  # check_against: unit effects need a unit target
    if isinstance(effect, RemoveUnit):
        return _remove(force, card, effect, counters), None
    match effect:
        case AddXp(amount=amount) | RemoveXp(amount=amount):
            delta = amount if isinstance(effect, AddXp) else -amount
            # A rank reached here owes its Battle Honour (ruling 61: purchase_requisition
            # reports the promotions; the service raises the decisions).
            changed, _promotions_here = change_xp(card, delta, book)
        case RemoveBattleScar():
            scar = _required(order.scar, "scar", requisition.name)
            with contextlib.suppress(KeyError):
                scar = book.scars.scar(card.unit_type, scar).id
            changed = remove_battle_scar(card, scar)
        case AddUpgrade(name=name, crusade_points=points):
            upgrade = Upgrade(requisition=requisition.id, detail=name, crusade_points=points)
            changed = replace(card, upgrades=(*card.upgrades, upgrade))
        case Transform():
            return _transform(force, card, effect, book)
        case GrantHonour():
            return _grant(force, card, effect, book)
        case RollTable():
            # the core's limits refuse the purchase (ruling 84); the dice stay on the card
            changed, gained = roll_pack_table(card, effect, book, dice, refuse=True)
            moves = rolled_counters(gained, book)
            force = move_counters(force.with_card(changed), card.id, moves, book)
            return force, force.card(card.id)
        case _:
            raise AssertionError(effect)
    return force.with_card(changed), changed


def _grant(
    force: OrderOfBattle, card: CrusadeCard, effect: GrantHonour, book: Rulebook
) -> tuple[OrderOfBattle, CrusadeCard]:
    """The unit gains the pack's honour the effect names (issue 47), or the purchase is
    refused where the core's honour limits stop it (ruling 83); the entry's own counters
    move within their bounds, as when a decision gives it (ruling 59)."""
    changed, entry = grant_pack_honour(card, effect, book, refuse=True)
    assert entry is not None  # refused otherwise
    force = move_counters(force.with_card(changed), card.id, entry.counters, book)
    return force, force.card(card.id)


def _transform(
    force: OrderOfBattle, card: CrusadeCard, effect: Transform, book: Rulebook
) -> tuple[OrderOfBattle, CrusadeCard]:
    """The unit becomes another datasheet (issue 38): what it is changes, what it did stays
    (XP, rank, honours, scars, counters, tallies), within the Supply Limit."""
    changed = replace(
        card,
        name=effect.name,
        datasheet=effect.name,
        power_rating=effect.power_rating,
        points=effect.points if effect.points is not None else card.points,
        keywords=normalise_keywords([force.crusade_faction, *effect.keywords]),
        wargear=effect.wargear if effect.wargear is not None else card.wargear,
    )
    require_points(changed, book)
    others = replace(force, cards=tuple(c for c in force.cards if c.id != card.id))
    check_supply(others, unit_supply(changed, book), book)
    return force.with_card(changed), changed


def _remove(
    force: OrderOfBattle, card: CrusadeCard, effect: RemoveUnit, counters: dict[str, Counter]
) -> OrderOfBattle:
    """The unit leaves for good; the refund (fixed, and per Power) goes to a force counter,
    up to its max (issue 38)."""
    force = remove_unit(force, card.id)
    if effect.refund_counter is None:
        return force
    rule = counters[effect.refund_counter]
    refund = effect.refund + effect.refund_per_power * card.power_rating
    value = min(rule.max, force.counters.get(rule.id, rule.start) + refund)
    return replace(force, counters={**force.counters, rule.id: value})


def _joining(
    force: OrderOfBattle, effect: AddUnit, order: RequisitionOrder, requisition: Requisition
) -> CrusadeCard:
    """The unit an add_unit effect brings: the pack's, or (``chosen``) the one the buyer
    names, within the effect's most Power; "new-N" is its id until it gets its row."""
    if not effect.chosen:
        assert effect.name is not None and effect.power_rating is not None
        name, power, points, own = effect.name, effect.power_rating, effect.points, ()
    else:
        unit = _required(order.new_unit, "new_unit", requisition.name)
        name, power = str(unit.get("name") or ""), int(unit.get("power_rating") or 0)
        points, own = unit.get("points"), tuple(unit.get("keywords") or ())
        if effect.max_power_rating is not None and power > effect.max_power_rating:
            raise RuleError(
                "power_rating_invalid",
                f"{requisition.name} brings a unit of at most {effect.max_power_rating} "
                f"Power; {name or 'this one'} has {power}.",
                field="new_unit.power_rating",
            )
    return new_card(
        id=f"new-{len(force.cards)}",
        name=name,
        power_rating=power,
        points=points,
        keywords=[force.crusade_faction, *effect.keywords, *own],
    )


def _within(value: int, low: int, high: int, what: str, requisition: Requisition) -> int:
    if not low <= value <= high:
        raise RuleError(
            "counter_out_of_range",
            f"{requisition.name} would take {what} to {value}; it stays between {low} and {high}.",
            field="requisition",
        )
    return value


APPLY: dict[str, Apply] = {
    "increase_supply_limit": _increase_supply_limit,
    "fresh_recruits": _fresh_recruits,
    "rearm_and_resupply": _rearm_and_resupply,
    "repair_and_recuperate": _repair_and_recuperate,
    "psychic_meditations": _psychic_meditations,
    "specialist_reinforcements": _specialist_reinforcements,
    "warlord_trait": _warlord_trait,
    "relic": _relic,
}
