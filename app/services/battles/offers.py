"""What a pending decision offers (issue 46): for each unit its answer may name, per
category the entries allowed now and the inputs still needed (a weapon of the unit's own
wargear, a requisition's target and details), and the dice an answer can use. Worked out
when asked, from the same rules that check the answer, so a bot that answers from the offer
alone is never refused; a refusal carries the offer as it stands then."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlmodel import Session, select

from app.db.models import Battle, BattleSide, Card, Decision, as_utc
from app.rules import aftermath as after_rules
from app.rules import eligibility
from app.rules.aftermath import BattleHonourDecision
from app.rules.cards import CrusadeCard, normalise_keywords, spellings
from app.rules.data import (
    AddUnit,
    BonusTarget,
    DiceTable,
    FreeRequisitions,
    HonourCategory,
    RemoveBattleScar,
    RequisitionTarget,
    Rulebook,
    VictorBonus,
    WeaponType,
)
from app.rules.errors import RuleError
from app.rules.honours import (
    open_categories,
    relics_open,
    wargear_weapons,
    weapon_enhancements_to_choose,
    weapons_to_enhance,
)
from app.rules.order_of_battle import OrderOfBattle
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition

# The most dice an answer may list (DecisionAnswer.dice); dice it does not use are left over.
MAX_DICE = 50

# What each order of a core requisition needs beside `requisition` and `card_id`.
_NEEDS = {
    "fresh_recruits": ["new_power_rating"],
    "rearm_and_resupply": ["wargear"],
    "repair_and_recuperate": ["scar"],
    "psychic_meditations": ["psychic_powers"],
    "specialist_reinforcements": ["stratagem", "stratagem_cp"],
    "warlord_trait": ["warlord_trait"],
    "relic": ["relic"],
}
_PROBE = "(an offer's probe)"


def offer_of(
    session: Session,
    row: Decision,
    force: OrderOfBattle,
    book: Rulebook,
    honour: BattleHonourDecision | None = None,
) -> dict[str, Any]:
    """The offer of a pending decision of ``force`` (the rules' value), as the API shows it
    (``DecisionOfferPublic``). ``honour`` is the rules' value of a Battle Honour decision."""
    if row.kind == "victor_bonus":
        return _bonus_offer(session, row, force, book)
    units: list[dict[str, Any]] = []
    present = {c.id: c for c in force.cards}
    if row.kind == "battle_honour" and honour is not None:
        for card_id in after_rules.honour_targets(force, honour, book):
            categories = _honour_categories(present[card_id], honour, force, book)
            if categories:
                units.append(_unit(present[card_id], categories=categories))
    elif row.card_id is not None and str(row.card_id) in present:
        card = present[str(row.card_id)]
        if row.kind == "battle_scar":
            units.append(_unit(card, categories=[_scar_category(card, book)]))
        elif row.kind == "out_of_action":
            options = row.payload.get("options", [])
            units.append(_unit(card, options=[_option(o) for o in options]))
    return {"units": units, "requisitions": [], "mode": None, "may_decline": False}


def _unit(card: CrusadeCard, **parts: Any) -> dict[str, Any]:
    return {"card_id": int(card.id), "name": card.name, "categories": [], "options": [], **parts}


def _option(consequence: str) -> dict[str, Any]:
    """An Out of Action consequence: a Devastating Blow rolls one D6 (the XP lost)."""
    dice = _dice([6]) if consequence == "devastating_blow" else None
    return {"consequence": consequence, "dice": dice}


def _dice(
    sides: list[int], again_on: Collection[int] = (), again_on_double: bool = False
) -> dict[str, Any]:
    """The dice one throw uses, in order, and when it is thrown again: an answer's own
    ``dice`` then needs one more throw, so it may use up to MAX_DICE (extra dice are left)."""
    again = sorted(again_on)
    return {
        "sides": sides,
        "again_on": again,
        "again_on_double": again_on_double,
        "at_most": MAX_DICE if again or again_on_double else len(sides),
    }


def _table_dice(table: DiceTable, held: Collection[str]) -> dict[str, Any]:
    faces = [v for v in range(1, table.sides + 1) if table.entry_for(v).id in held]
    return _dice([table.sides], faces)


def _entry(entry: Any, **more: Any) -> dict[str, Any]:
    return {
        "id": entry.id,
        "name": entry.name,
        "pack": getattr(entry, "pack", None) or None,
        "low": getattr(entry, "low", None),
        "high": getattr(entry, "high", None),
        "weapon_type": None,
        "needs": [],
        "requisition_points": 0,
        **more,
    }


def _category(category: str, **parts: Any) -> dict[str, Any]:
    return {
        "category": category,
        "entries": [],
        "choose": 1,
        "rolled": False,
        "needs": [],
        "weapons": [],
        "free_weapon": None,
        "dice": None,
        "tables": [],
        **parts,
    }


def _honour_categories(
    card: CrusadeCard, honour: BattleHonourDecision, force: OrderOfBattle, book: Rulebook
) -> list[dict[str, Any]]:
    found = []
    for category in open_categories(
        card,
        honour.categories,
        book,
        relics_taken=force.crusade_relics,
        requisition_points=force.requisition_points,
    ):
        if category == HonourCategory.WEAPON_ENHANCEMENT:
            found.append(_weapon_category(card, book))
        elif category == HonourCategory.CRUSADE_RELIC:
            found.append(_relic_category(card, force, book))
        else:
            found.append(_table_category(card, category, book))
    return found


def _pack_entries(card: CrusadeCard, category: HonourCategory, book: Rulebook) -> list[Any]:
    """A rule pack's entries of ``category`` the unit may choose: not held, not only on a
    rolled table, meeting their expression."""
    held = card.honour_ids(category)
    return [
        e
        for e in book.honours.pack_entries(category)
        if e.id not in held
        and not book.rolled_only(category.value, e.id)
        and (not e.eligible or eligibility.meets(e.eligible, card, card.counters, book))
    ]


def _tables(card: CrusadeCard, category: str, book: Rulebook) -> list[str]:
    return [
        t.id
        for t in book.pack_tables
        if t.category == category
        and (not t.eligible or eligibility.meets(t.eligible, card, card.counters, book))
    ]


def _table_category(card: CrusadeCard, category: HonourCategory, book: Rulebook) -> dict[str, Any]:
    """A Battle Trait or a Psychic Fortitude: the core table's results not held (chosen, or
    rolled: a held result is rolled again) and the packs' entries."""
    table = (
        book.honours.battle_traits.get(card.unit_type)
        if category == HonourCategory.BATTLE_TRAIT
        else book.honours.psychic_fortitudes
    )
    held = card.honour_ids(category)
    core = [e for e in table.entries if e.id not in held] if table is not None else []
    entries = [_entry(e) for e in core] + [_entry(e) for e in _pack_entries(card, category, book)]
    return _category(
        category.value,
        entries=entries,
        rolled=bool(core),
        dice=_table_dice(table, held) if table is not None and core else None,
        tables=_tables(card, category.value, book),
    )


def _weapon_category(card: CrusadeCard, book: Rulebook) -> dict[str, Any]:
    """A Weapon Enhancement: a weapon of the unit's champion (or the unit), not enhanced nor
    a Relic; the entries of the table its weapon_type rolls on (`both` rolls on the melee
    one); two to choose for most units (one of them a result 1-3), one for a TITANIC,
    CHARACTER, VEHICLE or MONSTER (results 1-3 only for a TITANIC)."""
    titanic = card.has("TITANIC")
    entries = []
    for kind in (WeaponType.RANGED, WeaponType.MELEE):
        for e in book.honours.weapon_enhancements[kind].entries:
            if not titanic or e.low <= 3:
                entries.append(_entry(e, weapon_type=kind.value))
    entries += [
        _entry(e, weapon_type=getattr(e, "weapon_type", "any"))
        for e in _pack_entries(card, HonourCategory.WEAPON_ENHANCEMENT, book)
    ]
    choose = weapon_enhancements_to_choose(card)
    if titanic:
        dice = _dice([3])
    elif choose == 1:
        dice = _dice([6])
    else:
        dice = _dice([6, 3], again_on_double=True)
    return _category(
        HonourCategory.WEAPON_ENHANCEMENT.value,
        entries=entries,
        choose=choose,
        rolled=True,
        needs=["weapon"],
        weapons=weapons_of(card),
        free_weapon=free_weapon(card),
        dice=dice,
        tables=_tables(card, HonourCategory.WEAPON_ENHANCEMENT.value, book),
    )


def _relic_category(card: CrusadeCard, force: OrderOfBattle, book: Rulebook) -> dict[str, Any]:
    """A Crusade Relic: those the unit may bear that its Order of Battle does not hold yet
    and the force can pay for; chosen, never rolled. One that upgrades a weapon needs it."""
    relics = relics_open(card, book, force.crusade_relics, force.requisition_points)
    entries = [
        _entry(
            r,
            needs=["weapon"] if r.selects_weapon else [],
            requisition_points=book.honours.relic_categories[r.category].requisition_points,
        )
        for r in relics
    ]
    upgrades = any(r.selects_weapon for r in relics)
    return _category(
        HonourCategory.CRUSADE_RELIC.value,
        entries=entries,
        weapons=weapons_of(card) if upgrades else [],
        free_weapon=free_weapon(card) if upgrades else None,
    )


def _scar_category(card: CrusadeCard, book: Rulebook) -> dict[str, Any]:
    """A Battle Scar: the unit type's results not held (chosen, or rolled: a held result is
    rolled again) and the packs' scars it may take."""
    table = book.scars.battle_scars[card.unit_type]
    held = card.scar_ids
    core = [e for e in table.entries if e.id not in held]
    packs = [
        e
        for e in book.scars.pack_scars
        if e.id not in held
        and not book.rolled_only("battle_scar", e.id)
        and (not e.eligible or eligibility.meets(e.eligible, card, card.counters, book))
    ]
    return _category(
        "battle_scar",
        entries=[_entry(e) for e in core] + [_entry(e) for e in packs],
        rolled=bool(core),
        dice=_table_dice(table, held) if core else None,
        tables=_tables(card, "battle_scar", book),
    )


def weapons_of(card: CrusadeCard) -> list[dict[str, str]]:
    """The weapons a Weapon Enhancement (or a relic that upgrades a weapon) may be given, as
    an answer's ``weapon``: the model is the unit's champion, or the unit."""
    model = card.champion or card.name
    return [{"model": model, "weapon": w} for w in weapons_to_enhance(card)][:40]


def free_weapon(card: CrusadeCard) -> dict[str, Any] | None:
    """For a card that lists no wargear, the input its answer gives instead (ruling 80): any
    weapon its model carries, named in the player's words, for the champion or the unit."""
    if wargear_weapons(card):
        return None
    return {"model": card.champion or card.name, "max_length": 120}


# --- a victor bonus's free requisitions ----------------------------------------------------


def _bonus_offer(
    session: Session, row: Decision, force: OrderOfBattle, book: Rulebook
) -> dict[str, Any]:
    bonus = VictorBonus.model_validate(row.payload["bonus"])
    effect = bonus.effect
    granted = list(effect.requisitions) if isinstance(effect, FreeRequisitions) else []
    target = getattr(effect, "target", None)
    allowed = candidates(session, row, force, target)
    requisitions = []
    for requisition_id in dict.fromkeys(granted):
        requisition = book.requisition(requisition_id)
        entry: dict[str, Any] = {
            "requisition": requisition.id,
            "name": requisition.name,
            "times": granted.count(requisition_id),
            "target": "force" if requisition.target == RequisitionTarget.FORCE else "unit",
            "targets": [],
            "needs": _needs(requisition),
            "taken": _taken(force, requisition.id),
        }
        if entry["target"] == "unit":
            entry["needs"] = ["card_id", *entry["needs"]]
            entry["targets"] = [
                _target(c, requisition.id, force, book)
                for c in force.cards
                if c.id in allowed and _accepts(force, c, requisition.id, effect, book)
            ]
        elif not _accepts(force, None, requisition.id, effect, book):
            continue
        requisitions.append(entry)
    return {
        "units": [],
        "requisitions": requisitions,
        "mode": getattr(effect, "mode", None),
        "may_decline": True,
    }


def _needs(requisition: Any) -> list[str]:
    """What an order of ``requisition`` needs beside its target: a core one's details, or
    for a rule pack's, the unit its add_unit brings (``new_unit``) or the scar it removes."""
    if not requisition.effects:
        return list(_NEEDS.get(requisition.id, []))
    needs = []
    if any(isinstance(e, AddUnit) and e.chosen for e in requisition.effects):
        needs.append("new_unit")
    if any(isinstance(e, RemoveBattleScar) for e in requisition.effects):
        needs.append("scar")
    return needs


def _taken(force: OrderOfBattle, requisition: str) -> list[str]:
    """Warlord Traits and Relics already in the Order of Battle (each may be there once)."""
    if requisition not in ("warlord_trait", "relic"):
        return []
    return sorted(
        {u.detail for c in force.cards for u in c.upgrades if u.requisition == requisition}
    )


def _target(card: CrusadeCard, requisition: str, force: OrderOfBattle, book: Rulebook) -> Any:
    traits = []
    if requisition == "warlord_trait":
        taken = {t.casefold() for t in _taken(force, "warlord_trait")}
        traits = [
            {"id": t.id, "name": t.name, "pack": t.pack or None}
            for t in book.pack_warlord_traits
            if t.name.casefold() not in taken
            and (not t.eligible or eligibility.meets(t.eligible, card, card.counters, book))
        ]
    return {
        "card_id": int(card.id),
        "name": card.name,
        "scars": sorted(card.scar_ids) if requisition == "repair_and_recuperate" else [],
        "warlord_traits": traits,
    }


def _accepts(
    force: OrderOfBattle,
    card: CrusadeCard | None,
    requisition: str,
    effect: Any,
    book: Rulebook,
) -> bool:
    """Whether the rules take this free requisition for ``card`` (or the force), with the
    details a player adds filled in by a probe (a trait or a relic no one holds)."""
    order = RequisitionOrder(
        requisition,
        card_id=card.id if card else None,
        new_power_rating=card.power_rating + 1 if card else None,
        new_points=(card.points or 0) + 1 if card else None,
        wargear=_PROBE,
        scar=min(card.scar_ids) if card and card.scar_ids else None,
        psychic_powers=_PROBE,
        stratagem=_PROBE,
        stratagem_cp=1,
        warlord_trait=_PROBE,
        relic=_PROBE,
        new_unit={"name": _PROBE, "power_rating": 1, "keywords": []},
    )
    try:
        purchase_requisition(
            force,
            order,
            PurchaseWindow(card_added=order.card_id),
            book,
            free=True,
            ignore_timing=getattr(effect, "ignores_rank_timing", False),
        )
    except RuleError:
        return False
    return True


def candidates(
    session: Session, row: Decision, force: OrderOfBattle, target: BonusTarget | None
) -> set[str]:
    """The units a victor bonus's free requisition may go to, by the bonus's target: a
    CHARACTER on the force's roster for the battle (ruling 44), a CHARACTER (not a named
    character) added since the battle, or any unit."""
    if target == BonusTarget.CHARACTER and row.battle_id is not None:
        fought = characters_that_fought(session, row)
        return {c.id for c in force.cards if int(c.id) in fought}
    if target == BonusTarget.NEW_CHARACTER:
        return {c.id for c in force.cards if is_new_character(session, row, int(c.id))}
    return {c.id for c in force.cards}


def characters_that_fought(session: Session, row: Decision) -> set[int]:
    """The CHARACTERs on this force's roster for the decision's battle."""
    side = session.exec(
        select(BattleSide).where(
            BattleSide.battle_id == row.battle_id, BattleSide.force_id == row.force_id
        )
    ).first()
    roster = set(side.roster) if side is not None else set()
    cards = [session.get(Card, card_id) for card_id in roster]
    return {c.id for c in cards if c is not None and c.id is not None and is_character(c)}


def is_character(card: Card) -> bool:
    return not spellings("CHARACTER").isdisjoint(normalise_keywords(card.keywords))


def is_new_character(session: Session, row: Decision, card_id: int) -> bool:
    """A CHARACTER (not a named character) of the force added after the battle was recorded."""
    battle = session.get(Battle, row.battle_id) if row.battle_id else None
    recorded = battle.resolved_at if battle and battle.resolved_at else row.created_at
    card = session.get(Card, card_id)
    return (
        card is not None
        and card.force_id == row.force_id
        and "CHARACTER" in card.keywords
        and not card.named_character
        and as_utc(card.created_at) >= as_utc(recorded)
    )
