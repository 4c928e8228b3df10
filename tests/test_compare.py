"""`ragscore compare`: deltas, paired bootstrap, McNemar, Holm, regression gates, baseline reports."""

from __future__ import annotations

import json

import pytest

from conftest import EXAMPLES, ROOT, write
from ragscore.metrics.stats import holm

PRODUCT = EXAMPLES / "product"
ARGS = ("compare", "--gold", PRODUCT / "gold.jsonl", "--baseline", PRODUCT / "baseline.jsonl",
        "--trace", PRODUCT / "trace.jsonl")


def test_changes_mcnemar_and_holm(ragscore, isolated):
    run = ragscore(*ARGS)
    assert run.status == 0  # no [regression] gates in this folder
    doc = json.loads(run.out)
    assert doc["changed"] == {"fixed": ["Q002", "Q005", "Q009", "Q013", "Q017", "Q021"], "broken": ["Q034", "Q037"]}
    assert doc["mcnemar"]["fixed"] == 6 and doc["mcnemar"]["broken"] == 2
    precision = doc["metrics"]["precision"]
    assert (precision["baseline"], precision["candidate"]) == (19 / 29, 25 / 31)
    assert precision["delta"] == pytest.approx(25 / 31 - 19 / 29, abs=1e-15)
    low, high = precision["delta_interval"]
    assert low < precision["delta"] < high
    tested = [m for m in doc["metrics"].values() if m["p_value"] is not None]
    assert [m["p_adjusted"] for m in tested] == holm([m["p_value"] for m in tested])
    stats = pytest.importorskip("scipy.stats")
    assert doc["mcnemar"]["p_value"] == pytest.approx(stats.binomtest(2, 8, 0.5).pvalue, abs=1e-12)


def test_identical_runs_do_not_move(ragscore, isolated):
    doc = json.loads(ragscore("compare", "--gold", PRODUCT / "gold.jsonl", "--baseline", PRODUCT / "trace.jsonl",
                              "--trace", PRODUCT / "trace.jsonl").out)
    assert all(m["delta"] == 0 for m in doc["metrics"].values())
    assert all(m["p_value"] in (None, 1.0) for m in doc["metrics"].values())
    assert doc["mcnemar"] == {"fixed": 0, "broken": 0, "p_value": 1.0}


def test_regression_gates_fail_the_run(ragscore, isolated):
    write(isolated / "gates.toml", "[regression]\nprecision = 0.02\nunder = 0.05\n")
    run = ragscore(*ARGS)
    assert run.status == 1 and json.loads(run.out)["pass"] is False
    assert "ragscore: REGRESSION under_refusal: worse by 0.2500 (allowed 0.05)\n" in run.err
    assert ragscore(*ARGS, "--no-fail").status == 0
    write(isolated / "gates.toml", "[regression]\nunder = 0.05\nrequire_significance = true\n")
    assert ragscore(*ARGS).status == 0  # 2 of 8 unanswerables broken: not significant


def test_regression_gate_errors(ragscore, isolated):
    write(isolated / "gates.toml", "[regression]\nprecison = 0.02\n")
    assert ragscore(*ARGS).err == 'ragscore: error: gates.toml:2: unknown metric "precison"; did you mean "precision"?\n'
    write(isolated / "gates.toml", "[regression]\nprecision = -1\n")
    assert ragscore(*ARGS).err == ('ragscore: error: gates.toml:2: [regression] expected "precision" to be the largest '
                                   "allowed drop, a number >= 0, got -1\n")


def test_a_committed_baseline_report_gives_the_same_comparison(ragscore, isolated):
    ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "baseline.jsonl", "--per-question",
             "--json", "baseline.json", "--format", "none", "--no-fail", "-q")
    from_traces = json.loads(ragscore(*ARGS).out)
    from_report = json.loads(ragscore("compare", "--gold", PRODUCT / "gold.jsonl", "--baseline-report", "baseline.json",
                                      "--trace", PRODUCT / "trace.jsonl").out)
    assert from_report["metrics"] == from_traces["metrics"]
    assert from_report["changed"] == from_traces["changed"] and from_report["mcnemar"] == from_traces["mcnemar"]


