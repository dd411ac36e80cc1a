"""Who may do what: every route names one Access rule, decided here in one place.

A request's target (campaign, and the owners of the force it touches) is found from its
path parameters; the caller's role in that campaign and the rule give the answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from sqlalchemy import bindparam, func
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from app.db.models import Battle, BattleSide, Campaign, Card, Decision, Force
from app.db.session import QUICK_READ, kept_for_read, quick_statement, shared_read
from app.errors import DomainError, NotFound
from app.services.accounts.accounts import Principal
from app.services.campaigns.membership import role_of


class Access(StrEnum):
    PUBLIC = "public"  # anyone, logged in or not
    USER = "user"  # any account
    CAMPAIGN_READ = "campaign:read"  # members, or anyone if the campaign is public
    CAMPAIGN_PLAY = "campaign:play"  # players and organizers
    CAMPAIGN_ORGANIZE = "campaign:organize"  # organizers
    FORCE_OWN = "force:own"  # the force's owner, or an organizer
    BATTLE_PLAY = "battle:play"  # the owner of a force in the battle, or an organizer
    BATTLE_ORGANIZE = "battle:organize"  # organizers of the battle's campaign


@dataclass(frozen=True)
class CampaignFacts:
    """What the access check and a cached read need of a campaign, read without the ORM
    (a quick read's check: app/db/session.py ``ends_read_early``)."""

    id: int
    public: bool
    version: int


@dataclass(frozen=True)
class Target:
    campaign: Campaign | CampaignFacts
    owners: frozenset[int] = field(default_factory=frozenset)
    # What the path named ("force", 7), and that force's version: a cached read keys its
    # body by versions the check has just read, so it need not ask again (issue 50).
    named: tuple[str, int] | None = None
    force_version: int | None = None


def authorize(
    session: Session,
    *,
    access: Access,
    principal: Principal | None,
    params: Mapping[str, Any],
    method: str,
) -> None:
    """Raise 401/403/404 unless ``principal`` may make this request."""
    if access == Access.PUBLIC:
        return
    if principal is None and access != Access.CAMPAIGN_READ:
        raise DomainError("not_authenticated", "Log in or send an API token.", status=401)
    if principal is not None:
        _check_token(principal, method)
    target = _target(session, params)
    # Held for the request: the identity map keeps the campaign only while something refers
    # to it, and the route's service asks for it again (issue 41).
    session.info["access.target"] = target
    if target is None:
        _check_token_campaign(principal, None)
        return
    _check_token_campaign(principal, target.campaign.id)
    if not _allowed(session, access, principal, target):
        if principal is None:
            raise DomainError("not_authenticated", "Log in or send an API token.", status=401)
        raise DomainError("forbidden", _why(access), status=403)


def _check_token(principal: Principal, method: str) -> None:
    if method not in ("GET", "HEAD", "OPTIONS") and not principal.can_write:
        raise DomainError(
            "token_read_only", "This API token is read-only; it cannot change anything.", status=403
        )


def _check_token_campaign(principal: Principal | None, campaign_id: int | None) -> None:
    token = principal.token if principal else None
    if token is not None and token.campaign_id is not None and token.campaign_id != campaign_id:
        raise DomainError(
            "token_campaign_limited",
            f"This API token only works for campaign {token.campaign_id}.",
            status=403,
        )


def _allowed(session: Session, access: Access, principal: Principal | None, target: Target) -> bool:
    if access == Access.CAMPAIGN_READ and target.campaign.public:
        return True
    if principal is None:
        return False
    user = principal.user
    if user.is_admin:
        return True
    assert user.id is not None and target.campaign.id is not None
    role = role_of(session, campaign_id=target.campaign.id, user_id=user.id)
    if role == "organizer" or access == Access.USER:
        return True
    if access in (Access.CAMPAIGN_READ, Access.CAMPAIGN_PLAY):
        return role is not None
    if access in (Access.FORCE_OWN, Access.BATTLE_PLAY):
        return role is not None and user.id in target.owners
    return False


def _why(access: Access) -> str:
    return {
        Access.CAMPAIGN_READ: "Only members can see this campaign.",
        Access.CAMPAIGN_PLAY: "Only the campaign's players and organizers can do this.",
        Access.CAMPAIGN_ORGANIZE: "Only the campaign's organizers can do this.",
        Access.FORCE_OWN: "Only the force's owner or an organizer can change it.",
        Access.BATTLE_PLAY: "Only the players in this battle or an organizer can do this.",
        Access.BATTLE_ORGANIZE: "Only the campaign's organizers can do this.",
    }.get(access, "You may not do this.")


def _id(params: Mapping[str, Any], name: str) -> int:
    """A path id, checked here because access is decided before the route parses it."""
    raw = str(params[name])
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 9:  # '¹'.isdigit() is True
        raise DomainError(
            "request_invalid",
            f"path.{name}: must be a whole number below 1,000,000,000.",
            status=422,
            field=f"path.{name}",
        )
    return int(raw)


def _target(session: Session, params: Mapping[str, Any]) -> Target | None:
    """The campaign (and force owners) a request is about, from its path parameters."""
    if session.info.get(QUICK_READ):
        quick = _quick_target(session, params)
        if quick is not None:
            return quick
    if "force_id" in params:
        force_id = _id(params, "force_id")
        return _force_target(session, force_id, named=("force", force_id))
    if "card_id" in params:
        card_id = _id(params, "card_id")
        row = session.exec(select(Card.force_id).where(Card.id == card_id)).first()
        if row is None:
            raise NotFound("card_not_found", f"There is no Crusade card {params['card_id']}.")
        return _force_target(session, row, named=("card", card_id))
    if "decision_id" in params:
        row = session.exec(
            select(Decision.force_id).where(Decision.id == _id(params, "decision_id"))
        ).first()
        if row is None:
            raise NotFound("decision_not_found", f"There is no decision {params['decision_id']}.")
        return _force_target(session, row)
    if "battle_id" in params:
        return _battle_target(session, _id(params, "battle_id"))
    if "campaign_id" in params:
        campaign_id = _id(params, "campaign_id")
        return Target(_campaign(session, campaign_id), named=("campaign", campaign_id))
    return None


# A cached read's hit is its access check and nothing more: its one statement is made in
# SQL alone, without the ORM (whose entity loading cost several times the query itself).
# The campaign's row is then not in the session; a miss, which builds, reads it again.
_CT, _FT, _KT = Campaign.__table__, Force.__table__, Card.__table__  # type: ignore[attr-defined]
_C, _F, _K = _CT.c, _FT.c, _KT.c
_FACTS = (_C.id, _C.public, _C.version)
_BY_FORCE = (
    sa_select(*_FACTS, _F.owner_id, _F.version)
    .select_from(_FT.join(_CT, _C.id == _F.campaign_id))
    .where(_F.id == bindparam("force_id"))
)
_BY_CARD = (
    sa_select(*_FACTS, _F.owner_id, _F.version, _F.id)
    .select_from(_KT.join(_FT, _F.id == _K.force_id).join(_CT, _C.id == _F.campaign_id))
    .where(_K.id == bindparam("card_id"))
)
_BY_CAMPAIGN = sa_select(*_FACTS).where(_C.id == bindparam("campaign_id"))
_BT, _ST = Battle.__table__, BattleSide.__table__  # type: ignore[attr-defined]
# A battle has exactly two sides (app/edge/schemas/battles.py): their players are the
# lower and the higher owner id, so one row holds them.
_SIDE_OWNERS = _ST.join(_FT, _F.id == _ST.c.force_id)
_PLAYERS = [
    sa_select(agg(_F.owner_id))
    .select_from(_SIDE_OWNERS)
    .where(_ST.c.battle_id == _BT.c.id)
    .scalar_subquery()
    for agg in (func.min, func.max)
]
_BY_BATTLE = (
    sa_select(*_FACTS, *_PLAYERS)
    .select_from(_BT.join(_CT, _C.id == _BT.c.campaign_id))
    .where(_BT.c.id == bindparam("battle_id"))
)


def _quick_target(session: Session, params: Mapping[str, Any]) -> Target | None:
    """A quick read's target, when its path names a force, a card or a campaign."""
    if "force_id" in params:
        force_id = _id(params, "force_id")
        row = _facts_row(session, _BY_FORCE, "force_id", force_id)
        if row is None:
            raise NotFound("force_not_found", f"There is no Crusade force {force_id}.")
        return _kept_force(session, row, force_id, ("force", force_id))
    if "card_id" in params:
        card_id = _id(params, "card_id")
        card = _facts_row(session, _BY_CARD, "card_id", card_id)
        if card is None:
            raise NotFound("card_not_found", f"There is no Crusade card {params['card_id']}.")
        return _kept_force(session, card, int(card[5]), ("card", card_id))
    if "battle_id" in params:
        battle_id = _id(params, "battle_id")
        battle = _facts_row(session, _BY_BATTLE, "battle_id", battle_id)
        if battle is None:
            raise NotFound("battle_not_found", f"There is no battle {battle_id}.")
        players = frozenset(o for o in (battle[3], battle[4]) if o is not None)
        return Target(_facts(battle), players, named=("battle", battle_id))
    if "campaign_id" in params:
        campaign_id = _id(params, "campaign_id")
        campaign = _facts_row(session, _BY_CAMPAIGN, "campaign_id", campaign_id)
        if campaign is None:
            raise NotFound("campaign_not_found", f"There is no campaign {campaign_id}.")
        return Target(_facts(campaign), named=("campaign", campaign_id))
    return None


def _facts_row(session: Session, statement: Any, name: str, value: int) -> Any:
    """The facts of one force, card or campaign: the same for whoever asks (who they are is
    decided from them afterwards), so one round trip may answer several readers."""
    return shared_read(
        session, (name, value), lambda: quick_statement(session, statement, {name: value})
    )


def _facts(row: Any) -> CampaignFacts:
    return CampaignFacts(int(row[0]), bool(row[1]), int(row[2]))


def _kept_force(session: Session, row: Any, force_id: int, named: tuple[str, int]) -> Target:
    owner = row[3]
    target = Target(
        _facts(row), frozenset({owner} if owner else set()), named=named, force_version=row[4]
    )
    kept = kept_for_read(session, FORCE_TARGETS)  # as _force_target keeps it
    if kept is not None:
        kept[force_id] = target
    return target


FORCE_TARGETS = "access.force_targets"


def _campaign(session: Session, campaign_id: int) -> Campaign:
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise NotFound("campaign_not_found", f"There is no campaign {campaign_id}.")
    return campaign


def _force_target(session: Session, force_id: int, named: tuple[str, int] | None = None) -> Target:
    # One query for the force's owner, its version and its campaign: every force, card and
    # decision request passes here (a cached Order of Battle costs little more than this).
    # A read asks again for the page's own checks (may this viewer change it?): kept for
    # the read's own session, which changes nothing.
    kept = kept_for_read(session, FORCE_TARGETS)
    if kept is not None and force_id in kept:
        found = kept[force_id]
        return Target(found.campaign, found.owners, named=named, force_version=found.force_version)
    target = _force_target_read(session, force_id, named)
    if kept is not None:
        kept[force_id] = target
    return target


def _force_target_read(session: Session, force_id: int, named: tuple[str, int] | None) -> Target:
    row = session.exec(
        select(Campaign, Force.owner_id, Force.version)
        .join(Force, col(Force.campaign_id) == col(Campaign.id))
        .where(Force.id == force_id)
    ).first()
    if row is None:
        raise NotFound("force_not_found", f"There is no Crusade force {force_id}.")
    campaign, owner, version = row
    owners = frozenset({owner} if owner else set())
    return Target(campaign, owners, named=named, force_version=version)


def held_target(session: Session, named: tuple[str, int]) -> Target | None:
    """The target this read's access check found from the same path, if that is what
    ``named`` is: its versions were read moments ago, in this transaction."""
    return None if session.info.get("writes") else _checked(session, named)


def _checked(session: Session, named: tuple[str, int]) -> Target | None:
    """The target this request's access check found, if it is the one ``named``."""
    target = session.info.get("access.target")
    return target if isinstance(target, Target) and target.named == named else None


def _battle_target(session: Session, battle_id: int) -> Target:
    # One statement for the campaign (an entity: the route's service asks for it again)
    # and the battle's players, a row per side: every result, confirm and report passes
    # here (three statements before, issue 50).
    rows = session.exec(
        select(Campaign, Force.owner_id)
        .join(Battle, col(Battle.campaign_id) == col(Campaign.id))
        .outerjoin(BattleSide, col(BattleSide.battle_id) == col(Battle.id))
        .outerjoin(Force, col(Force.id) == col(BattleSide.force_id))
        .where(Battle.id == battle_id)
    ).all()
    if not rows:
        raise NotFound("battle_not_found", f"There is no battle {battle_id}.")
    campaign = rows[0][0]
    players = frozenset(owner for _campaign, owner in rows if owner is not None)
    return Target(campaign, players, named=("battle", battle_id))


def battle_players(session: Session, battle_id: int) -> frozenset[int] | None:
    """The players of the battle this request's access check was about, as it read them (in
    this transaction, moments ago: the players it authorized by), or None if it was about
    something else."""
    target = _checked(session, ("battle", battle_id))
    return target.owners if target is not None else None
