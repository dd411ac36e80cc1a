"""The keyword list the website offers as chips is the rules' own: every keyword the rules
code tests by name and every keyword the rules data names, and nothing else."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from app.rules.cards import CombatTallies, Upgrade, new_card
from app.rules.data import rulebook
from app.rules.errors import RuleError
from app.rules.keywords import CODE_KEYWORDS, correct_keywords, keywords_fixed, rule_keywords
from app.rules.order_of_battle import start_order_of_battle

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


class TestCorrectKeywords:
    def setup_method(self) -> None:
        self.book = rulebook()
        self.force = start_order_of_battle(
            id="f", name="Ultramarines", crusade_faction="IMPERIUM", book=self.book
        )
        self.card = new_card(id="1", name="Squad Vorn", power_rating=5, keywords=["IMPERIUM"])

    def test_a_fresh_unit_takes_the_corrected_keywords(self) -> None:
        fixed = correct_keywords(self.force, self.card, ["imperium", "INFANTRY "], self.book)
        assert fixed.keywords == {"IMPERIUM", "INFANTRY"}
        unaligned = correct_keywords(self.force, self.card, ["UNALIGNED"], self.book)
        assert unaligned.keywords == {"UNALIGNED"}

    def test_the_faction_keyword_stays(self) -> None:
        with pytest.raises(RuleError) as refused:
            correct_keywords(self.force, self.card, ["INFANTRY"], self.book)
        assert (refused.value.code, refused.value.field) == ("crusade_faction_mismatch", "keywords")

    def test_fixed_once_the_unit_has_fought_or_gained_anything(self) -> None:
        changed = [
            replace(self.card, xp=1),
            replace(self.card, tallies=CombatTallies(battles_played=1)),
            replace(self.card, upgrades=(Upgrade("warlord_trait", "Rites of War", 1),)),
        ]
        for card in changed:
            assert keywords_fixed(card) is not None
            with pytest.raises(RuleError) as refused:
                correct_keywords(self.force, card, ["IMPERIUM", "INFANTRY"], self.book)
            assert refused.value.code == "keywords_fixed"
            same = correct_keywords(self.force, card, ["IMPERIUM"], self.book)
            assert same is card  # unchanged keywords are no change

    def test_fixed_while_a_battle_is_under_way(self) -> None:
        with pytest.raises(RuleError) as refused:
            correct_keywords(
                self.force, self.card, ["IMPERIUM", "INFANTRY"], self.book, during_battle=True
            )
        assert refused.value.code == "keywords_fixed_during_battle"
