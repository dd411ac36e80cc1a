"""The website's battle wizard: a battle being recorded, saved on the server after every
step (and every tap of a counter), so a closed tab or a lost connection loses nothing.

The draft only remembers what was entered; every rule is checked by the same services the
JSON API uses (``battles.muster``, ``confirmation.submit``) when the player moves on.
"""

from __future__ import annotations

import copy
import hashlib
import json
import secrets
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import bindparam
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, func, select

from app.db.locks import for_change
from app.db.models import Battle, BattleDraft, BattleSide, Card, Force, User, utcnow
from app.errors import DomainError, NotFound
from app.rules import battle as battle_rules
from app.rules import eligibility
from app.rules.agendas import cannot_score, check_agenda_selection
from app.rules.cards import never_gains_xp
from app.rules.data import (
    Achieved,
    Agenda,
    ArchiveRoll,
    Mission,
    Rulebook,
    TallySource,
    VictorRole,
)
from app.rules.dice import EnteredDice, SeededDice
from app.rules.errors import RuleError
from app.services.battles import confirmation, lifecycle, two_screens
from app.services.battles.lifecycle import SideResult, SideSetup
from app.services.campaigns import membership
from app.services.forces.convert import card_value
from app.services.forces.forces import get_campaign, load_force
from app.services.packs import rulebooks

STEPS = ("setup", "muster", "after", "out_of_action", "review")
FINISHED = "finished"
KILLS = ("destroyed_psychic", "destroyed_ranged", "destroyed_melee")
MAX_COUNT = 99  # as the JSON API's Count
MAX_VICTORY_POINTS = 200  # as the JSON API's SideResultIn


# --- finding, starting and saving drafts ---------------------------------------------------


is_organizer = membership.is_organizer  # the pages ask the wizard; one rule, in membership


def open_draft(session: Session, *, campaign_id: int, user_id: int) -> BattleDraft | None:
    """The user's battle in progress in this campaign, if any (for "Resume your battle in
    progress"). A draft whose battle was recorded or reverted elsewhere is not open."""
    query = (
        select(BattleDraft)
        .outerjoin(Battle, col(Battle.id) == col(BattleDraft.battle_id))
        .where(
            BattleDraft.campaign_id == campaign_id,
            BattleDraft.user_id == user_id,
            BattleDraft.step != FINISHED,
            col(BattleDraft.battle_id).is_(None) | (Battle.status == "mustered"),
        )
        .order_by(col(BattleDraft.id).desc())
    )
    return session.exec(query).first()


def start(
    session: Session, *, campaign_id: int, user_id: int, rematch: bool = False
) -> BattleDraft:
    """Resume the user's open draft in the campaign, or begin a new one. Drafts whose battle
    moved on without them (recorded or reverted elsewhere) are closed first. A rematch
    begins as the last battle against the same opponent (size, role, Agendas, armies)."""
    get_campaign(session, campaign_id)
    stale = session.exec(
        select(BattleDraft)
        .join(Battle, col(Battle.id) == col(BattleDraft.battle_id))
        .where(
            BattleDraft.campaign_id == campaign_id,
            BattleDraft.user_id == user_id,
            BattleDraft.step != FINISHED,
            Battle.status != "mustered",
        )
    ).all()
    for row in stale:
        row.step, row.updated_at = FINISHED, utcnow()
        session.add(row)
    found = open_draft(session, campaign_id=campaign_id, user_id=user_id)
    if found is not None:
        return found
    data = _empty()
    _preselect(session, campaign_id, user_id, data)
    last = rematch_of(session, campaign_id=campaign_id, user_id=user_id) if rematch else None
    if last is not None:  # else quietly a plain start: nothing to copy
        data["setup"]["force_id"], data["setup"]["opponent_id"] = last.force_id, last.opponent_id
        same_as_last(session, data)
    draft = BattleDraft(campaign_id=campaign_id, user_id=user_id, step="setup", data=data)
    session.add(draft)
    session.flush()
    return draft


def _preselect(
    session: Session, campaign_id: int, user_id: int, draft_data: dict[str, Any]
) -> None:
    """The defaults that are right most of the time: your force when you have just one, the
    opponent when only one other force is there (or the one you last played), and the
    battle size you last played with them."""
    every = session.exec(select(Force).where(Force.campaign_id == campaign_id)).all()
    mine = [f.id for f in every if f.owner_id == user_id and f.id is not None]
    setup = draft_data["setup"]
    if len(mine) != 1:
        return
    setup["force_id"] = mine[0]
    others = [f.id for f in every if f.owner_id != user_id and f.id is not None]
    last = last_battle(session, mine[0])
    if len(others) == 1:
        setup["opponent_id"] = others[0]
    elif last is not None:
        setup["opponent_id"] = last.opponent_id
    if last is not None and last.opponent_id == setup.get("opponent_id"):
        setup["battle_size"] = last.battle_size


@dataclass(frozen=True)
class Rematch:
    """The two forces of the player's latest battle (for the "Rematch" button)."""

    force_id: int
    force_name: str
    opponent_id: int
    opponent_name: str


