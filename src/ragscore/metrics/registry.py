"""The registry of metric names: direction, family and meaning, read by gates and reports.

``Registry`` holds specs declared once; ``ragscore.metrics`` declares the scorer's (so importing
this module, or anything that imports it, gives complete answers). The module-level functions
answer for that default registry.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Final


class Direction(StrEnum):
    """Which way a metric improves; a bare gate threshold is a minimum or a maximum by it."""

    HIGHER = "higher"
    LOWER = "lower"


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One metric name (``@K`` or ``^K`` marks a name computed for each cutoff K) and what it means."""

    name: str
    direction: Direction
    family: str
    description: str
    kind: str = "mean"  # "rate" (a count over a count), "mean" (of per-question values), "count", "corpus"
    cites: bool = False  # needs the traces' citations: undefined in a run where no answered trace cites anything

    @property
    def parametric(self) -> bool:
        """Tell whether the name carries a cutoff (``ndcg@K``, ``pass^K``)."""
        return self.name.endswith(("@K", "^K"))


_CUTOFF_RE: Final = re.compile(r"^(?P<stem>.+[@^])(?P<k>[1-9][0-9]*)$")


def split_cutoff(name: str) -> tuple[str, int | None]:
    """Split ``ndcg@10`` into (``ndcg@K``, 10) and ``pass^3`` into (``pass^K``, 3); other names
    come back with None."""
    match = _CUTOFF_RE.match(name)
    if match is None:
        return name, None
    return match.group("stem") + "K", int(match.group("k"))


# Names of scores from other evaluators that measure a cost: time, money, tokens. Unregistered
# names ending so (case-insensitive) are lower-is-better unless a [diagnose.NAME] direction says otherwise.
LOWER_IS_BETTER_SUFFIXES: Final = ("_ms", "_s", "_seconds", "latency", "cost", "_usd", "tokens")


class Registry:
    """Metric specs declared once, by name: what each family reports, in order, and what a name means.

    ``ragscore.metrics.METRICS`` holds the scorer's metrics; the stage commands hold theirs in
    another instance (``ragscore.stages.names.STAGE_METRICS``), so neither can gate the other's.
    """

    def __init__(self, specs: Iterable[MetricSpec], aliases: Mapping[str, str] | None = None) -> None:
        self._specs: dict[str, MetricSpec] = {}
        for spec in specs:
            if spec.name in self._specs:
                raise ValueError(f"metric {spec.name!r} declared twice")
            self._specs[spec.name] = spec
        self.aliases: Mapping[str, str] = MappingProxyType(dict(aliases or {}))
        for alias, target in self.aliases.items():
            if target not in self._specs:
                raise ValueError(f"alias {alias!r} of an undeclared metric {target!r}")
        self._names: dict[tuple[str, tuple[int, ...]], tuple[str, ...]] = {}

    def __iter__(self) -> Iterator[MetricSpec]:
        return iter(self._specs.values())

    def specs(self, family: str) -> tuple[MetricSpec, ...]:
        """Return a family's specs in declaration (report) order."""
        return tuple(spec for spec in self._specs.values() if spec.family == family)

    def names(self, family: str, cutoffs: Sequence[int] = ()) -> tuple[str, ...]:
        """Name a family's metrics in report order, a ``@K`` one once for each cutoff, in the order given."""
        key = (family, tuple(cutoffs))
        names = self._names.get(key)
        if names is None:
            names = self._names[key] = expand(self.specs(family), key[1])
        return names

    def lookup(self, name: str) -> MetricSpec | None:
        """Find the spec of a concrete metric name (``full_recall@5`` finds ``full_recall@K``)."""
        spec = self._specs.get(name)
        if spec is not None:
            return None if spec.parametric else spec  # "ndcg@K" itself names no metric
        template, k = split_cutoff(name)
        spec = self._specs.get(template) if k is not None else None
        return spec if spec is not None and spec.parametric else None

    def owner(self, name: str) -> MetricSpec | None:
        """Find the metric whose name ``name`` is, or would be with another suffix after its ``@``
        (``ndcg@10``, ``ndcg@K`` and ``ndcg@v2`` all belong to ``ndcg@K``)."""
        spec = self._specs.get(name)
        if spec is not None:
            return spec
        stem, at, _ = name.rpartition("@")
        spec = self._specs.get(stem + "@K") if at else None
        return spec if spec is not None and spec.parametric else None

    def citing(self) -> frozenset[str]:
        """Name the metrics that need the traces' citations (concrete names: none is computed per cutoff)."""
        return frozenset(spec.name for spec in self._specs.values() if spec.cites and not spec.parametric)

    def direction_of(self, name: str) -> Direction:
        """Say which way a metric improves: its declared direction; for another evaluator's score
        (an undeclared name), lower when the name ends as a cost does (``latency_ms``, ``total_cost``,
        ``prompt_tokens``: see LOWER_IS_BETTER_SUFFIXES), else higher."""
        spec = self.lookup(name)
        if spec is not None:
            return spec.direction
        return Direction.LOWER if name.lower().endswith(LOWER_IS_BETTER_SUFFIXES) else Direction.HIGHER


def expand(specs: Iterable[MetricSpec], cutoffs: Sequence[int]) -> tuple[str, ...]:
    """Name the concrete metrics of ``specs``, in order: a ``@K`` one once for each cutoff."""
    return tuple(
        name for spec in specs
        for name in ((spec.name[:-1] + str(k) for k in cutoffs) if spec.parametric else (spec.name,))
    )


SCORES: Final = "scores"  # the family of the common names of scores from other evaluators
REPEATS: Final = "repeats"  # metrics of repeated samples: their names are taken only in a run that has them
# Families whose names a score may still have where they are not computed: a run without samples
# knows no consistency, and score runs none of monitor's (answer_length is an evaluator's name too).
CONDITIONAL: Final = frozenset({REPEATS, "monitor"})
