"""ragscore monitor (issue 18, part 3): per-window rates against a hand count, gates on windows,
drift against statsmodels and on seeded data, OpenMetrics parsed by prometheus_client, timestamps,
settings, the HTML page, and memory that does not grow with the traces."""

from __future__ import annotations

import math
import random
import re
import statistics
from datetime import UTC, datetime

import pytest

from conftest import validated, write
from ragscore.loaders.times import instant
from ragscore.monitoring.windows import Window, two_proportion_test, window_seconds
from ragscore.schema import MONITOR_SCHEMA_FILE, load_schema

try:  # every monitor report read here is checked against its shipped schema
    from jsonschema import Draft202012Validator

    VALIDATOR = Draft202012Validator(load_schema(MONITOR_SCHEMA_FILE))
except ImportError:  # the test extra is not installed
    VALIDATOR = None


def _doc(text):
    return validated(text, VALIDATOR, "the monitor report")

DAY = 1_763_942_400  # 2025-11-24T00:00:00Z
REFUSAL = "not in context"


def _trace(rng, ts, refuse_p=0.1, fabricate_p=0.05, empty_p=0.05):
    retrieved = [] if rng.random() < empty_p else ["d1", "d2", "d3"]
    trace = {"ts": ts, "retrieved_ids": retrieved, "latency_ms": round(rng.lognormvariate(6, 0.5), 2),
             "usage": {"prompt_tokens": rng.randrange(100, 900), "completion_tokens": rng.randrange(5, 200)}}
    if rng.random() < refuse_p:
        trace["answer_json"] = {"claim": REFUSAL, "citations": []}
    else:
        cites = ["d9"] if rng.random() < fabricate_p else rng.sample(["d1", "d2"], rng.randrange(1, 3))
        trace["answer_json"] = {"claim": " ".join(["word"] * rng.randrange(1, 40)), "citations": cites}
    return trace


def _day(rng, start=DAY, per_hour=80, drift_hour=None, drift_p=0.45, refuse_p=0.1):
    traces = []
    for hour in range(24):
        for _ in range(per_hour):
            p = drift_p if hour == drift_hour else refuse_p
            traces.append(_trace(rng, start + hour * 3600 + rng.randrange(3600), refuse_p=p))
    rng.shuffle(traces)  # out of time order, as logs merged from several hosts are
    return traces


