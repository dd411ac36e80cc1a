"""JSON routes for battles, pending decisions and requisitions."""

from __future__ import annotations

import hashlib
from collections.abc import Hashable
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Query, Request, Response, UploadFile, status
from pydantic import TypeAdapter
from sqlmodel import Session

from app.api import reports
from app.api.plumbing.cache import (
    NOT_MODIFIED,
    Built,
    KeptRead,
    VersionedBodies,
    cached_read,
    kept_read,
)
from app.api.plumbing.paging import Cursor, KeysetPage, Limit, keyset_page, page_of
from app.api.plumbing.responses import located
from app.api.plumbing.route_access import API
from app.db.models import Battle, BattlePhoto, BattleReport, BattleSide, Decision
from app.db.session import SessionDep
from app.edge.schemas.battles import (
    BattleCreate,
    BattlePublic,
    BattleReportIn,
    BattleReportPublic,
    BattleResultIn,
    NamedDice,
    PhotoPublic,
    PhotoRenditionPublic,
)
from app.edge.schemas.decisions import DecisionAnswer, DecisionPublic, answer_of, dice_of
from app.edge.schemas.requisitions import RequisitionIn, RequisitionPublic, requisition_order
from app.edge.sessions import CurrentPrincipal
from app.routing import OneHopRoute
from app.rules.data import VictorRole, rulebook
from app.rules.errors import RuleError
from app.services.battles import confirmation, decisions, lifecycle
from app.services.campaigns import photos, stories, versions
from app.services.forces import requisitions
from app.services.packs import rulebooks

router = APIRouter(tags=["battles"], route_class=OneHopRoute)


def _report(row: BattleReport | None) -> BattleReportPublic | None:
    if row is None:
        return None
    return BattleReportPublic(
        title=row.title,
        played_on=row.played_on,
        location=row.location,
        narrative=row.narrative,
        unit_notes=dict(row.unit_notes),
        written_by=row.written_by,
        updated_at=row.updated_at,
    )


def _photo(row: BattlePhoto) -> PhotoPublic:
    assert row.id is not None
    base = f"{API}/battles/{row.battle_id}/photos/{row.id}"
    return PhotoPublic(
        id=row.id,
        url=f"{base}/{row.widths[-1]}",
        width=row.width,
        height=row.height,
        caption=row.caption,
        renditions=[PhotoRenditionPublic(width=w, url=f"{base}/{w}") for w in row.widths],
        uploaded_by=row.uploaded_by,
        created_at=row.created_at,
    )


def _mission_name(session: Session, battle: Battle) -> str:
    """The core's missions by name at no cost; a rule pack's from the campaign's rules."""
    try:
        return rulebook().mission(battle.mission).name
    except KeyError:
        pass
    try:
        return rulebooks.campaign_book(session, battle.campaign_id).mission(battle.mission).name
    except KeyError:  # its pack since gone (refused while a battle used it): the id in words
        return battle.mission.replace("_", " ").capitalize()


def _battle(
    session: Session,
    battle: Battle,
    sides: list[BattleSide],
    report: BattleReport | None = None,
    pictures: list[BattlePhoto] | None = None,
) -> BattlePublic:
    assert battle.id is not None
    return BattlePublic(
        id=battle.id,
        campaign_id=battle.campaign_id,
        battle_size=battle.battle_size,
        mission=battle.mission,
        mission_name=_mission_name(session, battle),
        mission_roll=battle.mission_roll,
        status=battle.status,
        outcome=battle.outcome,
        territory_id=battle.territory_id,
        rule_packs=dict(battle.rule_packs or {}),
        sides=[reports.side(s) for s in sides],
        report=_report(report),
        photos=[_photo(p) for p in pictures or []],
    )


def _one(session: Session, battle_id: int) -> BattlePublic:
    """One battle as every route that answers with it shows it: sides and report."""
    return _battle(
        session,
        *lifecycle.get_battle(session, battle_id),
        *stories.report_and_photos(session, battle_id),
    )


