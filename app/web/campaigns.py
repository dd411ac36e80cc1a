"""Pages for campaigns: the home page (your campaigns), creating one, the dashboard, joining,
creating a force, and the members page (invites, removing members, settings)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ValidationError

from app.config import get_settings, secret_key
from app.db.models import Battle, BattleSide, Campaign, User
from app.db.session import SessionDep, ends_read_early, snapshot_reads
from app.edge.schemas.campaigns import CampaignSettings, InviteCreate, TerritoryIn
from app.edge.schemas.forces import ForceCreate
from app.errors import DomainError
from app.routing import OneHopRoute
from app.rules import packs
from app.rules.data import rulebook
from app.services.accounts.access import Access
from app.services.accounts.accounts import Principal
from app.services.battles import lifecycle, wizard
from app.services.campaigns import (
    inbox,
    membership,
    photos,
    progress,
    standings,
    stories,
    territories,
    versions,
)
from app.services.feed import history
from app.services.forces import forces
from app.services.packs import rulebooks
from app.web import catchup
from app.web.display.charts import Series, line_chart
from app.web.pages import (
    Member,
    Outcome,
    Viewer,
    attempt,
    fragment,
    fragments,
    kept_page,
    page,
    redirect,
    render,
    revalidated,
    site_url,
)

router = APIRouter(route_class=OneHopRoute)
Text = Annotated[str, Form(max_length=4000)]
Reader = Annotated[Principal | None, page(Access.CAMPAIGN_READ)]
Player = Annotated[Principal, page(Access.CAMPAIGN_PLAY)]
Organizer = Annotated[Principal, page(Access.CAMPAIGN_ORGANIZE)]
Joiner = Annotated[Principal, page(Access.USER)]

RECENT_BATTLES = 10
HISTORY_SHOWN = 20
BATTLES_PER_PAGE = 25
HISTORY_PER_PAGE = 50
CHART_METRICS = {"crusade_points": "Crusade points", "xp": "Experience (XP)"}
# Plain words for the limits the JSON API applies to the same inputs.
FIELD_MESSAGES = {
    "name": "Give a name of 1 to 120 characters.",
    "crusade_faction": "Choose a Crusade faction.",
    "player_name": "A player name is at most 120 characters.",
    "description": "A description is at most 4000 characters.",
    "join_policy": "Choose 'by invite only' or 'open to any account'.",
    "role": "Choose player or organizer.",
    "hours": "An invite lasts 1 to 2160 hours (90 days); give a whole number.",
    "max_uses": "An invite can be used 1 to 100 times; give a whole number.",
}
Model = TypeVar("Model", bound=BaseModel)


def _checked(model: type[Model], **data: Any) -> Model:
    """Validate a form with the JSON API's own input model; refuse in words."""
    return _validated(model, data)


def _validated(
    model: type[Model], data: dict[str, Any], messages: dict[str, str] | None = None
) -> Model:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or None
        words = FIELD_MESSAGES | (messages or {})
        message = words.get(field or "", f"{field}: {first['msg']}")
        raise DomainError("request_invalid", message, status=422, field=field) from exc


# --- home --------------------------------------------------------------------------------


@router.get("/")
def home(request: Request, session: SessionDep, principal: Viewer) -> Response:
    return _home(request, session, principal)


def _home(
    request: Request, session: SessionDep, principal: Viewer, status: int = 200, **context: object
) -> Response:
    viewer = principal.user if principal else None
    only = principal.campaign_limit if principal else None
    campaigns, _total = forces.list_campaigns(
        session, offset=0, limit=200, viewer=viewer, only=only
    )
    roles = inbox.roles(session, user_id=viewer.id) if viewer and viewer.id else {}
    return render(
        request,
        "pages/home.html",
        principal,
        status=status,
        campaigns=campaigns,
        roles=roles,
        **context,
    )


@router.post("/campaigns")
def create_campaign(
    request: Request,
    session: SessionDep,
    principal: Member,
    name: Text = "",
    description: Text = "",
) -> Response:
    with attempt(session) as outcome:
        if not name.strip() or len(name.strip()) > 120:
            raise DomainError(
                "campaign_name_invalid",
                "A campaign needs a name of 1 to 120 characters.",
                status=422,
                field="name",
            )
        campaign = forces.create_campaign(
            session, name=name, description=description, organizer_id=principal.user.id
        )
    if outcome.refused:
        return _home(
            request,
            session,
            principal,
            **outcome.shown(),
            values={"name": name, "description": description},
        )
    return redirect(f"/campaigns/{campaign.id}")


