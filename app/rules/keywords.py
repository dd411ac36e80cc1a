"""The keywords the rules engine reads, as one list (the website's keyword chips).

Two sources, so the list cannot drift from the rules: the keywords the rules code tests by
name (``CODE_KEYWORDS``; tests/rules/test_keywords.py fails when app/rules tests a keyword
that is not here), and every keyword the rules data names (Agenda eligibility, Crusade
Relics, Requisitions, units that never gain experience)."""

from __future__ import annotations

from app.rules.data import Rulebook

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
