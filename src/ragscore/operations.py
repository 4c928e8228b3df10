"""Operational metrics read from the traces when they carry them: latency, tokens and cost.

A trace may say how long it took (``latency_ms``; ``latency`` in seconds; ``duration_ms``; or
``start_time`` and ``end_time``, epoch seconds or ISO 8601), how many tokens it used
(``usage.prompt_tokens`` or ``usage.input_tokens``, ``usage.completion_tokens`` or
``usage.output_tokens``, or the same names at the top level) and what it cost (``cost`` or
``cost_usd``). Each question counts its (last) trace's values; a question whose trace lacks a
field is counted as missing, never as 0, and a value that is not a non-negative number is
counted as bad (and missing).

Latency quantiles are exact in one process and with ``--jobs``: ``statistics.quantiles(method=
"inclusive")``, numpy's default "linear" percentile. A partial result, written to be merged on
another machine, carries a mergeable sketch in their place (``Sketch``: each quantile within 1%
of the exact one, relative), and a report merged from partials says so (``operations.quantiles``).
Means, totals and the maximum are exact either way.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from ragscore.loaders.times import between_ms, instant, zoned
from ragscore.metrics.moments import Moments, summarise

CONCEPTS: Final = ("latency_ms", "tokens_in", "tokens_out", "cost")
# Where each concept is read, in order, and the factor that turns it into the concept's unit.
_SOURCES: Final[dict[str, tuple[tuple[tuple[str, ...], float], ...]]] = {
    "latency_ms": ((("latency_ms",), 1.0), (("latency",), 1000.0), (("duration_ms",), 1.0)),
    "tokens_in": ((("usage", "prompt_tokens"), 1.0), (("usage", "input_tokens"), 1.0), (("prompt_tokens",), 1.0),
                  (("input_tokens",), 1.0)),
    "tokens_out": ((("usage", "completion_tokens"), 1.0), (("usage", "output_tokens"), 1.0),
                   (("completion_tokens",), 1.0), (("output_tokens",), 1.0)),
    "cost": ((("cost",), 1.0), (("cost_usd",), 1.0)),
}
# The top-level keys any of them starts at: a trace without one of them is skipped at once.
RECORD_KEYS: Final = frozenset(
    {path[0] for sources in _SOURCES.values() for path, _ in sources} | {"start_time", "end_time"})
QUANTILES: Final = (50, 90, 95, 99)
EXACT: Final = "exact"
SKETCHED: Final = "sketch (each within 1% of the exact quantile)"
_LARGEST: Final = 1e15  # as for scores: far beyond any latency, token count or cost, and every sum stays finite


def _number(value: object) -> float | None:
    """A non-negative number of at most 1e15 as a float; None for anything else (bool, NaN, text)."""
    if type(value) is int:
        return float(value) if 0 <= value <= _LARGEST else None
    if type(value) is float:
        return value if 0 <= value <= _LARGEST else None
    return None


def read(record: Mapping[str, object]) -> tuple[tuple[float, ...], int]:
    """Read a trace's operational values (NaN where it has none) and count the fields it has that are unreadable."""
    out = []
    bad = 0
    for concept in CONCEPTS:
        value = math.nan
        present = False
        for path, factor in _SOURCES[concept]:
            found: object = record
            for step in path:
                if not isinstance(found, dict):  # "usage": "n/a": found, and not a number
                    break
                found = found.get(step)
            if found is None:
                continue
            present = True  # the first field present is read: a bad one is not replaced by the next
            number = _number(found)
            if number is None or number * factor > _LARGEST:  # seconds are checked as milliseconds
                bad += 1
            else:
                value = number * factor
            break
        # Both times, or no latency: a start alone is when the trace ran (ragscore monitor reads it so).
        if concept == "latency_ms" and not present and "start_time" in record and "end_time" in record:
            start_at, end_at = record.get("start_time"), record.get("end_time")
            start, end = instant(start_at), instant(end_at)
            if (start is None or end is None or end < start or (end - start) * 1000.0 > _LARGEST
                    or zoned(start_at) != zoned(end_at)):  # a time with an offset and one without: unknown
                bad += 1
            else:
                value = between_ms(start_at, end_at, start, end)
        out.append(value)
    return tuple(out), bad


