"""Buying Requisitions: the moment is worked out from the campaign's state, the rules
check timing, target and RP."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlmodel import Session, col, select

from app.db.models import Battle, BattleSide, RequisitionPurchase
from app.rules import quests
from app.rules.aftermath import VictorBonusDecision, honours_owed
from app.rules.data import Rulebook
from app.rules.order_of_battle import OrderOfBattle
from app.rules.requisitions import PurchaseWindow, RequisitionOrder, purchase_requisition
from app.rules.requisitions import RequisitionPurchase as Bought
from app.services.battles import decisions, gains
from app.services.feed import history
from app.services.forces.convert import write_force
from app.services.forces.forces import add_joined, load_force
from app.services.packs import rulebooks, thresholds


def purchase_window(
    session: Session, force_id: int, card_added: int | None = None
) -> PurchaseWindow:
    """During a battle nothing can be bought. CHARACTERs promoted since the force last
    mustered (in the battle it fought, or by a requisition's XP) may take Warlord Trait or
    Relic until it musters again (ruling 33)."""
    sides = session.exec(
        select(BattleSide, Battle)
        .join(Battle, col(Battle.id) == col(BattleSide.battle_id))
        .where(BattleSide.force_id == force_id, Battle.status != "reverted")
        .order_by(col(BattleSide.battle_id).desc())  # the force's sides newest first, by index
        .limit(1)
    ).all()
    added = str(card_added) if card_added else None
    if not sides:
        return PurchaseWindow(
            card_added=added, rank_gained=_promoted_by_purchases(session, force_id, None)
        )
    side, battle = sides[0]
    promoted = frozenset(str(p["card_id"]) for p in side.report.get("promotions", []))
    if battle.status != "resolved":
        promoted = frozenset()
    return PurchaseWindow(
        during_battle=battle.status in ("mustered", "proposed", "disputed"),
        card_added=added,
        rank_gained=promoted | _promoted_by_purchases(session, force_id, battle.created_at),
    )


def _promoted_by_purchases(
    session: Session, force_id: int, since: datetime | None
) -> frozenset[str]:
    """Units a requisition's XP promoted after the force's last muster (``since``)."""
    query = select(RequisitionPurchase.details).where(RequisitionPurchase.force_id == force_id)
    if since is not None:
        query = query.where(col(RequisitionPurchase.created_at) > since)
    return frozenset(str(c) for details in session.exec(query) for c in details.get("promoted", []))


def purchase(
    session: Session, *, force_id: int, order: RequisitionOrder, card_added: int | None = None
) -> RequisitionPurchase:
    view = load_force(session, force_id)
    window = purchase_window(session, force_id, card_added)
    book = rulebooks.book_of(session, view.force)
    rulebooks.check_in_scope(session, view.force, requisitions=[order.requisition])
    changed, bought = purchase_requisition(view.value, order, window, book)
    changed, promoted, owed = thresholds.after_command(
        session,
        campaign_id=view.force.campaign_id,
        force_id=force_id,
        before=view.value,
        after=changed,
        book=book,
    )
    bought = replace(bought, promotions=bought.promotions + tuple(promoted))
    known = {str(c.id) for c in view.cards}
    joined = [c for c in changed.cards if c.id not in known]  # a pack's add_unit effect
    write_force(
        view.force,
        view.cards,
        replace(changed, cards=tuple(c for c in changed.cards if c.id in known)),
    )
    add_joined(session, view.force.campaign_id, force_id, joined)
    row = RequisitionPurchase(
        force_id=force_id,
        card_id=int(order.card_id) if order.card_id else None,
        requisition=bought.requisition,
        requisition_points_spent=bought.requisition_points_spent,
        crusade_points_gained=bought.crusade_points_gained,
        details=_details(order) | _promotions(bought),
    )
    session.add(row)
    session.flush()
    history.record(
        session,
        campaign_id=view.force.campaign_id,
        force_id=force_id,
        kind="requisition_purchased",
        requisition=bought.requisition,
        card_id=row.card_id,
        requisition_points_spent=bought.requisition_points_spent,
        **_from_pack(book, bought.requisition, changed.counters, view.value.counters),
    )
    gains.record_purchase_moves(
        session,
        campaign_id=view.force.campaign_id,
        force_id=force_id,
        before=view.value,
        after=changed,
        book=book,
    )
    _say_quests(session, view.force.campaign_id, force_id, view.value, changed, book)
    was = {c.id: c for c in view.value.cards}
    for gone in sorted(changed.removed_card_ids - view.value.removed_card_ids):  # remove_unit
        history.record(
            session,
            campaign_id=view.force.campaign_id,
            force_id=force_id,
            kind="card_removed",
            card_id=int(gone),
            name=was[gone].name,
        )
    _owe_honours(session, view.force.campaign_id, force_id, changed, bought, book)
    # a threshold's free requisitions (its Battle Honours are owed with the purchase's)
    decisions.store(
        session,
        force_id=force_id,
        battle_id=None,
        pending=tuple(d for d in owed if isinstance(d, VictorBonusDecision)),
    )
    decisions.lapse_unanswerable(session, force=view.force, value=changed, book=book)
    return row


def _say_quests(
    session: Session,
    campaign_id: int,
    force_id: int,
    before: OrderOfBattle,
    after: OrderOfBattle,
    book: Rulebook,
) -> None:
    """A quest a requisition began (issue 38), said as a battle says it."""
    if not book.quests:
        return
    moves: list[tuple[dict[str, Any], tuple[str, dict[str, Any]]]] = [
        ({}, m) for m in gains.quest_moves(before.counters, after.counters, book)
    ]
    was = {c.id: c for c in before.cards}
    for card in after.cards:
        if card.id in was:
            unit: dict[str, Any] = {"card_id": int(card.id), "name": card.name}
            found = gains.quest_moves(was[card.id].counters, card.counters, book)
            moves += [(unit, m) for m in found]
    for unit, (kind, details) in moves:
        history.record(
            session, campaign_id=campaign_id, force_id=force_id, kind=kind, **unit, **details
        )


def _owe_honours(
    session: Session,
    campaign_id: int,
    force_id: int,
    force: OrderOfBattle,
    bought: Bought,
    book: Rulebook,
) -> None:
    """A rank a unit reached through the requisition (a rule pack's add_xp): said in the
    history as after a battle, and its Battle Honour owed as a decision of no battle
    (ruling 61)."""
    owed: list[Any] = []
    for promotion in bought.promotions:
        card = force.card(promotion.card_id)
        history.record(
            session,
            campaign_id=campaign_id,
            force_id=force_id,
            kind="rank_gained",
            card_id=int(card.id),
            name=card.name,
            rank=promotion.rank,
        )
    for card_id in dict.fromkeys(p.card_id for p in bought.promotions):
        mine = [p for p in bought.promotions if p.card_id == card_id]
        owed += honours_owed(force.card(card_id), mine, book)
    decisions.store(session, force_id=force_id, battle_id=None, pending=tuple(owed))


def _from_pack(
    book: Rulebook, requisition_id: str, counters: Mapping[str, int], before: Mapping[str, int]
) -> dict[str, Any]:
    """A rule pack's requisition: the event names its pack and the counters it changed."""
    requisition = book.requisition(requisition_id)
    if requisition.pack is None:
        return {}
    named = {"pack": requisition.pack, "requisition_name": requisition.name}
    changed = {
        k: v for k, v in counters.items() if before.get(k) != v and not quests.is_quest_key(k)
    }
    return named | {"counters": changed} if changed else named


def _promotions(bought: Bought) -> dict[str, Any]:
    """The units the purchase promoted: they open the Warlord Trait and Relic window."""
    promoted = sorted({int(p.card_id) for p in bought.promotions})
    return {"promoted": promoted} if promoted else {}


def _details(order: RequisitionOrder) -> dict[str, Any]:
    return {
        k: v
        for k, v in vars(order).items()
        if v not in (None, (), False) and k not in ("requisition", "dice", "seed")
    }
