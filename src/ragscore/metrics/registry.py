"""The registry of metric names: direction, family and meaning, read by gates and reports."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from ragscore.quoting import quote


class Direction(StrEnum):
    """Which way a metric improves; a bare gate threshold is a minimum or a maximum by it."""

    HIGHER = "higher"
    LOWER = "lower"


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One metric name (``@K`` marks a name computed for each cutoff K) and what it means."""

    name: str
    direction: Direction
    family: str
    description: str
    kind: str = "mean"  # "rate" (a count over a count), "mean" (of per-question values), "count", "corpus"

    @property
    def parametric(self) -> bool:
        """Tell whether the name carries a cutoff (``ndcg@K``)."""
        return self.name.endswith("@K")


_CUTOFF_RE: Final = re.compile(r"^(?P<stem>.+)@(?P<k>[1-9][0-9]*)$")

_REGISTRY: dict[str, MetricSpec] = {}


def register(*specs: MetricSpec) -> None:
    """Add metric names; a family module calls this once at import."""
    for spec in specs:
        if spec.name in _REGISTRY:
            raise ValueError(f"metric {spec.name!r} registered twice")
        _REGISTRY[spec.name] = spec


def split_cutoff(name: str) -> tuple[str, int | None]:
    """Split ``ndcg@10`` into (``ndcg@K``, 10); other names come back with None."""
    match = _CUTOFF_RE.match(name)
    if match is None:
        return name, None
    return match.group("stem") + "@K", int(match.group("k"))


def lookup(name: str) -> MetricSpec | None:
    """Find the spec of a concrete metric name (``full_recall@5`` finds ``full_recall@K``)."""
    spec = _REGISTRY.get(name)
    if spec is not None:
        return None if spec.parametric else spec  # "ndcg@K" itself names no metric
    template, k = split_cutoff(name)
    spec = _REGISTRY.get(template) if k is not None else None
    return spec if spec is not None and spec.parametric else None


# Names of scores from other evaluators that measure a cost: time, money, tokens. Unregistered
# names ending so (case-insensitive) are lower-is-better unless a [diagnose.NAME] direction says otherwise.
LOWER_IS_BETTER_SUFFIXES: Final = ("_ms", "_s", "_seconds", "latency", "cost", "_usd", "tokens")


def direction_of(name: str) -> Direction:
    """Say which way a metric improves: its registered direction; for another evaluator's score
    (an unregistered name), lower when the name ends as a cost does (``latency_ms``, ``total_cost``,
    ``prompt_tokens``: see LOWER_IS_BETTER_SUFFIXES), else higher."""
    spec = lookup(name)
    if spec is not None:
        return spec.direction
    return Direction.LOWER if name.lower().endswith(LOWER_IS_BETTER_SUFFIXES) else Direction.HIGHER


def closest(name: str, candidates: list[str], cutoff: float = 0.5) -> str | None:
    """Suggest the candidate nearest to a misspelt name (similarity at least ``cutoff``)."""
    matches = difflib.get_close_matches(name, candidates, n=1, cutoff=cutoff)
    return matches[0] if matches else None


def did_you_mean(name: str, candidates: list[str], template: str = "{}") -> str:
    """Return '; did you mean "x"?' for the nearest candidate (shown through ``template``), or ''."""
    hint = closest(name, candidates)
    return f"; did you mean {quote(template.format(hint))}?" if hint else ""
