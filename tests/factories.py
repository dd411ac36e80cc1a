"""Plain factory functions with overrides: a test says only what matters to it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.rules.cards import BattleScar, CrusadeCard
from app.rules.data import Rulebook, rulebook
from app.rules.order_of_battle import OrderOfBattle


def book() -> Rulebook:
    return rulebook()


def card(**overrides: Any) -> CrusadeCard:
    keywords = overrides.pop("keywords", {"IMPERIUM", "INFANTRY"})
    base = CrusadeCard(
        id="u1",
        name="Intercessor Squad",
        power_rating=5,
        keywords=frozenset(k.upper() for k in keywords),
    )
    return replace(base, **overrides)


def character(**overrides: Any) -> CrusadeCard:
    overrides.setdefault("id", "c1")
    overrides.setdefault("name", "Captain")
    overrides.setdefault("keywords", {"IMPERIUM", "INFANTRY", "CHARACTER"})
    return card(**overrides)


def force(*cards: CrusadeCard, **overrides: Any) -> OrderOfBattle:
    base = OrderOfBattle(
        id="f1",
        name="Ultramarines 3rd Company",
        crusade_faction="IMPERIUM",
        requisition_points=5,
        supply_limit=50,
        cards=tuple(cards),
    )
    return replace(base, **overrides)


SIX_SCARS = tuple(
    BattleScar(s)
    for s in (
        "walking_wounded",
        "fatigued",
        "battle_weary",
        "shell_shock",
        "disgraced",
        "mark_of_shame",
    )
)
