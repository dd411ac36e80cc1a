"""History events for what a card gained (rank, Battle Honour, Battle Scar), found by
comparing the Order of Battle before and after a command, so every path that changes a
card (a battle's result, a decision answered later) reports the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlmodel import Session

from app.rules import quests
from app.rules.cards import CrusadeCard
from app.rules.data import Rulebook
from app.rules.order_of_battle import OrderOfBattle
from app.services.feed import history
from app.services.forces.forces import ForceView
from app.services.packs import rulebooks


def record_gains(
    session: Session, view: ForceView, *, after: OrderOfBattle, battle_id: int | None
) -> None:
    """``view`` is the force as loaded before the change; ``after`` the rules' new value."""

    def say(kind: str, **details: object) -> None:
        history.record(
            session,
            campaign_id=view.force.campaign_id,
            force_id=view.force.id,
            battle_id=battle_id,
            kind=kind,
            **details,
        )

    before = {c.id: c for c in view.value.cards}
    for gone in sorted(after.removed_card_ids - view.value.removed_card_ids):  # remove_unit
        say("card_removed", card_id=int(gone), name=before[gone].name if gone in before else "")
    # A rule pack's counters moved by a battle (its Agendas' marks) or a decision: said in the
    # history as any other gain, the force's first, then each unit's.
    book = rulebooks.book_of(session, view.force)
    starts = {c.id: c.start for c in book.counters}
    for counter, was, now in moved(view.value.counters, after.counters, starts):
        say(
            "counter_changed",
            counter=counter,
            before=was,
            after=now,
            **choice_names(book, counter, was, now),
        )
    for kind, details in quest_moves(view.value.counters, after.counters, book):
        say(kind, **details)
    for card in after.cards:
        old = before.get(card.id)
        if old is None:
            continue
        unit = {"card_id": int(card.id), "name": card.name}
        if (became := transformed(old, card)) is not None:
            say("card_transformed", **unit, **became)
        for counter, was, now in moved(old.counters, card.counters, starts):
            say(
                "counter_changed",
                **unit,
                counter=counter,
                before=was,
                after=now,
                **choice_names(book, counter, was, now),
            )
        for kind, details in quest_moves(old.counters, card.counters, book):
            say(kind, **unit, **details)
        for kind, details in _gained(old, card):
            say(kind, **unit, **details)


def record_purchase_moves(
    session: Session,
    *,
    campaign_id: int,
    force_id: int,
    before: OrderOfBattle,
    after: OrderOfBattle,
    book: Rulebook,
) -> None:
    """What a rule pack's requisition did to counters and datasheets (issue 38), said as a
    battle says it: a ``counter_changed`` for each counter it moved (the force's, then each
    unit's) and a ``card_transformed`` for a unit that became another datasheet, so the
    feed's last word on a counter is always the force's."""
    starts = {c.id: c.start for c in book.counters}

    def say(kind: str, **details: Any) -> None:
        history.record(session, campaign_id=campaign_id, force_id=force_id, kind=kind, **details)

    for counter, was, now in moved(before.counters, after.counters, starts):
        say(
            "counter_changed",
            counter=counter,
            before=was,
            after=now,
            **choice_names(book, counter, was, now),
        )
    old_cards = {c.id: c for c in before.cards}
    for card in after.cards:
        old = old_cards.get(card.id)
        if old is None:
            continue
        unit = {"card_id": int(card.id), "name": card.name}
        if (became := transformed(old, card)) is not None:
            say("card_transformed", **unit, **became)
        for counter, was, now in moved(old.counters, card.counters, starts):
            say(
                "counter_changed",
                **unit,
                counter=counter,
                before=was,
                after=now,
                **choice_names(book, counter, was, now),
            )


def transformed(old: CrusadeCard, new: CrusadeCard) -> dict[str, object] | None:
    """A unit that became another datasheet (a pack's ``transform``): what it was and is."""
    if (old.name, old.datasheet) == (new.name, new.datasheet):
        return None
    return {
        "was": old.name,
        "datasheet": new.datasheet,
        "power_rating": new.power_rating,
        "keywords": sorted(new.keywords),
    }


