"""Latency, tokens and cost read from the traces (issue 18, part 2): exact quantiles against
statistics and numpy, what counts as missing or bad, --jobs, partials' sketch and its accuracy."""

from __future__ import annotations

import json
import math
import random
import statistics
from fractions import Fraction

import pytest

from conftest import write
from ragscore.operations import QUANTILES, Sketch, read

NAMES = ("latency_p50", "latency_p90", "latency_p95", "latency_p99", "latency_max", "latency_mean", "tokens_in_mean",
         "tokens_out_mean", "tokens_total", "cost_total", "cost_mean")


def _run(folder, n=300, seed=1):
    """Traces with latency (some in seconds, some missing, one unreadable), tokens and cost."""
    rng = random.Random(seed)
    gold = [{"qid": f"q{i}", "answerable": True, "gold_citations": ["d1"]} for i in range(n)]
    traces, latency, tokens_in, tokens_out, cost = [], {}, {}, {}, {}
    for i in range(n):
        t = {"qid": f"q{i}", "retrieved_ids": ["d1"], "answer_json": {"claim": "x", "citations": ["d1"]}}
        if i % 10 == 1:
            pass  # no latency: missing
        elif i % 10 == 2:
            t["latency"] = round(rng.lognormvariate(0, 0.6), 3)  # seconds
            latency[i] = t["latency"] * 1000.0
        elif i == 7:
            t["latency_ms"] = -5  # unreadable: counted as bad and missing
        else:
            t["latency_ms"] = round(rng.lognormvariate(7, 0.5), 2)
            latency[i] = float(t["latency_ms"])
        if i % 3:
            t["usage"] = {"prompt_tokens": rng.randrange(50, 900), "completion_tokens": rng.randrange(0, 300)}
            tokens_in[i], tokens_out[i] = t["usage"]["prompt_tokens"], t["usage"]["completion_tokens"]
        if i % 4 == 0:
            t["cost_usd"] = round(rng.uniform(0, 0.01), 6)
            cost[i] = t["cost_usd"]
        traces.append(t)
    write(folder / "g.jsonl", gold)
    write(folder / "t.jsonl", traces)
    return latency, tokens_in, tokens_out, cost


def test_quantiles_equal_statistics_and_numpy_and_the_rest_is_exact(ragscore, isolated):
    np = pytest.importorskip("numpy")
    latency, tokens_in, tokens_out, cost = _run(isolated)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail")
    doc = run.json()
    metrics = doc["metrics"]
    values = list(latency.values())
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    for q in QUANTILES:
        assert metrics[f"latency_p{q}"] == pytest.approx(cuts[q - 1], rel=1e-12)
        assert metrics[f"latency_p{q}"] == pytest.approx(float(np.percentile(values, q)), rel=1e-12)
    assert metrics["latency_max"] == max(values)
    assert metrics["latency_mean"] == float(sum(map(Fraction, values)) / len(values))
    assert metrics["tokens_in_mean"] == float(Fraction(sum(tokens_in.values()), len(tokens_in)))
    assert metrics["tokens_out_mean"] == float(Fraction(sum(tokens_out.values()), len(tokens_out)))
    assert metrics["tokens_total"] == sum(tokens_in.values()) + sum(tokens_out.values())
    assert metrics["cost_total"] == math.fsum(cost.values())
    assert metrics["cost_mean"] == float(sum(map(Fraction, cost.values())) / len(cost))
    assert doc["operations"] == {
        "quantiles": "exact", "bad": 1,
        "latency_ms": {"questions": len(latency), "missing": 300 - len(latency)},
        "tokens_in": {"questions": len(tokens_in), "missing": 300 - len(tokens_in)},
        "tokens_out": {"questions": len(tokens_out), "missing": 300 - len(tokens_out)},
        "cost": {"questions": len(cost), "missing": 300 - len(cost)},
    }
    assert ("ragscore: operations: 1 latency, token or cost field could not be read (not a number from 0 to 1e15, "
            "or an end before its start); counted as missing") in run.err
    assert all(name not in doc["intervals"] for name in NAMES)  # no interval: they are not shares
    markdown = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "markdown").out
    assert "## Operations" in markdown and "| `latency_p95` |" in markdown