# --- the dashboard -----------------------------------------------------------------------


@dataclass(frozen=True)
class BattleRow:
    id: int
    mission: str
    size: str
    forces: list[tuple[int, str]]
    status: str
    result: str
    when: Any
    title: str = ""  # the report's
    photos: int = 0


def _role(session: SessionDep, campaign_id: int, principal: Principal | None) -> str | None:
    if principal is None or principal.user.id is None:
        return None
    return membership.role_of(session, campaign_id=campaign_id, user_id=principal.user.id)


def _is_organizer(principal: Principal | None, role: str | None) -> bool:
    return role == "organizer" or bool(principal and principal.user.is_admin)


def _is_organizer_role(user: User, role: str | None) -> bool:
    return role == "organizer" or user.is_admin


def _name(lookup: Callable[[str], Any], item_id: str) -> str:
    """A rulebook item's name; an id the tables no longer know is shown in words."""
    try:
        return str(lookup(item_id).name)
    except LookupError:
        return item_id.replace("_", " ").capitalize()


def mission_name(mission_id: str) -> str:
    return _name(rulebook().mission, mission_id)


def size_name(size_id: str) -> str:
    return _name(rulebook().battle_size, size_id)


def requisition_name(requisition_id: str) -> str:
    return _name(rulebook().requisition, requisition_id)


def _result(battle: Battle, sides: list[BattleSide], names: dict[int, str]) -> str:
    """The battle's result in words."""
    if battle.status == "resolved":
        ordered = sorted(sides, key=lambda s: not s.won)  # the winner's score first
        score = "–".join(str(s.victory_points or 0) for s in ordered)
        if ordered and ordered[0].won:
            return f"{names.get(ordered[0].force_id, 'A force')} won {score}"
        return f"Draw {score}"
    return {
        "mustered": "Not recorded yet",
        "proposed": "Result entered, waiting for confirmation",
        "disputed": "Result disputed; an organizer settles it",
        "reverted": "Reverted",
    }.get(battle.status, battle.status)


def _battle_rows(
    session: SessionDep,
    campaign_id: int,
    names: dict[int, str],
    *,
    before: int | None,
    limit: int,
) -> tuple[list[BattleRow], int | None]:
    """A page of battles, newest first, and where the next (older) page starts."""
    rows, older = lifecycle.list_battles(
        session, campaign_id=campaign_id, limit=limit, before=before
    )
    ids = [b.id or 0 for b, _sides in rows]
    reports, pictures = stories.reports_for(session, ids), photos.photos_for(session, ids)
    return [
        BattleRow(
            id=b.id or 0,
            mission=mission_name(b.mission),
            size=size_name(b.battle_size),
            forces=[(s.force_id, names.get(s.force_id, f"Force {s.force_id}")) for s in sides],
            status=b.status,
            result=_result(b, sides, names),
            when=b.resolved_at or b.created_at,
            title=reports[b.id].title if b.id in reports else "",
            photos=len(pictures.get(b.id or 0, [])),
        )
        for b, sides in rows
    ], older


def _events_newest_first(
    session: SessionDep, campaign_id: int, *, before: int | None, limit: int
) -> tuple[list[Any], int | None]:
    """A page of the history, newest first, and where the next (older) page starts."""
    return history.page_events(
        session, campaign_id=campaign_id, limit=limit, cursor=before, newest_first=True
    )


def _chart(session: SessionDep, campaign_id: int, metric: str) -> Any:
    data = progress.progress(session, campaign_id=campaign_id)
    series = [
        Series(f.name, tuple((m.battle, getattr(m, metric)) for m in f.marks)) for f in data.forces
    ]
    return line_chart(series)


@router.get("/campaigns/{campaign_id}")
@ends_read_early
async def dashboard(
    request: Request,
    session: SessionDep,
    principal: Reader,
    campaign_id: int,
    chart: str = "crusade_points",
    joined: str = "",
) -> Response:
    def build() -> Response:
        snapshot_reads(session)  # a member's page reads several things: from one state
        # held while the page is built: the feed and the page ask for it, and the session
        # keeps a row only while something refers to it (the quick check read no row)
        _campaign = forces.get_campaign(session, campaign_id)
        notice = "Welcome to the campaign!" if joined else None
        since = catchup.since_last_visit(session, principal, campaign_id)
        answer = _dashboard(
            request, session, principal, campaign_id, chart=chart, notice=notice, since=since
        )
        return revalidated(
            request, catchup.remember_visit(answer, request, principal, campaign_id, since)
        )

    version = versions.held_campaign_version(session, campaign_id)
    shown = ("dashboard", campaign_id, _metric(chart), bool(joined))
    return await kept_page(request, principal, shown, version, build)


