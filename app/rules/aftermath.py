"""Updating one side's Crusade cards and Order of Battle after a battle, in the rulebook's
order: Out of Action tests, experience, Battle Honours, combat tallies, Order of Battle.

What the rules leave to the player (Devastating Blow or scar, which scar, which honour,
victor bonuses) comes back as pending decisions; ``answer_*`` functions settle them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.rules import quests, triggers
from app.rules.agendas import (
    AgendaResult,
    ScoringUnit,
    agenda_experience,
    cannot_score,
    check_scoring,
)
from app.rules.cards import CombatTallies, CrusadeCard
from app.rules.data import (
    Agenda,
    BonusBattleHonour,
    BonusCounter,
    BonusTarget,
    ChangeRequisitionPoints,
    Counter,
    CounterThreshold,
    ExtraMarkedForGreatness,
    ExtraRequisitionPoints,
    HonourCategory,
    Quest,
    Rulebook,
    VictorBonus,
)
from app.rules.dice import Dice, DieRoll
from app.rules.errors import RuleError
from app.rules.experience import ExperienceGain, experience_gain
from app.rules.honours import HonourRequest, gain_battle_honour, open_categories
from app.rules.order_of_battle import OrderOfBattle, record_battle_played
from app.rules.out_of_action import (
    Consequence,
    DevastatingBlow,
    OutOfActionTest,
    allowed_consequences,
    check_consequence,
    devastating_blow,
    gain_battle_scar,
    out_of_action_test,
)
from app.rules.ranks import Promotion, change_xp
from app.rules.values import evolve


@dataclass(frozen=True)
class UnitReport:
    """What one unit did in the battle, as entered after the game."""

    card_id: str
    destroyed: bool = False
    destroyed_psychic: int = 0
    destroyed_ranged: int = 0
    destroyed_melee: int = 0
    agenda_tallies: Mapping[str, int] = field(default_factory=dict)
    marked_for_greatness: bool = False
    # Survivor's second mark: None when not told (the tally entered stands as counted).
    below_half_strength: bool | None = None
    exfiltrated: bool = False  # left by the enemy's edge (Behind Enemy Lines)
    # issue 47: the keywords of each enemy unit the report names as destroyed by this unit
    # (None: not named; a pack's keyword-filtered kills then read the unit's own keywords)
    destroyed_enemies: tuple[frozenset[str], ...] | None = None
    # the same units by card id, and the enemy unit it named as its quarry for the battle
    destroyed_enemy_ids: tuple[str, ...] = ()
    quarry: str | None = None

    @property
    def units_destroyed(self) -> int:
        return self.destroyed_psychic + self.destroyed_ranged + self.destroyed_melee


@dataclass(frozen=True)
class SideReport:
    roster: tuple[str, ...]
    agendas: tuple[str, ...]
    units: tuple[UnitReport, ...] = ()
    won: bool = False
    victor_bonuses: tuple[VictorBonus, ...] = ()
    out_of_action_choices: Mapping[str, Consequence] = field(default_factory=dict)
    agenda_choices: Mapping[str, str] = field(default_factory=dict)
    objective_markers: int | None = None
    # the most objective markers still on the battlefield at the end (None: as set up)
    objective_markers_at_end: int | None = None
    warlord: str | None = None
    exfiltration: bool = False  # the mission lets units be exfiltrated
    extra_requisition_points: int = 0  # e.g. from territories held (ruling 54)
    # The keywords of each enemy unit the opponent reported destroyed (a pack's triggers)
    enemy_losses: tuple[frozenset[str], ...] = ()

    def report_for(self, card_id: str) -> UnitReport:
        for unit in self.units:
            if unit.card_id == card_id:
                return unit
        return UnitReport(card_id)


# --- pending decisions -----------------------------------------------------------------


@dataclass(frozen=True)
class OutOfActionDecision:
    """A failed test: the player picks Devastating Blow or Battle Scar. The unit's XP from
    the battle waits here, because a Devastating Blow cancels most of it."""

    card_id: str
    gain: ExperienceGain
    options: tuple[Consequence, ...]


@dataclass(frozen=True)
class BattleScarDecision:
    card_id: str


@dataclass(frozen=True)
class BattleHonourDecision:
    """One Battle Honour owed: for a new rank, or from a victor bonus (then ``card_id`` is
    None until the player picks the unit, and ``categories`` may be narrower)."""

    card_id: str | None
    reason: str
    categories: tuple[HonourCategory, ...] = tuple(HonourCategory)
    eligible: tuple[str, ...] = ()


@dataclass(frozen=True)
class VictorBonusDecision:
    """Free requisitions owed: a mission's victor bonus, or a rule pack's threshold reached
    (``threshold``: then no battle was won, and the decision says so)."""

    bonus: VictorBonus
    threshold: CounterThreshold | Quest | None = None  # or a quest's reward or penalty
    # a pack's reward (issue 47): the unit that earned it (its counter, its quest), and the
    # units that may take its requisitions for a unit (none: it grants none)
    card_id: str | None = None
    eligible: tuple[str, ...] = ()


Decision = OutOfActionDecision | BattleScarDecision | BattleHonourDecision | VictorBonusDecision


@dataclass(frozen=True)
class Aftermath:
    """Everything one side's update produced; ``force`` is the Order of Battle after it."""

    force: OrderOfBattle
    tests: tuple[OutOfActionTest, ...] = ()
    blows: tuple[DevastatingBlow, ...] = ()
    experience: Mapping[str, int] = field(default_factory=dict)
    gains: Mapping[str, ExperienceGain] = field(default_factory=dict)
    promotions: tuple[Promotion, ...] = ()
    pending: tuple[Decision, ...] = ()
    dice: tuple[DieRoll, ...] = ()
    # a rule pack's thresholds reached: (card id or None for the force, threshold)
    thresholds: tuple[tuple[str | None, CounterThreshold], ...] = ()

    def merge(self, other: Aftermath) -> Aftermath:
        return Aftermath(
            force=other.force,
            tests=self.tests + other.tests,
            blows=self.blows + other.blows,
            experience={**self.experience, **other.experience},
            gains={**self.gains, **other.gains},
            promotions=self.promotions + other.promotions,
            pending=self.pending + other.pending,
            dice=self.dice + other.dice,
            thresholds=self.thresholds + other.thresholds,
        )


