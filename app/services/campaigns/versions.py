"""The versions the read caches key their bodies by (issue 50): each is one cheap query,
read from the database on every request, so a cached body is never older than the
database says. A campaign's version rises with every change to anything its reads show
(app.db.models raises it in the flush that makes the change)."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from app.db.models import Battle, Campaign, Card, Force
from app.errors import NotFound
from app.services.accounts.access import held_target


def held_campaign_version(session: Session, campaign_id: int) -> int | None:
    """The campaign's version as this read's access check found it, without a query (None
    when the check found something else): a cached read's hit needs nothing more."""
    return _held(session, ("campaign", campaign_id))


def _held(session: Session, named: tuple[str, int]) -> int | None:
    held = held_target(session, named)
    return int(held.campaign.version) if held is not None else None


def held_force_versions(session: Session, force_id: int) -> tuple[int, int] | None:
    held = held_target(session, ("force", force_id))
    if held is None or held.force_version is None:
        return None
    return int(held.force_version), int(held.campaign.version)


def held_card_version(session: Session, card_id: int) -> int | None:
    return _held(session, ("card", card_id))


def held_battle_version(session: Session, battle_id: int) -> int | None:
    return _held(session, ("battle", battle_id))


def campaign_version(session: Session, campaign_id: int) -> int:
    return _version(
        session,
        held_campaign_version(session, campaign_id),
        select(Campaign.version).where(col(Campaign.id) == campaign_id),
        NotFound("campaign_not_found", f"There is no campaign {campaign_id}."),
    )


def force_versions(session: Session, force_id: int) -> tuple[int, int]:
    """The force's own version and its campaign's (a rule pack renames what it shows)."""
    held = held_force_versions(session, force_id)
    if held is not None:
        return held
    found = session.exec(
        select(Force.version, Campaign.version)
        .join(Campaign, col(Campaign.id) == col(Force.campaign_id))
        .where(col(Force.id) == force_id)
    ).first()
    if found is None:
        raise NotFound("force_not_found", f"There is no Crusade force {force_id}.")
    return int(found[0]), int(found[1])


def card_version(session: Session, card_id: int) -> int:
    """The version of the campaign the card's force plays in."""
    return _version(
        session,
        held_card_version(session, card_id),
        select(Campaign.version)
        .join(Force, col(Force.campaign_id) == col(Campaign.id))
        .join(Card, col(Card.force_id) == col(Force.id))
        .where(col(Card.id) == card_id),
        NotFound("card_not_found", f"There is no Crusade card {card_id}."),
    )


def battle_version(session: Session, battle_id: int) -> int:
    """The version of the campaign the battle was fought in: its sides, reports, decisions,
    story and photos all move it."""
    return _version(
        session,
        held_battle_version(session, battle_id),
        select(Campaign.version)
        .join(Battle, col(Battle.campaign_id) == col(Campaign.id))
        .where(col(Battle.id) == battle_id),
        NotFound("battle_not_found", f"There is no battle {battle_id}."),
    )


def _version(session: Session, held: int | None, query: Any, missing: NotFound) -> int:
    """The version the access check read (``held``), else ``query``'s one campaign version;
    ``missing`` when the row it starts from is not there."""
    if held is not None:
        return held
    version = session.exec(query).first()
    if version is None:
        raise missing
    return int(version)
