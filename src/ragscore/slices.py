"""Slices: every metric again for the questions that share a value of a gold field (``--by``).

A slice's totals are built from the per-question rows with the same tallies and family columns
as the whole run, so a slice's precision is computed exactly as the run's is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ragscore.evaluate import Evaluation
from ragscore.gates import Gate, GateResult, Status, evaluate_gates
from ragscore.external import exact_mean
from ragscore.intervals import Interval, intervals_of, mean_interval
from ragscore.loaders.gold import NONE
from ragscore.metrics.answer import AnswerTally
from ragscore.metrics.families import Columns, enabled

@dataclass(slots=True)
class Slice:
    """The questions of one slice, added up."""

    tally: AnswerTally = field(default_factory=AnswerTally)
    family_rows: list[list[Sequence[float]]] = field(default_factory=list)
    n: int = 0
    scores: dict[str, list[float]] = field(default_factory=dict)  # external scores, by name


@dataclass(frozen=True, slots=True)
class SliceResult:
    """A slice's size, metrics, intervals and gates."""

    n: int
    metrics: dict[str, float | None]
    intervals: dict[str, Interval]
    gates: list[GateResult]
    small: bool  # fewer questions than min_n: its gates are skipped


def build_slices(
    ev: Evaluation, paths: Sequence[str], gates: Iterable[Gate], min_n: int
) -> dict[str, dict[str, SliceResult]]:
    """Group the questions by each path's labels; total, interval and gate each group."""
    settings = ev.settings
    families = list(enabled(settings.families))
    gates = tuple(gates)
    out: dict[str, dict[str, SliceResult]] = {}
    for index, path in enumerate(paths):
        groups: dict[str, Slice] = {}
        for row in ev.rows or ():
            for label in row.slices[index]:
                group = groups.setdefault(label, Slice(family_rows=[[] for _ in families]))
                group.n += 1
                group.tally.add(row.outcome, row.answerable)
                for rows, family_row in zip(group.family_rows, row.family_rows):
                    if family_row is not None:
                        rows.append(family_row)
                for name, value in row.scores.items():
                    group.scores.setdefault(name, []).append(value)
        results = {}
        for label in sorted(groups, key=lambda value: (value == NONE, value)):
            group = groups[label]
            columns = []
            for family, rows in zip(families, group.family_rows):
                c = Columns(family.width(settings))
                for family_row in rows:
                    c.values.extend(family_row)
                columns.append(c)
            metrics = group.tally.metrics(settings)
            for family, c in zip(families, columns):
                metrics.update(family.summarise(c, settings))
            intervals = intervals_of(settings, group.tally, columns)
            for name in ev.scores:  # scores from other evaluators, in the run's order
                values = group.scores.get(name, [])
                metrics[name] = exact_mean(values) if values else None
                intervals[name] = mean_interval(name, values, settings)
            metrics["missing"] = group.tally.missing
            small = group.n < min_n
            checked = evaluate_gates(gates, metrics, settings.strict)
            if small:
                checked = [GateResult(r.gate, r.value, Status.SKIPPED) for r in checked]
            results[label] = SliceResult(group.n, metrics, intervals, checked, small)
        out[path] = results
    return out