# --- the update sequence ---------------------------------------------------------------


def resolve_side(force: OrderOfBattle, report: SideReport, book: Rulebook, dice: Dice) -> Aftermath:
    """Apply a battle to one side's force. Nothing is kept from a refused report: the
    input force is untouched and a RuleError explains why."""
    _check_report(force, report, book)
    agendas = tuple(book.agenda(a) for a in report.agendas)
    destroyed = {c: report.report_for(c).units_destroyed for c in report.roster}
    tallies = {u.card_id: u.agenda_tallies for u in report.units if u.agenda_tallies}
    check_scoring(agendas, tallies, _scoring_units(force, report), book)
    scored = agenda_experience(
        agendas,
        tallies,
        destroyed,
        dice,
        choices=report.agenda_choices,
        objective_markers=report.objective_markers,
        objective_markers_at_end=report.objective_markers_at_end,
        battle_rounds=book.numbers.battle_rounds,
        names={c: force.card(c).name for c in report.roster},
    )
    result = Aftermath(force=_count_marks(force, agendas, tallies, book), dice=scored.dice)
    for card_id in report.roster:
        step = _resolve_unit(result.force, report.report_for(card_id), scored, report, book, dice)
        result = result.merge(step)
    result = result.merge(_close_battle(result.force, report, book))
    completed = {c for c, per in scored.xp.items() if any(v > 0 for v in per.values())}
    result = result.merge(_pack_triggers(force, result, report, book, dice, completed))
    # last (ruling 85): a failed Agenda takes from what the battle gave, never below 0
    return result.merge(
        Aftermath(force=failed_agendas(result.force, agendas, scored, report, book))
    )


def failed_agendas(
    force: OrderOfBattle,
    agendas: Sequence[Agenda],
    scored: AgendaResult,
    report: SideReport,
    book: Rulebook,
) -> OrderOfBattle:
    """A pack's Agenda the army chose and failed (ruling 85: no unit of its roster gained
    XP from it) takes away what its ``on_fail`` says: XP from each roster unit that could
    have scored it (never below 0, the rank kept), RP from the force (never below 0)."""
    for agenda in agendas:
        if not agenda.on_fail or any(per.get(agenda.id, 0) > 0 for per in scored.xp.values()):
            continue
        for effect in agenda.on_fail:
            if isinstance(effect, ChangeRequisitionPoints):
                points = max(0, force.requisition_points + effect.amount)
                force = replace(force, requisition_points=points)
                continue
            for card_id in report.roster:
                card = force.card(card_id)
                if cannot_score(agenda, card, book) is None:
                    card, _none = change_xp(card, -effect.amount, book)
                    force = force.with_card(card)
    return force


