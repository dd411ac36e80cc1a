"""API problems name the field of the request, not the rules engine's argument.

The rules library refuses with its own argument names (``choice``, ``roster``); a bot needs
the path in what it sent (``scar``, ``sides[0].out_of_action_choices``). A use case wraps the
call that can refuse and says how its arguments map onto its input."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from app.rules.errors import RuleError


@contextmanager
def request_fields(
    renames: Mapping[str, str], prefix: str = "", units: Sequence[object] = ()
) -> Iterator[None]:
    """Re-raise a refusal with its request ``path``: the field renamed (``renames``) and
    placed under ``prefix`` (e.g. ``sides[1].``). A refusal about one unit of a report
    (``RuleError.unit``, a card id) is placed under that unit's item when ``units`` lists the
    report's card ids in request order (``sides[1].units[3].agenda_tallies``). The website's
    forms keep using ``field``. A refusal that already has a path (from an inner use case)
    keeps it."""
    try:
        yield
    except RuleError as refused:
        if refused.field is not None and refused.path is None:
            field = renames.get(refused.field, refused.field)
            ids = [str(u) for u in units]
            if refused.unit is not None and refused.unit in ids:
                field = f"units[{ids.index(refused.unit)}].{field}"
            refused.path = prefix + field
        raise
