"""The tools family (issue 36) in a run: gold_tool_calls read and checked, the calls of traces written by the
real SDKs and instrumentors (tests/data/tools/, each file written by the script beside it), each metric a mean
over the questions that define it (a precision with nothing called, a recall with nothing expected, is left
out), in slices, parts, processes, samples and compare, the notes, and --explain.
"""

from __future__ import annotations

import json
import math
import random

import pytest

from conftest import DATA, write
from ragscore.loaders.gold import family_keys
from ragscore.loaders.spans import openinference_trace, phoenix_span
from ragscore.loaders.tool_calls import INVALID, Call, GoldTools, gold_tools, trace_calls
from ragscore.metrics import METRICS
from ragscore.metrics.tools import ROW, tool_values, tools_row

TOOLS = DATA / "tools"
NAMES = METRICS.names("tools")
MEANS = [name for name in NAMES if name != "tool_args_invalid"]


def _spans(path):
    """The spans of a file the OpenTelemetry SDK's ConsoleSpanExporter wrote (indented objects, one after another)."""
    text, decoder, at, out = path.read_text(encoding="utf-8"), json.JSONDecoder(), 0, []
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return out
        span, at = decoder.raw_decode(text, at)
        out.append(span)


def test_the_row_is_the_registry_s_order():
    assert ROW == NAMES


def test_the_sdks_traces_read_with_zero_glue_and_score_as_derived_by_hand(ragscore):
    """traces.jsonl keeps each provider response as its SDK dumps it; expected.json holds the calls and the values
    derived by hand (tests/data/tools/make_tool_traces.py)."""
    expected = json.loads((TOOLS / "expected.json").read_text(encoding="utf-8"))
    for line in (TOOLS / "traces.jsonl").read_text(encoding="utf-8").splitlines():
        trace = json.loads(line)
        read = trace_calls(trace)
        want = [Call(name, INVALID if arguments == "INVALID" else arguments)
                for name, arguments in expected[trace["qid"]]["predicted"]]
        assert read.found and read.unreadable == 0 and list(read.calls) == want, trace["qid"]
    run = ragscore("--gold", TOOLS / "gold.jsonl", "--trace", TOOLS / "traces.jsonl", "--format", "json",
                   "--per-question", "--no-fail")
    report = run.json()
    assert report["tools"] == {"questions": 8, "calls": sum(len(e["predicted"]) for e in expected.values()),
                               "unsaid": 0, "unsaid_line": 0, "unreadable": 0, "unreadable_line": 0}
    for question in report["questions"]:
        values = expected[question["qid"]]["values"]
        assert {name: question["metrics"][name] for name in values} == pytest.approx(values), question["qid"]


@pytest.mark.parametrize("name", ["execute-tool-spans.json", "execute-tool-spans-traceloop.json"])
def test_execute_tool_spans_are_the_calls_in_the_order_they_started(name, tmp_path, ragscore):
    """OpenTelemetry's and Traceloop's instrumentations of the OpenAI Agents SDK: one execute_tool span per call,
    the arguments JSON text (the cut-off one not valid JSON)."""
    write(tmp_path / "gold.jsonl", [{
        "qid": "w", "question": "What is the weather in Paris and in Tokyo?", "answerable": True,
        "gold_claim_substr": ["18 degrees"], "tool_match": "any_order",
        "gold_tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
                            {"name": "get_weather", "arguments": {"city": "Tokyo"}}]}])
    run = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", TOOLS / name, "--format", "json", "--no-fail",
                   "--per-question")
    report = run.json()
    assert report["tools"]["calls"] == 2 and report["tools"]["unsaid"] == 0
    metrics = report["questions"][0]["metrics"]
    assert metrics["tool_args_invalid_rate"] == 0.5 and metrics["tool_name_f1"] == 1.0
    assert metrics["tool_call_recall"] == 0.5 and metrics["tool_use_accuracy"] == 0.0


