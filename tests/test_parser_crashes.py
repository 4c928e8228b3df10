"""Inputs that crashed parsers (issue 31): each is now one error at its line (status 2), a note, or the
number trec_eval reads, and never a traceback.

History lines nested 100,000 deep or holding a 5,000-digit integer (whole, or torn at the end);
``power`` at a confidence whose 1 - alpha/2 rounds to 1 and for a change too small to count;
``trec`` numbers read as trec_eval's C code reads them (``atol``, ``atof``); OpenInference and
OTLP spans whose ids are not text or whose times are not 64-bit; flattened attributes whose
indices would fill memory.
"""

from __future__ import annotations

import json
import math
import tracemalloc
from statistics import NormalDist
from typing import Any

import pytest

from conftest import EXAMPLES, write
from ragscore.errors import InputError, UsageError
from ragscore.loaders.fieldpath import lookup, parse_path, unflatten
from ragscore.metrics import power as power_module
from ragscore.suite import history
from ragscore.trec.files import read_qrels, read_run
from ragscore.trec.measures import atof, atol, c_double, c_long, parse_measures

PRODUCT = EXAMPLES / "product"


# --- history and dashboard ---------------------------------------------------------------------------

def history_record(label: str = "v1", breakdown: object = None) -> dict[str, Any]:
    task: dict[str, Any] = {"command": "score", "status": "pass", "metrics": {"m": 0.5}, "key_metrics": ["m"]}
    if breakdown is not None:
        task["breakdown"] = {"x": breakdown}
    return {"ragscore_history": 1, "label": label, "time": None, "pass": True, "tasks": {"t": task}}


def nested_lists(levels: int) -> object:
    value: object = []
    for _ in range(levels - 1):
        value = [value]
    return value


DEEP = "[" * 100_000 + "]" * 100_000
DIGITS = '{"ragscore_history": 1, "n": ' + "9" * 5000 + "}"


@pytest.mark.parametrize(("line", "message"), [
    (DEEP, "h.jsonl:2: JSON nested too deeply to read: not a ragscore history line"),
    (DIGITS, "h.jsonl:2: JSON with an integer of too many digits to read: not a ragscore history line"),
    # A record is the first level, its tasks the second, ...: 61 lists under a task's breakdown make 65.
    (json.dumps(history_record("v2", nested_lists(61))),
     "h.jsonl:2: a history record nested deeper than 64 levels: not one ragscore run wrote"),
])
def test_a_history_line_python_cannot_read_is_an_error_at_its_line(ragscore, isolated, line, message):
    log = isolated / "h.jsonl"
    log.write_text(json.dumps(history_record()) + "\n" + line + "\n", encoding="utf-8")
    run = ragscore("dashboard", "h.jsonl", "--format", "none")
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {message}\n")
    with pytest.raises(UsageError) as caught:
        history.check_appendable("h.jsonl")
    assert str(caught.value) == (f'--history "h.jsonl": is not a ragscore history ({message}); name a new file or '
                                 "a history ragscore run wrote")


def test_a_record_64_levels_deep_is_read():
    record = history_record("v1", nested_lists(60))  # 4 levels to the breakdown's value, 60 lists in it
    assert history._too_deep(record) is False
    assert history._too_deep(history_record("v1", nested_lists(61))) is True


@pytest.mark.parametrize("tail", [DEEP[:150_000], DEEP, DIGITS, DIGITS[:4500]])
def test_an_unreadable_torn_last_line_is_skipped_and_cut_off_as_a_torn_line_is(ragscore, isolated, tail):
    log = isolated / "h.jsonl"
    first = history.encode(history_record())
    log.write_bytes(first + tail.encode())  # no newline: what a run killed while writing leaves
    run = ragscore("dashboard", "h.jsonl", "--format", "none")
    assert (run.status, run.err) == (
        0, "ragscore: h.jsonl: 1 incomplete line skipped (a run stopped while writing it?): line 2\n")
    assert history.check_appendable("h.jsonl") == [
        "h.jsonl: 1 incomplete line skipped (a run stopped while writing it?): line 2"]
    history.append("h.jsonl", history_record("v2"))
    assert log.read_bytes() == first + history.encode(history_record("v2"))


# --- power ---------------------------------------------------------------------------------------------

