"""The battle flow: muster two armies, record the result for both sides at once, revert."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import defer
from sqlalchemy.orm.attributes import flag_modified
from sqlmodel import Session, col, func, select

from app.db.locks import for_change
from app.db.models import (
    CARD_NUMBERS,
    CARD_REST,
    Battle,
    BattleSide,
    Card,
    CardBattle,
    Decision,
    Force,
    RequisitionPurchase,
    User,
    utcnow,
)
from app.errors import DomainError, NotFound
from app.rules import battle as battle_rules
from app.rules import packs
from app.rules.aftermath import SideReport, UnitReport, resolve_side
from app.rules.agendas import EnemyLoss, check_agenda_selection, check_kill_bounds
from app.rules.cards import normalise_keywords
from app.rules.data import Rulebook, VictorRole
from app.rules.dice import Dice, EnteredDice, KeyedDice, SeededDice
from app.rules.errors import RuleError
from app.rules.experience import ExperienceGain
from app.rules.out_of_action import Consequence
from app.services.battles import battle_news, decisions, gains
from app.services.campaigns import kept_totals, territories
from app.services.campaigns.membership import is_organizer
from app.services.feed import history
from app.services.fields import request_fields
from app.services.forces.convert import force_value, write_force
from app.services.forces.forces import ForceView, get_campaign, get_force, load_force, lock_forces
from app.services.packs import rulebooks, thresholds


@dataclass(frozen=True)
class SideSetup:
    force_id: int
    role: VictorRole
    roster: list[int]
    agendas: list[str]
    warlord_card_id: int | None = None


@dataclass(frozen=True)
class SideResult:
    force_id: int
    victory_points: int
    painted: bool
    units: list[dict[str, Any]]
    dice: list[int] | None = None
    named_dice: dict[str, int] | None = None  # by roll key, e.g. {"out_of_action:12": 1}
    out_of_action_choices: dict[int, str] | None = None
    agenda_choices: dict[str, int] | None = None
    objective_markers: int | None = None


def get_battle(session: Session, battle_id: int) -> tuple[Battle, list[BattleSide]]:
    battle = for_change(session, Battle, battle_id)
    if battle is None:
        raise NotFound("battle_not_found", f"There is no battle {battle_id}.")
    sides = session.exec(
        select(BattleSide).where(BattleSide.battle_id == battle_id).order_by(col(BattleSide.id))
    ).all()
    return battle, list(sides)


def list_battles(
    session: Session, *, campaign_id: int, limit: int, before: int | None = None
) -> tuple[list[tuple[Battle, list[BattleSide]]], int | None]:
    """A page of battles, newest first, each with its sides (sides in one query, without
    their snapshots), and the cursor of the next page: ``before`` is a battle id, only
    older battles are listed."""
    rows, following = battles_page(session, campaign_id=campaign_id, limit=limit, before=before)
    sides = sides_of(session, [b.id for b in rows if b.id is not None])
    return [(b, sides.get(b.id or 0, [])) for b in rows], following


def battles_page(
    session: Session, *, campaign_id: int, limit: int, before: int | None = None
) -> tuple[list[Battle], int | None]:
    """A page of battles without their sides (``list_battles``): a reader that keeps each
    battle's body by its version reads the sides of the battles it must build alone."""
    get_campaign(session, campaign_id)
    query = select(Battle).where(Battle.campaign_id == campaign_id)
    if before is not None:
        query = query.where(col(Battle.id) < before)
    found = list(session.exec(query.order_by(col(Battle.id).desc()).limit(limit + 1)).all())
    rows = found[:limit]
    return rows, rows[-1].id if len(found) > limit else None


def sides_of(session: Session, battle_ids: list[int]) -> dict[int, list[BattleSide]]:
    """The battles' sides in one query (without their snapshots), by battle id."""
    found: dict[int, list[BattleSide]] = {i: [] for i in battle_ids}
    if not battle_ids:
        return found
    sides = session.exec(
        select(BattleSide)
        .where(col(BattleSide.battle_id).in_(battle_ids))
        .order_by(col(BattleSide.id))
        .options(defer(BattleSide.snapshot, raiseload=True))  # type: ignore[arg-type]
    ).all()
    for side in sides:
        found[side.battle_id].append(side)
    return found


# --- before the battle ---------------------------------------------------------------------


