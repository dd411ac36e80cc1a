"""Agendas: choosing them for a battle and turning their tallies into XP."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.rules.data import (
    Achieved,
    Agenda,
    ArchiveRoll,
    BattleSize,
    HighestTally,
    PerMark,
    Rulebook,
    TallySource,
    Threshold,
    listing,
)
from app.rules.dice import Dice, DieRoll
from app.rules.errors import RuleError

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
) -> AgendaResult:
    """Score every chosen Agenda for one army. ``choices`` maps an agenda id to the card
    the player picks where the rules let them (ties, the archive recipient)."""
    choices = choices or {}
    _check_tallies(agendas, tallies)
    xp: dict[str, dict[str, int]] = {}
    thrown: list[DieRoll] = []
    for agenda in agendas:
        marks = _marks(agenda, tallies, units_destroyed)
        for card_id, gained in _score(agenda, marks, choices, dice, objective_markers, thrown):
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
                )
            limit = 1 if isinstance(agenda.xp, Achieved) else agenda.max_tally
            if tally < 0 or (limit is not None and tally > limit):
                top = f"0 to {limit}" if limit is not None else "0 or more"
                raise RuleError(
                    "agenda_tally_invalid",
                    f"The {agenda.name} tally of unit {card_id} must be {top}, not {tally}.",
                    field="agenda_tallies",
                )
    for agenda in agendas:
        scorers = [c for c, t in tallies.items() if t.get(agenda.id, 0) > 0]
        if agenda.max_units is not None and len(scorers) > agenda.max_units:
            raise RuleError(
                "agenda_too_many_units",
                f"{agenda.name} can be scored by {agenda.max_units} unit(s) at most, "
                f"not {len(scorers)}.",
                field="agenda_tallies",
            )


def _marks(agenda: Agenda, tallies: Tallies, units_destroyed: Mapping[str, int]) -> dict[str, int]:
    if agenda.tally_source == TallySource.UNITS_DESTROYED:
        return {c: n for c, n in units_destroyed.items() if n > 0}
    return {c: t[agenda.id] for c, t in tallies.items() if t.get(agenda.id, 0) > 0}


def _score(
    agenda: Agenda,
    marks: dict[str, int],
    choices: Mapping[str, str],
    dice: Dice,
    objective_markers: int | None,
    thrown: list[DieRoll],
) -> list[tuple[str, int]]:
    rule = agenda.xp
    if isinstance(rule, PerMark):
        return [(c, n * rule.xp_per_mark) for c, n in marks.items()]
    if isinstance(rule, Threshold):
        return [(c, rule.xp) for c, n in marks.items() if n >= rule.min_tally]
    if isinstance(rule, Achieved):
        return [(c, rule.xp) for c in marks]
    if isinstance(rule, HighestTally):
        return _highest(agenda, rule, marks, choices)
    return _archive(agenda, rule, marks, choices, dice, objective_markers, thrown)


def _pick(agenda: Agenda, candidates: list[str], choices: Mapping[str, str]) -> str:
    if len(candidates) == 1:
        return candidates[0]
    chosen = choices.get(agenda.id)
    if chosen not in candidates:
        raise RuleError(
            "agenda_choice_required",
            f"{agenda.name}: choose which of {', '.join(sorted(candidates))} gains the XP.",
            field="agenda_choices",
        )
    return chosen


def _highest(
    agenda: Agenda, rule: HighestTally, marks: dict[str, int], choices: Mapping[str, str]
) -> list[tuple[str, int]]:
    if not marks:
        return []
    best = max(marks.values())
    return [(_pick(agenda, [c for c, n in marks.items() if n == best], choices), rule.xp)]


def _archive(
    agenda: Agenda,
    rule: ArchiveRoll,
    marks: dict[str, int],
    choices: Mapping[str, str],
    dice: Dice,
    objective_markers: int | None,
    thrown: list[DieRoll],
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
    return [(_pick(agenda, list(marks), choices), rule.xp)]
