"""ragscore.metrics.moments: exact sums, the Poisson bootstrap and the normal interval, against
slow restatements, numpy and scipy; merging in any grouping; coverage against 0.1's bootstrap."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intervals_reference import multinomial_bootstrap, normal, poisson_bootstrap, poisson_weight
from ragscore.metrics.moments import WEIGHTS, Moments, normal_interval, poisson_interval, summarise, weights_of
from ragscore.metrics.stats import RESAMPLING_BUDGET


def one(values, qids=None, resamples=200, seed="0") -> Moments:
    return summarise([values], (True,), qids, seed, resamples)[0]


def exact(m: Moments) -> tuple[Fraction, Fraction]:
    assert m.squares is not None
    return Fraction(m.total, 1 << m.scale), Fraction(m.squares, 1 << 2 * m.scale)


def test_the_weights_are_poisson_1_with_its_mean_and_variance():
    assert len(WEIGHTS) == 256
    assert [WEIGHTS.count(w) for w in range(6)] == [94, 95, 46, 16, 4, 1]
    assert sum(WEIGHTS) == 256                      # mean 1, exactly
    assert sum(w * w for w in WEIGHTS) == 2 * 256   # E[w^2] = 2: variance 1, exactly
    poisson = [math.exp(-1) / math.factorial(k) for k in range(6)]
    assert all(abs(WEIGHTS.count(k) / 256 - p) < 1.1 / 256 for k, p in enumerate(poisson))
    assert [poisson_weight(b) for b in range(256)] == list(WEIGHTS)


def test_a_questions_weights_depend_on_the_seed_and_its_qid_only():
    assert weights_of("0", "q1", 50) == weights_of("0", "q1", 50)
    assert weights_of("0", "q1", 50) != weights_of("0", "q2", 50)
    assert weights_of("0", "q1", 50) != weights_of("1", "q1", 50)
    assert weights_of("1", "2x", 50) != weights_of("12", "x", 50)  # the seed's length keeps the pair apart
    assert weights_of("0", "q1", 80)[:50] == weights_of("0", "q1", 50)  # replicate r is byte r


finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(finite, st.sampled_from([0.0, -0.0, 1.0, 0.1, 5e-324, 1e-300, 1e15])), max_size=40))
def test_sums_are_exact(values):
    m = one(values)
    total, squares = exact(m) if values else (Fraction(0), Fraction(0))
    assert total == sum(map(Fraction, values))
    assert squares == sum(Fraction(x) ** 2 for x in values)
    assert m.n == len(values)
    if values:
        assert m.fsum == math.fsum(values)
        assert m.mean() == float(sum(map(Fraction, values)) / len(values))
        assert (m.low, m.high) == (min(values), max(values))
    else:
        assert m.mean() is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(finite, st.sampled_from([0.0, 0.5, 1.0, 1e-300])), min_size=1, max_size=30),
       st.lists(st.integers(0, 3), min_size=30, max_size=30), st.randoms(use_true_random=False))
def test_parts_add_up_to_the_whole_in_any_grouping(values, parts_of, rng):
    qids = [f"q{i}" for i in range(len(values))]
    whole = one(values, qids)
    parts = [one([v for v, p in zip(values, parts_of, strict=False) if p == k], [q for q, p in zip(qids, parts_of, strict=False) if p == k])
             for k in range(4)]
    rng.shuffle(parts)
    assert Moments.total_of(parts) == whole
    assert (parts[0] + parts[1]) + (parts[2] + parts[3]) == whole
    assert parts[3] + (parts[2] + (parts[1] + parts[0])) == whole


def test_the_poisson_interval_equals_its_slow_restatement():
    rng = random.Random(11)
    cases = [
        ([rng.random() for _ in range(40)], 0.95, 300, "0"),
        ([rng.choice([0.0, 0.5, 1.0]) for _ in range(25)], 0.9, 150, "seed"),
        ([rng.uniform(-1e15, 1e15) for _ in range(10)] + [1e-300, -5e-324], 0.99, 100, "x"),  # lanes far apart
        ([0.25, 0.75], 0.95, 7, "tiny"),
        ([0.3], 0.95, 3, "one"),
    ]
    for values, confidence, resamples, seed in cases:
        qids = [f"item-{i}" for i in range(len(values))]
        m = one(values, qids, resamples, seed)
        assert m.replicates is not None
        assert poisson_interval(m, confidence) == poisson_bootstrap(values, qids, confidence, resamples, seed)


def test_columns_summarised_together_equal_each_summarised_alone():
    # Columns of very different widths (one holds a subnormal) share the questions' weights but
    # not their lanes.
    rng = random.Random(3)
    qids = [f"q{i}" for i in range(30)]
    columns = [[rng.random() for _ in qids], [rng.choice([0.0, 1.0]) for _ in qids],
               [5e-324] + [rng.uniform(-1e15, 1e15) for _ in qids[1:]]]
    together = summarise(columns, (True, False, True), qids, "0", 64)
    assert together == [summarise([c], (s,), qids, "0", 64)[0] for c, s in zip(columns, (True, False, True), strict=True)]
    assert together[2].replicates is not None
    assert poisson_interval(together[2], 0.9) == poisson_bootstrap(columns[2], qids, 0.9, 64, "0")


def test_zeros_of_either_sign_merge_to_one_summary():
    assert one([-0.0]) + one([0.0]) == one([0.0]) + one([-0.0]) == one([0.0, -0.0])


def test_no_replicate_with_weight_leaves_the_mean():
    # One question, three resamples: some seed gives it weight 0 in all three.
    seed = next(s for s in map(str, range(1000)) if not any(weights_of(s, "q", 3)))
    m = one([0.4], ["q"], 3, seed)
    assert poisson_interval(m, 0.95) == (0.4, 0.4)


def test_constant_values_give_exactly_that_value():
    for x in (0.1, 1 / 3, 0.7, 1.0, 0.0, -2.5):
        m = one([x] * 13, [f"q{i}" for i in range(13)], 100)
        assert poisson_interval(m, 0.95) == (x, x)
        assert normal_interval(one([x] * 13), 0.95) == (x, x)


def test_the_normal_interval_equals_its_restatement_and_numpy():
    np = pytest.importorskip("numpy")
    rng = random.Random(5)
    for n in (2, 3, 10, 500):
        for values in ([rng.random() for _ in range(n)], [rng.choice([0.0, 1.0]) for _ in range(n)],
                       [rng.gauss(1e6, 1e-3) for _ in range(n)], [rng.uniform(-1e15, 1e15) for _ in range(n)]):
            got = normal_interval(one(values), 0.95)
            assert got == normal(values, 0.95)
            half = 1.959963984540054 * np.std(values, ddof=1) / math.sqrt(n)
            mean = float(np.mean(values))
            assert got == pytest.approx((mean - half, mean + half), rel=1e-12, abs=1e-12)
    # [1, 2, 3, 4, 5]: mean 3, s^2 = 10 / 4, half width z sqrt(0.5).
    # Not clamped, as the textbook interval is not: 0 and 1 give 0.5 ± z sqrt(1/2) / sqrt(2) = 0.5 ± 0.98.
    assert normal_interval(one([0.0, 1.0]), 0.95) == pytest.approx((0.5 - 0.979982, 0.5 + 0.979982), abs=1e-6)
    low, high = normal_interval(one([1.0, 2.0, 3.0, 4.0, 5.0]), 0.95)
    assert (3 - low, high - 3) == pytest.approx((1.385903824349678, 1.385903824349678), abs=1e-12)
    assert normal_interval(one([0.25]), 0.95) == (0.25, 0.25)
    with pytest.raises(ValueError):
        normal_interval(Moments(), 0.95)


def test_replicates_are_kept_within_the_budget_only():
    resamples = 1000
    fits = RESAMPLING_BUDGET // resamples
    values = [i % 7 / 7 for i in range(fits + 1)]
    qids = [f"q{i}" for i in range(fits + 1)]
    assert one(values[:fits], qids[:fits], resamples).replicates is not None
    assert one(values, qids, resamples).replicates is None
    # Two parts within the budget whose sum is not: the merge keeps no replicates, as one process would.
    half = fits // 2 + 1
    merged = one(values[:half], qids[:half], resamples) + one(values[half:], qids[half:], resamples)
    assert merged.replicates is None and merged == one(values, qids, resamples)


def test_only_the_spread_columns_keep_squares_and_replicates():
    count, mean = summarise([[1.0, 0.0, 1.0], [0.5, 0.25, 1.0]], (False, True), ["a", "b", "c"], "0", 50)
    assert count.squares is None and count.replicates is None and count.fsum == 2.0
    assert mean.squares is not None and mean.replicates is not None


# --- coverage: the Poisson bootstrap against 0.1's bootstrap -----------------------------------------

DISTRIBUTIONS = {
    # name: (draw one value, the true mean)
    "uniform": (lambda rng: rng.random(), 0.5),
    "bernoulli 0.8": (lambda rng: float(rng.random() < 0.8), 0.8),
    "skewed (exponential)": (lambda rng: rng.expovariate(4.0), 0.25),
    "three levels": (lambda rng: rng.choice([0.0, 0.5, 1.0, 1.0]), 0.625),
}


def _coverage(name: str, n: int, datasets: int, resamples: int = 400) -> tuple[float, float, float, float]:
    draw, truth = DISTRIBUTIONS[name]
    rng = random.Random(f"{name}:{n}")
    covered = {"poisson": 0, "multinomial": 0}
    width = {"poisson": 0.0, "multinomial": 0.0}
    for d in range(datasets):
        values = [draw(rng) for _ in range(n)]
        qids = [f"{name}-{n}-{d}-{i}" for i in range(n)]
        intervals = {"poisson": poisson_interval(one(values, qids, resamples, "cov"), 0.95),
                     "multinomial": multinomial_bootstrap(values, 0.95, resamples, f"{name}:{d}")}
        for method, (low, high) in intervals.items():
            covered[method] += low <= truth <= high
            width[method] += high - low
    return (covered["poisson"] / datasets, covered["multinomial"] / datasets,
            width["poisson"] / datasets, width["multinomial"] / datasets)


def _check_coverage(name: str, n: int, datasets: int) -> None:
    poisson, multinomial, poisson_width, multinomial_width = _coverage(name, n, datasets)
    # Both methods on the same data sets: their coverage differs by a few discordant data sets.
    assert abs(poisson - multinomial) <= 0.04, (poisson, multinomial)
    assert 0.85 <= poisson <= 0.99, poisson
    # Poisson weights add the variance of the total weight: intervals about 1 + 0.75 / n times as
    # wide (measured: 1.075 at 10 questions, 1.015 at 40, 1.005 at 100, 1.00 at 400), where the
    # old bootstrap was too narrow by sqrt((n - 1) / n).
    assert 0.98 <= poisson_width / multinomial_width <= 1 + 1 / n + 0.02, poisson_width / multinomial_width


@pytest.mark.parametrize("name", list(DISTRIBUTIONS))
def test_the_poisson_bootstrap_covers_as_the_old_bootstrap_did(name):
    # 200 random data sets of 40 questions: the share of intervals that hold the true mean, and
    # their mean width, for both methods (seeded, so the figures are fixed).
    _check_coverage(name, 40, 200)


@pytest.mark.slow
@pytest.mark.parametrize("n", [10, 100, 400])
@pytest.mark.parametrize("name", list(DISTRIBUTIONS))
def test_the_poisson_bootstrap_covers_as_the_old_bootstrap_did_at_other_sizes(name, n):
    _check_coverage(name, n, 400)
