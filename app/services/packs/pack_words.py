"""A rule pack's effects in words, for the campaign's Rules page (issue 47): what a
threshold, a quest's reward or penalty, a requisition and a mission's victor bonus do, as
the engine plays them (never only the author's summary). Pure: rules values in, text out."""

from __future__ import annotations

from typing import Any

from app.rules.data import Rulebook

TARGETS = {
    "any_unit": "any unit",
    "non_character_vehicle_monster": "a unit that is no CHARACTER, VEHICLE or MONSTER",
    "character": "a CHARACTER",
    "warlord": "the Warlord",
    "exfiltrated": "a unit that exfiltrated",
    "new_character": "a new CHARACTER",
    "force": "the force",
}
ROLES = {"attacker": "the Attacker only", "defender": "the Defender only"}


def effect_words(effect: Any, book: Rulebook) -> str:
    """One effect of the fixed vocabulary, as the engine applies it."""
    kind = str(getattr(effect, "kind", ""))
    amount = getattr(effect, "amount", 0)
    match kind:
        case "change_counter":
            return f"{_counter(effect.counter, book)} {amount:+d}"
        case "change_requisition_points" | "extra_requisition_points":
            return f"{amount:+d} RP ({'up to the cap' if amount > 0 else 'never below 0'})"
        case "change_supply_limit":
            return f"Supply Limit {amount:+d}"
        case "add_xp":
            return f"the unit gains {amount} XP"
        case "remove_xp":
            return f"the unit loses {amount} XP (never below 0)"
        case "extra_marked_for_greatness":
            return f"{effect.count} more unit(s) Marked for Greatness"
        case "battle_honour":
            kinds = " or ".join(c.value.replace("_", " ") for c in effect.categories)
            return f"a Battle Honour ({kinds}) for {TARGETS[effect.target.value]}"
        case "free_requisitions":
            names = [_requisition(r, book) for r in effect.requisitions]
            how = " or ".join(names) if effect.mode == "one_of" else " and ".join(names)
            return f"free: {how} ({TARGETS[effect.target.value]}), a decision"
        case "add_upgrade":
            return f"an upgrade, {effect.name} (+{effect.crusade_points} Crusade points)"
        case "remove_battle_scar":
            return "one Battle Scar healed"
        case "grant_honour":
            what = "Battle Trait" if effect.category == "battle_trait" else "Psychic Fortitude"
            turned = (
                f", in place of {_entry(effect.replaces_scar, book)}"
                if effect.replaces_scar
                else ""
            )
            return f"the unit gains the {what} {_entry(effect.entry, book)}{turned}"
        case "roll_table":
            table = book.pack_table(effect.table)
            name = table.name if table is not None else _words(effect.table)
            return f"the unit rolls on {name} and gains the result"
        case "set_choice":
            return f"{_counter(effect.counter, book)}: {_words(effect.value)}"
        case "start_quest":
            return f"begins the quest {_quest(effect.quest, book)}"
        case "add_unit":
            if getattr(effect, "chosen", False):
                most = getattr(effect, "max_power_rating", None)
                return "a new unit the buyer names joins" + (
                    f" (up to {most} Power)" if most else ""
                )
            return f"{effect.name} ({effect.power_rating} Power) joins"
        case "transform":
            return f"the unit becomes {effect.name} ({effect.power_rating} Power)"
        case "remove_unit":
            return f"the unit leaves for good; {_counter(effect.refund_counter, book)} refunded"
    return kind.replace("_", " ")


def effects_words(effects: Any, book: Rulebook) -> str:
    return "; ".join(effect_words(e, book) for e in effects)


def bonus_words(bonus: Any, book: Rulebook) -> str:
    """A mission's victor bonus: what the victor gets (and which role, if one)."""
    role = str(getattr(getattr(bonus, "role", None), "value", "either"))
    who = f" ({ROLES[role]})" if role in ROLES else ""
    return f"{effect_words(bonus.effect, book)}{who}"


def _counter(counter_id: str, book: Rulebook) -> str:
    return next((c.name for c in book.counters if c.id == counter_id), _words(counter_id))


def _requisition(requisition_id: str, book: Rulebook) -> str:
    return next((r.name for r in book.requisitions if r.id == requisition_id), requisition_id)


def _entry(entry_id: str, book: Rulebook) -> str:
    """A pack's Battle Trait, Psychic Fortitude or Battle Scar by name (its id's words if
    the rulebook no longer has it)."""
    for entry in (
        *book.honours.pack_battle_traits,
        *book.honours.pack_psychic_fortitudes,
        *book.scars.pack_scars,
    ):
        if entry.id == entry_id:
            return entry.name
    return _words(entry_id)


def _quest(quest_id: str, book: Rulebook) -> str:
    return next((q.name for q in book.quests if q.id == quest_id), _words(quest_id))


def _words(value: str) -> str:
    text = str(value).replace("_", " ")
    return text[:1].upper() + text[1:]