def muster(
    session: Session,
    *,
    campaign_id: int,
    battle_size: str,
    sides: list[SideSetup],
    mission: str | None = None,
    mission_roll: int | None = None,
    seed: int | None = None,
    by: User | None = None,
    territory_id: int | None = None,
) -> tuple[Battle, list[BattleSide]]:
    """Set up a battle: size, mission (chosen, or rolled on that size's table), and each
    side's roster and Agendas. Crusade Blessings are worked out here. `by` is the user
    asking (None: the demo or the CLI)."""
    get_campaign(session, campaign_id)
    territories.check_muster(session, campaign_id=campaign_id, territory_id=territory_id)
    book = rulebooks.campaign_book(session, campaign_id)
    size = battle_rules.battle_size(battle_size, book)
    _check_sides(sides)
    _check_in_campaign(session, campaign_id, sides)
    lock_forces(session, [s.force_id for s in sides], campaign_id=campaign_id)
    views = [_ready_force(session, side) for side in sides]
    _check_musterer(session, campaign_id, views, by)
    agenda_ids: list[list[str]] = []
    for index, (side, view) in enumerate(zip(sides, views, strict=True)):
        with request_fields({"warlord": "warlord_card_id"}, f"sides[{index}]."):
            army = battle_rules.muster(
                view.value,
                [str(i) for i in side.roster],
                size,
                unavailable={str(i) for i in view.pending_card_ids},
                muster_by=book.numbers.muster_by,
            )
            # Agendas may be named by id or name; the battle keeps their ids. Each army picks
            # from its own rulebook: a pack's Agenda scoped to other factions is not its own.
            own = rulebooks.book_of(session, view.force)
            rulebooks.check_in_scope(session, view.force, agendas=side.agendas)
            agenda_ids.append([a.id for a in check_agenda_selection(size, side.agendas, own)])
            if side.warlord_card_id is not None and side.warlord_card_id not in side.roster:
                raise RuleError(
                    "warlord_not_on_roster",
                    "The Warlord must be a unit on the roster.",
                    field="warlord",
                )
            if side.warlord_card_id is not None:
                battle_rules.check_warlord(army, view.value.card(str(side.warlord_card_id)))
    seed = seed if seed is not None else secrets.randbelow(2**31)
    chosen, roll = _mission(size, mission, mission_roll, seed, book)
    battle = Battle(
        campaign_id=campaign_id,
        battle_size=size.id,
        mission=chosen.id,
        mission_roll=roll,
        seed=seed,
        territory_id=territory_id,
    )
    session.add(battle)
    session.flush()
    assert battle.id is not None
    points = [
        battle_rules.roster_crusade_points(v.value, [str(i) for i in s.roster])
        for s, v in zip(sides, views, strict=True)
    ]
    bonus = battle_rules.crusade_blessings(points[0], points[1])
    rows = [
        BattleSide(
            battle_id=battle.id,
            force_id=s.force_id,
            role=s.role.value,
            roster=list(s.roster),
            agendas=agenda_ids[i],
            warlord_card_id=s.warlord_card_id,
            crusade_points=points[i],
            bonus_command_points=bonus[i],
        )
        for i, s in enumerate(sides)
    ]
    session.add_all(rows)
    kept_totals.mustered(session, battle, rows)
    history.record(
        session,
        campaign_id=campaign_id,
        battle_id=battle.id,
        kind="battle_mustered",
        battle_size=size.id,
        mission=chosen.id,
        mission_roll=roll,
        forces=[s.force_id for s in sides],
    )
    session.flush()
    return battle, rows


def _check_sides(sides: list[SideSetup]) -> None:
    if len(sides) != 2 or sides[0].force_id == sides[1].force_id:
        raise RuleError(
            "battle_needs_two_forces",
            "A battle is fought between two different forces.",
            field="sides",
        )
    if {s.role for s in sides} != {VictorRole.ATTACKER, VictorRole.DEFENDER}:
        raise RuleError(
            "battle_roles_invalid",
            "One side is the Attacker and the other the Defender.",
            field="sides",
        )


def _check_in_campaign(session: Session, campaign_id: int, sides: list[SideSetup]) -> None:
    """A force of another campaign is refused as one that does not exist, in the same words:
    naming it would tell a player of this campaign about a private one."""
    ids = [s.force_id for s in sides]
    here = set(
        session.exec(
            select(Force.id).where(col(Force.id).in_(ids), Force.campaign_id == campaign_id)
        ).all()
    )
    for force_id in ids:
        if force_id not in here:
            raise NotFound(
                "force_not_found",
                f"sides: there is no Crusade force {force_id} in this campaign.",
                field="sides",
            )


DECISION_WORDS = {
    "out_of_action": "an Out of Action choice (Devastating Blow or Battle Scar)",
    "battle_scar": "a Battle Scar",
    "battle_honour": "a Battle Honour",
    "victor_bonus": "a victor bonus",
}