def rematch_of(session: Session, *, campaign_id: int, user_id: int) -> Rematch | None:
    """The player's latest battle in the campaign (not reverted), as the two forces that met:
    one statement, whatever the number of forces or battles. Each of the player's own forces
    finds its newest battle by walking its sides newest first (ix_battle_side_force_battle)
    and stopping at the first not reverted; the newest of those is the battle, whose sides
    come by ix_battle_side_battle_id. Read from the campaign's battles, an organizer who
    plays none read every one on each visit."""
    rows = session.exec(_rematch_sides(), params={"user": user_id, "campaign": campaign_id})
    sides = sorted(rows.all())  # by side: a battle of two of the player's forces, its first
    mine = next((s for s in sides if s.owner_id == user_id), None)
    theirs = next((s for s in sides if mine is not None and s.force_id != mine.force_id), None)
    if mine is None or theirs is None:
        return None
    return Rematch(mine.force_id, mine.name, theirs.force_id, theirs.name)


@cache
def _rematch_sides() -> Any:
    """The sides of the newest battle of the forces of ``user`` in ``campaign``, with each
    side's force: built once, as its statement cost more than the database's answer (issue
    50). No ORDER BY and LIMIT: with them a planner short of statistics walked every side
    in id order to find the battle's two."""
    the_players_here = (
        col(Force.owner_id) == bindparam("user"),
        col(Force.campaign_id) == bindparam("campaign"),
    )
    newest_of_force = (
        select(BattleSide.battle_id)
        .join(Battle, col(Battle.id) == col(BattleSide.battle_id))
        .where(col(BattleSide.force_id) == col(Force.id), Battle.status != "reverted")
        .order_by(col(BattleSide.battle_id).desc())
        .limit(1)
        .correlate(Force)
        .scalar_subquery()
    )
    newest = select(func.max(newest_of_force)).where(*the_players_here).scalar_subquery()
    return (
        select(BattleSide.id, BattleSide.force_id, Force.name, Force.owner_id)
        .join(Force, col(Force.id) == col(BattleSide.force_id))
        .where(col(BattleSide.battle_id) == newest)
    )


@dataclass(frozen=True)
class LastBattle:
    """What a force brought to its latest battle, for "same as last battle"."""

    battle_size: str
    role: str
    opponent_id: int
    agendas: tuple[list[str], list[str]]  # (the force's, the opponent's)
    rosters: tuple[list[int], list[int]]
    warlords: tuple[int | None, int | None]


def last_battle(
    session: Session, force_id: int, opponent_id: int | None = None
) -> LastBattle | None:
    """The force's latest battle (against ``opponent_id`` when given) that was not reverted.
    One query over both sides, reading only the columns shown (a side's force snapshot is
    large and not needed here)."""
    params = {"force": force_id, "opponent": opponent_id}
    row = session.exec(_last_battle(opponent_id is not None), params=params).first()
    if row is None:
        return None
    size, role, opponent, agendas, their_agendas, roster, their_roster, warlord, theirs_w = row
    return LastBattle(
        battle_size=size,
        role=role,
        opponent_id=opponent,
        agendas=(list(agendas), list(their_agendas)),
        rosters=(list(roster), list(their_roster)),
        warlords=(warlord, theirs_w),
    )


@cache
def _last_battle(against_one: bool) -> Any:
    """``last_battle``'s statement, bound as ``force`` (and ``opponent`` when
    ``against_one``): built once, since two aliases of a side cost more to set up than the
    database takes to answer (1.5 ms a call, issue 50)."""
    mine, theirs = aliased(BattleSide), aliased(BattleSide)
    query = (
        select(  # type: ignore[call-overload]
            Battle.battle_size,
            mine.role,
            theirs.force_id,
            mine.agendas,
            theirs.agendas,
            mine.roster,
            theirs.roster,
            mine.warlord_card_id,
            theirs.warlord_card_id,
        )
        .join(mine, col(mine.battle_id) == col(Battle.id))
        .join(theirs, col(theirs.battle_id) == col(Battle.id))
        .where(mine.force_id == bindparam("force"), theirs.force_id != bindparam("force"))
        .where(Battle.status != "reverted")
        .order_by(col(mine.battle_id).desc())  # the force's sides newest first, by index
        .limit(1)
    )
    if against_one:
        query = query.where(theirs.force_id == bindparam("opponent"))
    return query


def same_as_last(session: Session, draft_data: dict[str, Any]) -> bool:
    """Copy the battle size, role, Agendas and rosters of the last battle between the two
    chosen forces (the muster still checks every unit). False when they never met."""
    setup = draft_data["setup"]
    if not setup.get("force_id") or not setup.get("opponent_id"):
        return False
    last = last_battle(session, int(setup["force_id"]), int(setup["opponent_id"]))
    if last is None:
        return False
    if setup.get("battle_size") != last.battle_size:
        setup["mission"], setup["mission_roll"] = None, None
    setup["battle_size"], setup["role"] = last.battle_size, last.role
    setup["agendas"] = [list(last.agendas[0]), list(last.agendas[1])]
    draft_data["rosters"] = [list(last.rosters[0]), list(last.rosters[1])]
    draft_data["warlords"] = list(last.warlords)
    return True


def _empty() -> dict[str, Any]:
    return {
        "setup": {"role": "attacker", "agendas": [[], []]},
        "rosters": [[], []],
        "warlords": [None, None],
        "sides": [_side_defaults(), _side_defaults()],
        "units": {},
    }


def _side_defaults() -> dict[str, Any]:
    return {
        "vp": None,
        "painted": False,
        "marked": None,
        "agenda_choices": {},
        "dice_mode": "roll",
        "dice": [],
        "dice_extra": "",
    }


