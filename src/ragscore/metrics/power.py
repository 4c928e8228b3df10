"""How many questions a paired comparison needs: power, the minimum detectable change, sample size.

A change δ of a metric between two runs is tested on the questions' paired differences, whose
standard deviation is σ. With n questions, at significance α (two-sided) the normal test detects
it with power

    power(δ) = Φ(δ √n / σ − z) + Φ(−δ √n / σ − z),  z = Φ⁻¹(1 − α / 2),

which is statsmodels' ``NormalIndPower`` with ``ratio=0`` (a one-sample test of the differences).
The minimum detectable change at a power (0.8 by default) solves power(δ) = target for δ; the
questions needed to detect a change solve it for n (rounded up). σ comes from two runs' paired
differences when there are two (for a rate, σ² = ψ − δ², ψ the share of discordant questions),
or from one run's per-question values s as σ = s √2: the next run's errors taken as independent
of this one's, which overstates σ when runs agree (the usual case), so the figures err on the
side of more questions.

At a confidence so near 1 that 1 − α/2 rounds to 1 (0.9999999999999999), z is read from the lower
tail, −Φ⁻¹(α/2), which a float still holds. A change so small that it needs more than 10³⁰⁰
questions is a usage error: no count of questions means anything there, and a float would overflow.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Final

from ragscore.errors import UsageError

_NORMAL = NormalDist()
_MOST_QUESTIONS: Final = 1e300  # the search's bounds stay finite below this


def _z(alpha: float) -> float:
    upper = 1 - alpha / 2
    # Past 1 - 2**-54 the upper quantile's argument rounds to 1, inv_cdf's pole: the lower tail is exact there.
    return _NORMAL.inv_cdf(upper) if upper < 1 else -_NORMAL.inv_cdf(alpha / 2)


def power(delta: float, sigma: float, n: float, alpha: float) -> float:
    """The chance that a two-sided paired test at ``alpha`` detects a change ``delta`` with n questions."""
    if sigma <= 0 or n <= 0:
        return 1.0 if delta else alpha
    shift, z = abs(delta) * math.sqrt(n) / sigma, _z(alpha)
    return _NORMAL.cdf(shift - z) + _NORMAL.cdf(-shift - z)


def _solve(f: object, low: float, high: float) -> float:
    """The root of an increasing function between low and high, by bisection to the last bit."""
    assert callable(f)
    while high - low > 1e-15 * max(1.0, abs(high)):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if f(middle) < 0:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def detectable(sigma: float, n: int, alpha: float, target: float = 0.8) -> float | None:
    """The smallest change detected with power ``target`` (None without spread or questions)."""
    if sigma <= 0 or n < 2:
        return None
    guess = (_z(alpha) + _NORMAL.inv_cdf(target)) * sigma / math.sqrt(n)  # below 0 for a power under alpha
    # No change at all is detected with power alpha: under that the answer is 0, never a negative change.
    return _solve(lambda d: power(d, sigma, n, alpha) - target, 0.0, max(2 * guess + sigma, sigma))


def needed(delta: float, sigma: float, alpha: float, target: float = 0.8) -> float | None:
    """The questions needed (fractional; round up) to detect ``delta`` with power ``target``; a change that
    needs more than 10**300 is a UsageError."""
    if sigma <= 0 or delta == 0:
        return None
    shift = _z(alpha) + _NORMAL.inv_cdf(target)  # at or below 0 (a power under alpha), any size does
    root = min(abs(shift) * sigma / abs(delta), math.sqrt(_MOST_QUESTIONS))  # the division is inf for 5e-324
    if shift > 0 and root == math.sqrt(_MOST_QUESTIONS):
        raise UsageError(f"a change of {delta:g} is too small to detect: it needs more than 1e+300 questions "
                         "(give a larger --detect or [regression] bound)")
    guess = root ** 2
    return _solve(lambda n: power(delta, sigma, n, alpha) - target, 1e-9, 4 * guess + 10)


def spread_of_one_run(values: list[float]) -> float | None:
    """σ of the paired differences with a run like this one, its errors independent: s √2."""
    n = len(values)
    if n < 2:
        return None
    mean = math.fsum(values) / n
    return math.sqrt(2 * math.fsum((v - mean) ** 2 for v in values) / (n - 1))


def spread_of_differences(d: list[float]) -> float | None:
    """σ of observed paired differences (for a 0/1 rate, √(ψ − δ²) up to n/(n − 1))."""
    n = len(d)
    if n < 2:
        return None
    mean = math.fsum(d) / n
    return math.sqrt(math.fsum((x - mean) ** 2 for x in d) / (n - 1))