def test_where_each_value_is_read_from():
    cases = [
        ({"latency_ms": 250}, (250.0, math.nan, math.nan, math.nan), 0),
        ({"latency": 0.25}, (250.0, math.nan, math.nan, math.nan), 0),
        ({"duration_ms": 12.5}, (12.5, math.nan, math.nan, math.nan), 0),
        ({"start_time": 100.0, "end_time": 100.5}, (500.0, math.nan, math.nan, math.nan), 0),
        ({"start_time": "2026-11-24T10:00:00Z", "end_time": "2026-11-24T10:00:01.250+00:00"},
         (1250.0, math.nan, math.nan, math.nan), 0),
        ({"start_time": "2026-11-24T10:00:02", "end_time": "2026-11-24T10:00:01"}, (math.nan,) * 4, 1),  # end first
        ({"usage": {"input_tokens": 7, "output_tokens": 3}}, (math.nan, 7.0, 3.0, math.nan), 0),
        ({"prompt_tokens": 7, "completion_tokens": 0}, (math.nan, 7.0, 0.0, math.nan), 0),
        ({"cost": 0.5, "cost_usd": 9}, (math.nan, math.nan, math.nan, 0.5), 0),  # the first named wins
        ({"latency_ms": True, "cost": "0.1", "usage": {"prompt_tokens": float("nan")}}, (math.nan,) * 4, 3),
        ({"latency_ms": 10**400}, (math.nan,) * 4, 1),
        ({"usage": "n/a"}, (math.nan,) * 4, 2),  # not an object: both token counts unreadable
        ({"start_time": "2026-11-24T10:00:00+02:00", "end_time": "2026-11-24T10:00:01"}, (math.nan,) * 4, 1),
        ({"start_time": 0, "end_time": "1970-01-01T00:00:02Z"}, (2000.0, math.nan, math.nan, math.nan), 0),
        ({"start_time": "2026-11-24T10:00:00Z"}, (math.nan,) * 4, 0),  # a start alone: no latency, nothing bad
        ({"end_time": 5}, (math.nan,) * 4, 0),
        # Two ISO 8601 times are subtracted exactly (through epoch floats: 1.2500002384185791 s).
        ({"start_time": "2026-11-24T10:00:00.000001Z", "end_time": "2026-11-24T10:00:01.250002Z"},
         (1250.001, math.nan, math.nan, math.nan), 0),
    ]
    for record, expected, bad in cases:
        values, unreadable = read(record)
        assert [v if v == v else None for v in values] == [v if v == v else None for v in expected], record
        assert unreadable == bad, record


def test_a_later_trace_line_replaces_the_values_and_jobs_give_the_same_bytes(ragscore, isolated):
    _run(isolated)
    with (isolated / "t.jsonl").open("a", encoding="utf-8") as f:  # q0 again, without a latency
        f.write(json.dumps({"qid": "q0", "answer_json": {"claim": "x", "citations": ["d1"]}}) + "\n")
    one = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--jobs", "1")
    two = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--jobs", "2")
    assert (one.out, one.err) == (two.out, two.err)
    assert one.json()["operations"]["latency_ms"]["missing"] == 300 - 269 + 1


def test_gates_on_operations_are_upper_bounds(ragscore, isolated):
    _run(isolated)
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail").json()
    p95 = doc["metrics"]["latency_p95"]
    failing = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--gates", f"latency_p95={p95 - 1}")
    assert failing.status == 1 and failing.json()["gates"]["latency_p95"]["status"] == "fail"
    passing = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--gates", f"latency_p95={p95}")
    assert passing.json()["gates"]["latency_p95"]["status"] == "pass"


