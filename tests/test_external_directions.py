"""Scores from other evaluators named like a cost (latency_ms, total_cost, prompt_tokens) are lower-is-better."""

from __future__ import annotations

import json

import pytest

from conftest import EXAMPLES, checked_report, write
from ragscore.diagnose.rules import Rule
from ragscore.gates import default_op, evaluate_gates, parse_gate_option
from ragscore.metrics.names import direction_of
from ragscore.metrics.registry import LOWER_IS_BETTER_SUFFIXES, Direction

GOLD = EXAMPLES / "gold.jsonl"
QIDS = ("A0001", "A0002", "A0003")
TRACES = [json.loads(line) for line in (EXAMPLES / "trace.jsonl").read_text(encoding="utf-8").splitlines()]


def traces_with(name: str, values) -> list[dict]:
    return [{**trace, "scores": {name: value}} for trace, value in zip(TRACES, values, strict=True)]


def test_the_suffixes():
    assert LOWER_IS_BETTER_SUFFIXES == ("_ms", "_s", "_seconds", "latency", "cost", "_usd", "tokens")


@pytest.mark.parametrize("name", [
    "latency_ms", "p95_latency_ms", "retrieval_ms", "duration_s", "elapsed_seconds", "latency", "p99_latency",
    "retrieval.latency", "cost", "total_cost", "llm/cost", "cost_usd", "tokens", "prompt_tokens", "total_tokens",
    "Latency_MS", "TotalCost", "PromptTokens", "noise_sensitivity",
])
def test_lower_is_better(name):
    assert direction_of(name) is Direction.LOWER
    assert default_op(name) == "<="


@pytest.mark.parametrize("name", [
    "faithfulness", "answer_relevancy", "my_score", "accuracy", "status", "tokens_per_second", "ms_marco_mrr",
    "latency_ok", "costs_saved", "cost_efficiency", "hits", "precision", "chr", "ndcg@10", "recall@5", "sim_f1@3",
    "s", "_s_x",
])
def test_higher_is_better(name):
    assert direction_of(name) is Direction.HIGHER
    assert default_op(name) == ">="


def test_registered_metrics_keep_their_direction():
    assert direction_of("under_refusal") is Direction.LOWER and direction_of("missing") is Direction.LOWER
    assert direction_of("precision") is Direction.HIGHER and direction_of("full_recall@5") is Direction.HIGHER


def test_a_configured_direction_wins():
    assert default_op("latency_ms", {"latency_ms": Direction.HIGHER}) == ">="
    assert default_op("my_score", {"my_score": Direction.LOWER}) == "<="
    assert Rule("latency_ms", None, 1.0, None).better("latency_ms") is Direction.LOWER
    assert Rule("latency_ms", Direction.HIGHER, 1.0, None).better("latency_ms") is Direction.HIGHER


def test_an_explicit_operator_wins():
    gates = parse_gate_option("latency_ms>=3,total_cost=0.5,prompt_tokens<900", [], 5, external=True)
    assert [(g.metric, g.op, g.threshold) for g in gates.values()] == [
        ("latency_ms", ">=", 3.0), ("total_cost", "<=", 0.5), ("prompt_tokens", "<", 900.0)]


def test_a_bare_gate_in_gates_toml_is_a_maximum(ragscore, isolated):
    write(isolated / "gates.toml", "[gates]\nlatency_ms = 1500\ntotal_cost = 0.02\nfaithfulness = 0.5\n")
    write(isolated / "s.jsonl", [{"qid": q, "latency_ms": ms, "total_cost": cost, "faithfulness": 0.9}
                                 for q, ms, cost in zip(QIDS, (900, 1800, 700), (0.01, 0.01, 0.04), strict=True)])
    run = ragscore("--gold", GOLD, "--trace", EXAMPLES / "trace.jsonl", "--scores", "s.jsonl")
    doc = checked_report(run.out)
    gates = doc["gates"]
    assert (gates["latency_ms"]["op"], gates["latency_ms"]["threshold"], gates["latency_ms"]["status"]) == ("<=", 1500, "pass")
    assert (gates["total_cost"]["op"], gates["total_cost"]["status"]) == ("<=", "pass")  # 0.02 exactly: on the bound
    assert (gates["faithfulness"]["op"], gates["faithfulness"]["status"]) == (">=", "pass")
    assert run.status == 0
    write(isolated / "s.jsonl", [{"qid": q, "latency_ms": ms} for q, ms in zip(QIDS, (900, 2800, 1700), strict=True)])
    run = ragscore("--gold", GOLD, "--trace", EXAMPLES / "trace.jsonl", "--scores", "s.jsonl", "--format", "none",
                   "--gates", "total_cost=off,faithfulness=off")
    assert run.status == 1
    assert "ragscore: FAIL    latency_ms = 1800.0000 (gate <= 1500)\n" in run.err
    assert run.err.endswith("ragscore: FAIL: 1 of 6 gates failed: latency_ms\n")


