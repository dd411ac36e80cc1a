"""JSON routes for campaigns, forces (Orders of Battle) and Crusade cards."""

from __future__ import annotations

import re
import tempfile
import unicodedata
from collections.abc import Hashable, Iterator
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Query, Request, Response, status
from fastapi.responses import StreamingResponse
from pydantic import TypeAdapter
from sqlalchemy import Engine

from app.api import reports
from app.api.export_schema import ExportDocument
from app.api.plumbing.cache import NOT_MODIFIED, Built, KeptRead, cached_read, kept_read
from app.api.plumbing.paging import Cursor, KeysetPage, Limit, keyset_page, page_of
from app.api.plumbing.responses import located
from app.db.models import Card
from app.db.session import SessionDep, session_scope
from app.edge import present
from app.edge.schemas.campaigns import CampaignCreate, CampaignPublic
from app.edge.schemas.feed import EventPublic
from app.edge.schemas.forces import (
    CardCreate,
    CardPublic,
    CardsCreate,
    CardsPublic,
    CardUpdate,
    ForceCreate,
    ForceSummary,
    ForceUpdate,
    OrderOfBattlePublic,
)
from app.edge.schemas.requisitions import requisition_order
from app.edge.sessions import CurrentPrincipal, OptionalPrincipal
from app.routing import OneHopRoute
from app.services.campaigns import standings, transfer, versions
from app.services.campaigns.photos import PhotoStore
from app.services.feed import history as events
from app.services.fields import request_fields
from app.services.forces import forces, requisitions, unit_entry
from app.services.packs import rulebooks

router = APIRouter(tags=["campaigns"], route_class=OneHopRoute)


def _force_key(force_id: int, _query: str, versions_now: tuple[int, int]) -> tuple[Hashable, str]:
    tag = "{}.{}".format(*versions_now)
    return ("force", force_id, tag), f'"force-{force_id}-v{tag}"'


# What the cached reads keep their bodies by (app/api/plumbing/cache.py KeptRead).
ORDER_OF_BATTLE = KeptRead(
    "force_id", versions.held_force_versions, versions.force_versions, _force_key
)
CARD = KeptRead(
    "card_id",
    versions.held_card_version,
    versions.card_version,
    lambda card_id, _query, v: (("card", card_id, v), f'"card-{card_id}-v{v}"'),
)
STANDINGS_READ = KeptRead(
    "campaign_id",
    versions.held_campaign_version,
    versions.campaign_version,
    lambda campaign_id, _query, v: (
        ("standings", campaign_id, v),
        f'"standings-{campaign_id}-v{v}"',
    ),
)


@router.post("/campaigns", status_code=status.HTTP_201_CREATED, summary="Start a campaign")
def create_campaign(
    body: CampaignCreate, principal: CurrentPrincipal, session: SessionDep, response: Response
) -> CampaignPublic:
    campaign = forces.create_campaign(session, **body.model_dump(), organizer_id=principal.user.id)
    located(response, f"/campaigns/{campaign.id}")
    return present.campaign(campaign)


@router.get("/campaigns", summary="List campaigns (a page by key: limit, cursor)")
def list_campaigns(
    request: Request,
    response: Response,
    session: SessionDep,
    principal: OptionalPrincipal,
    cursor: Cursor = None,
    limit: Limit = 50,
) -> KeysetPage[CampaignPublic]:
    viewer = principal.user if principal else None
    # A token limited to one campaign sees only that one, as everywhere else.
    only = principal.campaign_limit if principal else None
    rows, _total = forces.list_campaigns(
        session, offset=0, limit=limit + 1, viewer=viewer, only=only, after=cursor
    )
    return page_of(request, response, rows, limit, lambda c: c.id, present.campaign)


@router.get("/campaigns/{campaign_id}", summary="One campaign")
def get_campaign(campaign_id: int, session: SessionDep) -> CampaignPublic:
    return present.campaign(forces.get_campaign(session, campaign_id))


@router.post(
    "/campaigns/{campaign_id}/forces",
    status_code=status.HTTP_201_CREATED,
    summary="Start a Crusade force (5 RP, Supply Limit 50)",
)
def create_force(
    campaign_id: int,
    body: ForceCreate,
    principal: CurrentPrincipal,
    session: SessionDep,
    response: Response,
) -> ForceSummary:
    row = forces.create_force(
        session, campaign_id=campaign_id, **body.model_dump(), owner_id=principal.user.id
    )
    located(response, f"/forces/{row.id}")
    return present.force_summary(row, book=rulebooks.book_of(session, row))