def _gained(old: CrusadeCard, new: CrusadeCard) -> list[tuple[str, dict[str, object]]]:
    found: list[tuple[str, dict[str, object]]] = []
    if new.rank != old.rank:
        found.append(("rank_gained", {"rank": new.rank}))
    for honour in new.honours[len(old.honours) :]:
        found.append(
            (
                "honour_gained",
                {"category": honour.category.value, "entries": list(honour.entry_ids)},
            )
        )
    held = {s.entry_id for s in old.scars}
    for scar in new.scars:
        if scar.entry_id not in held:
            found.append(("scar_gained", {"scar": scar.entry_id}))
    return found


def counter_starts(session: Session, campaign_id: int) -> dict[str, int]:
    """Each counter of the campaign's packs at its start (a counter never set is there)."""
    return {c.id: c.start for c in rulebooks.campaign_book(session, campaign_id).counters}


def choice_names(book: Rulebook, counter: str, was: int, now: int) -> dict[str, Any]:
    """A named choice's move by name (issue 47): ``before_choice`` and ``after_choice`` (None:
    none yet) beside the numbers, for the feed and the bots; nothing for a plain counter."""
    rule = next((c for c in book.counters if c.id == counter), None)
    if rule is None or not rule.choices:
        return {}
    return {"before_choice": rule.choice(was), "after_choice": rule.choice(now)}


def moved(
    before: Mapping[str, int], after: Mapping[str, int], starts: Mapping[str, int]
) -> list[tuple[str, int, int]]:
    """Each counter whose value changed: (id, before, after); a counter not set on one side
    is at its start there (the rules write it along with its first change; a revert takes
    it away again)."""
    return [
        (counter, before.get(counter, starts.get(counter, 0)), now)
        for counter in sorted(set(before) | set(after))
        if not quests.is_quest_key(counter)  # a quest's state is told by quest_moves
        and (now := after.get(counter, starts.get(counter, 0)))
        != before.get(counter, starts.get(counter, 0))
    ]


def quest_moves(
    before: Mapping[str, int], after: Mapping[str, int], book: Rulebook
) -> list[tuple[str, dict[str, Any]]]:
    """What a command did to its holder's quests (issue 38), as history events:
    ``quest_started``, ``quest_progressed`` (a step's tally), ``quest_step_done``,
    ``quest_completed``, ``quest_failed``, or ``quest_put_back`` (a revert)."""
    found: list[tuple[str, dict[str, Any]]] = []
    for quest in book.quests:
        was, now = quests.status(before, quest), quests.status(after, quest)
        tally_was = before.get(quests.tally_key(quest.id), 0)
        tally = after.get(quests.tally_key(quest.id), 0)
        if (was, tally_was) == (now, tally):
            continue
        n = len(quest.steps)
        step = quest.steps[now - 1] if 1 <= now <= n else None
        about: dict[str, Any] = {
            "quest": quest.id,
            "quest_name": quest.name,
            "pack": quest.pack,
            "step": now,
            "steps": n,
            "tally": tally,
        }
        if step is not None:
            about |= {"step_name": step.name, "count": step.count}
        if was == quests.NOT_STARTED and (now, tally) != (1, 0):
            # begun and moved on in the same command (an automatic quest's first battle):
            # said as two events, so a step done (or the quest done) is never left untold
            first = quest.steps[0]
            begun = {"step": 1, "tally": 0, "step_name": first.name, "count": first.count}
            found.append(("quest_started", about | begun))
            was, tally_was = 1, 0
        if now == quests.FAILED:
            kind = "quest_failed"
        elif was == quests.FAILED or now < was or (now == was and tally < tally_was):
            kind = "quest_put_back"
        elif was == quests.NOT_STARTED:
            kind = "quest_started"
        elif now == n + 1:
            kind = "quest_completed"
        elif now > was:
            kind = "quest_step_done"
        else:
            kind = "quest_progressed"
        found.append((kind, about))
    return found