def _refuse_while_undecided(session: Session, force: Force) -> None:
    """Battle Scars and Battle Honours must be determined before the player's next battle
    (ruling 37): while any force of this force's player has a decision waiting, none of them
    musters. The refusal names the first one and where to answer it. The player is the
    force's account and player name together: an organizer who keeps several players' forces
    on one account does not hold them all up for one of them."""
    mine = [force.id] if force.owner_id is None else None
    query = (
        select(Decision.id, Decision.kind, Card.name, Force.name)
        .join(Force, col(Force.id) == col(Decision.force_id))
        .outerjoin(Card, col(Card.id) == col(Decision.card_id))
        .where(Decision.status == "pending")
        .order_by(col(Decision.id))
    )
    if mine is not None:
        query = query.where(col(Decision.force_id).in_(mine))
    else:
        query = query.where(
            Force.owner_id == force.owner_id,
            func.lower(Force.player_name) == force.player_name.lower(),
        )
    waiting = session.exec(query.limit(1)).first()
    if waiting is not None and waiting[1] == "battle_honour":
        # A Battle Honour that no unit can take any more lapses (ruling 71) rather than hold
        # the player's musters for an answer that would be refused.
        honours = query.where(Decision.kind == "battle_honour").with_only_columns(
            col(Decision.force_id)
        )
        for force_id in sorted({int(row[0]) for row in session.execute(honours)}):
            view = load_force(session, force_id)
            book = rulebooks.book_of(session, view.force)
            decisions.lapse_unanswerable(session, force=view.force, value=view.value, book=book)
        waiting = session.exec(query.limit(1)).first()
    if waiting is None:
        return
    decision_id, kind, unit, force_name = waiting
    what = DECISION_WORDS.get(kind, "a decision")
    about = f"{unit} ({force_name})" if unit else force_name
    raise DomainError(
        "decisions_pending",
        f"{about} still has {what} to make from its last battle (decision {decision_id}); "
        f"the rules want it settled before this player's next battle. Answer it first: "
        f"/decisions/{decision_id}.",
        status=409,
        field="sides",
    )


def _ready_force(session: Session, side: SideSetup) -> ForceView:
    view = _roster_force(session, side.force_id, side.roster)
    _refuse_while_undecided(session, view.force)
    open_battle = session.exec(
        select(Battle.id)
        .join(BattleSide, col(BattleSide.battle_id) == col(Battle.id))
        .where(
            BattleSide.force_id == side.force_id,
            col(Battle.status).in_(("mustered", "proposed", "disputed")),
        )
    ).first()
    if open_battle:
        raise DomainError(
            "battle_in_progress",
            f"{view.force.name} is already in battle {open_battle}; record or revert it first.",
            status=409,
            field="sides",
        )
    return view


def _mission(
    size: Any, mission: str | None, mission_roll: int | None, seed: int, book: Rulebook
) -> tuple[Any, int | None]:
    if mission:
        return battle_rules.choose_mission(size, mission, book), None
    dice: Dice = EnteredDice([mission_roll]) if mission_roll is not None else SeededDice(seed)
    chosen, roll = battle_rules.roll_mission(size, book, dice)
    return chosen, roll.value


# --- after the battle ------------------------------------------------------------------


