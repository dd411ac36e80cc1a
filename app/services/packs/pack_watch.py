"""What a campaign's rule packs will count in a battle, in words for the battle wizard
(issue 38): each counter a trigger moves (where it stands, what moves it), each quest under
way (its step, its tally, what counts) and the thresholds ahead, for the force and for each
unit of its roster. It only reads the rules' data and the force's value; the battle's
update itself is ``app.rules.triggers`` and ``app.rules.quests``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.rules import eligibility, quests
from app.rules.cards import CrusadeCard
from app.rules.data import Quest, Rulebook, Trigger, TriggerWhen
from app.rules.order_of_battle import OrderOfBattle
from app.rules.triggers import MAX_FIRES
from app.services.packs import pack_words

# What a trigger or a quest's step counts, for the side (a force's) and for one unit.
SIDE_WORDS: dict[str, str] = {
    "battle_played": "battle",
    "victory": "victory",
    "enemy_unit_destroyed": "enemy unit destroyed",
    "own_unit_destroyed": "unit of its own destroyed",
    "out_of_action_failed": "Out of Action test failed",
    "marked_for_greatness": "unit Marked for Greatness",
    "below_half_strength": "unit ending destroyed or below Half-strength",
    "ranged_kill": "enemy unit destroyed by a ranged attack",
    "melee_kill": "enemy unit destroyed in melee",
    "psychic_kill": "enemy unit destroyed by a psychic power",
    "agenda_completed": "unit that completes an Agenda",
    "quarry_destroyed": "unit that destroys its named quarry",
}
UNIT_WORDS: dict[str, str] = {
    "battle_played": "battle it fights",
    "victory": "victory",
    "enemy_unit_destroyed": "enemy unit it destroys",
    "own_unit_destroyed": "time it is destroyed",
    "out_of_action_failed": "Out of Action test it fails",
    "marked_for_greatness": "time it is Marked for Greatness",
    "below_half_strength": "battle it ends destroyed or below Half-strength",
    "ranged_kill": "enemy unit it destroys with a ranged attack",
    "melee_kill": "enemy unit it destroys in melee",
    "psychic_kill": "enemy unit it destroys with a psychic power",
    "agenda_completed": "battle it completes an Agenda",
    "quarry_destroyed": "battle it destroys its named quarry",
}

# When a quest fails (``fails_when``), for the force and for one unit.
SIDE_FAILS: dict[str, str] = {
    "battle_played": "it fights a battle",
    "victory": "it wins a battle",
    "enemy_unit_destroyed": "it destroys an enemy unit",
    "own_unit_destroyed": "one of its units is destroyed",
    "out_of_action_failed": "one of its units fails an Out of Action test",
    "marked_for_greatness": "one of its units is Marked for Greatness",
    "below_half_strength": "one of its units ends destroyed or below Half-strength",
    "ranged_kill": "it destroys an enemy unit with a ranged attack",
    "melee_kill": "it destroys an enemy unit in melee",
    "psychic_kill": "it destroys an enemy unit with a psychic power",
    "agenda_completed": "one of its units completes an Agenda",
    "quarry_destroyed": "one of its units destroys its named quarry",
}
UNIT_FAILS: dict[str, str] = {
    "battle_played": "it fights a battle",
    "victory": "its army wins a battle",
    "enemy_unit_destroyed": "it destroys an enemy unit",
    "own_unit_destroyed": "it is destroyed",
    "out_of_action_failed": "it fails an Out of Action test",
    "marked_for_greatness": "it is Marked for Greatness",
    "below_half_strength": "it ends a battle destroyed or below Half-strength",
    "ranged_kill": "it destroys an enemy unit with a ranged attack",
    "melee_kill": "it destroys an enemy unit in melee",
    "psychic_kill": "it destroys an enemy unit with a psychic power",
    "agenda_completed": "it completes an Agenda",
    "quarry_destroyed": "it destroys its named quarry",
}


@dataclass(frozen=True)
class Watch:
    """One army's lines: the force's, then each roster unit's (by card id) that has any."""

    force: list[str] = field(default_factory=list)
    units: dict[int, list[str]] = field(default_factory=dict)
    headline: list[str] = field(default_factory=list)  # "Salvage 4", "The Long Haul 2/3"

    def __bool__(self) -> bool:
        return bool(self.force or self.units)


