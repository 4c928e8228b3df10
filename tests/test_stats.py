"""ragscore.metrics.stats: fixed scipy/statsmodels vectors, hand tables, bootstrap determinism, scipy on random inputs."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intervals_reference import percentile
from ragscore.metrics.stats import (
    holm,
    mcnemar_exact,
    paired_bootstrap,
    percentile_interval,
    resampling_is_cheap,
    wilson_interval,
    z_value,
)

VECTORS: dict[str, Any] = json.loads((Path(__file__).parent / "data" / "stats_vectors.json").read_text("utf-8"))
TOL = 1e-9


# --- fixed vectors (tests/data/make_stats_vectors.py, scipy + statsmodels) -----------------------


@pytest.mark.parametrize("case", VECTORS["wilson"], ids=lambda c: f"{c['k']}/{c['n']}@{c['confidence']}")
def test_wilson_vectors(case: dict[str, Any]) -> None:
    low, high = wilson_interval(case["k"], case["n"], case["confidence"])
    assert low == pytest.approx(case["low"], abs=TOL, rel=0)
    assert high == pytest.approx(case["high"], abs=TOL, rel=0)


@pytest.mark.parametrize("case", VECTORS["mcnemar"], ids=lambda c: f"{c['broken']}/{c['fixed']}")
def test_mcnemar_vectors(case: dict[str, Any]) -> None:
    assert mcnemar_exact(case["broken"], case["fixed"]) == pytest.approx(case["p_value"], abs=TOL, rel=0)


@pytest.mark.parametrize("case", VECTORS["holm"], ids=lambda c: repr(c["p_values"]))
def test_holm_vectors(case: dict[str, Any]) -> None:
    assert holm(case["p_values"]) == pytest.approx(case["adjusted"], abs=TOL, rel=0)


# --- hand-computed tables --------------------------------------------------------------------------

HOLM_TABLE = [
    # m = 4; ascending 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04;
    # running max 0.02, 0.03, 0.06, 0.06; back in input order:
    ([0.01, 0.04, 0.03, 0.005], [0.03, 0.06, 0.06, 0.02]),
    # ties: 0.02 * 3 = 0.06, 0.02 * 2 = 0.04 -> max 0.06, 0.02 * 1 -> max 0.06: all equal.
    ([0.02, 0.02, 0.02], [0.06, 0.06, 0.06]),
    # ascending 0.3, 0.5, 0.9 times 3, 2, 1 = 0.9, 1.0, 0.9; running max 0.9, 1.0, 1.0; cap 1.
    ([0.5, 0.3, 0.9], [1.0, 0.9, 1.0]),
    # near 1: 0.2 * 3 = 0.6, 0.25 * 2 = 0.5 -> max 0.6, 0.9 * 1 = 0.9.
    ([0.2, 0.25, 0.9], [0.6, 0.6, 0.9]),
    # 0.999 * 1 stays below the cap; 0.3 * 3 = 0.9, 0.4 * 2 = 0.8 -> max 0.9.
    ([0.3, 0.999, 0.4], [0.9, 0.999, 0.9]),
]


@pytest.mark.parametrize(("p_values", "expected"), HOLM_TABLE)
def test_holm_hand_table(p_values: list[float], expected: list[float]) -> None:
    assert holm(p_values) == pytest.approx(expected, abs=1e-12, rel=0)


def test_holm_edges() -> None:
    assert holm([]) == []
    assert holm([0.04]) == [0.04]
    with pytest.raises(ValueError):
        holm([0.5, 1.5])
    with pytest.raises(ValueError):
        holm([math.nan])


def test_z_value() -> None:
    assert z_value(0.95) == pytest.approx(1.959963984540054, abs=1e-12)
    assert z_value(0.9) == pytest.approx(1.6448536269514722, abs=1e-12)
    for bad in (0.0, 1.0, -0.1, 1.5, math.nan):
        with pytest.raises(ValueError):
            z_value(bad)


def test_z_value_next_to_one() -> None:
    # 1 - (1 - c) / 2 rounds to 1.0 (inv_cdf's pole) for the largest confidence below 1: the lower tail is exact there.
    from scipy.stats import norm

    assert z_value(0.9999999999999999) == pytest.approx(norm.isf((1 - 0.9999999999999999) / 2), rel=1e-9)
    for confidence in (0.999999999999999, 1 - 2**-40):  # short of the pole: scipy's own arithmetic
        assert z_value(confidence) == pytest.approx(norm.ppf(1 - (1 - confidence) / 2), rel=1e-12)
    # scipy's own Wilson interval is nan there (its z is inf); the formula with scipy's quantile:
    z, n, p = norm.isf((1 - 0.9999999999999999) / 2), 10, 0.3
    center, half = (n * p + z**2 / 2) / (n + z**2), z / (n + z**2) * math.sqrt(n * p * (1 - p) + z**2 / 4)
    assert wilson_interval(3, 10, 0.9999999999999999) == pytest.approx((center - half, center + half), rel=1e-9)


def test_wilson_rejects_bad_counts() -> None:
    for k, n in ((0, 0), (3, 2), (-1, 5)):
        with pytest.raises(ValueError):
            wilson_interval(k, n, 0.95)


def test_mcnemar_edges() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(4, 4) == 1.0
    # 0/5: both extreme outcomes, 2 / 2**5.
    assert mcnemar_exact(0, 5) == 0.0625
    # 3/7: 2 * (1 + 10 + 45 + 120) / 2**10 = 352 / 1024.
    assert mcnemar_exact(3, 7) == 352 / 1024
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 3)


def test_mcnemar_large_counts() -> None:
    # b + c = 10**5: no overflow, symmetric in its arguments, and p within [0, 1].
    for b in (0, 1, 30_000, 45_000, 49_800, 50_000):
        p = mcnemar_exact(b, 100_000 - b)
        assert p == mcnemar_exact(100_000 - b, b)
        assert 0.0 <= p <= 1.0
    assert mcnemar_exact(50_000, 50_000) == 1.0


def test_resampling_is_cheap() -> None:
    assert resampling_is_cheap(2000, 1000)
    assert not resampling_is_cheap(2001, 1000)


SAMPLE = [0.1, 0.9, 0.35, 0.0, 1.0, 0.5, 0.72, 0.2, 0.66, 0.41, 0.13]


# --- percentiles -----------------------------------------------------------------------------------


def test_percentile_intervals_match_numpy() -> None:
    np = pytest.importorskip("numpy")
    rng = random.Random("percentiles")
    for _ in range(20):
        values = sorted(rng.random() for _ in range(rng.randint(1, 40)))
        for confidence in (0.5, 0.8, 0.9, 0.95, 0.99):
            expected = np.percentile(values, [50 * (1 - confidence), 50 * (1 + confidence)])
            assert percentile_interval(values, confidence) == pytest.approx(list(expected), abs=1e-12)


# --- paired bootstrap ------------------------------------------------------------------------------


def mean_or_none(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def test_paired_identical_runs() -> None:
    interval, p_value = paired_bootstrap(SAMPLE, list(SAMPLE), mean_or_none, 0.95, 300, "same")
    assert interval == (0.0, 0.0)
    assert p_value == 1.0


def test_paired_clearly_better_candidate() -> None:
    rng = random.Random(3)
    baseline = [rng.random() * 0.5 for _ in range(40)]
    candidate = [x + 0.2 + rng.random() * 0.1 for x in baseline]
    interval, p_value = paired_bootstrap(baseline, candidate, mean_or_none, 0.95, 500, "better")
    assert interval is not None and p_value is not None
    assert 0.2 <= interval[0] <= interval[1] <= 0.3
    assert p_value < 0.01
    # Swapping the runs mirrors the deltas.
    swapped, p_swapped = paired_bootstrap(candidate, baseline, mean_or_none, 0.95, 500, "better")
    assert swapped == pytest.approx((-interval[1], -interval[0]), abs=1e-12)
    assert p_swapped == p_value


def test_paired_noise_is_not_significant_and_deterministic() -> None:
    rng = random.Random(11)
    baseline = [rng.random() for _ in range(60)]
    candidate = [rng.random() for _ in range(60)]
    first = paired_bootstrap(baseline, candidate, mean_or_none, 0.95, 400, "noise")
    assert paired_bootstrap(baseline, candidate, mean_or_none, 0.95, 400, "noise") == first
    interval, p_value = first
    assert interval is not None and p_value is not None
    assert interval[0] < interval[1]
    assert 0.0 <= p_value <= 1.0


def test_paired_p_value_definition() -> None:
    # Restate: same index draws for both runs, p = min(1, 2 * (min(#<= 0, #>= 0) + 1) / (kept + 1)).
    baseline = [0.0, 1.0, 0.0, 1.0, 1.0]
    candidate = [1.0, 1.0, 0.0, 0.0, 1.0]
    rng = random.Random("def")
    deltas = []
    for _ in range(100):
        idx = [math.floor(rng.random() * 5) for _ in range(5)]
        deltas.append(sum(candidate[i] for i in idx) / 5 - sum(baseline[i] for i in idx) / 5)
    expected = min(1.0, 2 * (min(sum(d <= 0 for d in deltas), sum(d >= 0 for d in deltas)) + 1) / (len(deltas) + 1))
    deltas.sort()
    interval, p_value = paired_bootstrap(baseline, candidate, mean_or_none, 0.9, 100, "def")
    assert p_value == pytest.approx(expected, abs=1e-12)
    assert interval == pytest.approx((percentile(deltas, 0.05), percentile(deltas, 0.95)), abs=1e-12)


def test_paired_drops_undefined_resamples() -> None:
    assert paired_bootstrap([1.0, 2.0], [1.0, 2.0], lambda _: None, 0.95, 50, "none") == (None, None)

    def positive_mean(values: Sequence[float]) -> float | None:
        # Undefined when the resample holds no positive value (like recall with no relevant item).
        kept = [v for v in values if v > 0]
        return math.fsum(kept) / len(kept) if kept else None

    interval, p_value = paired_bootstrap([0.0, 0.0, 0.5], [0.0, 0.0, 0.9], positive_mean, 0.95, 200, "drop")
    # Every kept resample contains question 3, so every kept delta is 0.9 - 0.5.
    assert interval == pytest.approx((0.4, 0.4))
    assert 0.0 < p_value < 0.05  # every kept delta is positive: (0 + 1) / (kept + 1), twice


def test_paired_rejects_mismatched_runs() -> None:
    with pytest.raises(ValueError):
        paired_bootstrap([1.0], [1.0, 2.0], mean_or_none, 0.95, 10, "x")
    with pytest.raises(ValueError):
        paired_bootstrap([], [], mean_or_none, 0.95, 10, "x")


# --- scipy on random inputs ------------------------------------------------------------------------

@st.composite
def counts(draw: st.DrawFn, max_n: int) -> tuple[int, int]:
    n = draw(st.integers(min_value=1, max_value=max_n))
    return draw(st.integers(min_value=0, max_value=n)), n


@settings(max_examples=200, deadline=None, derandomize=True)
@given(kn=counts(1_000_000), confidence=st.floats(min_value=0.5, max_value=0.999))
def test_wilson_matches_scipy(kn: tuple[int, int], confidence: float) -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    k, n = kn
    ci = scipy_stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    low, high = wilson_interval(k, n, confidence)
    assert low == pytest.approx(ci.low, abs=TOL, rel=0)
    assert high == pytest.approx(ci.high, abs=TOL, rel=0)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(broken=st.integers(min_value=0, max_value=3000), fixed=st.integers(min_value=0, max_value=3000))
def test_mcnemar_matches_scipy(broken: int, fixed: int) -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    expected = 1.0 if broken + fixed == 0 else scipy_stats.binomtest(broken, broken + fixed, 0.5).pvalue
    assert mcnemar_exact(broken, fixed) == pytest.approx(expected, abs=TOL, rel=1e-9)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(p_values=st.lists(st.floats(min_value=0.0, max_value=1.0), max_size=12))
def test_holm_matches_statsmodels(p_values: list[float]) -> None:
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    expected = list(multitest.multipletests(p_values, method="holm")[1]) if p_values else []
    assert holm(p_values) == pytest.approx(expected, abs=TOL, rel=0)