@router.post(
    "/campaigns/{campaign_id}/battles",
    status_code=status.HTTP_201_CREATED,
    summary="Muster a battle: size, mission (chosen or rolled), rosters and Agendas",
)
def muster(
    campaign_id: int,
    body: BattleCreate,
    principal: CurrentPrincipal,
    session: SessionDep,
    response: Response,
) -> BattlePublic:
    sides = [
        lifecycle.SideSetup(
            force_id=s.force_id,
            role=VictorRole(s.role),
            roster=s.roster,
            agendas=s.agendas,
            warlord_card_id=s.warlord_card_id,
        )
        for s in body.sides
    ]
    battle, rows = lifecycle.muster(
        session,
        campaign_id=campaign_id,
        battle_size=body.battle_size,
        sides=sides,
        mission=body.mission,
        mission_roll=body.mission_roll,
        seed=body.seed,
        by=principal.user,
        territory_id=body.territory_id,
    )
    located(response, f"/battles/{battle.id}")
    return _battle(session, battle, rows)


BATTLES_PAGE = TypeAdapter(KeysetPage[BattlePublic])


def _battles_key(campaign_id: int, query: str, version: int) -> tuple[Hashable, str]:
    """A page of the list per version and query as sent (its cursor and limit)."""
    digest = f"{version}-{hashlib.sha256(query.encode()).hexdigest()[:12]}" if query else version
    return ("battles", campaign_id, version, query), f'"battles-{campaign_id}-v{digest}"'


BATTLES_LIST = KeptRead(
    "campaign_id", versions.held_campaign_version, versions.campaign_version, _battles_key
)


@router.get(
    "/campaigns/{campaign_id}/battles",
    summary="The campaign's battles, newest first (a page by key: limit, cursor)",
    response_model=KeysetPage[BattlePublic],
    responses=NOT_MODIFIED,
)
@kept_read(BATTLES_LIST)
async def list_battles(
    campaign_id: int,
    request: Request,
    session: SessionDep,
    cursor: Cursor = None,
    limit: Limit = 50,
) -> Response:
    """Each page is cached per version of the campaign (the next page's address is part
    of it: the key holds the query as sent); each battle's own body is kept by the battle's
    version, so a page built again after a result builds only the battles that changed."""

    def build() -> Built:
        battles, following = lifecycle.battles_page(
            session, campaign_id=campaign_id, limit=limit, before=cursor
        )
        headers = Response()
        page = BATTLES_PAGE.dump_json(keyset_page(request, headers, [], limit, following))
        assert page.startswith(NO_ITEMS)  # the items are the page's first field
        items = b",".join(_battle_bodies(request, session, battles))
        link = headers.headers.get("link")
        return b'{"items":[' + items + b"]" + page[len(NO_ITEMS) :], {"Link": link} if link else {}

    return await cached_read(request, session, BATTLES_LIST, campaign_id, build)


NO_ITEMS = b'{"items":[]'


def _battle_bodies(request: Request, session: Session, battles: list[Battle]) -> list[bytes]:
    """Each battle's JSON, kept by its id, its version and its mission's name (the one
    thing in it its campaign's rule packs decide); the sides, reports and photos are read
    for the battles not kept alone."""
    kept: VersionedBodies = request.app.state.battle_bodies
    keys = {b.id: ("battle", b.id, b.version, _mission_name(session, b)) for b in battles}
    bodies = {ident: kept.get(key) for ident, key in keys.items()}
    missing = [battle for battle in battles if bodies[battle.id] is None]
    if missing:
        ids = [battle.id for battle in missing if battle.id is not None]
        sides = lifecycle.sides_of(session, ids)
        stories_of, pictures = stories.reports_for(session, ids), photos.photos_for(session, ids)
        for battle in missing:
            assert battle.id is not None
            shown = _battle(
                session, battle, sides[battle.id], stories_of.get(battle.id), pictures[battle.id]
            )
            bodies[battle.id] = body = shown.model_dump_json().encode()
            kept.put(keys[battle.id], body)
    return [body for body in bodies.values() if body is not None]


BATTLE = KeptRead(
    "battle_id",
    versions.held_battle_version,
    versions.battle_version,
    lambda battle_id, _query, v: (("battle", battle_id, v), f'"battle-{battle_id}-v{v}"'),
)


@router.get(
    "/battles/{battle_id}",
    summary="One battle with both sides, and its report",
    response_model=BattlePublic,
    responses=NOT_MODIFIED,
)
@kept_read(BATTLE)
async def get_battle(battle_id: int, request: Request, session: SessionDep) -> Response:
    """Cached per version of the battle's campaign (its sides, reports, decisions, story
    and photos all move it): a bot waiting on a battle polls it with If-None-Match."""

    def build() -> Built:
        return _one(session, battle_id).model_dump_json().encode(), {}

    return await cached_read(request, session, BATTLE, battle_id, build)