def _pack_triggers(
    before: OrderOfBattle,
    result: Aftermath,
    report: SideReport,
    book: Rulebook,
    dice: Dice,
    completed: set[str] | None = None,
) -> Aftermath:
    """A rule pack's triggers move their counters by what the battle did; then each
    threshold a counter rose to applies its effects (issue 38)."""
    if not book.triggers and not book.thresholds and not book.quests:
        return Aftermath(force=result.force)
    roster = report.roster
    facts = triggers.battle_facts(
        won=report.won,
        destroyed=[u.card_id for u in report.units if u.destroyed and u.card_id in roster],
        failed_tests=[t.card_id for t in result.tests if not t.passed],
        enemy_losses=report.enemy_losses,
        kills={c: report.report_for(c).units_destroyed for c in roster},
        marked=[u.card_id for u in report.units if u.marked_for_greatness],
        worn=[u.card_id for u in report.units if u.destroyed or u.below_half_strength],
        kinds={
            c: {
                "ranged": (r := report.report_for(c)).destroyed_ranged,
                "melee": r.destroyed_melee,
                "psychic": r.destroyed_psychic,
            }
            for c in roster
        },
        completed=completed or (),
        named_kills={
            u.card_id: u.destroyed_enemies
            for u in report.units
            if u.destroyed_enemies is not None and u.card_id in roster
        },
        quarry_slain=[
            u.card_id
            for u in report.units
            if u.quarry is not None and u.quarry in u.destroyed_enemy_ids and u.card_id in roster
        ],
    )
    moved, trigger_promotions = triggers.fire_triggers(
        result.force, book, roster=roster, facts=facts, dice=dice
    )
    # quests tally the same battle; their rewards may take a counter to a threshold
    moved, quest_promotions, quest_owed = quests.advance(moved, book, roster, facts, dice)
    reached = triggers.reached_thresholds(before, moved, book, report.roster, dice)
    force, promotions, fired, owed = reached
    promotions = trigger_promotions + quest_promotions + promotions
    owed = quest_owed + owed
    return Aftermath(
        force=force,
        promotions=tuple(promotions),
        pending=threshold_decisions(force, promotions, owed, book),
        thresholds=tuple(fired),
    )


def threshold_decisions(
    force: OrderOfBattle,
    promotions: Sequence[Promotion],
    owed: Sequence[triggers.Owed],
    book: Rulebook,
) -> tuple[Decision, ...]:
    """What thresholds reached owe: a Battle Honour for each rank their XP gave, and each
    free-requisition reward (a decision that names its threshold)."""
    pending: list[Decision] = []
    for card_id in dict.fromkeys(p.card_id for p in promotions):
        mine = [p for p in promotions if p.card_id == card_id]
        pending += honours_owed(force.card(card_id), mine, book)
    pending += [
        VictorBonusDecision(
            bonus, source, holder, triggers.reward_units(force, holder, bonus, book)
        )
        for source, bonus, holder in owed
    ]
    return tuple(pending)


def _count_marks(
    force: OrderOfBattle,
    agendas: tuple[Agenda, ...],
    tallies: Mapping[str, Mapping[str, int]],
    book: Rulebook,
) -> OrderOfBattle:
    """A rule pack's Agenda that moves counters: each tally mark adds its amount to a force
    counter (the army's marks together) or to the unit's own card counter, kept within the
    counter's bounds (the tallies were checked against the Agenda's own caps already)."""
    rules = {c.id: c for c in book.counters}
    for agenda in agendas:
        marks = {card_id: t.get(agenda.id, 0) for card_id, t in tallies.items()}
        for counter_id, amount in agenda.counters_per_mark.items():
            rule = rules[counter_id]
            if rule.scope == "force":
                value = force.counters.get(counter_id, rule.start) + amount * sum(marks.values())
                force = replace(
                    force, counters={**force.counters, counter_id: _bounded(rule, value)}
                )
                continue
            for card_id, count in marks.items():
                if count:
                    card = force.card(card_id)
                    value = card.counters.get(counter_id, rule.start) + amount * count
                    counters = {**card.counters, counter_id: _bounded(rule, value)}
                    force = force.with_card(replace(card, counters=counters))
    return force


