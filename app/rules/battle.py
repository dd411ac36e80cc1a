"""Before and at the end of a battle: size, mission, rosters, Crusade Blessings, victor."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum

from app.rules.cards import CrusadeCard
from app.rules.data import BattleSize, Mission, MusterBy, Rulebook, VictorBonus, VictorRole
from app.rules.dice import Dice, DieRoll
from app.rules.errors import RuleError
from app.rules.order_of_battle import OrderOfBattle


def battle_size(size_id: str, book: Rulebook) -> BattleSize:
    try:
        return book.battle_size(size_id)
    except KeyError:
        names = ", ".join(s.id for s in book.battle_sizes)
        raise RuleError(
            "battle_size_unknown",
            f"'{size_id}' is not a battle size; use one of {names}.",
            field="battle_size",
        ) from None


def choose_mission(size: BattleSize, mission_id: str, book: Rulebook) -> Mission:
    for mission in book.missions_for(size.id):
        if mission.id == mission_id:
            return mission
    raise RuleError(
        "mission_not_for_battle_size",
        f"'{mission_id}' is not one of the {size.name} missions.",
        field="mission",
    )


def roll_mission(size: BattleSize, book: Rulebook, dice: Dice) -> tuple[Mission, DieRoll]:
    """Roll a D6 on the battle size's mission table."""
    roll = dice.roll(6, f"the {size.name} mission table")
    for mission in book.missions_for(size.id):
        if mission.low <= roll.value <= mission.high:
            return mission, roll
    raise AssertionError("mission tables are validated to cover 1-6")


def objective_markers(mission: Mission, reported: int | None) -> int:
    """The objective markers set up at the start: the mission says how many, so a report
    that gives another number is refused rather than trusted."""
    if reported is not None and reported != mission.objective_markers:
        raise RuleError(
            "objective_markers_invalid",
            f"{mission.name} sets up {mission.objective_markers} objective marker(s), "
            f"not {reported}.",
            field="objective_markers",
        )
    return mission.objective_markers


def muster(
    force: OrderOfBattle,
    card_ids: Sequence[str],
    size: BattleSize,
    *,
    unavailable: Collection[str] = (),
    muster_by: MusterBy = "power_level",
) -> tuple[CrusadeCard, ...]:
    """An army roster drawn from the Order of Battle within the battle size's Power Level
    (or its points limit, where the campaign musters by points). ``unavailable`` holds units
    that cannot be picked now (e.g. awaiting a decision)."""
    if not card_ids:
        raise RuleError("roster_empty", "An army needs at least one unit.", field="roster")
    if len(set(card_ids)) != len(card_ids):
        raise RuleError(
            "roster_duplicate", "A unit can appear only once on a roster.", field="roster"
        )
    cards = tuple(force.card(i) for i in card_ids)
    blocked = [c.name for c in cards if c.id in unavailable]
    if blocked:
        raise RuleError(
            "unit_unavailable",
            f"{', '.join(blocked)} cannot be mustered until their pending decisions are made.",
            field="roster",
        )
    _check_split_units(force, cards)
    if muster_by == "points":
        _check_points(cards, size)
        return cards
    power = sum(c.power_rating for c in cards)
    if power > size.max_power_level:
        raise RuleError(
            "power_level_exceeded",
            f"The roster's Power Level is {power}; a {size.name} army may have at most "
            f"{size.max_power_level}.",
            field="roster",
        )
    return cards


def army_size(cards: Sequence[CrusadeCard], book: Rulebook) -> int:
    """An army's Power Level, or its points where the campaign musters by points."""
    if book.numbers.muster_by == "points":
        return sum(c.points or 0 for c in cards)
    return sum(c.power_rating for c in cards)


def size_limit(size: BattleSize, book: Rulebook) -> int:
    """The battle size's limit on each army, in what the campaign musters by."""
    return size.max_points if book.numbers.muster_by == "points" else size.max_power_level