@router.put(
    "/battles/{battle_id}/report",
    summary="Write or rewrite the battle's report (either of its players): title, day and "
    "place played, a Markdown narrative, a note per unit",
)
def put_report(
    battle_id: int, body: BattleReportIn, principal: CurrentPrincipal, session: SessionDep
) -> BattlePublic:
    story = stories.Story(**body.model_dump())
    stories.write_report(session, battle_id=battle_id, story=story, by=principal.user.username)
    return _one(session, battle_id)


@router.post(
    "/battles/{battle_id}/result",
    summary="Enter the result. From an organizer it applies at once (both sides' post-battle "
    "sequence in one transaction), except in a battle they play against another player while "
    "the campaign's organizer_results_need_confirmation is on; otherwise it waits for the "
    "opponent to confirm",
)
def record_result(battle_id: int, body: BattleResultIn, session: SessionDep) -> BattlePublic:
    results = [
        lifecycle.SideResult(
            force_id=s.force_id,
            victory_points=s.victory_points,
            painted=s.painted,
            units=[u.model_dump() for u in s.units],
            dice=s.dice.others if isinstance(s.dice, NamedDice) else s.dice,
            named_dice=named_dice(s.dice, index) if isinstance(s.dice, NamedDice) else None,
            out_of_action_choices=dict(s.out_of_action_choices),
            agenda_choices=dict(s.agenda_choices),
            objective_markers=s.objective_markers,
        )
        for index, s in enumerate(body.sides)
    ]
    battle, sides = confirmation.submit(session, battle_id=battle_id, results=results)
    assert battle.id is not None
    return _battle(session, battle, sides, *stories.report_and_photos(session, battle.id))


def named_dice(dice: NamedDice, side: int) -> dict[str, int]:
    named: dict[str, int] = {}
    for index, die in enumerate(dice.rolls):
        field = f"sides[{side}].dice.rolls[{index}]"
        if (die.roll == "agenda") != (die.agenda is not None) or (
            die.roll != "agenda" and die.card_id is None
        ):
            raise RuleError(
                "die_roll_unnamed",
                "An agenda die names its agenda; an out_of_action or devastating_blow die "
                "names its unit's card_id.",
                field=field,
            )
        key = f"{die.roll}:{die.card_id}"
        if die.agenda is not None:
            try:
                key = f"agenda:{rulebook().agenda(die.agenda).id}"
            except KeyError:
                raise RuleError(
                    "agenda_unknown", f"'{die.agenda}' is not an Agenda.", field=field
                ) from None
        if key in named:
            raise RuleError("die_given_twice", f"Two dice are given for {key}.", field=field)
        named[key] = die.value
    return named


@router.post(
    "/battles/{battle_id}/confirm",
    summary="Confirm the result the opponent entered (or, for organizers, any waiting one)",
)
def confirm_result(battle_id: int, session: SessionDep) -> BattlePublic:
    battle = confirmation.confirm(session, battle_id=battle_id)
    assert battle.id is not None
    return _one(session, battle.id)


@router.post("/battles/{battle_id}/dispute", summary="Dispute an entered result")
def dispute_result(battle_id: int, session: SessionDep) -> BattlePublic:
    battle = confirmation.dispute(session, battle_id=battle_id)
    assert battle.id is not None
    return _one(session, battle.id)


@router.post("/battles/{battle_id}/revert", summary="Undo a battle (while nothing later uses it)")
def revert(battle_id: int, session: SessionDep) -> BattlePublic:
    battle = lifecycle.revert(session, battle_id=battle_id)
    assert battle.id is not None
    return _one(session, battle.id)


@router.post(
    "/battles/{battle_id}/call-off",
    summary="Drop a mustered battle that will not be played (its players or an organizer)",
)
def call_off(battle_id: int, session: SessionDep) -> BattlePublic:
    battle = lifecycle.call_off(session, battle_id=battle_id)
    assert battle.id is not None
    return _one(session, battle.id)


def _decision(session: Session, row: Decision) -> DecisionPublic:
    rows = [row]
    key = row.id or 0
    views: dict[int, Any] = {}  # the force loaded once for the three
    offer = decisions.offers(session, rows, views).get(key)
    packs = decisions.pack_offers(session, rows, views).get(key, [])
    full = decisions.full_offers(session, rows, views).get(key)
    return reports.decision(row, offer, packs, full)