def _move_counters(
    force: OrderOfBattle, card_id: str, counters: Mapping[str, int], book: Rulebook
) -> OrderOfBattle:
    """A rule pack's honour or scar that moves counters when a unit gains it (ruling 59):
    a force counter of its force, a card counter on the unit, kept within the counter's
    bounds as an Agenda's marks are."""
    rules = {c.id: c for c in book.counters}
    for counter_id, amount in counters.items():
        rule = rules[counter_id]
        if rule.scope == "force":
            value = force.counters.get(counter_id, rule.start) + amount
            force = replace(force, counters={**force.counters, counter_id: _bounded(rule, value)})
            continue
        card = force.card(card_id)
        value = card.counters.get(counter_id, rule.start) + amount
        force = force.with_card(
            replace(card, counters={**card.counters, counter_id: _bounded(rule, value)})
        )
    return force


def _bounded(rule: Counter, value: int) -> int:
    return max(rule.min, min(rule.max, value))


def _scoring_units(force: OrderOfBattle, report: SideReport) -> dict[str, ScoringUnit]:
    return {
        u.card_id: ScoringUnit(
            card=force.card(u.card_id),
            destroyed=u.destroyed,
            units_destroyed=u.units_destroyed,
            below_half_strength=u.below_half_strength,
        )
        for u in report.units
    }


def _check_report(force: OrderOfBattle, report: SideReport, book: Rulebook) -> None:
    for card_id in report.roster:
        force.card(card_id)
    for unit in report.units:
        if unit.card_id not in report.roster:
            raise RuleError(
                "unit_not_in_roster",
                f"Unit {unit.card_id} was not on this army's roster for the battle.",
                field="units",
            )
        _check_exfiltrated(unit, report)
        counts = (unit.destroyed_psychic, unit.destroyed_ranged, unit.destroyed_melee)
        if min(counts) < 0:
            raise RuleError(
                "tally_invalid",
                "Enemy units destroyed cannot be negative.",
                field="units",
            )
    marked = sum(u.marked_for_greatness for u in report.units)
    allowed = book.numbers.marked_for_greatness_per_battle + sum(
        b.effect.count
        for b in report.victor_bonuses
        if isinstance(b.effect, ExtraMarkedForGreatness)
    )
    if marked > allowed:
        raise RuleError(
            "marked_for_greatness_limit",
            f"Only {allowed} unit(s) can be Marked for Greatness after this battle, not {marked}.",
            field="units",
        )


def _check_exfiltrated(unit: UnitReport, report: SideReport) -> None:
    """Exfiltration happens only in a mission that has it, and takes the unit off the
    battlefield alive: it cannot also have been destroyed."""
    if not unit.exfiltrated:
        return
    if not report.exfiltration:
        raise RuleError(
            "exfiltration_not_in_mission",
            "Only a mission with the Exfiltration action (Behind Enemy Lines) exfiltrates units.",
            field="units",
        )
    if unit.destroyed:
        raise RuleError(
            "exfiltrated_unit_destroyed",
            f"Unit {unit.card_id} cannot be both exfiltrated and destroyed.",
            field="units",
        )


def _tallies_after(card: CrusadeCard, unit: UnitReport) -> CombatTallies:
    t = card.tallies
    return CombatTallies(
        battles_played=t.battles_played + 1,
        battles_survived=t.battles_survived + (0 if unit.destroyed else 1),
        destroyed_psychic=t.destroyed_psychic + unit.destroyed_psychic,
        destroyed_ranged=t.destroyed_ranged + unit.destroyed_ranged,
        destroyed_melee=t.destroyed_melee + unit.destroyed_melee,
    )


def _resolve_unit(
    force: OrderOfBattle,
    unit: UnitReport,
    scored: AgendaResult,
    report: SideReport,
    book: Rulebook,
    dice: Dice,
) -> Aftermath:
    card = force.card(unit.card_id)
    tallies = _tallies_after(card, unit)
    gain = experience_gain(
        card,
        tallies,
        marked=unit.marked_for_greatness,
        agenda_xp=scored.for_card(card.id),
        book=book,
    )
    card = evolve(
        card,
        tallies=tallies,
        marked_for_greatness=card.marked_for_greatness + int(unit.marked_for_greatness),
        agenda_tallies={},
    )
    force = force.with_card(card)
    if not unit.destroyed:
        return apply_experience(force, card.id, gain, book)
    test = out_of_action_test(card, book, dice)
    tested = Aftermath(force=force, tests=(test,))
    if test.passed:
        return tested.merge(apply_experience(force, card.id, gain, book))
    options = allowed_consequences(card, book)
    choice = report.out_of_action_choices.get(card.id)
    if choice is None and len(options) == 1:
        choice = options[0]
    if choice is None:
        return tested.merge(
            Aftermath(force=force, pending=(OutOfActionDecision(card.id, gain, options),))
        )
    return tested.merge(answer_out_of_action(force, card.id, gain, choice, book, dice))


