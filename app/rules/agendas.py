"""Agendas: choosing them for a battle and turning their tallies into XP."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.rules import eligibility
from app.rules.cards import CrusadeCard, spellings
from app.rules.data import (
    Achieved,
    Agenda,
    AgendaAction,
    ArchiveRoll,
    BattleSize,
    HighestTally,
    HonourCategory,
    KillBound,
    PerMark,
    Rulebook,
    TallyBound,
    TallySource,
    Threshold,
    listing,
)
from app.rules.dice import Dice, DieRoll
from app.rules.errors import RuleError
from app.rules.out_of_action import held_scars

Tallies = Mapping[str, Mapping[str, int]]  # card id -> agenda id -> tally


def check_agenda_selection(
    size: BattleSize, agenda_ids: Sequence[str], book: Rulebook
) -> tuple[Agenda, ...]:
    """A battle of ``size`` has exactly ``size.agendas`` Agendas, one per category at most."""
    agendas = []
    for agenda_id in agenda_ids:
        try:
            agendas.append(book.agenda(agenda_id))
        except KeyError:
            raise RuleError(
                "agenda_unknown",
                f"'{agenda_id}' is not an Agenda; choose from: {listing(book.agendas)}.",
                field="agendas",
            ) from None
    withdrawn = [a for a in agendas if a.withdrawn_by]
    if withdrawn:
        raise RuleError(
            "agenda_withdrawn",
            f"{withdrawn[0].name} is not played in this campaign: the rule pack "
            f"'{withdrawn[0].withdrawn_by}' withdraws it.",
            field="agendas",
        )
    if len(agendas) != size.agendas:
        raise RuleError(
            "agenda_count",
            f"A {size.name} battle has {size.agendas} Agenda(s) per player, not {len(agendas)} "
            "(Select Agendas: the number is set by the battle size, none is not an option).",
            field="agendas",
        )
    categories = [a.category for a in agendas]
    repeated = sorted({c for c in categories if categories.count(c) > 1})
    if repeated:
        raise RuleError(
            "agenda_category_repeated",
            f"Only one Agenda per category may be chosen; {', '.join(repeated)} has more.",
            field="agendas",
        )
    return tuple(agendas)


@dataclass(frozen=True)
class AgendaResult:
    """XP each card earns from Agendas, and the dice thrown to decide them."""

    xp: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    dice: tuple[DieRoll, ...] = ()

    def for_card(self, card_id: str) -> Mapping[str, int]:
        return self.xp.get(card_id, {})


def agenda_experience(
    agendas: Sequence[Agenda],
    tallies: Tallies,
    units_destroyed: Mapping[str, int],
    dice: Dice,
    *,
    choices: Mapping[str, str] | None = None,
    objective_markers: int | None = None,
    battle_rounds: int | None = None,
    names: Mapping[str, str] | None = None,
    objective_markers_at_end: int | None = None,
) -> AgendaResult:
    """Score every chosen Agenda for one army. ``choices`` maps an agenda id to the card
    the player picks where the rules let them (ties, the archive recipient). The mission's
    ``objective_markers`` (set up), ``objective_markers_at_end`` (the most still on the
    battlefield when it ends; the set-up number when not given) and ``battle_rounds`` bound
    the tallies that need them (None: not known, so not checked)."""
    choices = choices or {}
    _check_tallies(agendas, tallies)
    at_end = objective_markers if objective_markers_at_end is None else objective_markers_at_end
    _check_army_bounds(
        agendas,
        tallies,
        {
            TallyBound.OBJECTIVE_MARKERS: objective_markers,
            TallyBound.OBJECTIVE_MARKERS_AT_END: at_end,
            TallyBound.BATTLE_ROUNDS: battle_rounds,
            TallyBound.BATTLE_ROUNDS_LESS_ONE: None if battle_rounds is None else battle_rounds - 1,
        },
    )
    xp: dict[str, dict[str, int]] = {}
    thrown: list[DieRoll] = []
    for agenda in agendas:
        marks = _marks(agenda, tallies, units_destroyed)
        scored = _score(agenda, marks, choices, dice, objective_markers, thrown, names or {})
        for card_id, gained in scored:
            if gained:
                xp.setdefault(card_id, {})[agenda.id] = gained
    return AgendaResult(xp, tuple(thrown))


def _check_tallies(agendas: Sequence[Agenda], tallies: Tallies) -> None:
    by_id = {a.id: a for a in agendas}
    for card_id, per_agenda in tallies.items():
        for agenda_id, tally in per_agenda.items():
            agenda = by_id.get(agenda_id)
            if agenda is None:
                raise RuleError(
                    "agenda_not_selected",
                    f"A tally was given for '{agenda_id}', which is not one of this army's "
                    "Agendas.",
                    field="agenda_tallies",
                    unit=card_id,
                )
            limit = 1 if isinstance(agenda.xp, Achieved) else agenda.max_tally
            if tally < 0 or (limit is not None and tally > limit):
                top = f"0 to {limit}" if limit is not None else "0 or more"
                raise RuleError(
                    "agenda_tally_invalid",
                    f"The {agenda.name} tally of unit {card_id} must be {top}, not {tally}.",
                    field="agenda_tallies",
                    unit=card_id,
                )
    for agenda in agendas:
        scorers = [c for c, t in tallies.items() if t.get(agenda.id, 0) > 0]
        if agenda.max_units is not None and len(scorers) > agenda.max_units:
            raise RuleError(
                "agenda_too_many_units",
                f"{agenda.name} can be scored by {agenda.max_units} unit(s) at most, "
                f"not {len(scorers)}.",
                field="agenda_tallies",
                unit=scorers[agenda.max_units],
            )


_BOUND_WORDS = {
    TallyBound.OBJECTIVE_MARKERS: "objective marker{s} the mission sets up",
    TallyBound.OBJECTIVE_MARKERS_AT_END: (
        "objective marker{s} the mission can leave on the battlefield at the end of the battle "
        "(only those still there count)"
    ),
    TallyBound.BATTLE_ROUNDS: "battle round{s} (one unit starts the action per turn)",
    TallyBound.BATTLE_ROUNDS_LESS_ONE: (
        "search{es} that can complete (one starts per turn and completes in the next battle "
        "round's Command phase, so one started in the last battle round never does)"
    ),
}


def _bound_words(bound: TallyBound, limit: int) -> str:
    plural = limit != 1
    return _BOUND_WORDS[bound].format(s="s" if plural else "", es="es" if plural else "")


def _check_army_bounds(
    agendas: Sequence[Agenda], tallies: Tallies, bounds: Mapping[TallyBound, int | None]
) -> None:
    """An army's combined tally cannot pass what the mission allows: one mark per
    objective marker (set up, or left at the end), or one per battle round where one unit
    may act per turn. The refusal names the unit whose tally goes over."""
    for agenda in agendas:
        combined = sum(t.get(agenda.id, 0) for t in tallies.values())
        for bound in agenda.army_bounds:
            limit = bounds.get(bound)
            if limit is not None and combined > limit:
                raise RuleError(
                    "agenda_tally_above_mission",
                    f"{agenda.name}: the army's combined tally is {combined}, more than the "
                    f"{limit} {_bound_words(bound, limit)}.",
                    field="agenda_tallies",
                    unit=_over_by(agenda.id, tallies, limit),
                )


def _over_by(agenda_id: str, tallies: Tallies, limit: int) -> str | None:
    """The first unit, in the report's order, whose tally takes the army's past ``limit``."""
    running = 0
    for card_id, per_agenda in tallies.items():
        running += per_agenda.get(agenda_id, 0)
        if running > limit:
            return card_id
    return None


def _marks(agenda: Agenda, tallies: Tallies, units_destroyed: Mapping[str, int]) -> dict[str, int]:
    if agenda.tally_source == TallySource.UNITS_DESTROYED:
        if isinstance(agenda.xp, HighestTally) and agenda.xp.zero_counts:
            return dict(units_destroyed)  # every unit of the army, 0 included
        return {c: n for c, n in units_destroyed.items() if n > 0}
    return {c: t[agenda.id] for c, t in tallies.items() if t.get(agenda.id, 0) > 0}


def _score(
    agenda: Agenda,
    marks: dict[str, int],
    choices: Mapping[str, str],
    dice: Dice,
    objective_markers: int | None,
    thrown: list[DieRoll],
    names: Mapping[str, str],
) -> list[tuple[str, int]]:
    rule = agenda.xp
    if isinstance(rule, PerMark):
        return [(c, n * rule.xp_per_mark) for c, n in marks.items()]
    if isinstance(rule, Threshold):
        return [(c, rule.xp) for c, n in marks.items() if n >= rule.min_tally]
    if isinstance(rule, Achieved):
        return [(c, rule.xp) for c in marks]
    if isinstance(rule, HighestTally):
        return _highest(agenda, rule, marks, choices, names)
    return _archive(agenda, rule, marks, choices, dice, objective_markers, thrown, names)


def _pick(
    agenda: Agenda,
    candidates: list[str],
    choices: Mapping[str, str],
    names: Mapping[str, str],
) -> str:
    if len(candidates) == 1:
        return candidates[0]
    chosen = choices.get(agenda.id)
    if chosen not in candidates:
        named = sorted(names.get(c, c) for c in candidates)
        raise RuleError(
            "agenda_choice_required",
            f"{agenda.name}: choose which of {', '.join(named)} gains the XP.",
            field="agenda_choices",
        )
    return chosen


def _highest(
    agenda: Agenda,
    rule: HighestTally,
    marks: dict[str, int],
    choices: Mapping[str, str],
    names: Mapping[str, str],
) -> list[tuple[str, int]]:
    if not marks:
        return []
    best = max(marks.values())
    tied = [c for c, n in marks.items() if n == best]
    return [(_pick(agenda, tied, choices, names), rule.xp)]


def _archive(
    agenda: Agenda,
    rule: ArchiveRoll,
    marks: dict[str, int],
    choices: Mapping[str, str],
    dice: Dice,
    objective_markers: int | None,
    thrown: list[DieRoll],
    names: Mapping[str, str],
) -> list[tuple[str, int]]:
    """Roll a D6: equal to or under the combined tally succeeds, and so does a combined tally
    equal to the number of objective markers (then no roll is needed)."""
    combined = sum(marks.values())
    if combined == 0:
        return []
    if objective_markers is None or objective_markers < 1:
        raise RuleError(
            "objective_markers_required",
            f"{agenda.name} needs the number of objective markers set up at the start.",
            field="objective_markers",
        )
    if combined < objective_markers:
        roll = dice.roll(6, agenda.name, f"agenda:{agenda.id}")
        thrown.append(roll)
        if roll.value > combined:
            return []
    return [(_pick(agenda, list(marks), choices, names), rule.xp)]


# --- which units can score an Agenda ------------------------------------------------------


@dataclass(frozen=True)
class ScoringUnit:
    """What the eligibility checks read about one unit after the battle."""

    card: CrusadeCard
    destroyed: bool = False
    units_destroyed: int = 0
    below_half_strength: bool | None = None


def cannot_score(agenda: Agenda, card: CrusadeCard, book: Rulebook) -> str | None:
    """Why ``card`` can never score ``agenda`` (its keywords, scars or relics), or None.
    This is what a form asks before it offers a tally."""
    rule = agenda.eligibility
    missing = [k for k in rule.keywords_all if not card.has(k)]
    if missing:
        return f"{agenda.name} is only for {' '.join(rule.keywords_all)} units"
    if rule.keywords_any and not any(card.has(k) for k in rule.keywords_any):
        return f"{agenda.name} is only for {_either(rule.keywords_any)} units"
    banned = [k for k in rule.keywords_none if card.has(k)]
    if banned:
        return f"{agenda.name} cannot be scored by {' or '.join(banned)} units"
    if rule.expression and not eligibility.meets(rule.expression, card, {}, book):
        return f"{agenda.name} is only for units that meet: {rule.expression}"
    if rule.performs is not None:
        blocker = _action_blocker(card, rule.performs, book)
        if blocker:
            return f"{agenda.name} is scored by a {_ACTION_NAMES[rule.performs]}, which {blocker}"
    return None


_ACTION_NAMES = {AgendaAction.ACTION: "action", AgendaAction.PSYCHIC_ACTION: "psychic action"}


def _either(keywords: Sequence[str]) -> str:
    return ", ".join(keywords[:-1]) + f" or {keywords[-1]}" if len(keywords) > 1 else keywords[0]


def _action_blocker(card: CrusadeCard, performs: AgendaAction, book: Rulebook) -> str | None:
    """The scar (held when the battle began) or relic that stops the unit's actions."""
    for entry in held_scars(card, book):
        if entry.forbids_actions:
            return f"the Battle Scar {entry.name} forbids"
    if performs == AgendaAction.PSYCHIC_ACTION:
        for relic_id in card.honour_ids(HonourCategory.CRUSADE_RELIC):
            relic = book.honours.relic(relic_id)
            if relic.forbids_psychic_actions:
                return f"the Crusade Relic {relic.name} forbids"
    return None


