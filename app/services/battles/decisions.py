"""Pending decisions: stored from the rules' decision values and answered by players."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from sqlalchemy import insert
from sqlmodel import Session, col, select

from app.db.locks import for_change
from app.db.models import Battle, Card, Decision, Force, insert_values, utcnow
from app.errors import DomainError, NotFound
from app.rules import aftermath as after_rules
from app.rules import eligibility
from app.rules.aftermath import (
    Aftermath,
    BattleHonourDecision,
    BattleScarDecision,
    OutOfActionDecision,
    VictorBonusDecision,
)
from app.rules.data import (
    BonusTarget,
    FreeRequisitions,
    HonourCategory,
    Quest,
    Rulebook,
    VictorBonus,
)
from app.rules.dice import Dice, DieRoll
from app.rules.errors import RuleError
from app.rules.experience import ExperienceGain
from app.rules.honours import HonourRequest, WeaponChoice
from app.rules.out_of_action import Consequence
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition
from app.services.battles import gains
from app.services.battles import offers as offering
from app.services.feed import history
from app.services.fields import request_fields
from app.services.forces.convert import write_force
from app.services.forces.forces import add_joined, load_force
from app.services.packs import pack_reward, rulebooks, thresholds


def store(
    session: Session, *, force_id: int, battle_id: int | None, pending: tuple[Any, ...]
) -> None:
    """One force's new decisions (a requisition's, a pack's): see ``store_owed``."""
    _insert(session, battle_id, [(force_id, pending)])


_Stored = tuple[int, int, str, int | None, Any]  # id, force, kind, card, payload


@dataclass(frozen=True)
class Owed:
    """What one side's post-battle sequence leaves its player: the decisions, and the force
    as the rules left it (which Battle Honours still have a unit to take them)."""

    force: Force
    pending: tuple[Any, ...]
    value: Any
    book: Rulebook


def store_owed(
    session: Session, *, battle_id: int, owed: list[Owed]
) -> list[tuple[int, int | None, str]]:
    """Both sides' decisions of a battle in one INSERT, then the Battle Honours no unit can
    take any more cancelled, read in one query (issue 50: two statements fewer a result).
    The battle's decisions still pending (force, card, kind), in the order they were made:
    what the feed's news of the battle counts, without reading them back."""
    stored = _insert(session, battle_id, [(o.force.id or 0, o.pending) for o in owed])
    cancelled = _lapse(session, [(o.force, o.value, o.book) for o in owed])
    return [
        (force_id, card_id, kind) for i, force_id, kind, card_id, _ in stored if i not in cancelled
    ]


def _insert(
    session: Session, battle_id: int | None, owed: list[tuple[int, tuple[Any, ...]]]
) -> list[_Stored]:
    """One INSERT however many decisions (RETURNING their ids, which the history needs; the
    ORM would send SQLite one INSERT per row). Rows inserted this way are not seen by the
    flush hooks, so each force's version is raised here (anything cached for it shows the
    decisions as pending)."""
    rows = [_row(force_id, battle_id, d) for force_id, pending in owed for d in pending]
    if not rows:
        return []
    made = session.execute(
        # render_nulls: a victor bonus (no card) goes in the same INSERT as the units' rows
        insert(Decision)
        .returning(
            col(Decision.id),
            col(Decision.force_id),
            col(Decision.kind),
            col(Decision.card_id),
            col(Decision.payload),
        )
        .execution_options(render_nulls=True),
        rows,
    ).all()
    stored: list[_Stored] = sorted(tuple(row) for row in made)
    forces: dict[int, Force] = {}
    for force_id, pending in owed:
        force = session.get(Force, force_id) if pending else None
        if force is not None:  # the caller holds the force locked
            force.version += 1
            session.add(force)
            forces[force_id] = force
    for decision_id, force_id, kind, card_id, payload in stored:
        history.record(
            session,
            campaign_id=forces[force_id].campaign_id,
            force_id=force_id,
            battle_id=battle_id,
            kind="decision_pending",
            decision_id=decision_id,
            decision=kind,
            card_id=card_id,
            **_source_names(payload),
        )
    return stored


