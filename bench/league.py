"""A league-sized campaign for the benchmarks: N forces of U varied units and B battles.

    .venv/bin/python bench/league.py --forces 50 --units 100 --battles 2000 [--database-url URL]

Everything goes through the services, as the API would call them (muster, record_result,
decisions.answer, revert), one transaction per battle, with seeded dice: the numbers on
every card are the rules engine's. Two shortcuts, both things an organizer could do by hand:
the campaign is made public, and each force's Supply Limit is raised so 100 units fit. The
units are varied on purpose (CHARACTER, VEHICLE, MONSTER, PSYKER and plain INFANTRY, Power
Ratings 1-12, champions), so honours, scars and rank changes differ from card to card and
the resolution writes cards whose changed columns differ.

``grow`` adds battles to an existing league, so one run of bench/league_bench.py measures
the same campaign at 10, 200 and 2,000 battles.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from app.db import migrate
from app.db.engine import make_engine
from app.db.models import Card, Decision
from app.db.session import session_scope
from app.rules.agendas import EnemyLoss, kill_marks_allowed
from app.rules.data import VictorRole, rulebook
from app.rules.dice import SeededDice
from app.rules.errors import RuleError
from app.services.battles import decisions, lifecycle
from app.services.campaigns.demo import _answer
from app.services.campaigns.kept_totals import install_kept_totals
from app.services.forces import forces

FACTIONS = ("IMPERIUM", "CHAOS", "ORKS", "NECRONS", "AELDARI", "TYRANIDS")
# (name, battlefield role, keywords beyond the faction, PR range, champion)
PROFILES: tuple[tuple[str, str, tuple[str, ...], tuple[int, int], str | None], ...] = (
    ("Captain", "HQ", ("INFANTRY", "CHARACTER"), (4, 6), None),
    ("Librarian", "HQ", ("INFANTRY", "CHARACTER", "PSYKER"), (4, 6), None),
    ("Battle Squad", "Troops", ("INFANTRY",), (4, 10), "Sergeant"),
    ("Scout Squad", "Troops", ("INFANTRY",), (3, 5), None),
    ("Veterans", "Elites", ("INFANTRY",), (6, 9), "Veteran Sergeant"),
    ("Dreadnought", "Elites", ("VEHICLE",), (6, 10), None),
    ("Bikers", "Fast Attack", ("BIKER",), (5, 8), None),
    ("Battle Tank", "Heavy Support", ("VEHICLE",), (9, 12), None),
    ("Great Beast", "Heavy Support", ("MONSTER",), (8, 12), None),
    ("Swarm", "Fast Attack", ("SWARM",), (1, 3), None),
)
# One Agenda per category at most (the rules refuse two of one category).
AGENDA_CATEGORIES = (
    ("assassins", "priority_target"),
    ("first_strike",),
    ("sentinel",),
    ("witch_hunter",),
)
TALLIED = ("assassins", "priority_target", "first_strike")
SEED = 14  # the league's dice: change it and saved leagues (league_bench --reuse) differ
REVERT_EVERY = 37  # about one battle in 37 is reverted straight after being recorded


@dataclass
class League:
    campaign_id: int
    force_ids: list[int]
    battles: int = 0
    reverted: int = 0
    rng: random.Random = field(default_factory=lambda: random.Random(SEED))


def create(
    engine: Engine, *, forces_count: int, units: int, organizer_id: int | None = None
) -> League:
    install_kept_totals()  # writes through the services without the app
    rng = random.Random(SEED)
    with session_scope(engine) as session:
        campaign = forces.create_campaign(
            session, name="League of the Long War", organizer_id=organizer_id
        )
        campaign.public = True
        session.add(campaign)
        assert campaign.id is not None
        campaign_id = campaign.id
    force_ids = []
    for number in range(forces_count):
        with session_scope(engine) as session:
            faction = FACTIONS[number % len(FACTIONS)]
            row = forces.create_force(
                session,
                campaign_id=campaign_id,
                name=f"{faction.title()} host {number + 1}",
                crusade_faction=faction,
                player_name=f"Player {number + 1}",
            )
            row.supply_limit = 2_000  # room for a hundred units (see the docstring)
            session.add(row)
            session.flush()
            assert row.id is not None
            for index in range(units):
                forces.add_card(session, force_id=row.id, **_unit(rng, faction, index))
            force_ids.append(row.id)
    return League(campaign_id, force_ids)


def _unit(rng: random.Random, faction: str, index: int) -> dict[str, Any]:
    name, role, keywords, (low, high), champion = PROFILES[index % len(PROFILES)]
    return {
        "name": f"{name} {index + 1}",
        "battlefield_role": role,
        "power_rating": rng.randint(low, high),
        "keywords": [faction, *keywords],
        "champion": f"{champion} {index + 1}" if champion else None,
    }


def grow(engine: Engine, league: League, battles_wanted: int) -> None:
    """Play battles until the league has ``battles_wanted`` resolved or reverted ones."""
    while league.battles < battles_wanted:
        play(engine, league)


def play(engine: Engine, league: League, roster_size: int | None = None) -> int:
    install_kept_totals()  # writes through the services without the app
    rng = league.rng
    pair = rng.sample(league.force_ids, 2)
    with session_scope(engine) as session:
        size = "strike_force" if roster_size is None and rng.random() < 0.7 else "onslaught"
        cap, agendas = (100, 3) if size == "strike_force" else (150, 4)
        rosters = [_roster(session, f, rng, roster_size, cap) for f in pair]
        sides = [
            lifecycle.SideSetup(
                force_id=force_id,
                role=role,
                roster=roster,
                agendas=[rng.choice(c) for c in rng.sample(AGENDA_CATEGORIES, agendas)],
                warlord_card_id=_warlord(session, roster),
            )
            for force_id, role, roster in zip(
                pair, (VictorRole.ATTACKER, VictorRole.DEFENDER), rosters, strict=True
            )
        ]
        battle, _ = lifecycle.muster(
            session,
            campaign_id=league.campaign_id,
            battle_size=size,
            sides=sides,
            seed=rng.randrange(2**31),
        )
        assert battle.id is not None
        results = _results(session, rng, sides)
        lifecycle.record_result(session, battle_id=battle.id, results=results)
        session.flush()
        if rng.randrange(REVERT_EVERY) == 0:
            lifecycle.revert(session, battle_id=battle.id)
            league.reverted += 1
        else:
            for force_id in pair:
                _answer_all(session, force_id, rng)
    league.battles += 1
    return battle.id


def _roster(
    session: Session, force_id: int, rng: random.Random, size: int | None, cap: int
) -> list[int]:
    """Up to ``size`` units (5-20 at random) that fit the battle size's Power Level; a fixed
    ``size`` takes the lightest units, so 20 of them always fit an Onslaught."""
    units = list(
        session.exec(
            select(Card.id, Card.power_rating).where(
                Card.force_id == force_id,
                Card.removed == False,  # noqa: E712
            )
        ).all()
    )
    if size is None:
        rng.shuffle(units)
    else:
        units.sort(key=lambda u: (u[1], u[0]))
    wanted, power = size or rng.randint(5, 20), 0
    roster: list[int] = []
    for card_id, rating in units:
        if len(roster) < wanted and power + rating <= cap and card_id is not None:
            roster.append(card_id)
            power += rating
    return sorted(roster)


def _warlord(session: Session, roster: list[int]) -> int:
    """A CHARACTER when the roster has one (the rules want it), else the first unit."""
    rows = session.exec(select(Card.id, Card.keywords).where(col(Card.id).in_(roster))).all()
    characters = sorted(i for i, keywords in rows if i is not None and "CHARACTER" in keywords)
    return characters[0] if characters else roster[0]


def _results(
    session: Session, rng: random.Random, sides: list[lifecycle.SideSetup]
) -> list[lifecycle.SideResult]:
    """Both sides' reports: who fell and who killed what, then the Agenda marks (``bound``)."""
    drafts = [_result(rng, s) for s in sides]
    bound(
        session,
        [d.units for d in drafts],
        [[a for a in s.agendas if a in TALLIED] for s in sides],
        [s.warlord_card_id for s in sides],
    )
    return drafts


