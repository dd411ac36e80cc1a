"""A rule value with some fields changed, quickly.

The post-battle sequence changes each unit's card and the force holding it several times
(tallies, XP, rank), and ``dataclasses.replace`` builds the whole value again through its
``__init__``: 8 µs for a card of 23 fields, about a millisecond of a 40-unit battle's
result (issue 50). ``evolve`` copies the value's fields and sets the changed ones: 1 µs.
It is ``replace`` exactly for the values it takes (frozen dataclasses whose ``__init__``
only stores its arguments); any other is passed to ``replace`` itself."""

from __future__ import annotations

import dataclasses
from functools import cache, cached_property
from typing import Any, TypeVar

V = TypeVar("V")


def evolve(value: V, **changes: Any) -> V:
    """``dataclasses.replace(value, **changes)``."""
    kind: type = type(value)
    fields, cached = _plain(kind)
    if fields is None:
        return dataclasses.replace(value, **changes)  # type: ignore[type-var]
    if not fields.issuperset(changes):
        unknown = sorted(set(changes) - fields)
        raise TypeError(f"{kind.__name__} has no field {unknown}")
    new: V = object.__new__(kind)
    state = new.__dict__
    state.update(value.__dict__)
    for name in cached:  # worked out from the old fields: worked out again when asked
        state.pop(name, None)
    state.update(changes)
    return new


@cache
def _plain(kind: type) -> tuple[frozenset[str] | None, tuple[str, ...]]:
    """The field names of a value ``evolve`` may copy (None when it may not: its
    ``__init__`` does more than store, or it has no ``__dict__``), and its cached
    properties."""
    params = getattr(kind, "__dataclass_params__", None)
    fields = dataclasses.fields(kind) if params is not None else ()
    plain = (
        params is not None
        and params.frozen
        and not hasattr(kind, "__post_init__")
        and not hasattr(kind, "__slots__")
        and all(f.init for f in fields)
    )
    cached = tuple(
        name
        for klass in kind.__mro__
        for name, member in vars(klass).items()
        if isinstance(member, cached_property)
    )
    return (frozenset(f.name for f in fields) if plain else None), cached
