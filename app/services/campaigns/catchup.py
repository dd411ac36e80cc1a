"""For people on the website: how much waits for them in each campaign (the header's count,
on every page), and what changed in a campaign since their last visit."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, or_, union_all
from sqlmodel import Session, col, select

from app.db.models import (
    Battle,
    BattleSide,
    CampaignMember,
    CampaignVisit,
    Decision,
    Event,
    Force,
    utcnow,
)
from app.services.feed import events

SHOWN = 10


@dataclass(frozen=True)
class Waiting:
    """What waits for one person, by campaign: the header shows the total."""

    by_campaign: dict[int, int]

    @property
    def total(self) -> int:
        return sum(self.by_campaign.values())

    @property
    def only_campaign(self) -> int | None:
        """The one campaign where something waits, if there is exactly one."""
        return next(iter(self.by_campaign)) if len(self.by_campaign) == 1 else None


def waiting_counts(session: Session, *, user_id: int) -> Waiting:
    """Pending decisions of the user's forces, results an opponent entered for them to
    confirm, and disputed results where they organize: one statement for all campaigns
    (the same things the campaign page's "Waiting for you" lists)."""
    decisions: Any = (
        select(col(Force.campaign_id).label("campaign_id"))
        .join(Decision, col(Decision.force_id) == col(Force.id))
        .where(Force.owner_id == user_id, Decision.status == "pending")
    )
    mine = (
        select(BattleSide.battle_id)
        .join(Force, col(Force.id) == col(BattleSide.force_id))
        .where(Force.owner_id == user_id)
    )
    to_confirm: Any = select(col(Battle.campaign_id).label("campaign_id")).where(
        Battle.status == "proposed",
        col(Battle.id).in_(mine),
        or_(col(Battle.proposed_by).is_(None), col(Battle.proposed_by) != user_id),
    )
    disputed: Any = (
        select(col(Battle.campaign_id).label("campaign_id"))
        .join(
            CampaignMember,
            and_(
                col(CampaignMember.campaign_id) == col(Battle.campaign_id),
                col(CampaignMember.user_id) == user_id,
                col(CampaignMember.role) == "organizer",
            ),
        )
        .where(Battle.status == "disputed")
    )
    waiting = union_all(decisions, to_confirm, disputed).subquery()
    rows = session.execute(
        select(waiting.c.campaign_id, func.count()).group_by(waiting.c.campaign_id)
    ).all()
    return Waiting(by_campaign={int(c): int(n) for c, n in rows})


@dataclass(frozen=True)
class SinceLastVisit:
    events: list[events.FeedEvent]
    more: bool  # more happened than is shown
    newest_id: int  # what the visit has now seen
    first_visit: bool


def since_last_visit(session: Session, *, user_id: int, campaign_id: int) -> SinceLastVisit:
    """What happened in the campaign since the member last opened its page, newest first
    (at most SHOWN). Reading changes nothing: ``mark_seen`` runs after the page is sent."""
    seen = session.exec(
        select(CampaignVisit.last_event_id).where(
            CampaignVisit.user_id == user_id, CampaignVisit.campaign_id == campaign_id
        )
    ).first()
    newest = session.exec(select(func.max(Event.id)).where(Event.campaign_id == campaign_id)).one()
    newest = int(newest or 0)
    start = newest if seen is None else seen
    if start >= newest:  # a first visit, or nothing new since the last: a reload's case
        return SinceLastVisit([], False, newest, seen is None)
    first = session.exec(
        select(Event.id)
        .where(Event.campaign_id == campaign_id, col(Event.id) > start)
        .order_by(col(Event.id).desc())
        .offset(SHOWN)
        .limit(1)
    ).first()
    after = first if first is not None else start
    shown = events.read_feed(session, campaign_id=campaign_id, after=after, limit=SHOWN)
    return SinceLastVisit(list(reversed(shown)), first is not None, newest, seen is None)


def mark_seen(session: Session, *, user_id: int, campaign_id: int, event_id: int) -> None:
    """Remember the newest event the member has seen (never moving backwards)."""
    visit = session.exec(
        select(CampaignVisit).where(
            CampaignVisit.user_id == user_id, CampaignVisit.campaign_id == campaign_id
        )
    ).first()
    if visit is None:
        session.add(CampaignVisit(user_id=user_id, campaign_id=campaign_id, last_event_id=event_id))
    elif event_id > visit.last_event_id:
        visit.last_event_id, visit.seen_at = event_id, utcnow()
        session.add(visit)