def _dashboard(
    request: Request,
    session: SessionDep,
    principal: Principal | None,
    campaign_id: int,
    *,
    status: int = 200,
    chart: str = "crusade_points",
    **context: Any,
) -> Response:
    version = versions.campaign_version(session, campaign_id)
    role = _role(session, campaign_id, principal)
    organizer = _is_organizer(principal, role)
    can_play = role is not None or organizer
    metric = _metric(chart)
    board = fragments(
        request,
        session,
        ("dashboard", campaign_id, version, metric, can_play),
        lambda: _dashboard_board(session, campaign_id, metric=metric, can_play=can_play),
    )
    waiting = (
        _waiting_here(request, session, principal.user, campaign_id, role)
        if principal is not None and principal.user.id is not None
        else None
    )
    draft = (
        wizard.open_draft(session, campaign_id=campaign_id, user_id=principal.user.id)
        if waiting is not None and principal is not None and principal.user.id is not None
        else None
    )
    rematch = (
        wizard.rematch_of(session, campaign_id=campaign_id, user_id=principal.user.id)
        if waiting is not None and draft is None and principal is not None and principal.user.id
        else None
    )
    campaign = forces.get_campaign(session, campaign_id)
    return render(
        request,
        "pages/campaign.html",
        principal,
        draft=draft,
        rematch=rematch,
        status=status,
        campaign=campaign,
        role=role,
        organizer=organizer,
        can_play=can_play,
        can_join=principal is not None and role is None and campaign.join_policy == "open",
        inbox=waiting,
        mission_name=mission_name,
        **board,
        **context,
    )


def _metric(chart: str) -> str:
    return chart if chart in CHART_METRICS else "crusade_points"


def _waiting_here(
    request: Request, session: SessionDep, user: User, campaign_id: int, role: str | None
) -> inbox.Inbox:
    """What waits for the viewer in this campaign. The header's count (every page's, read
    by the access check) counts the same things in one statement: where it says nothing
    waits here, nothing is read again. An administrator who does not organize the campaign
    is shown its disputes, which that count leaves out."""
    organizer = _is_organizer_role(user, role)
    counted = getattr(request.state, "waiting_for_you", None)
    counts_all = role == "organizer" or not organizer
    if counted is not None and counts_all and not counted.by_campaign.get(campaign_id):
        return inbox.Inbox()
    assert user.id is not None
    return inbox.waiting_for(session, campaign_id=campaign_id, user_id=user.id, organizer=organizer)


def _dashboard_board(
    session: SessionDep, campaign_id: int, *, metric: str, can_play: bool
) -> dict[str, Any]:
    """The dashboard's parts that are the same for every reader of one kind (who may play
    or not): the standings, the recent battles, the chart and the history, rendered."""
    campaign = forces.get_campaign(session, campaign_id)
    table = standings.standings(session, campaign_id=campaign_id)
    names = {s.force_id: s.name for s in table}
    recent, more_battles = _battle_rows(
        session, campaign_id, names, before=None, limit=RECENT_BATTLES
    )
    events, more_history = _events_newest_first(
        session, campaign_id, before=None, limit=HISTORY_SHOWN
    )
    shown: dict[str, Any] = {
        "campaign": campaign,
        "can_play": can_play,
        "standings": table,
        "has_map": any(s.territories for s in table),
        "battles": recent,
        "more_battles": more_battles is not None,
        "events": events,
        "more_history": more_history is not None,
        "names": names,
        "chart": _chart(session, campaign_id, metric),
        "metric": metric,
        "metrics": CHART_METRICS,
        "mission_name": mission_name,
        "size_name": size_name,
        "requisition_name": requisition_name,
    }
    book = rulebooks.campaign_book(session, campaign_id)  # the new-force form's factions
    return {
        "factions": list(book.numbers.crusade_factions),
        "pack_factions": list(packs.factions_named(book)),
        "has_forces": bool(table),
        "standings_html": fragment("partials/_dashboard_standings.html", **shown),
        "board_html": fragment("partials/_dashboard_board.html", **shown),
    }


