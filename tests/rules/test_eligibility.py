"""The eligibility expressions rule packs write (app/rules/eligibility.py): parsed, never
evaluated as code; every refusal says where."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.rules import eligibility
from app.rules.eligibility import ExpressionError, UnitFacts, holds, parse

RANKS = {"battle_ready": 0, "blooded": 1, "battle_hardened": 2, "heroic": 3, "legendary": 4}
SQUAD = UnitFacts(
    keywords=frozenset({"IMPERIUM", "INFANTRY", "ADEPTUS ASTARTES"}),
    rank="blooded",
    power_rating=5,
    xp=8,
    role="Troops",
    counters={"zeal": 2},
)


@pytest.mark.parametrize(
    ("text", "meets"),
    [
        ("INFANTRY", True),
        ("VEHICLE", False),
        ("INFANTRY and not (VEHICLE or MONSTER)", True),
        ('"adeptus  astartes" and rank >= blooded', True),  # quoted, any case, spaces folded
        ("rank > blooded", False),
        ("power_rating <= 5 and xp < 9", True),
        ('role == "troops"', True),
        ('role != "Troops" or VEHICLE', False),
        ("counter.zeal >= 2", True),
        ("counter.other > 0", False),  # a counter never set is 0
        ("not not INFANTRY", True),
        ("VEHICLE or INFANTRY and power_rating == 5", True),  # and binds tighter
        ("(VEHICLE or INFANTRY) and power_rating == 4", False),
    ],
)
def test_expressions_read_a_unit(text: str, meets: bool) -> None:
    assert holds(parse(text), SQUAD, RANKS) is meets


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "empty"),
        ("INFANTRY and", "expected a KEYWORD"),
        ("(INFANTRY", "never closed"),
        ("INFANTRY VEHICLE", "after a complete expression"),
        ("rank", "needs a comparison"),
        ("xp >= many", "whole number"),
        ("role > Troops", "== or != only"),
        ("counter.Zeal > 1", "counter.<id>"),
        ("__import__('os')", "unexpected ''os'"),
        ("INFANTRY; DROP TABLE", "unexpected ';"),
        ("(" * 30 + "INFANTRY" + ")" * 30, "nests at most"),
        ("INFANTRY or " * 60 + "VEHICLE", "at most 500 characters"),
    ],
)
def test_bad_expressions_are_refused_in_words(text: str, says: str) -> None:
    with pytest.raises(ExpressionError, match=says.replace("(", r"\(").replace("*", r"\*")):
        parse(text)


def test_a_keyword_matches_in_either_number() -> None:
    drones = UnitFacts(keywords=frozenset({"DRONE", "T'AU EMPIRE"}))
    assert holds(parse('DRONES and "T\'AU EMPIRE"'), drones, RANKS)


def test_what_an_expression_names() -> None:
    tree = parse("counter.zeal > 1 and (rank >= heroic or not counter.doom == 0)")
    assert eligibility.counters_named(tree) == {"zeal", "doom"}
    assert eligibility.ranks_named(tree) == {"heroic"}


@given(st.text(max_size=80))
def test_any_text_parses_or_is_refused_never_crashes(text: str) -> None:
    try:
        tree = parse(text)
    except ExpressionError:
        return
    assert isinstance(holds(tree, SQUAD, RANKS), bool)
