"""Two screens tapping one counter of a wizard draft while apart (issue 49).

A tap is a change by one: it counts on whatever the draft holds, so two phones that both
tapped "+1 ranged kill, Captain" without seeing each other's tap add up to 2 — right if two
kills were made, wrong if both players entered the same one. Each tap is noted in the
draft's data with the screen it came from (``screen``: an id the phone keeps) and the
draft's version that screen knew when the tap was made (``seen``). A tap on a counter that
another screen moved after that version is a tap made apart: the counter is then marked
as moved on two screens, with each screen's part, until the players keep the sum or one
screen's count (``settle``).

Plain functions over the draft's data (a dict); the wizard's services store it."""

from __future__ import annotations

from typing import Any

TAPS = "taps"  # slug -> [[screen, delta, version after the tap], ...], the latest last
OVERLAPS = "overlaps"  # slug -> {"card_id", "field", "parts": {screen: delta}}
KEPT_TAPS = 40  # per counter: enough to look back over a long blackout


def slug(card_id: int, field: str) -> str:
    return f"{card_id}:{field}"


def note_tap(
    draft_data: dict[str, Any],
    *,
    card_id: int,
    field: str,
    delta: int,
    screen: str | None,
    seen: int | None,
    version: int,
) -> None:
    """Note a tap that takes the draft to ``version``; mark the counter as moved on two
    screens when another screen moved it after the version this screen knew (``seen``)."""
    if not screen:
        return  # a tap from a page without the script: nothing to compare
    key = slug(card_id, field)
    taps = draft_data.setdefault(TAPS, {}).setdefault(key, [])
    overlaps = draft_data.setdefault(OVERLAPS, {})
    if key in overlaps:
        kept = overlaps[key]["parts"]
        kept[screen] = int(kept.get(screen, 0)) + delta
    elif seen is not None:
        apart = [t for t in taps if int(t[2]) > seen]
        if any(t[0] != screen for t in apart) and sum(t[1] for t in apart if t[0] != screen):
            parts: dict[str, int] = {}
            for other, moved, _version in apart:
                parts[other] = parts.get(other, 0) + int(moved)
            parts[screen] = parts.get(screen, 0) + delta
            overlaps[key] = {"card_id": card_id, "field": field, "parts": parts}
    taps.append([screen, delta, version])
    del taps[:-KEPT_TAPS]


def open_overlaps(draft_data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The counters moved on two screens while apart, not settled yet."""
    return dict(draft_data.get(OVERLAPS) or {})


def kept_value(overlap: dict[str, Any], value: int, keep: str) -> int:
    """The counter's value once ``keep`` is chosen: "sum" keeps it as it is; a screen's id
    keeps only that screen's part of the taps made apart (never below 0)."""
    if keep == "sum":
        return value
    parts = {k: int(v) for k, v in overlap["parts"].items()}
    return max(0, value - sum(v for k, v in parts.items() if k != keep))


def close(draft_data: dict[str, Any], key: str) -> None:
    """The overlap is settled: later taps count as usual, and only taps made after it are
    compared (the ones before are what the players just looked at)."""
    (draft_data.get(OVERLAPS) or {}).pop(key, None)
    (draft_data.get(TAPS) or {}).pop(key, None)
