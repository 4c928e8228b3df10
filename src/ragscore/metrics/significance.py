"""Paired significance tests for two runs' per-question values, as scipy computes them.

Each test takes the questions both runs have a value for and their differences d = candidate −
baseline, and gives a statistic, a two-sided p-value and an effect size:

- ``paired_t``: Student's t on the differences (``scipy.stats.ttest_rel``); effect: Cohen's d of
  the differences (mean over standard deviation, n − 1).
- ``wilcoxon``: the signed-rank test (``scipy.stats.wilcoxon`` with its defaults: zero
  differences dropped, "auto" method): the exact distribution when there are at most 50
  differences, none zero and no ties; an exact sign-flip permutation of the rank sum when there
  are at most 13 but ties or zeros; otherwise the normal approximation with the tie correction
  and no continuity correction. Statistic: the smaller rank sum; effect: the matched-pairs
  rank-biserial correlation (R+ − R−) / (R+ + R−).
- ``sign_test``: the exact binomial test of positive against negative differences, zeros dropped
  (``scipy.stats.binomtest(k, n, 0.5)``: statistic k / n); effect: positive minus negative, over n.
- ``permutation``: the sign-flip randomization test of the mean difference (``scipy.stats.
  permutation_test`` with ``permutation_type="samples"``): exact over all 2^n sign vectors when
  at most 17 differences are nonzero, else a seeded Monte Carlo of ``resamples`` sign vectors (the
  run's --bootstrap in compare), whose p-value (count + 1) /
  (resamples + 1) comes with its standard error. Sums are compared exactly on a grid of 1e-12
  (``_grid``). Effect: Cohen's d, as for the t-test.

Everything is standard library: the t distribution through the regularized incomplete beta
function (a continued fraction), the exact distributions in integers.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from collections.abc import Sequence
from typing import Final, NamedTuple

EXACT_PERMUTATION_MAX: Final = 17  # 2^17 sign vectors: enumerated; beyond, sampled
WILCOXON_EXACT_MAX: Final = 50     # scipy's "auto": the exact distribution up to 50 differences
WILCOXON_PERMUTATION_MAX: Final = 13  # ... and a sign-flip permutation up to 13 with ties or zeros


class TestResult(NamedTuple):
    """One paired test: statistic, two-sided p-value, effect size and how the p-value was found."""

    statistic: float | None
    p_value: float | None
    effect: float | None
    n: int                 # pairs tested (for wilcoxon and sign: the nonzero differences)
    method: str            # "t", "exact", "permutation", "normal", "monte carlo"
    p_se: float | None = None  # the Monte Carlo p-value's standard error


def differences(base: Sequence[float | None], cand: Sequence[float | None]) -> list[float]:
    """The differences candidate − baseline of the questions both runs have a value for (None or NaN: none)."""
    return [c - b for b, c in zip(base, cand, strict=True) if b is not None and c is not None and b == b and c == c]


# --- the t distribution ----------------------------------------------------------------------------


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz), for x < (a+1)/(a+b+2)."""
    tiny, eps = 1e-300, 1e-16
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        step = d * c
        h *= step
        if abs(step - 1.0) < eps:
            break
    return h


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def betainc(a: float, b: float, x: float, y: float | None = None) -> float:
    """The regularized incomplete beta function I_x(a, b); ``y`` = 1 − x when it is known more
    exactly than 1 − x can be computed (x near 1)."""
    y = 1.0 - x if y is None else y
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    log_front = a * math.log(x) + b * math.log(y) - _log_beta(a, b)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, y) / b


def t_two_sided(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    t2 = t * t
    return betainc(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2))


# --- the tests -------------------------------------------------------------------------------------


def _mean_sd(d: Sequence[float]) -> tuple[float, float]:
    n = len(d)
    mean = math.fsum(d) / n
    var = math.fsum((x - mean) ** 2 for x in d) / (n - 1)
    return mean, math.sqrt(var)


