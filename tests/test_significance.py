"""Paired tests of compare (issue 19, part 1): t, Wilcoxon, sign and permutation against scipy on
random paired data (ties, zeros, n < 10 included), the t distribution against scipy.special, and
compare --test / --correction end to end."""

from __future__ import annotations

import json
import math
import random

import pytest

from conftest import EXAMPLES, write
from ragscore.metrics.significance import betainc, differences, paired_t, permutation, sign_test, wilcoxon

stats = pytest.importorskip("scipy.stats")
np = pytest.importorskip("numpy")


def _close(ours, theirs, what):
    assert ours == pytest.approx(float(theirs), rel=1e-9, abs=1e-15), what


def _paired(rng, n, kind):
    """A baseline and a candidate: scores of 0/1, dyadic grades (ties, zeros) or continuous values."""
    if kind == "binary":
        base = [float(rng.random() < 0.6) for _ in range(n)]
        cand = [float(rng.random() < 0.7) for _ in range(n)]
    elif kind == "grades":
        base = [rng.choice([0.0, 0.25, 0.5, 0.75, 1.0]) for _ in range(n)]
        cand = [min(1.0, b + rng.choice([-0.25, 0.0, 0.0, 0.25, 0.5])) for b in base]
    else:
        base = [rng.random() for _ in range(n)]
        cand = [b + rng.gauss(0.05, 0.2) for b in base]
    return base, cand


SIZES = (2, 3, 4, 6, 9, 12, 13, 14, 20, 35, 50, 51, 120)


@pytest.mark.filterwarnings("ignore:Precision loss occurred")  # scipy's t on nearly constant differences
@pytest.mark.parametrize("kind", ["binary", "grades", "continuous"])
def test_every_test_equals_scipy(kind):
    rng = random.Random(19)
    for trial in range(60):
        n = SIZES[trial % len(SIZES)]
        base, cand = _paired(rng, n, kind)
        d = differences(base, cand)
        where = f"{kind} n={n} trial {trial}"
        t = paired_t(d)
        ref = stats.ttest_rel(cand, base)
        if t.p_value is None:
            assert not math.isfinite(ref.statistic) or np.std(d) == 0, where
        else:
            _close(t.statistic, ref.statistic, where)
            _close(t.p_value, ref.pvalue, where)
            _close(t.effect, np.mean(d) / np.std(d, ddof=1), where)
        w = wilcoxon(d)
        if any(d):
            ref = stats.wilcoxon(cand, base)
            _close(w.statistic, ref.statistic, where)
            _close(w.p_value, ref.pvalue, where + f" ({w.method})")
        s = sign_test(d)
        positive, nonzero = sum(x > 0 for x in d), sum(x != 0 for x in d)
        if nonzero:
            reference = stats.binomtest(positive, nonzero, 0.5)
            _close(s.p_value, reference.pvalue, where)
            _close(s.statistic, reference.statistic, where)
        if n <= 12:  # scipy enumerates in Python: larger n is slow for it
            p = permutation(d)
            ref = stats.permutation_test((np.array(d),), lambda x, axis: np.mean(x, axis=axis),
                                         permutation_type="samples", n_resamples=np.inf, vectorized=True)
            _close(p.p_value, ref.pvalue, where)
            assert p.method == "exact" and p.p_se is None


def test_wilcoxon_takes_each_of_scipys_methods():
    rng = random.Random(2)
    methods = set()
    for n, kind in ((9, "continuous"), (9, "grades"), (30, "grades"), (60, "continuous"), (45, "continuous")):
        base, cand = _paired(rng, n, kind)
        result = wilcoxon(differences(base, cand))
        methods.add(result.method)
        _close(result.p_value, stats.wilcoxon(cand, base).pvalue, (n, kind))
    assert methods == {"exact", "permutation", "normal"}


def test_the_incomplete_beta_function_equals_scipy():
    special = pytest.importorskip("scipy.special")
    rng = random.Random(4)
    for _ in range(2000):
        a, b = rng.choice([0.5, 1.0, 2.5]) * rng.uniform(0.1, 3000), rng.choice([0.5, rng.uniform(0.1, 50)])
        x = rng.random() ** rng.choice([1, 5, 20])
        _close(betainc(a, b, x), special.betainc(a, b, x), (a, b, x))