def get_draft(
    session: Session, *, campaign_id: int, draft_id: int, user: User, organizer: bool
) -> BattleDraft:
    """The draft, only if it belongs to this campaign and to the user (or the user
    organizes the campaign); anything else is 'not found', so ids reveal nothing."""
    # Locked for a writing request: the version checked below is the one the save replaces.
    draft = for_change(session, BattleDraft, draft_id)
    if (
        draft is None
        or draft.campaign_id != campaign_id
        or (draft.user_id != user.id and not organizer)
    ):
        raise NotFound("draft_not_found", f"There is no battle in progress {draft_id} here.")
    return draft


def draft_of_battle(session: Session, battle_id: int) -> BattleDraft | None:
    """The wizard draft that recorded this battle, if it was recorded through the wizard."""
    return session.exec(select(BattleDraft).where(BattleDraft.battle_id == battle_id)).first()


def data(draft: BattleDraft) -> dict[str, Any]:
    """A copy of the draft's data, filled in with defaults (safe to change, then save)."""
    stored = copy.deepcopy(draft.data or {})
    merged = _empty()
    merged.update(stored)
    merged["sides"] = [
        {**_side_defaults(), **side} for side in (merged.get("sides") or [{}, {}])[:2]
    ]
    return merged


def check_version(draft: BattleDraft, seen: int | None) -> None:
    """Refuse a change sent from a page showing an older version of the draft (another tab,
    or the other player, saved since): applying it would silently overwrite their entries.
    ``seen`` is None for a caller that sends no version (it then overwrites, as before)."""
    if seen is not None and seen != draft.version:
        raise DomainError(
            "draft_conflict",
            "This battle was changed on another screen (another tab, or the other player) "
            "after this page was opened; nothing was saved from here. Reload the page to see "
            "the latest entries, then make your change again.",
            status=409,
            field="version",
        )


def save(
    session: Session, draft: BattleDraft, new_data: dict[str, Any], *, step: str | None = None
) -> BattleDraft:
    """Store the data (a new dict, so the JSON column notices) and, if given, the step;
    the draft's version goes up by one."""
    if draft.step == FINISHED:
        raise DomainError(
            "draft_finished", "This battle has been submitted; it can no longer change.", status=409
        )
    draft.data = copy.deepcopy(new_data)
    draft.version = (draft.version or 0) + 1
    if step is not None:
        draft.step = step
    draft.updated_at = utcnow()
    session.add(draft)
    session.flush()
    return draft


def step_after(draft: BattleDraft, target: str) -> str | None:
    """The step to resume at once ``target`` is open: moving on opens it, going back to an
    earlier step closes nothing."""
    if draft.step not in STEPS or STEPS.index(target) > STEPS.index(draft.step):
        return target
    return None


def discard(session: Session, draft: BattleDraft) -> None:
    """Throw away a draft that has not mustered a battle yet."""
    if draft.battle_id is not None:
        raise DomainError(
            "draft_mustered",
            "This battle is already mustered; enter its result (or ask an organizer to "
            "revert it) instead.",
            status=409,
        )
    session.delete(draft)
    session.flush()


# --- step 1: set-up ---------------------------------------------------------------------------


def selectable_forces(
    session: Session, *, campaign_id: int, user: User, organizer: bool
) -> tuple[list[Force], list[Force]]:
    """(forces the user may play, every force in the campaign): a player plays their own
    forces, an organizer any."""
    every = list(
        session.exec(
            select(Force).where(Force.campaign_id == campaign_id).order_by(col(Force.id))
        ).all()
    )
    mine = every if organizer else [f for f in every if f.owner_id == user.id]
    return mine, every


def opponents(every: list[Force], user: User) -> list[Force]:
    """The forces to play against: everyone else's (all of them when every force is the
    user's own, as when one person tries the site out with two armies)."""
    others = [f for f in every if f.owner_id != user.id]
    return others or every


def agenda_categories(book: Rulebook) -> dict[str, list[Agenda]]:
    """The Agendas a player may pick with ``book``, by category (none withdrawn)."""
    categories: dict[str, list[Agenda]] = {}
    for agenda in (a for a in book.agendas if a.withdrawn_by is None):
        categories.setdefault(agenda.category, []).append(agenda)
    return categories


def draft_book(session: Session, draft_data: dict[str, Any]) -> Rulebook:
    """The rulebook of the campaign the draft's force plays in."""
    force = session.get(Force, int(draft_data["setup"]["force_id"]))
    return rulebooks.book_of(session, force) if force else rulebooks.campaign_book(session, 0)


def roll_mission(
    draft_data: dict[str, Any], book: Rulebook, *, entered: int | None = None
) -> Mission:
    """Roll the D6 on the chosen battle size's mission table (server side, seeded, the seed
    kept) or read the D6 rolled at the table; the mission and roll go into the draft."""
    setup = draft_data["setup"]
    size = battle_rules.battle_size(str(setup.get("battle_size") or ""), book)
    if entered is None:
        seed = secrets.randbelow(2**31)
        mission, roll = battle_rules.roll_mission(size, book, SeededDice(seed))
        setup["mission_seed"] = seed
    else:
        mission, roll = battle_rules.roll_mission(size, book, EnteredDice([entered]))
        setup["mission_seed"] = None
    setup["mission"], setup["mission_roll"] = mission.id, roll.value
    return mission