def _source_names(payload: Any) -> dict[str, str]:
    """The threshold or quest that owes a decision, by name (``threshold_name``...)."""
    found = payload if isinstance(payload, dict) else {}
    return {
        f"{k}_name": v["name"]
        for k, v in found.items()
        if k in ("threshold", "quest") and isinstance(v, dict)
    }


def _row(force_id: int, battle_id: int | None, decision: Any) -> dict[str, Any]:
    card: str | None
    if isinstance(decision, OutOfActionDecision):
        payload: dict[str, Any] = {
            "gain": asdict(decision.gain),
            "options": [o.value for o in decision.options],
        }
        kind, card = "out_of_action", decision.card_id
    elif isinstance(decision, BattleScarDecision):
        payload, kind, card = {}, "battle_scar", decision.card_id
    elif isinstance(decision, BattleHonourDecision):
        payload = {
            "reason": decision.reason,
            "categories": [c.value for c in decision.categories],
            "eligible": [int(i) for i in decision.eligible],
        }
        kind, card = "battle_honour", decision.card_id
    else:
        assert isinstance(decision, VictorBonusDecision)
        payload = {"bonus": decision.bonus.model_dump(mode="json")}
        if decision.threshold is not None:  # owed by a pack's threshold or quest, no victory
            t = decision.threshold
            source = "quest" if isinstance(t, Quest) else "threshold"
            payload[source] = {"id": t.id, "name": t.name, "pack": t.pack}
            payload["eligible"] = [int(i) for i in decision.eligible]  # issue 47
        kind, card = "victor_bonus", decision.card_id
    return insert_values(
        Decision,
        force_id=force_id,
        battle_id=battle_id,
        card_id=int(card) if card else None,
        kind=kind,
        payload=payload,
    )


def get_decision(session: Session, decision_id: int) -> Decision:
    row = for_change(session, Decision, decision_id)
    if row is None:
        raise NotFound("decision_not_found", f"There is no decision {decision_id}.")
    return row


def find_decision(session: Session, decision_id: int) -> Decision | None:
    return session.get(Decision, decision_id)


def battle_of(session: Session, row: Decision) -> Battle | None:
    """The battle a decision comes from, if any."""
    return session.get(Battle, row.battle_id) if row.battle_id else None


def waiting_at_table(session: Session, *, battle_id: int, user_id: int) -> list[Decision]:
    """The decisions of ``battle_id`` still waiting for ``user_id`` (the forces they own),
    oldest first: what an opponent answers on the recorder's phone."""
    query = (
        select(Decision)
        .join(Force, col(Force.id) == col(Decision.force_id))
        .where(Decision.battle_id == battle_id, Decision.status == "pending")
        .where(Force.owner_id == user_id)
        .order_by(col(Decision.id))
    )
    return list(session.exec(query).all())


def check_table_answer(session: Session, row: Decision, *, user_id: int, battle_id: int) -> None:
    """A decision answered with a table pass must be the pass holder's, from that battle."""
    force = session.get(Force, row.force_id)
    if row.battle_id != battle_id or force is None or force.owner_id != user_id:
        raise DomainError(
            "table_pass_not_for_this",
            "The opponent who confirmed at the table can answer only their own decisions "
            "of that battle on this phone.",
            status=403,
        )


def list_decisions(
    session: Session,
    *,
    force_id: int,
    status: str | None,
    after: int | None = None,
    limit: int | None = None,
) -> list[Decision]:
    """Oldest first; ``after`` (a decision id) and ``limit`` give a page by key."""
    query = select(Decision).where(Decision.force_id == force_id)
    if status:
        query = query.where(Decision.status == status)
    if after is not None:
        query = query.where(col(Decision.id) > after)
    query = query.order_by(col(Decision.id))
    if limit is not None:
        query = query.limit(limit)
    return list(session.exec(query).all())