def test_traces_without_operations_report_none(ragscore, isolated):
    _run(isolated)
    traces = [json.loads(line) for line in (isolated / "t.jsonl").read_text(encoding="utf-8").splitlines()]
    write(isolated / "plain.jsonl", [{k: v for k, v in t.items() if k in ("qid", "retrieved_ids", "answer_json")}
                                     for t in traces])
    doc = ragscore("--gold", "g.jsonl", "--trace", "plain.jsonl", "--no-fail").json()
    assert "operations" not in doc and not any(name in doc["metrics"] for name in NAMES)


def test_partials_carry_a_sketch_within_one_percent(ragscore, isolated):
    _run(isolated, n=2000)
    exact = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail").json()
    for index in (1, 2, 3):
        assert ragscore("partial", "--gold", "g.jsonl", "--trace", "t.jsonl", "--part", f"{index}/3",
                        "-o", f"p{index}.json", "-q").status == 0
    merged = ragscore("merge", "p3.json", "p1.json", "p2.json", "--no-fail").json()
    assert merged["operations"]["quantiles"] == "sketch (each within 1% of the exact quantile)"
    for name in NAMES:
        if name.startswith("latency_p"):
            assert merged["metrics"][name] == pytest.approx(exact["metrics"][name], rel=0.01)
        else:
            assert merged["metrics"][name] == exact["metrics"][name], name  # sums, means and the maximum: exact
    assert {k: v for k, v in merged["operations"].items() if k != "quantiles"} == \
        {k: v for k, v in exact["operations"].items() if k != "quantiles"}
    # A damaged sketch is an input error, not a wrong quantile.
    doc = json.loads((isolated / "p1.json").read_text(encoding="utf-8"))
    doc["result"]["operations"]["sketch"]["zeros"] += 1
    (isolated / "p1.json").write_text(json.dumps(doc), encoding="utf-8")
    run = ragscore("merge", "p3.json", "p1.json", "p2.json")
    assert run.status == 2 and 'a damaged ragscore partial: "result.operations.sketch" holds ' in run.err


def test_the_sketch_stays_within_one_percent_on_a_million_values():
    rng = random.Random(18)
    values = [rng.lognormvariate(6, 1.5) for _ in range(1_000_000)] + [0.0] * 1000
    halves = Sketch.of(values[::2]) + Sketch.of(values[1::2])
    assert halves == Sketch.of(values)  # buckets add up exactly
    percents = list(range(1, 100))
    exact = statistics.quantiles(sorted(values), n=100, method="inclusive")
    for percent, estimate in zip(percents, halves.quantiles(percents), strict=True):
        assert abs(estimate - exact[percent - 1]) <= 0.01 * exact[percent - 1], percent


def test_the_docs_example(ragscore, monkeypatch):
    from conftest import ROOT
    from docs import doc_block

    monkeypatch.chdir(ROOT)
    block = doc_block("$ ragscore --gold examples/operations/gold.jsonl")
    shown = [line for line in block.splitlines() if line.startswith("ragscore: ")]
    run = ragscore("--gold", "examples/operations/gold.jsonl", "--trace", "examples/operations/trace.jsonl",
                   "--gates", "latency_p95=1000,cost_total=0.01", "--format", "none")
    assert run.status == 1 and len(shown) == 4
    assert all(line in run.err.splitlines() for line in shown), run.err