@router.get(
    "/campaigns/{campaign_id}/forces",
    summary="The campaign's forces (a page by key: limit, cursor)",
)
def list_forces(
    campaign_id: int,
    request: Request,
    response: Response,
    session: SessionDep,
    cursor: Cursor = None,
    limit: Limit = 50,
) -> KeysetPage[ForceSummary]:
    views = forces.list_forces(session, campaign_id=campaign_id, limit=limit + 1, after=cursor)
    return page_of(
        request,
        response,
        views,
        limit,
        lambda v: v.force.id,
        lambda v: present.force_summary(v.force, v, rulebooks.book_of(session, v.force)),
    )


@router.get(
    "/forces/{force_id}",
    summary="A force's Order of Battle with every card",
    response_model=OrderOfBattlePublic,
    responses=NOT_MODIFIED,
)
@kept_read(ORDER_OF_BATTLE)
async def get_order_of_battle(force_id: int, request: Request, session: SessionDep) -> Response:
    """Served from a cache keyed by the force's version and its campaign's (a rule pack
    renames what it shows); the ETag lets clients skip even that (If-None-Match answers 304
    while nothing has changed)."""

    def build() -> Built:
        view = forces.load_force(session, force_id)
        book = rulebooks.book_of(session, view.force)
        return present.order_of_battle(view, book).model_dump_json().encode(), {}

    return await cached_read(request, session, ORDER_OF_BATTLE, force_id, build)


@router.patch("/forces/{force_id}", summary="Rename a force or edit its notes")
def update_force(force_id: int, body: ForceUpdate, session: SessionDep) -> ForceSummary:
    forces.update_force(session, force_id=force_id, **body.model_dump(exclude_unset=True))
    view = forces.load_force(session, force_id)
    book = rulebooks.book_of(session, view.force)
    return present.force_summary(view.force, view, book)


@router.post(
    "/forces/{force_id}/cards",
    status_code=status.HTTP_201_CREATED,
    summary="Add a unit to the Order of Battle (within the Supply Limit)",
)
def add_card(
    force_id: int, body: CardCreate, session: SessionDep, response: Response
) -> CardPublic:
    row = forces.add_card(session, force_id=force_id, **body.model_dump(exclude={"requisitions"}))
    located(response, f"/cards/{row.id}")
    for index, wanted in enumerate(body.requisitions):
        bought = wanted.model_copy(update={"card_id": row.id})
        with request_fields({}, f"requisitions[{index}]."):
            requisitions.purchase(
                session, force_id=force_id, order=requisition_order(bought), card_added=row.id
            )
    session.refresh(row)
    return _card(session, row)


@router.post(
    "/forces/{force_id}/cards/batch",
    status_code=status.HTTP_201_CREATED,
    summary="Add several units at once: all of them, or none if one is refused",
)
def add_cards(force_id: int, body: CardsCreate, session: SessionDep) -> CardsPublic:
    """Each unit is checked as if added alone (Supply Limit, faction keyword, the
    Requisitions it buys as it joins) against the Order of Battle as it grows. A refusal
    adds none of them and names the unit: its field is the path (``units[2].power_rating``)."""
    units = [
        unit_entry.NewUnit(
            details=unit.model_dump(exclude={"requisitions"}),
            requisitions=[requisition_order(r) for r in unit.requisitions],
        )
        for unit in body.units
    ]
    rows = unit_entry.add_units(session, force_id=force_id, units=units)
    return CardsPublic(cards=[_card(session, row) for row in rows])


@router.get(
    "/cards/{card_id}",
    summary="One Crusade card",
    response_model=CardPublic,
    responses=NOT_MODIFIED,
)
@kept_read(CARD)
async def get_card(card_id: int, request: Request, session: SessionDep) -> Response:
    """Cached per version of the card's campaign (its rule packs name its relics)."""

    def build() -> Built:
        return _card(session, forces.get_card(session, card_id)).model_dump_json().encode(), {}

    return await cached_read(request, session, CARD, card_id, build)


def _card(session: SessionDep, row: Card) -> CardPublic:
    """The card as its campaign's rulebook names it (a rule pack's relic by its name)."""
    return present.card(row, book=rulebooks.force_book(session, row.force_id))


@router.patch(
    "/cards/{card_id}",
    summary="Edit a card's name or narrative; correct its keywords while it is as it joined",
)
def update_card(card_id: int, body: CardUpdate, session: SessionDep) -> CardPublic:
    row = unit_entry.edit_card(session, card_id=card_id, **body.model_dump(exclude_unset=True))
    return _card(session, row)


