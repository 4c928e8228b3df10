"""What the reports' line charts share: the plot's geometry, its axes and a line broken at gaps.

``ragscore monitor`` draws a metric over time windows and ``ragscore dashboard`` over versions;
both place point i of n evenly from the left axis to the right edge (one point: in the middle)
and a value between the axis' ends from the bottom of the plot to its top, clamped to the plot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple


class Plot(NamedTuple):
    """An SVG chart's size and the margins around its plot (in pixels)."""

    width: int
    height: int
    left: int    # room for the axis labels
    right: int
    top: int
    bottom: int  # room for the labels under the plot

    @property
    def plot_width(self) -> int:
        return self.width - self.left - self.right

    @property
    def plot_height(self) -> int:
        return self.height - self.top - self.bottom

    def x(self, i: int, n: int) -> float:
        """Where point ``i`` of ``n`` goes across."""
        width = self.plot_width
        return self.left + (width * i / (n - 1) if n > 1 else width / 2)

    def y(self, value: float, low: float, high: float) -> float:
        """Where ``value`` goes up, on an axis from ``low`` to ``high`` (an empty axis: its bottom)."""
        height = self.plot_height
        if high == low:
            return self.top + height
        return self.top + height * (1 - min(max((value - low) / (high - low), 0.0), 1.0))

    def axes(self) -> list[str]:
        """The plot's bottom and left axis lines."""
        base = self.top + self.plot_height
        return [f'<line x1="{self.left}" y1="{base}" x2="{self.width - self.right}" y2="{base}" stroke="#bbb"/>',
                f'<line x1="{self.left}" y1="{self.top}" x2="{self.left}" y2="{base}" stroke="#bbb"/>']


def broken_line(points: Sequence[str | None], attributes: str) -> list[str]:
    """One polyline (with ``attributes``) per run of two or more points: None, a point with no value,
    breaks the line."""
    out: list[str] = []
    run: list[str] = []
    for point in [*points, None]:
        if point is not None:
            run.append(point)
            continue
        if len(run) > 1:
            out.append(f'<polyline {attributes} points="{" ".join(run)}"/>')
        run = []
    return out