def answer(session: Session, *, decision_id: int, answer: dict[str, Any], dice: Dice) -> Decision:
    """Settle a pending decision with the player's answer; the rules validate it."""
    row = get_decision(session, decision_id)
    if row.status == "cancelled":
        why = CANCELLED_BECAUSE.get(str(row.payload.get("cancelled_because")), "")
        raise DomainError(
            "decision_cancelled",
            f"Decision {decision_id} was cancelled{': ' + why if why else ''}; there is "
            "nothing to answer.",
            status=409,
        )
    if row.status != "pending":
        raise DomainError(
            "decision_already_answered",
            f"Decision {decision_id} is {row.status}; it cannot be answered again.",
            status=409,
        )
    view = load_force(session, row.force_id)
    book = rulebooks.book_of(session, view.force)
    recorded = _RecordedDice(dice)
    before = _entry_ids(view.cards)
    try:
        if row.kind == "victor_bonus" and not pack_reward.owed_by_pack(row.payload):
            _check_new_character(session, row, answer)
            _check_took_part(session, row, answer)
        with request_fields(_ANSWER_FIELDS.get(row.kind, {})):
            if row.kind == "victor_bonus" and pack_reward.owed_by_pack(row.payload):
                answer = pack_reward.checked_answer(row, view.value, answer, book)  # issue 47
            force, follow_ups = _apply(row, view.value, answer, recorded, book)
    except RuleError as refused:
        # issue 46: what the decision accepts as things stand, so a bot whose offer another
        # answer changed can answer again without asking
        refused.extra = {"offer": offer_of_row(session, row, view.value, book)}
        raise
    force, _promoted, owed = thresholds.after_command(
        session,
        campaign_id=view.force.campaign_id,
        force_id=row.force_id,
        before=view.value,
        after=force,
        book=book,
        battle_id=row.battle_id,
    )
    follow_ups = tuple(follow_ups) + owed
    # a free requisition's add_unit (a pack's, issue 38): the new unit becomes a row of its own
    known = {str(c.id) for c in view.cards}
    joined = [c for c in force.cards if c.id not in known]
    force = replace(force, cards=tuple(c for c in force.cards if c.id in known))
    write_force(view.force, view.cards, force)
    added = add_joined(session, view.force.campaign_id, row.force_id, joined, row.battle_id)
    # issue 12: what was rolled and what came of it, for the page to say after "roll for it"
    outcome = {"rolled": recorded.rolls, "gained": sorted(_entry_ids(view.cards) - before)}
    if added:  # issue 38: the units it brought, which a revert of its battle takes away
        outcome["joined"] = added
    row.status, row.answer = "answered", {**answer, **outcome}
    row.answered_at = utcnow()
    session.add(row)
    history.record(
        session,
        campaign_id=view.force.campaign_id,
        force_id=row.force_id,
        battle_id=row.battle_id,
        kind="decision_answered",
        decision_id=row.id,
        decision=row.kind,
        card_id=row.card_id,
        answer=answer,
        **_source_names(row.payload),
        **_outcome(row, answer, view.value, force, recorded.rolls),
    )
    gains.record_gains(session, view, after=force, battle_id=row.battle_id)
    store(session, force_id=row.force_id, battle_id=row.battle_id, pending=follow_ups)
    session.flush()
    lapse_unanswerable(session, force=view.force, value=force, book=book)
    return row


# The rules' argument names, as DecisionAnswer names them, per kind of decision.
_ANSWER_FIELDS: dict[str, dict[str, str]] = {
    "out_of_action": {"choice": "consequence"},
    "battle_scar": {"choice": "scar"},
    "battle_honour": {"choice": "entries", "model": "weapon.model"},
}


