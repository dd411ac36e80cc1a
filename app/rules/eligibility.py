"""Who may score an Agenda, buy a Requisition or carry a Relic, as a rule pack writes it: a
small expression language, parsed (never ``eval``-ed) into a tree and evaluated against a
unit's facts.

    INFANTRY and not (VEHICLE or MONSTER)
    "ADEPTUS ASTARTES" and rank >= battle_hardened
    power_rating <= 5 or role == "Troops"
    counter.zeal >= 2 and xp < 30
    counter.saga == hunter      (a named choice: == or != one of its choices)

A bare upper-case word (or a quoted string) is a keyword the unit must have. Comparisons
read ``rank`` (by rank id, in rank order), ``power_rating``, ``xp``, ``role`` (``==`` and
``!=`` only) and ``counter.<id>`` (a force or card counter). ``and`` binds tighter than
``or``; ``not`` tighter than both."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from app.rules.cards import CrusadeCard, spellings
from app.rules.data import Rulebook
from app.rules.errors import RuleError

MAX_LENGTH = 500
MAX_DEPTH = 20
FIELDS = ("rank", "power_rating", "xp", "role")
OPERATORS = ("<=", ">=", "==", "!=", "<", ">")


class ExpressionError(ValueError):
    """An expression that does not parse; the message says where."""


@dataclass(frozen=True)
class UnitFacts:
    """What an expression may ask about a unit."""

    keywords: frozenset[str]
    rank: str = ""
    power_rating: int = 0
    xp: int = 0
    role: str = ""
    counters: Mapping[str, int] = field(default_factory=dict)
    # a named choice's counter: its choices, in order (issue 38)
    choices: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


# --- the tree ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HasKeyword:
    keyword: str


@dataclass(frozen=True)
class Compare:
    name: str  # rank | power_rating | xp | role | counter.<id>
    operator: str
    value: str


@dataclass(frozen=True)
class Not:
    term: Node


@dataclass(frozen=True)
class All:
    terms: tuple[Node, ...]


@dataclass(frozen=True)
class AnyOf:
    terms: tuple[Node, ...]


Node = HasKeyword | Compare | Not | All | AnyOf


# --- parsing ----------------------------------------------------------------------------

_TOKEN = re.compile(
    r'\s*(?:(?P<string>"[^"]*")|(?P<op><=|>=|==|!=|<|>)|(?P<paren>[()])'
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_.'\-]*)|(?P<number>-?\d+))"
)


def _tokens(text: str) -> list[tuple[str, str]]:
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"an expression is at most {MAX_LENGTH} characters")
    found, at = [], 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            raise ExpressionError(f"unexpected '{text[at:].strip()[:10]}' at character {at + 1}")
        kind = match.lastgroup or ""
        found.append((kind, match.group(kind)))
        at = match.end()
    return found


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0
        self.depth = 0

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.at] if self.at < len(self.tokens) else ("end", "")

    def take(self) -> tuple[str, str]:
        token = self.peek()
        self.at += 1
        return token

    def whole(self) -> Node:
        if not self.tokens:
            raise ExpressionError("the expression is empty")
        node = self.any_of()
        if self.peek()[0] != "end":
            raise ExpressionError(f"unexpected '{self.peek()[1]}' after a complete expression")
        return node

    def any_of(self) -> Node:
        terms = [self.all_of()]
        while self.peek() == ("word", "or"):
            self.take()
            terms.append(self.all_of())
        return terms[0] if len(terms) == 1 else AnyOf(tuple(terms))

    def all_of(self) -> Node:
        terms = [self.negation()]
        while self.peek() == ("word", "and"):
            self.take()
            terms.append(self.negation())
        return terms[0] if len(terms) == 1 else All(tuple(terms))

    def negation(self) -> Node:
        if self.peek() == ("word", "not"):
            self.take()
            return Not(self.nested(self.negation))
        return self.atom()

    def nested(self, parse: Callable[[], Node]) -> Node:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExpressionError(f"an expression nests at most {MAX_DEPTH} deep")
        try:
            return parse()
        finally:
            self.depth -= 1

    def atom(self) -> Node:
        kind, text = self.take()
        if (kind, text) == ("paren", "("):
            node = self.nested(self.any_of)
            if self.take() != ("paren", ")"):
                raise ExpressionError("a '(' is never closed")
            return node
        if kind == "string":
            keyword = " ".join(text[1:-1].split()).upper()
            if not keyword:
                raise ExpressionError('an empty keyword ("") is never held by any unit')
            return HasKeyword(keyword)
        if kind == "word" and (text in FIELDS or text.startswith("counter.")):
            return self.comparison(text)
        if kind == "word" and text.upper() == text and text not in ("and", "or", "not"):
            return HasKeyword(text)
        what = text or "the end"
        raise ExpressionError(f"expected a KEYWORD, a comparison or '(' but found '{what}'")

    def comparison(self, name: str) -> Node:
        if name.startswith("counter.") and not re.fullmatch(r"counter\.[a-z][a-z0-9_]*", name):
            raise ExpressionError(f"'{name}': a counter is named counter.<id> (a-z, 0-9, _)")
        kind, operator = self.take()
        if kind != "op":
            raise ExpressionError(f"'{name}' needs a comparison (<, <=, ==, !=, >=, >)")
        kind, value = self.take()
        if kind not in ("number", "word", "string"):
            raise ExpressionError(f"'{name} {operator}' needs a value")
        value = value[1:-1] if kind == "string" else value
        if name.startswith("counter.") and kind != "number":
            # a named choice (issue 38): counter.saga == hunter
            if operator not in ("==", "!=") or not re.fullmatch(r"[a-z][a-z0-9_]*", value):
                raise ExpressionError(
                    f"'{name}' is compared with a whole number, or with == or != to one of "
                    "its choices (a-z, 0-9, _)"
                )
            return Compare(name, operator, value)
        numeric = name in ("power_rating", "xp")
        if numeric and kind != "number":
            raise ExpressionError(f"'{name}' is compared with a whole number")
        if name == "role" and operator not in ("==", "!="):
            raise ExpressionError("'role' is compared with == or != only")
        return Compare(name, operator, value)


def parse(text: str) -> Node:
    return _Parser(text).whole()


# --- what an expression names ------------------------------------------------------------


def counters_named(node: Node) -> set[str]:
    match node:
        case Compare(name=name) if name.startswith("counter."):
            return {name.removeprefix("counter.")}
        case Not(term=term):
            return counters_named(term)
        case All(terms=terms) | AnyOf(terms=terms):
            return set().union(*(counters_named(t) for t in terms))
    return set()


def ranks_named(node: Node) -> set[str]:
    match node:
        case Compare(name="rank", value=value):
            return {value}
        case Not(term=term):
            return ranks_named(term)
        case All(terms=terms) | AnyOf(terms=terms):
            return set().union(*(ranks_named(t) for t in terms))
    return set()


def reads_a_unit(node: Node) -> bool:
    """Whether the expression asks about a unit (a keyword, rank, Power Rating, XP, role)
    rather than only counters: a force has none of those, so for it such a test never
    passes, or always does, whatever happens."""
    match node:
        case HasKeyword():
            return True
        case Compare(name=name):
            return not name.startswith("counter.")
        case Not(term=term):
            return reads_a_unit(term)
        case All(terms=terms) | AnyOf(terms=terms):
            return any(reads_a_unit(t) for t in terms)
    return False


# --- evaluating --------------------------------------------------------------------------


def holds(node: Node, unit: UnitFacts, rank_order: Mapping[str, int]) -> bool:
    """True when the unit meets the expression. ``rank_order`` numbers the ranks (Battle-
    ready 0, Blooded 1, ...)."""
    match node:
        case HasKeyword(keyword=keyword):
            return not spellings(keyword).isdisjoint(unit.keywords)
        case Not(term=term):
            return not holds(term, unit, rank_order)
        case All(terms=terms):
            return all(holds(t, unit, rank_order) for t in terms)
        case AnyOf(terms=terms):
            return any(holds(t, unit, rank_order) for t in terms)
        case Compare():
            return _compare(node, unit, rank_order)
    raise AssertionError(node)


def _compare(node: Compare, unit: UnitFacts, rank_order: Mapping[str, int]) -> bool:
    if node.name == "role":
        same = unit.role.casefold() == node.value.casefold()
        return same if node.operator == "==" else not same
    if node.name == "rank":
        have, want = rank_order.get(unit.rank, 0), rank_order.get(node.value, 0)
    elif node.name.startswith("counter."):
        counter = node.name.removeprefix("counter.")
        have = unit.counters.get(counter, 0)
        want = _choice_value(unit.choices.get(counter, ()), node.value)
    else:
        have, want = int(getattr(unit, node.name)), int(node.value)
    return {
        "<": have < want,
        "<=": have <= want,
        "==": have == want,
        "!=": have != want,
        ">=": have >= want,
        ">": have > want,
    }[node.operator]


def _choice_value(choices: tuple[str, ...], value: str) -> int:
    """A number, or a named choice's value (1 for the first; never held: -1)."""
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    return choices.index(value) + 1 if value in choices else -1