Before = Annotated[int | None, Query(ge=1, lt=2**31)]


@router.get("/campaigns/{campaign_id}/battles")
@ends_read_early
async def battles_page(
    request: Request,
    session: SessionDep,
    principal: Reader,
    campaign_id: int,
    before: Before = None,
) -> Response:
    def build() -> Response:
        version = versions.campaign_version(session, campaign_id)
        shown = fragments(
            request,
            session,
            ("battles_page", campaign_id, version, before),
            lambda: _battles_list(session, campaign_id, before),
        )
        answer = render(request, "pages/campaign_battles.html", principal, **shown)
        return revalidated(request, answer)

    version = versions.held_campaign_version(session, campaign_id)
    return await kept_page(
        request, principal, ("battles_page", campaign_id, before), version, build
    )


def _battles_list(session: SessionDep, campaign_id: int, before: int | None) -> dict[str, Any]:
    """A page of the battles list, rendered (the same for every reader)."""
    campaign = forces.get_campaign(session, campaign_id)
    names = forces.force_names(session, campaign_id=campaign_id)
    rows, older = _battle_rows(session, campaign_id, names, before=before, limit=BATTLES_PER_PAGE)
    listed = fragment(
        "partials/_battles_list.html", campaign=campaign, battles=rows, before=before, older=older
    )
    return {"campaign": {"id": campaign_id, "name": campaign.name}, "battles_html": listed}


@router.get("/campaigns/{campaign_id}/map")
def map_page(
    request: Request, session: SessionDep, principal: Reader, campaign_id: int
) -> Response:
    """The campaign map (issue 23): drawn as an SVG, who holds what, each territory's
    battles; an organizer draws and edits it here (or through the JSON API)."""
    return _map(request, session, principal, campaign_id)


def _map(
    request: Request,
    session: SessionDep,
    principal: Principal | None,
    campaign_id: int,
    *,
    status: int = 200,
    **context: Any,
) -> Response:
    names = forces.force_names(session, campaign_id=campaign_id)
    return render(
        request,
        "pages/campaign_map.html",
        principal,
        status=status,
        campaign=forces.get_campaign(session, campaign_id),
        view=territories.map_view(session, campaign_id, names),
        names=names,
        organizer=_is_organizer(principal, _role(session, campaign_id, principal)),
        bonuses=TERRITORY_BONUSES,
        **context,
    )


def _map_refused(
    request: Request,
    session: SessionDep,
    principal: Principal,
    campaign_id: int,
    outcome: Outcome,
    form: int | str,
    values: dict[str, Any] | None = None,
) -> Response:
    """The map page again, the refusal shown at the form it came from (a territory's, or
    "new"), with what was sent."""
    return _map(
        request,
        session,
        principal,
        campaign_id,
        **outcome.shown("map_error"),
        map_form=form,
        map_values=values,
    )


TERRITORY_BONUSES = {
    "none": "none",
    "requisition_point": "+1 RP after each battle its holder plays",
}
TERRITORY_MESSAGES = {
    "name": "A territory needs a name of 1 to 80 characters.",
    "description": "A description is at most 2000 characters.",
    "bonus": "Choose a bonus from the list.",
    "neighbours": "A territory has at most 50 neighbours.",
}
Neighbours = Annotated[list[int], Form()]


def _territory_form(
    name: Text = "",
    description: Text = "",
    bonus: Text = "none",
    holder: Text = "",
    neighbours: Neighbours = [],  # noqa: B006 (FastAPI copies form defaults)
) -> dict[str, Any]:
    """A territory's form (add and edit alike), as the JSON API's input model reads it."""
    return {
        "name": name,
        "description": description,
        "bonus": bonus,
        "holder_force_id": int(holder) if holder.isdigit() else None,
        "neighbours": neighbours,
    }


TerritoryForm = Annotated[dict[str, Any], Depends(_territory_form)]


@router.post("/campaigns/{campaign_id}/map/territories")
def add_territory(
    request: Request,
    session: SessionDep,
    principal: Organizer,
    campaign_id: int,
    values: TerritoryForm,
) -> Response:
    with attempt(session) as outcome:
        body = _validated(TerritoryIn, values, TERRITORY_MESSAGES)
        change = territories.TerritoryChange(**body.model_dump())
        row = territories.create(session, campaign_id=campaign_id, change=change)
    if outcome.refused:
        return _map_refused(request, session, principal, campaign_id, outcome, "new", values)
    return redirect(f"/campaigns/{campaign_id}/map#territory-{row.id}")


