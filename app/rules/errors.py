"""Typed rule errors: a stable machine-readable code and one sentence naming the rule."""

from __future__ import annotations


class RuleError(Exception):
    """A request the Crusade rules forbid. ``field`` names the input at fault, if any."""

    def __init__(
        self, code: str, message: str, *, field: str | None = None, unit: str | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        # The card (id) of a battle report's unit the refusal is about, so that the request
        # path can name its place (``sides[0].units[3].agenda_tallies``).
        self.unit = unit
        # Where the input at fault sits in an API request (``sides[1].roster``), when the
        # use case knows more than the rule did; ``field`` stays the rule's own name.
        self.path: str | None = None
        # More for a machine to read beside the code, as plain JSON (a refused decision
        # answer's ``offer``: what the decision accepts now).
        self.extra: dict[str, object] = {}

    def __repr__(self) -> str:
        return f"RuleError({self.code!r}, {self.message!r}, field={self.field!r})"