def record_result(
    session: Session,
    *,
    battle_id: int,
    results: list[SideResult],
    loaded: tuple[Battle, list[BattleSide]] | None = None,
) -> tuple[Battle, list[BattleSide]]:
    """Score the battle, then run the post-battle sequence for both sides at once.
    ``loaded``: the battle and its sides as the caller just read them with get_battle."""
    battle, sides = loaded or get_battle(session, battle_id)
    if battle.status != "mustered":
        raise DomainError(
            "battle_already_recorded",
            f"Battle {battle_id} is {battle.status}; its result cannot be recorded again.",
            status=409,
        )
    lock_forces(session, [s.force_id for s in sides], campaign_id=battle.campaign_id)
    by_force = {r.force_id: r for r in results}
    if sorted(by_force) != sorted(s.force_id for s in sides):
        raise RuleError(
            "battle_result_sides",
            "Give one result for each of the battle's two forces.",
            field="sides",
        )
    book = rulebooks.campaign_book(session, battle.campaign_id)
    scores = [
        battle_rules.score(by_force[s.force_id].victory_points, by_force[s.force_id].painted, book)
        for s in sides
    ]
    outcome = battle_rules.decide_victor(scores[0], scores[1])
    mission = book.mission(battle.mission)
    # Read once for both sides (issue 41): the rostered units, the forces' standings lines
    # (their totals before the battle) and the territories' bonus RP.
    cards = _roster_cards(session, sides)
    losses = _check_kill_marks(session, sides, by_force, results, book, cards)
    kept_totals.hold_lines(session, [s.force_id for s in sides])
    befores = [_force_totals(session, s.force_id) for s in sides]
    extra_rp = territories.bonus_rps(session, battle, [s.force_id for s in sides])
    totals_before = []
    owed: list[decisions.Owed] = []
    for index, side in enumerate(sides):
        result = by_force[side.force_id]
        won = outcome == (
            battle_rules.Outcome.A_WINS if index == 0 else battle_rules.Outcome.B_WINS
        )
        with request_fields(_SIDE_FIELDS, f"sides[{results.index(result)}].", _unit_ids(result)):
            totals_before.append(
                _resolve(
                    session,
                    battle,
                    side,
                    result,
                    won,
                    mission,
                    index,
                    losses[side.force_id],
                    _Read(cards, befores[index], extra_rp[side.force_id]),
                    owed,
                )
            )
        side.victory_points, side.painted, side.won = scores[index].total, result.painted, won
        for name in _SIDE_WRITES:  # every column on both sides: one executemany UPDATE
            flag_modified(side, name)
        session.add(side)
    # Nothing flushed during the sides' sequences: both sides' changes go in one flush after
    # both (issue 41), and their decisions in one INSERT. The decisions name only rows that
    # exist, and the lapse reads only the two forces' decisions.
    with session.no_autoflush:
        pending = decisions.store_owed(session, battle_id=battle.id or 0, owed=owed)
    territories.after_result(session, battle, sides)
    battle.status, battle.outcome, battle.resolved_at = "resolved", outcome.value, utcnow()
    battle.rule_packs = rulebooks.versions_in_play(session, battle.campaign_id)
    for side, before in zip(sides, totals_before, strict=True):
        kept_totals.record(session, battle, side, before, side.won)
    kept_totals.lines(session, battle, sides)
    session.add(battle)
    history.record(
        session,
        campaign_id=battle.campaign_id,
        battle_id=battle.id,
        kind="battle_recorded",
        outcome=outcome.value,
        victory_points={str(s.force_id): s.victory_points for s in sides},
        forces=[s.force_id for s in sides],
        sides=battle_news.what_it_did(session, battle, sides, cards, pending),
    )
    return battle, sides


# What recording a result writes on each side. Both sides write all of it, so the flush
# sends them as one UPDATE (the ORM sends one per set of changed columns, and the winner's
# ``won`` changes where the loser's may not).
_SIDE_WRITES = ("victory_points", "painted", "won", "report", "snapshot")


def _check_kill_marks(
    session: Session,
    sides: list[BattleSide],
    by_force: dict[int, SideResult],
    results: list[SideResult],
    book: Rulebook,
    cards: dict[int | None, Card],
) -> dict[int, list[EnemyLoss]]:
    """Each side's kill-counting Agenda marks against the units the other side reported
    destroyed (``cards``: both rosters' units); each force's enemy losses."""
    destroyed = {
        s.force_id: [
            int(u["card_id"])
            for u in by_force[s.force_id].units
            if u.get("destroyed") and int(u["card_id"]) in s.roster
        ]
        for s in sides
    }
    found: dict[int, list[EnemyLoss]] = {}
    for index, side in enumerate(sides):
        enemy = sides[1 - index]
        losses = [
            EnemyLoss(
                cards[i].name,
                normalise_keywords(cards[i].keywords),
                warlord=i == enemy.warlord_card_id,
            )
            for i in destroyed[enemy.force_id]
            if i in cards
        ]
        result = by_force[side.force_id]
        tallies = {
            str(u["card_id"]): dict(u.get("agenda_tallies") or {})
            for u in result.units
            if int(u["card_id"]) in side.roster
        }
        with request_fields(_SIDE_FIELDS, f"sides[{results.index(result)}].", _unit_ids(result)):
            check_kill_bounds([book.agenda(a) for a in side.agendas], tallies, losses)
            _check_named_kills(result, set(enemy.roster), cards)
        found[side.force_id] = losses
    return found


