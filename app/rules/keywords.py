"""The keywords the rules engine reads, as one list (the website's keyword chips).

Two sources, so the list cannot drift from the rules: the keywords the rules code tests by
name (``CODE_KEYWORDS``; tests/rules/test_keywords.py fails when app/rules tests a keyword
that is not here), and every keyword the rules data names (Agenda eligibility, Crusade
Relics, Requisitions, units that never gain experience)."""

from __future__ import annotations

from dataclasses import replace

from app.rules.cards import CrusadeCard, normalise_keywords
from app.rules.data import Rulebook
from app.rules.errors import RuleError
from app.rules.order_of_battle import OrderOfBattle

# Tested by name in app/rules: Battle Trait / Scar tables, Warlord choice, Psychic
# Fortitudes, Weapon Enhancements, Crusade Relics, Requisition costs.
CODE_KEYWORDS: tuple[str, ...] = ("CHARACTER", "VEHICLE", "MONSTER", "PSYKER", "TITANIC")


def rule_keywords(book: Rulebook) -> tuple[str, ...]:
    """Every keyword the rules read, code keywords first, then the data's in the order the
    rulebook lists them, each once. The unaligned keyword is left out (it stands in for a
    faction keyword, which the player's form offers on its own)."""
    found: list[str] = list(CODE_KEYWORDS)
    for agenda in book.agendas:
        rule = agenda.eligibility
        found += [*rule.keywords_all, *rule.keywords_any, *rule.keywords_none]
    for relic in book.honours.crusade_relics:
        found += relic.keywords_any
    for requisition in book.requisitions:
        found += [*requisition.required_keywords, *requisition.excluded_keywords]
        found += requisition.character_stratagem_keywords
    found += book.numbers.never_gain_xp_keywords
    unaligned = book.numbers.unaligned_keyword
    return tuple(k for k in dict.fromkeys(k.upper() for k in found) if k != unaligned)


def correct_keywords(
    force: OrderOfBattle,
    card: CrusadeCard,
    keywords: object,
    book: Rulebook,
    *,
    during_battle: bool = False,
) -> CrusadeCard:
    """A mistyped keyword put right (docs/rulings.md, 40): only while the unit is as it joined (no
    battle fought, no experience, honours, scars or Requisitions, and no battle of its
    force under way), which is what removing it and adding it again would give. It keeps
    the Crusade faction keyword (or UNALIGNED), as a unit joining must."""
    words = normalise_keywords(keywords)
    if words == card.keywords:
        return card
    fixed = keywords_fixed(card, during_battle=during_battle)
    if fixed is not None:
        raise fixed
    unaligned = book.numbers.unaligned_keyword
    if force.crusade_faction not in words and unaligned not in words:
        raise RuleError(
            "crusade_faction_mismatch",
            f"{card.name} needs the {force.crusade_faction} keyword (or UNALIGNED) to stay "
            "in this Crusade force.",
            field="keywords",
        )
    return replace(card, keywords=words)


def keywords_fixed(card: CrusadeCard, *, during_battle: bool = False) -> RuleError | None:
    """Why the unit's keywords can no longer be corrected, or None while they can."""
    if during_battle:
        return RuleError(
            "keywords_fixed_during_battle",
            f"{card.name}'s keywords cannot change while its force has a battle under way.",
            field="keywords",
        )
    if card.tallies.battles_played or card.xp or card.honours or card.scars or card.upgrades:
        return RuleError(
            "keywords_fixed",
            f"{card.name}'s keywords are fixed: it has fought a battle or gained experience, "
            "honours, scars or Requisitions since it joined.",
            field="keywords",
        )
    return None
