"""A rule pack's reward goes to the unit that earned it (issue 47): a threshold's or
quest's free requisitions for a unit are taken by the unit whose counter rose or whose
quest ended (or, for a force's, by a unit the reward's ``target`` allows), never by
another; each refusal speaks of the pack's own reward."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.db.models import Decision
from app.errors import DomainError
from app.rules import triggers
from app.rules.data import BonusTarget, RequisitionTarget, Rulebook, VictorBonus
from app.rules.order_of_battle import OrderOfBattle


def owed_by_pack(payload: Mapping[str, Any]) -> bool:
    """Whether a victor-bonus decision is a pack's threshold's or quest's, not a victory's."""
    return bool(payload.get("threshold") or payload.get("quest"))


def source_words(payload: Mapping[str, Any]) -> str:
    """The reward's source as a sentence names it: "the quest X", "the threshold Y"."""
    if payload.get("quest"):
        return f"the quest {payload['quest']['name']}"
    return f"the threshold {payload['threshold']['name']}"


def units(row: Decision, force: OrderOfBattle, book: Rulebook) -> tuple[str, ...]:
    """The units that may take the reward's requisitions for a unit, as the force stands:
    those the decision named when it was owed (its ``eligible``: the unit that earned it,
    or the units of the battle's roster the reward allows, ruling 77) that still may."""
    bonus = VictorBonus.model_validate(row.payload["bonus"])
    holder = str(row.card_id) if row.card_id else None
    allowed = triggers.reward_units(force, holder, bonus, book)
    if "eligible" not in row.payload:  # owed before issue 47: every unit the reward allows
        return allowed
    named = {str(i) for i in row.payload["eligible"]}
    return tuple(i for i in allowed if i in named)


_TARGET_WORDS = {
    BonusTarget.CHARACTER: "a CHARACTER",
    BonusTarget.NEW_CHARACTER: "a CHARACTER",
    BonusTarget.NON_CHARACTER_VEHICLE_MONSTER: "a unit that is no CHARACTER, VEHICLE or MONSTER",
}


def checked_answer(
    row: Decision, force: OrderOfBattle, answer: dict[str, Any], book: Rulebook
) -> dict[str, Any]:
    """The answer with each order for a unit naming one the reward allows: left out, the
    unit that earned it; another is refused (``reward_unit_not_eligible``)."""
    allowed = units(row, force, book)
    bonus = VictorBonus.model_validate(row.payload["bonus"])
    names = {c.id: c.name for c in force.cards}
    orders = []
    for index, order in enumerate(answer.get("requisitions", [])):
        requisition = next((r for r in book.requisitions if r.id == order.get("requisition")), None)
        if requisition is None or requisition.target != RequisitionTarget.UNIT:
            orders.append(order)
            continue
        card_id = order.get("card_id")
        if card_id is None and row.card_id is not None:
            card_id = row.card_id
            order = {**order, "card_id": card_id}
        if card_id is not None and str(card_id) not in allowed:
            raise DomainError(
                "reward_unit_not_eligible",
                _refusal(row, names, str(card_id), allowed, bonus, requisition.name),
                status=422,
                field=f"requisitions[{index}].card_id",
            )
        orders.append(order)
    return {**answer, "requisitions": orders} if orders else answer


def _refusal(
    row: Decision,
    names: Mapping[str, str],
    card_id: str,
    allowed: tuple[str, ...],
    bonus: VictorBonus,
    requisition: str,
) -> str:
    who = names.get(card_id, f"Unit {card_id}")
    source = source_words(row.payload)
    if row.card_id is not None:
        holder = names.get(str(row.card_id), f"unit {row.card_id}")
        why = "" if allowed else f" ({holder} may not take {requisition} now)"
        return (
            f"{who} cannot take {requisition}: it is the reward of {source}, which "
            f"{holder} earned, and only {holder} may take it{why}."
        )
    kind = _TARGET_WORDS.get(getattr(bonus.effect, "target", BonusTarget.ANY_UNIT), "a unit")
    listed = ", ".join(names.get(i, i) for i in allowed) or "none of the force's units now"
    return (
        f"{who} cannot take {requisition}, the reward of {source}: it goes to {kind} "
        f"that may take it ({listed})."
    )