@dataclass(slots=True)
class OperationColumns:
    """Each question's operational values while a part's traces are read (NaN: none yet)."""

    questions: int
    values: list[array[float]] = field(default_factory=list)
    bad: array[int] = field(default_factory=lambda: array("B"))  # unreadable fields of each question's trace
    seen: bool = False  # some trace had an operational field
    sampled: bool = False  # repeats = "samples": every trace line's values count (one slot per sample)

    def put(self, position: int, record: Mapping[str, object]) -> None:
        """Store a trace's values (a later trace line for the question replaces them all, unless
        each line is a sample of it: then each line's are kept)."""
        if not self.seen:  # allocated at the first trace that has one
            size = 0 if self.sampled else self.questions
            self.values = [array("d", [math.nan]) * size for _ in CONCEPTS]
            self.bad = array("B", [0]) * size
            self.seen = True
        values, bad = read(record)
        if self.sampled:
            self.bad.append(bad)
            for column, value in zip(self.values, values, strict=True):
                column.append(value)
            return
        self.bad[position] = bad
        for column, value in zip(self.values, values, strict=True):
            column[position] = value

    def clear(self, position: int) -> None:
        """Forget a question's values (a later trace line replaces the one that gave them)."""
        if self.seen:
            self.bad[position] = 0
            for column in self.values:
                column[position] = math.nan

    def totals(self, traced: int) -> Operations | None:
        """Summarise the part: exact values of latency, exact sums of the rest (None when no trace had any)."""
        if not self.seen:
            return None
        present = [array("d", (v for v in column if v == v)) for column in self.values]
        sums = [summarise([column], (False,))[0] for column in present]
        return Operations(traced, sum(self.bad), tuple(sums), present[0], None)


def _between(value_at: Callable[[int], float], n: int, percent: int) -> float:
    """The percentile of n ordered values (``value_at(rank)``, 0-based): at position (n - 1) p / 100,
    interpolated linearly, as ``statistics.quantiles(method="inclusive")`` and numpy's default
    place it; the position is found in integers, and equal neighbours give their value exactly."""
    j, delta = divmod((n - 1) * percent, 100)
    a = value_at(j)
    if not delta:
        return a
    b = value_at(j + 1)
    return a if a == b else a + (b - a) * delta / 100


class Sketch:
    """A relative-error quantile sketch (DDSketch's logarithmic buckets): values in
    (γ^(i-1), γ^i] share bucket i, γ = 1.01 / 0.99, and a quantile is read as 2 γ^i / (γ + 1),
    within 1% of any value of its bucket; zeros are counted apart. Buckets add up exactly."""

    GAMMA: Final = 1.01 / 0.99
    _LOG_GAMMA: Final = math.log(1.01 / 0.99)

    __slots__ = ("buckets", "zeros")

    def __init__(self, buckets: Mapping[int, int] | None = None, zeros: int = 0) -> None:
        self.buckets: dict[int, int] = dict(buckets or {})
        self.zeros = zeros

    @classmethod
    def of(cls, values: Iterable[float]) -> Sketch:
        """Sketch non-negative values."""
        sketch = cls()
        log, scale = math.log, cls._LOG_GAMMA
        for value in values:
            if value > 0:
                index = math.ceil(log(value) / scale)
                sketch.buckets[index] = sketch.buckets.get(index, 0) + 1
            else:
                sketch.zeros += 1
        return sketch

    def __add__(self, other: Sketch) -> Sketch:
        buckets = dict(self.buckets)
        for index, count in other.buckets.items():
            buckets[index] = buckets.get(index, 0) + count
        return Sketch(buckets, self.zeros + other.zeros)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sketch) and (self.zeros, self.buckets) == (other.zeros, other.buckets)

    def __hash__(self) -> int:
        return hash((self.zeros, tuple(sorted(self.buckets.items()))))

    @property
    def count(self) -> int:
        """How many values the sketch holds."""
        return self.zeros + sum(self.buckets.values())

    def _value(self, rank: int, order: Sequence[int]) -> float:
        """The value of the rank-th smallest (0-based)."""
        if rank < self.zeros:
            return 0.0
        seen = self.zeros
        for index in order:
            seen += self.buckets[index]
            if rank < seen:
                return 2.0 * self.GAMMA**index / (self.GAMMA + 1.0)
        raise IndexError(rank)

    def quantiles(self, percents: Sequence[int]) -> list[float]:
        """Each percentile, interpolated between ranks as numpy's default and statistics' "inclusive" do."""
        order = sorted(self.buckets)
        return [_between(lambda rank: self._value(rank, order), self.count, percent) for percent in percents]


