"""Repeated samples of a question (``repeats = "samples"``): pass@k, pass^k, consistency, and
every answer metric as a mean over a question's samples.

Every trace line of a question is one sample of it; a question without a trace is one sample,
judged MISSING_TRACE, as it is without samples. Per question: its samples n, the correct ones c
(labelled OK or REFUSAL_OK), the count of each label, and each answer metric's mean over the
samples it counts (precision over the answered samples, ...). The run's answer metrics are the
means of those per-question means over the questions that have one, each question weighted
equally, so a question answered 10 times weighs what a question answered once does. With one
sample per question every metric is what it is without samples.

``pass@k`` is the unbiased estimator of Chen et al. (2021), 1 - C(n - c, k) / C(n, k): the chance
that at least one of k samples drawn without replacement from the question's n is correct.
``pass^k`` is τ-bench's C(c, k) / C(n, k): the chance that all k are. Both are averaged over
the questions with at least k samples; the others are counted (``RepeatTotals.short``).
``consistency`` and ``flip_rate`` count questions with at least two samples.

``Repeats`` holds a part's questions while its traces are read, in memory bounded by its gold
items (sums and counts, not samples); ``RepeatTotals`` is what is left once the part is done:
exact summaries (``metrics.moments``) that add up across parts.
"""

from __future__ import annotations

import heapq
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import compress
from math import comb
from typing import Final, NamedTuple

from ragscore.labels import LABEL_ORDER, PASSING_LABELS
from ragscore.metrics import METRICS
from ragscore.metrics.answer import answer_metric_names, question_values, unpack
from ragscore.metrics.moments import Moments, exact_mean, summarise
from ragscore.numbers import holds
from ragscore.settings import Settings

FAMILY: Final = "repeats"
EXAMPLES: Final = 20  # questions listed below min_pass_rate (all are counted)
_LABELS: Final = len(LABEL_ORDER)
_PASSING: Final = tuple(LABEL_ORDER.index(label) for label in PASSING_LABELS)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Give 1 - C(n - c, k) / C(n, k), correctly rounded (integers, one division); needs n >= k."""
    total = comb(n, k)
    return (total - comb(n - c, k)) / total


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Give C(c, k) / C(n, k), correctly rounded; needs n >= k."""
    return comb(c, k) / comb(n, k)


def repeat_metric_names(settings: Settings) -> tuple[str, ...]:
    """Name the metrics of repeated samples (none unless ``repeats = "samples"``), in report order."""
    return METRICS.names(FAMILY, settings.pass_k) if settings.sampled else ()


def _mean_names(settings: Settings) -> tuple[str, ...]:
    """The repeat metrics that are means of per-question values (all but min_pass_rate)."""
    return tuple(name for name in repeat_metric_names(settings) if name != "min_pass_rate")


class QuestionSamples(NamedTuple):
    """One question's samples, as a per-question report shows them."""

    n: int
    correct: int
    labels: tuple[int, ...]            # samples of each label, in LABEL_ORDER
    answer: tuple[float | None, ...]   # each answer metric's mean over the samples it counts
    repeats: tuple[float | None, ...]  # pass@k..., pass^k..., consistency, flip_rate (None: too few samples)

    @property
    def pass_rate(self) -> float:
        """The share of the question's samples that are correct."""
        return self.correct / self.n


def question_repeats(n: int, c: int, labels: Sequence[int], pass_k: Sequence[int]) -> tuple[float | None, ...]:
    """Give a question's pass@k for each k, pass^k for each k, consistency and flip rate."""
    at = tuple(pass_at_k(n, c, k) if n >= k else None for k in pass_k)
    hat = tuple(pass_hat_k(n, c, k) if n >= k else None for k in pass_k)
    if n < 2:
        return (*at, *hat, None, None)
    return (*at, *hat, float(max(labels) == n), float(0 < c < n))


_NO_SAMPLE: Final = 0xFFFF  # no sample yet (packed codes use 14 bits with run_bits)