def test_fields_elsewhere_are_mapped_and_replace_the_built_in_ones(ragscore, isolated):
    _run(isolated, n=40)
    traces = [json.loads(line) for line in (isolated / "t.jsonl").read_text(encoding="utf-8").splitlines()]
    for i, t in enumerate(traces):
        t["timing"] = {"total_ms": 100.0 + i}
        t["meter"] = {"in": 10 * i}
    write(isolated / "mapped.jsonl", traces)
    doc = ragscore("--gold", "g.jsonl", "--trace", "mapped.jsonl", "--no-fail", "--map", "latency_ms=timing.total_ms",
                   "--map", "tokens_in=meter.in").json()
    assert doc["metrics"]["latency_max"] == 139.0  # the mapped field, not the native latency_ms beside it
    assert doc["metrics"]["latency_p50"] == statistics.quantiles([100.0 + i for i in range(40)], n=100,
                                                                 method="inclusive")[49]
    assert doc["metrics"]["tokens_in_mean"] == sum(10 * i for i in range(40)) / 40  # usage.prompt_tokens dropped
    assert doc["operations"]["latency_ms"] == {"questions": 40, "missing": 0}


def test_equal_latencies_are_every_quantile_exactly(ragscore, isolated):
    # statistics.quantiles gives 250.30000000000004 for four times 250.3; a gate at 250.3 must pass.
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "answerable": True, "gold_citations": ["d"]} for i in range(4)])
    write(isolated / "t.jsonl", [{"qid": f"q{i}", "latency_ms": 250.3, "answer_json": {"claim": "x", "citations": ["d"]}}
                                 for i in range(4)])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--gates", "latency_p99=250.3,latency_max=250.3",
                   "--no-fail")
    assert all(run.json()["metrics"][f"latency_p{q}"] == 250.3 for q in QUANTILES)
    assert run.json()["gates"]["latency_p99"]["status"] == "pass"


def test_a_replaced_line_and_latency_in_seconds_are_read_as_written(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "answerable": True, "gold_citations": ["d"]} for i in range(3)])
    answer = {"claim": "x", "citations": ["d"]}
    write(isolated / "t.jsonl", [
        {"qid": "q0", "latency_ms": "x", "cost": -1, "answer_json": answer},   # two bad fields ...
        {"qid": "q1", "latency": 1e15, "answer_json": answer},                 # 1e18 ms: beyond 1e15, bad
        {"qid": "q0", "latency_ms": 5, "cost": 1, "answer_json": answer},      # ... replaced by this line
        {"qid": "q2", "latency_ms": "slow", "start_time": 0, "end_time": 1, "answer_json": answer},  # bad, no fallback
    ])
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail").json()
    assert doc["operations"]["bad"] == 2
    assert doc["operations"]["latency_ms"] == {"questions": 1, "missing": 2}
    assert doc["metrics"]["latency_max"] == 5.0


def test_a_slice_gate_on_an_operational_metric_is_an_error(ragscore, isolated):
    _run(isolated, n=20)
    write(isolated / "gates.toml", "[slice_gates]\nlatency_p95 = 100\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--by", "answerable")
    assert run.status == 2 and "is not computed per slice" in run.err


def test_a_bucket_no_value_fills_is_refused(ragscore, isolated):
    _run(isolated, n=60)
    assert ragscore("partial", "--gold", "g.jsonl", "--trace", "t.jsonl", "--part", "1/1", "-o", "p.json",
                    "-q").status == 0
    doc = json.loads((isolated / "p.json").read_text(encoding="utf-8"))
    n = doc["result"]["operations"]["sums"][0]["n"]
    doc["result"]["operations"]["sketch"] = {"zeros": 0, "buckets": [[40000, n]]}
    (isolated / "p.json").write_text(json.dumps(doc), encoding="utf-8")
    run = ragscore("merge", "p.json")
    assert run.status == 2 and "a sketch bucket 40000 that no value fills" in run.err
    merged_note = ragscore("partial", "--gold", "g.jsonl", "--trace", "t.jsonl", "--part", "1/1", "-o", "q.json", "-q",
                           "--rows")
    assert merged_note.status == 0
    run = ragscore("merge", "q.json", "--no-fail", "--format", "markdown")
    assert "Latency quantiles: sketch (each within 1% of the exact quantile)." in run.out
    assert "operations: the latency quantiles come from the partials' sketches" in run.err