def paired_t(d: Sequence[float]) -> TestResult:
    """Student's paired t-test of the differences (``scipy.stats.ttest_rel``)."""
    n = len(d)
    if n < 2:
        return TestResult(None, None, None, n, "t")
    mean, sd = _mean_sd(d)
    if sd == 0.0:  # no spread: scipy gives NaN (or ±inf when the mean is not 0)
        return TestResult(None, None, None, n, "t")
    t = mean / (sd / math.sqrt(n))
    return TestResult(t, t_two_sided(t, n - 1), mean / sd, n, "t")


def _ranks(values: Sequence[float]) -> tuple[list[float], list[int]]:
    """Average ranks (from 1) of the values, and the sizes of their tie groups."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    groups = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        groups.append(j - i + 1)
        i = j + 1
    return ranks, groups


def _wilcoxon_counts(n: int) -> list[int]:
    """How many of the 2^n sign vectors give each rank sum 0 .. n(n+1)/2 (ranks 1 .. n, no ties)."""
    counts = [1] + [0] * (n * (n + 1) // 2)
    for rank in range(1, n + 1):
        for total in range(len(counts) - 1, rank - 1, -1):
            counts[total] += counts[total - rank]
    return counts


def wilcoxon(d: Sequence[float]) -> TestResult:
    """The Wilcoxon signed-rank test of the differences, as ``scipy.stats.wilcoxon`` with its defaults."""
    nonzero = [x for x in d if x != 0]
    n = len(nonzero)
    if not n:
        return TestResult(None, None, None, 0, "exact")
    ranks, groups = _ranks([abs(x) for x in nonzero])
    r_plus = math.fsum(r for r, x in zip(ranks, nonzero, strict=True) if x > 0)
    r_minus = math.fsum(r for r, x in zip(ranks, nonzero, strict=True) if x < 0)
    statistic = min(r_plus, r_minus)
    effect = (r_plus - r_minus) / (r_plus + r_minus)
    ties = any(g > 1 for g in groups)
    zeros = len(d) - n
    if len(d) <= WILCOXON_EXACT_MAX and not ties and not zeros:
        counts = _wilcoxon_counts(n)
        total = 2**n
        k = int(r_plus)  # an integer without ties
        p = 2 * min(sum(counts[k:]), sum(counts[: k + 1])) / total
        return TestResult(statistic, min(p, 1.0), effect, n, "exact")
    if len(d) <= WILCOXON_PERMUTATION_MAX:
        # Every sign vector of the nonzero differences (a zero's sign changes nothing), rank sums
        # in half-units, exactly; scipy counts each of the 2^(zeros) copies alike.
        doubled = [round(2 * r) for r in ranks]
        observed = round(2 * r_plus)
        sums = [0]
        for r in doubled:
            sums = sums + [s + r for s in sums]
        less = sum(s <= observed for s in sums)
        greater = sum(s >= observed for s in sums)
        p = 2 * min(less, greater) / len(sums)
        return TestResult(statistic, min(p, 1.0), effect, n, "permutation")
    mean = n * (n + 1) / 4
    se = math.sqrt((n * (n + 1) * (2 * n + 1) - sum(g**3 - g for g in groups) / 2) / 24)
    z = (r_plus - mean) / se
    return TestResult(statistic, math.erfc(abs(z) / math.sqrt(2)), effect, n, "normal")


def sign_test(d: Sequence[float]) -> TestResult:
    """The exact sign test: positive against negative differences, zeros dropped (``binomtest(k, n)``)."""
    from ragscore.metrics.stats import mcnemar_exact  # the same binomial test, in linear time

    positive = sum(x > 0 for x in d)
    n = positive + sum(x < 0 for x in d)
    if not n:
        return TestResult(None, None, None, 0, "exact")
    # Statistic: binomtest's, the share of positive differences; effect: positive minus negative, over n.
    return TestResult(positive / n, mcnemar_exact(n - positive, positive), 2 * positive / n - 1, n, "exact")


GRID: Final = 10**12  # differences are compared on a grid of 1e-12: decimal scores tie as they should


def _grid(d: Sequence[float]) -> list[int]:
    """The differences in units of 1e-12, so that sums of them compare exactly: 0.1 + 0.2 and 0.3
    differ as doubles, but are the same change of a score (scipy compares its floating sums within
    100 ulps of the observed one instead, which splits such ties when the observed sum is near 0)."""
    return [round(x * GRID) for x in d]


def _subset_sums(chunk: Sequence[int]) -> list[int]:
    """The sum of each subset of up to 8 values, indexed by the byte whose bits choose them."""
    sums = [0]
    for value in chunk:
        sums += [s + value for s in sums]
    return sums + [0] * (256 - len(sums)) if len(sums) < 256 else sums


def permutation(d: Sequence[float], seed: str = "0", resamples: int = 9999) -> TestResult:
    """The sign-flip randomization test of the mean difference: exact when at most 17 differences
    are nonzero (a zero's sign changes nothing: each doubles every count alike), else sampled."""
    n = len(d)
    if n < 1:
        return TestResult(None, None, None, 0, "exact")
    mean = math.fsum(d) / n
    effect = None
    if n >= 2:
        _, sd = _mean_sd(d)
        effect = mean / sd if sd else None
    ints = _grid(d)
    observed = sum(ints)
    nonzero = [x for x in ints if x]
    if len(nonzero) <= EXACT_PERMUTATION_MAX:
        # Every sign vector by Gray code: one sign changes at each step, so the sum moves by 2·d_i.
        total, less, greater = observed, 0, 0
        signs = [1] * len(nonzero)
        for step in range(2 ** len(nonzero)):
            less += total <= observed
            greater += total >= observed
            if step + 1 < 2 ** len(nonzero):
                i = ((step + 1) & -(step + 1)).bit_length() - 1
                total -= 2 * signs[i] * nonzero[i]
                signs[i] = -signs[i]
        p = 2 * min(less, greater) / 2 ** len(nonzero)
        return TestResult(mean, min(p, 1.0), effect, n, "exact")
    rng = random.Random(int.from_bytes(hashlib.sha256(f"ragscore-permutation:{seed}".encode()).digest()[:8], "big"))
    # A sign vector's sum, without a loop over the differences: the m differences of one magnitude
    # a add a·(2·B − m), B ~ Binomial(m, 1/2), the count of set bits of m random ones; differences
    # of a magnitude of their own add 2·(the + ones' sum) − (their sum), the + ones' sum read byte
    # by byte from tables of every byte's 256 subsets.
    magnitudes = Counter(abs(x) for x in nonzero)
    shared = [(a, m) for a, m in sorted(magnitudes.items()) if m > 1]
    single = sorted(a for a, m in magnitudes.items() if m == 1)
    tables = [_subset_sums(single[start : start + 8]) for start in range(0, len(single), 8)]
    width, bits, everything = len(tables), len(single), sum(single)
    less = greater = 0
    for _ in range(resamples):
        total = sum(a * (2 * rng.getrandbits(m).bit_count() - m) for a, m in shared)
        if bits:
            chosen = rng.getrandbits(bits).to_bytes(width, "little")
            total += 2 * sum(map(list.__getitem__, tables, chosen)) - everything
        less += total <= observed
        greater += total >= observed
    tail = min(less + 1, greater + 1) / (resamples + 1)  # the smaller one-sided share; p is twice it
    p = min(1.0, 2 * tail)
    return TestResult(mean, p, effect, n, "monte carlo", 2 * math.sqrt(tail * (1 - tail) / resamples))


TESTS: Final = {"t": paired_t, "wilcoxon": wilcoxon, "sign": sign_test}