def test_genai_output_messages_hold_the_model_s_calls(tmp_path, ragscore):
    """opentelemetry-instrumentation-openai-v2 2.4b0 (gen_ai_latest_experimental): the tool_call parts of
    gen_ai.output.messages; an argument string that is not JSON is kept as written."""
    write(tmp_path / "gold.jsonl", [{"qid": "t", "question": "Is it raining in Tokyo?", "answerable": True,
                                     "gold_claim_substr": ["rain"],
                                     "gold_tool_calls": [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]}])
    run = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", TOOLS / "genai-latest-spans.json", "--format",
                   "json", "--no-fail", "--per-question")
    report = run.json()
    assert report["tools"]["questions"] == 1 and report["tools"]["calls"] == 1
    assert report["metrics"]["tool_args_invalid_rate"] == 1.0 and report["metrics"]["tool_name_recall"] == 1.0


def test_openinference_reads_the_llm_span_s_calls_else_the_tool_spans():
    """openinference-instrumentation-langchain: the LLM span flattens the model's calls; a TOOL span holds one
    call, its input.value JSON text (application/json), or a single argument's bare value."""
    spans = [phoenix_span(span, "s.json", n) for n, span in enumerate(_spans(TOOLS / "openinference-tool-spans.json"))]
    by_trace: dict[str, list] = {}
    for span in spans:
        by_trace.setdefault(span["trace"], []).append(span)
    calls = [trace_calls(openinference_trace(group)) for group in by_trace.values()]
    assert all(read.found and not read.unreadable for read in calls)
    assert sorted((tuple(read.calls) for read in calls), key=repr) == sorted([
        (Call("get_weather", {"city": "Paris", "unit": "celsius"}),),
        (Call("get_weather", "Berlin"),),  # no key: a value no gold object of arguments equals
        (Call("get_weather", {"city": "Tokyo", "unit": "celsius"}),),
        (Call("get_weather", {"city": "Paris", "unit": "celsius"}), Call("get_weather", {"city": "Tokyo"})),
    ], key=repr)


@pytest.mark.parametrize(("record", "error"), [
    ({"gold_tool_calls": {"name": "a"}}, 'expected "gold_tool_calls" to be a list of calls'),
    ({"gold_tool_calls": [{"name": "a", "argumnts": {}}]},
     'unknown key "argumnts" in "gold_tool_calls" entry 1 (a call has "name" and "arguments"); did you mean '
     '"arguments"?'),
    ({"gold_tool_calls": [{"name": ""}]}, 'expected "name" of "gold_tool_calls" entry 1 to be a non-empty string'),
    ({"gold_tool_calls": [{"name": "a", "arguments": "{bad"}]},
     'expected "arguments" of "gold_tool_calls" entry 1 to be an object (or the JSON text of one), got text that '
     'is not JSON'),
    ({"gold_tool_calls": [{"name": "a", "arguments": [1]}]}, "to be an object (or the JSON text of one), got an array"),
    ({"gold_tool_calls": [], "tool_match": "any-order"},
     'expected "tool_match" to be one of "exact", "in_order", "any_order", got "any-order"; did you mean "any_order"?'),
    ({"gold_tool_calls": [], "gold_arguments_match": "partial"},
     'expected "gold_arguments_match" to be one of "exact", "subset", got "partial"'),
    ({"tool_match": "in_order"}, '"tool_match" says how to judge the item\'s tool calls, but it has no '
                                 '"gold_tool_calls"'),
])
def test_bad_gold_tool_calls_are_errors_at_their_line(record, error, tmp_path, ragscore):
    write(tmp_path / "gold.jsonl", [{"qid": "ok", "answerable": True, "gold_claim_substr": ["yes"]},
                                    {"qid": "q", "answerable": True, "gold_claim_substr": ["yes"], **record}])
    write(tmp_path / "trace.jsonl", [{"qid": "q", "answer": "yes"}])
    run = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", tmp_path / "trace.jsonl", "--no-fail")
    assert run.status == 2 and run.out == "" and "Traceback" not in run.err
    assert run.err.startswith(f"ragscore: error: {tmp_path / 'gold.jsonl'}:2:") and error in run.err


def test_arguments_may_be_json_text_and_default_to_an_empty_object():
    assert gold_tools([{"name": "a", "arguments": '{"x": 1}'}, {"name": "b"}], None, "subset") == GoldTools(
        (Call("a", {"x": 1}), Call("b", {})), "exact", "subset")