def test_baseline_report_must_fit(ragscore, isolated):
    ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "baseline.jsonl", "--json", "short.json",
             "--format", "none", "--no-fail", "-q")
    run = ragscore("compare", "--gold", PRODUCT / "gold.jsonl", "--baseline-report", "short.json", "--trace",
                   PRODUCT / "trace.jsonl")
    assert run.err == "ragscore: error: short.json: expected a JSON report made with --per-question (and not --only-failures)\n"
    ragscore("--gold", EXAMPLES / "gold.jsonl", "--trace", EXAMPLES / "trace.jsonl", "--per-question",
             "--json", "other.json", "--format", "none", "-q")
    run = ragscore("compare", "--gold", PRODUCT / "gold.jsonl", "--baseline-report", "other.json", "--trace",
                   PRODUCT / "trace.jsonl")
    assert run.err == "ragscore: error: other.json: the baseline report was not made with this gold set (its gold sha256 differs)\n"


def test_same_seed_same_bytes_and_markdown_golden(ragscore, monkeypatch):
    monkeypatch.chdir(ROOT)
    args = ("compare", "--gold", "examples/product/gold.jsonl", "--baseline", "examples/product/baseline.jsonl",
            "--trace", "examples/product/trace.jsonl", "--no-fail")
    assert ragscore(*args).out == ragscore(*args).out
    markdown = ragscore(*args, "--format", "markdown").out
    golden = ROOT / "tests" / "data" / "golden" / "compare.md"
    import os

    if os.environ.get("REGENERATE_GOLDEN") == "1":
        golden.write_text(markdown, encoding="utf-8")
    assert markdown == golden.read_text(encoding="utf-8")


def test_many_questions_use_the_paired_normal_approximation(ragscore, isolated):
    import random

    rng = random.Random(5)
    n = 2500  # 2,500 questions x 1,000 resamples is past the resampling budget
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "answerable": i % 4 > 0, "gold_citations": ["d1"]} for i in range(n)])
    for name, hit_rate in (("base.jsonl", 0.6), ("cand.jsonl", 0.7)):
        write(isolated / name, [{"qid": f"q{i}", "retrieved_ids": ["d1", "d2"],
                                 "answer_json": {"claim": "x", "citations": ["d1" if rng.random() < hit_rate else "d2"]}}
                                for i in range(n)])
    doc = json.loads(ragscore("compare", "--gold", "g.jsonl", "--baseline", "base.jsonl", "--trace", "cand.jsonl").out)
    chr_ = doc["metrics"]["chr"]
    assert chr_["method"] == "normal"
    low, high = chr_["delta_interval"]
    assert low < chr_["delta"] < high and low > 0 and chr_["p_value"] < 1e-6
    # The same comparison resampled (100 resamples fit the budget) agrees on the interval's scale.
    resampled = json.loads(ragscore("compare", "--gold", "g.jsonl", "--baseline", "base.jsonl", "--trace", "cand.jsonl",
                                    "--bootstrap", "100").out)["metrics"]["chr"]
    assert resampled["method"] == "bootstrap"
    assert abs((high - low) - (resampled["delta_interval"][1] - resampled["delta_interval"][0])) < 0.3 * (high - low)


def test_baseline_report_must_hold_what_is_compared(ragscore, isolated):
    ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "baseline.jsonl", "--per-question",
             "--json", "base.json", "--format", "none", "--no-fail", "-q")
    write(isolated / "gates.toml", '[regression]\n"ndcg@10" = 0.01\n')
    run = ragscore("compare", "--gold", PRODUCT / "gold.jsonl", "--baseline-report", "base.json",
                   "--trace", PRODUCT / "trace.jsonl")
    assert run.err == ("ragscore: error: base.json: the baseline report lacks ndcg@10, which [regression] gates: "
                       "remake it with the same --metrics\n")
    (isolated / "gates.toml").unlink()
    ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "baseline.jsonl", "--per-question", "--k", "3",
             "--json", "k3.json", "--format", "none", "--no-fail", "-q")
    run = ragscore("compare", "--gold", PRODUCT / "gold.jsonl", "--baseline-report", "k3.json",
                   "--trace", PRODUCT / "trace.jsonl")
    assert run.err == "ragscore: error: k3.json: the baseline report was scored with other settings (k: 3 vs 5)\n"


def test_a_drop_equal_to_the_allowed_one_passes():
    from ragscore.comparison import Delta, check_regressions

    deltas = {"precision": Delta(0.85, 0.83, 0.83 - 0.85, None, None)}  # 0.020000000000000018 in floats
    assert check_regressions(deltas, {"precision": 0.02}, False, 0.95)[0].status == "pass"
    deltas = {"missing": Delta(0, 3, 3, None, None)}  # untested: require_significance cannot excuse it
    assert check_regressions(deltas, {"missing": 1}, True, 0.95)[0].status == "fail"


