"""A rule pack's quests (issue 38): a saga, a trial, an invasion's stages. Each has steps
tallied every battle outside the Agenda limit, one after the other; the last step done pays
the reward (effects at once, or a decision), and where the codex has one, a penalty ends
the quest when ``fails_when`` happens to its holder first.

A quest's state is kept with its holder's counters (the force's for a force quest, the
card's for a card quest) under keys no pack counter can have (``quest:<id>`` and
``quest:<id>:tally``), so a battle's snapshot and its revert carry it exactly. Bounded: a
battle moves each quest of each holder by at most one step."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from app.rules import eligibility, triggers
from app.rules.data import Counter, Quest, Rulebook
from app.rules.dice import Dice
from app.rules.errors import RuleError
from app.rules.order_of_battle import OrderOfBattle
from app.rules.ranks import Promotion

PREFIX = "quest:"
NOT_STARTED, FAILED = 0, -1

Holder = str | None


def status_key(quest_id: str) -> str:
    return f"{PREFIX}{quest_id}"


def tally_key(quest_id: str) -> str:
    return f"{PREFIX}{quest_id}:tally"


def is_quest_key(key: str) -> bool:
    return key.startswith(PREFIX)


def plain(counters: Mapping[str, int]) -> dict[str, int]:
    """A holder's counters without its quests' state (what a counter list shows)."""
    return {k: v for k, v in counters.items() if not is_quest_key(k)}


def status(counters: Mapping[str, int], quest: Quest) -> int:
    """0: not started; 1..n: on that step; n + 1: done; -1: failed."""
    return counters.get(status_key(quest.id), NOT_STARTED)


def done(quest: Quest) -> int:
    return len(quest.steps) + 1


def _counters(force: OrderOfBattle, holder: Holder) -> Mapping[str, int]:
    return force.counters if holder is None else force.card(holder).counters


def _write(force: OrderOfBattle, holder: Holder, changes: Mapping[str, int]) -> OrderOfBattle:
    if holder is None:
        return replace(force, counters={**force.counters, **changes})
    card = force.card(holder)
    return force.with_card(replace(card, counters={**card.counters, **changes}))


def under_way(counters: Mapping[str, int], book: Rulebook) -> list[Quest]:
    return [q for q in book.quests if 1 <= status(counters, q) <= len(q.steps)]


def start(force: OrderOfBattle, holder: Holder, quest: Quest, book: Rulebook) -> OrderOfBattle:
    """The holder (None: the force) sets out on ``quest``: refused for the wrong holder, a
    unit that may not take it, a quest already begun, or a second exclusive quest."""
    if (quest.scope == "force") != (holder is None):
        raise RuleError(
            "quest_wrong_holder",
            f"{quest.name} is a quest for {'the force' if quest.scope == 'force' else 'a unit'}.",
            field="card_id",
        )
    counters = _counters(force, holder)
    if status(counters, quest) != NOT_STARTED:
        raise RuleError(
            "quest_already_begun",
            f"{quest.name} was already begun (a quest is undertaken once).",
            field="requisition",
        )
    if holder is not None:
        card = force.card(holder)
        eligibility.require(quest.name, quest.eligible, card, book, "quest_not_eligible")
    other = _exclusive_conflict(counters, quest, book)
    if other is not None:
        raise RuleError(
            "quest_exclusive",
            f"{other.name} is under way: {quest.name} waits until it is done or failed.",
            field="requisition",
        )
    return _write(force, holder, {status_key(quest.id): 1, tally_key(quest.id): 0})


def _exclusive_conflict(counters: Mapping[str, int], quest: Quest, book: Rulebook) -> Quest | None:
    if not quest.exclusive:
        return None
    return next((q for q in under_way(counters, book) if q.exclusive and q.id != quest.id), None)


def advance(
    force: OrderOfBattle,
    book: Rulebook,
    roster: Sequence[str],
    facts: triggers.Facts,
    dice: Dice | None = None,
) -> tuple[OrderOfBattle, list[Promotion], list[triggers.Owed]]:
    """Each quest under way for the force, or for a unit of the roster, tallies what the
    battle did: a failure first (its penalty), else its step (one step at most per battle),
    and the reward once the last step is done. An automatic quest begins here."""
    if not book.quests:
        return force, [], []
    counters = {c.id: c for c in book.counters}
    promotions: list[Promotion] = []
    owed: list[triggers.Owed] = []
    for quest in book.quests:
        holders: list[Holder] = [None] if quest.scope == "force" else list(roster)
        for holder in holders:
            force = _begin_automatic(force, holder, quest, book)
            force = _tally(
                force, holder, quest, roster, facts, counters, book, promotions, owed, dice
            )
    return force, promotions, owed


def _begin_automatic(
    force: OrderOfBattle, holder: Holder, quest: Quest, book: Rulebook
) -> OrderOfBattle:
    held = _counters(force, holder)
    if not quest.automatic or status(held, quest) != NOT_STARTED:
        return force
    card = force.card(holder) if holder is not None else None
    may = card is None or not quest.eligible
    if not may and not eligibility.meets(quest.eligible or "", card, force.counters, book):
        return force
    if _exclusive_conflict(held, quest, book) is not None:
        return force
    return _write(force, holder, {status_key(quest.id): 1, tally_key(quest.id): 0})


def _tally(
    force: OrderOfBattle,
    holder: Holder,
    quest: Quest,
    roster: Sequence[str],
    facts: triggers.Facts,
    counters: dict[str, Counter],
    book: Rulebook,
    promotions: list[Promotion],
    owed: list[triggers.Owed],
    dice: Dice | None = None,
) -> OrderOfBattle:
    step_number = status(_counters(force, holder), quest)
    if not 1 <= step_number <= len(quest.steps):
        return force
    if quest.fails_when and triggers.happened(quest.fails_when, (), holder, force, roster, facts):
        force = _write(force, holder, {status_key(quest.id): FAILED, tally_key(quest.id): 0})
        return triggers.apply_effects(
            force, holder, quest.penalty, quest, counters, book, promotions, owed, dice
        )
    step = quest.steps[step_number - 1]
    count = triggers.happened(step.when, step.keywords_any, holder, force, roster, facts)
    tally = _counters(force, holder).get(tally_key(quest.id), 0) + count
    if tally < step.count:
        return _write(force, holder, {tally_key(quest.id): tally}) if count else force
    force = _write(force, holder, {status_key(quest.id): step_number + 1, tally_key(quest.id): 0})
    if step_number + 1 == done(quest):
        force = triggers.apply_effects(
            force, holder, quest.reward, quest, counters, book, promotions, owed, dice
        )
    return force