@router.delete("/cards/{card_id}", summary="Remove a unit for good (it can never return)")
def remove_card(card_id: int, session: SessionDep) -> CardPublic:
    return _card(session, forces.remove_card(session, card_id=card_id))


@router.get(
    "/campaigns/{campaign_id}/history",
    summary="The campaign's history, oldest first (a page by key: limit, cursor)",
)
def history(
    campaign_id: int,
    request: Request,
    response: Response,
    session: SessionDep,
    cursor: Cursor = None,
    limit: Limit = 50,
) -> KeysetPage[EventPublic]:
    forces.get_campaign(session, campaign_id)
    rows, following = events.page_events(
        session, campaign_id=campaign_id, limit=limit, cursor=cursor
    )
    items = [reports.event(r) for r in rows]
    return keyset_page(request, response, items, limit, following)


@router.get(
    "/campaigns/{campaign_id}/export",
    summary="The whole campaign as one JSON document: a backup that `crusade import` reads",
    response_model=ExportDocument,
    responses={
        200: {
            "content": {
                "application/zip": {
                    "schema": {"type": "string", "format": "binary"},
                },
            },
            "description": "The document; with `photos=true` a ZIP archive holding it as "
            "campaign.json and each photo's renditions as photos/<id>/<width>.jpg",
        }
    },
)
def export_campaign(
    campaign_id: int,
    request: Request,
    session: SessionDep,
    photos: Annotated[
        bool,
        Query(description="A ZIP archive with the photos' files; without it photos are left out"),
    ] = False,
) -> StreamingResponse:
    """Streamed as it is read, in a read transaction of its own: the request's session ends
    when this function returns, before the body is sent."""
    filename = transfer.export_filename(session, campaign_id=campaign_id)
    engine = request.app.state.engine
    if photos:
        return _archive_response(engine, request.app.state.photos, campaign_id, filename)

    def chunks() -> Iterator[bytes]:
        with session_scope(engine, writes=False) as reader:
            yield from transfer.export_chunks(reader, campaign_id=campaign_id)

    return StreamingResponse(
        chunks(),
        media_type="application/json",
        headers={"Content-Disposition": attachment(filename)},
    )


def _archive_response(
    engine: Engine, store: PhotoStore, campaign_id: int, filename: str
) -> StreamingResponse:
    """Written whole to a spooled file first (a ZIP's directory comes last), then sent in
    pieces: a big archive goes to disk, not memory."""
    spool = tempfile.SpooledTemporaryFile(max_size=ARCHIVE_IN_MEMORY)  # noqa: SIM115
    with session_scope(engine, writes=False) as reader:
        transfer.export_archive(reader, campaign_id=campaign_id, store=store, out=spool)
    spool.seek(0)

    def pieces() -> Iterator[bytes]:
        with spool:
            while piece := spool.read(transfer.EXPORT_CHUNK):
                yield piece

    return StreamingResponse(
        pieces(),
        media_type="application/zip",
        headers={"Content-Disposition": attachment(filename.removesuffix(".json") + ".zip")},
    )


ARCHIVE_IN_MEMORY = 8 * 1024 * 1024


def attachment(filename: str) -> str:
    """A download name any campaign name survives: HTTP headers carry only Latin-1 (a
    Cyrillic or Chinese name was a 500), so a non-ASCII name goes UTF-8 and percent-encoded
    in ``filename*`` (RFC 6266 / 5987), after an ASCII ``filename`` for older clients."""
    if filename.isascii():
        return f'attachment; filename="{filename}"'
    ascii_name = unicodedata.normalize("NFKD", filename).encode("ascii", "ignore").decode()
    ascii_name = re.sub(r"[^A-Za-z0-9.]+", "-", ascii_name).strip("-")
    if not ascii_name[:1].isalpha():  # nothing of the name was ASCII: only the date is left
        ascii_name = f"campaign-{ascii_name}"
    return f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename, safe='')}"


STANDINGS = TypeAdapter(list[standings.Standing])


@router.get(
    "/campaigns/{campaign_id}/standings",
    summary="Standings: battles, wins/draws/losses, Crusade points, supply",
    response_model=list[standings.Standing],
    responses=NOT_MODIFIED,
)
@kept_read(STANDINGS_READ)
async def get_standings(campaign_id: int, request: Request, session: SessionDep) -> Response:
    """Cached per version of the campaign."""

    def build() -> Built:
        return STANDINGS.dump_json(standings.standings(session, campaign_id=campaign_id)), {}

    return await cached_read(request, session, STANDINGS_READ, campaign_id, build)