def _explicit_paired_normal(baseline, candidate, confidence):
    """The paired normal approximation spelled out question by question (the test's oracle)."""
    import math
    from statistics import NormalDist

    n = len(baseline)
    terms = []
    for values in (baseline, candidate):
        counted = [v is not None for v in values]
        share = sum(counted) / n
        ratio = math.fsum(v for v in values if v is not None) / sum(counted)
        terms.append([((v - ratio) if v is not None else 0.0) / share for v in values])
    diffs = [c - b for b, c in zip(*terms, strict=True)]
    mean = math.fsum(diffs) / n
    se = math.sqrt(math.fsum((d - mean) ** 2 for d in diffs) / (n - 1) / n)
    means = [math.fsum(v for v in values if v is not None) / sum(v is not None for v in values)
             for values in (baseline, candidate)]
    delta = means[1] - means[0]
    half = NormalDist().inv_cdf(1 - (1 - confidence) / 2) * se
    return delta, (delta - half, delta + half), 2 * (1 - NormalDist().cdf(abs(delta) / se))


@pytest.mark.parametrize("seed", range(20))
def test_paired_normal_from_sums_equals_the_question_by_question_formula(seed):
    import random

    from ragscore.metrics.stats import PairSums, paired_normal

    rng = random.Random(seed)
    n = rng.randint(2, 300)
    binary = seed % 2 == 0

    def value():
        if rng.random() < 0.3:
            return None
        return float(rng.random() < 0.6) if binary else rng.choice([0.0, 1.0, rng.random()])

    baseline = [value() for _ in range(n)]
    candidate = [value() if rng.random() < 0.5 else b for b in baseline]
    if sum(v is not None for v in baseline) < 1 or sum(v is not None for v in candidate) < 1:
        return
    delta, interval, p = _explicit_paired_normal(baseline, candidate, 0.9)
    got_interval, got_p = paired_normal(PairSums.of(baseline, candidate), delta, 0.9)
    if interval[0] == interval[1]:
        assert got_interval == (delta, delta)
        return
    assert got_interval == pytest.approx(interval, abs=1e-12) and got_p == pytest.approx(p, abs=1e-12)
    if binary:  # 0/1 values given as counts of (baseline, candidate) pairs sum to the same
        from collections import Counter

        groups = Counter((None if b is None else int(b), None if c is None else int(c)) for b, c in zip(baseline, candidate, strict=True))
        assert PairSums.of_counts((b, c, k) for (b, c), k in groups.items()) == PairSums.of(baseline, candidate)


def test_paired_normal_of_identical_runs_is_exactly_flat():
    from ragscore.metrics.stats import PairSums, paired_normal

    values = [0.1, 1 / 3, None, 0.7, 2 / 3, 0.0]
    assert paired_normal(PairSums.of(values, values), 0.0, 0.95) == ((0.0, 0.0), 1.0)
    assert paired_normal(PairSums.of([1.0], [0.0]), -1.0, 0.95) == (None, None)  # one question: no spread


def test_many_questions_from_traces_and_from_a_report_agree(ragscore, isolated):
    import random

    rng = random.Random(9)
    n = 2500
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "answerable": i % 4 > 0, "gold_citations": ["d1"]} for i in range(n)])
    for name in ("base.jsonl", "cand.jsonl"):
        write(isolated / name, [{"qid": f"q{i}", "retrieved_ids": ["d1", "d2"],
                                 "answer_json": {"claim": rng.choice(["x", "none"]),
                                                 "citations": rng.choice([["d1"], ["d2"], ["d1", "d2"]])}}
                                for i in range(n)])
    ragscore("--gold", "g.jsonl", "--trace", "base.jsonl", "--per-question", "--json", "base.json", "--format", "none",
             "--no-fail", "-q")
    from_traces = json.loads(ragscore("compare", "--gold", "g.jsonl", "--baseline", "base.jsonl", "--trace", "cand.jsonl").out)
    from_report = json.loads(ragscore("compare", "--gold", "g.jsonl", "--baseline-report", "base.json",
                                      "--trace", "cand.jsonl").out)
    assert from_traces["metrics"]["citation_precision"]["method"] == "normal"
    for name, moved in from_traces["metrics"].items():
        other = from_report["metrics"][name]
        for key, value in moved.items():
            assert other[key] == (pytest.approx(value, rel=1e-12) if isinstance(value, float) else value), (name, key)
    assert from_traces["changed"] == from_report["changed"]