def counters_compared_with_numbers(node: Node) -> set[str]:
    """Each counter the expression compares with a whole number (``counter.faith >= 3``): a
    named choice never is (issue 47)."""
    match node:
        case Compare(name=name, value=value) if name.startswith("counter.") and re.fullmatch(
            r"-?\d+", value
        ):
            return {name.removeprefix("counter.")}
        case Not(term=term):
            return counters_compared_with_numbers(term)
        case All(terms=terms) | AnyOf(terms=terms):
            return set().union(*(counters_compared_with_numbers(t) for t in terms))
    return set()


def choices_named(node: Node) -> set[tuple[str, str]]:
    """(counter, choice) for each named choice the expression compares with."""
    match node:
        case Compare(name=name, value=value) if name.startswith("counter.") and not re.fullmatch(
            r"-?\d+", value
        ):
            return {(name.removeprefix("counter."), value)}
        case Not(term=term):
            return choices_named(term)
        case All(terms=terms) | AnyOf(terms=terms):
            return set().union(*(choices_named(t) for t in terms))
    return set()


# --- a card's facts ----------------------------------------------------------------------


def facts_of(card: CrusadeCard | None, force_counters: Mapping[str, int]) -> UnitFacts:
    """What an expression reads about a card (None: the force itself, for a requisition
    on the force); the card's counters over the force's."""
    if card is None:
        return UnitFacts(keywords=frozenset(), counters=dict(force_counters))
    return UnitFacts(
        keywords=frozenset(k for word in card.keywords for k in spellings(word)),
        rank=card.rank,
        power_rating=card.power_rating,
        xp=card.xp,
        role=card.battlefield_role,
        counters={**force_counters, **card.counters},
    )


@functools.cache
def parsed(text: str) -> Node:
    """An expression parsed once: rule data is validated at load, so this never fails
    for a rulebook's own expressions."""
    return parse(text)


def meets(
    text: str, card: CrusadeCard | None, force_counters: Mapping[str, int], book: Rulebook
) -> bool:
    order = {r.id: n for n, r in enumerate(book.ranks)}
    # A counter never changed is at its start.
    starts = {c.id: c.start for c in book.counters}
    facts = facts_of(card, {**starts, **force_counters})
    choices = {c.id: c.choices for c in book.counters if c.choices}
    if choices:
        facts = replace(facts, choices=choices)
    return holds(parsed(text), facts, order)


def require(name: str, text: str | None, card: CrusadeCard, book: Rulebook, code: str) -> None:
    """Refuse (``code``) a rule pack's entry called ``name`` to a unit that does not meet its
    ``eligible`` expression ``text`` (none: any unit)."""
    if text and not meets(text, card, {}, book):
        raise RuleError(code, f"{name} is only for units that meet: {text}.", field="choice")