def check_setup(
    session: Session, draft: BattleDraft, draft_data: dict[str, Any], *, user: User
) -> None:
    """Refuse a set-up the muster would refuse (or that names a force the user cannot
    play), with the field at fault."""
    book = rulebooks.campaign_book(session, draft.campaign_id)
    setup = draft_data["setup"]
    organizer = is_organizer(session, campaign_id=draft.campaign_id, user=user)
    mine, every = selectable_forces(
        session, campaign_id=draft.campaign_id, user=user, organizer=organizer
    )
    force_id, opponent_id = setup.get("force_id"), setup.get("opponent_id")
    if force_id not in {f.id for f in mine}:
        raise RuleError("force_required", "Choose your force.", field="force_id")
    if opponent_id not in {f.id for f in every} or opponent_id == force_id:
        raise RuleError(
            "opponent_required", "Choose the opponent's force (another force).", field="opponent_id"
        )
    size = battle_rules.battle_size(str(setup.get("battle_size") or ""), book)
    if not setup.get("mission"):
        raise RuleError(
            "mission_required",
            "Choose the mission, roll for it, or enter the D6 rolled at the table.",
            field="mission",
        )
    battle_rules.choose_mission(size, str(setup["mission"]), book)
    if setup.get("role") not in ("attacker", "defender"):
        raise RuleError("role_required", "Say whether you attack or defend.", field="role")
    names = {f.id: f.name for f in every}
    rows = {f.id: f for f in every}
    for index, force in enumerate((force_id, opponent_id)):
        try:
            # each army picks from its own rulebook (a pack's scope, issue 47)
            rulebooks.check_in_scope(session, rows[force], agendas=setup["agendas"][index])
            check_agenda_selection(size, list(setup["agendas"][index]), book)
        except RuleError as error:
            raise RuleError(
                error.code, f"{names[force]}: {error.message}", field=f"agendas_{index}"
            ) from None


# --- step 2: muster -----------------------------------------------------------------------


def default_rosters(session: Session, draft_data: dict[str, Any]) -> None:
    """Rosters to start the muster from: the ones given (from "same as last battle"), else
    the whole Order of Battle when it fits the battle size's Power Level. Units removed or
    waiting on a decision are left out either way (the muster would refuse them)."""
    book = draft_book(session, draft_data)
    setup = draft_data["setup"]
    size = battle_rules.battle_size(str(setup.get("battle_size") or ""), book)
    for index, key in enumerate(("force_id", "opponent_id")):
        view = load_force(session, int(setup[key]))
        available = [c for c in view.cards if not c.removed and c.id not in view.pending_card_ids]
        ids = {c.id for c in available}
        chosen = [int(i) for i in draft_data["rosters"][index] if int(i) in ids]
        whole = [card_value(c) for c in available]
        if not chosen and battle_rules.army_size(whole, book) <= battle_rules.size_limit(
            size, book
        ):
            chosen = [c.id for c in available if c.id is not None]
        draft_data["rosters"][index] = chosen
        if draft_data["warlords"][index] not in chosen:
            draft_data["warlords"][index] = None


def whole_armies(session: Session, draft_data: dict[str, Any]) -> bool:
    """Whether both rosters hold every unit of their Order of Battle, none of them waiting
    on a decision: then the muster step has nothing to change (issue 40)."""
    setup = draft_data["setup"]
    for index, key in enumerate(("force_id", "opponent_id")):
        view = load_force(session, int(setup[key]))
        if view.pending_card_ids:
            return False
        every = {c.id for c in view.cards if not c.removed}
        if not every or every != {int(i) for i in draft_data["rosters"][index]}:
            return False
    return True


@dataclass(frozen=True)
class ArmyTotal:
    force: Force
    power: int  # Power Level, or points where the campaign musters by points (``unit``)
    limit: int
    crusade_points: int
    blessings: int
    unit: str = "PL"

    @property
    def over(self) -> bool:
        return self.power > self.limit


def army_totals(session: Session, draft_data: dict[str, Any]) -> list[ArmyTotal]:
    """Each side's Power Level against the battle size's limit and its Crusade points, and
    the Crusade Blessings that follow (the rules' own computation, as at muster)."""
    book = draft_book(session, draft_data)
    setup = draft_data["setup"]
    size = battle_rules.battle_size(str(setup.get("battle_size") or ""), book)
    views = [load_force(session, int(setup[k])) for k in ("force_id", "opponent_id")]
    rosters = [
        [str(i) for i in roster if str(i) in {c.id for c in view.value.cards}]
        for roster, view in zip(draft_data["rosters"], views, strict=True)
    ]
    power = [
        battle_rules.army_size([v.value.card(i) for i in r], book)
        for v, r in zip(views, rosters, strict=True)
    ]
    points = [
        battle_rules.roster_crusade_points(v.value, r) for v, r in zip(views, rosters, strict=True)
    ]
    bonus = battle_rules.crusade_blessings(points[0], points[1])
    return [
        ArmyTotal(
            views[i].force,
            power[i],
            battle_rules.size_limit(size, book),
            points[i],
            bonus[i],
            "pts" if book.numbers.muster_by == "points" else "PL",
        )
        for i in range(2)
    ]


def muster(session: Session, draft: BattleDraft, draft_data: dict[str, Any]) -> Battle:
    """Create the battle with ``battles.muster`` (every rule checked there) and remember it."""
    setup = draft_data["setup"]
    mine = VictorRole(setup["role"])
    theirs = VictorRole.DEFENDER if mine == VictorRole.ATTACKER else VictorRole.ATTACKER
    sides = [
        SideSetup(
            force_id=int(setup[key]),
            role=role,
            roster=[int(i) for i in draft_data["rosters"][index]],
            agendas=list(setup["agendas"][index]),
            warlord_card_id=draft_data["warlords"][index],
        )
        for index, (key, role) in enumerate((("force_id", mine), ("opponent_id", theirs)))
    ]
    rolled = setup.get("mission_roll")
    battle, _rows = lifecycle.muster(
        session,
        campaign_id=draft.campaign_id,
        battle_size=str(setup["battle_size"]),
        sides=sides,
        mission=None if rolled else str(setup["mission"]),
        mission_roll=int(rolled) if rolled else None,
        by=session.get(User, draft.user_id),
        territory_id=int(setup["territory_id"]) if setup.get("territory_id") else None,
    )
    draft.battle_id = battle.id
    save(session, draft, draft_data, step="after")
    return battle


