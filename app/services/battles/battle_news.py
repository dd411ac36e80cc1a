"""What a recorded battle did, for its ``battle_recorded`` event: per force the result, VP,
RP and Crusade points after; per unit the XP gained and held, the rank reached, whether it
was destroyed and what its Out of Action test came to, and the honours and scars it is owed.
A bot posts "Grukk: +6 XP → Blooded" from the event alone, without reading anything back."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from app.db.models import Battle, BattleSide, Card, Decision, Force
from app.services.campaigns import kept_totals


def what_it_did(
    session: Session,
    battle: Battle,
    sides: list[BattleSide],
    cards: dict[int | None, Card] | None = None,
    owed: list[tuple[int, int | None, str]] | None = None,
) -> list[dict[str, Any]]:
    """One entry per side, in the battle's order; called once the result is applied (the
    cards, the forces and the pending decisions are as the battle left them). ``cards``:
    the rostered units, and ``owed``: the battle's pending decisions (force, card, kind),
    when the caller holds them already."""
    session.flush()  # the standings lines move at flush: the Crusade points after count all
    roster = [card_id for side in sides for card_id in side.roster]
    if cards is None:
        query = select(Card).where(col(Card.id).in_(roster))
        cards = {c.id: c for c in session.exec(query).all()}
    if owed is None:
        owed = list(
            session.exec(
                select(Decision.force_id, Decision.card_id, Decision.kind).where(
                    Decision.battle_id == battle.id, Decision.status == "pending"
                )
            ).all()
        )
    return [_side(session, battle, side, cards, owed) for side in sides]


def _side(
    session: Session,
    battle: Battle,
    side: BattleSide,
    cards: dict[int | None, Card],
    owed: Any,
) -> dict[str, Any]:
    force = session.get(Force, side.force_id)
    assert force is not None
    report = side.report
    result = "won" if side.won else ("draw" if battle.outcome == "draw" else "lost")
    return {
        "force_id": side.force_id,
        "result": result,
        "victory_points": side.victory_points,
        "requisition_points": force.requisition_points,
        "crusade_points": kept_totals.standing_of(session, side.force_id).crusade_points,
        "victor_bonuses_owed": sum(
            1 for f, card, _kind in owed if f == side.force_id and card is None
        ),
        "units": [_unit(card_id, cards.get(card_id), report, owed) for card_id in side.roster],
    }


def _unit(card_id: int, card: Card | None, report: dict[str, Any], owed: Any) -> dict[str, Any]:
    key = str(card_id)
    entered: dict[str, Any] = next(
        (u for u in report.get("units", []) if u.get("card_id") == card_id), {}
    )
    promotions = [p["rank"] for p in report.get("promotions", []) if p["card_id"] == card_id]
    mine = [kind for _f, card, kind in owed if card == card_id]
    return {
        "card_id": card_id,
        "name": card.name if card else f"Unit {card_id}",
        "xp_gained": int(report.get("experience", {}).get(key, 0)),
        "xp": card.xp if card else 0,
        "rank": card.rank if card else None,
        "rank_reached": promotions[-1] if promotions else None,
        "destroyed": bool(entered.get("destroyed")),
        "out_of_action": _out_of_action(card_id, report, "out_of_action" in mine),
        "honours_owed": mine.count("battle_honour"),
        "scars_owed": mine.count("battle_scar"),
    }


def _out_of_action(card_id: int, report: dict[str, Any], pending: bool) -> str | None:
    """None (not tested), passed, devastating_blow, battle_scar, or pending (the player has
    still to choose; the unit's XP from the battle waits for that choice)."""
    test = next((t for t in report.get("tests", []) if t["card_id"] == card_id), None)
    if test is None:
        return None
    if test["passed"]:
        return "passed"
    if pending:
        return "pending"
    if any(b["card_id"] == card_id for b in report.get("devastating_blows", [])):
        return "devastating_blow"
    return "battle_scar"
