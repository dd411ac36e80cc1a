"""Ranks by XP. A unit's rank is a high-water mark: XP lost never lowers it, and XP regained
up to an old rank never promotes the unit (or grants an honour) a second time."""

from __future__ import annotations

from dataclasses import dataclass

from app.rules.cards import CrusadeCard
from app.rules.data import Rank, Rulebook
from app.rules.values import evolve


@dataclass(frozen=True)
class Promotion:
    """The unit reached ``rank``: it is owed one Battle Honour for it."""

    card_id: str
    rank: str


def rank_for_xp(xp: int, book: Rulebook) -> Rank:
    reached = [r for r in book.ranks if xp >= r.min_xp]
    return reached[-1]


def rank_index(rank_id: str, book: Rulebook) -> int:
    return [r.id for r in book.ranks].index(rank_id)


def at_least(card: CrusadeCard, rank_id: str, book: Rulebook) -> bool:
    return rank_index(card.rank, book) >= rank_index(rank_id, book)


def next_rank(card: CrusadeCard, book: Rulebook) -> Rank | None:
    index = rank_index(card.rank, book) + 1
    return book.ranks[index] if index < len(book.ranks) else None


def change_xp(
    card: CrusadeCard, delta: int, book: Rulebook
) -> tuple[CrusadeCard, tuple[Promotion, ...]]:
    """Add (or, if negative, remove) XP, never below 0, and promote past every newly
    crossed threshold: one Promotion per rank gained, however many at once."""
    xp = max(0, card.xp + delta)
    old = rank_index(card.rank, book)
    new = max(old, rank_index(rank_for_xp(xp, book).id, book))
    gained = tuple(Promotion(card.id, r.id) for r in book.ranks[old + 1 : new + 1])
    return evolve(card, xp=xp, rank=book.ranks[new].id), gained