def test_a_confidence_whose_upper_quantile_rounds_to_one_reads_the_lower_tail():
    alpha = 1 - 0.9999999999999999
    assert 1 - alpha / 2 == 1.0  # inv_cdf(1.0) is its pole: the crash
    z = power_module._z(alpha)
    assert z == -NormalDist().inv_cdf(alpha / 2) and 8 < z < 9
    assert power_module._z(0.05) == NormalDist().inv_cdf(0.975)  # elsewhere the same bits as before
    sigma, n = 0.4, 100
    mde = power_module.detectable(sigma, n, alpha)
    assert mde is not None and power_module.power(mde, sigma, n, alpha) == pytest.approx(0.8, abs=1e-9)


def test_ragscore_power_at_confidence_0_9999999999999999(ragscore):
    run = ragscore("power", "--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "trace.jsonl", "--confidence",
                   "0.9999999999999999", "--format", "json")
    assert run.status == 0
    spread = [row for row in json.loads(run.out)["metrics"].values() if row["sd"]]  # none without a spread
    assert len(spread) >= 3 and all(math.isfinite(row["detectable"]) and row["needed"] > 0 for row in spread)


def test_a_change_too_small_to_count_is_a_usage_error(ragscore):
    message = ("a change of 1e-300 is too small to detect: it needs more than 1e+300 questions (give a larger "
               "--detect or [regression] bound)")
    with pytest.raises(UsageError) as caught:
        power_module.needed(1e-300, 0.4, 0.05)
    assert str(caught.value) == message
    run = ragscore("power", "--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "trace.jsonl", "--detect",
                   "1e-300")
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {message}\n")
    with pytest.raises(UsageError, match="a change of 4.94066e-324 is too small"):
        power_module.needed(5e-324, 0.4, 0.05)
    # Just inside the bound the count is finite (a float's digits).
    assert math.isfinite(power_module.needed(3e-150, 0.4, 0.05) or math.nan)


def test_compare_with_a_regression_bound_too_small_to_count(ragscore, isolated):
    (isolated / "g.toml").write_text("[regression]\nprecision = 1e-300\n")
    run = ragscore("compare", "--gold", PRODUCT / "gold.jsonl", "--baseline", PRODUCT / "baseline.jsonl", "--trace",
                   PRODUCT / "trace.jsonl", "--gates-file", "g.toml", "--format", "none")
    assert (run.status, run.out, run.err) == (2, "", "ragscore: error: a change of 1e-300 is too small to detect: it "
                                                     "needs more than 1e+300 questions (give a larger --detect or "
                                                     "[regression] bound)\n")


def test_a_power_under_alpha_detects_no_change_rather_than_a_negative_one():
    assert power_module.detectable(0.4, 30, 0.05, 1e-300) == pytest.approx(0.0, abs=1e-12)  # was -0.28
    assert power_module.detectable(0.4, 30, 0.05, 0.05) == pytest.approx(0.0, abs=1e-12)
    assert power_module.needed(1e-300, 0.4, 0.05, 1e-300) == pytest.approx(1e-9)  # any size: the least one


# --- trec: numbers as trec_eval reads them -----------------------------------------------------------------

# What glibc's atof and atol return for each text (printed by a C program calling them).
C_READS = [
    ("1e400", math.inf, 1), ("0x1p3", 8.0, 0), ("0x", 0.0, 0), ("1e", 1.0, 1), (".5x", 0.5, 0), ("", 0.0, 0),
    ("-INFINITY", -math.inf, 0), ("0x1p99999", math.inf, 0), (" 2.5", 2.5, 2), ("1_0", 1.0, 1),
    ("-0x.8", -0.5, 0), ("1.e5", 100000.0, 1), ("e5", 0.0, 0), ("+.e1", 0.0, 0), ("0x.p1", 0.0, 0),
    ("99999999999999999999", 1e20, 2**63 - 1), ("-99999999999999999999", -1e20, -2**63), ("0x1.8", 1.5, 0),
    ("1e-400", 0.0, 1), ("0X1P-2", 0.25, 0), ("23.4", 23.4, 23),
]


@pytest.mark.parametrize(("text", "double", "long"), C_READS)
def test_atof_and_atol_read_what_c_reads(text, double, long):
    assert (atof(text), atol(text)) == (double, long)


def test_nan_prefixes_are_nan():
    assert math.isnan(atof("nan")) and math.isnan(atof("nan(12)x")) and atol("nan") == 0


