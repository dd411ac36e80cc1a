"""Campaign roles (organizer, player), invites and joining."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select, update

from app.db.models import Campaign, CampaignMember, Invite, User, as_utc, utcnow
from app.db.session import kept_for_read
from app.errors import DomainError, NotFound
from app.services.accounts import accounts
from app.services.feed import history
from app.services.forces.forces import get_campaign

ROLES = ("organizer", "player")


def role_of(session: Session, *, campaign_id: int, user_id: int) -> str | None:
    # A read asks this up to three times (its access check, the page, its "since your last
    # visit"): kept for the read's own session, which changes nothing (issue 50).
    kept: dict[tuple[int, int], str | None] | None = kept_for_read(session, "roles")
    if kept is not None and (campaign_id, user_id) in kept:
        return kept[campaign_id, user_id]
    query = select(CampaignMember.role).where(
        CampaignMember.campaign_id == campaign_id, CampaignMember.user_id == user_id
    )
    role = session.exec(query).first()
    if kept is not None:
        kept[campaign_id, user_id] = role
    return role


def add_member(session: Session, *, campaign_id: int, user: User, role: str) -> CampaignMember:
    assert user.id is not None
    existing = session.exec(
        select(CampaignMember).where(
            CampaignMember.campaign_id == campaign_id, CampaignMember.user_id == user.id
        )
    ).first()
    if existing is not None:
        raise DomainError(
            "already_a_member", "You are already a member of this campaign.", status=409
        )
    member = CampaignMember(campaign_id=campaign_id, user_id=user.id, role=role)
    session.add(member)
    try:
        session.flush()
    except IntegrityError:  # the same account joining twice at once: one of them wins
        raise DomainError(
            "already_a_member", "You are already a member of this campaign.", status=409
        ) from None
    history.record(
        session, campaign_id=campaign_id, kind="member_joined", user=user.username, role=role
    )
    return member


def list_members(
    session: Session, *, campaign_id: int, after: int | None = None, limit: int | None = None
) -> list[tuple[CampaignMember, User]]:
    """In the order they joined; ``after`` (a membership id) and ``limit`` give a page."""
    get_campaign(session, campaign_id)
    query = (
        select(CampaignMember, User)
        .join(User, col(User.id) == col(CampaignMember.user_id))
        .where(CampaignMember.campaign_id == campaign_id)
        .order_by(col(CampaignMember.id))
    )
    if after is not None:
        query = query.where(col(CampaignMember.id) > after)
    if limit is not None:
        query = query.limit(limit)
    return [(m, u) for m, u in session.exec(query).all()]


def is_organizer(session: Session, *, campaign_id: int, user: User) -> bool:
    """An organizer of this campaign, or a site admin (who may do what organizers do)."""
    assert user.id is not None
    return user.is_admin or role_of(session, campaign_id=campaign_id, user_id=user.id) == (
        "organizer"
    )


def member(session: Session, *, campaign_id: int, user_id: int) -> User:
    """A member's account; site admins are not reachable through a campaign."""
    role = role_of(session, campaign_id=campaign_id, user_id=user_id)
    user = session.get(User, user_id)
    if role is None or user is None or user.is_admin:
        raise NotFound("member_not_found", f"User {user_id} is not a member of this campaign.")
    return user


def member_reset_token(
    session: Session, *, campaign_id: int, user_id: int, key: str, actor: User
) -> tuple[User, str]:
    """A one-time password-reset token for a member, for an organizer to hand over (there is
    no email). Site admins reset theirs with the CLI."""
    user = member(session, campaign_id=campaign_id, user_id=user_id)
    if not actor.is_admin:
        _check_may_reset(session, actor=actor, user=user)
    return user, accounts.reset_token(user, key)


def _check_may_reset(session: Session, *, actor: User, user: User) -> None:
    """A reset hands the whole account over, so an organizer may reset only an account that
    lives entirely inside campaigns they organize, and never another organizer's: otherwise
    one organizer could take over a campaign they do not run. Beyond that: a site admin."""
    memberships = session.exec(
        select(CampaignMember.campaign_id, CampaignMember.role).where(
            CampaignMember.user_id == user.id
        )
    ).all()
    organized = set(
        session.exec(
            select(CampaignMember.campaign_id).where(
                CampaignMember.user_id == actor.id, CampaignMember.role == "organizer"
            )
        ).all()
    )
    if any(role == "organizer" for _, role in memberships):
        raise DomainError(
            "reset_needs_site_admin",
            f"{user.username} organizes a campaign; only a site admin can reset their password.",
            status=403,
            field="user_id",
        )
    if any(campaign_id not in organized for campaign_id, _ in memberships):
        raise DomainError(
            "reset_needs_site_admin",
            f"{user.username} also plays in a campaign you do not organize; only a site admin "
            "can reset their password.",
            status=403,
            field="user_id",
        )


