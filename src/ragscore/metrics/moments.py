"""Exact, mergeable summaries of a metric's per-question values, and the intervals made from them.

A ``Moments`` summarises one metric's values over some of the questions: how many, their sum and
sum of squares kept exactly (integers at one binary scale), the least and the greatest, and,
when the run's questions are few enough to resample (``resampling_is_cheap``), the sums of a
Poisson bootstrap. Summaries of disjoint sets of questions add up exactly, so a run split between
processes or machines (``--jobs``, partials) gives the bits of the run made in one process,
however its parts were grouped.

Poisson bootstrap. In replicate r, question q weighs w(q, r) = WEIGHTS[byte r of SHAKE-256(seed,
qid)]: 94 of the 256 byte values give 0, 95 give 1, 46 give 2, 16 give 3, 4 give 4 and 1 gives
5: each probability within 1.1/256 of Poisson(1)'s, with its mean and variance (both exactly 1;
the third central moment is 0.98 against 1). A replicate's mean is sum(w x) / sum(w) over the questions the
metric counts (a replicate that gives them all weight 0 is left out), and the interval is the
central percentile interval of the replicate means (numpy's default linear interpolation),
clamped to [least, greatest]. A question's weights depend on its qid alone, so each part sums
its own questions and the parts add up; 0.1's bootstrap, which drew n questions with
replacement, needed every value in one place.

Normal approximation (too many questions to resample): mean ± z s / sqrt(n), the variance
s² = (n Σx² − (Σx)²) / (n (n − 1)) computed exactly from the exact sums and rounded once; not
clamped, as the textbook interval is not (with few questions it may pass a metric's bounds).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import add, mul, sub
from typing import Final

from ragscore.metrics.stats import percentile_interval, resampling_is_cheap, z_value

__all__ = ["Moments", "Replicates", "WEIGHTS", "normal_interval", "poisson_interval", "summarise", "weights_of"]

# Byte value -> weight: Poisson(1) in 256ths (94/256 = 0.367 for 0 and 95/256 = 0.371 for 1,
# against e^-1 = 0.368; then 0.180, 0.0625, 0.0156, 0.0039), with mean 1 and variance 1 exactly.
WEIGHTS: Final = bytes([0] * 94 + [1] * 95 + [2] * 46 + [3] * 16 + [4] * 4 + [5])
_MAX_WEIGHT: Final = 5


def weights_of(seed: str, qid: str, resamples: int) -> bytes:
    """Give a question's weight in each replicate (one byte each, 0 to 5)."""
    return hashlib.shake_256(_prefix(seed) + _key(qid)).digest(resamples).translate(WEIGHTS)


def _prefix(seed: str) -> bytes:
    # The seed's length keeps (seed, qid) pairs apart: ("1", "2x") and ("12", "x") hash differently.
    raw = seed.encode("utf-8", "surrogatepass")
    return b"ragscore-poisson:%d:" % len(raw) + raw


def _key(qid: str) -> bytes:
    return qid.encode("utf-8", "surrogatepass")


def _trailing_zeros(x: int) -> int:
    """Count the zero bits below the lowest one (a large number for 0, which any scale fits)."""
    return (x & -x).bit_length() - 1 if x else 1 << 30


@dataclass(frozen=True, slots=True)
class Replicates:
    """A Poisson bootstrap's sums over some questions: per replicate, sum(w x) * 2**scale and sum(w)."""

    scale: int
    sums: tuple[int, ...]
    weights: tuple[int, ...]

    def __add__(self, other: Replicates) -> Replicates:
        scale = max(self.scale, other.scale)
        a, b = self._at(scale), other._at(scale)
        return Replicates(scale, tuple(map(add, a, b)), tuple(map(add, self.weights, other.weights)))._reduced()

    def _at(self, scale: int) -> tuple[int, ...]:
        shift = scale - self.scale
        return self.sums if not shift else tuple(s << shift for s in self.sums)

    def _reduced(self) -> Replicates:
        """Write the sums at the least scale that holds them (one form for one value, however it was added up)."""
        shift = min(self.scale, min(map(_trailing_zeros, self.sums), default=0))
        if shift <= 0:
            return self
        return Replicates(self.scale - shift, tuple(s >> shift for s in self.sums), self.weights)

    def means(self) -> list[float]:
        """Give each replicate's mean that has some weight, ascending (each correctly rounded)."""
        return sorted(s / (w << self.scale) for s, w in zip(self.sums, self.weights, strict=True) if w)