# --- step 3: after the game -------------------------------------------------------------------


def unit_state(draft_data: dict[str, Any], card_id: int) -> dict[str, Any]:
    stored = draft_data["units"].get(str(card_id), {})
    return {
        "destroyed": bool(stored.get("destroyed", False)),
        # Survivor's second mark needs the unit at Half-strength or better (ruling 24).
        "below_half": bool(stored.get("below_half", False)),
        "exfiltrated": bool(stored.get("exfiltrated", False)),
        # issue 47: the enemy units it destroyed, where a pack of its army reads them
        "destroyed_enemies": [int(i) for i in stored.get("destroyed_enemies") or []],
        "quarry": int(stored["quarry"]) if stored.get("quarry") else None,
        **{k: int(stored.get(k, 0)) for k in KILLS},
        "agenda_tallies": dict(stored.get("agenda_tallies") or {}),
    }


def tally_agendas(agenda_ids: list[str], book: Rulebook) -> list[Agenda]:
    """The side's Agendas that keep a per-unit tally (the others count kills)."""
    agendas = [book.agenda(a) for a in agenda_ids]
    return [a for a in agendas if a.tally_source == TallySource.AGENDA]


def can_score(agenda: Agenda, card: Card, book: Rulebook) -> bool:
    """Whether the unit could ever score the Agenda (its keywords, scars, relics): the
    wizard offers a tally only where this holds."""
    return cannot_score(agenda, card_value(card), book) is None


def scorable(agendas: list[Agenda], card: Card, book: Rulebook) -> list[Agenda]:
    return [a for a in agendas if can_score(a, card, book)]


def tally_limit(agenda: Agenda) -> int:
    if isinstance(agenda.xp, Achieved):
        return 1
    return agenda.max_tally or MAX_COUNT


def bump(
    session: Session,
    draft: BattleDraft,
    draft_data: dict[str, Any],
    spec: str,
    *,
    screen: str | None = None,
    seen: int | None = None,
) -> tuple[int, str, int]:
    """Apply one tap of a counter, ``card:field:+1`` or ``card:field:-1``, where the field
    is a kill count (``destroyed_ranged``...) or ``agenda.<agenda id>``. Counts stay within
    0..the most the rules allow. Returns (card id, field, new value). ``screen`` and
    ``seen`` (the tapping phone's id and the draft's version it knew) let a counter moved
    on two screens while apart be told (``two_screens``)."""
    card_id, field, delta = _parse_bump(spec)
    side = side_of(session, draft, card_id)
    state = unit_state(draft_data, card_id)
    if field in KILLS:
        value, top = state[field] + delta, MAX_COUNT
    else:
        agenda_id = field.removeprefix("agenda.")
        book = rulebooks.campaign_book(session, draft.campaign_id)
        agendas = {a.id: a for a in tally_agendas(battle_side(session, draft, side).agendas, book)}
        if agenda_id not in agendas:
            raise RuleError(
                "agenda_not_selected",
                "That Agenda was not chosen for this unit's army.",
                field="bump",
            )
        _check_can_score(session, agendas[agenda_id], card_id, book)
        top = tally_limit(agendas[agenda_id])
        value = int(state["agenda_tallies"].get(agenda_id, 0)) + delta
    if not 0 <= value <= top:
        raise RuleError(
            "count_invalid",
            f"This count must stay between 0 and {top}.",
            field="bump",
        )
    _set_count(draft_data, card_id, field, value)
    two_screens.note_tap(
        draft_data,
        card_id=card_id,
        field=field,
        delta=delta,
        screen=screen,
        seen=seen,
        version=(draft.version or 0) + 1,
    )
    save(session, draft, draft_data)
    return card_id, field, value


def _count(draft_data: dict[str, Any], card_id: int, field: str) -> int:
    state = unit_state(draft_data, card_id)
    if field in KILLS:
        return int(state[field])
    return int(state["agenda_tallies"].get(field.removeprefix("agenda."), 0))


def _set_count(draft_data: dict[str, Any], card_id: int, field: str, value: int) -> None:
    state = unit_state(draft_data, card_id)
    if field in KILLS:
        state[field] = value
    else:
        state["agenda_tallies"][field.removeprefix("agenda.")] = value
    draft_data["units"][str(card_id)] = state


def settle(
    session: Session, draft: BattleDraft, draft_data: dict[str, Any], key: str, keep: str
) -> None:
    """The players' answer for a counter moved on two screens while apart: keep the sum
    ("sum"), or only one screen's taps (that screen's id). A counter settled meanwhile
    (by the other phone) is left as it is: nothing to answer any more."""
    overlap = two_screens.open_overlaps(draft_data).get(key)
    if overlap is None:
        return
    if keep != "sum" and keep not in overlap["parts"]:
        raise RuleError("keep_invalid", "Keep the sum or one screen's count.", field="keep")
    card_id, field = int(overlap["card_id"]), str(overlap["field"])
    value = two_screens.kept_value(overlap, _count(draft_data, card_id, field), keep)
    _set_count(draft_data, card_id, field, value)
    two_screens.close(draft_data, key)
    save(session, draft, draft_data)


