"""The battle page: what each side reported, confirmation, dispute and the organizer's revert.
Every rule is the services' (``battles``, ``confirmation``); the wizard that records a battle
is ``app.web.battle_wizard`` and the decisions a battle leaves are in ``app.web.decisions``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.datastructures import UploadFile as StarletteUpload

from app.db.models import BattlePhoto, BattleReport, BattleSide, Decision, Force, User
from app.db.session import SessionDep, ends_read_early
from app.edge.limits import RateLimits
from app.edge.schemas.battles import BattleReportIn
from app.errors import DomainError
from app.routing import OneHopRoute
from app.rules.errors import RuleError
from app.services.accounts import accounts
from app.services.accounts.access import Access
from app.services.accounts.accounts import Principal
from app.services.battles import confirmation, decisions, lifecycle, wizard
from app.services.campaigns import photos, stories, versions
from app.services.forces.forces import get_campaign
from app.services.packs import rulebooks
from app.web import table_pass
from app.web.decisions import decision_title
from app.web.display.markdown import markdown
from app.web.display.qr import qr_svg
from app.web.form_models import checked
from app.web.forms import Form, field_text
from app.web.pages import (
    attempt,
    fragment,
    fragments,
    kept_page,
    link,
    page,
    redirect,
    render,
    revalidated,
    site_url,
)

router = APIRouter(route_class=OneHopRoute)

Reader = Annotated[Principal | None, page(Access.CAMPAIGN_READ)]
BattlePlayer = Annotated[Principal, page(Access.BATTLE_PLAY)]
BattleOrganizer = Annotated[Principal, page(Access.BATTLE_ORGANIZE)]


# --- the battle page ------------------------------------------------------------------------


def _battle_shown(session: Session, battle_id: int) -> dict[str, Any]:
    """The battle page's parts that are the same for every reader: what both sides
    reported (rendered), the report, the photos and the decisions, as plain values. Every
    row they come from moves the campaign's version (app.db.models); the players' names
    shown never change once an account is made."""
    battle, sides = lifecycle.get_battle(session, battle_id)
    book = rulebooks.campaign_book(session, battle.campaign_id)
    forces = wizard.forces_by_id(session, [s.force_id for s in sides])
    owners: dict[int | None, User] = {
        k: v for k, v in confirmation.players(session, list(forces.values())).items()
    }
    made = confirmation.battle_decisions(session, battle_id)
    # both rosters' units and those the decisions name, by name, in one query
    named = [i for s in sides for i in s.roster] + [x.card_id for x in made if x.card_id]
    names = wizard.unit_names(session, named)
    proposal = {int(p["force_id"]): p for p in (battle.proposal or {}).get("sides", [])}
    views = [_side_view(book, s, forces[s.force_id], owners, names, proposal) for s in sides]
    proposer = confirmation.proposer(session, battle)
    mission = book.mission(battle.mission)
    report, pictures = stories.report_and_photos(session, battle_id)
    return {
        "battle": {
            "id": battle.id,
            "status": battle.status,
            "outcome": battle.outcome,
            "mission_roll": battle.mission_roll,
            "created_at": battle.created_at,
            "resolved_at": battle.resolved_at,
            "proposed_by": battle.proposed_by,
        },
        "players": frozenset(f.owner_id for f in forces.values() if f.owner_id is not None),
        "campaign": link(get_campaign(session, battle.campaign_id)),
        "mission": {"name": mission.name, "summary": mission.summary},
        "size": {"name": book.battle_size(battle.battle_size).name},
        "force_names": [v["force"].name for v in views],
        "sides_html": fragment("partials/battle_sides.html", sides=views),
        "unit_names": {str(r["id"]): r["name"] for v in views for r in v["rows"]},
        "story": _story(report),
        "photos": [_photo(p) for p in pictures],
        "proposer": (proposer.display_name or proposer.username) if proposer else None,
        "decisions": [_decision(x, names, forces) for x in made],
    }


def _battle_context(
    session: Session,
    principal: Principal | None,
    battle_id: int,
    site: str = "",
    shown: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The battle page as ``principal`` sees it: the parts ``shown`` (kept, or built now)
    and what this viewer may do with them."""
    shown = shown if shown is not None else _battle_shown(session, battle_id)
    battle = shown["battle"]
    status = battle["status"]
    user = principal.user if principal else None
    campaign_id = shown["campaign"]["id"]
    organizer = bool(user and wizard.is_organizer(session, campaign_id=campaign_id, user=user))
    in_battle = bool(user and user.id in shown["players"])
    opponent = in_battle and user is not None and user.id != battle["proposed_by"]
    table_opponent = None
    if user and user.id == battle["proposed_by"]:
        table_opponent = confirmation.table_opponent_among(
            session, status=status, proposed_by=battle["proposed_by"], players=shown["players"]
        )
    confirm_link = f"{site}/battles/{battle_id}/confirm"
    qr = None
    if table_opponent is not None:
        who = table_opponent.display_name or table_opponent.username
        qr = qr_svg(confirm_link, f"QR code of the link for {who} to confirm: {confirm_link}")
    return {
        **shown,
        "organizer": organizer,
        "can_confirm": (status == "proposed" and (organizer or opponent))
        or (status == "disputed" and organizer),
        "can_dispute": status == "proposed" and (organizer or opponent),
        "can_revert": organizer and status != "reverted",
        "can_call_off": status == "mustered" and (organizer or in_battle),
        "max_photos_per_post": photos.MAX_PER_POST,
        "can_tell": (organizer or in_battle) and status not in ("reverted", "called_off"),
        # the recorder's phone offers the opponent sitting across the table to confirm here
        "table_opponent": table_opponent,
        # ... or scan this with their own phone, and confirm there from their own account
        "confirm_link": confirm_link,
        "confirm_qr": qr,
    }


