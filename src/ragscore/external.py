"""Scores from other evaluators, per question: the trace's "scores" object and ``--scores`` files.

Each score name becomes a metric: the mean over the questions that have a value. A null (or
NaN, or an empty cell) is skipped and counted; a question with no value at all is not counted.
A value from a ``--scores`` file replaces the trace's value of the same name.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from ragscore.errors import InputError
from ragscore.loaders.jsonl import describe
from ragscore.loaders.scores import MAX_NAMES, MAX_SCORE, too_large
from ragscore.metrics import METRICS
from ragscore.metrics.moments import Moments, exact_mean
from ragscore.metrics.names import score_name_problem
from ragscore.metrics.registry import SCORES as FAMILY

if TYPE_CHECKING:
    from ragscore.loaders.gold import GoldItem
    from ragscore.loaders.scores import ScoreFile

_NULL: Final = -math.inf  # a value given as null: skipped, and counted as such (scores are finite)

# The common names (declared in ragscore.metrics): known to gates before any input is read, and
# described in reports. Any other name a score may have works as well (see name_problem).
KNOWN: Final = frozenset(METRICS.names(FAMILY))


@dataclass(slots=True)
class ScoreColumns:
    """One part's external scores by name, one slot per question (NaN: no value)."""

    questions: int
    values: dict[str, array[float]] = field(default_factory=dict)
    first_lines: dict[str, int] = field(default_factory=dict)  # the trace line that named each score first
    # repeats = "samples": every trace line's values are kept by name and question (``average``)
    sampled: bool = False
    samples: dict[str, dict[int, list[float]]] = field(default_factory=dict)

    def _column(self, name: str) -> array[float]:
        column = self.values.get(name)
        if column is None:
            column = self.values[name] = array("d", [math.nan]) * self.questions
        return column

    def clear(self, position: int) -> None:
        """Forget a question's values (a later trace line replaces the one that gave them)."""
        for column in self.values.values():
            column[position] = math.nan

    def put_trace(self, position: int, scores: object, source: str, line: int) -> None:
        """Store a trace's "scores" object (a later trace line for the question replaces it)."""
        if type(scores) is not dict:
            raise InputError(
                source, f'expected "scores" to be an object of score names and numbers, got {describe(scores)}', line
            )
        for name, value in scores.items():
            if name not in self.first_lines:
                problem = name_problem(name, self.sampled)
                if problem is not None:
                    raise InputError(source, f'"scores": {problem}', line)
                self.first_lines[name] = line
            if name not in self.values and len(self.values) >= MAX_NAMES:
                continue  # too many names: check_name_count reports it once every part is done
            if value is None:
                column = self._column(name)
                if not self.sampled or column[position] != column[position]:  # NaN: no value yet
                    column[position] = _NULL
                continue
            if type(value) is int and abs(value) > MAX_SCORE:
                raise InputError(source, f'expected "scores.{name}" to be at most {MAX_SCORE:g} in magnitude, got an '
                                         f"integer of {len(str(abs(value)))} digits", line)
            if type(value) not in (int, float) or not math.isfinite(value):
                raise InputError(
                    source, f'expected "scores.{name}" to be a number or null, got {describe(value)}', line
                )
            if abs(value) > MAX_SCORE:
                raise InputError(source, f'expected "scores.{name}" to be {too_large(value)}', line)
            if self.sampled:
                self._column(name)  # the name is known from now on
                self.samples.setdefault(name, {}).setdefault(position, []).append(value)
            else:
                self._column(name)[position] = value

    def average(self) -> None:
        """Give each question the mean of its samples' values, from their exact sum (repeats = "samples";
        a sample's null is skipped, and a question with only nulls has a null)."""
        for name, questions in self.samples.items():
            column = self.values[name]
            for position, values in questions.items():
                column[position] = exact_mean(values)

    def put_file(self, items: Sequence[GoldItem], scores: ScoreFile) -> list[str]:
        """Join a scores file's rows to these questions; return the keys that matched.

        A value replaces the trace's value of the same name; a null (or empty cell) does not,
        and counts as a null only where the question has no value at all.
        """
        matched = []
        by_question: dict[str, list[int]] = {}
        if scores.join == "question":
            for position, item in enumerate(items):
                by_question.setdefault(item.question or "", []).append(position)
        for position, item in enumerate(items):
            key = item.qid if scores.join == "qid" else (item.question or "")
            row = scores.rows.get(key)
            if row is None:
                continue
            if scores.join == "question" and len(by_question[key]) > 1:
                qids = ", ".join(items[p].qid for p in by_question[key][:5])
                raise InputError(scores.source, f"the question text matches {len(by_question[key])} gold items "
                                                f"({qids}); join the scores on a qid column instead", row.line)
            matched.append(row.key)
            for name, value in row.values.items():
                column = self._column(name)
                if value is not None:
                    column[position] = value
                elif column[position] != column[position]:  # NaN: no value yet
                    column[position] = _NULL
        return matched

    def finish(self) -> dict[str, tuple[array[float], int]]:
        """Turn nulls into gaps; return each name's per-question values and how many were null."""
        out = {}
        for name in sorted(self.values):
            column = self.values[name]
            nulls = column.count(_NULL)
            if nulls:
                column = array("d", (math.nan if v == _NULL else v for v in column))
            out[name] = (column, nulls)
        return out


