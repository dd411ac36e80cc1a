"""JSON routes for the campaign map (issue 23): its territories, drawn by an organizer."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from app.api.plumbing.responses import located
from app.db.models import Territory
from app.db.session import SessionDep
from app.edge.schemas.campaigns import TerritoryIn, TerritoryPatch, TerritoryPublic
from app.routing import OneHopRoute
from app.services.campaigns import territories
from app.services.campaigns.territories import TerritoryChange

router = APIRouter(tags=["campaigns"], route_class=OneHopRoute)


def _public(row: Territory) -> TerritoryPublic:
    assert row.id is not None
    return TerritoryPublic(
        id=row.id,
        campaign_id=row.campaign_id,
        name=row.name,
        description=row.description,
        neighbours=list(row.neighbours),
        bonus=row.bonus,
        holder_force_id=row.holder_force_id,
    )


@router.get("/campaigns/{campaign_id}/territories", summary="The campaign map's territories")
def list_territories(campaign_id: int, session: SessionDep) -> list[TerritoryPublic]:
    return [_public(t) for t in territories.map_of(session, campaign_id)]


@router.post(
    "/campaigns/{campaign_id}/territories",
    status_code=status.HTTP_201_CREATED,
    summary="Add a territory to the map (an organizer): name, neighbours, a bonus, a holder",
)
def add_territory(
    campaign_id: int, body: TerritoryIn, session: SessionDep, response: Response
) -> TerritoryPublic:
    change = TerritoryChange(
        name=body.name,
        description=body.description,
        neighbours=body.neighbours,
        bonus=body.bonus,
        holder_force_id=body.holder_force_id,
    )
    row = territories.create(session, campaign_id=campaign_id, change=change)
    located(response, f"/campaigns/{campaign_id}/territories")
    return _public(row)


@router.patch(
    "/campaigns/{campaign_id}/territories/{territory_id}",
    summary="Change a territory (an organizer); `holder_force_id: null` leaves it unheld",
)
def edit_territory(
    campaign_id: int, territory_id: int, body: TerritoryPatch, session: SessionDep
) -> TerritoryPublic:
    sent = body.model_fields_set
    change = TerritoryChange(
        name=body.name,
        description=body.description,
        neighbours=body.neighbours,
        bonus=body.bonus,
        holder_force_id=body.holder_force_id,
        clear_holder="holder_force_id" in sent and body.holder_force_id is None,
    )
    row = territories.edit(
        session, campaign_id=campaign_id, territory_id=territory_id, change=change
    )
    return _public(row)


@router.delete(
    "/campaigns/{campaign_id}/territories/{territory_id}",
    summary="Remove a territory no battle was fought over (an organizer)",
)
def delete_territory(campaign_id: int, territory_id: int, session: SessionDep) -> TerritoryPublic:
    return _public(territories.delete(session, campaign_id=campaign_id, territory_id=territory_id))