@router.post("/campaigns/{campaign_id}/map/territories/{territory_id}")
def edit_territory(
    request: Request,
    session: SessionDep,
    principal: Organizer,
    campaign_id: int,
    territory_id: int,
    values: TerritoryForm,
) -> Response:
    with attempt(session) as outcome:
        body = _validated(TerritoryIn, values, TERRITORY_MESSAGES)
        change = territories.TerritoryChange(
            **body.model_dump(), clear_holder=body.holder_force_id is None
        )
        territories.edit(session, campaign_id=campaign_id, territory_id=territory_id, change=change)
    if outcome.refused:
        return _map_refused(request, session, principal, campaign_id, outcome, territory_id, values)
    return redirect(f"/campaigns/{campaign_id}/map#territory-{territory_id}")


@router.post("/campaigns/{campaign_id}/map/territories/{territory_id}/delete")
def delete_territory(
    request: Request,
    session: SessionDep,
    principal: Organizer,
    campaign_id: int,
    territory_id: int,
) -> Response:
    with attempt(session) as outcome:
        territories.delete(session, campaign_id=campaign_id, territory_id=territory_id)
    if outcome.refused:
        return _map_refused(request, session, principal, campaign_id, outcome, territory_id)
    return redirect(f"/campaigns/{campaign_id}/map?deleted=1")


@router.get("/campaigns/{campaign_id}/history")
def history_page(
    request: Request,
    session: SessionDep,
    principal: Reader,
    campaign_id: int,
    before: Before = None,
) -> Response:
    campaign = forces.get_campaign(session, campaign_id)
    names = forces.force_names(session, campaign_id=campaign_id)
    events, older = _events_newest_first(
        session, campaign_id, before=before, limit=HISTORY_PER_PAGE
    )
    return render(
        request,
        "pages/campaign_history.html",
        principal,
        campaign=campaign,
        events=events,
        before=before,
        older=older,
        names=names,
        mission_name=mission_name,
        size_name=size_name,
        requisition_name=requisition_name,
    )


@router.post("/campaigns/{campaign_id}/forces")
def create_force(
    request: Request,
    session: SessionDep,
    principal: Player,
    campaign_id: int,
    name: Text = "",
    crusade_faction: Text = "",
    player_name: Text = "",
    army_keywords: Text = "",
) -> Response:
    values = {"name": name, "crusade_faction": crusade_faction, "player_name": player_name}
    words = [w.strip() for w in army_keywords.split(",") if w.strip()]
    with attempt(session) as outcome:
        body = _checked(ForceCreate, **values, army_keywords=words)
        force = forces.create_force(
            session,
            campaign_id=campaign_id,
            name=body.name,
            crusade_faction=body.crusade_faction,
            player_name=body.player_name,
            owner_id=principal.user.id,
            army_keywords=body.army_keywords,
        )
    if outcome.refused:
        return _dashboard(
            request,
            session,
            principal,
            campaign_id,
            **outcome.shown("force_error"),
            force_values=values | {"army_keywords": army_keywords},
        )
    return redirect(f"/forces/{force.id}")


@router.post("/campaigns/{campaign_id}/join")
def join(session: SessionDep, principal: Joiner, campaign_id: int) -> Response:
    """A refusal (invite-only campaign, already a member) is shown as an error page: the
    caller may not be allowed to read the campaign, so its dashboard is not re-rendered."""
    membership.join_open_campaign(session, campaign_id=campaign_id, user=principal.user)
    return redirect(f"/campaigns/{campaign_id}?joined=1")


# --- members, invites, settings ------------------------------------------------------------


@router.get("/campaigns/{campaign_id}/members")
def members_page(
    request: Request,
    session: SessionDep,
    principal: Reader,
    campaign_id: int,
    saved: str = "",
    withdrawn: str = "",
) -> Response:
    notice = (
        "Campaign settings saved."
        if saved
        else "Invite withdrawn: its link no longer works."
        if withdrawn
        else None
    )
    return _members(request, session, principal, campaign_id, notice=notice)