def _hand_count(traces, width=3600):
    """Each window's rates and means, counted here from the traces as written."""
    windows = {}
    for t in traces:
        start = int(t["ts"] // width) * width
        w = windows.setdefault(start, {"n": 0, "refused": 0, "answered": 0, "fabricated": 0, "empty": 0,
                                       "cites": 0, "words": 0, "latency": [], "tokens_in": []})
        w["n"] += 1
        w["empty"] += not t["retrieved_ids"]
        w["latency"].append(t["latency_ms"])
        w["tokens_in"].append(t["usage"]["prompt_tokens"])
        claim, cites = t["answer_json"]["claim"], t["answer_json"]["citations"]
        if claim == REFUSAL:
            w["refused"] += 1
            continue
        w["answered"] += 1
        w["fabricated"] += any(c not in t["retrieved_ids"] for c in cites)
        w["cites"] += len(set(cites))
        w["words"] += len(claim.split())
    return windows


def _label(start):
    return datetime.fromtimestamp(start, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_per_hour_rates_equal_a_hand_count(ragscore, isolated):
    traces = _day(random.Random(1))
    write(isolated / "day.jsonl", traces)
    run = ragscore("monitor", "--trace", "day.jsonl")
    assert run.status == 0, run.err
    doc = _doc(run.out)
    counted = _hand_count(traces)
    assert [w["start"] for w in doc["windows"]] == [_label(s) for s in sorted(counted)]
    for w, start in zip(doc["windows"], sorted(counted), strict=True):
        c, m = counted[start], w["metrics"]
        assert w["traces"] == c["n"]
        assert m["refusal_rate"] == c["refused"] / c["n"]
        assert m["compliance"] == 1.0
        assert m["fabricated_citation_rate"] == c["fabricated"] / c["answered"]
        assert m["empty_retrieval_rate"] == c["empty"] / c["n"]
        assert m["citations_per_answer"] == c["cites"] / c["answered"]
        assert m["answer_length"] == c["words"] / c["answered"]
        assert m["latency_max"] == max(c["latency"]) and m["latency_mean"] == pytest.approx(
            math.fsum(c["latency"]) / len(c["latency"]), rel=1e-15)
        assert m["tokens_in_mean"] == pytest.approx(statistics.fmean(c["tokens_in"]), rel=1e-15)
        exact = statistics.quantiles(c["latency"], n=100, method="inclusive")
        for q in (50, 90, 95, 99):  # from the sketch: within 1% of the exact quantile
            assert abs(m[f"latency_p{q}"] - exact[q - 1]) <= 0.01 * exact[q - 1] + 1e-9
    assert doc["counts"] == {"traces": len(traces), "windows": 24, "untimed": 0, "bad_time": 0, "unreadable": 0,
                             "unreadable_retrieved": 0, "bad_refused": 0, "bad_operations": 0}
    assert doc["metrics"]["refusal_rate"] == sum(c["refused"] for c in counted.values()) / len(traces)


def test_a_gate_fails_when_one_window_crosses_it(ragscore, isolated):
    write(isolated / "day.jsonl", _day(random.Random(2), drift_hour=9, drift_p=0.6))
    run = ragscore("monitor", "--trace", "day.jsonl", "--gates", "refusal_rate=0.35", "--format", "none")
    assert run.status == 1
    lines = run.err.splitlines()
    assert "ragscore: FAIL    refusal_rate[2025-11-24T09:00:00Z] = " in "\n".join(lines)
    assert sum(line.startswith("ragscore: FAIL    refusal_rate[") for line in lines) == 1
    assert lines[-1] == "ragscore: FAIL: 1 failed: refusal_rate[2025-11-24T09:00:00Z]"
    doc = _doc(ragscore("monitor", "--trace", "day.jsonl", "--gates", "refusal_rate=0.35").out)
    assert doc["gates"]["refusal_rate"]["status"] == "pass"  # the whole day is below it
    statuses = [w["gates"]["refusal_rate"]["status"] for w in doc["windows"]]
    assert statuses.count("fail") == 1 and statuses[9] == "fail"
    # A window with fewer traces than min_n is not gated.
    run = ragscore("monitor", "--trace", "day.jsonl", "--gates", "refusal_rate=0.35", "--min-n", "1000")
    doc = _doc(run.out)
    assert run.status == 0 and all(w["small"] for w in doc["windows"])
    assert {w["gates"]["refusal_rate"]["status"] for w in doc["windows"]} == {"skipped"}


@pytest.mark.parametrize("seed", range(3))
def test_drift_flags_an_injected_change_and_not_a_sampled_unchanged_day(ragscore, isolated, seed):
    rng = random.Random(100 + seed)
    write(isolated / "base.jsonl", _day(rng, start=DAY - 86_400))
    write(isolated / "same.jsonl", _day(rng))
    write(isolated / "drifted.jsonl", _day(rng, drift_hour=15))
    write(isolated / "gates.toml", "[monitor.drift]\nrefusal_rate = 0.1\n")
    same = ragscore("monitor", "--trace", "same.jsonl", "--baseline", "base.jsonl")
    doc = _doc(same.out)
    assert same.status == 0 and not any(d["significant"] for d in doc["drift"])
    assert len(doc["drift"]) == 25 * 4  # every rate of every window and of the whole day
    drifted = ragscore("monitor", "--trace", "drifted.jsonl", "--baseline", "base.jsonl")
    doc = _doc(drifted.out)
    flagged = [(d["window"], d["metric"]) for d in doc["drift"] if d["significant"]]
    assert ("2025-11-24T15:00:00Z", "refusal_rate") in flagged
    assert all(window in ("2025-11-24T15:00:00Z", "all") for window, _ in flagged)
    assert drifted.status == 1
    assert "ragscore: DRIFT   refusal_rate[2025-11-24T15:00:00Z] " in drifted.err


def test_the_z_test_equals_statsmodels():
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    rng = random.Random(5)
    for _ in range(300):
        n1, n2 = rng.randrange(1, 400), rng.randrange(1, 400)
        x1, x2 = rng.randrange(0, n1 + 1), rng.randrange(0, n2 + 1)
        z, p = two_proportion_test(x1, n1, x2, n2)
        if x1 + x2 in (0, n1 + n2):
            assert (z, p) == (None, None)  # no variance: statsmodels gives NaN
            continue
        ref_z, ref_p = proportion.proportions_ztest([x1, x2], [n1, n2])
        assert z == pytest.approx(ref_z, rel=1e-9, abs=1e-12)
        assert p == pytest.approx(ref_p, rel=1e-9, abs=1e-300)


def test_openmetrics_parses_with_prometheus_client(ragscore, isolated):
    parser = pytest.importorskip("prometheus_client.openmetrics.parser")
    rng = random.Random(3)
    write(isolated / "base.jsonl", _day(rng, start=DAY - 86_400, per_hour=20))
    write(isolated / "day.jsonl", _day(rng, per_hour=20))
    run = ragscore("monitor", "--trace", "day.jsonl", "--baseline", "base.jsonl", "--format", "openmetrics",
                   "--json", "m.json", "--min-n", "10")
    doc = _doc((isolated / "m.json").read_text())
    families = {f.name: f for f in parser.text_string_to_metric_families(run.out)}
    assert run.out.endswith("# EOF\n")
    last = doc["windows"][-1]
    for name in ("refusal_rate", "traces", "compliance"):  # the period and the last window: a fixed set of series
        values = {s.labels["scope"]: s.value for s in families[f"ragscore_monitor_{name}"].samples}
        assert values == {"period": doc["metrics"][name], "last_window": last["metrics"][name]}
    latency = families["ragscore_monitor_latency_p95_seconds"]
    assert latency.unit == "seconds"
    assert {s.labels["scope"]: s.value for s in latency.samples}["period"] == doc["metrics"]["latency_p95"] / 1000
    assert families["ragscore_monitor_tokens"].samples and not any(name.endswith("_total") for name in families)
    start = families["ragscore_monitor_last_window_start_seconds"].samples[0].value
    assert datetime.fromtimestamp(start, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") == last["start"]
    assert [s.value for s in families["ragscore_monitor_pass"].samples] == [1.0]
    drift = {(s.labels["metric"], s.labels["scope"]) for s in families["ragscore_monitor_drift_p_adjusted"].samples}
    assert ("refusal_rate", "period") in drift and ("refusal_rate", "last_window") in drift
    # A text exposition parser (what Prometheus scrapes) reads it too.
    text_parser = pytest.importorskip("prometheus_client.parser")
    assert {f.name for f in text_parser.text_string_to_metric_families(run.out.replace("# EOF\n", ""))}


def test_timestamps_epoch_iso_and_the_unreadable(ragscore, isolated):
    assert instant(DAY) == DAY and instant("2025-11-24T01:30:00+01:00") == DAY + 1800
    assert instant("2025-11-24T00:30:00") == DAY + 1800  # no offset: UTC
    assert instant(DAY * 1000) is None and instant("yesterday") is None and instant(True) is None
    base = {"retrieved_ids": ["d1"], "answer_json": {"claim": "an answer", "citations": ["d1"]}}
    traces = [{**base, "ts": DAY + 10}, {**base, "timestamp": "2025-11-24T00:20:00Z"},
              {**base, "start_time": "2025-11-24T02:00:00+01:00"}, {**base},
              {**base, "ts": DAY * 1000}, {**base, "ts": "soon"}]
    write(isolated / "t.jsonl", traces)
    run = ragscore("monitor", "--trace", "t.jsonl")
    doc = _doc(run.out)
    assert [(w["start"], w["traces"]) for w in doc["windows"]] == [("2025-11-24T00:00:00Z", 2),
                                                                  ("2025-11-24T01:00:00Z", 1)]
    assert doc["counts"] == {"traces": 6, "windows": 2, "untimed": 1, "bad_time": 2, "unreadable": 0,
                             "unreadable_retrieved": 0, "bad_refused": 0, "bad_operations": 0}
    assert "ragscore: 1 trace has no timestamp (ts, timestamp or start_time; counted in the whole period only): " \
           "t.jsonl, line 4" in run.err
    assert "2 traces have a timestamp that cannot be read" in run.err and "t.jsonl, lines 5, 6" in run.err
    assert doc["metrics"]["refusal_rate"] == 0.0 and doc["counts"]["traces"] == 6


def test_settings_come_from_gates_toml_and_bad_ones_point_at_their_line(ragscore, isolated):
    write(isolated / "day.jsonl", _day(random.Random(4), per_hour=10))
    write(isolated / "gates.toml", '[monitor]\nwindow = "6h"\nmin_n = 5\n\n[monitor.gates]\nlatency_p95 = 5000\n'
                                   'refusal_rate = 0.5\n')
    doc = _doc(ragscore("monitor", "--trace", "day.jsonl").out)
    assert len(doc["windows"]) == 4 and doc["settings"]["window"] == "6h" and doc["settings"]["min_n"] == 5
    assert doc["gates"]["latency_p95"]["op"] == "<=" and doc["gates"]["refusal_rate"]["op"] == "<="
    assert "|window:6h|min_n:5|" in doc["signature"]
    assert len(_doc(ragscore("monitor", "--trace", "day.jsonl", "--window", "1d").out)["windows"]) == 1
    for text, message in (
        ('[monitor]\nwindows = "1h"\n', 'gates.toml:2: [monitor] unknown key "windows"; did you mean "window"?'),
        ('[monitor]\nwindow = "1 hour"\n', 'gates.toml:2: [monitor] expected "window" to be a count and a unit'),
        ('[monitor.drift]\nlatency_p95 = 10\n', 'gates.toml:2: [monitor.drift] a drift bound is for a rate'),
        ('[monitor.drift]\nrefusal_rate = 5\n', 'expected "refusal_rate" to be the largest change that passes'),
        ('[monitor.gates]\nrefusal_rate = 5\n', '"refusal_rate" is from 0 to 1: a bound of 5 cannot be meant'),
        ('[monitor.gates]\nrefusal_rat = 0.2\n', 'unknown metric "refusal_rat"; did you mean "refusal_rate"?'),
    ):
        write(isolated / "gates.toml", text)
        run = ragscore("monitor", "--trace", "day.jsonl")
        assert run.status == 2 and message in run.err, (text, run.err)
    (isolated / "gates.toml").unlink()
    run = ragscore("monitor", "--trace", "day.jsonl", "--window", "90min")
    assert run.status == 2 and "--window: expected a count and a unit" in run.err


def test_the_html_page_has_a_chart_per_metric_and_no_script(ragscore, isolated):
    rng = random.Random(6)
    write(isolated / "base.jsonl", _day(rng, start=DAY - 86_400, per_hour=30))
    write(isolated / "day.jsonl", _day(rng, per_hour=30, drift_hour=3, drift_p=0.8))
    run = ragscore("monitor", "--trace", "day.jsonl", "--baseline", "base.jsonl", "--gates", "refusal_rate=0.3",
                   "--html", "m.html", "--markdown", "m.md", "--format", "none")
    assert run.status == 1
    page = (isolated / "m.html").read_text()
    assert "<script" not in page and "Content-Security-Policy" in page and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")
    charted = re.findall(r'<h3 id="chart-([a-z0-9_]+)">', page)
    assert charted == ["traces", "refusal_rate", "compliance", "fabricated_citation_rate", "empty_retrieval_rate",
                       "citations_per_answer", "answer_length", "latency_p50", "latency_p90", "latency_p95",
                       "latency_p99", "latency_max", "latency_mean", "tokens_in_mean", "tokens_out_mean",
                       "tokens_total"]
    assert page.count("<polyline") >= len(charted) and "<title>gate &lt;= 0.3</title>" in page
    markdown = (isolated / "m.md").read_text()
    assert markdown.startswith("# ragscore monitor\n\n**FAIL**") and "| 2025-11-24T03:00:00Z | 30 |" in markdown
    assert "## Drift from the baseline" in markdown


def test_every_shape_of_trace_is_counted_as_score_reads_it(ragscore, isolated):
    t = DAY + 60
    traces = [
        {"ts": t, "retrieved_ids": ["d1"], "answer_json": {"claim": "not in context", "citations": []}},  # token
        {"ts": t, "retrieved_ids": ["d1"], "answer_json": {"claim": "I don't know, sorry", "citations": []}},  # pattern
        {"ts": t, "retrieved_ids": ["d1"], "answer_json": {"claim": "x y", "citations": ["d1"], "refused": True}},
        {"ts": t, "retrieved_ids": ["d1", "d2"], "answer_json": {"claim": "one two three", "citations": ["d1", "d1"]}},
        {"ts": t, "retrieved_ids": ["d1"], "answer_json": {"claim": "a b", "citations": "d1"}},  # invalid citations
        {"ts": t, "retrieved_ids": ["d1"], "answer_json": {"claim": "a b c d"}},                 # no citations list
        {"ts": t, "retrieved_ids": ["d1"], "answer_json": {"claim": "a", "citations": ["d7", "d1"]}},  # fabricated
        {"ts": t, "retrieved_ids": [{"score": 1}], "answer_json": {"claim": "a", "citations": ["d1"]}},  # bad entry
        {"ts": t, "retrieved_ids": ["d1"], "answer_json": {"claim": "a", "citations": ["d1"]}, "refused": "yes"},
        {"retrieved_ids": [], "answer_json": {"claim": "b", "citations": []}, "latency_ms": "120ms",
         "usage": "n/a"},                                                                          # untimed
        {"ts": t, "qid": None, "question": None, "retrieved_ids": ["d1"], "answer": "c"},           # no join key
    ]
    write(isolated / "t.jsonl", traces)
    run = ragscore("monitor", "--trace", "t.jsonl", "--refusal-pattern", r"\bdon.?t know\b", "--min-n", "1")
    assert run.status == 0, run.err
    doc = _doc(run.out)
    m = doc["metrics"]
    # Refused: the token, the pattern and the field (3 of 11). Answered: 8, of which compliant: those
    # with a citations list (4th, 7th, 8th, 9th, 10th, 11th has none: "answer" only) -> 5 + 3 refusals.
    assert m["traces"] == 11 and m["refusal_rate"] == 3 / 11
    assert m["compliance"] == (3 + 5) / 11
    # Fabricated: the 7th (d7) and the 8th (its retrieved list has no id, read as nothing retrieved).
    assert m["fabricated_citation_rate"] == 2 / 8
    assert m["empty_retrieval_rate"] == 2 / 11  # the 8th and the 10th
    # Distinct cited ids of the answered traces with a list: 1 + 0 (invalid) + 0 + 2 + 1 + 1 + 0 + 0.
    assert m["citations_per_answer"] == 5 / 8
    assert m["answer_length"] == (3 + 2 + 4 + 1 + 1 + 1 + 1 + 1) / 8
    assert doc["counts"] == {"traces": 11, "windows": 1, "untimed": 1, "bad_time": 0, "unreadable": 0,
                             "unreadable_retrieved": 1, "bad_refused": 1, "bad_operations": 3}
    err = run.err
    assert "1 trace has no timestamp (ts, timestamp or start_time; counted in the whole period only): t.jsonl, " \
           "line 10" in err
    assert "1 trace has a retrieved list with an entry that gives no id (read as nothing retrieved): t.jsonl, " \
           "line 8" in err
    assert "1 trace has a \"refused\" field that is neither true nor false" in err
    assert "operations: 3 latency, token or cost fields could not be read" in err


def test_times_outside_1970_to_5138_are_unreadable_not_a_crash(ragscore, isolated):
    base = {"retrieved_ids": ["d1"], "answer_json": {"claim": "a", "citations": ["d1"]}}
    times = [-1, -70_000_000_000, "1969-12-31T23:59:59Z", "9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00",
             1e11, DAY]
    write(isolated / "t.jsonl", [{**base, "ts": ts} for ts in times])
    for window in ("1h", "9999999w"):
        run = ragscore("monitor", "--trace", "t.jsonl", "--window", window)
        doc = _doc(run.out)
        assert run.status == 0 and doc["counts"]["bad_time"] == 6 and doc["counts"]["windows"] == 1, run.err


def test_empty_inputs_are_errors(ragscore, isolated):
    (isolated / "empty.jsonl").write_text("")
    write(isolated / "day.jsonl", _day(random.Random(8), per_hour=2))
    run = ragscore("monitor", "--trace", "empty.jsonl", "--gates", "refusal_rate=0.2")
    assert (run.status, run.err) == (2, "ragscore: error: empty.jsonl: no trace records (--trace): a trace input "
                                        "needs at least one (an empty or blank file is no run)\n")
    run = ragscore("monitor", "--trace", "day.jsonl", "--baseline", "empty.jsonl")
    assert (run.status, run.err) == (2, "ragscore: error: empty.jsonl: no trace records (--baseline): a trace input "
                                        "needs at least one (an empty or blank file is no run)\n")


def test_small_windows_are_not_tested_for_drift_and_quiet_hours_show(ragscore, isolated):
    rng = random.Random(9)
    base = _day(rng, start=DAY - 86_400, per_hour=40)
    today = [t for t in _day(rng, per_hour=40) if not DAY + 5 * 3600 <= t["ts"] < DAY + 7 * 3600]  # an outage
    today.append({**_trace(rng, DAY - 1), "answer_json": {"claim": REFUSAL, "citations": []}})  # one stray trace
    write(isolated / "base.jsonl", base)
    write(isolated / "today.jsonl", today)
    write(isolated / "gates.toml", "[monitor.drift]\nrefusal_rate = 0.05\n\n[monitor.gates]\ntraces = 10\n")
    run = ragscore("monitor", "--trace", "today.jsonl", "--baseline", "base.jsonl")
    doc = _doc(run.out)
    stray = [d for d in doc["drift"] if d["window"] == "2025-11-23T23:00:00Z"]
    assert {d["status"] for d in stray} == {"skipped"}  # one trace: no test, no false alarm
    windows = {w["start"]: w for w in doc["windows"]}
    assert len(windows) == 25  # 23:00 the day before, then every hour, the quiet ones too
    for hour in ("05", "06"):
        quiet = windows[f"2025-11-24T{hour}:00:00Z"]
        assert quiet["traces"] == 0 and quiet["metrics"]["refusal_rate"] is None
        assert quiet["gates"]["traces"]["status"] == "fail"  # a gate on traces is never skipped
    assert run.status == 1
    assert not any(d["status"] == "fail" for d in doc["drift"])
    # The period's gates skip below min_n too (but those on traces).
    write(isolated / "three.jsonl", today[:3])
    (isolated / "gates.toml").unlink()
    run = ragscore("monitor", "--trace", "three.jsonl", "--gates", "refusal_rate=0.01,traces=2")
    doc = _doc(run.out)
    assert doc["gates"]["refusal_rate"]["status"] == "skipped" and doc["gates"]["traces"]["status"] == "pass"
    assert "the period has fewer traces than min_n (30): its gates are skipped" in run.err


def test_span_formats_are_windowed_and_a_mapped_time_is_read(ragscore, isolated):
    from conftest import EXAMPLES

    for name in ("openinference", "otel-genai"):
        doc = _doc(ragscore("monitor", "--trace", EXAMPLES / "formats" / f"{name}.jsonl", "--window", "1d").out)
        assert doc["counts"]["untimed"] == 0 and [w["start"] for w in doc["windows"]] == ["2025-03-14T00:00:00Z"]
        assert doc["metrics"]["latency_max"] is not None and doc["metrics"]["tokens_in_mean"] == 5583 / 9
    base = {"retrieved_ids": ["d1"], "answer_json": {"claim": "a", "citations": ["d1"]}}
    write(isolated / "t.jsonl", [{**base, "meta": {"at": "2025-11-24T03:10:00Z"}, "ts": DAY},
                                 {**base, "meta": {"at": DAY + 7200}}])
    doc = _doc(ragscore("monitor", "--trace", "t.jsonl", "--map", "ts=meta.at").out)
    assert [(w["start"], w["traces"]) for w in doc["windows"]] == [
        ("2025-11-24T02:00:00Z", 1), ("2025-11-24T03:00:00Z", 1)]  # the mapped time, not "ts"
    run = ragscore("monitor", "--trace", "t.jsonl", "--gates", "precision=0.5")
    assert run.status == 2 and "it needs a gold set: a metric of ragscore score, not of monitor" in run.err


def test_the_python_api_and_memory_bounded_by_windows_not_traces(isolated):
    import tracemalloc

    import ragscore

    def stream(n, seed):
        rng = random.Random(seed)
        for i in range(n):
            yield _trace(rng, DAY + i * 86_400 // n)  # a day of traffic, in time order

    run = ragscore.monitor(stream(2000, 1), window="6h", gates={"refusal_rate": 0.5})
    assert run.passed and len(run.document["windows"]) == 4
    ragscore.monitor(stream(100, 2), window="1h")  # imports and caches, before measuring
    peaks = []
    for n in (5_000, 40_000):
        tracemalloc.start()
        ragscore.monitor(stream(n, 2), window="1h")
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    # Eight times the traces in the same 24 windows: the same memory, within 100 KB.
    assert peaks[1] - peaks[0] < 100_000, peaks


def test_a_window_adds_up():
    rng = random.Random(7)
    a, b, both = Window(), Window(), Window()
    for i in range(9000):
        record = _trace(rng, DAY)
        (a if i % 3 else b).add_operations(record)
        both.add_operations(record)
    merged = a + b
    assert merged.operations().metrics() == both.operations().metrics()
    assert window_seconds("15m") == 900 and window_seconds("2w") == 1_209_600


def test_the_docs_example(ragscore, monkeypatch):
    from conftest import ROOT
    from docs import doc_block

    monkeypatch.chdir(ROOT)
    block = doc_block("$ ragscore monitor --trace examples/monitor/today.jsonl")
    shown = [line for line in block.splitlines() if line.startswith("ragscore: ")]
    run = ragscore("monitor", "--trace", "examples/monitor/today.jsonl", "--baseline",
                   "examples/monitor/baseline.jsonl", "--gates-file", "examples/monitor/gates.toml", "--format", "none")
    assert run.status == 1
    assert shown == run.err.splitlines()


def test_the_schema_is_valid_and_printed(ragscore):
    jsonschema = pytest.importorskip("jsonschema")
    from ragscore.schema import schema_text

    jsonschema.Draft202012Validator.check_schema(load_schema(MONITOR_SCHEMA_FILE))
    run = ragscore("schema", "monitor")
    assert run.status == 0 and run.out == schema_text(MONITOR_SCHEMA_FILE)