def overlaps_view(
    session: Session, draft: BattleDraft, draft_data: dict[str, Any]
) -> list[dict[str, Any]]:
    """The counters moved on two screens while apart, for the after-game step and the
    review: the army, the unit, the counter, its value and each screen's part."""
    found = two_screens.open_overlaps(draft_data)
    if not found:
        return []
    sides = battle_sides(session, draft)
    forces = forces_by_id(session, [s.force_id for s in sides])
    cards = roster_cards(session, [int(o["card_id"]) for o in found.values()])
    book = rulebooks.campaign_book(session, draft.campaign_id)
    views = []
    for key, overlap in found.items():
        card_id, field = int(overlap["card_id"]), str(overlap["field"])
        side = next((s for s in sides if card_id in s.roster), None)
        value = _count(draft_data, card_id, field)
        what = (
            f"{book.agenda(field.removeprefix('agenda.')).name} tally"
            if field.startswith("agenda.")
            else {"destroyed_psychic": "Psychic kills", "destroyed_melee": "Melee kills"}.get(
                field, "Ranged kills"
            )
        )
        parts = [(screen, int(moved)) for screen, moved in overlap["parts"].items()]
        views.append(
            {
                "key": key,
                "army": forces[side.force_id].name if side else "",
                "unit": cards[card_id].name if card_id in cards else f"unit {card_id}",
                "what": what,
                "value": value,
                "parts": [
                    {
                        "screen": screen,
                        "moved": moved,
                        "kept": two_screens.kept_value(overlap, value, screen),
                    }
                    for screen, moved in parts
                ],
            }
        )
    return views


def _check_can_score(session: Session, agenda: Agenda, card_id: int, book: Rulebook) -> None:
    """The same refusal the result would meet later, at the tap that would cause it."""
    card = session.get(Card, card_id)
    if card is None:
        return  # side_of() has already refused a unit on neither roster
    reason = cannot_score(agenda, card_value(card), book)
    if reason:
        raise RuleError("agenda_unit_ineligible", f"{card.name}: {reason}.", field="bump")


def _parse_bump(spec: str) -> tuple[int, str, int]:
    parts = spec.split(":")
    if len(parts) != 3 or not parts[0].isdigit() or parts[2] not in ("+1", "-1"):
        raise RuleError(
            "bump_invalid", "A counter tap is 'unit:field:+1' or 'unit:field:-1'.", field="bump"
        )
    field = parts[1]
    if field not in KILLS and not field.startswith("agenda."):
        raise RuleError("bump_invalid", f"'{field}' is not a counter.", field="bump")
    return int(parts[0]), field, int(parts[2])


def battle_sides(session: Session, draft: BattleDraft) -> list[BattleSide]:
    """The mustered battle's sides, in the draft's order (your force first)."""
    if draft.battle_id is None:
        raise DomainError(
            "draft_not_mustered", "Muster the battle before entering its result.", status=409
        )
    _battle, sides = lifecycle.get_battle(session, draft.battle_id)
    first = int(data(draft)["setup"]["force_id"])
    return sorted(sides, key=lambda s: s.force_id != first)


def battle_side(session: Session, draft: BattleDraft, index: int) -> BattleSide:
    return battle_sides(session, draft)[index]


def side_of(session: Session, draft: BattleDraft, card_id: int) -> int:
    for index, side in enumerate(battle_sides(session, draft)):
        if card_id in side.roster:
            return index
    raise RuleError("unit_not_in_roster", "That unit is not on either roster.", field="bump")


def victory_points(typed: str, index: int) -> int | None:
    """Victory points as typed in the wizard (None when the box is empty): a whole number
    from 0 to the most a battle gives. Anything else ("4.5", "-3", "1e2", "250") is refused
    with the reason, never stored as empty (issue 49)."""
    text = typed.strip()
    if not text:
        return None
    if not text.isdigit() or int(text) > MAX_VICTORY_POINTS:
        raise RuleError(
            "victory_points_invalid",
            f"Victory points are a whole number from 0 to {MAX_VICTORY_POINTS}: "
            f"“{text[:12]}” is not one.",
            field=f"vp_{index}",
        )
    return int(text)


def check_after(draft_data: dict[str, Any]) -> None:
    """What the form itself can get wrong: victory points missing or out of range."""
    for index, side in enumerate(draft_data["sides"]):
        vp = side.get("vp")
        if vp is None or not 0 <= int(vp) <= MAX_VICTORY_POINTS:
            raise RuleError(
                "victory_points_invalid",
                f"Enter the victory points scored, 0 to {MAX_VICTORY_POINTS}.",
                field=f"vp_{index}",
            )


# --- step 4: Out of Action ------------------------------------------------------------------


def dice_needed(
    session: Session, draft: BattleDraft, draft_data: dict[str, Any]
) -> list[list[str]]:
    """For each side, what each die entered at the table is for, in the order the rules
    use them: a Recover Mission Archives roll (when one is needed), then one Out of Action
    test per destroyed unit in roster order (units that never gain XP pass without one)."""
    book = rulebooks.campaign_book(session, draft.campaign_id)
    needed: list[list[str]] = []
    markers = book.mission(str(draft_data["setup"]["mission"])).objective_markers
    for side in battle_sides(session, draft):
        value = load_force(session, side.force_id).value
        purposes: list[str] = []
        for agenda in tally_agendas(side.agendas, book):
            if isinstance(agenda.xp, ArchiveRoll):
                combined = sum(
                    int(unit_state(draft_data, c)["agenda_tallies"].get(agenda.id, 0))
                    for c in side.roster
                )
                if combined and markers and combined < int(markers):
                    purposes.append(f"{agenda.name} roll")
        for card_id in side.roster:
            card = value.card(str(card_id))
            if unit_state(draft_data, card_id)["destroyed"] and not never_gains_xp(card, book):
                purposes.append(f"Out of Action test: {card.name}")
        needed.append(purposes)
    return needed