def _members(
    request: Request,
    session: SessionDep,
    principal: Principal | None,
    campaign_id: int,
    *,
    status: int = 200,
    **context: Any,
) -> Response:
    campaign: Campaign = forces.get_campaign(session, campaign_id)
    role = _role(session, campaign_id, principal)
    organizer = _is_organizer(principal, role)
    return render(
        request,
        "pages/campaign_members.html",
        principal,
        status=status,
        campaign=campaign,
        role=role,
        organizer=organizer,
        members=membership.list_members(session, campaign_id=campaign_id),
        open_invites=membership.open_invites(session, campaign_id=campaign_id) if organizer else [],
        site=site_url(request),
        **context,
    )


@router.post("/campaigns/{campaign_id}/invites")
def create_invite(
    request: Request,
    session: SessionDep,
    principal: Organizer,
    campaign_id: int,
    role: Text = "player",
    hours: Text = "168",
    max_uses: Text = "1",
) -> Response:
    values = {"role": role, "hours": hours, "max_uses": max_uses}
    with attempt(session) as outcome:
        body = _checked(InviteCreate, role=role, hours=hours.strip(), max_uses=max_uses.strip())
        invite = membership.create_invite(session, campaign_id=campaign_id, **body.model_dump())
    if outcome.refused:
        return _members(
            request,
            session,
            principal,
            campaign_id,
            **outcome.shown("invite_error"),
            invite_values=values,
        )
    # Shown now rather than after a redirect: the code is a credential, kept out of URLs.
    return _members(
        request,
        session,
        principal,
        campaign_id,
        invite=invite,
        invite_url=f"{site_url(request)}/invites/{invite.code}",
        notice="Invite created: copy the link below and send it.",
    )


@router.post("/campaigns/{campaign_id}/members/{user_id}/remove")
def remove_member(
    request: Request, session: SessionDep, principal: Organizer, campaign_id: int, user_id: int
) -> Response:
    with attempt(session) as outcome:
        membership.remove_member(session, campaign_id=campaign_id, user_id=user_id)
    if outcome.refused:
        return _members(request, session, principal, campaign_id, **outcome.shown())
    return redirect(f"/campaigns/{campaign_id}/members")


@router.post("/campaigns/{campaign_id}/members/{user_id}/reset-link")
def member_reset_link(
    request: Request, session: SessionDep, principal: Organizer, campaign_id: int, user_id: int
) -> Response:
    with attempt(session) as outcome:
        member, token = membership.member_reset_token(
            session,
            campaign_id=campaign_id,
            user_id=user_id,
            key=secret_key(get_settings()),
            actor=principal.user,
        )
    if outcome.refused:
        return _members(request, session, principal, campaign_id, **outcome.shown())
    # Like an invite code, the token is a credential: shown once in the page, never in a URL.
    return _members(
        request,
        session,
        principal,
        campaign_id,
        reset_for=member,
        reset_url=f"{site_url(request)}/reset-password?token={token}",
    )


@router.post("/campaigns/{campaign_id}/invites/{code}/withdraw")
def withdraw_invite(
    request: Request, session: SessionDep, principal: Organizer, campaign_id: int, code: str
) -> Response:
    with attempt(session) as outcome:
        membership.withdraw_invite(session, campaign_id=campaign_id, code=code[:64])
    if outcome.refused:
        return _members(request, session, principal, campaign_id, **outcome.shown())
    return redirect(f"/campaigns/{campaign_id}/members?withdrawn=1#invites-open")


@router.post("/campaigns/{campaign_id}/settings")
def change_settings(
    request: Request,
    session: SessionDep,
    principal: Organizer,
    campaign_id: int,
    name: Text = "",
    description: Text = "",
    public: Annotated[bool, Form()] = False,
    join_policy: Text = "invite",
    organizer_results_need_confirmation: Annotated[bool, Form()] = False,
) -> Response:
    values = {
        "name": name,
        "description": description,
        "public": public,
        "join_policy": join_policy,
        "organizer_results_need_confirmation": organizer_results_need_confirmation,
    }
    with attempt(session) as outcome:
        body = _checked(CampaignSettings, **values)
        membership.update_settings(session, campaign_id=campaign_id, **body.model_dump())
    if outcome.refused:
        return _members(
            request,
            session,
            principal,
            campaign_id,
            **outcome.shown("settings_error"),
            settings_values=values,
        )
    return redirect(f"/campaigns/{campaign_id}/members?saved=1")
