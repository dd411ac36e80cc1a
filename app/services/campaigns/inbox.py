"""What waits for one person in a campaign: their forces' pending decisions, results their
opponent entered for them to confirm, and (for organizers) disputed results. A fixed number
of statements whatever the number of forces, battles or decisions."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sqlmodel import Session, col, select

from app.db.models import Battle, BattleSide, CampaignMember, Card, Decision, Force


@dataclass(frozen=True)
class WaitingDecision:
    decision_id: int
    kind: str
    force_id: int
    force_name: str
    card_name: str | None
    battle_id: int | None


@dataclass(frozen=True)
class WaitingBattle:
    battle_id: int
    mission: str
    force_names: tuple[str, ...]


@dataclass(frozen=True)
class Inbox:
    decisions: list[WaitingDecision] = field(default_factory=list)
    to_confirm: list[WaitingBattle] = field(default_factory=list)
    disputed: list[WaitingBattle] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.decisions or self.to_confirm or self.disputed)

    @property
    def count(self) -> int:
        return len(self.decisions) + len(self.to_confirm) + len(self.disputed)


def waiting_for(session: Session, *, campaign_id: int, user_id: int, organizer: bool) -> Inbox:
    """Everything in ``campaign_id`` that waits for ``user_id`` to act (at most four
    statements)."""
    decisions = session.exec(
        select(Decision, Force.name, Card.name)
        .join(Force, col(Force.id) == col(Decision.force_id))
        .outerjoin(Card, col(Card.id) == col(Decision.card_id))
        .where(
            Force.campaign_id == campaign_id,
            Force.owner_id == user_id,
            Decision.status == "pending",
        )
        .order_by(col(Decision.id))
    ).all()
    # A proposal is confirmed by the other player: one of the viewer's forces is in the
    # battle and the viewer did not enter the result.
    mine = select(BattleSide.battle_id).join(Force, col(Force.id) == col(BattleSide.force_id))
    mine = mine.where(Force.owner_id == user_id)
    proposed = session.exec(
        select(Battle)
        .where(
            Battle.campaign_id == campaign_id,
            Battle.status == "proposed",
            col(Battle.id).in_(mine),
            (col(Battle.proposed_by).is_(None)) | (col(Battle.proposed_by) != user_id),
        )
        .order_by(col(Battle.id))
    ).all()
    disputed = (
        session.exec(
            select(Battle)
            .where(Battle.campaign_id == campaign_id, Battle.status == "disputed")
            .order_by(col(Battle.id))
        ).all()
        if organizer
        else []
    )
    names = _force_names(session, [b.id for b in (*proposed, *disputed) if b.id is not None])
    return Inbox(
        decisions=[
            WaitingDecision(
                decision_id=d.id or 0,
                # a rule pack's threshold owes free requisitions: not a victor's bonus
                kind="free_requisitions"
                if d.payload.get("threshold") or d.payload.get("quest")
                else d.kind,
                force_id=d.force_id,
                force_name=force_name,
                card_name=card_name,
                battle_id=d.battle_id,
            )
            for d, force_name, card_name in decisions
        ],
        to_confirm=[_waiting(b, names) for b in proposed],
        disputed=[_waiting(b, names) for b in disputed],
    )


def _force_names(session: Session, battle_ids: list[int]) -> dict[int, list[str]]:
    if not battle_ids:
        return {}
    rows = session.exec(
        select(BattleSide.battle_id, Force.name)
        .join(Force, col(Force.id) == col(BattleSide.force_id))
        .where(col(BattleSide.battle_id).in_(battle_ids))
        .order_by(col(BattleSide.id))
    ).all()
    names: dict[int, list[str]] = defaultdict(list)
    for battle_id, name in rows:
        names[battle_id].append(name)
    return names


def _waiting(battle: Battle, names: dict[int, list[str]]) -> WaitingBattle:
    assert battle.id is not None
    return WaitingBattle(
        battle_id=battle.id, mission=battle.mission, force_names=tuple(names.get(battle.id, []))
    )


def roles(session: Session, *, user_id: int) -> dict[int, str]:
    """The user's role in each campaign they belong to, by campaign id."""
    rows = session.exec(
        select(CampaignMember.campaign_id, CampaignMember.role).where(
            CampaignMember.user_id == user_id
        )
    ).all()
    return dict(rows)