def test_a_sampled_permutation_is_seeded_and_within_its_error_of_the_exact_value():
    rng = random.Random(6)
    base, cand = _paired(rng, 18, "continuous")
    d = differences(base, cand)
    sampled = permutation(d, "s", resamples=20_000)
    assert sampled.method == "monte carlo" and permutation(d, "s", resamples=20_000) == sampled
    exact = stats.permutation_test((np.array(d),), lambda x, axis: np.mean(x, axis=axis),
                                   permutation_type="samples", n_resamples=np.inf, vectorized=True).pvalue
    assert abs(sampled.p_value - exact) < 4 * sampled.p_se + 1 / 20_000
    assert permutation(d, "other seed", resamples=20_000).p_value != sampled.p_value


def _runs(folder, seed=3, n=40):
    rng = random.Random(seed)
    gold, base, cand = [], [], []
    for i in range(n):
        qid = f"q{i:02d}"
        gold.append({"qid": qid, "answerable": True, "gold_citations": ["d1"], "gold_claim_substr": ["alpha"],
                     "gold_relevance": {"d1": 2, "d2": 1}})
        for run, p in ((base, 0.5), (cand, 0.7)):
            ids = rng.sample(["d1", "d2", "d3", "d4"], 3)
            right = rng.random() < p
            run.append({"qid": qid, "retrieved_ids": ids,
                        "answer_json": {"claim": "alpha" if right else "beta", "citations": ["d1"]}})
    write(folder / "g.jsonl", gold)
    write(folder / "b.jsonl", base)
    write(folder / "c.jsonl", cand)


@pytest.mark.parametrize("test", ["t", "wilcoxon", "sign", "permutation"])
def test_compare_tests_each_metric_on_the_questions_both_runs_count(ragscore, isolated, test):
    _runs(isolated)
    run = ragscore("compare", "--gold", "g.jsonl", "--baseline", "b.jsonl", "--trace", "c.jsonl", "--metrics",
                   "retrieval", "--test", test, "--correction", "none", "--no-fail")
    doc = json.loads(run.out)
    assert doc["test"] == {"name": test, "correction": "none"}
    rows = {}
    for name in ("b", "c"):
        report = ragscore("--gold", "g.jsonl", "--trace", f"{name}.jsonl", "--metrics", "retrieval",
                          "--per-question", "--no-fail").json()
        rows[name] = [q["metrics"] for q in report["questions"]]
    for metric in ("precision", "containment", "ndcg@5", "mrr"):
        base = [r[metric] for r in rows["b"]]
        cand = [r[metric] for r in rows["c"]]
        pairs = [(b, c) for b, c in zip(base, cand, strict=True) if b is not None and c is not None]
        bs, cs = [b for b, _ in pairs], [c for _, c in pairs]
        d = [c - b for b, c in pairs]
        m = doc["metrics"][metric]
        assert m["pairs"] == (len(d) if test in ("t", "permutation") else sum(x != 0 for x in d)), metric
        if test == "t":
            ref = stats.ttest_rel(cs, bs).pvalue
        elif test == "wilcoxon":
            ref = stats.wilcoxon(cs, bs).pvalue if any(d) else None
        elif test == "sign":
            k = sum(x > 0 for x in d)
            ref = stats.binomtest(k, sum(x != 0 for x in d), 0.5).pvalue if any(d) else None
        else:
            ref = permutation(d, f"0:{metric}").p_value  # n > 17: the seeded sample, the same each run
        if ref is None or (isinstance(ref, float) and math.isnan(ref)):
            assert m["p_value"] is None, metric
        else:
            _close(m["p_value"], ref, metric)
            assert m["p_adjusted"] == m["p_value"]  # no correction
    assert ragscore("compare", "--gold", "g.jsonl", "--baseline", "b.jsonl", "--trace", "c.jsonl", "--metrics",
                    "retrieval", "--test", test, "--correction", "none", "--no-fail").out == run.out