def _check_points(cards: Sequence[CrusadeCard], size: BattleSize) -> None:
    unknown = [c.name for c in cards if c.points is None]
    if unknown:
        raise RuleError(
            "points_missing",
            f"This campaign musters by points: give {', '.join(unknown)} a points value "
            "before mustering.",
            field="roster",
        )
    points = sum(c.points or 0 for c in cards)
    if points > size.max_points:
        raise RuleError(
            "points_limit_exceeded",
            f"The roster is {points} points; a {size.name} army may have at most "
            f"{size.max_points} points.",
            field="roster",
        )


def _check_split_units(force: OrderOfBattle, cards: Sequence[CrusadeCard]) -> None:
    """A split unit is chosen whole: every card of it still on the Order of Battle."""
    chosen = {c.id for c in cards}
    for label in sorted({c.split_unit for c in cards if c.split_unit}):
        missing = [c.name for c in force.cards if c.split_unit == label and c.id not in chosen]
        if missing:
            raise RuleError(
                "split_unit_incomplete",
                f"{label} is a split unit: muster all of its Crusade cards or none "
                f"(missing {', '.join(missing)}).",
                field="roster",
            )


def crusade_blessings(points_a: int, points_b: int) -> tuple[int, int]:
    """Bonus CP for each side: the side with fewer Crusade points on its roster gets half
    the difference, rounded up."""
    bonus = math.ceil(abs(points_a - points_b) / 2)
    if points_a < points_b:
        return bonus, 0
    if points_b < points_a:
        return 0, bonus
    return 0, 0


class Outcome(StrEnum):
    A_WINS = "a_wins"
    B_WINS = "b_wins"
    DRAW = "draw"


@dataclass(frozen=True)
class Score:
    objective_points: int
    painted_bonus: int

    @property
    def total(self) -> int:
        return self.objective_points + self.painted_bonus


def score(objective_vp: int, painted: bool, book: Rulebook) -> Score:
    """Objective VP count up to 90; a fully painted army adds 10."""
    if objective_vp < 0:
        raise RuleError(
            "victory_points_invalid", "Victory points cannot be negative.", field="victory_points"
        )
    numbers = book.numbers
    bonus = numbers.painted_bonus_victory_points if painted else 0
    return Score(min(objective_vp, numbers.max_objective_victory_points), bonus)


def decide_victor(a: Score, b: Score) -> Outcome:
    if a.total > b.total:
        return Outcome.A_WINS
    if b.total > a.total:
        return Outcome.B_WINS
    return Outcome.DRAW


def victor_bonuses(mission: Mission, *, won: bool, role: VictorRole) -> tuple[VictorBonus, ...]:
    """The bonuses a side claims: none unless it won (a draw gives nobody a bonus)."""
    if not won:
        return ()
    return tuple(b for b in mission.victor_bonus if b.role in (VictorRole.EITHER, role))


def roster_crusade_points(force: OrderOfBattle, card_ids: Sequence[str]) -> int:
    """The combined Crusade points of the units on a roster (for Crusade Blessings)."""
    return sum(force.card(i).crusade_points for i in card_ids)


def check_warlord(roster: Sequence[CrusadeCard], warlord: CrusadeCard) -> None:
    """The Warlord is a CHARACTER when the roster has one (the rules then want the one with
    the best Leadership, which the tracker does not hold), and never a Fortification."""
    if warlord.has_role("Fortification"):
        raise RuleError(
            "warlord_fortification",
            f"{warlord.name} is a Fortification; a Warlord cannot have that Battlefield Role.",
            field="warlord",
        )
    characters = [c.name for c in roster if c.has("CHARACTER")]
    if characters and not warlord.has("CHARACTER"):
        raise RuleError(
            "warlord_not_character",
            f"The Warlord must be a CHARACTER while the roster has one ({', '.join(characters)}); "
            f"{warlord.name} is not.",
            field="warlord",
        )
