"""Typed views of what the database keeps as JSON (a side's report, a decision, a
requisition's order, a history event), so every answer has a schema a client can generate
from. Stored JSON keys cards by string id; the API gives integer ids in lists."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from app.db.models import BattleSide, Decision, Event, RequisitionPurchase
from app.edge.schemas.battles import (
    SidePublic,
    SideReportPublic,
)
from app.edge.schemas.decisions import (
    DecisionAnswerPublic,
    DecisionOfferPublic,
    DecisionPayload,
    DecisionPublic,
    PackOfferPublic,
)
from app.edge.schemas.feed import EventPublic
from app.edge.schemas.requisitions import RequisitionDetails, RequisitionPublic
from app.services.battles import decisions
from app.services.feed.feed_items import event_details


def side(row: BattleSide) -> SidePublic:
    return SidePublic(
        force_id=row.force_id,
        role=row.role,
        roster=list(row.roster),
        agendas=list(row.agendas),
        warlord_card_id=row.warlord_card_id,
        crusade_points=row.crusade_points,
        bonus_command_points=row.bonus_command_points,
        victory_points=row.victory_points,
        painted=row.painted,
        won=row.won,
        report=side_report(row.report) if row.report else None,
    )


def side_report(report: dict[str, Any]) -> SideReportPublic:
    """One validation of the whole tree: pydantic-core builds the nested models itself,
    where a Python call per unit, test and roll cost a list of 50 battles 1,360 of them
    (issue 50: half of building the list afresh after a result)."""
    gains = report.get("gains", {})
    return SideReportPublic.model_validate(
        {
            "units": report.get("units", []),
            "tests": report.get("tests", []),
            "devastating_blows": report.get("devastating_blows", []),
            "experience": [
                {"card_id": int(card_id), "xp_gained": xp, "gain": gains.get(card_id)}
                for card_id, xp in report.get("experience", {}).items()
            ],
            "promotions": report.get("promotions", []),
            "dice": [{"sides": s, "value": v} for s, v in report.get("dice", [])],
        }
    )


def decision(
    row: Decision,
    offer: decisions.Offer | None = None,
    pack_entries: Sequence[Any] = (),
    full_offer: dict[str, Any] | None = None,
) -> DecisionPublic:
    """A decision as the API gives it; ``offer`` (a pending Battle Honour's, from
    ``decisions.offers``) says what its answer accepts now, ``pack_entries`` (from
    ``decisions.pack_offers``) the rule packs' entries it offers."""
    assert row.id is not None
    payload = dict(row.payload)
    if offer is not None:
        payload["eligible"], payload["categories"] = offer.eligible, offer.categories
    reason = str(payload.get("reason") or "")
    if reason.startswith("rank:"):  # stored as "rank:<id>"; the API gives the rank apart
        payload["reason"], payload["rank"] = "rank", reason.removeprefix("rank:")
    answer = dict(row.answer) if row.answer else None
    if answer is not None:
        answer["requisitions"] = [_order(o) for o in answer.get("requisitions", [])]
    return DecisionPublic(
        id=row.id,
        force_id=row.force_id,
        battle_id=row.battle_id,
        card_id=row.card_id,
        kind=row.kind,
        payload=DecisionPayload.model_validate(payload),
        status=row.status,
        answer=DecisionAnswerPublic.model_validate(answer) if answer is not None else None,
        pack_entries=[_offer(o) for o in pack_entries],
        offer=DecisionOfferPublic.model_validate(full_offer) if full_offer is not None else None,
    )


def _order(data: dict[str, Any]) -> dict[str, Any]:
    card_id = data.get("card_id")
    return {**data, "card_id": int(card_id) if card_id is not None else None}


def requisition(row: RequisitionPurchase) -> RequisitionPublic:
    assert row.id is not None
    return RequisitionPublic(
        id=row.id,
        force_id=row.force_id,
        card_id=row.card_id,
        requisition=row.requisition,
        requisition_points_spent=row.requisition_points_spent,
        crusade_points_gained=row.crusade_points_gained,
        details=RequisitionDetails.model_validate(_order(row.details)),
        created_at=row.created_at,
    )


def event(row: Event) -> EventPublic:
    assert row.id is not None
    return EventPublic(
        id=row.id,
        kind=row.kind,
        force_id=row.force_id,
        battle_id=row.battle_id,
        payload=event_details(row.payload),
        created_at=row.created_at,
    )


def _offer(offer: Any) -> PackOfferPublic:
    data = asdict(offer)
    data["results"] = [{"low": lo, "high": hi, "entry": e} for lo, hi, e in offer.results]
    return PackOfferPublic.model_validate(data)
