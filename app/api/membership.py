"""JSON routes for campaign settings, members and invites."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Request, Response, status
from pydantic import BaseModel, Field

from app.api.plumbing.paging import Cursor, KeysetPage, Limit, page_of
from app.config import get_settings, secret_key, site_address
from app.db.models import Invite, User
from app.db.session import SessionDep
from app.edge import present
from app.edge.schemas.campaigns import CampaignPublic, CampaignSettings, InviteCreate
from app.edge.sessions import CurrentPrincipal
from app.routing import OneHopRoute
from app.services.campaigns import membership

router = APIRouter(tags=["membership"], route_class=OneHopRoute)


class MemberPublic(BaseModel):
    user_id: int
    username: str
    display_name: str
    role: str


class InvitePublic(BaseModel):
    code: str
    role: str
    expires_at: datetime
    max_uses: int
    uses: int
    revoked_at: datetime | None = Field(default=None, description="When it was withdrawn")


def _member(user: User, role: str) -> MemberPublic:
    assert user.id is not None
    return MemberPublic(
        user_id=user.id, username=user.username, display_name=user.display_name, role=role
    )


@router.patch("/campaigns/{campaign_id}", summary="Change a campaign's settings (organizers)")
def update_campaign(
    campaign_id: int, body: CampaignSettings, session: SessionDep
) -> CampaignPublic:
    changes = body.model_dump(exclude_unset=True)
    return present.campaign(membership.update_settings(session, campaign_id=campaign_id, **changes))


@router.get(
    "/campaigns/{campaign_id}/members",
    summary="The campaign's members and roles, in the order they joined (a page by key)",
)
def list_members(
    campaign_id: int,
    request: Request,
    response: Response,
    session: SessionDep,
    cursor: Cursor = None,
    limit: Limit = 50,
) -> KeysetPage[MemberPublic]:
    rows = membership.list_members(session, campaign_id=campaign_id, after=cursor, limit=limit + 1)
    return page_of(
        request, response, rows, limit, lambda r: r[0].id, lambda r: _member(r[1], r[0].role)
    )


@router.delete(
    "/campaigns/{campaign_id}/members/{user_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Remove a member (organizers)",
)
def remove_member(campaign_id: int, user_id: int, session: SessionDep) -> None:
    membership.remove_member(session, campaign_id=campaign_id, user_id=user_id)


@router.post(
    "/campaigns/{campaign_id}/invites",
    status_code=status.HTTP_201_CREATED,
    summary="Create an invite code (organizers)",
)
def create_invite(campaign_id: int, body: InviteCreate, session: SessionDep) -> InvitePublic:
    invite = membership.create_invite(session, campaign_id=campaign_id, **body.model_dump())
    return _invite(invite)


@router.get(
    "/campaigns/{campaign_id}/invites",
    summary="Invites that can still be used, newest first (organizers; a page by key)",
)
def list_invites(
    campaign_id: int,
    request: Request,
    response: Response,
    session: SessionDep,
    cursor: Cursor = None,
    limit: Limit = 50,
) -> KeysetPage[InvitePublic]:
    rows = membership.open_invites(session, campaign_id=campaign_id, before=cursor, limit=limit + 1)
    return page_of(request, response, rows, limit, lambda i: i.id, _invite)


@router.delete(
    "/campaigns/{campaign_id}/invites/{code}",
    summary="Withdraw an invite so nobody else can use it (organizers)",
)
def withdraw_invite(
    campaign_id: int, code: Annotated[str, Path(max_length=64)], session: SessionDep
) -> InvitePublic:
    invite = membership.withdraw_invite(session, campaign_id=campaign_id, code=code)
    return _invite(invite)


@router.post(
    "/invites/{code}/accept",
    status_code=status.HTTP_201_CREATED,
    summary="Join a campaign with an invite code",
)
def accept_invite(code: str, principal: CurrentPrincipal, session: SessionDep) -> MemberPublic:
    member = membership.accept_invite(session, code=code, user=principal.user)
    return _member(principal.user, member.role)


@router.post(
    "/campaigns/{campaign_id}/join",
    status_code=status.HTTP_201_CREATED,
    summary="Join a campaign that is open to all",
)
def join(campaign_id: int, principal: CurrentPrincipal, session: SessionDep) -> MemberPublic:
    member = membership.join_open_campaign(session, campaign_id=campaign_id, user=principal.user)
    return _member(principal.user, member.role)


class ResetLink(BaseModel):
    link: str = Field(
        description="One-time, valid 24 hours; hand it to the member. Starts with PUBLIC_URL "
        "when that is set, else with the address this request was sent to"
    )


@router.post(
    "/campaigns/{campaign_id}/members/{user_id}/reset-link",
    summary="A one-time password-reset link for a member (organizers, for a player who plays "
    "only in campaigns they organize; site admins for anyone but another admin)",
)
def reset_link(
    campaign_id: int,
    user_id: int,
    request: Request,
    principal: CurrentPrincipal,
    session: SessionDep,
) -> ResetLink:
    _user, token = membership.member_reset_token(
        session,
        campaign_id=campaign_id,
        user_id=user_id,
        key=secret_key(get_settings()),
        actor=principal.user,
    )
    site = site_address(str(request.base_url))
    return ResetLink(link=f"{site}/reset-password?token={token}")


def _invite(invite: Invite) -> InvitePublic:
    return InvitePublic.model_validate(invite, from_attributes=True)