def bound(
    session: Session,
    units: list[list[dict[str, Any]]],
    agendas: list[list[str]],
    warlords: list[int | None],
) -> None:
    """A mark of each of a side's per-mark ``agendas`` for its units with two kills or more,
    while the other side's losses leave marks to give (the rules refuse more: an Assassins
    mark needs an enemy CHARACTER destroyed)."""
    ids = [u["card_id"] for side in units for u in side]
    rows = session.exec(select(Card.id, Card.keywords).where(col(Card.id).in_(ids))).all()
    keywords = {card_id: words for card_id, words in rows}
    book = rulebook()
    for index, side in enumerate(units):
        losses = [
            EnemyLoss(
                str(u["card_id"]),
                frozenset(keywords[u["card_id"]]),
                warlord=u["card_id"] == warlords[1 - index],
            )
            for u in units[1 - index]
            if u.get("destroyed")
        ]
        left = {a: kill_marks_allowed(book.agenda(a), losses) for a in agendas[index]}
        for unit in side:
            kills = unit.get("destroyed_ranged", 0) + unit.get("destroyed_melee", 0)
            unit["agenda_tallies"] = {a: 1 for a, n in left.items() if kills >= 2 and n != 0}
            for a in unit["agenda_tallies"]:
                remaining = left[a]
                left[a] = None if remaining is None else remaining - 1