class _RecordedDice:
    """Dice that remember each roll (purpose and value) for the answer's record."""

    def __init__(self, inner: Dice) -> None:
        self.inner = inner
        self.rolls: list[dict[str, Any]] = []

    def roll(self, sides: int, purpose: str, key: str = "") -> DieRoll:
        rolled = self.inner.roll(sides, purpose, key)
        self.rolls.append({"purpose": purpose, "sides": sides, "value": rolled.value})
        return rolled


def _entry_ids(cards: list[Card]) -> set[str]:
    """Every Battle Honour and Battle Scar the force's cards hold, as 'card:kind:entry'."""
    scars = {f"{c.id}:scar:{s['entry_id']}" for c in cards for s in c.scars or []}
    honours = {
        f"{c.id}:{h['category']}:{e}"
        for c in cards
        for h in c.honours or []
        for e in h["entry_ids"]
    }
    return scars | honours


_A_KIND = {
    "out_of_action": "an Out of Action",
    "battle_scar": "a Battle Scar",
    "battle_honour": "a Battle Honour",
    "victor_bonus": "a victor bonus",
}


def _need(answer: dict[str, Any], key: str, kind: str) -> Any:
    if answer.get(key) is None:
        raise DomainError(
            "decision_answer_incomplete",
            f"An answer to {_A_KIND.get(kind, kind.replace('_', ' '))} decision needs '{key}'.",
            status=422,
            field=key,
        )
    return answer[key]


def _apply(
    row: Decision, force: Any, answer: dict[str, Any], dice: Dice, book: Rulebook
) -> tuple[Any, tuple[Any, ...]]:
    card_id = str(row.card_id) if row.card_id else None
    if row.kind == "out_of_action":
        assert card_id is not None
        gain = ExperienceGain(**row.payload["gain"])
        result: Aftermath = after_rules.answer_out_of_action(
            force, card_id, gain, Consequence(_need(answer, "consequence", row.kind)), book, dice
        )
        return result.force, result.pending
    if row.kind == "battle_scar":
        assert card_id is not None
        changed = after_rules.answer_battle_scar(
            force, card_id, book, dice, answer.get("scar"), answer.get("table") or None
        )
        return changed, ()
    if row.kind == "battle_honour":
        decision = honour_decision(row)
        _need(answer, "category", row.kind)
        target = answer.get("card_id")
        changed = after_rules.answer_battle_honour(
            force,
            decision,
            honour_request(answer),
            book,
            dice,
            card_id=str(target) if target is not None else None,
        )
        return changed, ()
    return _victor_bonus(row, force, answer, book), ()


def honour_decision(row: Decision) -> BattleHonourDecision:
    """The rules' value of a stored Battle Honour decision."""
    return BattleHonourDecision(
        str(row.card_id) if row.card_id else None,
        row.payload["reason"],
        tuple(HonourCategory(c) for c in row.payload["categories"]),
        tuple(str(i) for i in row.payload["eligible"]),
    )


@dataclass(frozen=True)
class Offer:
    """What a pending Battle Honour decision accepts now: its units (for a victor bonus)
    and its categories. The answer is checked by the same rules (``honour_targets``), so a
    bot that picks from the offer is never refused for the unit."""

    eligible: list[int]
    categories: list[str]


def offers(
    session: Session, rows: list[Decision], views: dict[int, Any] | None = None
) -> dict[int, Offer]:
    """The offer of each pending Battle Honour decision among ``rows``, by decision id; one
    load per force concerned."""
    honours = [r for r in rows if r.status == "pending" and r.kind == "battle_honour"]
    found: dict[int, Offer] = {}
    for force_id in sorted({r.force_id for r in honours}):
        view = _view(session, force_id, views)
        book = rulebooks.book_of(session, view.force)
        for row in honours:
            if row.force_id == force_id and row.id is not None:
                found[row.id] = offer_of(view.value, row, book)
    return found


