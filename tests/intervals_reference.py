"""Obviously-correct restatements of the intervals of a mean, for the tests to compare with.

Slow on purpose: exact rational arithmetic, one replicate and one question at a time, and the
weights restated from their definition rather than ragscore's table.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from fractions import Fraction
from statistics import NormalDist


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """numpy.percentile's default: rank h = (N - 1) q, linear between floor(h) and floor(h) + 1."""
    h = (len(sorted_values) - 1) * q
    lo = int(h)
    if lo + 1 >= len(sorted_values):
        return sorted_values[-1]
    return sorted_values[lo] + (h - lo) * (sorted_values[lo + 1] - sorted_values[lo])


def poisson_weight(byte: int) -> int:
    """Poisson(1) in 256ths: 94 byte values weigh 0, 95 weigh 1, 46 weigh 2, 16 weigh 3, 4 weigh 4, 1 weighs 5."""
    for weight, upto in enumerate((94, 94 + 95, 94 + 95 + 46, 94 + 95 + 46 + 16, 255)):
        if byte < upto:
            return weight
    return 5


def poisson_bootstrap(values: Sequence[float], qids: Sequence[str], confidence: float, resamples: int,
                      seed: str) -> tuple[float, float]:
    """The Poisson bootstrap's percentile interval, one replicate at a time, in exact arithmetic."""
    raw = seed.encode()
    streams = [hashlib.shake_256(b"ragscore-poisson:" + str(len(raw)).encode() + b":" + raw + q.encode()).digest(resamples)
               for q in qids]
    means = []
    for r in range(resamples):
        weights = [poisson_weight(stream[r]) for stream in streams]
        if sum(weights):
            means.append(float(sum(w * Fraction(x) for w, x in zip(weights, values, strict=True)) / sum(weights)))
    if not means:
        mean = math.fsum(values) / len(values)
        return mean, mean
    means.sort()
    low, high = percentile(means, (1 - confidence) / 2), percentile(means, (1 + confidence) / 2)
    return min(max(low, min(values)), max(values)), min(max(high, min(values)), max(values))


def normal(values: Sequence[float], confidence: float) -> tuple[float, float]:
    """mean ± z s / sqrt(n), the sample variance computed exactly and rounded once."""
    n = len(values)
    mean = math.fsum(values) / n
    if n == 1:
        return mean, mean
    exact_mean = sum(map(Fraction, values)) / n
    variance = float(sum((Fraction(x) - exact_mean) ** 2 for x in values) / (n - 1))
    half = NormalDist().inv_cdf(1 - (1 - confidence) / 2) * math.sqrt(variance) / math.sqrt(n)
    return mean - half, mean + half


def multinomial_bootstrap(values: Sequence[float], confidence: float, resamples: int, seed: str) -> tuple[float, float]:
    """ragscore 0.1's bootstrap: n draws with replacement per resample (random.Random(seed)), the
    percentile interval of the resampled means; it needs every value in one place."""
    rng = random.Random(seed)
    n = len(values)
    means = sorted(math.fsum(rng.choices(values, k=n)) / n for _ in range(resamples))
    return percentile(means, (1 - confidence) / 2), percentile(means, (1 + confidence) / 2)