def check_scoring(
    agendas: Sequence[Agenda],
    tallies: Tallies,
    units: Mapping[str, ScoringUnit],
    book: Rulebook,
) -> None:
    """Refuse a tally that its unit cannot have scored: wrong keywords, a scar or relic
    that forbids the action, more marks than its kills allow, or a unit that did not
    survive an Agenda scored at the end of the battle."""
    by_id = {a.id: a for a in agendas}
    for card_id, per_agenda in tallies.items():
        unit = units.get(card_id)
        if unit is None:
            continue
        for agenda_id, tally in per_agenda.items():
            agenda = by_id.get(agenda_id)
            if agenda is None or tally <= 0:
                continue
            reason = cannot_score(agenda, unit.card, book) or _outcome_blocker(agenda, unit, tally)
            if reason:
                raise RuleError(
                    "agenda_unit_ineligible",
                    f"{unit.card.name}: {reason}.",
                    field="agenda_tallies",
                    unit=card_id,
                )


def _outcome_blocker(agenda: Agenda, unit: ScoringUnit, tally: int) -> str | None:
    rule = agenda.eligibility
    if rule.must_survive and unit.destroyed:
        return f"{agenda.name} needs a unit that is not destroyed at the end of the battle"
    if rule.marks_per_kill is not None and tally > rule.marks_per_kill * unit.units_destroyed:
        return (
            f"a tally of {tally} for {agenda.name} needs more enemy units destroyed than the "
            f"{unit.units_destroyed} recorded for it"
        )
    if rule.half_strength_mark and unit.below_half_strength and tally > 1:
        return f"{agenda.name}'s second mark needs a unit that is not below Half-strength"
    return None