def test_the_family_turns_on_by_itself_for_gold_tool_calls(tmp_path):
    import gzip

    plain = write(tmp_path / "plain.jsonl", [{"qid": "q", "answerable": True, "tags": ["gold_tool_calls"]}])
    tools = tmp_path / "tools.jsonl.gz"
    tools.write_bytes(gzip.compress(b'{"qid": "q", "answerable": true, "gold_tool_calls" : []}\n'))
    both = write(tmp_path / "both.jsonl", [{"qid": "a", "answerable": True, "gold_spans": []},
                                           {"qid": "b", "answerable": True, "gold_tool_calls": []}])
    assert family_keys(str(plain)) == frozenset() and family_keys(str(tools)) == {"gold_tool_calls"}
    assert family_keys(str(both)) == {"gold_spans", "gold_tool_calls"}
    assert family_keys(str(plain), (("gold_tool_calls", "expected.calls"),)) == {"gold_tool_calls"}


def _run(rng: random.Random, n: int, tag: bool = True) -> tuple[list[dict], list[dict]]:
    """Gold items with 0-3 gold calls (some none: tools off for them) and traces with 0-4 calls, some of them
    invalid, some without a tool_calls list, one question without a trace."""
    names = ["search", "fetch", "calc"]
    gold, traces = [], []
    for q in range(n):
        calls = [{"name": rng.choice(names), "arguments": {"x": rng.randrange(2)}} for _ in range(rng.randrange(4))]
        item = {"qid": f"q{q}", "answerable": True, "gold_claim_substr": ["answer"], "tags": [f"t{q % 3}"]}
        if q % 5:
            item["gold_tool_calls"] = calls
            item["tool_match"] = rng.choice(["exact", "in_order", "any_order"])
            item["gold_arguments_match"] = rng.choice(["exact", "subset"])
        gold.append(item)
        made = [{"name": rng.choice(names), "arguments": json.dumps({"x": rng.randrange(2)})[: rng.choice([-2, None])]}
                for _ in range(rng.randrange(5))]
        trace = {"qid": f"q{q}", "answer": "the answer"}
        if q % 7:
            trace["tool_calls"] = made
        if q != 3:
            traces.append(trace)
    return gold, traces


def _by_definition(gold: list[dict], traces: list[dict]) -> dict[str, list[float]]:
    """Each question's values by metric, from tools_row on the calls as read (NaN: undefined)."""
    by_qid = {t["qid"]: t for t in traces}
    out: dict[str, list[float]] = {name: [] for name in NAMES}
    for item in gold:
        if "gold_tool_calls" not in item:
            continue
        read = trace_calls(by_qid[item["qid"]]) if item["qid"] in by_qid else None
        tools = gold_tools(item["gold_tool_calls"], item["tool_match"], item["gold_arguments_match"])
        for name, value in zip(NAMES, tools_row(read.calls if read else (), tools), strict=True):
            out[name].append(value)
    return out


def test_each_metric_is_a_mean_over_the_questions_that_define_it(tmp_path, ragscore):
    gold, traces = _run(random.Random(36), 200)
    write(tmp_path / "gold.jsonl", gold)
    write(tmp_path / "trace.jsonl", traces)
    report = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", tmp_path / "trace.jsonl", "--format", "json",
                      "--no-fail", "--per-question", "--by", "tags").json()
    values = _by_definition(gold, traces)
    for name in MEANS:
        defined = [v for v in values[name] if not math.isnan(v)]
        assert report["metrics"][name] == pytest.approx(math.fsum(defined) / len(defined), abs=1e-15), name
        assert 0 < len(defined), name
    assert report["metrics"]["tool_args_invalid"] == sum(values["tool_args_invalid"])
    # Undefined values are left out: a precision over questions that called something, not over all of them.
    assert len([v for v in values["tool_call_precision"] if not math.isnan(v)]) < len(values["tool_call_precision"])
    assert report["tools"]["questions"] == len(values["tool_name_f1"])
    assert report["tools"]["unsaid"] == sum(1 for q, item in enumerate(gold)
                                            if q % 5 and q % 7 == 0 and q != 3)
    for question in report["questions"]:  # undefined per question: null
        defined = {name: value for name, value in question["metrics"].items() if name in NAMES}
        if defined:
            assert all(value is None or 0 <= value <= 1 for name, value in defined.items() if name in MEANS)
    # A slice's mean, over its own questions that define the metric.
    slice_values = _by_definition([item for item in gold if item["tags"] == ["t1"]], traces)
    defined = [v for v in slice_values["tool_call_recall"] if not math.isnan(v)]
    assert report["slices"]["tags"]["t1"]["metrics"]["tool_call_recall"] == pytest.approx(
        math.fsum(defined) / len(defined), abs=1e-15)