@pytest.mark.parametrize(("text", "value"), [
    ("1.5", 1.5), ("-2", -2.0), ("1e3", 1000.0), ("inf", math.inf), ("1_0", None), ("1,5", None), ("0x1p3", None),
    ("\u0661", None), ("1.5abc", None), ("", None),
])
def test_a_score_is_read_only_when_atof_reads_all_of_it(text, value):
    assert c_double(text) == value


@pytest.mark.parametrize(("text", "value"), [
    ("7", 7), ("+7", 7), ("-0", 0), ("1_0", None), ("1e3", None), ("\u0663", None), ("9" * 300, 10**19),
    ("-" + "9" * 5000, -10**19), ("0" * 30 + "5", 5),
])
def test_a_grade_is_read_only_when_atol_reads_all_of_it(text, value):
    assert c_long(text) == value


@pytest.mark.parametrize(("spec", "params"), [
    ("P.1e400", (1.0,)), ("P.23.4,5", (5.0, 23.0)), ("P.+5", (5.0,)), ("iprec_at_recall..5,", (0.0, 0.5)),
    ("iprec_at_recall.0x0.8", (0.5,)), ("iprec_at_recall.1_0", (1.0,)), ("P.9007199254740992", (2.0**53,)),
])
def test_measure_parameters_are_read_as_trec_eval_reads_them(spec, params):
    (_, read), = parse_measures([spec])
    assert read == params


@pytest.mark.parametrize(("spec", "message"), [
    ("iprec_at_recall.nan", '-m iprec_at_recall.nan: expected finite recall levels, got "nan"'),
    ("iprec_at_recall.1e400", '-m iprec_at_recall.1e400: expected finite recall levels, got "1e400"'),
    ("iprec_at_recall.0.5,0.50", "-m iprec_at_recall.0.5,0.50: the recall level 0.5 is given twice (trec_eval "
                                 "refuses it too)"),
    ("P.5,5", "-m P.5,5: the cutoff 5 is given twice (trec_eval refuses it too)"),
    ("P.5,,10", '-m P.5,,10: expected positive cutoffs, got "" (read as 0)'),
    ("P.0x10", '-m P.0x10: expected positive cutoffs, got "0x10" (read as 0)'),
    ("P.-5", '-m P.-5: expected positive cutoffs, got "-5" (read as -5)'),
    ("P.99999999999999999999", "-m P.99999999999999999999: a cutoff past 2**53 (9007199254740992), more documents "
                               "than a ranking holds"),
    ("P.", "-m P.: expected parameters after the dot (trec_eval refuses none too)"),
    ("all_trec.", "-m all_trec.: expected parameters after the dot (trec_eval refuses none too)"),
])
def test_measure_parameters_trec_eval_refuses_are_usage_errors(spec, message):
    with pytest.raises(UsageError) as caught:
        parse_measures([spec])
    assert str(caught.value) == message


QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n2 0 d1 1\n2 0 d4 1\n"
RUN = "1 Q0 d1 1 1 r\n1 Q0 d2 2 2 r\n1 Q0 d3 3 1.5 r\n2 Q0 d4 1 3 r\n2 Q0 d1 2 2 r\n"


def test_ragscore_trec_prints_what_trec_eval_prints_for_parameters_it_reads_in_part(ragscore, isolated):
    (isolated / "q.txt").write_text(QRELS)
    (isolated / "r.txt").write_text(RUN)
    # trec_eval 10.0 prints these two lines for -m P.1e400 and for -m iprec_at_recall.-1 on these files.
    assert ragscore("trec", "-m", "P.1e400", "q.txt", "r.txt").out == "P_1                   \tall\t0.5000\n"
    assert ragscore("trec", "-m", "iprec_at_recall.-1", "q.txt", "r.txt").out == (
        "iprec_at_recall_-1.00 \tall\t0.8333\n")
    run = ragscore("trec", "-m", "iprec_at_recall.nan", "q.txt", "r.txt")
    assert (run.status, run.out, run.err) == (
        2, "", 'ragscore: error: -m iprec_at_recall.nan: expected finite recall levels, got "nan"\n')