@router.get(
    "/forces/{force_id}/decisions",
    summary="A force's decisions, oldest first (pending by default; a page by key: limit, cursor)",
)
def list_decisions(
    force_id: int,
    request: Request,
    response: Response,
    session: SessionDep,
    status: Annotated[str | None, Query(pattern="^(pending|answered|cancelled)$")] = "pending",
    cursor: Cursor = None,
    limit: Limit = 50,
) -> KeysetPage[DecisionPublic]:
    rows = decisions.list_decisions(
        session, force_id=force_id, status=status, after=cursor, limit=limit + 1
    )
    shown = rows[:limit]
    views: dict[int, Any] = {}  # each force loaded once for the three
    offers = decisions.offers(session, shown, views)
    pack_offers = decisions.pack_offers(session, shown, views)
    full = decisions.full_offers(session, shown, views)

    def public(row: Decision) -> DecisionPublic:
        key = row.id or 0
        return reports.decision(row, offers.get(key), pack_offers.get(key, []), full.get(key))

    return page_of(request, response, rows, limit, lambda d: d.id, public)


@router.get("/decisions/{decision_id}", summary="One decision")
def get_decision(decision_id: int, session: SessionDep) -> DecisionPublic:
    return _decision(session, decisions.get_decision(session, decision_id))


@router.post("/decisions/{decision_id}/answer", summary="Answer a pending decision")
def answer_decision(decision_id: int, body: DecisionAnswer, session: SessionDep) -> DecisionPublic:
    row = decisions.answer(
        session, decision_id=decision_id, answer=answer_of(body), dice=dice_of(body)
    )
    return _decision(session, row)


@router.post(
    "/forces/{force_id}/requisitions",
    status_code=status.HTTP_201_CREATED,
    summary="Buy a Requisition (timing, target and RP are checked)",
)
def purchase(force_id: int, body: RequisitionIn, session: SessionDep) -> RequisitionPublic:
    row = requisitions.purchase(session, force_id=force_id, order=requisition_order(body))
    return reports.requisition(row)


# --- photos (issue 23) -------------------------------------------------------------------


@router.post(
    "/battles/{battle_id}/photos",
    status_code=status.HTTP_201_CREATED,
    summary="Add a photo of the battle (either player): multipart `file` (JPEG, PNG, WebP or "
    "GIF, checked by content), optional `caption`; kept as JPEG renditions without metadata",
)
def add_photo(
    battle_id: int,
    request: Request,
    response: Response,
    principal: CurrentPrincipal,
    session: SessionDep,
    file: Annotated[UploadFile, File(description="The photo")],
    caption: Annotated[str, Form(max_length=200)] = "",
) -> PhotoPublic:
    row = photos.upload(
        session,
        request.app.state.photos,
        battle_id=battle_id,
        data=file.file.read(photos.MAX_BYTES + 1),
        caption=caption,
        by=principal.user.username,
    )
    located(response, f"/battles/{battle_id}/photos/{row.id}/{row.widths[-1]}")
    return _photo(row)


@router.delete(
    "/battles/{battle_id}/photos/{photo_id}",
    summary="Delete a photo of the battle (either player): its files go with it",
)
def delete_photo(
    battle_id: int, photo_id: int, request: Request, session: SessionDep
) -> PhotoPublic:
    row = photos.delete_photo(
        session, request.app.state.photos, battle_id=battle_id, photo_id=photo_id
    )
    return _photo(row)


@router.get(
    "/battles/{battle_id}/photos/{photo_id}/{width}",
    summary="One rendition of a photo (a JPEG without metadata), to whoever may read the campaign",
    response_class=Response,
    responses={
        200: {
            "content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}},
            "description": "The JPEG",
        }
    },
)
def photo_file(
    battle_id: int,
    photo_id: int,
    width: int,
    request: Request,
    session: SessionDep,
) -> Response:
    data = photos.rendition(
        session, request.app.state.photos, battle_id=battle_id, photo_id=photo_id, width=width
    )
    # A rendition never changes (a new photo gets a new id): cached as long as the browser
    # likes, but only by the browser (the campaign may be private).
    headers = {"Cache-Control": "private, max-age=31536000, immutable"}
    return Response(data, media_type="image/jpeg", headers=headers)