def _check_named_kills(
    result: SideResult, enemies: set[int], cards: dict[int | None, Card]
) -> None:
    """Each unit's ``destroyed_enemies`` (issue 47): units of the enemy's roster in this
    battle, none named twice across the side, no more than the unit's own kills; its
    ``quarry`` a unit of the enemy's roster."""
    named: dict[int, str] = {}
    for unit in result.units:
        quarry = unit.get("quarry")
        if quarry is not None and (int(quarry) not in enemies or int(quarry) not in cards):
            raise RuleError(
                "quarry_not_in_battle",
                f"quarry: unit {quarry} was not on the enemy's roster in this battle.",
                field="quarry",
                unit=str(unit["card_id"]),
            )
        listed = unit.get("destroyed_enemies")
        if listed is None:
            continue
        card_id = str(unit["card_id"])
        kills = sum(
            int(unit.get(k, 0))
            for k in ("destroyed_psychic", "destroyed_ranged", "destroyed_melee")
        )
        if len(listed) > kills:
            raise RuleError(
                "destroyed_enemies_over_kills",
                f"destroyed_enemies names {len(listed)} enemy units, but the unit destroyed "
                f"{kills}.",
                field="destroyed_enemies",
                unit=card_id,
            )
        for enemy_id in listed:
            if int(enemy_id) not in enemies or int(enemy_id) not in cards:
                raise RuleError(
                    "destroyed_enemy_not_in_battle",
                    f"destroyed_enemies: unit {enemy_id} was not on the enemy's roster in "
                    "this battle.",
                    field="destroyed_enemies",
                    unit=card_id,
                )
            if int(enemy_id) in named:
                raise RuleError(
                    "destroyed_enemy_named_twice",
                    f"destroyed_enemies: {cards[int(enemy_id)].name} ({enemy_id}) is named "
                    f"twice (also by unit {named[int(enemy_id)]}); a unit is destroyed once.",
                    field="destroyed_enemies",
                    unit=card_id,
                )
            named[int(enemy_id)] = card_id


def _unit_ids(result: SideResult) -> list[object]:
    """The card ids of a side's ``units``, in the order the request gave them."""
    return [u.get("card_id") for u in result.units]


# The rules' names for what a side's result carries, as SideResultIn names them.
_SIDE_FIELDS = {"choice": "out_of_action_choices", "scar": "out_of_action_choices"}


def _roster_cards(session: Session, sides: list[BattleSide]) -> dict[int | None, Card]:
    """Both rosters' units, by id, in one query (a unit of another force included: each
    use filters as its own query did)."""
    ids = sorted({int(i) for side in sides for i in side.roster})
    if not ids:
        return {}
    return {c.id: c for c in session.exec(select(Card).where(col(Card.id).in_(ids))).all()}


@dataclass(frozen=True)
class _Read:
    """What ``record_result`` read once for both sides: the rostered units, and the side's
    force totals (Crusade points, XP) and territory bonus RP from before the battle."""

    cards: dict[int | None, Card]
    before: tuple[int, int]
    extra_rp: int


def _resolve(
    session: Session,
    battle: Battle,
    side: BattleSide,
    result: SideResult,
    won: bool,
    mission: Any,
    index: int,
    losses: list[EnemyLoss],
    read: _Read,
    owed: list[decisions.Owed],
) -> tuple[int, int]:
    """Run one side's post-battle sequence; return its force's Crusade points and XP from
    just before (the progress chart's point). What it leaves the player to decide goes on
    ``owed``."""
    view = _roster_force(session, side.force_id, side.roster, waiting=False, loaded=read.cards)
    before = read.before
    side.snapshot = _snapshot(view, before)
    report = SideReport(
        roster=tuple(str(i) for i in side.roster),
        agendas=tuple(side.agendas),
        units=tuple(_unit_report(u, read.cards) for u in result.units),
        won=won,
        # a pack's mission scoped to factions rewards only a victor of them (issue 47)
        victor_bonuses=battle_rules.victor_bonuses(mission, won=won, role=VictorRole(side.role))
        if packs.in_scope(mission.factions, rulebooks.army_of(view.force))
        else (),
        out_of_action_choices={
            str(k): Consequence(v) for k, v in (result.out_of_action_choices or {}).items()
        },
        agenda_choices={k: str(v) for k, v in (result.agenda_choices or {}).items()},
        objective_markers=battle_rules.objective_markers(mission, result.objective_markers),
        objective_markers_at_end=mission.markers_at_end,
        warlord=str(side.warlord_card_id) if side.warlord_card_id else None,
        exfiltration=mission.exfiltration,
        extra_requisition_points=read.extra_rp,
        enemy_losses=tuple(loss.keywords for loss in losses),
    )
    dice = side_dice(result, (battle.seed or 0) + index)
    # Each side plays with its own rulebook (issue 47): triggers, thresholds and quests of a
    # pack scoped to other factions never move its counters.
    book = rulebooks.book_of(session, view.force)
    after = resolve_side(view.value, report, book, dice)
    check_dice_used(dice)
    write_force(view.force, view.cards, after.force, before=view.value)
    thresholds.record_reached(
        session,
        campaign_id=battle.campaign_id,
        force_id=side.force_id,
        battle_id=battle.id,
        fired=after.thresholds,
        force=after.force,
        book=book,
    )
    gains.record_gains(session, view, after=after.force, battle_id=battle.id)
    owed.append(decisions.Owed(view.force, after.pending, after.force, book))
    side.report = {
        "army_keywords": list(rulebooks.army_of(view.force)),  # the scope it played under
        "units": result.units,
        "tests": [
            {
                "card_id": int(t.card_id),
                "passed": t.passed,
                "roll": t.roll.value if t.roll else None,
            }
            for t in after.tests
        ],
        "devastating_blows": [
            {"card_id": int(b.card_id), "xp_lost": b.xp_lost, "roll": b.roll.value}
            for b in after.blows
        ],
        "experience": {k: v for k, v in after.experience.items()},
        "gains": {k: _gain_json(v) for k, v in after.gains.items()},
        "promotions": [{"card_id": int(p.card_id), "rank": p.rank} for p in after.promotions],
        "dice": [[d.sides, d.value] for d in after.dice],
    }
    return before