def apply_experience(
    force: OrderOfBattle,
    card_id: str,
    gain: ExperienceGain,
    book: Rulebook,
    *,
    devastating: bool = False,
) -> Aftermath:
    """Add the unit's XP and owe one Battle Honour per rank gained (while it has room)."""
    card = force.card(card_id)
    amount = gain.total(devastating_blow=devastating)
    card, promotions = change_xp(card, amount, book)
    owed = honours_owed(card, promotions, book)
    return Aftermath(
        force=force.with_card(card),
        experience={card.id: amount},
        gains={card.id: gain},
        promotions=promotions,
        pending=owed,
    )


def honours_owed(
    card: CrusadeCard, promotions: Sequence[Promotion], book: Rulebook
) -> tuple[BattleHonourDecision, ...]:
    """One Battle Honour per rank the unit gained, while it has room for more."""
    room = book.numbers.max_battle_honours - len(card.honours)
    return tuple(
        BattleHonourDecision(card.id, f"rank:{p.rank}") for p in promotions[: max(room, 0)]
    )


def answer_out_of_action(
    force: OrderOfBattle,
    card_id: str,
    gain: ExperienceGain,
    choice: Consequence,
    book: Rulebook,
    dice: Dice,
) -> Aftermath:
    """Settle a failed Out of Action test, then give the unit its XP for the battle."""
    card = force.card(card_id)
    check_consequence(card, choice, book)
    if choice == Consequence.DEVASTATING_BLOW:
        card, blow = devastating_blow(card, book, dice)
        hit = Aftermath(force=force.with_card(card), blows=(blow,))
        return hit.merge(apply_experience(hit.force, card_id, gain, book, devastating=True))
    scarred = Aftermath(force=force, pending=(BattleScarDecision(card_id),))
    return scarred.merge(apply_experience(force, card_id, gain, book))


def answer_battle_scar(
    force: OrderOfBattle,
    card_id: str,
    book: Rulebook,
    dice: Dice,
    choice: str | None = None,
    table: str | None = None,
) -> OrderOfBattle:
    card, scar = gain_battle_scar(force.card(card_id), book, dice, choice, table)
    moved = book.scars.pack_scar(scar.entry_id)
    return _move_counters(force.with_card(card), card.id, moved.counters if moved else {}, book)


def answer_battle_honour(
    force: OrderOfBattle,
    decision: BattleHonourDecision,
    request: HonourRequest,
    book: Rulebook,
    dice: Dice,
    *,
    card_id: str | None = None,
) -> OrderOfBattle:
    """Grant the honour a decision owes. For a victor bonus the player names the unit."""
    target = decision.card_id or card_id
    if target is None:
        raise RuleError(
            "honour_unit_required", "Choose the unit that gains this honour.", field="card_id"
        )
    eligible = honour_targets(force, decision, book)
    if decision.card_id is None and target not in eligible:
        raise RuleError(
            "honour_unit_not_eligible",
            "That unit cannot take this victor bonus; pick one of: "
            f"{', '.join(eligible) or 'none (no unit can take it any more)'}.",
            field="card_id",
        )
    if request.category not in decision.categories:
        allowed = ", ".join(c.value for c in decision.categories)
        raise RuleError(
            "honour_category_not_allowed",
            f"This Battle Honour must be one of: {allowed}.",
            field="category",
        )
    card, honour = gain_battle_honour(
        force.card(target),
        request,
        book,
        dice,
        relics_in_order_of_battle=force.crusade_relics,
    )
    relic_cost = _relic_requisition_cost(request, book)
    if relic_cost > force.requisition_points:
        raise RuleError(
            "requisition_points_insufficient",
            f"A Legendary Relic costs {relic_cost} RP; {force.name} has "
            f"{force.requisition_points}.",
            field="choice",
        )
    force = force.with_card(card)
    entry = book.honours.pack_entry(request.category, honour.entry_ids[0])
    force = _move_counters(force, card.id, entry.counters if entry else {}, book)
    return replace(force, requisition_points=force.requisition_points - relic_cost)