def offer_of(force: Any, row: Decision, book: Rulebook) -> Offer:
    """What a pending Battle Honour decision of ``force`` (the rules' value) accepts now."""
    decision = honour_decision(row)
    targets = after_rules.honour_targets(force, decision, book)
    return Offer(
        eligible=[int(i) for i in targets] if decision.card_id is None else [],
        categories=[c.value for c in after_rules.honour_categories(force, decision, book)],
    )


def offer_of_row(session: Session, row: Decision, force: Any, book: Rulebook) -> dict[str, Any]:
    """What a pending decision of ``force`` (the rules' value) offers now, in full (issue 46):
    the units, per category the entries and inputs, the requisitions' targets, the dice."""
    honour = honour_decision(row) if row.kind == "battle_honour" else None
    return offering.offer_of(session, row, force, book, honour)


def full_offers(
    session: Session, rows: Sequence[Decision], views: dict[int, Any] | None = None
) -> dict[int, dict[str, Any]]:
    """The full offer of each pending decision among ``rows``, by decision id; one load per
    force concerned."""
    pending = [r for r in rows if r.status == "pending" and r.id is not None]
    found: dict[int, dict[str, Any]] = {}
    for force_id in sorted({r.force_id for r in pending}):
        view = _view(session, force_id, views)
        book = rulebooks.book_of(session, view.force)
        for row in pending:
            if row.force_id == force_id and row.id is not None:
                found[row.id] = offer_of_row(session, row, view.value, book)
    return found


def _outcome(
    row: Decision, answer: dict[str, Any], before: Any, after: Any, rolls: list[dict[str, Any]]
) -> dict[str, Any]:
    """What an answer did, for its ``decision_answered`` event (issue 46): the consequence
    chosen, each unit's XP before and after (the decision's unit always, any other whose XP
    moved), the dice rolled, and each honour and scar gained with its unit. A bot keeps
    every card's XP from the feed alone with this and ``battle_recorded``."""
    old = {c.id: c for c in before.cards}
    unit = str(row.card_id or answer.get("card_id") or "")
    experience = [
        {"card_id": int(c.id), "xp_before": old[c.id].xp, "xp_after": c.xp}
        for c in after.cards
        if c.id in old and (c.id == unit or old[c.id].xp != c.xp)
    ]
    gained: list[dict[str, Any]] = []
    for card in after.cards:
        if card.id not in old or not card.id.isdigit():
            continue
        was = old[card.id]
        for honour in card.honours[len(was.honours) :]:
            gained.append(
                {
                    "card_id": int(card.id),
                    "kind": honour.category.value,
                    "entries": list(honour.entry_ids),
                    "weapon": honour.weapon,
                }
            )
        for scar in card.scars:
            if scar.entry_id not in was.scar_ids:
                gained.append(
                    {
                        "card_id": int(card.id),
                        "kind": "battle_scar",
                        "entries": [scar.entry_id],
                        "weapon": None,
                    }
                )
    found: dict[str, Any] = {"unit_xp": experience, "rolled": rolls, "gained": gained}
    if answer.get("consequence"):
        found["consequence"] = answer["consequence"]
    return found


def _view(session: Session, force_id: int, views: dict[int, Any] | None) -> Any:
    """A force as loaded once for the offers of one answer (``views``: shared by the calls
    that make one response), else loaded now."""
    if views is None:
        return load_force(session, force_id)
    if force_id not in views:
        views[force_id] = load_force(session, force_id)
    return views[force_id]


def lapse_unanswerable(session: Session, *, force: Force, value: Any, book: Rulebook) -> None:
    """Cancel the force's pending Battle Honours that no unit can take any more (ruling 71):
    the unit filled its six honours since, or every unit a victor bonus allowed did. Left
    pending, such a decision could never be answered and would hold the player's musters."""
    _lapse(session, [(force, value, book)])