def reads(book: Rulebook, when: TriggerWhen) -> bool:
    """Whether a trigger or a quest of the book counts ``when`` (issue 47: the wizard asks
    for a fact only a pack reads, such as a unit ending below Half-strength, only then)."""
    return any(t.when == when for t in book.triggers) or any(
        q.fails_when == when or any(s.when == when for s in q.steps) for q in book.quests
    )


def reads_named_kills(book: Rulebook) -> bool:
    """Whether a unit's counter trigger or a unit's quest step counts its kills by the
    enemy's keyword (issue 47, ruling 86): then the wizard asks which enemy units each unit
    destroyed. A quarry (``quarry_destroyed``) is read from them too."""
    if reads(book, "quarry_destroyed"):
        return True
    return any(
        t.scope == "card" and t.when == "enemy_unit_destroyed" and t.keywords_any
        for t in book.triggers
    ) or any(
        q.scope == "card" and s.when == "enemy_unit_destroyed" and s.keywords_any
        for q in book.quests
        for s in q.steps
    )


def army(book: Rulebook, value: OrderOfBattle, roster: Sequence[int]) -> Watch:
    """The lines for one army of a battle: ``value`` is its force, ``roster`` its units."""
    if not (book.triggers or book.quests):
        return Watch()
    found = _counter_lines(book, value.counters, None)
    found += _quest_lines(book, value.counters, "force", None, value)
    found += _reward_lines(book, None)
    watch = Watch(force=[line for _short, line in found], headline=[s for s, _ in found if s])
    held = {c.id: c for c in value.cards}
    for card_id in roster:
        card = held.get(str(card_id))
        if card is None:
            continue
        lines = _counter_lines(book, card.counters, card)
        lines += _quest_lines(book, card.counters, "card", card, value)
        lines += _reward_lines(book, card)
        if lines:
            watch.units[int(card_id)] = [line for _short, line in lines]
    return watch


def _counter_lines(
    book: Rulebook, held: Mapping[str, int], card: CrusadeCard | None
) -> list[tuple[str, str]]:
    """("Salvage 4", "Salvage 4: +2 per battle (Strip the Field), ..., at 6: The Great
    Haul")."""
    scope = "force" if card is None else "card"
    lines = []
    for counter in (c for c in book.counters if c.scope == scope):
        moves = [
            _move(t, card, book)
            for t in book.triggers
            if t.counter == counter.id and (card is None or _fits(t.keywords_any, card, t.when))
        ]
        if not moves:
            continue
        now = held.get(counter.id, counter.start)
        ahead = [
            f"at {t.at}: {t.name}"
            for t in book.thresholds
            if t.counter == counter.id and now < t.at
        ]
        short = f"{counter.name} {now}"
        lines.append((short, f"{short}: " + ", ".join(moves + ahead)))
    return lines


def card_counters(book: Rulebook, card: CrusadeCard) -> list[str]:
    """A unit's own counters for its card and its row in the Order of Battle (issue 47):
    each card counter it holds or a trigger moves for it, its value (a named choice by
    name), what moves it and the next threshold ahead ("Sanctity 10 (0 to 20): +1 per
    battle it fights (Devotion); next: Exalted at 12, 2 to go")."""
    lines = []
    for counter in (c for c in book.counters if c.scope == "card"):
        moves = [
            _move(t, card, book)
            for t in book.triggers
            if t.counter == counter.id and _fits(t.keywords_any, card, t.when)
        ]
        moves += [
            f"{amount:+d} per mark of {a.name}"
            for a in book.agendas
            for counter_id, amount in a.counters_per_mark.items()
            if counter_id == counter.id
        ]
        if counter.id not in card.counters and not moves:
            continue
        now = card.counters.get(counter.id, counter.start)
        if counter.choices:
            chosen = counter.choice(now)
            lines.append(f"{counter.name}: {_choice_words(chosen) if chosen else 'none yet'}")
            continue
        ahead = sorted(
            (t for t in book.thresholds if t.counter == counter.id and now < t.at),
            key=lambda t: t.at,
        )
        line = f"{counter.name} {now} ({counter.min} to {counter.max})"
        if moves:
            line += ": " + ", ".join(moves)
        if ahead:
            line += f"; next: {ahead[0].name} at {ahead[0].at}, {ahead[0].at - now} to go"
        lines.append(line)
    return lines


