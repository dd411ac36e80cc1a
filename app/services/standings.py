"""Campaign standings: every force's record, Crusade points and supply, in three queries
whatever the number of forces or units."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sqlmodel import Session, col, select

from app.db.models import Battle, BattleSide, Card, Force
from app.services.convert import card_value
from app.services.forces import get_campaign


@dataclass(frozen=True)
class Standing:
    force_id: int
    name: str
    player_name: str
    crusade_faction: str
    battles: int
    wins: int
    draws: int
    losses: int
    crusade_points: int
    supply_used: int
    supply_limit: int
    requisition_points: int
    units: int


def standings(session: Session, *, campaign_id: int) -> list[Standing]:
    get_campaign(session, campaign_id)
    forces = session.exec(
        select(Force).where(Force.campaign_id == campaign_id).order_by(col(Force.id))
    ).all()
    cards = session.exec(
        select(Card)
        .join(Force, col(Force.id) == col(Card.force_id))
        .where(Force.campaign_id == campaign_id, col(Card.removed).is_(False))
    ).all()
    results = session.exec(
        select(BattleSide.force_id, BattleSide.won, Battle.outcome)
        .join(Battle, col(Battle.id) == col(BattleSide.battle_id))
        .where(Battle.campaign_id == campaign_id, Battle.status == "resolved")
    ).all()
    by_force: dict[int, list[Card]] = defaultdict(list)
    for card in cards:
        by_force[card.force_id].append(card)
    record: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
    for force_id, won, outcome in results:
        record[force_id][0 if won else 1 if outcome == "draw" else 2] += 1
    table = [_standing(f, by_force[f.id or 0], record[f.id or 0]) for f in forces]
    return sorted(table, key=lambda s: (-s.wins, -s.draws, -s.crusade_points, s.name))


def _standing(force: Force, cards: list[Card], record: list[int]) -> Standing:
    assert force.id is not None
    wins, draws, losses = record
    return Standing(
        force_id=force.id,
        name=force.name,
        player_name=force.player_name,
        crusade_faction=force.crusade_faction,
        battles=force.battle_tally,
        wins=wins,
        draws=draws,
        losses=losses,
        crusade_points=sum(card_value(c).crusade_points for c in cards),
        supply_used=sum(c.power_rating for c in cards),
        supply_limit=force.supply_limit,
        requisition_points=force.requisition_points,
        units=len(cards),
    )