def parse_dice(text: str, field: str) -> list[int]:
    """Dice typed as '3 5' or '3,5'."""
    values = text.replace(",", " ").split()
    if not all(v.isdigit() and 1 <= int(v) <= 6 for v in values):
        raise RuleError("dice_invalid", "Each die is a number from 1 to 6.", field=field)
    return [int(v) for v in values]


# --- step 5: review and submit ---------------------------------------------------------------


def results(session: Session, draft: BattleDraft, draft_data: dict[str, Any]) -> list[SideResult]:
    """Both sides' results, built as the JSON API builds them from its request body."""
    built = []
    needed = dice_needed(session, draft, draft_data)
    book = rulebooks.campaign_book(session, draft.campaign_id)
    for index, side in enumerate(battle_sides(session, draft)):
        entered = draft_data["sides"][index]
        agenda_ids = {a.id for a in tally_agendas(side.agendas, book)}
        units = []
        for card_id in side.roster:
            state = unit_state(draft_data, card_id)
            units.append(
                {
                    "card_id": card_id,
                    "destroyed": state["destroyed"],
                    **{k: state[k] for k in KILLS},
                    "agenda_tallies": {
                        k: int(v)
                        for k, v in state["agenda_tallies"].items()
                        if k in agenda_ids and int(v) > 0
                    },
                    "marked_for_greatness": entered.get("marked") == card_id,
                    **({"below_half_strength": True} if state["below_half"] else {}),
                    **({"exfiltrated": True} if state["exfiltrated"] else {}),
                    **(
                        {"destroyed_enemies": state["destroyed_enemies"]}
                        if state["destroyed_enemies"]
                        else {}
                    ),
                    **({"quarry": state["quarry"]} if state["quarry"] else {}),
                }
            )
        dice: list[int] | None = None
        if entered.get("dice_mode") == "enter" and needed[index]:
            dice = [int(d) for d in entered.get("dice") or []]
            dice += parse_dice(str(entered.get("dice_extra") or ""), f"dice_extra_{index}")
        built.append(
            SideResult(
                force_id=side.force_id,
                victory_points=int(entered.get("vp") or 0),
                painted=bool(entered.get("painted")),
                units=units,
                dice=dice,
                out_of_action_choices={},
                agenda_choices={
                    k: int(v) for k, v in (entered.get("agenda_choices") or {}).items() if v
                },
            )
        )
    return built


def _entries_digest(draft_data: dict[str, Any]) -> str:
    entries = {k: v for k, v in draft_data.items() if k != "preview"}
    return hashlib.sha256(json.dumps(entries, sort_keys=True, default=str).encode()).hexdigest()


def refresh_preview(session: Session, draft: BattleDraft, draft_data: dict[str, Any]) -> None:
    """Work out the result's consequences (``confirmation.preview``) for the review and keep
    them in the draft, marked with the entries they were computed from. A result the rules
    refuse keeps the refusal instead, to show in its place."""
    digest = _entries_digest(draft_data)
    try:
        with session.begin_nested():
            sides = confirmation.preview(
                session,
                battle_id=draft.battle_id or 0,
                results=results(session, draft, draft_data),
            )
        draft_data["preview"] = {"for": digest, "sides": sides}
    except RuleError as error:
        session.expire_all()
        draft_data["preview"] = {"for": digest, "error": error.message}


def current_preview(draft_data: dict[str, Any]) -> dict[str, Any] | None:
    """The kept preview, if it was computed from the entries as they are now."""
    kept = draft_data.get("preview")
    if not kept or kept.get("for") != _entries_digest(draft_data):
        return None
    return dict(kept)


DECISION_WORDS = {
    "out_of_action": "choose Devastating Blow or a Battle Scar",
    "battle_scar": "a Battle Scar to roll or choose",
    "battle_honour": "a Battle Honour to choose",
    "victor_bonus": "the victor's bonus to use",
}