def _gain_json(gain: ExperienceGain) -> dict[str, Any]:
    # dataclasses.asdict's deep copy, by hand: one per unit of every resolution
    return {
        "battle_experience": gain.battle_experience,
        "marked_for_greatness": gain.marked_for_greatness,
        "dealers_of_death": gain.dealers_of_death,
        "agendas": dict(gain.agendas),
        "cap": gain.cap,
    }


def _split_unit_partners(session: Session, force_id: int, cards: list[Card]) -> list[Card]:
    """The other cards of the split units on a roster, which a muster must see to check
    that each split unit is taken whole (one query, only when a split unit is there)."""
    labels = {c.split_unit for c in cards if c.split_unit}
    if not labels:
        return []
    return list(
        session.exec(
            select(Card).where(
                Card.force_id == force_id,
                col(Card.split_unit).in_(labels),
                col(Card.id).not_in([c.id for c in cards]),
                col(Card.removed).is_(False),
            )
        ).all()
    )


def _roster_force(
    session: Session,
    force_id: int,
    roster: list[int],
    *,
    waiting: bool = True,
    loaded: dict[int | None, Card] | None = None,
) -> ForceView:
    """The force with only the units on a roster (and which of them await a decision):
    mustering and the post-battle sequence read and change no other unit (a victor bonus
    that could reach another one waits as a decision), so their cost follows the roster,
    not the size of the Order of Battle or what its other units gathered over the
    campaign. A unit of another force is not in the value, as in the whole force's."""
    force = get_force(session, force_id)
    if loaded is not None:  # the units read already (``_roster_cards``), filtered alike
        mine = (loaded.get(i) for i in sorted({int(i) for i in roster}))
        cards = [c for c in mine if c is not None and c.force_id == force_id]
    else:
        cards = list(
            session.exec(
                select(Card)
                .where(col(Card.id).in_(roster), Card.force_id == force_id)
                .order_by(col(Card.id))
            ).all()
        )
    pending: set[int] = set()
    if waiting:  # only mustering asks: a recorded battle's units were checked then
        cards += _split_unit_partners(session, force_id, cards)
        pending = {
            c
            for c in session.exec(
                select(Decision.card_id).where(
                    Decision.force_id == force_id,
                    Decision.status == "pending",
                    col(Decision.card_id).in_(roster),
                )
            ).all()
            if c
        }
    return ForceView(force, cards, force_value(force, cards), pending)


def _force_totals(session: Session, force_id: int) -> tuple[int, int]:
    """The whole force's Crusade points and XP as they stand, from its kept standings line
    (app.services.campaigns.kept_totals; `crusade totals check` proves it equal to the cards'
    sum)."""
    session.flush()  # a line moves at flush: let it count every change made so far
    line = kept_totals.standing_of(session, force_id)
    return line.crusade_points, line.xp


def side_dice(result: SideResult, seed: int) -> Dice:
    """Entered dice (a list used in order, or dice named by roll with a list for the rest),
    else the server rolls from the battle's seed."""
    if result.named_dice is not None:
        return KeyedDice(result.named_dice, EnteredDice(result.dice or []))
    if result.dice is not None:
        return EnteredDice(result.dice)
    return SeededDice(seed)


