"""Confidence intervals and significance tests for scores, in pure standard-library Python.

Definitions (fixed, because reports must be byte-identical for the same seed):

* Wilson score interval: scipy's ``binomtest(k, n).proportion_ci(c, method="wilson")``
  formula (Newcombe 1998, no continuity correction), with the low end exactly 0.0 when
  k == 0 and the high end exactly 1.0 when k == n; no other clipping.
* Paired bootstrap resample: ``rng.choices(range(n), k=n)`` with ``rng = random.Random(seed)``,
  i.e. index ``floor(rng.random() * n)`` per draw, n draws per resample, resamples drawn
  one after another from the same generator. (A single run's intervals use the mergeable
  Poisson bootstrap of ``moments`` instead.)
* Percentile: numpy.percentile's default ("linear"): position h = (R - 1) * q in the sorted
  values, interpolated linearly between ranks floor(h) and floor(h) + 1.
* Paired bootstrap p-value: min(1, 2 * (min(#deltas <= 0, #deltas >= 0) + 1) / (kept + 1)),
  over the resamples kept (those where neither statistic is None); the +1 keeps it above 0.
* Paired normal approximation (many questions): a run's metric is a ratio mean
  R = sum(y) / sum(x) over the n questions (x_i = 1 where the metric counts question i, y_i its
  value there, both 0 elsewhere). Linearised, question i contributes
  z_i = (y_i - R x_i) / (sum(x) / n); the change's standard error is that of the n paired
  differences d_i = z_i(candidate) - z_i(baseline), whose mean is exactly 0:
  se = sqrt(sum(d_i^2) / ((n - 1) n)). sum(d_i^2) is expanded into sums over the questions
  (``PairSums``) and evaluated in exact rational arithmetic; interval delta ± z se, two-sided
  p-value 2 (1 - Phi(|delta| / se)).
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from statistics import NormalDist
from typing import Final, NamedTuple, TypeVar

__all__ = [
    "holm",
    "mcnemar_exact",
    "PairSums",
    "paired_bootstrap",
    "paired_normal",
    "percentile_interval",
    "resampling_is_cheap",
    "wilson_interval",
    "z_value",
]

# Above this many questions times resamples a bootstrap takes seconds in pure Python: beyond it,
# intervals use the normal approximation.
RESAMPLING_BUDGET = 2_000_000

# Stop summing binomial terms once the rest is provably below 2**-TAIL_BITS of the sum:
# far below a double's resolution, so the rounded p-value is that of the exact sum.
TAIL_BITS = 64


def _check_confidence(confidence: float) -> None:
    """Reject a confidence level outside the open interval (0, 1)."""
    if not 0.0 < confidence < 1.0:  # also rejects NaN
        raise ValueError(f"confidence must be between 0 and 1 (exclusive), got {confidence!r}")


def _check_resamples(resamples: int) -> None:
    """Reject a resample count below one."""
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples!r}")


@functools.cache
def z_value(confidence: float) -> float:
    """Return the two-sided standard normal quantile for a confidence level (remembered: slices ask often)."""
    _check_confidence(confidence)
    tail = (1.0 - confidence) / 2.0
    upper = 1.0 - tail
    # Past 1 - 2**-54 the upper quantile's argument rounds to 1, inv_cdf's pole: the lower tail is exact there.
    return NormalDist().inv_cdf(upper) if upper < 1.0 else -NormalDist().inv_cdf(tail)


def wilson_interval(successes: int, trials: int, confidence: float) -> tuple[float, float]:
    """Return the Wilson score interval of successes out of trials."""
    if trials <= 0:
        raise ValueError(f"trials must be positive, got {trials!r}")
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be between 0 and trials ({trials}), got {successes!r}")
    z = z_value(confidence)
    # The same arithmetic, in the same order, as scipy's _binom_wilson_conf_int, so that
    # results agree to the last few ulps rather than merely to the formula.
    p = successes / trials
    q = 1.0 - p
    denom = 2.0 * (trials + z**2)
    center = (2.0 * trials * p + z**2) / denom
    delta = z / denom * math.sqrt(4.0 * trials * p * q + z**2)
    # At k == 0 (k == n) the formula gives 0 (1) only up to rounding; scipy pins them exactly.
    low = 0.0 if successes == 0 else center - delta
    high = 1.0 if successes == trials else center + delta
    return low, high


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """Return the q-quantile (0 <= q <= 1) of sorted values with numpy's linear interpolation."""
    h = (len(sorted_values) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    a = sorted_values[lo]
    b = sorted_values[hi]
    # a + (b - a) * t returns a exactly when a == b, so ties never drift by an ulp.
    return a + (b - a) * (h - lo)


def percentile_interval(sorted_values: Sequence[float], confidence: float) -> tuple[float, float]:
    """Return the central percentile interval of sorted values."""
    return (
        _percentile(sorted_values, (1.0 - confidence) / 2.0),
        _percentile(sorted_values, (1.0 + confidence) / 2.0),
    )


def resampling_is_cheap(n: int, resamples: int) -> bool:
    """Return whether a bootstrap of n values with this many resamples fits the time budget."""
    return n * resamples <= RESAMPLING_BUDGET


def _binomial_tail_sum(k: int, n: int) -> int:
    """Return sum of comb(n, i) for i <= k, for k < n / 2, exact up to 2**-TAIL_BITS relative."""
    # Summed downward from the largest term: the ratio of consecutive terms is at most
    # r = k / (n - k + 1) < 1, so what is left after term t is at most t * r / (1 - r)
    # = t * k / (n - 2k + 1); stop once that is provably below 2**-TAIL_BITS of the sum.
    term = math.comb(n, k)
    total = 0
    i = k
    while term:
        total += term
        if (term * k) << TAIL_BITS < total * (n - 2 * k + 1):
            break
        # comb(n, i - 1) = comb(n, i) * i / (n - i + 1), an exact integer division.
        term = term * i // (n - i + 1)
        i -= 1
    return total


def _binomial_middle_sum(k: int, n: int) -> int:
    """Return sum of comb(n, i) for k < i < n - k, exactly."""
    total = 0
    term = math.comb(n, k + 1)
    for i in range(k + 1, n - k):
        total += term
        # comb(n, i + 1) = comb(n, i) * (n - i) / (i + 1), an exact integer division.
        term = term * (n - i) // (i + 1)
    return total


def mcnemar_exact(broken: int, fixed: int) -> float:
    """Return the exact two-sided McNemar p-value for the discordant counts."""
    if broken < 0 or fixed < 0:
        raise ValueError(f"counts must be non-negative, got broken={broken!r}, fixed={fixed!r}")
    n = broken + fixed
    k = min(broken, fixed)
    if 2 * k >= n - 1:
        # b == c, or |b - c| == 1 where the two middle outcomes are the mode: every outcome is
        # at most as likely as the observed one (scipy's rule), so the p-value is 1 (also 0/0).
        return 1.0
    # Under H0 the count is Binomial(n, 1/2), symmetric, and its pmf rises strictly up to the
    # mode (consecutive ratios differ from 1 by far more than scipy's 1e-7 tolerance for
    # n <= 10**6), so the outcomes no more likely than k are exactly i <= k and i >= n - k:
    # p = 2 * sum(comb(n, i), i <= k) / 2**n = (2**n - sum(comb(n, i), k < i < n - k)) / 2**n.
    # Sum whichever side takes fewer big-integer steps: the tail converges geometrically
    # (about TAIL_BITS * k / (n - 2k) terms), the middle has n - 2k - 1 terms.
    middle_terms = n - 2 * k - 1
    tail_terms = TAIL_BITS * k // (n - 2 * k + 1) + 1
    if middle_terms < tail_terms:
        numerator = (1 << n) - _binomial_middle_sum(k, n)
        # int / int is correctly rounded in Python even when both are huge.
        return min(1.0, numerator / (1 << n))
    return min(1.0, _binomial_tail_sum(k, n) / (1 << (n - 1)))


def holm(p_values: Sequence[float]) -> list[float]:
    """Return Holm-Bonferroni step-down adjusted p-values in the input order."""
    for p in p_values:
        if not 0.0 <= p <= 1.0:  # also rejects NaN
            raise ValueError(f"p-values must be between 0 and 1, got {p!r}")
    m = len(p_values)
    # sorted() is stable, so ties keep their input order (their adjusted values are equal anyway).
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        # The running maximum makes the adjusted values monotone in the raw ones.
        running = max(running, (m - rank) * p_values[index])
        adjusted[index] = min(1.0, running)
    return adjusted


def bonferroni(p_values: Sequence[float]) -> list[float]:
    """Return Bonferroni-adjusted p-values: each times their count, at most 1."""
    return [min(1.0, p * len(p_values)) for p in p_values]


def uncorrected(p_values: Sequence[float]) -> list[float]:
    """Return the p-values as they are (no correction across metrics)."""
    return list(p_values)


CORRECTIONS: Final[dict[str, Callable[[Sequence[float]], list[float]]]] = {
    "holm": holm, "bonferroni": bonferroni, "none": uncorrected,
}


T = TypeVar("T")  # a per-question value as paired_bootstrap's statistic reads it


def paired_bootstrap(
    baseline: Sequence[T],
    candidate: Sequence[T],
    statistic: Callable[[Sequence[T]], float | None],
    confidence: float,
    resamples: int,
    seed: str,
    groups: Sequence[Sequence[int]] | None = None,
) -> tuple[tuple[float, float] | None, float | None]:
    """Return the percentile interval and two-sided p-value of statistic(candidate) - statistic(baseline);
    ``groups`` (indices of the values, each value in one): whole groups are resampled, as sessions are."""
    n = len(baseline)
    if n != len(candidate):
        raise ValueError(f"baseline and candidate differ in length: {n} != {len(candidate)}")
    if n == 0:
        raise ValueError("values must not be empty")
    _check_confidence(confidence)
    _check_resamples(resamples)
    rng = random.Random(seed)
    indices = range(n)
    deltas: list[float] = []
    for _ in range(resamples):
        # The same question indices for both runs: that pairing is what makes the test paired.
        if groups is None:
            sample = rng.choices(indices, k=n)
        else:
            sample = [i for g in rng.choices(groups, k=len(groups)) for i in g]
        before = statistic([baseline[i] for i in sample])
        after = statistic([candidate[i] for i in sample])
        # A statistic can be undefined on a resample (e.g. no relevant item drawn); skip it.
        if before is None or after is None:
            continue
        deltas.append(after - before)
    if not deltas:
        return None, None
    deltas.sort()
    at_most_zero = sum(1 for d in deltas if d <= 0.0)
    at_least_zero = sum(1 for d in deltas if d >= 0.0)
    # (count + 1) / (resamples + 1): a finite resample cannot show p = 0, and Holm needs p > 0.
    p_value = min(1.0, 2.0 * (min(at_most_zero, at_least_zero) + 1) / (len(deltas) + 1))
    return percentile_interval(deltas, confidence), p_value


class PairSums(NamedTuple):
    """Sums over the questions of two runs' values of one metric: all the paired normal test needs.

    ``x`` is 1 where a run counts a question and 0 elsewhere, ``y`` its value there (0 elsewhere);
    ``b`` is the baseline, ``c`` the candidate. Integers when every value is 0 or 1 (exact);
    otherwise sums of floats with ``math.fsum``, so independent of the order of the questions.
    """

    n: int
    xb: int
    yb: float
    yb2: float
    xc: int
    yc: float
    yc2: float
    ybyc: float
    ybxc: float
    xbyc: float
    xbxc: int

    @classmethod
    def of(cls, baseline: Sequence[float | None], candidate: Sequence[float | None]) -> PairSums:
        """Sum paired per-question values (None or NaN: the run does not count the question)."""
        if len(baseline) != len(candidate):
            raise ValueError(f"baseline and candidate differ in length: {len(baseline)} != {len(candidate)}")
        pairs = [(_counted(b), _counted(c)) for b, c in zip(baseline, candidate, strict=True)]
        fsum = math.fsum
        return cls(
            len(pairs),
            sum(b is not None for b, _ in pairs),
            fsum(b for b, _ in pairs if b is not None),
            fsum(b * b for b, _ in pairs if b is not None),
            sum(c is not None for _, c in pairs),
            fsum(c for _, c in pairs if c is not None),
            fsum(c * c for _, c in pairs if c is not None),
            fsum(b * c for b, c in pairs if b is not None and c is not None),
            fsum(b for b, c in pairs if b is not None and c is not None),
            fsum(c for b, c in pairs if b is not None and c is not None),
            sum(b is not None and c is not None for b, c in pairs),
        )

    @classmethod
    def of_counts(cls, pairs: Iterable[tuple[int | None, int | None, int]]) -> PairSums:
        """Sum 0/1 values given as (baseline value, candidate value, how many questions) groups."""
        totals = [0] * 11
        for b, c, times in pairs:
            both = b is not None and c is not None
            terms = (
                1,
                b is not None, b or 0, b or 0,
                c is not None, c or 0, c or 0,
                (b or 0) * (c or 0) if both else 0, (b or 0) if both else 0, (c or 0) if both else 0, both,
            )
            for i, term in enumerate(terms):
                totals[i] += int(term) * times
        return cls(*totals)


def _counted(value: float | None) -> float | None:
    return None if value is None or value != value else value  # NaN marks "not counted" in arrays


def paired_normal(
    sums: PairSums, delta: float, confidence: float
) -> tuple[tuple[float, float] | None, float | None]:
    """Return the normal interval and two-sided p-value of a change ``delta`` of a ratio mean.

    None when there is no spread to estimate: fewer than two questions, or a run counting none.
    """
    _check_confidence(confidence)
    n = sums.n
    if n < 2 or not sums.xb or not sums.xc:
        return None, None
    q = Fraction
    rb, rc = q(sums.yb) / sums.xb, q(sums.yc) / sums.xc
    mb, mc = q(sums.xb, n), q(sums.xc, n)  # the share of questions each run counts
    # sum((y - R x)^2) = sum(y^2) - 2 R sum(y) + R^2 sum(x) = sum(y^2) - R sum(y)
    own_b = (q(sums.yb2) - rb * q(sums.yb)) / (mb * mb)
    own_c = (q(sums.yc2) - rc * q(sums.yc)) / (mc * mc)
    cross = (q(sums.ybyc) - rb * q(sums.xbyc) - rc * q(sums.ybxc) + rb * rc * sums.xbxc) / (mb * mc)
    squares = max(own_b + own_c - 2 * cross, q(0))  # >= 0 exactly, up to the float sums' rounding
    se = math.sqrt(squares / ((n - 1) * n))
    if se == 0:
        return (delta, delta), (1.0 if delta == 0 else 0.0)
    half = z_value(confidence) * se
    p_value = 2 * (1 - NormalDist().cdf(abs(delta) / se))
    return (delta - half, delta + half), min(1.0, p_value)
