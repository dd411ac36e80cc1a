"""Filling a roster's sub-faction placeholders (``<Legion>``, ``Faction: <Household>``) with
what the detachment's settings chose (rulings 51 and 74). Pure: names in, keywords out.

BattleScribe's data names these settings in many ways ("Sept Choice", "**Chapter
Selector**", "Legion", "Brotherhood", "Clan Kultur", "Order Convictions", "Household Choice",
"Craftworld Selection"), so a setting is found by what it selects: the placeholder it
resolves is the one its name begins with (its head word, "Clan" of "Clan Kultur"), and an
option that names a placeholder's head word itself ("Questor Imperialis" for ``<Questor
Allegiance>``) resolves that placeholder whichever setting holds it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

MAX_KEYWORD = 40
# Words BattleScribe's data adds after the setting's own name.
_SUFFIX = re.compile(r"\s+(?:choice|choices|selector|selection|selections)$", re.IGNORECASE)
# An option that chooses no sub-faction: "None (Mixed Detachment)" (Genestealer Cults'
# Cult Creed), "*No Cult*" (Thousand Sons' Cults of the Legion).
_NONE = re.compile(r"^(?:none|no)\b", re.IGNORECASE)
# Two head words are the same word when one begins the other ("House" / "Household",
# "Regiment" / "Regimental"), as long as the shorter has this many letters.
_MIN_STEM = 4


@dataclass(frozen=True)
class Setting:
    """A detachment setting as the roster writes it: its name and its chosen options."""

    name: str
    options: tuple[str, ...]


def _words(text: str) -> str:
    return " ".join(text.replace("*", " ").split()).casefold()


def _head(text: str) -> str:
    words = _words(text).split()
    return words[0] if words else ""


def _same_word(a: str, b: str) -> bool:
    if a == b:
        return bool(a)
    short, long = sorted((a, b), key=len)
    return len(short) >= _MIN_STEM and long.startswith(short)


def _kind(setting: str) -> str:
    """The setting's own name, without "Choice" / "Selector" / "Selection"."""
    return _SUFFIX.sub("", _words(setting))


def _score(option: str, placeholder: str, in_setting: bool) -> tuple[int, str]:
    """How surely ``option`` is the value of ``placeholder``, and the value it gives:
    3 when written "Placeholder: Value" ("Dynasty: Szarekhan"), 2 when its first word is the
    placeholder's ("House Cadmus" for <Household>, "Order of Our Martyred Lady" for <Order>),
    1 for any other option of the placeholder's own setting ("Black Legion" for <Legion>;
    "Saim-Hann: Wild Host" gives its first part), 0 otherwise."""
    name = " ".join(option.split())
    before, colon, after = (part.strip() for part in name.partition(":"))
    if colon and _words(before) == placeholder:
        return 3, after
    if _same_word(_head(name), _head(placeholder)):
        return 2, before if colon else name
    if in_setting:
        return 1, before if colon else name
    return 0, ""


def fill_placeholders(settings: Iterable[Setting], placeholders: Iterable[str]) -> dict[str, str]:
    """For each placeholder (as written between the angle brackets) the keyword its
    detachment chose, upper case; a placeholder left open, or chosen as another placeholder
    ("Dynasty: <Custom>"), is absent from the answer."""
    settings = tuple(settings)
    wanted = {_words(p) for p in placeholders if _words(p)}
    heads = {_head(p) for p in wanted}
    filled: dict[str, str] = {}
    for placeholder in sorted(wanted):
        value = _best(settings, placeholder, heads - {_head(placeholder)})
        if value and "<" not in value and ">" not in value:
            filled[placeholder] = value.upper()[:MAX_KEYWORD]
    return filled


def _best(settings: tuple[Setting, ...], placeholder: str, others: set[str]) -> str:
    """The best-scoring option for ``placeholder``; at equal scores the first option
    without a colon (a colon marks a rule such as "Household Tradition: …"), then the
    first in the file. An option whose first word is another placeholder's belongs to it."""
    best: tuple[int, int, int] = (0, 0, 0)
    value = ""
    order = 0
    for setting in settings:
        kind = _kind(setting.name)
        in_setting = kind == placeholder or _same_word(_head(kind), _head(placeholder))
        for option in setting.options:
            order -= 1
            if _NONE.match(_words(option)):
                continue  # a detachment that chose none fills nothing from this option
            if any(_same_word(_head(option), other) for other in others):
                continue
            score, given = _score(option, placeholder, in_setting)
            rank = (score, 0 if ":" in option and score < 3 else 1, order)
            if score and rank > best:
                best, value = rank, given
    return value


def placeholder_of(category: str) -> str | None:
    """``<Legion>`` from a category named "Faction: <Legion>" or "<Legion>"; None for any
    other category."""
    name = " ".join(category.split())
    if name.casefold().startswith("faction:"):
        name = name.split(":", 1)[1].strip()
    if name.startswith("<") and name.endswith(">"):
        return name[1:-1].strip()
    return None


def resolve(word: str, filled: Mapping[str, str]) -> str:
    """A keyword as the unit carries it: a placeholder becomes its chosen value, or ""."""
    if word.startswith("<") and word.endswith(">"):
        return filled.get(_words(word[1:-1]), "")
    return word