def honour_targets(
    force: OrderOfBattle, decision: BattleHonourDecision, book: Rulebook
) -> tuple[str, ...]:
    """The units that can take the Battle Honour a decision owes, as the force stands now:
    its own unit (a new rank) or those the victor bonus allowed, each still in the Order of
    Battle and able to gain an honour in one of the decision's categories. What a decision
    offers and what its answer accepts are both this (a unit that filled its six honours
    since the battle drops out)."""
    candidates = (decision.card_id,) if decision.card_id else decision.eligible
    present = {c.id: c for c in force.cards}
    return tuple(
        i
        for i in candidates
        if i in present and open_categories(present[i], decision.categories, book, **_room(force))
    )


def _room(force: OrderOfBattle) -> dict[str, Any]:
    """What of the force a Crusade Relic's openness depends on: the relics it holds, its RP."""
    return {"relics_taken": force.crusade_relics, "requisition_points": force.requisition_points}


def honour_categories(
    force: OrderOfBattle, decision: BattleHonourDecision, book: Rulebook
) -> tuple[HonourCategory, ...]:
    """The decision's categories in which at least one of its units can take an honour."""
    present = {c.id: c for c in force.cards}
    open_ = {
        category
        for i in honour_targets(force, decision, book)
        for category in open_categories(present[i], decision.categories, book, **_room(force))
    }
    return tuple(c for c in decision.categories if c in open_)


def _relic_requisition_cost(request: HonourRequest, book: Rulebook) -> int:
    if request.category != HonourCategory.CRUSADE_RELIC:
        return 0
    relic = book.honours.relic(request.choice[0])
    return book.honours.relic_categories[relic.category].requisition_points


def _close_battle(force: OrderOfBattle, report: SideReport, book: Rulebook) -> Aftermath:
    """+1 battle tally and RP for the force; victor bonuses that need a choice wait."""
    extra_rp = report.extra_requisition_points + sum(
        b.effect.amount
        for b in report.victor_bonuses
        if isinstance(b.effect, ExtraRequisitionPoints)
    )
    force = record_battle_played(
        force, won=report.won, extra_requisition_points=extra_rp, book=book
    )
    for bonus in report.victor_bonuses:  # a pack mission's: a force counter moves at once
        if isinstance(bonus.effect, BonusCounter):
            force = _move_counter(force, bonus.effect, book)
    waiting: list[Decision] = []
    for bonus in report.victor_bonuses:
        if isinstance(bonus.effect, BonusBattleHonour):
            eligible = _eligible(force, report, bonus.effect, book)
            if eligible:
                waiting.append(
                    BattleHonourDecision(
                        None, "victor_bonus", bonus.effect.categories, eligible=eligible
                    )
                )
        elif not isinstance(
            bonus.effect, ExtraRequisitionPoints | ExtraMarkedForGreatness | BonusCounter
        ):
            waiting.append(VictorBonusDecision(bonus))
    return Aftermath(force=force, pending=tuple(waiting))


def _move_counter(force: OrderOfBattle, effect: BonusCounter, book: Rulebook) -> OrderOfBattle:
    """Within the counter's bounds: a bonus past its max stops there, as an Agenda's marks."""
    rule = next(c for c in book.counters if c.id == effect.counter)
    value = force.counters.get(rule.id, rule.start) + effect.amount
    return replace(force, counters={**force.counters, rule.id: max(rule.min, min(rule.max, value))})


def _eligible(
    force: OrderOfBattle, report: SideReport, bonus: BonusBattleHonour, book: Rulebook
) -> tuple[str, ...]:
    """Roster units that may take a victor-bonus honour: they must be able to gain Battle
    Honours and match the bonus's target."""
    cards = [force.card(i) for i in report.roster]
    cards = [c for c in cards if open_categories(c, bonus.categories, book, **_room(force))]
    target = bonus.target
    if target == BonusTarget.CHARACTER:
        cards = [c for c in cards if c.has("CHARACTER")]
    elif target == BonusTarget.NON_CHARACTER_VEHICLE_MONSTER:
        cards = [c for c in cards if not any(c.has(k) for k in ("CHARACTER", "VEHICLE", "MONSTER"))]
    elif target == BonusTarget.WARLORD:
        cards = [c for c in cards if c.id == report.warlord]
    elif target == BonusTarget.EXFILTRATED:
        cards = [c for c in cards if report.report_for(c.id).exfiltrated]
    return tuple(c.id for c in cards)