@dataclass(frozen=True, slots=True)
class Operations:
    """A part's (or a run's) operational values: exact sums of each concept; latency exactly (one
    machine) or as a sketch (merged from partials)."""

    traced: int  # questions with a trace
    bad: int
    sums: tuple[Moments, ...]  # per concept: count, exact sum, least and greatest
    latencies: array[float] | None  # every latency, exact (None: merged from sketches)
    sketch: Sketch | None  # the latencies sketched (None: exact values are kept)

    @classmethod
    def none(cls, traced: int) -> Operations:
        """The operations of a part whose traces carry none (each of its traced questions lacks them all)."""
        return cls(traced, 0, tuple(Moments() for _ in CONCEPTS), array("d"), None)

    def __add__(self, other: Operations) -> Operations:
        sums = tuple(a + b for a, b in zip(self.sums, other.sums, strict=True))
        if self.latencies is not None and other.latencies is not None:
            return Operations(self.traced + other.traced, self.bad + other.bad, sums,
                              self.latencies + other.latencies, None)
        return Operations(self.traced + other.traced, self.bad + other.bad, sums, None,
                          self.sketched() + other.sketched())

    def sketched(self) -> Sketch:
        """The latencies as a sketch (made from the exact values when they are kept)."""
        if self.sketch is not None:
            return self.sketch
        assert self.latencies is not None
        return Sketch.of(self.latencies)

    @property
    def method(self) -> str:
        """How the latency quantiles are computed."""
        return EXACT if self.latencies is not None else SKETCHED

    def metrics(self) -> dict[str, float | None]:
        """Every operational metric (None where no question has the value)."""
        latency, tokens_in, tokens_out, cost = self.sums
        out: dict[str, float | None] = dict.fromkeys(f"latency_p{q}" for q in QUANTILES)
        if latency.n:
            if self.latencies is not None:
                ordered = sorted(self.latencies)
                out.update((f"latency_p{q}", _between(ordered.__getitem__, len(ordered), q)) for q in QUANTILES)
            else:
                # Within the exact least and greatest latency: a bucket's value may lie 1% past them.
                quantiles = (min(max(v, latency.low), latency.high) for v in self.sketched().quantiles(QUANTILES))
                out.update(zip((f"latency_p{q}" for q in QUANTILES), quantiles, strict=True))
        out["latency_max"] = latency.high if latency.n else None
        out["latency_mean"] = latency.mean()
        out["tokens_in_mean"] = tokens_in.mean()
        out["tokens_out_mean"] = tokens_out.mean()
        out["tokens_total"] = tokens_in.fsum + tokens_out.fsum if tokens_in.n or tokens_out.n else None
        out["cost_total"] = cost.fsum if cost.n else None
        out["cost_mean"] = cost.mean()
        return out

    def counts(self) -> dict[str, dict[str, int]]:
        """Per concept: the questions with a value, and the traced questions without one."""
        return {concept: {"questions": m.n, "missing": self.traced - m.n} for concept, m in zip(CONCEPTS, self.sums,
                                                                                                strict=True)}