@dataclass(frozen=True, slots=True)
class ScoreTotals:
    """A score's counted values, summarised exactly (merged over parts), and its nulls."""

    values: Moments = Moments()
    nulls: int = 0

    def __add__(self, other: ScoreTotals) -> ScoreTotals:
        return ScoreTotals(self.values + other.values, self.nulls + other.nulls)

    @property
    def mean(self) -> float | None:
        """The metric: the mean of the counted values, correctly rounded (None when none is counted).

        Exact, so that three questions scoring 0.7 average 0.7 (fsum / 3 gives 0.6999999999999998)
        and a rule or gate at 0.7 stays quiet.
        """
        return self.values.mean()


def check_name_count(first_lines: Sequence[Mapping[str, int]], file_names: Sequence[str], source: str) -> None:
    """Refuse more than MAX_NAMES score names in a run, naming the trace line of the first one too many.

    Each part reports the line where it first met each name; the earliest counts, so the error is
    the same however the run was split. A --scores file's names come first.
    """
    first: dict[str, tuple[int, int]] = {}  # name -> (line, its place among the names of that line's part)
    for part in first_lines:
        for index, (name, line) in enumerate(part.items()):
            first[name] = min((line, index), first.get(name, (line, index)))
    names = list(dict.fromkeys([*file_names, *sorted(first, key=first.__getitem__)]))
    if len(names) > MAX_NAMES:
        extra = names[MAX_NAMES]
        raise InputError(source, f'"scores": more than {MAX_NAMES} different score names in one run (one column is '
                                 f"kept per name and question): {describe(extra)}",
                         first[extra][0] if extra in first else None)


def name_problem(name: str, sampled: bool = False, monitored: bool = False) -> str | None:
    """Say why a score name cannot be a metric's name, or None when it can: the one rule, which
    gates follow too (``ragscore.metrics.names.score_name_problem``; ``sampled``: the run
    computes the metrics of repeated samples, whose names are taken then; ``monitored``: monitor's)."""
    return score_name_problem(name, sampled, monitored)


def merge_totals(parts: Sequence[Mapping[str, ScoreTotals]]) -> dict[str, ScoreTotals]:
    """Add the parts' totals up, by name, names sorted."""
    merged: dict[str, ScoreTotals] = {}
    for part in parts:
        for name, t in part.items():
            merged[name] = merged[name] + t if name in merged else t
    return dict(sorted(merged.items()))