@dataclass(slots=True)
class Repeats:
    """A part's questions' samples while its traces are read: each question's packed outcomes (its
    first in an array, the rest in lists) and citation shares.

    A question's answer values depend only on the multiset of its codes (and its shares), so they
    are worked out once per distinct multiset: most questions share one with many others.
    """

    settings: Settings
    first: array[int]
    more: dict[int, list[int]] = field(default_factory=dict)     # the codes of a question's later samples
    shares: dict[int, list[float]] = field(default_factory=dict)  # each question's citation shares

    @classmethod
    def of(cls, questions: int, settings: Settings) -> Repeats:
        """Allocate for ``questions`` gold items."""
        return cls(settings, array("H", [_NO_SAMPLE]) * questions)

    def add(self, position: int, code: int, share: float | None) -> None:
        """Count one sample of the question at ``position``: its packed outcome and citation share."""
        if self.first[position] == _NO_SAMPLE:
            self.first[position] = code
        else:
            more = self.more.get(position)
            if more is None:
                self.more[position] = [code]
            else:
                more.append(code)
        if share is not None:
            shares = self.shares.get(position)
            if shares is None:
                self.shares[position] = [share]
            else:
                shares.append(share)

    def codes(self) -> Counter[int]:
        """Every sample's packed outcome, counted (``AnswerTally`` adds them up: its counts are of samples)."""
        codes = Counter(self.first)
        for more in self.more.values():
            codes.update(more)
        return codes

    def questions(self) -> list[QuestionSamples]:
        """Give every question's samples, once they are all counted (each question has one at least)."""
        names = answer_metric_names(self.settings)
        share_at = names.index("citation_precision")
        values: dict[int, tuple[float | None, ...]] = {}
        profiles: dict[tuple[int, ...], QuestionSamples] = {}
        out = []
        more, shares = self.more, self.shares
        for position, first in enumerate(self.first):
            codes = (first, *sorted(more[position])) if position in more else (first,)
            q = profiles.get(codes)
            if q is None:
                q = profiles[codes] = self._profile(codes, values)
            if position in shares:  # the one value the codes do not hold, averaged exactly
                answer = q.answer
                q = q._replace(answer=(*answer[:share_at], exact_mean(shares[position]), *answer[share_at + 1 :]))
            out.append(q)
        return out

    def _profile(self, codes: tuple[int, ...], values: dict[int, tuple[float | None, ...]]) -> QuestionSamples:
        """Work out the samples of a question whose packed outcomes are ``codes``."""
        for code in codes:
            if code not in values:
                values[code] = question_values(*unpack(code), self.settings)
        n = len(codes)
        labels = [0] * _LABELS
        for code in codes:
            labels[code & 7] += 1
        correct = sum(labels[i] for i in _PASSING)
        answer = []
        for column in zip(*(values[code] for code in codes), strict=True):
            counted = [v for v in column if v is not None]
            # 0s and 1s add up exactly: one division is correctly rounded.
            answer.append(sum(counted) / len(counted) if counted else None)
        return QuestionSamples(n, correct, tuple(labels), tuple(answer),
                               question_repeats(n, correct, labels, self.settings.pass_k))


@dataclass(frozen=True, slots=True)
class Below:
    """A question with a given pass rate, as a list of the questions below a bound names it."""

    place: int  # the gold item's place, which orders them
    qid: str
    correct: int
    n: int


Rates = dict[tuple[int, int], tuple[int, tuple[Below, ...]]]  # (c, n) -> questions, the first EXAMPLES of them