def test_parts_processes_and_samples(tmp_path, ragscore, monkeypatch):
    """Partials merged and --jobs 2 give the one-process report; with repeats = samples a question's value is the
    mean of the samples that define it."""
    monkeypatch.chdir(tmp_path)
    gold, traces = _run(random.Random(7), 120)
    write(tmp_path / "gold.jsonl", gold)
    write(tmp_path / "trace.jsonl", traces)
    common = ("--gold", "gold.jsonl", "--trace", "trace.jsonl")
    one = ragscore(*common, "--format", "json", "--jobs", "1", "--no-fail", "--per-question").json()
    two = ragscore(*common, "--format", "json", "--jobs", "2", "--no-fail", "--per-question").json()
    for index in (1, 2):  # the rows of a partial hold null where a question leaves a value undefined
        assert ragscore("partial", *common, "--part", f"{index}/2", "--per-question", "-o", f"p{index}.json").status == 0
    merged = ragscore("merge", "p2.json", "p1.json", "--format", "json", "--no-fail", "--per-question").json()
    assert any(q["metrics"]["tool_call_precision"] is None for q in one["questions"] if "tool_call_precision" in
               q["metrics"] and q["metrics"]["tool_name_recall"] is not None)
    for report in (two, merged):
        assert report["metrics"] == one["metrics"] and report["intervals"] == one["intervals"]
        assert report["tools"] == one["tools"] and report["questions"] == one["questions"]
    write(tmp_path / "s.jsonl", [{"qid": "q1", "answer": "the answer", "tool_calls": []},
                                 {"qid": "q1", "answer": "the answer", "tool_calls": [{"name": "x", "arguments": {}}]}])
    write(tmp_path / "g.jsonl", [{"qid": "q1", "answerable": True, "gold_claim_substr": ["answer"],
                                  "gold_tool_calls": [{"name": "x"}]}])
    sampled = ragscore("--gold", "g.jsonl", "--trace", "s.jsonl", "--repeats", "samples", "--format", "json",
                       "--no-fail").json()
    # The first sample called nothing (precision undefined), the second called x: precision 1 from it alone.
    assert sampled["metrics"]["tool_call_precision"] == 1.0 and sampled["metrics"]["tool_call_recall"] == 0.5


def test_intervals_count_the_questions_that_define_the_metric(tmp_path, ragscore):
    gold = [{"qid": f"q{i}", "answerable": True, "gold_claim_substr": ["a"],
             "gold_tool_calls": [{"name": "x"}]} for i in range(4)]
    traces = [{"qid": "q0", "answer": "a", "tool_calls": [{"name": "x"}]},
              {"qid": "q1", "answer": "a", "tool_calls": [{"name": "y"}]},
              {"qid": "q2", "answer": "a", "tool_calls": []}, {"qid": "q3", "answer": "a", "tool_calls": []}]
    write(tmp_path / "gold.jsonl", gold)
    write(tmp_path / "trace.jsonl", traces)
    report = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", tmp_path / "trace.jsonl", "--format", "json",
                      "--no-fail").json()
    assert report["metrics"]["tool_call_precision"] == 0.5 and report["metrics"]["tool_call_recall"] == 0.25
    assert report["metrics"]["trajectory_exact_match"] == 0.25
    assert report["interval_methods"]["trajectory_exact_match"] == "wilson"
    from ragscore.metrics.stats import wilson_interval

    assert report["intervals"]["trajectory_exact_match"] == list(wilson_interval(1, 4, 0.95))