def preview_view(
    session: Session, draft: BattleDraft, draft_data: dict[str, Any]
) -> list[dict[str, Any]] | None:
    """The review's "what happens" per side, from the kept preview (None when it is out of
    date): per unit the XP by source, the new rank, the Out of Action test; the side's RP
    and the decisions it will owe, in words."""
    kept = current_preview(draft_data)
    if kept is None or "sides" not in kept:
        return None
    book = rulebooks.campaign_book(session, draft.campaign_id)
    cards = roster_cards(
        session,
        [int(u["card_id"]) for side in kept["sides"] for u in side["report"].get("units", [])],
    )
    views = []
    for side in kept["sides"]:
        report = side["report"]
        tests = {int(t["card_id"]): t for t in report.get("tests", [])}
        blows = {int(b["card_id"]): b for b in report.get("devastating_blows", [])}
        ranks = {int(p["card_id"]): book.rank(p["rank"]).name for p in report.get("promotions", [])}
        rows = []
        gains = report.get("gains") or {}
        for unit in report.get("units", []):
            card_id, key = int(unit["card_id"]), str(unit["card_id"])
            gain = gains.get(key) or {}
            sources = [
                (label, int(gain.get(field) or 0))
                for field, label in (
                    ("battle_experience", "fought"),
                    ("marked_for_greatness", "Marked for Greatness"),
                    ("dealers_of_death", "kills"),
                )
            ] + [(book.agenda(a).name, int(n)) for a, n in (gain.get("agendas") or {}).items()]
            rows.append(
                {
                    "card_id": card_id,
                    "name": cards[card_id].name if card_id in cards else f"Unit {card_id}",
                    "xp": (report.get("experience") or {}).get(key),
                    "sources": [(label, n) for label, n in sources if n],
                    "rank": ranks.get(card_id),
                    "test": tests.get(card_id),
                    "blow": blows.get(card_id),
                }
            )
        owed = [
            (
                f"free requisitions from {d['source']}"  # a pack's threshold or quest, ruling 67
                if d.get("source")
                else DECISION_WORDS.get(d["kind"], d["kind"].replace("_", " "))
            )
            + (f": {cards[d['card_id']].name}" if d.get("card_id") in cards else "")
            + _pack_tables_offered(d, cards, book)
            for d in side["decisions"]
        ]
        views.append(
            {
                "force_id": side["force_id"],
                "won": side["won"],
                "rp": side["rp_after"] - side["rp_before"],
                "rows": rows,
                "decisions": owed,
                "pack_news": list(side.get("pack_news") or []),  # issue 38
            }
        )
    return views


def _pack_tables_offered(decision: dict[str, Any], cards: dict[int, Card], book: Rulebook) -> str:
    """The rule packs' own tables a Battle Honour or Battle Scar may be rolled on (issue 38)."""
    kinds = {"battle_honour": HONOUR_TABLES, "battle_scar": ("battle_scar",)}
    card = cards.get(decision.get("card_id") or 0)
    tables = [
        t.name
        for t in book.pack_tables
        if t.category in kinds.get(decision["kind"], ())
        and (card is None or not t.eligible or _may_roll(t.eligible, card, book))
    ]
    return f" (or a roll on {', '.join(tables)})" if tables else ""


HONOUR_TABLES = ("battle_trait", "weapon_enhancement", "psychic_fortitude")


def _may_roll(expression: str, card: Card, book: Rulebook) -> bool:
    """A table's ``eligible`` for the unit (its own counters; the force's left out here)."""
    return eligibility.meets(expression, card_value(card), {}, book)


def submit(
    session: Session,
    draft: BattleDraft,
    draft_data: dict[str, Any],
    *,
    seen: Seen | None = None,
) -> Battle:
    """Hand the result to ``confirmation.submit``: an organizer's applies at once, a
    player's waits for the opponent. The draft is then finished. A submit from a screen
    that did not know the result was submitted meanwhile (``seen``: what its page showed)
    is refused with what was submitted, compared with what that screen showed (issue 49)."""
    if draft.step == FINISHED:
        raise submitted_elsewhere(draft, seen)
    check_after(draft_data)
    if draft.battle_id is None:
        raise DomainError(
            "draft_not_mustered", "Muster the battle before entering its result.", status=409
        )
    battle, _sides = confirmation.submit(
        session, battle_id=draft.battle_id, results=results(session, draft, draft_data)
    )
    save(session, draft, draft_data, step=FINISHED)
    return battle


def forces_by_id(session: Session, ids: list[int]) -> dict[int, Force]:
    rows = session.exec(select(Force).where(col(Force.id).in_(ids))).all()
    return {f.id: f for f in rows if f.id is not None}


def unit_names(session: Session, ids: list[int]) -> dict[int, str]:
    """The units' names by id: all a battle's page shows of them (their whole cards, JSON
    columns and all, cost the page a third of its time on a league's rosters)."""
    if not ids:
        return {}
    rows = session.exec(select(Card.id, Card.name).where(col(Card.id).in_(ids))).all()
    return {int(i): name for i, name in rows if i is not None}


def roster_cards(session: Session, ids: list[int]) -> dict[int, Card]:
    rows = session.exec(select(Card).where(col(Card.id).in_(ids))).all()
    return {c.id: c for c in rows if c.id is not None}


@dataclass(frozen=True)
class Seen:
    """What a review page showed when its Submit was tapped: the draft's version and each
    army's victory points."""

    version: int | None
    victory_points: tuple[int | None, ...]


def _score(points: tuple[int | None, ...] | list[Any]) -> str:
    return "–".join("?" if vp is None else str(vp) for vp in points)


def submitted_elsewhere(draft: BattleDraft, seen: Seen | None) -> DomainError:
    """The refusal of a submit that came too late: the result had been submitted from
    another screen. Says what counted, and how it differs from what this screen showed."""
    stored = data(draft)
    points = tuple(side.get("vp") for side in stored["sides"])
    counted = _score(points)
    if seen is None:
        compared = ""
    elif seen.victory_points != points:
        compared = f", not your {_score(seen.victory_points)}"
    elif seen.version is not None and seen.version + 1 == draft.version:
        compared = ", the same entries as yours"
    else:
        compared = ", the same score as yours; other entries (kills, marks, dice) may differ"
    return DomainError(
        "draft_submitted_elsewhere",
        f"Submitted from another screen: {counted}{compared}. Your submit did not count. "
        "Open the battle to compare; to correct it, dispute the result or ask an organizer "
        "to revert it.",
        status=409,
    )
