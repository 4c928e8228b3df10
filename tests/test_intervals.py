"""Intervals in the report: Wilson for rates, a seeded Poisson bootstrap for means, normal for many."""

from __future__ import annotations

import random

import pytest

from conftest import EXAMPLES, write

PRODUCT = ("--gold", EXAMPLES / "product" / "gold.jsonl", "--trace", EXAMPLES / "product" / "trace.jsonl", "--no-fail")


def test_rates_get_wilson_intervals_equal_to_scipy(ragscore, isolated):
    stats = pytest.importorskip("scipy.stats")
    doc = ragscore(*PRODUCT, "--confidence", "0.9").json()
    k, n = doc["labels"]["OK"], doc["answered"]
    expected = stats.binomtest(k, n).proportion_ci(confidence_level=0.9, method="wilson")
    assert doc["intervals"]["precision"] == pytest.approx([expected.low, expected.high], abs=1e-9)
    assert doc["interval_methods"]["precision"] == "wilson"
    assert doc["interval_methods"]["citation_precision"] == "poisson_bootstrap"
    assert "missing" not in doc["intervals"]


def test_same_seed_same_bytes_other_seed_other_bootstrap(ragscore, isolated):
    args = (*PRODUCT, "--metrics", "retrieval,text", "--per-question")
    first, again = ragscore(*args).out, ragscore(*args).out
    assert first == again
    base, other = ragscore(*args).json(), ragscore(*args, "--seed", "7").json()
    means = [name for name, method in base["interval_methods"].items() if method == "poisson_bootstrap"]
    assert any(base["intervals"][name] != other["intervals"][name] for name in means)
    assert other["intervals"]["precision"] == base["intervals"]["precision"]  # Wilson: no seed


def test_many_questions_use_the_normal_approximation(ragscore, isolated):
    rng = random.Random(3)
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "answerable": True, "gold_citations": [f"d{i % 7}"]}
                                 for i in range(2500)])
    write(isolated / "t.jsonl", [{"qid": f"q{i}", "retrieved_ids": [f"d{rng.randrange(7)}" for _ in range(5)],
                                  "answer_json": {"claim": "x", "citations": []}} for i in range(2500)])
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "retrieval", "--no-fail").json()
    assert doc["interval_methods"]["mrr"] == "normal"  # 2,500 questions x 1,000 resamples: too many to resample
    assert doc["interval_methods"]["hit@5"] == "wilson"
    low, high = doc["intervals"]["mrr"]
    assert low < doc["metrics"]["mrr"] < high
    small = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "retrieval", "--no-fail",
                     "--bootstrap", "100").json()
    assert small["interval_methods"]["mrr"] == "poisson_bootstrap"


def test_undefined_metrics_have_no_interval(ragscore, isolated):
    doc = ragscore("--gold", EXAMPLES / "gold.jsonl", "--trace", EXAMPLES / "trace.jsonl", "--metrics", "text").json()
    assert doc["intervals"]["token_f1"] is None and doc["interval_methods"]["token_f1"] is None


def test_bad_confidence(ragscore, isolated):
    run = ragscore(*PRODUCT, "--confidence", "95")
    assert run.status == 2 and "expected a number strictly between 0 and 1, got \"95\"" in run.err
    write(isolated / "gates.toml", "[scoring]\nconfidence = 1\n")
    run = ragscore(*PRODUCT)
    assert run.err == ('ragscore: error: gates.toml:2: [scoring] expected "confidence" to be a number strictly '
                       "between 0 and 1, got 1\n")
