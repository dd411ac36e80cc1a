"""History events for what a card gained (rank, Battle Honour, Battle Scar), found by
comparing the Order of Battle before and after a command, so every path that changes a
card (a battle's result, a decision answered later) reports the same way."""

from __future__ import annotations

from collections.abc import Mapping

from sqlmodel import Session

from app.rules.cards import CrusadeCard
from app.rules.order_of_battle import OrderOfBattle
from app.services import history, rulebooks
from app.services.forces import ForceView


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
    # A rule pack's counters moved by a battle (its Agendas' marks) or a decision: said in the
    # history as any other gain, the force's first, then each unit's.
    starts = counter_starts(session, view.force.campaign_id)
    for counter, was, now in moved(view.value.counters, after.counters, starts):
        say("counter_changed", counter=counter, before=was, after=now)
    for card in after.cards:
        old = before.get(card.id)
        if old is None:
            continue
        unit = {"card_id": int(card.id), "name": card.name}
        for counter, was, now in moved(old.counters, card.counters, starts):
            say("counter_changed", **unit, counter=counter, before=was, after=now)
        for kind, details in _gained(old, card):
            say(kind, **unit, **details)


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


def moved(
    before: Mapping[str, int], after: Mapping[str, int], starts: Mapping[str, int]
) -> list[tuple[str, int, int]]:
    """Each counter whose value changed: (id, before, after); a counter not set on one side
    is at its start there (the rules write it along with its first change; a revert takes
    it away again)."""
    return [
        (counter, before.get(counter, starts.get(counter, 0)), now)
        for counter in sorted(set(before) | set(after))
        if (now := after.get(counter, starts.get(counter, 0)))
        != before.get(counter, starts.get(counter, 0))
    ]
