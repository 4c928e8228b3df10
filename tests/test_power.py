"""Power and sample size (issue 19, part 3): the formulas against statsmodels to 1e-6 and against a
10,000-run simulation within its error; ragscore power on a run."""

from __future__ import annotations

import json
import math
import random

import pytest

from ragscore.metrics.power import detectable, needed, power, spread_of_one_run


@pytest.mark.filterwarnings("ignore")  # statsmodels' solver warns where it fails to converge (skipped)
def test_power_equals_statsmodels_and_the_solutions_solve_it():
    sm = pytest.importorskip("statsmodels.stats.power").NormalIndPower()
    rng = random.Random(1)
    for _ in range(300):
        sigma, n, alpha = rng.uniform(0.05, 2), rng.randrange(5, 5000), rng.choice([0.05, 0.01, 0.1])
        delta = rng.uniform(0.001, 0.5)
        assert power(delta, sigma, n, alpha) == pytest.approx(
            sm.power(effect_size=delta / sigma, nobs1=n, alpha=alpha, ratio=0), abs=1e-12)
        mde = detectable(sigma, n, alpha)
        assert sm.power(effect_size=mde / sigma, nobs1=n, alpha=alpha, ratio=0) == pytest.approx(0.8, abs=1e-9)
        reference = sm.solve_power(effect_size=None, nobs1=n, alpha=alpha, power=0.8, ratio=0)
        if reference == reference:  # statsmodels converged (its solver stops near 1e-5; ours solves to the bit)
            assert mde / sigma == pytest.approx(reference, rel=1e-4)
        count = needed(delta, sigma, alpha)
        assert sm.power(effect_size=delta / sigma, nobs1=count, alpha=alpha, ratio=0) == pytest.approx(0.8, abs=1e-9)
        reference = sm.solve_power(effect_size=delta / sigma, nobs1=None, alpha=alpha, power=0.8, ratio=0)
        if reference == reference:
            assert count == pytest.approx(reference, rel=1e-4)


def test_the_detectable_change_is_detected_eight_times_in_ten():
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(19)
    sigma, n, alpha, runs = 0.6, 400, 0.05, 10_000
    mde = detectable(sigma, n, alpha)
    d = rng.normal(mde, sigma, size=(runs, n))  # paired differences of 10,000 comparisons
    z = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
    rejected = float(np.mean(np.abs(z) > 1.959963984540054))
    assert abs(rejected - 0.8) < 3 * math.sqrt(0.8 * 0.2 / runs) + 0.005  # the t-versus-normal gap at n = 400
    # The questions needed for a change: detected eight times in ten at that size.
    count = math.ceil(needed(0.1, sigma, alpha))
    d = rng.normal(0.1, sigma, size=(runs, count))
    z = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(count))
    assert abs(float(np.mean(np.abs(z) > 1.959963984540054)) - 0.8) < 3 * math.sqrt(0.16 / runs) + 0.005


def test_ragscore_power_on_a_run(ragscore, isolated):
    from conftest import EXAMPLES

    gold, trace = EXAMPLES / "product" / "gold.jsonl", EXAMPLES / "product" / "trace.jsonl"
    run = ragscore("power", "--gold", gold, "--trace", trace, "--detect", "0.1", "--columns", "precision,chr")
    assert run.status == 0
    doc = json.loads(run.out)
    per = json.loads(ragscore("--gold", gold, "--trace", trace, "--per-question", "--no-fail").out)["questions"]
    for name in ("precision", "chr"):
        values = [q["metrics"][name] for q in per if q["metrics"][name] is not None]
        m = doc["metrics"][name]
        sigma = spread_of_one_run(values)
        assert (m["questions"], m["sd"]) == (len(values), sigma)
        assert m["detectable"] == detectable(sigma, len(values), 0.05)
        assert m["needed"] == math.ceil(needed(0.1, sigma, 0.05))
        assert f"ragscore: {name}: {len(values)} questions detect a change of " in run.err
    bad = ragscore("power", "--gold", gold, "--trace", trace, "--columns", "missing")
    assert bad.status == 2 and "no per-question values of 'missing'" in bad.err
    bad = ragscore("power", "--gold", gold, "--trace", trace, "--detect", "lots")
    assert bad.status == 2 and "--detect: expected a number" in bad.err


def test_the_docs_example(ragscore, monkeypatch):
    from conftest import ROOT
    from docs import doc_block

    monkeypatch.chdir(ROOT)
    block = doc_block("$ ragscore power --gold examples/product/gold.jsonl")
    shown = [line for line in block.splitlines() if line.startswith("ragscore: ")]
    run = ragscore("power", "--gold", "examples/product/gold.jsonl", "--trace", "examples/product/trace.jsonl",
                   "--detect", "0.1", "--columns", "precision,over_refusal", "--format", "none")
    assert run.status == 0 and shown == run.err.splitlines()


def test_compare_gives_each_regression_gate_its_power(ragscore, monkeypatch):
    from conftest import ROOT
    from ragscore.metrics.power import spread_of_differences

    monkeypatch.chdir(ROOT)  # the repository's gates.toml: [regression] precision = 0.02, under_refusal = 0.05
    args = ("--gold", "examples/product/gold.jsonl")
    doc = json.loads(ragscore("compare", *args, "--baseline", "examples/product/baseline.jsonl", "--trace",
                              "examples/product/trace.jsonl", "--no-fail").out)
    rows = {}
    for name in ("baseline", "trace"):
        report = json.loads(ragscore(*args, "--trace", f"examples/product/{name}.jsonl", "--per-question",
                                     "--no-fail").out)
        rows[name] = {q["qid"]: q["metrics"] for q in report["questions"]}
    for metric, gate in doc["regressions"].items():
        d = [rows["trace"][q][metric] - rows["baseline"][q][metric] for q in rows["baseline"]
             if rows["trace"][q][metric] is not None and rows["baseline"][q][metric] is not None]
        sigma = spread_of_differences(d)
        assert gate["pairs"] == len(d)
        assert gate["detectable"] == detectable(sigma, len(d), 0.05)
        assert gate["needed"] == math.ceil(needed(gate["allowed"], sigma, 0.05))
