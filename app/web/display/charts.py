"""A line chart as plain geometry for an inline SVG drawn by the template: no script, no
style attributes, just numbers. Pure: series in, coordinates out."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# Colours that stay apart for colour-blind readers (Okabe-Ito) and read on light and dark
# backgrounds; after them the colours repeat with a dash pattern so lines stay distinct.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#999999")
DASHES = ("", "8 4", "2 4")


@dataclass(frozen=True)
class Series:
    label: str
    points: tuple[tuple[int, int], ...]  # (x, y) in data units, x increasing


@dataclass(frozen=True)
class Tick:
    at: float  # SVG coordinate along its axis
    label: str


@dataclass(frozen=True)
class Line:
    label: str
    colour: str
    dash: str
    values: tuple[tuple[int, int], ...]  # the data, for the text alternative
    points: tuple[tuple[float, float], ...]  # SVG coordinates

    @property
    def polyline(self) -> str:
        return " ".join(f"{x:g},{y:g}" for x, y in self.points)

    @property
    def last(self) -> int | None:
        return self.values[-1][1] if self.values else None


@dataclass(frozen=True)
class LineChart:
    width: int
    height: int
    left: float
    top: float
    right: float
    bottom: float
    lines: tuple[Line, ...]
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]

    @property
    def empty(self) -> bool:
        return not any(line.values for line in self.lines)

    @property
    def xs(self) -> tuple[int, ...]:
        """Every x that some line has a value for, in order (the table's columns)."""
        return tuple(sorted({x for line in self.lines for x, _y in line.values}))


def nice_step(span: float, max_ticks: int = 5) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50... that cuts ``span`` into at most ``max_ticks``
    intervals."""
    if span <= 0:
        return 1
    magnitude = 10 ** max(0, math.floor(math.log10(span / max_ticks)))
    for factor in (1, 2, 5, 10):
        step = factor * magnitude
        if span / step <= max_ticks:
            return int(step)
    return int(10 * magnitude)


def line_chart(
    series: Sequence[Series],
    *,
    width: int = 360,
    height: int = 220,
    margin: tuple[float, float, float, float] = (12, 12, 40, 36),  # top, right, bottom, left
) -> LineChart:
    """Place every series in a ``width`` × ``height`` box. The y axis always shows 0 and
    is rounded out to whole ticks; the x axis runs from the smallest x (at most 0) to the
    largest (at least 1)."""
    top, right_margin, bottom_margin, left = margin
    right, bottom = width - right_margin, height - bottom_margin
    values = [p for s in series for p in s.points]
    x_min = min([0, *(x for x, _y in values)])
    x_max = max([1, *(x for x, _y in values)])
    y_low = min([0, *(y for _x, y in values)])
    y_high = max([1, *(y for _x, y in values)])
    y_step = nice_step(y_high - y_low)
    y_min = math.floor(y_low / y_step) * y_step
    y_max = max(math.ceil(y_high / y_step) * y_step, y_min + y_step)

    def sx(x: float) -> float:
        return round(left + (x - x_min) / (x_max - x_min) * (right - left), 1)

    def sy(y: float) -> float:
        return round(bottom - (y - y_min) / (y_max - y_min) * (bottom - top), 1)

    lines = tuple(
        Line(
            label=s.label,
            colour=PALETTE[n % len(PALETTE)],
            dash=DASHES[(n // len(PALETTE)) % len(DASHES)],
            values=tuple(s.points),
            points=tuple((sx(x), sy(y)) for x, y in s.points),
        )
        for n, s in enumerate(series)
    )
    x_step = nice_step(x_max - x_min, max_ticks=8)
    first_x = math.ceil(x_min / x_step) * x_step
    x_ticks = tuple(Tick(sx(x), str(x)) for x in range(first_x, x_max + 1, x_step))
    y_ticks = tuple(Tick(sy(y), str(y)) for y in range(y_min, y_max + 1, y_step))
    return LineChart(width, height, left, top, right, bottom, lines, x_ticks, y_ticks)