def _move(trigger: Trigger, card: CrusadeCard | None, book: Rulebook) -> str:
    """A counter's move in words ("+1 per enemy unit it destroys (Deeds)"), with what the
    trigger also does each time it counts (its ``effects``, issue 47)."""
    also = (
        f"; each time: {pack_words.effects_words(trigger.effects, book)}" if trigger.effects else ""
    )
    what = _what(trigger.when, trigger.keywords_any, card)
    return f"{trigger.amount:+d} per {what} ({trigger.name}{also})"


def _reward_lines(book: Rulebook, card: CrusadeCard | None) -> list[tuple[str, str]]:
    """The triggers that move no counter, only apply their effects (issue 47), for the
    force or for one unit: ("", "Tithe: per enemy unit destroyed, +1 RP (up to the cap) (at
    most 20 times a battle)"); no headline, since they hold no value."""
    scope = "force" if card is None else "card"
    return [
        (
            "",
            f"{t.name}: per {_what(t.when, t.keywords_any, card)}, "
            f"{pack_words.effects_words(t.effects, book)} (at most {MAX_FIRES} times a battle)",
        )
        for t in book.triggers
        if t.counter is None
        and t.effects
        and t.scope == scope
        and (card is None or _fits(t.keywords_any, card, t.when))
    ]


def _choice_words(choice: str) -> str:
    text = choice.replace("_", " ")
    return text[:1].upper() + text[1:]


def _quest_lines(
    book: Rulebook,
    held: Mapping[str, int],
    scope: str,
    card: CrusadeCard | None,
    force: OrderOfBattle,
) -> list[tuple[str, str]]:
    """("The Long Haul 2/3", "The Long Haul, step 2 of 3 (Strip the Hulks): 0 of 2, per
    enemy unit destroyed")."""
    lines = []
    for quest in (q for q in book.quests if q.scope == scope):
        state = quests.status(held, quest)
        begins = state == quests.NOT_STARTED and _begins(quest, card, force, book, held)
        if not (1 <= state <= len(quest.steps) or begins):
            continue
        number = max(state, 1)
        step = quest.steps[number - 1]
        tally = held.get(quests.tally_key(quest.id), 0) if not begins else 0
        line = (
            f"{quest.name}{' begins with this battle' if begins else ''}, step {number} of "
            f"{len(quest.steps)} ({step.name}): {tally} of {step.count}, per "
            f"{_what(step.when, step.keywords_any, card)}"
        )
        if card is not None and not _fits(step.keywords_any, card, step.when):
            line += f" (only a {' or '.join(step.keywords_any)} unit counts it)"
        if quest.fails_when:
            line += (
                f"; it fails if {(SIDE_FAILS if card is None else UNIT_FAILS)[quest.fails_when]}"
            )
        lines.append((f"{quest.name} {number}/{len(quest.steps)}", line))
    return lines


def _begins(
    quest: Quest,
    card: CrusadeCard | None,
    force: OrderOfBattle,
    book: Rulebook,
    held: Mapping[str, int],
) -> bool:
    """An automatic quest not begun yet begins with the holder's next battle (a unit: if it
    may take it and is on no other exclusive quest), as ``quests.advance`` does."""
    if not quest.automatic:
        return False
    may = card is None or not quest.eligible
    if not may and not eligibility.meets(quest.eligible or "", card, force.counters, book):
        return False
    return not (quest.exclusive and any(q.exclusive for q in quests.under_way(held, book)))


def _what(when: TriggerWhen, keywords_any: Sequence[str], card: CrusadeCard | None) -> str:
    words = (SIDE_WORDS if card is None else UNIT_WORDS)[when]
    if keywords_any and (card is None or when == "enemy_unit_destroyed"):
        # a unit's own keywords pick the unit (said by _fits); but a unit's kills may be
        # named, and then the enemy's keywords count (issue 47, ruling 86)
        named = ", when its kills are named" if card is not None else ""
        words += f" ({' or '.join(keywords_any)}{named})"
    return words


def _fits(keywords_any: Sequence[str], card: CrusadeCard, when: str = "") -> bool:
    """Whether a trigger or step with ``keywords_any`` may count for the unit: it has one
    of them, or its kills are counted by the enemy's keywords when named (ruling 86)."""
    return (
        not keywords_any or when == "enemy_unit_destroyed" or any(card.has(k) for k in keywords_any)
    )
