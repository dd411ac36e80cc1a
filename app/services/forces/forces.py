"""Campaigns, Crusade forces and their Crusade cards."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, col, func, select

from app.db.locks import for_change, held, lock_campaigns_of_forces
from app.db.models import (
    Battle,
    BattleSide,
    Campaign,
    CampaignMember,
    Card,
    Decision,
    Force,
    User,
)
from app.errors import NotFound
from app.rules import cards as card_rules
from app.rules import order_of_battle as oob_rules
from app.rules import packs
from app.rules.cards import CrusadeCard
from app.rules.data import Rulebook
from app.rules.errors import RuleError
from app.rules.order_of_battle import OrderOfBattle
from app.services.feed import history
from app.services.forces.convert import card_value, force_value, upgrade_json, write_card
from app.services.packs import rulebooks


@dataclass
class ForceView:
    """A force with its cards, its rule value, and which cards await decisions."""

    force: Force
    cards: list[Card]
    value: OrderOfBattle
    pending_card_ids: set[int]


# --- campaigns ---------------------------------------------------------------------------


def create_campaign(
    session: Session, *, name: str, description: str = "", organizer_id: int | None = None
) -> Campaign:
    """A new campaign; whoever creates it is its first organizer."""
    campaign = Campaign(name=name.strip(), description=description)
    session.add(campaign)
    session.flush()
    assert campaign.id is not None
    if organizer_id is not None:
        session.add(CampaignMember(campaign_id=campaign.id, user_id=organizer_id, role="organizer"))
    history.record(session, campaign_id=campaign.id, kind="campaign_created", name=campaign.name)
    return campaign


def get_campaign(session: Session, campaign_id: int) -> Campaign:
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise NotFound("campaign_not_found", f"There is no campaign {campaign_id}.")
    return campaign


def list_campaigns(
    session: Session,
    *,
    offset: int,
    limit: int,
    viewer: User | None = None,
    only: int | None = None,
    after: int | None = None,
) -> tuple[list[Campaign], int]:
    """Campaigns the viewer may see: public ones and their own (an admin sees all); ``only``
    narrows them to one (the campaign an API token is limited to); ``after`` starts after
    that campaign id (a keyset page)."""
    query = select(Campaign)
    if after is not None:
        query = query.where(col(Campaign.id) > after)
    if only is not None:
        query = query.where(Campaign.id == only)
    if viewer is None or not viewer.is_admin:
        mine = select(CampaignMember.campaign_id).where(
            CampaignMember.user_id == (viewer.id if viewer else -1)
        )
        query = query.where(col(Campaign.public).is_(True) | col(Campaign.id).in_(mine))
    total = session.exec(select(func.count()).select_from(query.subquery())).one()
    rows = session.exec(query.order_by(col(Campaign.id)).offset(offset).limit(limit))
    return list(rows.all()), total


# --- forces --------------------------------------------------------------------------------


def create_force(
    session: Session,
    *,
    campaign_id: int,
    name: str,
    crusade_faction: str,
    player_name: str = "",
    notes: str = "",
    owner_id: int | None = None,
    army_keywords: list[str] | None = None,
) -> Force:
    get_campaign(session, campaign_id)
    book = rulebooks.campaign_book(session, campaign_id)
    value = oob_rules.start_order_of_battle(
        id="new", name=name, crusade_faction=crusade_faction, book=book
    )
    army = _army_keywords(book, value.crusade_faction, army_keywords or [])
    force = Force(
        campaign_id=campaign_id,
        name=value.name,
        player_name=player_name.strip(),
        crusade_faction=value.crusade_faction,
        requisition_points=value.requisition_points,
        supply_limit=value.supply_limit,
        notes=notes,
        owner_id=owner_id,
        army_keywords=army,
        counters=rulebooks.starting_counters(packs.narrow(book, [value.crusade_faction, *army])),
    )
    session.add(force)
    session.flush()
    history.record(
        session, campaign_id=campaign_id, force_id=force.id, kind="force_created", name=force.name
    )
    return force


def get_force(session: Session, force_id: int) -> Force:
    """The force row; a command that writes locks it (PostgreSQL: FOR UPDATE), so two app
    processes never both spend the same Requisition points."""
    force = for_change(session, Force, force_id)
    if force is None:
        raise NotFound("force_not_found", f"There is no Crusade force {force_id}.")
    return force


def list_forces(
    session: Session, *, campaign_id: int, limit: int, after: int | None = None
) -> list[ForceView]:
    """A page of the campaign's forces with their cards, in four statements; ``after``
    starts after that force id (a keyset page)."""
    get_campaign(session, campaign_id)
    query = select(Force).where(Force.campaign_id == campaign_id)
    if after is not None:
        query = query.where(col(Force.id) > after)
    rows = session.exec(query.order_by(col(Force.id)).limit(limit)).all()
    return _views(session, list(rows))


def force_names(session: Session, *, campaign_id: int) -> dict[int, str]:
    """Every force of the campaign by id, name only (for lists that mention forces)."""
    query = select(Force.id, Force.name).where(Force.campaign_id == campaign_id)
    return {force_id: name for force_id, name in session.exec(query).all() if force_id}


def load_force(session: Session, force_id: int) -> ForceView:
    """The force, all its cards and its pending decisions in three statements."""
    return _views(session, [get_force(session, force_id)])[0]


def _views(session: Session, rows: list[Force]) -> list[ForceView]:
    ids = [f.id for f in rows]
    cards = session.exec(select(Card).where(col(Card.force_id).in_(ids)).order_by(col(Card.id)))
    pending = session.exec(
        select(Decision.force_id, Decision.card_id).where(
            col(Decision.force_id).in_(ids), Decision.status == "pending"
        )
    ).all()
    by_force: dict[int, list[Card]] = {i: [] for i in ids if i is not None}
    for card in cards:
        by_force[card.force_id].append(card)
    views = []
    for force in rows:
        assert force.id is not None
        mine = by_force[force.id]
        waiting = {c for f, c in pending if f == force.id and c is not None}
        views.append(ForceView(force, mine, force_value(force, mine), waiting))
    return views


def update_force(
    session: Session,
    *,
    force_id: int,
    name: str | None = None,
    notes: str | None = None,
    player_name: str | None = None,
    army_keywords: list[str] | None = None,
) -> Force:
    """Names, notes and army keywords only: the numbers of an Order of Battle change through
    the rules."""
    force = get_force(session, force_id)
    if army_keywords is not None:
        set_army_keywords(session, force=force, army_keywords=army_keywords)
    if name is not None:
        if not name.strip():
            raise RuleError("force_name_missing", "A Crusade force needs a name.", field="name")
        force.name = name.strip()
    if notes is not None:
        force.notes = notes
    if player_name is not None:
        force.player_name = player_name.strip()
    session.add(force)
    return force


def set_army_keywords(session: Session, *, force: Force, army_keywords: list[str]) -> None:
    """Where the force belongs, beyond its Crusade faction (issue 47): the faction keywords
    its rule packs' scopes read. What it holds stays (counters, quests, relics); content it
    leaves stops moving, content it joins starts. Refused while a battle of it is under way
    (the battle's side plays with the book it was mustered under)."""
    book = rulebooks.campaign_book(session, force.campaign_id)
    army = _army_keywords(book, force.crusade_faction, army_keywords)
    if army == list(force.army_keywords):
        return
    if _battle_under_way(session, force):
        raise RuleError(
            "army_keywords_fixed_during_battle",
            f"{force.name}'s army keywords cannot change while it has a battle under way.",
            field="army_keywords",
        )
    before = list(force.army_keywords)
    force.army_keywords = army
    session.add(force)
    history.record(
        session,
        campaign_id=force.campaign_id,
        force_id=force.id,
        kind="army_keywords_changed",
        army_keywords_before=before,
        army_keywords=army,
    )


def _army_keywords(book: Rulebook, crusade_faction: str, words: list[str]) -> list[str]:
    """The army keywords asked for, as the rules write them, each known to the campaign (a
    Crusade faction, a faction keyword of the core or of its packs), its Crusade faction and
    repeats left out."""
    known = packs.known_factions(book)
    army: list[str] = []
    for word in words:
        found = known.get(packs.keyword(word))
        if found is None:
            raise RuleError(
                "army_keyword_unknown",
                f"'{word}' is not a faction keyword of this campaign: name one of "
                f"{', '.join(sorted(set(known.values())))}.",
                field="army_keywords",
            )
        if found != crusade_faction and found not in army:
            army.append(found)
    if len(army) > packs.MAX_FACTIONS:
        raise RuleError(
            "army_keywords_too_many",
            f"A force has at most {packs.MAX_FACTIONS} army keywords.",
            field="army_keywords",
        )
    return army


def _battle_under_way(session: Session, force: Force) -> bool:
    return (
        session.exec(
            select(Battle.id)
            .join(BattleSide, col(BattleSide.battle_id) == col(Battle.id))
            .where(
                BattleSide.force_id == force.id,
                col(Battle.status).in_(("mustered", "proposed", "disputed")),
            )
            .limit(1)
        ).first()
        is not None
    )


# --- cards -----------------------------------------------------------------------------


def force_version(session: Session, force_id: int) -> int:
    """The force's version, which rises with every change to it (one cheap query)."""
    version = session.exec(select(Force.version).where(Force.id == force_id)).first()
    if version is None:
        raise NotFound("force_not_found", f"There is no Crusade force {force_id}.")
    return version


def lock_forces(session: Session, force_ids: list[int], *, campaign_id: int | None = None) -> None:
    """Lock several forces in id order (a fixed order, so two battles cannot deadlock),
    reading them whole in the same statement: a later ``get_force`` of one finds it locked
    and held (app/db/locks.py) and reads nothing."""
    if session.info.get("writes"):
        # the campaign first (app/db/locks.py): the forces' own, which the caller may know
        lock_campaigns_of_forces(session, force_ids, campaign_id=campaign_id)
        query = select(Force).where(col(Force.id).in_(force_ids)).order_by(col(Force.id))
        found = session.exec(query.with_for_update().execution_options(populate_existing=True))
        locked = held(session)
        for force in found.all():
            assert force.id is not None
            locked[(Force, force.id)] = force


def get_card(session: Session, card_id: int) -> Card:
    card = session.get(Card, card_id)
    if card is None:
        raise NotFound("card_not_found", f"There is no Crusade card {card_id}.")
    return card


def add_card(session: Session, *, force_id: int, **details: Any) -> Card:
    """Add a unit to the Order of Battle within its Supply Limit. ``warlord_trait`` is a
    named character's own trait (others buy theirs with the requisition)."""
    return add_cards(session, force_id=force_id, units=[details])[0]


def add_cards(
    session: Session,
    *,
    force_id: int,
    units: list[dict[str, Any]],
    labels: list[str] | None = None,
) -> list[Card]:
    """Add several units at once (a roster import), each checked against the Order of
    Battle as it grows, exactly as one added by hand; the force is read once. A refusal is
    prefixed with the unit's label, when given, so the player knows which unit it is."""
    view = load_force(session, force_id)
    force = view.value
    book = rulebooks.book_of(session, view.force)
    linked = any(unit.get("split_unit") for unit in units)
    mustered = mustered_cards(session, force_id) if linked else frozenset()
    rows = []
    for index, unit in enumerate(units):
        details = dict(unit)
        own_trait = details.pop("warlord_trait", None)
        details["split_unit"] = details.get("split_unit") or None
        try:
            value = card_rules.new_card(id=f"new-{index}", **_rule_fields(details))
            value = card_rules.with_own_warlord_trait(value, own_trait)
            force = oob_rules.add_unit(force, value, book, mustered=mustered)
        except RuleError as refused:
            if labels is None:
                raise
            raise RuleError(
                refused.code, f"{labels[index]}: {refused.message}", field="units"
            ) from None
        row = Card(force_id=force_id, **details)
        row.name = value.name
        row.keywords = sorted(value.keywords)
        row.upgrades = [upgrade_json(u) for u in value.upgrades]
        rows.append(row)
    session.add_all(rows)
    session.flush()
    for row in rows:
        history.record(
            session,
            campaign_id=view.force.campaign_id,
            force_id=force_id,
            kind="card_added",
            card_id=row.id,
            name=row.name,
            power_rating=row.power_rating,
        )
    return rows


def _rule_fields(details: dict[str, Any]) -> dict[str, Any]:
    names = (
        "name",
        "power_rating",
        "points",
        "keywords",
        "battlefield_role",
        "champion",
        "named_character",
        "split_unit",
    )
    return {k: details[k] for k in names if k in details}


def split_unit_partners(session: Session, row: Card) -> list[Card]:
    """The other cards of ``row``'s split unit still on the Order of Battle."""
    if not row.split_unit:
        return []
    query = select(Card).where(
        Card.force_id == row.force_id,
        Card.split_unit == row.split_unit,
        Card.id != row.id,
        col(Card.removed).is_(False),
    )
    return list(session.exec(query))


def mustered_cards(session: Session, force_id: int) -> frozenset[str]:
    """The force's cards on the roster of a battle under way (mustered, not yet resolved).
    Read from the few battles under way (ix_battle_status_campaign), not from every battle
    the force has fought."""
    under_way = select(Battle.id).where(
        col(Battle.status).in_(("mustered", "proposed", "disputed"))
    )
    rosters = session.exec(
        select(BattleSide.roster).where(
            col(BattleSide.battle_id).in_(under_way), BattleSide.force_id == force_id
        )
    )
    return frozenset(str(card_id) for roster in rosters for card_id in roster)


def update_card(
    session: Session, *, card_id: int, name: str | None = None, narrative: str | None = None
) -> Card:
    """Only the name and narrative of a card may change outside the rules."""
    row = _live_card(session, card_id)
    write_card(row, card_rules.update_narrative(card_value(row), name=name, narrative=narrative))
    session.add(row)
    return row


def remove_card(session: Session, *, card_id: int) -> Card:
    """Remove a unit for good; it frees supply and can never come back."""
    row = _live_card(session, card_id)
    view = load_force(session, row.force_id)
    oob_rules.remove_unit(view.value, str(row.id))
    row.removed = True
    session.add(row)
    history.record(
        session,
        campaign_id=view.force.campaign_id,
        force_id=row.force_id,
        kind="card_removed",
        card_id=row.id,
        name=row.name,
    )
    return row


def _live_card(session: Session, card_id: int) -> Card:
    row = get_card(session, card_id)
    if row.removed:
        raise RuleError(
            "unit_removed_for_good",
            f"{row.name} was removed from its Order of Battle and can no longer change.",
            field="card_id",
        )
    return row


def add_joined(
    session: Session,
    campaign_id: int,
    force_id: int,
    joined: list[CrusadeCard],
    battle_id: int | None = None,
) -> list[int]:
    """The units a requisition (bought, or granted by a decision of ``battle_id``) brought
    into the Order of Battle, as rows (the rules checked them: faction keyword, Supply
    Limit), each said in the history like any unit added. Returns their ids."""
    rows = [
        Card(
            force_id=force_id,
            name=c.name,
            power_rating=c.power_rating,
            points=c.points,
            keywords=sorted(c.keywords),
        )
        for c in joined
    ]
    session.add_all(rows)
    session.flush()
    for row in rows:
        history.record(
            session,
            campaign_id=campaign_id,
            force_id=force_id,
            battle_id=battle_id,
            kind="card_added",
            card_id=row.id,
            name=row.name,
            power_rating=row.power_rating,
        )
    return [int(row.id or 0) for row in rows]