def test_corrections_and_settings(ragscore, isolated):
    _runs(isolated, seed=5)
    args = ("compare", "--gold", "g.jsonl", "--baseline", "b.jsonl", "--trace", "c.jsonl", "--no-fail", "--test", "t")
    raw = json.loads(ragscore(*args, "--correction", "none").out)["metrics"]
    bonferroni = json.loads(ragscore(*args, "--correction", "bonferroni").out)["metrics"]
    tested = [name for name, m in raw.items() if m["p_value"] is not None]
    for name in tested:
        assert bonferroni[name]["p_adjusted"] == min(1.0, raw[name]["p_value"] * len(tested))
    holm = json.loads(ragscore(*args).out)
    assert holm["test"] == {"name": "t", "correction": "holm"}
    write(isolated / "gates.toml", '[regression]\ntest = "wilcoxon"\ncorrection = "bonferroni"\n')
    doc = json.loads(ragscore("compare", "--gold", "g.jsonl", "--baseline", "b.jsonl", "--trace", "c.jsonl",
                              "--no-fail").out)
    assert doc["test"] == {"name": "wilcoxon", "correction": "bonferroni"}
    write(isolated / "gates.toml", '[regression]\ntest = "ttest"\n')
    run = ragscore("compare", "--gold", "g.jsonl", "--baseline", "b.jsonl", "--trace", "c.jsonl")
    assert run.status == 2 and "gates.toml:2" in run.err and '"test"' in run.err
    (isolated / "gates.toml").unlink()
    plain = json.loads(ragscore("compare", "--gold", "g.jsonl", "--baseline", "b.jsonl", "--trace", "c.jsonl",
                                "--no-fail").out)
    assert "test" not in plain and "effect" not in plain["metrics"]["precision"]  # the bootstrap reads as before
    md = ragscore(*args, "--format", "markdown").out
    assert "paired t-test over the questions both runs count; effect: Cohen's d" in md and "| effect |" in md


def test_the_python_api_takes_the_test(isolated):
    import ragscore

    gold = EXAMPLES / "product" / "gold.jsonl"
    result = ragscore.compare(gold, EXAMPLES / "product" / "baseline.jsonl", EXAMPLES / "product" / "trace.jsonl",
                              test="sign", correction="none")
    assert result.document["test"] == {"name": "sign", "correction": "none"}
    with pytest.raises(ragscore.UsageError, match="test: expected one of bootstrap, t, wilcoxon"):
        ragscore.compare(gold, EXAMPLES / "product" / "baseline.jsonl", EXAMPLES / "product" / "trace.jsonl",
                         test="anova")


def test_zero_differences_leave_the_permutation_test_exact():
    rng = random.Random(4)
    d = [rng.choice([0.0, 0.0, 0.25, -0.25, 0.5]) for _ in range(20)]  # 20 pairs, 10 of them nonzero
    result = permutation(d)
    assert result.method == "exact" and sum(x != 0 for x in d) <= 17
    reference = stats.permutation_test((np.array(d),), lambda x, axis: np.mean(x, axis=axis),
                                       permutation_type="samples", n_resamples=np.inf, vectorized=True).pvalue
    _close(result.p_value, reference, d)
    # Past 17 nonzero differences, a sample: repeated magnitudes drawn as binomials, the rest byte by byte.
    mixed = [rng.gauss(0.05, 0.3) for _ in range(19)] + [0.25] * 30 + [-0.25] * 20
    sampled = permutation(mixed, "s", 20_000)
    reference = stats.permutation_test((np.array(mixed),), lambda x, axis: np.mean(x, axis=axis),
                                       permutation_type="samples", n_resamples=100_000, vectorized=True,
                                       random_state=1).pvalue
    assert sampled.method == "monte carlo" and abs(sampled.p_value - reference) < 4 * sampled.p_se


def test_review_fixes_direction_tails_and_corners(ragscore, isolated):
    from ragscore.comparison import Delta, check_regressions
    from ragscore.metrics.significance import TestResult, t_two_sided

    special = pytest.importorskip("scipy.special")
    # p near 1: the complement is computed from t^2 / (df + t^2), not from 1 - x.
    assert t_two_sided(1.3e-6, 19999) == pytest.approx(2 * special.stdtr(19999, -1.3e-6), rel=1e-12)
    # A sign test significant for an improvement excuses no worsening of the mean, nor fails it.
    improved = TestResult(0.9, 1e-6, 0.82, 33, "exact")
    delta = Delta(0.8, 0.736, -0.064, None, 1e-6, 1e-6, "sign", improved)
    assert check_regressions({"precision": delta}, {"precision": 0.05}, True, 0.95)[0].status == "pass"
    worse = delta.__class__(0.8, 0.736, -0.064, None, 1e-6, 1e-6, "sign", improved._replace(effect=-0.5))
    assert check_regressions({"precision": worse}, {"precision": 0.05}, True, 0.95)[0].status == "fail"
    # The sampled p-value's error: twice the one-tailed share's.
    rng = random.Random(8)
    sampled = permutation([rng.gauss(0.02, 0.3) for _ in range(40)], "e", 1000)
    tail = sampled.p_value / 2
    assert sampled.p_se == pytest.approx(2 * math.sqrt(tail * (1 - tail) / 1000))
    assert differences([1.0, float("nan"), None], [2.0, 1.0, 1.0]) == [1.0]