def _lapse(session: Session, forces: list[tuple[Force, Any, Rulebook]]) -> set[int]:
    """``lapse_unanswerable`` for several forces, their decisions read in one query; the
    ids of those cancelled."""
    by_id = {force.id: (force, value, book) for force, value, book in forces}
    rows = session.exec(
        select(Decision)
        .where(
            col(Decision.force_id).in_(list(by_id)),
            Decision.status == "pending",
            Decision.kind == "battle_honour",
        )
        .order_by(col(Decision.id))
    ).all()
    cancelled: set[int] = set()
    for row in rows:
        force, value, book = by_id[row.force_id]
        if after_rules.honour_targets(value, honour_decision(row), book):
            continue
        cancelled.add(row.id or 0)
        row.status = "cancelled"
        row.payload = {**row.payload, "cancelled_because": "no_unit_can_take_it"}
        row.answered_at = utcnow()
        session.add(row)
        record_cancelled(session, row, campaign_id=force.campaign_id, reason="no_unit_can_take_it")
    return cancelled


def record_cancelled(session: Session, row: Decision, *, campaign_id: int, reason: str) -> None:
    """Tell the feed a pending decision will never be answered, and why (a bot that listed
    the pending decisions from the feed drops it)."""
    history.record(
        session,
        campaign_id=campaign_id,
        force_id=row.force_id,
        battle_id=row.battle_id,
        kind="decision_cancelled",
        decision_id=row.id,
        decision=row.kind,
        card_id=row.card_id,
        reason=reason,
    )


# Why a decision was cancelled, in words for the refusal of an answer to it.
CANCELLED_BECAUSE = {
    "battle_reverted": "its battle was reverted",
    "battle_called_off": "its battle was called off",
    "no_unit_can_take_it": "no unit can take this Battle Honour any more (ruling 71)",
}


def honour_request(answer: dict[str, Any]) -> HonourRequest:
    weapon = answer.get("weapon")
    return HonourRequest(
        category=HonourCategory(answer["category"]),
        choice=tuple(answer.get("entries") or ()),
        weapon=WeaponChoice(**weapon) if weapon else None,
        table=answer.get("table") or None,
    )


def _check_new_character(session: Session, row: Decision, answer: dict[str, Any]) -> None:
    """A bonus for a *new* CHARACTER (Retrieval) applies only to a CHARACTER, not a named
    character, added to the Order of Battle after the battle was recorded."""
    bonus = VictorBonus.model_validate(row.payload["bonus"])
    if getattr(bonus.effect, "target", None) != BonusTarget.NEW_CHARACTER:
        return
    for order in answer.get("requisitions", []):
        if not offering.is_new_character(session, row, int(order.get("card_id") or 0)):
            raise DomainError(
                "victor_bonus_needs_new_character",
                "This victor bonus is for a CHARACTER (not a named character) added to the "
                "Order of Battle after the battle.",
                status=422,
                field="requisitions",
            )


def _check_took_part(session: Session, row: Decision, answer: dict[str, Any]) -> None:
    """A free requisition for a CHARACTER of the battle (Cut Off the Head: one "that had
    Intel points allocated to it") goes only to a CHARACTER on this force's roster for that
    battle: the Intel points were shared among the CHARACTERs that took part (ruling 44)."""
    bonus = VictorBonus.model_validate(row.payload["bonus"])
    if getattr(bonus.effect, "target", None) != BonusTarget.CHARACTER or row.battle_id is None:
        return
    fought = offering.characters_that_fought(session, row)
    for index, order in enumerate(answer.get("requisitions", [])):
        card_id = int(order.get("card_id") or 0)
        if card_id not in fought:
            card = session.get(Card, card_id)
            name = card.name if card is not None else f"Unit {card_id}"
            raise DomainError(
                "victor_bonus_needs_character_that_fought",
                f"{name} did not take part in this battle as a CHARACTER, so it had no Intel "
                "points; this victor bonus is for a CHARACTER on the battle's roster.",
                status=422,
                field=f"requisitions[{index}].card_id",
            )