def check_dice_used(dice: Dice) -> None:
    """A die named for a roll that never happened is a mistake in the entry, not noise."""
    if isinstance(dice, KeyedDice) and dice.unused_keys:
        raise RuleError(
            "dice_not_rolled",
            f"No such roll was made in this battle: {', '.join(dice.unused_keys)} (only "
            "destroyed units take an Out of Action test, and a Devastating Blow follows a "
            "failed one).",
            field="dice",
        )


def _unit_report(data: dict[str, Any], cards: dict[int | None, Card]) -> UnitReport:
    named = data.get("destroyed_enemies")
    return UnitReport(
        destroyed_enemies=None
        if named is None
        else tuple(normalise_keywords(cards[int(i)].keywords) for i in named),
        destroyed_enemy_ids=tuple(str(i) for i in named or ()),
        quarry=None if data.get("quarry") is None else str(data["quarry"]),
        card_id=str(data["card_id"]),
        destroyed=bool(data.get("destroyed", False)),
        destroyed_psychic=int(data.get("destroyed_psychic", 0)),
        destroyed_ranged=int(data.get("destroyed_ranged", 0)),
        destroyed_melee=int(data.get("destroyed_melee", 0)),
        agenda_tallies=dict(data.get("agenda_tallies") or {}),
        marked_for_greatness=bool(data.get("marked_for_greatness", False)),
        below_half_strength=data.get("below_half_strength"),
        exfiltrated=bool(data.get("exfiltrated", False)),
    )


# A unit's state before the battle, kept on its side for a revert: what write_card writes
# (a rule pack's transform changes name, Power Rating, points, keywords and datasheet, an
# Agenda the counters: older snapshots lack some, which a revert leaves as they are), and
# whether it was removed.
_CARD_STATE = (*CARD_NUMBERS, *CARD_REST, "removed")
_FORCE_STATE = ("requisition_points", "supply_limit", "battle_tally", "victories", "counters")


def _snapshot(view: ForceView, before: tuple[int, int]) -> dict[str, Any]:
    """What a revert restores: the force's numbers and the roster's units (the only ones the
    battle changes; any later change that a revert could not undo blocks it), and the
    force's Crusade points and XP before the battle (the progress chart's point, which
    `crusade totals rebuild` reads back from here)."""
    return {
        "force": {k: getattr(view.force, k) for k in _FORCE_STATE},
        "cards": {str(c.id): {k: getattr(c, k) for k in _CARD_STATE} for c in view.cards},
        "totals": {"crusade_points": before[0], "xp": before[1]},
    }


# --- corrections -------------------------------------------------------------------------


def revert(session: Session, *, battle_id: int) -> Battle:
    """Undo a recorded battle exactly, while no later battle involves its units and no
    requisition has been bought since. The history keeps the record and the revert."""
    battle, sides = get_battle(session, battle_id)
    if battle.status == "reverted":
        raise DomainError(
            "battle_already_reverted", f"Battle {battle_id} is already reverted.", status=409
        )
    if battle.status == "resolved":
        joined = _joined_by_answers(session, battle)
        _check_revertible(session, battle, sides, joined)
        territories.check_revert(session, battle)
        starts = gains.counter_starts(session, battle.campaign_id)
        for side in sides:
            _restore(session, battle, side, starts)
        _take_back(session, battle, joined)
        kept_totals.unrecord(session, battle, sides)
        territories.undo_result(session, battle)
    return _undo(session, battle, kind="battle_reverted")


def _say_counters(
    session: Session,
    battle: Battle,
    force: Force,
    card: Card | None,
    now: Mapping[str, int] | None,
    restored: Mapping[str, Any],
    starts: Mapping[str, int],
) -> None:
    """A revert says what it puts back: a ``counter_changed`` for each counter of the force
    (or card) it moves, as the battle said when it moved them."""
    if "counters" not in restored:  # an older snapshot: its counters are left as they are
        return
    unit = {"card_id": int(card.id or 0), "name": card.name} if card is not None else {}
    book = rulebooks.campaign_book(session, battle.campaign_id)
    for counter, was, value in gains.moved(now or {}, restored["counters"] or {}, starts):
        history.record(
            session,
            campaign_id=battle.campaign_id,
            force_id=force.id,
            battle_id=battle.id,
            kind="counter_changed",
            **unit,
            counter=counter,
            before=was,
            after=value,
            **gains.choice_names(book, counter, was, value),
        )
    for kind, details in gains.quest_moves(now or {}, restored["counters"] or {}, book):
        history.record(
            session,
            campaign_id=battle.campaign_id,
            force_id=force.id,
            battle_id=battle.id,
            kind=kind,
            **unit,
            **details,
        )