@pytest.mark.parametrize(("qrels", "message"), [
    ("1 0 d1 " + "9" * 300 + "\n1 0 d2 0\n", 'q.txt:1:8: a relevance grade past trec_eval\'s range (a C long, '
     '±9,223,372,036,854,775,807), got "' + "9" * 80 + "…[180 characters]…" + "9" * 40 + '"'),
    ("1 0 d1 " + "9" * 5000 + "\n", 'q.txt:1:8: a relevance grade past trec_eval\'s range (a C long, '
     '±9,223,372,036,854,775,807), got "' + "9" * 80 + "…[4,880 characters]…" + "9" * 40 + '"'),
    ("1 0 d1 1_0\n", 'q.txt:1:8: expected an integer relevance grade, got "1_0"'),
    ("1 0 d1 1e3\n", 'q.txt:1:8: expected an integer relevance grade, got "1e3"'),
    ("1 0 d1 \u0663\n", 'q.txt:1:8: expected an integer relevance grade, got "\u0663"'),
])
def test_a_grade_trec_eval_would_read_otherwise_is_an_error_at_its_line(ragscore, isolated, qrels, message):
    (isolated / "q.txt").write_text(qrels, encoding="utf-8")
    (isolated / "r.txt").write_text(RUN)
    run = ragscore("trec", "-m", "ndcg", "q.txt", "r.txt")
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {message}\n")


def test_grades_up_to_a_c_long_and_beirs_1_0_are_read(tmp_path):
    (tmp_path / "q.txt").write_text("1 0 d1 9223372036854775807\n1 0 d2 -9223372036854775808\n1 0 d3 2.00\n")
    assert read_qrels(str(tmp_path / "q.txt")).topics == {"1": {"d1": 2**63 - 1, "d2": -2**63, "d3": 2}}