def _order(data: dict[str, Any]) -> RequisitionOrder:
    """An order from stored JSON: the rules name cards by string id."""
    fields = {k: v for k, v in data.items() if v is not None}
    if "card_id" in fields:
        fields["card_id"] = str(fields["card_id"])
    fields["replaced_weapons"] = tuple(fields.get("replaced_weapons", ()))
    fields["dice"] = tuple(fields.get("dice", ()))
    fields.setdefault("seed", secrets.randbelow(2**31))  # a pack's roll_table: the app's dice
    return RequisitionOrder(**fields)


def _victor_bonus(row: Decision, force: Any, answer: dict[str, Any], book: Rulebook) -> Any:
    """Free requisitions from a victor bonus: each order is checked as usual, but costs no
    RP (and, where the bonus says so, ignores the rank-up timing)."""
    bonus = VictorBonus.model_validate(row.payload["bonus"])
    effect = bonus.effect
    orders = [_order(o) for o in answer.get("requisitions", [])]
    allowed = list(getattr(effect, "requisitions", ()))
    for index, order in enumerate(orders):
        with request_fields({}, f"requisitions[{index}]."):
            force = _free_requisition(force, order, allowed, effect, book)
    return force


def _free_requisition(
    force: Any, order: RequisitionOrder, allowed: list[str], effect: Any, book: Rulebook
) -> Any:
    """One order of a victor bonus; ``allowed`` loses what it uses."""
    if order.requisition not in allowed:
        raise DomainError(
            "victor_bonus_requisition_invalid",
            f"This victor bonus does not grant {order.requisition}; it grants "
            f"{', '.join(allowed) or 'nothing more'}.",
            status=422,
            field="requisition",
        )
    allowed.remove(order.requisition)
    if getattr(effect, "mode", "all") == "one_of":
        allowed.clear()
    force, _purchase = purchase_requisition(
        force,
        order,
        PurchaseWindow(card_added=order.card_id),
        book,
        free=True,
        ignore_timing=getattr(effect, "ignores_rank_timing", False),
    )
    return force


# --- what a decision offers from the campaign's rule packs ---------------------------------


@dataclass(frozen=True)
class PackOffer:
    """A rule pack's entry a pending decision may be answered with."""

    category: str  # battle_trait, weapon_enhancement, psychic_fortitude, crusade_relic,
    # battle_scar or requisition (a victor bonus's free requisition); or "table" (issue 38)
    id: str
    name: str
    summary: str
    pack: str
    # a table: the category it is for, its dice, whether a result may be chosen, its rows
    table_of: str | None = None
    dice: str | None = None
    chosen: bool | None = None
    results: tuple[tuple[int, int, str], ...] = ()


def pack_offers(
    session: Session, rows: Sequence[Decision], views: dict[int, Any] | None = None
) -> dict[int, list[PackOffer]]:
    """For each pending decision of ``rows``: the pack entries it offers, as the website's
    decision page lists them (those the unit may take and does not hold yet, when the
    decision names its unit). A force's cards are read once, and only when its campaign's
    packs add something a decision could offer."""
    offers: dict[int, list[PackOffer]] = {}
    views = {} if views is None else views
    for row in rows:
        if row.status != "pending" or row.kind not in _OFFERING or row.id is None:
            continue
        force = session.get(Force, row.force_id)
        assert force is not None
        book = rulebooks.book_of(session, force)
        if not _packs_offer(book):
            continue
        if row.force_id not in views:
            views[row.force_id] = load_force(session, row.force_id)
        offers[row.id] = _offers(book, views[row.force_id], row)
    return offers


_OFFERING = ("battle_honour", "battle_scar", "victor_bonus")


def _packs_offer(book: Rulebook) -> bool:
    honours = book.honours
    return bool(
        honours.pack_battle_traits
        or honours.pack_psychic_fortitudes
        or honours.pack_weapon_enhancements
        or book.scars.pack_scars
        or any(r.pack for r in honours.crusade_relics)
        or any(r.pack for r in book.requisitions)
        or book.pack_tables
    )