@dataclass(frozen=True, slots=True)
class Moments:
    """One metric's values over some questions, summarised exactly (see the module's docstring).

    ``total`` is their sum times 2**scale and ``squares`` the sum of their squares times
    2**(2 scale) (None when only the sum is kept: counts, corpus statistics).
    """

    n: int = 0
    scale: int = 0
    total: int = 0
    squares: int | None = None
    low: float = math.inf
    high: float = -math.inf
    replicates: Replicates | None = None

    def __add__(self, other: Moments) -> Moments:
        if not other.n:
            return self
        if not self.n:
            return other
        n = self.n + other.n
        scale = max(self.scale, other.scale)
        a, b = scale - self.scale, scale - other.scale
        squares = None
        if self.squares is not None and other.squares is not None:
            squares = (self.squares << 2 * a) + (other.squares << 2 * b)
        replicates = None
        if self.replicates is not None and other.replicates is not None and resampling_is_cheap(
                n, len(self.replicates.sums)):
            replicates = self.replicates + other.replicates
        return _reduced(n, scale, (self.total << a) + (other.total << b), squares, min(self.low, other.low),
                        max(self.high, other.high), replicates)

    @classmethod
    def total_of(cls, parts: Sequence[Moments]) -> Moments:
        """Add many summaries up."""
        out = cls()
        for part in parts:
            out = out + part
        return out

    @property
    def fsum(self) -> float:
        """The sum of the values, correctly rounded: what ``math.fsum`` gives (but 0.0 for -0.0)."""
        return self.total / (1 << self.scale)

    def mean(self) -> float | None:
        """The mean, correctly rounded from the exact sum (None when there is no value)."""
        return self.total / (self.n << self.scale) if self.n else None


