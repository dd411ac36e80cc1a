"""The keyword list the website offers as chips is the rules' own: every keyword the rules
code tests by name and every keyword the rules data names, and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

from app.rules.data import rulebook
from app.rules.keywords import CODE_KEYWORDS, rule_keywords

RULES = Path(__file__).parents[2] / "app" / "rules"


def test_every_keyword_the_rules_code_tests_is_listed() -> None:
    """A rule that starts reading a new keyword (``card.has("FLY")``) must list it here."""
    tested: set[str] = set()
    for module in RULES.glob("*.py"):
        tested |= set(re.findall(r"\.has\(\"([A-Z][A-Z ]*)\"\)", module.read_text()))
        for group in re.findall(r"\.has\(k\) for k in \(([^)]*)\)", module.read_text()):
            tested |= set(re.findall(r"\"([A-Z][A-Z ]*)\"", group))
    assert tested, "the scan found no keyword tests: update the pattern"
    assert tested <= set(CODE_KEYWORDS), tested - set(CODE_KEYWORDS)
    assert set(CODE_KEYWORDS) <= tested  # and none listed that no rule reads


def test_the_data_keywords_are_included_once_each() -> None:
    book = rulebook()
    words = rule_keywords(book)
    assert len(words) == len(set(words))
    assert words[: len(CODE_KEYWORDS)] == CODE_KEYWORDS
    for agenda in book.agendas:
        rule = agenda.eligibility
        assert {*rule.keywords_all, *rule.keywords_any, *rule.keywords_none} <= set(words)
    for relic in book.honours.crusade_relics:
        assert set(relic.keywords_any) <= set(words)
    for requisition in book.requisitions:
        assert set(requisition.required_keywords) <= set(words)
        assert set(requisition.character_stratagem_keywords) <= set(words)
    assert set(book.numbers.never_gain_xp_keywords) <= set(words)
    assert {"INFANTRY", "BIKER", "CAVALRY", "AIRCRAFT", "SWARM"} <= set(words)
    assert book.numbers.unaligned_keyword not in words  # offered beside the faction keyword


def test_a_keyword_added_to_the_data_becomes_a_chip() -> None:
    book = rulebook()
    agenda = book.agendas[0]
    changed = agenda.model_copy(
        update={"eligibility": agenda.eligibility.model_copy(update={"keywords_any": ("FLY",)})}
    )
    other = book.model_copy(update={"agendas": (changed, *book.agendas[1:])})
    assert "FLY" in rule_keywords(other) and "FLY" not in rule_keywords(book)