@pytest.mark.parametrize(("score", "message"), [
    ("1_0", 'expected a number as the score, got "1_0"'),         # Python's float reads 10, trec_eval 1
    ("\u0661", 'expected a number as the score, got "\u0661"'),   # Arabic-Indic one: float reads 1
    ("0x1p3", 'expected a number as the score, got "0x1p3"'),
    ("9" * 5000, 'expected a finite score, got "' + "9" * 80 + "…[4,880 characters]…" + "9" * 40 + '"'),
])
@pytest.mark.parametrize("far", [False, True])
def test_a_score_trec_eval_would_read_otherwise_is_an_error_at_its_line(tmp_path, monkeypatch, score, message, far):
    import ragscore.trec.files as files

    monkeypatch.setattr(files, "_BLOCK_BYTES", 100)  # the fast reader's blocks: the line is in a later one
    lines = [f"{q} Q0 d{d} {d} {1 / (d + 1)} r" for q in range(1, 4) for d in range(50)] if far else []
    lines.insert(len(lines) // 2, f"7 Q0 x 9 {score} r")
    (tmp_path / "r.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_run(str(tmp_path / "r.txt"))
    assert (caught.value.message, caught.value.line, caught.value.column) == (message, len(lines) // 2 + 1, 10)


def test_a_grade_of_the_fast_reader_python_reads_otherwise_sends_it_line_by_line(tmp_path, monkeypatch):
    import ragscore.trec.files as files

    monkeypatch.setattr(files, "_BLOCK_BYTES", 100)
    lines = [f"{q} 0 d{d} {d % 3}" for q in range(1, 4) for d in range(50)]
    lines.insert(100, "5 0 x 1_0")
    (tmp_path / "q.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as caught:
        read_qrels(str(tmp_path / "q.txt"))
    assert (caught.value.message, caught.value.line) == ('expected an integer relevance grade, got "1_0"', 101)


# --- spans ------------------------------------------------------------------------------------------------

GOLD = [{"qid": "t1", "question": "q", "answerable": True, "gold_claim_substr": ["a"]}]


def otlp_line(**span_fields: object) -> dict[str, object]:
    span: dict[str, object] = {"traceId": "t1", "spanId": "s1", "name": "x", "startTimeUnixNano": "1",
                               "endTimeUnixNano": "2", "attributes": [
                                   {"key": "openinference.span.kind", "value": {"stringValue": "CHAIN"}},
                                   {"key": "input.value", "value": {"stringValue": "q"}},
                                   {"key": "output.value", "value": {"stringValue": "a"}}]}
    span.update(span_fields)
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


def phoenix_line(**fields: object) -> dict[str, object]:
    line: dict[str, object] = {"context": {"trace_id": "t1", "span_id": "s1"}, "span_kind": "CHAIN",
                               "attributes": {"input.value": "q", "output.value": "a"}}
    line.update(fields)
    return line


NANOS = ("nanoseconds since 1970 (an unsigned 64-bit integer)")


@pytest.mark.parametrize(("line", "message"), [
    (phoenix_line(context={"trace_id": "t1", "span_id": ["x"]}), 'expected the span id ("context": {"span_id": '
     '...}, "context.span_id", "span_id" or "spanId") to be a string, got an array'),
    (phoenix_line(parent_id={"a": 1}), 'expected the parent span id ("parent_id", "parentId" or "parent_span_id") '
     "to be a string, got an object"),
    (otlp_line(spanId=["x"]), 'expected a span\'s "spanId" to be a string, got an array'),
    (otlp_line(parentSpanId=1.5), 'expected a span\'s "parentSpanId" to be a string, got 1.5'),
    (otlp_line(endTimeUnixNano="9" * 400), f'expected a span\'s "endTimeUnixNano" to be {NANOS}, got "'
     + "9" * 80 + "…[280 characters]…" + "9" * 40 + '"'),
    (otlp_line(startTimeUnixNano=2**64), f'expected a span\'s "startTimeUnixNano" to be {NANOS}, got '
                                         "18446744073709551616"),
    (otlp_line(endTimeUnixNano="soon"), f'expected a span\'s "endTimeUnixNano" to be {NANOS}, got "soon"'),
])
def test_a_span_whose_id_or_time_cannot_be_read_is_an_error_at_its_line(ragscore, isolated, line, message):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [phoenix_line(context={"trace_id": "t0", "span_id": "s0"}), line])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--trace-format", "openinference", "--format", "none")
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: t.jsonl:2: {message}\n")


def test_the_largest_otlp_time_is_read(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [otlp_line(startTimeUnixNano="0", endTimeUnixNano=str(2**64 - 1))])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--trace-format", "openinference", "--format", "json",
                   "--no-fail")
    assert run.status == 0 and json.loads(run.out)["operations"]["latency_ms"] == {"questions": 1, "missing": 0}


# --- flattened attributes ------------------------------------------------------------------------------------

def test_a_flattened_index_past_the_keys_holes_is_an_object_key():
    attributes = {f"k{i}.999999": i for i in range(200)}
    tracemalloc.start()
    try:
        nested = unflatten(attributes)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000  # a list of a million holes per key took 1.5 GB
    assert nested["k7"] == {"999999": 7}
    assert lookup(nested, parse_path("k7.999999")) == 7


def test_lists_keep_their_holes_while_the_keys_cover_them():
    assert unflatten({"a.2": 1, "a.0": 2}) == {"a": [2, None, 1]}  # one hole, two keys
    assert unflatten({"a.5": 1, "b": 1, "c": 2, "d": 3, "e": 4}) == {"a": [None] * 5 + [1], "b": 1, "c": 2, "d": 3,
                                                                      "e": 4}
    assert unflatten({"a.5": 1, "b": 1}) == {"a": {"5": 1}, "b": 1}  # five holes, two keys
    docs = {f"retrieval.documents.{i}.document.id": f"d{i}" for i in reversed(range(50))}
    assert unflatten(docs) == {"retrieval": {"documents": [{"document": {"id": f"d{i}"}} for i in range(50)]}}


def test_keys_that_crashed_or_nested_past_the_stack_are_read():
    assert unflatten({"a.\u00b2": 1, "b.0": 2}) == {"a": {"\u00b2": 1}, "b": [2]}  # "²".isdigit(), int("²") fails
    assert unflatten({"a.1234567.y": 1, "a.0": 2}) == {"a": {"1234567": {"y": 1}}, "a.0": 2}
    deep = unflatten({".".join(["a"] * 100_000): 1, "b.0": 2})
    assert deep["b"] == [2]


def test_a_7_kb_span_of_flattened_indices_is_read_in_little_memory(ragscore, isolated):
    attributes: dict[str, object] = {f"k{i}.999999": "v" for i in range(200)}
    attributes.update({"openinference.span.kind": "CHAIN", "input.value": "q", "output.value": "a"})
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [{"context": {"trace_id": "t1", "span_id": "s1"}, "span_kind": "CHAIN",
                                  "attributes": attributes}])
    tracemalloc.start()
    try:
        run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--trace-format", "openinference", "--format",
                       "json", "--no-fail")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert run.status == 0 and json.loads(run.out)["counts"]["missing"] == 0
    assert peak < 50_000_000
