"""Campaign standings: every force's record, Crusade points and supply, in three queries
whatever the number of forces, units or battles (one more where the campaign musters by
points: the kept lines count Power Rating)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlmodel import Session, col, func, select

from app.db.models import Card, Force, ForceStanding
from app.services.campaigns import territories
from app.services.forces.forces import get_campaign
from app.services.packs import rulebooks


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
    territories: int = 0  # held on the campaign map (issue 23)
    muster_by: str = "power_level"  # what supply counts: Power Rating or points


def standings(session: Session, *, campaign_id: int) -> list[Standing]:
    """One line per force, read from the lines kept as battles are recorded (app.services.
    totals): the cost follows the number of forces, never the campaign's past."""
    get_campaign(session, campaign_id)
    rows = session.exec(
        select(Force, ForceStanding)
        .outerjoin(ForceStanding, col(ForceStanding.force_id) == col(Force.id))
        .where(Force.campaign_id == campaign_id)
        .order_by(col(Force.id))
    ).all()
    held = territories.held_by_force(session, campaign_id)
    table = [
        replace(_standing(force, line), territories=held.get(force.id or 0, 0))
        for force, line in rows
    ]
    if rulebooks.campaign_book(session, campaign_id).numbers.muster_by == "points":
        points = _points_used(session, campaign_id)
        table = [
            replace(s, supply_used=points.get(s.force_id, 0), muster_by="points") for s in table
        ]
    return sorted(table, key=lambda s: (-s.wins, -s.draws, -s.crusade_points, s.name))


def _standing(force: Force, line: ForceStanding | None) -> Standing:
    assert force.id is not None
    line = line or ForceStanding(force_id=force.id, campaign_id=force.campaign_id)
    return Standing(
        force_id=force.id,
        name=force.name,
        player_name=force.player_name,
        crusade_faction=force.crusade_faction,
        battles=force.battle_tally,
        wins=line.wins,
        draws=line.draws,
        losses=line.losses,
        crusade_points=line.crusade_points,
        supply_used=line.supply_used,
        supply_limit=force.supply_limit,
        requisition_points=force.requisition_points,
        units=line.units,
    )


def _points_used(session: Session, campaign_id: int) -> dict[int, int]:
    """Each force's live units' points (a unit without points counts none, ruling 57)."""
    rows = session.exec(
        select(Card.force_id, func.coalesce(func.sum(Card.points), 0))
        .join(Force, col(Force.id) == col(Card.force_id))
        .where(Force.campaign_id == campaign_id, col(Card.removed).is_(False))
        .group_by(col(Card.force_id))
    ).all()
    return {force_id: int(points or 0) for force_id, points in rows}