def _offers(book: Rulebook, view: Any, row: Decision) -> list[PackOffer]:
    card_id = row.card_id
    eligible = [int(i) for i in row.payload.get("eligible", [])]
    if card_id is None and len(eligible) == 1:
        card_id = eligible[0]
    card = next((c for c in view.value.cards if c.id == str(card_id)), None)

    def fits(entry: Any, held: set[str]) -> bool:
        if card is None:
            return True
        if entry.id in held:
            return False
        return not entry.eligible or eligibility.meets(
            entry.eligible, card, view.value.counters, book
        )

    if row.kind == "battle_scar":
        held = card.scar_ids if card else set()
        return [
            _offer("battle_scar", e)
            for e in book.scars.pack_scars
            if fits(e, held) and not book.rolled_only("battle_scar", e.id)
        ] + _tables(book, "battle_scar", card, view.value.counters)
    if row.kind == "victor_bonus":
        effect = VictorBonus.model_validate(row.payload["bonus"]).effect
        named = set(effect.requisitions) if isinstance(effect, FreeRequisitions) else set()
        return [_offer("requisition", r) for r in book.requisitions if r.pack and r.id in named]
    categories = [HonourCategory(c) for c in row.payload.get("categories", [])] or list(
        HonourCategory
    )
    found: list[PackOffer] = []
    for category in categories:
        if card is not None and not _may_gain(category, card, book):
            continue
        held = card.honour_ids(category) if card else set()
        if category == HonourCategory.CRUSADE_RELIC:
            found += [
                _offer(category.value, r)
                for r in book.honours.crusade_relics
                if r.pack
                and r.withdrawn_by is None
                and (card is None or _may_bear(r, card, view.value.counters, book))
            ]
            continue
        found += [
            _offer(category.value, e)
            for e in book.honours.pack_entries(category)
            if fits(e, held) and not book.rolled_only(category.value, e.id)
        ]
        found += _tables(book, category.value, card, view.value.counters)
    return found


def _tables(book: Rulebook, category: str, card: Any, counters: Any) -> list[PackOffer]:
    """A rule pack's own tables of ``category`` the unit may roll on (answer with ``table``;
    ``entries``/``scar`` too to pick a result of a table players choose from)."""
    return [
        PackOffer(
            category="table",
            id=t.id,
            name=t.name,
            summary=t.summary or f"A {t.dice} table of {t.category.replace('_', ' ')}s",
            pack=t.pack,
            table_of=t.category,
            dice=t.dice,
            chosen=t.chosen,
            results=tuple((r.low, r.high, r.entry) for r in t.results),
        )
        for t in book.pack_tables
        if t.category == category
        and (card is None or not t.eligible or eligibility.meets(t.eligible, card, counters, book))
    ]


def _may_gain(category: HonourCategory, card: Any, book: Rulebook) -> bool:
    """Psychic Fortitudes are for PSYKERs and Crusade Relics for CHARACTERs, or any unit a
    pack's relic says (the rules refuse the others; the decision page leaves them out)."""
    if category == HonourCategory.PSYCHIC_FORTITUDE:
        return bool(card.has("PSYKER"))
    if category == HonourCategory.CRUSADE_RELIC:
        return bool(card.has("CHARACTER")) or any(
            r.bearer == "any_unit" for r in book.honours.crusade_relics
        )
    return True


def _may_bear(relic: Any, card: Any, counters: Any, book: Rulebook) -> bool:
    """A pack's relic the unit may bear: a CHARACTER unless the pack says any unit, with
    one of its keywords, meeting its expression (issue 38)."""
    if relic.bearer == "character" and not card.has("CHARACTER"):
        return False
    if relic.keywords_any and not any(card.has(k) for k in relic.keywords_any):
        return False
    return not relic.eligible or eligibility.meets(relic.eligible, card, counters, book)


def _offer(category: str, entry: Any) -> PackOffer:
    return PackOffer(
        category=category, id=entry.id, name=entry.name, summary=entry.summary, pack=entry.pack
    )