def _result(rng: random.Random, side: lifecycle.SideSetup) -> lifecycle.SideResult:
    units = []
    for card_id in side.roster:
        kills = rng.choice((0, 0, 1, 1, 2, 3, 5))
        units.append(
            {
                "card_id": card_id,
                "destroyed": rng.random() < 0.3,
                "destroyed_ranged": kills // 2 + kills % 2,
                "destroyed_melee": kills // 2,
                "destroyed_psychic": 1 if rng.random() < 0.05 else 0,
            }
        )
    rng.choice(units)["marked_for_greatness"] = True
    return lifecycle.SideResult(
        force_id=side.force_id,
        victory_points=rng.randint(20, 95),
        painted=rng.random() < 0.6,
        units=units,
    )


def _answer_all(session: Session, force_id: int, rng: random.Random) -> None:
    """Answer every decision as a player would (see app.services.campaigns.demo): scars over lost
    XP,
    an honour from a category offered (tried in a random order: the rules refuse, say, a
    second relic, and a refused answer changes nothing), free Supply Limit from bonuses."""
    for _ in range(60):
        row = session.exec(
            select(Decision)
            .where(Decision.force_id == force_id, Decision.status == "pending")
            .limit(1)
        ).first()
        if row is None:
            return
        assert row.id is not None
        for answer in _answers(session, row, rng):
            try:
                decisions.answer(
                    session,
                    decision_id=row.id,
                    answer=answer,
                    dice=SeededDice(rng.randrange(2**31)),
                )
                break
            except RuleError:
                continue
        else:
            _set_aside(session, row)
        session.flush()


RELICS = (
    "laurels_of_victory",
    "artisan_bionics",
    "master_crafted_armour",
    "frenzon_injector",
    "conversion_field",
)


def _set_aside(session: Session, row: Decision) -> None:
    """A bonus no unit can take any more (every eligible CHARACTER already holds the
    relics offered): a bench shortcut marks it declined, so the force can fight again."""
    row.status, row.answer = "cancelled", {"declined": True}
    session.add(row)


def _answers(session: Session, row: Decision, rng: random.Random) -> list[dict[str, Any]]:
    if row.kind != "battle_honour":
        return [_answer(row)]
    categories = list(row.payload["categories"])
    rng.shuffle(categories)
    targets = [row.card_id] if row.card_id else list(row.payload.get("eligible") or [])
    answers = []
    for category in categories:
        for target in targets:
            answer: dict[str, Any] = {"category": category}
            if not row.card_id:
                answer["card_id"] = target
            if category == "weapon_enhancement":
                card = session.get(Card, target)
                model = (card.champion if card else None) or "Champion"
                answer["weapon"] = {"model": model, "weapon": f"boltgun {rng.randrange(99)}"}
            if category == "crusade_relic":
                answers += [{**answer, "entries": [relic]} for relic in RELICS]
            else:
                answers.append(answer)
    return answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--forces", type=int, default=50)
    parser.add_argument("--units", type=int, default=100)
    parser.add_argument("--battles", type=int, default=2000)
    parser.add_argument("--database-url", required=True)
    args = parser.parse_args()
    migrate.upgrade(args.database_url)
    engine = make_engine(args.database_url)
    start = time.perf_counter()
    league = create(engine, forces_count=args.forces, units=args.units)
    print(f"{args.forces} forces x {args.units} units: {time.perf_counter() - start:.1f} s")
    grow(engine, league, args.battles)
    print(
        f"{league.battles} battles ({league.reverted} reverted): "
        f"{time.perf_counter() - start:.1f} s"
    )


if __name__ == "__main__":
    main()