def test_notes_name_traces_that_say_nothing_of_tool_calls_and_entries_that_are_no_call(tmp_path, ragscore):
    write(tmp_path / "gold.jsonl", [{"qid": f"q{i}", "answerable": True, "gold_claim_substr": ["a"],
                                     "gold_tool_calls": []} for i in range(3)])
    write(tmp_path / "trace.jsonl", [{"qid": "q0", "answer": "a", "tool_calls": []},
                                     {"qid": "q1", "answer": "a"},
                                     {"qid": "q2", "answer": "a", "tool_calls": [{"name": "x"}, 7, {"tool": "y"}]}])
    run = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", tmp_path / "trace.jsonl", "--no-fail", "--format",
                   "none")
    trace = tmp_path / "trace.jsonl"
    assert (f'1 trace of questions with gold_tool_calls holds no tool calls in a shape ragscore reads (no '
            f'"tool_calls" list, no provider response under "response"): scored as calling no tool; write '
            f'"tool_calls": [] for a trace that called none, or --map tool_calls=PATH: {trace}, line 2') in run.err
    assert '2 entries of "tool_calls" lists are no call in a shape ragscore reads (left out;' in run.err
    assert f"function_call): the first at {trace}, line 3" in run.err


def test_explain_pairs_each_gold_call_and_names_the_extra_ones(tmp_path, ragscore):
    write(tmp_path / "gold.jsonl", [{
        "qid": "q", "answerable": True, "gold_claim_substr": ["booked"], "tool_match": "in_order",
        "gold_tool_calls": [{"name": "search", "arguments": {"q": "flights"}}, {"name": "book", "arguments": {"id": 3}}]}])
    write(tmp_path / "trace.jsonl", [{"qid": "q", "answer": "booked", "tool_calls": [
        {"name": "search", "arguments": {"q": "flights"}}, {"name": "log", "arguments": {}},
        {"type": "function", "function": {"name": "book", "arguments": '{"id": 3'}}]}])
    run = ragscore("--gold", tmp_path / "gold.jsonl", "--trace", tmp_path / "trace.jsonl", "--no-fail", "--format",
                   "none", "--explain", "q")
    assert run.out.endswith(
        'tool calls: 2 expected, 3 made (arguments exact, trajectory in_order)\n'
        'gold call 1: "search" {"q":"flights"}: matched by call 1\n'
        'gold call 2: "book" {"id":3}: missed\n'
        'call 2: "log" {}: extra (no gold call has that name)\n'
        'call 3: "book" (arguments not valid JSON): extra (its arguments are not valid JSON)\n'
        'trajectory: exact no, in_order no, any_order no; tool use not correct by tool_match in_order\n')


def test_compare_pairs_the_tool_metrics(tmp_path, ragscore, monkeypatch):
    monkeypatch.chdir(tmp_path)
    gold, traces = _run(random.Random(3), 80)
    write(tmp_path / "gold.jsonl", gold)
    write(tmp_path / "base.jsonl", traces)
    worse = [dict(t, tool_calls=[]) if i % 2 else t for i, t in enumerate(traces)]
    write(tmp_path / "cand.jsonl", worse)
    run = ragscore("compare", "--gold", "gold.jsonl", "--baseline", "base.jsonl", "--trace", "cand.jsonl",
                   "--format", "json", "--no-fail")
    assert run.status == 0, run.err
    report = json.loads(run.out)
    text = json.dumps(report)
    for name in ("tool_call_recall", "trajectory_in_order_match", "tool_use_accuracy"):
        assert f'"{name}"' in text


def test_tool_values_stay_in_bounds_and_nest():
    rng = random.Random(1)
    for _ in range(500):
        calls = [Call(rng.choice("ab"), {"x": rng.randrange(2)}) for _ in range(rng.randrange(4))]
        made = [Call(rng.choice("ab"), rng.choice([{"x": 0}, {"x": 1}, INVALID])) for _ in range(rng.randrange(4))]
        values = tool_values(made, calls, rng.choice(["exact", "subset"]))
        assert all(v is None or 0 <= v <= 1 for v in values.values())
        assert (values["trajectory_exact_match"] <= values["trajectory_in_order_match"]
                <= values["trajectory_any_order_match"])