def remove_member(session: Session, *, campaign_id: int, user_id: int) -> None:
    member = session.exec(
        select(CampaignMember).where(
            CampaignMember.campaign_id == campaign_id, CampaignMember.user_id == user_id
        )
    ).first()
    if member is None:
        raise NotFound("member_not_found", f"User {user_id} is not a member of this campaign.")
    session.delete(member)
    # the name too: a copy of the campaign in another install names no account (transfer)
    gone = session.get(User, user_id)
    history.record(
        session,
        campaign_id=campaign_id,
        kind="member_removed",
        user_id=user_id,
        user=gone.username if gone else None,
    )


def update_settings(
    session: Session,
    *,
    campaign_id: int,
    name: str | None = None,
    description: str | None = None,
    public: bool | None = None,
    join_policy: str | None = None,
    organizer_results_need_confirmation: bool | None = None,
) -> Campaign:
    campaign = get_campaign(session, campaign_id)
    wanted = {
        "name": name.strip() if name is not None else None,
        "description": description,
        "public": public,
        "join_policy": join_policy,
        "organizer_results_need_confirmation": organizer_results_need_confirmation,
    }
    changed = sorted(
        field
        for field, value in wanted.items()
        if value is not None and getattr(campaign, field) != value
    )
    for field in changed:
        setattr(campaign, field, wanted[field])
    if changed:  # nothing new, nothing in the history (a bot re-sending its settings)
        session.add(campaign)
        history.record(
            session, campaign_id=campaign_id, kind="campaign_settings_changed", fields=changed
        )
    return campaign


def create_invite(
    session: Session, *, campaign_id: int, role: str, hours: int, max_uses: int
) -> Invite:
    get_campaign(session, campaign_id)
    invite = Invite(
        campaign_id=campaign_id,
        code=secrets.token_urlsafe(18),
        role=role,
        expires_at=utcnow() + timedelta(hours=hours),
        max_uses=max_uses,
        created_by=session.info.get("actor_id"),
    )
    session.add(invite)
    session.flush()
    history.record(session, campaign_id=campaign_id, kind="invite_created", role=role)
    return invite


def open_invites(
    session: Session, *, campaign_id: int, before: int | None = None, limit: int | None = None
) -> list[Invite]:
    """Invites someone could still use: not withdrawn, not expired, not used up; newest
    first. ``before`` (an invite id) and ``limit`` give a page: every condition is in the
    query, so a page is never cut short by expired invites dropped after it."""
    get_campaign(session, campaign_id)
    query = (
        select(Invite)
        .where(
            Invite.campaign_id == campaign_id,
            col(Invite.revoked_at).is_(None),
            col(Invite.uses) < col(Invite.max_uses),
            col(Invite.expires_at) > utcnow(),
        )
        .order_by(col(Invite.id).desc())
    )
    if before is not None:
        query = query.where(col(Invite.id) < before)
    if limit is not None:
        query = query.limit(limit)
    return list(session.exec(query).all())


def withdraw_invite(session: Session, *, campaign_id: int, code: str) -> Invite:
    """Stop an invite working (a link shared too widely, a player who will not come)."""
    invite = session.exec(
        select(Invite).where(Invite.campaign_id == campaign_id, Invite.code == code)
    ).first()
    if invite is None:
        raise NotFound("invite_not_found", "This campaign has no such invite code.")
    if invite.revoked_at is None:
        invite.revoked_at = utcnow()
        session.add(invite)
        history.record(session, campaign_id=campaign_id, kind="invite_withdrawn", role=invite.role)
    return invite


def accept_invite(session: Session, *, code: str, user: User) -> CampaignMember:
    invite = session.exec(select(Invite).where(Invite.code == code)).first()
    if invite is None or invite.revoked_at is not None:
        raise NotFound("invite_not_found", "This invite code is unknown or was withdrawn.")
    if as_utc(invite.expires_at) <= datetime.now(UTC):
        raise DomainError("invite_expired", "This invite has expired.", status=410)
    # One conditional UPDATE: two people accepting the last use at once cannot both get it.
    taken = session.execute(
        update(Invite)
        .where(col(Invite.id) == invite.id, col(Invite.uses) < col(Invite.max_uses))
        .values(uses=col(Invite.uses) + 1)
    )
    if taken.rowcount != 1:  # type: ignore[attr-defined]
        raise DomainError("invite_used_up", "This invite has already been used.", status=410)
    return add_member(session, campaign_id=invite.campaign_id, user=user, role=invite.role)


def join_open_campaign(session: Session, *, campaign_id: int, user: User) -> CampaignMember:
    campaign = get_campaign(session, campaign_id)
    if campaign.join_policy != "open":
        raise DomainError(
            "campaign_invite_only",
            "This campaign is joined by invite only; ask an organizer for a code.",
            status=403,
        )
    return add_member(session, campaign_id=campaign_id, user=user, role="player")