@dataclass(slots=True)
class RepeatTotals:
    """What the run's metrics need of its questions' samples, summarised exactly: it adds up across parts.

    ``columns`` holds the answer metrics' then the repeat metrics' per-question values (see
    ``column_names``), each over the questions that have one. ``rates`` counts the questions of
    each (correct, samples) pair and keeps the first few of each in gold order: enough to name the
    lowest pass rate, and the questions below any bound a gate sets, after parts are merged.
    """

    columns: tuple[Moments, ...] = ()
    questions: int = 0
    samples: int = 0
    short: tuple[int, ...] = ()  # questions with fewer than k samples, for each k of pass_k
    single: int = 0              # questions with one sample (left out of consistency and flip_rate)
    rates: Rates = field(default_factory=dict)

    def __add__(self, other: RepeatTotals) -> RepeatTotals:
        if not other.questions:
            return self
        if not self.questions:
            return other
        rates = dict(self.rates)
        for pair, (count, first) in other.rates.items():
            mine = rates.get(pair)
            rates[pair] = (count, first) if mine is None else (
                mine[0] + count, tuple(heapq.nsmallest(EXAMPLES, (*mine[1], *first), key=_place)))
        return RepeatTotals(
            tuple(a + b for a, b in zip(self.columns, other.columns, strict=True)),
            self.questions + other.questions,
            self.samples + other.samples,
            tuple(a + b for a, b in zip(self.short, other.short, strict=True)),
            self.single + other.single,
            dict(sorted(rates.items())),
        )

    @property
    def lowest(self) -> Fraction | None:
        """The lowest pass rate of any question (None without questions)."""
        return min((Fraction(c, n) for c, n in self.rates), default=None)

    def below(self, op: str, threshold: float) -> tuple[int, tuple[Below, ...]]:
        """Count the questions whose pass rate fails ``rate op threshold`` (a min_pass_rate gate), and
        give the first EXAMPLES of them in gold order."""
        failing = [entry for (c, n), entry in self.rates.items() if not holds(c / n, op, threshold)]
        first = heapq.nsmallest(EXAMPLES, (b for _, examples in failing for b in examples), key=_place)
        return sum(count for count, _ in failing), tuple(first)

    def metrics(self, settings: Settings, answer_names: Sequence[str]) -> dict[str, float | None]:
        """Give the answer metrics (means over questions of per-question means), then the repeat metrics."""
        values = dict(zip(column_names(settings, answer_names), (m.mean() for m in self.columns), strict=True))
        lowest = self.lowest
        values["min_pass_rate"] = None if lowest is None else float(lowest)
        return values


def _place(below: Below) -> int:
    return below.place


def column_names(settings: Settings, answer_names: Sequence[str]) -> tuple[str, ...]:
    """Name ``RepeatTotals.columns`` in order: the answer metrics, then the repeat means."""
    return (*answer_names, *_mean_names(settings))


def summarise_questions(
    questions: Sequence[QuestionSamples], qids: Sequence[str], places: Sequence[int], settings: Settings,
    resample: bool, keys: Sequence[str] | None = None,
) -> RepeatTotals:
    """Summarise questions' samples (in gold order; ``resample``: keep the bootstrap replicates, each question's
    weights drawn by its ``keys`` entry, else by its qid)."""
    width = len(column_names(settings, answer_metric_names(settings)))
    sizes = Counter(q.n for q in questions)
    samples = sum(n * times for n, times in sizes.items())
    single = sizes.get(1, 0)
    short = [sum(times for n, times in sizes.items() if n < k) for k in settings.pass_k]
    counts: Counter[tuple[int, int]] = Counter()
    first: dict[tuple[int, int], list[Below]] = {}
    for position, q in enumerate(questions):
        pair = (q.correct, q.n)
        counts[pair] += 1
        listed = first.get(pair)
        if listed is None:
            first[pair] = [Below(places[position], qids[position], q.correct, q.n)]
        elif len(listed) < EXAMPLES:
            listed.append(Below(places[position], qids[position], q.correct, q.n))
    seed, resamples = settings.seed, settings.bootstrap
    moments = []
    columns = zip(*((*q.answer, *q.repeats) for q in questions), strict=True) if questions else [()] * width
    for column in columns:
        present = [v is not None for v in column]  # None: the question has no value
        drawn = list(compress(keys if keys is not None else qids, present)) if resample else None
        moments.append(summarise([array("d", compress(column, present))], (True,), drawn, seed, resamples)[0])
    rates = {pair: (counts[pair], tuple(first[pair])) for pair in sorted(counts)}
    return RepeatTotals(tuple(moments), len(questions), samples, tuple(short), single, rates)