# --- what the other side lost ------------------------------------------------------------


@dataclass(frozen=True)
class EnemyLoss:
    """One enemy unit the other side reported destroyed at the end of the battle."""

    name: str
    keywords: frozenset[str]
    warlord: bool = False

    def __post_init__(self) -> None:  # any case, as rosters and players type them
        object.__setattr__(
            self, "keywords", frozenset(" ".join(k.split()).upper() for k in self.keywords)
        )


def check_kill_bounds(
    agendas: Sequence[Agenda], tallies: Tallies, losses: Sequence[EnemyLoss]
) -> None:
    """Refuse kill-counting Agenda marks that the other side's report cannot account for:
    across the whole side, an Agenda's marks never exceed what the matching enemy units
    reported destroyed are worth (docs/rulings.md, 43)."""
    for agenda in agendas:
        bound = agenda.kill_bound
        if bound is None:
            continue
        marks = sum(per_agenda.get(agenda.id, 0) for per_agenda in tallies.values())
        allowed = kill_marks_allowed(agenda, losses) or 0
        if marks > allowed:
            raise RuleError(
                "agenda_tally_over_enemy_losses",
                f"{agenda.name}: this side's units have {marks} mark(s), but the other side "
                f"reported {_losses_in_words(bound, losses)} destroyed, worth {allowed}.",
                field="agenda_tallies",
                unit=_over_by(agenda.id, tallies, allowed),
            )


def kill_marks_allowed(agenda: Agenda, losses: Sequence[EnemyLoss]) -> int | None:
    """How many marks a side may have for ``agenda`` given the other side's losses (None:
    the Agenda does not count kills of a kind)."""
    bound = agenda.kill_bound
    return None if bound is None else sum(_marks_for(bound, loss) for loss in losses)


def _marks_for(bound: KillBound, loss: EnemyLoss) -> int:
    if bound.warlord:
        return bound.marks if loss.warlord else 0
    if bound.keywords_any and all(
        spellings(k).isdisjoint(loss.keywords) for k in bound.keywords_any
    ):
        return 0
    rich = bound.more_marks_keywords_all
    if rich and all(not spellings(k).isdisjoint(loss.keywords) for k in rich):
        return bound.more_marks
    return bound.marks


def _has(loss: EnemyLoss, keyword: str) -> bool:
    return not spellings(keyword).isdisjoint(loss.keywords)


def _losses_in_words(bound: KillBound, losses: Sequence[EnemyLoss]) -> str:
    matching = [loss.name for loss in losses if _marks_for(bound, loss)]
    if not matching:
        return f"no {bound.what}"
    return f"{len(matching)} of {bound.what} ({', '.join(matching)})"
