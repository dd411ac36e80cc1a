"""A rule pack's thresholds outside a battle (issue 38): a purchase or a decision's answer
that moves a counter up to a threshold's ``at`` fires it as a battle's update does, and
every threshold reached is said in the history (``threshold_reached``)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from sqlmodel import Session

from app.rules import triggers
from app.rules.aftermath import Decision, threshold_decisions
from app.rules.data import CounterThreshold, Rulebook
from app.rules.dice import SeededDice
from app.rules.order_of_battle import OrderOfBattle
from app.rules.ranks import Promotion
from app.services.feed import history


def after_command(
    session: Session,
    *,
    campaign_id: int,
    force_id: int,
    before: OrderOfBattle,
    after: OrderOfBattle,
    book: Rulebook,
    battle_id: int | None = None,
) -> tuple[OrderOfBattle, list[Promotion], tuple[Decision, ...]]:
    """The force once each threshold its counters rose to (from ``before``) has applied,
    the promotions their XP gave and the decisions they owe (a roll on a pack's table
    there uses the app's dice)."""
    if not book.thresholds:
        return after, [], ()
    holders = triggers.changed_holders(before, after)
    dice = SeededDice(secrets.randbelow(2**31))
    force, promotions, fired, owed = triggers.reached_thresholds(before, after, book, holders, dice)
    record_reached(
        session,
        campaign_id=campaign_id,
        force_id=force_id,
        battle_id=battle_id,
        fired=fired,
        force=force,
        book=book,
    )
    return force, promotions, threshold_decisions(force, promotions, owed, book)


def record_reached(
    session: Session,
    *,
    campaign_id: int,
    force_id: int,
    battle_id: int | None,
    fired: Sequence[tuple[str | None, CounterThreshold]],
    force: OrderOfBattle,
    book: Rulebook,
) -> None:
    """One ``threshold_reached`` event per threshold and holder, naming the threshold and
    its counter (the feed reads them even once the pack is detached)."""
    counters = {c.id: c for c in book.counters}
    for holder, threshold in fired:
        unit = (
            {"card_id": int(holder), "name": force.card(holder).name} if holder is not None else {}
        )
        history.record(
            session,
            campaign_id=campaign_id,
            force_id=force_id,
            battle_id=battle_id,
            kind="threshold_reached",
            **unit,
            pack=threshold.pack,
            threshold=threshold.id,
            threshold_name=threshold.name,
            counter=threshold.counter,
            counter_name=counters[threshold.counter].name,
            at=threshold.at,
            reset_to=threshold.reset_to,
        )
