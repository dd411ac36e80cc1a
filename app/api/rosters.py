"""JSON route for importing a BattleScribe / New Recruit roster into an Order of Battle."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, Query, Response, UploadFile, status

from app.db.session import SessionDep
from app.edge import present
from app.edge.schemas.rosters import (
    RosterCardPublic,
    RosterChangePublic,
    RosterImportPublic,
    RosterPreviewPublic,
    RosterSkippedPublic,
    RosterUnitPublic,
)
from app.routing import OneHopRoute
from app.services.rosters import roster_import
from app.services.rosters.roster_import import RosterPreview
from app.services.rosters.roster_parse import read_upload

router = APIRouter(tags=["campaigns"], route_class=OneHopRoute)


@router.post(
    "/forces/{force_id}/roster",
    summary="Import a roster (.ros / .rosz, 9th edition): preview, or add its units",
    response_model=RosterImportPublic | RosterPreviewPublic,
    responses={
        201: {
            "model": RosterImportPublic,
            "description": "Units added as Crusade cards (200: a preview, or nothing new to add)",
        }
    },
)
def import_roster(
    force_id: int,
    session: SessionDep,
    response: Response,
    file: Annotated[UploadFile, File(description="The roster: .ros (XML) or .rosz (zip)")],
    preview: Annotated[
        bool, Query(description="Only answer what would be added; change nothing")
    ] = False,
    units: Annotated[
        list[str] | None,
        Form(
            description="Roster keys of the units to add (default: every new unit that can "
            "join, i.e. without a `problem`)"
        ),
    ] = None,
    buy: Annotated[
        list[str] | None,
        Form(description="Offered requisitions to buy, as `<key>:warlord_trait` / `<key>:relic`"),
    ] = None,
    update: Annotated[
        list[str] | None,
        Form(
            description="Keys of units already in the Order of Battle whose card to bring up "
            "to this roster through their `update_requisitions` (then `units` defaults to none)"
        ),
    ] = None,
) -> RosterImportPublic | RosterPreviewPublic:
    data = read_upload(file.file)
    if preview:
        return preview_public(roster_import.preview(session, force_id=force_id, data=data))
    added = roster_import.add(
        session, force_id=force_id, data=data, units=units, buy=buy, update=update
    )
    if added.cards:  # like every POST that creates something (README: status codes)
        response.status_code = status.HTTP_201_CREATED
    return RosterImportPublic(
        roster=preview_public(added.preview),
        cards=[present.card(c) for c in added.cards],
        requisitions=list(added.requisitions),
        updated_card_ids=list(added.updated),
    )


def preview_public(shown: RosterPreview) -> RosterPreviewPublic:
    roster = shown.roster
    return RosterPreviewPublic(
        name=roster.name,
        game_system=roster.game_system,
        factions=list(roster.factions),
        detachments=list(roster.detachments),
        units=[
            RosterUnitPublic(
                key=line.unit.key,
                name=line.unit.name,
                datasheet=line.unit.datasheet,
                power_rating=line.unit.power_rating,
                points=line.unit.points,
                keywords=list(line.unit.keywords),
                faction_keywords=list(line.unit.faction_keywords),
                battlefield_role=line.unit.battlefield_role,
                models=list(line.unit.models),
                wargear=list(line.unit.wargear),
                psychic_powers=list(line.unit.psychic_powers),
                warlord_trait=line.unit.warlord_trait,
                relic=line.unit.relic,
                warlord=line.unit.warlord,
                detachment=line.unit.detachment,
                present_card_id=line.card_id,
                offered_requisitions=list(line.offered),
                changes=[
                    RosterChangePublic(field=c.field, card=c.card, roster=c.roster)
                    for c in line.update.changes
                ],
                update_requisitions=[o.requisition for o in line.update.orders],
                update_refused=line.update_refused,
                not_applied=list(line.update.not_applied),
                problem=line.problem,
            )
            for line in shown.lines
        ],
        unreadable=[
            RosterSkippedPublic(
                key=u.key, name=u.name, reason=u.reason, power_rating=u.power_rating
            )
            for u in roster.unreadable
        ],
        new_power=shown.new_power,
        read_power=roster.read_power,
        roster_power_level=roster.total_power,
        roster_points=roster.total_points,
        supply_used=shown.supply_used,
        supply_limit=shown.supply_limit,
        requisition_points=shown.requisition_points,
        missing_cards=[
            RosterCardPublic(id=c.id, name=c.name, power_rating=c.power_rating)
            for c in shown.missing
            if c.id is not None
        ],
    )