def _story(row: BattleReport | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {
        "title": row.title,
        "played_on": row.played_on,
        "location": row.location,
        "written_by": row.written_by,
        "narrative": row.narrative,
        "narrative_html": markdown(row.narrative),
        "unit_notes": dict(row.unit_notes or {}),
    }


def _photo(row: BattlePhoto) -> dict[str, Any]:
    return {
        "id": row.id,
        "widths": list(row.widths),
        "width": row.width,
        "height": row.height,
        "caption": row.caption,
        "uploaded_by": row.uploaded_by,
    }


def _decision(row: Decision, names: dict[int, str], forces: dict[int, Force]) -> dict[str, Any]:
    force = forces.get(row.force_id)
    return {
        "id": row.id,
        "status": row.status,
        "title": decision_title(row),
        "unit": names.get(row.card_id) if row.card_id else None,
        "force": force.name if force else "",
    }


def _unit(names: dict[int, str], card_id: int | None) -> dict[str, str] | None:
    """A unit as the page names it (None: no unit, or one since gone)."""
    return {"name": names[card_id]} if card_id in names else None


def _side_view(
    book: Any,
    side: BattleSide,
    force: Force,
    owners: dict[int | None, User],
    names: dict[int, str],
    proposal: dict[int, dict[str, Any]],
) -> dict[str, Any]:
    report = side.report or {}
    proposed = proposal.get(side.force_id, {})
    units = {int(u["card_id"]): u for u in report.get("units") or proposed.get("units") or []}
    tests = {int(t["card_id"]): t for t in report.get("tests", [])}
    blows = {int(b["card_id"]): b for b in report.get("devastating_blows", [])}
    promotions = {
        int(p["card_id"]): book.rank(p["rank"]).name for p in report.get("promotions", [])
    }
    owner = owners.get(force.owner_id)
    return {
        "side": side,
        "force": force,
        "owner": owner,
        "agendas": [book.agenda(a) for a in side.agendas],
        "proposed": proposed,
        "rows": [
            {
                "id": i,
                "card": _unit(names, i),
                "name": names.get(i, f"Unit {i}"),
                "report": units.get(i, {}),
                "xp": (report.get("experience") or {}).get(str(i)),
                "test": tests.get(i),
                "blow": blows.get(i),
                "promotion": promotions.get(i),
                "warlord": side.warlord_card_id == i,
            }
            for i in side.roster
        ],
    }


@router.get("/battles/{battle_id}")
@ends_read_early
async def battle_page(
    request: Request, session: SessionDep, principal: Reader, battle_id: int, handed_back: str = ""
) -> Response:
    """Kept whole for a visitor, and in parts for everyone else (issue 50): the sides, the
    report, the photos and the decisions are built once per campaign version; what the
    viewer may do, their draft and the table pass are the request's own."""
    back = handed_back == "1"
    return await kept_page(
        request,
        principal,
        ("battle_page", battle_id, back),
        versions.held_battle_version(session, battle_id),
        lambda: _battle_page(request, session, principal, battle_id, back),
    )


def _battle_page(
    request: Request, session: Session, principal: Principal | None, battle_id: int, back: bool
) -> Response:
    answer = render(
        request,
        "pages/battle.html",
        principal,
        handed_back=back,
        draft_base=_draft_base(session, principal, battle_id),
        **_battle_context(
            session,
            principal,
            battle_id,
            site_url(request),
            _kept_shown(request, session, battle_id),
        ),
        **_at_table(request, session, principal, battle_id),
    )
    return revalidated(request, answer)


def _kept_shown(request: Request, session: Session, battle_id: int) -> dict[str, Any]:
    version = versions.battle_version(session, battle_id)
    return fragments(
        request,
        session,
        ("battle_page", battle_id, version),
        lambda: _battle_shown(session, battle_id),
    )


def _draft_base(session: Session, principal: Principal | None, battle_id: int) -> str | None:
    """The address of the wizard draft that recorded this battle, for the phone that still
    holds changes made for it after the result went in (listed beside the result)."""
    if principal is None:
        return None
    draft = wizard.draft_of_battle(session, battle_id)
    return f"/campaigns/{draft.campaign_id}/drafts/{draft.id}" if draft else None


def _at_table(
    request: Request, session: Session, principal: Principal | None, battle_id: int
) -> dict[str, Any]:
    """The opponent who confirmed on this phone: their decisions of this battle, to answer
    here before the phone goes back (the table pass)."""
    held = table_pass.read(request, battle_id=battle_id)
    if held is None or principal is None:
        return {}
    guest = session.get(User, held.user_id)
    waiting = decisions.waiting_at_table(session, battle_id=battle_id, user_id=held.user_id)
    return {"guest": guest, "guest_waiting": waiting} if guest is not None else {}


@router.get("/battles/{battle_id}/confirm")
def confirm_page(
    request: Request, session: SessionDep, principal: BattlePlayer, battle_id: int
) -> Response:
    """Where the QR code on the recorder's phone leads: the opponent's own phone, logged in
    (the log-in page comes first and comes back here), sees the result to confirm. The link
    grants nothing by itself: confirming still takes the opponent's own account."""
    shown = _kept_shown(request, session, battle_id)
    context = _battle_context(session, principal, battle_id, site_url(request), shown)
    if not context["can_confirm"]:
        status = context["battle"]["status"]
        context["notice"] = (
            "There is no result waiting for you to confirm here."
            if status != "proposed"
            else "Only the opponent of the player who entered this result (or an organizer)"
            " confirms it; you are logged in as someone else."
        )
    return render(request, "pages/battle.html", principal, **context)


def _battle_command(
    request: Request, session: Session, principal: Principal, battle_id: int, command: str
) -> Response:
    with attempt(session) as outcome:
        if command == "confirm":
            confirmation.confirm(session, battle_id=battle_id)
        elif command == "dispute":
            confirmation.dispute(session, battle_id=battle_id)
        elif command == "call_off":
            lifecycle.call_off(session, battle_id=battle_id)
        else:
            lifecycle.revert(session, battle_id=battle_id)
    if outcome.refused:
        return render(
            request,
            "pages/battle.html",
            principal,
            status=outcome.status,
            error=outcome.error,
            **_battle_context(session, principal, battle_id, site_url(request)),
        )
    return redirect(f"/battles/{battle_id}")


@router.post("/battles/{battle_id}/confirm")
def confirm_battle(
    request: Request, session: SessionDep, principal: BattlePlayer, battle_id: int
) -> Response:
    return _battle_command(request, session, principal, battle_id, "confirm")


@router.post("/battles/{battle_id}/confirm-here")
def confirm_at_table(
    request: Request, session: SessionDep, principal: BattlePlayer, form: Form, battle_id: int
) -> Response:
    locked: list[int] = []  # the account whose PIN this try locked, if it did
    with attempt(session) as outcome:
        opponent = confirm_here(request, session, form, battle_id, locked)
    for user_id in locked:  # outside the refused command's savepoint: the notice is kept
        accounts.note_pin_locked(session, user_id=user_id, battle_id=battle_id)
    if outcome.refused:
        return render(
            request,
            "pages/battle.html",
            principal,
            status=outcome.status,
            error=outcome.error,
            **_battle_context(session, principal, battle_id, site_url(request)),
        )
    return to_the_opponents_decisions(session, request, battle_id, opponent)


def confirm_here(
    request: Request, session: Session, form: FormData, battle_id: int, locked: list[int]
) -> User:
    """The opponent types their password or their PIN on the recorder's phone (both
    rate-limited together, as log-in) and so confirms the result as themselves; a refusal
    is raised. ``locked`` gets the account a wrong PIN has just locked. Returns the
    opponent."""
    limits: RateLimits = request.app.state.rate_limits
    client = request.client.host if request.client else "?"
    opponent = confirmation.table_opponent_of(session, battle_id=battle_id)
    limits.hit(limits.login, "table-confirm", client, str(battle_id))
    if "pin" in form:
        pin = str(form.get("pin") or "").strip()[:20]
        _confirm_with_pin(session, limits, battle_id, pin, locked)
    else:
        confirmation.confirm_at_table(
            session, battle_id=battle_id, password=str(form.get("password") or "")[:200]
        )
    assert opponent is not None  # confirming found them, or refused
    return opponent


def to_the_opponents_decisions(
    session: Session, request: Request, battle_id: int, opponent: User
) -> Response:
    """After the opponent confirmed on this phone: straight on to their first decision of
    the battle (issue 40), or to the battle page, with the table pass that lets them answer
    their decisions here."""
    assert opponent.id is not None
    waiting = decisions.waiting_at_table(session, battle_id=battle_id, user_id=opponent.id)
    confirmed = redirect(f"/decisions/{waiting[0].id}" if waiting else f"/battles/{battle_id}")
    table_pass.grant(request, confirmed, user_id=opponent.id, battle_id=battle_id)
    return confirmed


@router.post("/battles/{battle_id}/hand-back")
def hand_back(request: Request, principal: BattlePlayer, battle_id: int) -> Response:
    """The opponent is done answering on the recorder's phone: the pass goes."""
    back = redirect(f"/battles/{battle_id}")
    table_pass.drop(back)
    return back


def _confirm_with_pin(
    session: Session, limits: RateLimits, battle_id: int, pin: str, locked: list[int]
) -> None:
    """Confirm with the opponent's PIN, under their account's own limit of wrong PINs."""
    opponent = confirmation.table_opponent_of(session, battle_id=battle_id)
    if opponent is None or opponent.id is None:
        confirmation.confirm_at_table(session, battle_id=battle_id, pin=pin)  # its refusal
        return
    limits.refuse_if_pin_locked(opponent.id, opponent.display_name or opponent.username)
    try:
        confirmation.confirm_at_table(session, battle_id=battle_id, pin=pin)
    except DomainError as refused:
        if refused.code == "pin_incorrect" and limits.count_pin_failure(opponent.id):
            locked.append(opponent.id)
        raise


@router.post("/battles/{battle_id}/dispute")
def dispute_battle(
    request: Request, session: SessionDep, principal: BattlePlayer, battle_id: int
) -> Response:
    return _battle_command(request, session, principal, battle_id, "dispute")


@router.post("/battles/{battle_id}/call-off")
def call_off_battle(
    request: Request, session: SessionDep, principal: BattlePlayer, battle_id: int
) -> Response:
    return _battle_command(request, session, principal, battle_id, "call_off")


def _refused(
    request: Request,
    session: Session,
    principal: Principal,
    battle_id: int,
    status: int,
    **shown: Any,
) -> Response:
    """The battle page again, with a refused report or photo form's error (and what was
    typed) where the form is."""
    context = _battle_context(session, principal, battle_id, site_url(request))
    return render(request, "pages/battle.html", principal, status=status, **context, **shown)


@router.post("/battles/{battle_id}/photos")
async def add_photos(
    request: Request, session: SessionDep, principal: BattlePlayer, battle_id: int
) -> Response:
    """The battle page's photo form: one or more photos from the phone, all kept or none
    (the same service as POST /api/v1/battles/{id}/photos). The form is read here; the
    images are decoded in a worker thread, never on the event loop (issue 33)."""
    form = await request.form(max_files=photos.MAX_PER_POST, max_fields=10)
    files = [f for f in form.getlist("file") if isinstance(f, StarletteUpload) and f.filename]
    caption = str(form.get("caption") or "")[:200]
    datas = [await f.read(photos.MAX_BYTES + 1) for f in files]
    return await run_in_threadpool(
        _add_photos, request, session, principal, battle_id, datas, caption
    )


def _add_photos(
    request: Request,
    session: Session,
    principal: Principal,
    battle_id: int,
    datas: list[bytes],
    caption: str,
) -> Response:
    try:
        if not datas:
            raise RuleError("photo_missing", "Choose at least one photo.", field="file")
        made = photos.read_uploads(
            session, battle_id=battle_id, datas=datas, by=principal.user.username
        )
    except RuleError as error:
        return _photo_refused(request, session, principal, battle_id, error)
    with attempt(session) as outcome:
        for renditions in made:
            photos.add_photo(
                session,
                request.app.state.photos,
                battle_id=battle_id,
                made=renditions,
                caption=caption,
                by=principal.user.username,
            )
    if outcome.error is not None:
        return _photo_refused(request, session, principal, battle_id, outcome.error)
    return redirect(f"/battles/{battle_id}#photos")


def _photo_refused(
    request: Request, session: Session, principal: Principal, battle_id: int, error: RuleError
) -> Response:
    status = error.status if isinstance(error, DomainError) else 422
    page = _refused(request, session, principal, battle_id, status, photo_error=error)
    if isinstance(error, DomainError) and error.retry_after is not None:
        page.headers["Retry-After"] = str(error.retry_after)  # busy decoding: 503
    return page


@router.post("/battles/{battle_id}/photos/{photo_id}/delete")
def delete_photo(
    request: Request, session: SessionDep, principal: BattlePlayer, battle_id: int, photo_id: int
) -> Response:
    with attempt(session) as outcome:
        photos.delete_photo(
            session, request.app.state.photos, battle_id=battle_id, photo_id=photo_id
        )
    if outcome.refused:
        return _refused(
            request, session, principal, battle_id, outcome.status, photo_error=outcome.error
        )
    return redirect(f"/battles/{battle_id}#photos")


STORY_FIELDS = ("title", "played_on", "location", "narrative")


@router.post("/battles/{battle_id}/report")
def write_report(
    request: Request,
    session: SessionDep,
    principal: BattlePlayer,
    battle_id: int,
    form: Form,
) -> Response:
    """The report's form on the battle page: the same service as PUT /battles/{id}/report."""
    typed = {name: field_text(form, name, 20000) for name in STORY_FIELDS}
    notes = {
        key.removeprefix("note_"): field_text(form, key, 1000)
        for key in form
        if key.startswith("note_")
    }
    with attempt(session) as outcome:
        body = checked(
            BattleReportIn,
            {**typed, "played_on": typed["played_on"] or None, "unit_notes": notes},
        )
        story = stories.Story(**body.model_dump())
        stories.write_report(session, battle_id=battle_id, story=story, by=principal.user.username)
    if outcome.refused:
        values = {**typed, "notes": notes}
        return _refused(
            request,
            session,
            principal,
            battle_id,
            outcome.status,
            story_error=outcome.error,
            story_values=values,
        )
    return redirect(f"/battles/{battle_id}#report")


@router.get("/battles/{battle_id}/revert")
def revert_page(
    request: Request, session: SessionDep, principal: BattleOrganizer, battle_id: int
) -> Response:
    context = _battle_context(session, principal, battle_id)
    return render(request, "pages/battle_revert.html", principal, **context)


@router.post("/battles/{battle_id}/revert")
def revert_battle(
    request: Request, session: SessionDep, principal: BattleOrganizer, battle_id: int
) -> Response:
    return _battle_command(request, session, principal, battle_id, "revert")