def exact_mean(values: Sequence[float]) -> float:
    """The mean of a few finite floats, from their exact sum, correctly rounded once (0.7 three
    times averages 0.7; ``fsum / n`` gives 0.6999999999999998), whatever their order."""
    first = values[0]
    if all(v == first for v in values):
        return first
    ratios = [v.as_integer_ratio() for v in values]  # each denominator a power of two
    common = max(d for _, d in ratios)
    return sum(n * (common // d) for n, d in ratios) / (common * len(values))


def _reduced(n: int, scale: int, total: int, squares: int | None, low: float, high: float,
             replicates: Replicates | None) -> Moments:
    """Build a Moments at the least scale that holds its sums exactly."""
    shift = min(scale, _trailing_zeros(total), _trailing_zeros(squares) // 2 if squares is not None else scale)
    if shift > 0:
        scale -= shift
        total >>= shift
        squares = None if squares is None else squares >> 2 * shift
    return Moments(n, scale, total, squares, low, high, replicates)


def _exact(values: Sequence[float]) -> tuple[int, list[int]]:
    """Write finite floats as integers at one binary scale: values[i] == ints[i] * 2**-scale, exactly."""
    smallest = min(filter(None, map(abs, values)), default=0.0)
    if not smallest:
        return 0, [0] * len(values)
    # A double is an integer of at most 53 bits times 2**(e - 53), where frexp(x) = (m, e); every
    # exponent is at least the smallest value's, so 2**(53 - e_min) makes every value an integer.
    scale = max(0, 53 - math.frexp(smallest)[1])
    if math.frexp(max(map(abs, values)))[1] + scale <= 1024:  # no overflow on the way: at C speed
        return scale, list(map(int, map(math.ldexp, values, repeat(scale))))
    ratios = [v.as_integer_ratio() for v in values]  # values over some 970 binary orders apart
    scale = max(den.bit_length() - 1 for _, den in ratios)
    return scale, [num << (scale - den.bit_length() + 1) for num, den in ratios]


def summarise(
    columns: Sequence[Sequence[float]], spread: Sequence[bool], keys: Sequence[str] | None = None, seed: str = "0",
    resamples: int = 0,
) -> list[Moments]:
    """Summarise columns of finite values of the same questions (one value per question in each).

    ``spread[j]``: column j's mean gets an interval, so its squares are kept, and, when ``keys``
    (the questions' qids, in the columns' order) are given and few enough to resample
    (``resampling_is_cheap``), its Poisson bootstrap sums.
    """
    replicates: dict[int, Replicates] = {}
    if keys and any(spread) and resampling_is_cheap(len(keys), resamples):
        exact = {j: _exact(column) for j, column in enumerate(columns) if spread[j]}
        replicates = _replicate(exact, keys, seed, resamples)
    out = []
    for j, column in enumerate(columns):
        if not len(column):
            out.append(Moments())
            continue
        scale, total, squares, low, high = _sums(column, spread[j])
        # + 0.0 makes a zero +0.0, so that the least of -0.0 and 0.0 is one value whichever came first.
        out.append(_reduced(len(column), scale, total, squares, low + 0.0, high + 0.0, replicates.get(j)))
    return out


def _sums(values: Sequence[float], squares: bool) -> tuple[int, int, int | None, float, float]:
    """Give the scale, the sum and (when asked) the sum of squares of finite values at it, exactly,
    and the least and greatest value."""
    sample = values[:1024]
    if len(set(sample)) <= len(sample) - len(sample) // 8:
        # Values that repeat (most metrics: shares, ranks, counts, 0 and 1, nDCG of few grades):
        # each distinct value's multiplicity, counted at C speed, times the value, exactly.
        counts = Counter(values)
        distinct = list(counts)
        scale, ints = _exact(distinct)
        times = list(counts.values())
        total = sum(map(mul, ints, times))
        return (scale, total, sum(map(mul, map(mul, ints, ints), times)) if squares else None, min(distinct),
                max(distinct))
    scale, ints = _exact(values)
    return scale, sum(ints), sum(map(mul, ints, ints)) if squares else None, min(values), max(values)


def _replicate(
    exact: dict[int, tuple[int, list[int]]], keys: Sequence[str], seed: str, resamples: int
) -> dict[int, Replicates]:
    """Sum every column's Poisson bootstrap replicates at once.

    Each question's weights are packed into one integer, a lane of ``lane`` bytes per replicate,
    so that value * packed adds the value's weighted share to every replicate in one big-integer
    product. A lane holds up to 5 n times the column's largest value, so sums never carry into
    the next lane; negative values are summed apart and subtracted. Columns of like values share
    a lane width (and each question's packed weights).
    """
    headroom = (_MAX_WEIGHT * len(keys)).bit_length()
    lanes = {j: (max(map(abs, ints), default=0).bit_length() + headroom + 7) // 8 for j, (_, ints) in exact.items()}
    widths = sorted(set(lanes.values()))
    prefix = _prefix(seed)
    shake = hashlib.shake_256
    buffers = {lane: bytearray(lane * resamples) for lane in widths}
    positive, negative = dict.fromkeys(exact, 0), dict.fromkeys(exact, 0)
    weights = dict.fromkeys(widths, 0)
    for i, key in enumerate(keys):
        drawn = shake(prefix + _key(key)).digest(resamples).translate(WEIGHTS)
        packed = {}
        for lane, buffer in buffers.items():
            buffer[::lane] = drawn
            packed[lane] = int.from_bytes(buffer, "little")
            weights[lane] += packed[lane]
        for j, (_, ints) in exact.items():
            x = ints[i]
            if x > 0:
                positive[j] += x * packed[lanes[j]]
            elif x:
                negative[j] -= x * packed[lanes[j]]
    counts = _lanes(weights[widths[0]], widths[0], resamples)
    return {j: Replicates(scale, tuple(map(sub, _lanes(positive[j], lanes[j], resamples),
                                           _lanes(negative[j], lanes[j], resamples))), counts)._reduced()
            for j, (scale, _) in exact.items()}


def _lanes(packed: int, lane: int, count: int) -> tuple[int, ...]:
    """Unpack ``count`` lanes of ``lane`` bytes (little-endian) from one integer."""
    view = memoryview(packed.to_bytes(lane * count, "little"))
    return tuple(int.from_bytes(view[r * lane : (r + 1) * lane], "little") for r in range(count))


def normal_interval(m: Moments, confidence: float) -> tuple[float, float]:
    """The normal approximation's interval of the mean, mean ± z s / sqrt(n), not clamped (needs ``squares``)."""
    if not m.n or m.squares is None:
        raise ValueError("a normal interval needs values and their squares")
    mean = m.fsum / m.n
    if m.n == 1:  # no spread can be estimated from one value: the interval collapses to it
        return mean, mean
    # n Σx² − (Σx)² is exact here (both at scale 2 scale); one division rounds it.
    variance = (m.n * m.squares - m.total * m.total) / ((m.n * (m.n - 1)) << 2 * m.scale)
    half = z_value(confidence) * math.sqrt(variance) / math.sqrt(m.n)
    return mean - half, mean + half


def poisson_interval(m: Moments, confidence: float) -> tuple[float, float]:
    """The Poisson bootstrap's percentile interval of the mean (needs ``replicates``)."""
    if not m.n or m.replicates is None:
        raise ValueError("a bootstrap interval needs values and their replicates")
    means = m.replicates.means()
    if not means:  # every replicate weighed every question 0 (a handful of resamples of a question or two)
        mean = m.fsum / m.n
        return mean, mean
    low, high = percentile_interval(means, confidence)
    # A weighted mean lies in [least, greatest]; clamping removes the interpolation's rounding spill.
    return min(max(low, m.low), m.high), min(max(high, m.low), m.high)