def _check_musterer(
    session: Session, campaign_id: int, views: list[ForceView], by: User | None
) -> None:
    """A player musters only battles one of their own forces fights in; an organizer
    musters any (for players without an account, say)."""
    if by is None or is_organizer(session, campaign_id=campaign_id, user=by):
        return
    if by.id not in {v.force.owner_id for v in views}:
        raise DomainError(
            "muster_not_yours",
            "You can muster only a battle one of your own forces fights in; an organizer "
            "can muster any.",
            status=403,
            field="sides",
        )


def call_off(session: Session, *, battle_id: int) -> Battle:
    """A mustered battle that will not be played (or was mustered by mistake): its players
    may drop it themselves, since nothing has been applied to any card yet."""
    battle, _sides = get_battle(session, battle_id)
    if battle.status != "mustered":
        raise DomainError(
            "battle_not_mustered",
            f"Battle {battle_id} already has a result entered (or is reverted): only an "
            "organizer can revert it now.",
            status=409,
        )
    return _undo(session, battle, kind="battle_called_off")


def _undo(session: Session, battle: Battle, *, kind: str) -> Battle:
    lapsed: list[Decision] = []
    for row in session.exec(
        select(Decision).where(Decision.battle_id == battle.id, Decision.status != "cancelled")
    ).all():
        if row.status == "pending":  # an answer to it is refused, saying why
            row.payload = {**row.payload, "cancelled_because": kind}
            lapsed.append(row)
        row.status = "cancelled"
        session.add(row)
    battle.status = "reverted"
    session.add(battle)
    kept_totals.undone(session, battle)
    history.record(session, campaign_id=battle.campaign_id, battle_id=battle.id, kind=kind)
    for row in lapsed:
        decisions.record_cancelled(session, row, campaign_id=battle.campaign_id, reason=kind)
    return battle


def _joined_by_answers(session: Session, battle: Battle) -> list[int]:
    """The units the battle's answered decisions brought in (a pack's free requisition with
    ``add_unit``, issue 38): a revert takes them away again."""
    answers = session.exec(
        select(Decision.answer).where(
            Decision.battle_id == battle.id, Decision.status == "answered"
        )
    ).all()
    return [int(i) for answer in answers for i in (answer or {}).get("joined", [])]


def _take_back(session: Session, battle: Battle, joined: list[int]) -> None:
    """Remove the units the battle's decisions brought in, saying so in the history."""
    for card in session.exec(select(Card).where(col(Card.id).in_(joined))).all():
        card.removed = True
        session.add(card)
        history.record(
            session,
            campaign_id=battle.campaign_id,
            force_id=card.force_id,
            battle_id=battle.id,
            kind="card_removed",
            card_id=card.id,
            name=card.name,
        )


def _check_revertible(
    session: Session, battle: Battle, sides: list[BattleSide], joined: list[int]
) -> None:
    units = {u for s in sides for u in s.roster} | set(joined)
    # The units' battle lists (kept from muster until a revert) name any later battle.
    later = session.exec(
        select(CardBattle.battle_id)
        .where(col(CardBattle.card_id).in_(units), col(CardBattle.battle_id) > (battle.id or 0))
        .limit(1)
    ).first()
    if later is not None:
        raise DomainError(
            "battle_revert_blocked",
            "A later battle involves units from this one; revert that battle first.",
            status=409,
        )
    bought = session.exec(
        select(RequisitionPurchase.id).where(
            col(RequisitionPurchase.force_id).in_([s.force_id for s in sides]),
            col(RequisitionPurchase.created_at) > (battle.resolved_at or battle.created_at),
        )
    ).first()
    if bought:
        raise DomainError(
            "battle_revert_blocked",
            "A requisition was bought after this battle; a revert would undo it too.",
            status=409,
        )


def _restore(session: Session, battle: Battle, side: BattleSide, starts: Mapping[str, int]) -> None:
    force = session.get(Force, side.force_id)
    assert force is not None
    restored = side.snapshot["force"]
    _say_counters(session, battle, force, None, force.counters, restored, starts)
    for key, value in restored.items():
        setattr(force, key, value)
    session.add(force)
    states = side.snapshot["cards"]
    # One query for the cards, and each written whole, so the restore is a constant
    # number of statements (a get per card flushed the previous one each time).
    cards = session.exec(select(Card).where(col(Card.id).in_([int(i) for i in states]))).all()
    for card in cards:
        state = states[str(card.id)]
        if all(getattr(card, key) == value for key, value in state.items()):
            continue  # not on the roster: nothing to undo
        _say_counters(session, battle, force, card, card.counters, state, starts)
        for key, value in state.items():
            setattr(card, key, value)
            flag_modified(card, key)
        session.add(card)