def test_explicit_operators_and_directions_win_in_gates_toml(ragscore, isolated):
    write(isolated / "gates.toml", '[gates]\nlatency_ms = ">= 3"\nprompt_tokens = { min = 10 }\nmy_cost = 5\n'
                                   '[diagnose.my_cost]\ndirection = "higher"\nwarning = 1\n')
    write(isolated / "s.jsonl", [{"qid": q, "latency_ms": 4, "prompt_tokens": 20, "my_cost": 6} for q in QIDS])
    doc = checked_report(ragscore("--gold", GOLD, "--trace", EXAMPLES / "trace.jsonl", "--scores", "s.jsonl").out)
    assert {name: doc["gates"][name]["op"] for name in ("latency_ms", "prompt_tokens", "my_cost")} == {
        "latency_ms": ">=", "prompt_tokens": ">=", "my_cost": ">="}
    assert doc["pass"] is True


def test_diagnoses_follow_the_name(ragscore, isolated):
    write(isolated / "gates.toml", "[diagnose.latency_ms]\nwarning = 800\ncritical = 2000\n"
                                   "[diagnose.judge_score]\nwarning = 0.5\n")
    write(isolated / "s.jsonl", [{"qid": q, "latency_ms": ms, "judge_score": f}
                                 for q, ms, f in zip(QIDS, (900, 1800, 700), (0.9, 0.2, 0.1), strict=True)])
    doc = checked_report(ragscore("--gold", GOLD, "--trace", EXAMPLES / "trace.jsonl", "--scores", "s.jsonl").out)
    found = {d["metric"]: d for d in doc["diagnoses"]}
    latency = found["latency_ms"]
    assert (latency["value"], latency["severity"], latency["direction"]) == (pytest.approx(3400 / 3), "warning", "lower")
    assert [(s["qid"], s["value"]) for s in latency["low_samples"]] == [("A0002", 1800.0), ("A0001", 900.0)]
    other = found["judge_score"]
    assert (other["value"], other["direction"]) == (pytest.approx(0.4), "higher")
    assert [s["qid"] for s in other["low_samples"]] == ["A0003", "A0002"]


def test_compare_counts_a_rise_as_worse(ragscore, isolated):
    write(isolated / "gates.toml", "[regression]\nlatency_ms = 100\nprompt_tokens = 10\n")
    write(isolated / "base.jsonl", [{**t, "scores": {"latency_ms": 100, "prompt_tokens": 50}} for t in TRACES])
    write(isolated / "new.jsonl", [{**t, "scores": {"latency_ms": 500, "prompt_tokens": 30}} for t in TRACES])
    run = ragscore("compare", "--gold", GOLD, "--baseline", "base.jsonl", "--trace", "new.jsonl")
    doc = json.loads(run.out)
    assert doc["regressions"]["latency_ms"]["worse_by"] == 400 and doc["regressions"]["latency_ms"]["status"] == "fail"
    assert doc["regressions"]["prompt_tokens"]["worse_by"] == -20 and doc["regressions"]["prompt_tokens"]["status"] == "pass"
    assert run.status == 1
    markdown = ragscore("compare", "--gold", GOLD, "--baseline", "base.jsonl", "--trace", "new.jsonl",
                        "--format", "markdown", "--no-fail").out
    assert "| `latency_ms` | 100.0000 | 500.0000 | +400.0000 ▲ worse |" in markdown
    assert "| `prompt_tokens` | 50.0000 | 30.0000 | -20.0000 ▼ better |" in markdown


def test_a_gate_on_a_name_the_run_never_saw(ragscore, isolated):
    args = ("--gold", GOLD, "--trace", EXAMPLES / "trace.jsonl", "--format", "none", "--gates", "latency_ms=1500")
    line = ('{status} latency_ms = n/a (gate <= 1500): the run never saw "latency_ms" (no trace\'s "scores" and no '
            "--scores row gave it)")
    run = ragscore(*args)
    assert run.status == 0
    assert f"ragscore: {line.format(status='SKIPPED')}\n" in run.err
    assert run.err.endswith("ragscore: pass: 6 gates checked, none failed\n")
    strict = ragscore(*args, "--strict")
    assert strict.status == 1
    assert f"ragscore: {line.format(status='FAIL   ')}\n" in strict.err
    assert strict.err.endswith("ragscore: FAIL: 1 of 6 gates failed: latency_ms\n")


def test_a_score_seen_with_no_value_is_not_unseen(ragscore, isolated):
    write(isolated / "t.jsonl", traces_with("latency_ms", (None, None, None)))
    run = ragscore("--gold", GOLD, "--trace", "t.jsonl", "--format", "none", "--gates", "latency_ms=1500")
    assert run.status == 0
    assert "ragscore: SKIPPED latency_ms = n/a (gate <= 1500)\n" in run.err


def test_gate_results_say_whether_the_metric_was_seen():
    gates = parse_gate_option("latency_ms=5,cost=1", [], 5, external=True)
    results = evaluate_gates([g for g in gates.values() if g], {"cost": 0.5}, strict=False)
    assert [(r.gate.metric, r.status.value, r.seen) for r in results] == [("latency_ms", "skipped", False),
                                                                          ("cost", "pass", True)]
