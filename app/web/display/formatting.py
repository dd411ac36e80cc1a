"""Jinja filters: turn stored values into the words players use."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from jinja2 import Environment
from markupsafe import Markup

from app.db.models import as_utc
from app.web.display.markdown import markdown


def utc_text(moment: datetime | None) -> str:
    if moment is None:
        return ""
    return as_utc(moment).strftime("%d %b %Y, %H:%M UTC")


def local_time(moment: datetime | None) -> Markup:
    """A moment as UTC text in a <time> element that app.js rewrites in the viewer's own
    time zone (issue 12); without script the UTC text stays, marked as UTC. Every page
    shows times this way (the ``when`` filter is this one)."""
    if moment is None:
        return Markup("")
    utc = as_utc(moment)
    return Markup('<time datetime="{}" data-local>{}</time>').format(
        utc.isoformat().replace("+00:00", "Z"), utc_text(utc)
    )


when = local_time


def day(moment: datetime | None) -> Markup:
    """A date alone, in the viewer's zone like ``local_time`` (the day can differ from
    UTC's); without script the UTC date stays."""
    if moment is None:
        return Markup("")
    utc = as_utc(moment)
    return Markup('<time datetime="{}" data-local="day">{}</time>').format(
        utc.isoformat().replace("+00:00", "Z"), utc.strftime("%d %b %Y")
    )


def bdi(value: Any) -> Markup:
    """Text a user typed (a place, a name, a caption), isolated from the words around it:
    a right-to-left override inside it ends at its edge, so it cannot reverse the
    "written by" that follows (issue 33)."""
    return Markup("<bdi>{}</bdi>").format(finalize(value))


# Unicode's directional formatting characters (UAX #9): embeddings and overrides end at PDF,
# isolates at PDI. A name that opens one and never closes it turns the text after it around.
_EMBEDDINGS = frozenset("\u202a\u202b\u202d\u202e")
_ISOLATES = frozenset("\u2066\u2067\u2068")
_PDF, _PDI = "\u202c", "\u2069"
_BIDI_CONTROLS = _EMBEDDINGS | _ISOLATES | {_PDF, _PDI}


def balanced(text: str) -> str:
    """``text`` with every embedding, override or isolate it opens closed at its end, so
    whatever follows it reads in its own direction (issue 45: a force named with a
    right-to-left override reversed the map legend)."""
    if not _BIDI_CONTROLS.intersection(text):
        return text
    open_: list[str] = []
    for char in text:
        if char in _EMBEDDINGS or char in _ISOLATES:
            open_.append(char)
        elif char == _PDF and open_ and open_[-1] in _EMBEDDINGS:
            open_.pop()
        elif char == _PDI and any(c in _ISOLATES for c in open_):
            while open_.pop() not in _ISOLATES:
                pass
    closers = "".join(_PDI if c in _ISOLATES else _PDF for c in reversed(open_))
    return text + closers


def isolated(value: Any) -> str:
    """A user-typed name as plain text set apart from the words around it (first strong
    isolate ... pop directional isolate): for places that take no HTML element, such as an
    SVG's <text> and <desc> or a page title."""
    return "\u2068" + balanced(str(value)) + _PDI


def finalize(value: Any) -> Any:
    """Every value a template writes (before escaping): text closes the directions it
    opens, also in attributes, titles and options where no <bdi> can stand. Markup was
    built by a filter and is left alone."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return balanced(value)
    return value


def words(value: Any) -> str:
    """snake_case ids as plain words: battle_scar -> Battle scar."""
    text = str(value).replace("_", " ")
    return text[:1].upper() + text[1:]


def signed(value: int) -> str:
    return f"+{value}" if value > 0 else str(value)


def titled(value: Any) -> str:
    """snake_case ids as a title: battle_trait -> Battle Trait (the rulebook's table names)."""
    return " ".join(word.capitalize() for word in str(value).split("_"))


def roll_range(low: int, high: int) -> str:
    """The dice results of a table row: 3, or 1-2."""
    return str(low) if low == high else f"{low}\u2013{high}"


def install(env: Environment) -> None:
    # Set before any template is compiled: Jinja builds finalize into the compiled code.
    env.finalize = finalize
    env.filters.update(when=when, day=day, words=words, signed=signed, bdi=bdi)
    env.filters["isolated"] = isolated
    env.filters.update(titled=titled, roll_range=roll_range)
    env.filters["local_time"] = local_time
    env.filters["markdown"] = markdown
