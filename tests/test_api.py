"""The Python API: the command line is its client, so their reports are the same bytes (issue 15)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragscore as rs
from conftest import ROOT, write

EXAMPLES = [
    ("examples/gold.jsonl", "examples/trace.jsonl"),
    ("examples/alt-shape/gold.json", "examples/alt-shape/trace.jsonl"),
    ("examples/product/gold.jsonl", "examples/product/trace.jsonl"),
    ("examples/formats/gold.jsonl", "examples/formats/langchain.jsonl"),
    ("examples/formats/gold.jsonl", "examples/formats/otel-genai.jsonl"),
    ("examples/formats/ragas.jsonl", "examples/formats/ragas.jsonl"),
]
VARIANTS = [
    ([], {}),
    (["--per-question"], {"per_question": True}),
    (["--only-failures"], {"only_failures": True}),
    (["--metrics", "all", "--per-question"], {"metrics": ["all"], "per_question": True}),
    (["--by", "category", "--k", "3"], {"by": ["category"], "k": 3}),
]


def _records(path):
    return [json.loads(line) for line in (ROOT / path).read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_readme_one_liner():
    out = subprocess.run([sys.executable, "-c", "import ragscore; print(ragscore.score('examples/gold.jsonl', "
                          "'examples/trace.jsonl').passed)"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout == "True\n"


@pytest.mark.parametrize(("options", "keywords"), VARIANTS)
@pytest.mark.parametrize(("gold", "trace"), EXAMPLES)
def test_the_command_lines_json_is_the_apis(ragscore, monkeypatch, gold, trace, options, keywords):
    monkeypatch.chdir(ROOT)
    cli = ragscore("--gold", gold, "--trace", trace, *options)
    run = rs.score(gold, trace, **keywords)
    assert cli.out == run.report("json")
    assert cli.status == (0 if run.passed else 1)


@pytest.mark.parametrize(("gold", "trace"), EXAMPLES[:3])
def test_every_report_format_is_the_command_lines(ragscore, monkeypatch, tmp_path, gold, trace):
    monkeypatch.chdir(ROOT)
    files = {fmt: tmp_path / f"r.{fmt}" for fmt in ("json", "markdown", "html", "junit")}
    cli = ragscore("--gold", gold, "--trace", trace, "--no-fail", "--format", "text", "--per-question",
                   *(arg for fmt, path in files.items() for arg in (f"--{fmt}", str(path))))
    run = rs.score(gold, trace, per_question=True)
    for fmt, path in files.items():
        assert path.read_text(encoding="utf-8") == run.report(fmt), fmt
    assert cli.out == run.report("text")
    assert cli.err == "".join(f"ragscore: {note}\n" for note in run.notes())


@pytest.mark.parametrize(("gold", "trace"), EXAMPLES)
def test_records_score_as_their_files(monkeypatch, gold, trace):
    monkeypatch.chdir(ROOT)
    from_files = rs.score(gold, trace, per_question=True).document
    from_records = rs.score(_records(gold) if gold.endswith("l") else json.loads((ROOT / gold).read_text()),
                                  iter(_records(trace)), per_question=True).document
    # (where ids came from, as from the file: langchain.jsonl's TP-05 names one by metadata.doc_id)
    ids = {"document_ids": from_files["inputs"]["trace"]["document_ids"]} if "langchain" in trace else {}
    assert from_records["inputs"] == {
        "gold": {"path": "<gold records>", "sha256": from_records["inputs"]["gold"]["sha256"]},
        "trace": {"path": "<trace records>", "sha256": from_records["inputs"]["trace"]["sha256"], **ids},
    }
    del from_files["inputs"], from_records["inputs"]
    assert json.loads(json.dumps(from_records, default=list)) == json.loads(json.dumps(from_files, default=list))


def test_span_records_are_assembled_like_a_file(monkeypatch):
    monkeypatch.chdir(ROOT)
    path = "examples/formats/openinference.jsonl"
    a = rs.score("examples/formats/gold.jsonl", path).metrics
    b = rs.score("examples/formats/gold.jsonl", _records(path)).metrics
    assert a == b


def test_records_have_a_stable_digest():
    gold = [{"qid": "Q1", "answerable": True, "gold_claim_substr": ["30 days"]}]
    traces = [{"qid": "Q1", "answer": "30 days"}]
    one = rs.score(gold, traces, gates={"precision": 0.5, "chr": "off"}).document["inputs"]
    two = rs.score([dict(reversed(list(gold[0].items())))], (t for t in traces),
                         gates={"precision": 0.5, "chr": "off"}).document["inputs"]
    assert one == two  # keys sorted: the same records give the same digest


def test_errors_in_records_point_at_the_record():
    with pytest.raises(rs.InputError) as caught:
        rs.score([{"qid": "Q1", "answerable": True}, {"qid": "Q2"}], [])
    assert str(caught.value) == '<gold records>, record 2: missing required field "answerable" (true or false)'
    with pytest.raises(rs.InputError) as caught:
        rs.score([{"qid": "Q1", "answerable": True}], [{"qid": "Q1", "answer": float("inf")}])
    assert str(caught.value).startswith("<trace records>, record 1: not JSON data:")
    with pytest.raises(TypeError, match="gold: expected a path or an iterable of records"):
        rs.score({"qid": "Q1"}, [])


@pytest.mark.parametrize(("keywords", "message"), [
    ({"k": 0}, "k: expected a positive integer of at most 1,000,000, got 0"),
    ({"confidence": 1.5}, "confidence: expected a number strictly between 0 and 1, got 1.5"),
    ({"trace_format": "csv"}, "trace_format: expected one of auto, native, ragas, openinference, otel-genai, "
                              "langchain, llamaindex, mlflow, got 'csv'"),
    ({"kk": 3}, "unknown setting 'kk'; did you mean \"k\"?"),
    ({"refusal_patterns": ["("]}, "refusal_patterns: '(': "),
    ({"fields": {"clam": "x"}}, '--map "clam=x": unknown concept "clam"'),
])
def test_bad_keyword_settings_are_usage_errors(monkeypatch, keywords, message):
    monkeypatch.chdir(ROOT)
    with pytest.raises(rs.UsageError) as caught:
        rs.score("examples/gold.jsonl", "examples/trace.jsonl", **keywords)
    assert str(caught.value).startswith(message)


def test_settings_override_a_loaded_config(monkeypatch):
    monkeypatch.chdir(ROOT)
    config = rs.load_config(k=3)
    run = rs.score("examples/gold.jsonl", "examples/trace.jsonl", config=config, gates={"precision": ">= 0.99"})
    assert run.settings["k"] == 3 and "recall@k" in run.document and run.document["k"] == 3
    assert [g.gate.metric for g in run.gates][:1] == ["precision"] and run.gates[0].gate.threshold == 0.99
    assert rs.score("examples/gold.jsonl", "examples/trace.jsonl", config=config).settings["k"] == 3


def test_a_run_without_rows_says_what_it_cannot_render(monkeypatch):
    monkeypatch.chdir(ROOT)
    run = rs.score("examples/gold.jsonl", "examples/trace.jsonl", keep_rows=False)
    assert run.report("json") and run.report("text") and run.report("junit")
    with pytest.raises(rs.UsageError, match="markdown report lists the questions"):
        run.report("markdown")
    with pytest.raises(rs.UsageError, match="no per-question rows"):
        next(run.questions())


def test_questions_and_explanations(monkeypatch):
    monkeypatch.chdir(ROOT)
    run = rs.score("examples/alt-shape/gold.json", "examples/alt-shape/trace.jsonl", explain=["LIB-07"])
    labels = {q["qid"]: q["label"] for q in run.questions()}
    assert labels["LIB-07"] == "FORBIDDEN" and len(labels) == 12
    assert "FORBIDDEN" in run.explain("LIB-07")
    with pytest.raises(rs.UsageError):
        run.explain("LIB-01")


# --- random data ------------------------------------------------------------------------------------

_ids = st.lists(st.sampled_from(["d1", "d2", "d3"]), max_size=3)
_gold = st.lists(st.fixed_dictionaries({
    "answerable": st.booleans(),
    "gold_claim_substr": st.lists(st.sampled_from(["thirty days", "ada lovelace", "x"]), max_size=2),
    "gold_citations": _ids,
}), min_size=1, max_size=6)
_traces = st.lists(st.fixed_dictionaries({
    "q": st.integers(0, 6),
    "answer": st.sampled_from(["thirty days", "Ada Lovelace", "not in context", ""]),
    "citations": _ids,
    "retrieved_ids": _ids,
}, optional={"refused": st.booleans()}), min_size=1, max_size=8)  # no trace at all: an input error


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gold=_gold, traces=_traces, per_question=st.booleans())
def test_random_runs_are_the_same_bytes_from_both_clients(ragscore, isolated, gold, traces, per_question):
    gold = [{"qid": f"Q{i}", **g} for i, g in enumerate(gold)]
    traces = [{"qid": f"Q{t.pop('q')}", **t} for t in (dict(t) for t in traces)]
    write(isolated / "g.jsonl", gold)
    write(isolated / "t.jsonl", traces)
    cli = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--metrics", "retrieval",
                   *(["--per-question"] if per_question else []))
    run = rs.score("g.jsonl", "t.jsonl", metrics="retrieval", per_question=per_question)
    assert cli.out == run.report("json")


# --- compare and the stages -------------------------------------------------------------------------

def test_compare_is_the_command_lines(ragscore, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    args = ("--gold", "examples/product/gold.jsonl", "--baseline", "examples/product/baseline.jsonl",
            "--trace", "examples/product/trace.jsonl")
    cli = ragscore("compare", *args, "--markdown", str(tmp_path / "c.md"))
    comparison = rs.compare("examples/product/gold.jsonl", "examples/product/baseline.jsonl",
                            "examples/product/trace.jsonl")
    assert cli.out == comparison.report("json")
    assert (tmp_path / "c.md").read_text(encoding="utf-8") == comparison.report("markdown")
    assert cli.err == "".join(f"ragscore: {note}\n" for note in comparison.notes())
    assert cli.status == 1 and not comparison.passed
    base = ragscore("--gold", "examples/product/gold.jsonl", "--trace", "examples/product/baseline.jsonl",
                    "--per-question", "--no-fail", "-q")
    (tmp_path / "base.json").write_text(base.out, encoding="utf-8")
    from_report = ragscore("compare", "--gold", "examples/product/gold.jsonl", "--baseline-report",
                           str(tmp_path / "base.json"), "--trace", "examples/product/trace.jsonl")
    api = rs.compare("examples/product/gold.jsonl", None, "examples/product/trace.jsonl",
                     baseline_report=tmp_path / "base.json")
    assert from_report.out == api.report("json")


@pytest.mark.parametrize("stage", ["ner", "classify", "link"])
def test_the_stages_are_the_command_lines(ragscore, monkeypatch, tmp_path, stage):
    monkeypatch.chdir(ROOT)
    gold, pred, gates = (f"examples/stages/{stage}_gold.jsonl", f"examples/stages/{stage}_pred.jsonl",
                         "examples/stages/gates.toml")
    files = {fmt: tmp_path / f"r.{fmt}" for fmt in ("json", "markdown", "html", "junit")}
    cli = ragscore(stage, "--gold", gold, "--pred", pred, "--gates-file", gates, "--format", "text",
                   *(arg for fmt, path in files.items() for arg in (f"--{fmt}", str(path))))
    run = getattr(rs, stage)(gold, pred, gates_file=gates)
    assert cli.out == run.report("text")
    for fmt, path in files.items():
        assert path.read_text(encoding="utf-8") == run.report(fmt), fmt
    assert cli.err == "".join(f"ragscore: {note}\n" for note in run.notes())
    records = getattr(rs, stage)(_records(gold), _records(pred), gates_file=gates)
    assert records.metrics == run.metrics


def test_assert_passes_reads_like_the_report(monkeypatch):
    from ragscore.testing import RagscoreAssertionError, assert_passes

    monkeypatch.chdir(ROOT)
    assert_passes(rs.score("examples/gold.jsonl", "examples/trace.jsonl"))
    with pytest.raises(AssertionError) as caught:
        assert_passes(rs.score("examples/product/gold.jsonl", "examples/product/baseline.jsonl"))
    assert isinstance(caught.value, RagscoreAssertionError)
    message = str(caught.value)
    assert message.startswith("ragscore: the run failed its gates\n  FAIL precision = ")
    assert "(gate >= 0.8)" in message and "    worst: " in message
    with pytest.raises(AssertionError, match="REGRESSION under_refusal: worse by 0.2500"):
        assert_passes(rs.compare("examples/product/gold.jsonl", "examples/product/baseline.jsonl",
                                 "examples/product/trace.jsonl"))


def test_the_testing_module_imports_no_test_framework():
    code = "import sys, ragscore.testing, ragscore.cli; print(any(m.startswith(('pytest', '_pytest')) for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout == "False\n"


def test_the_docs_python_example(monkeypatch):
    from docs import doc_section

    monkeypatch.chdir(ROOT)
    block = doc_section("The Python API").split("```python\n", 1)[1].split("```", 1)[0]
    lines = [line for line in block.splitlines() if line.strip()]
    namespace: dict = {}
    exec("\n".join(lines[:2]), namespace)  # import ragscore; run = ragscore.score(...)
    expression, _, printed = lines[2].partition("#")
    assert repr(eval(expression, namespace)) == f"({printed.strip()})"
    assert lines[3].startswith("print(run.report(")


# --- review fixes -------------------------------------------------------------------------------------

def test_compare_fails_a_candidate_with_nothing_answered(monkeypatch):
    monkeypatch.chdir(ROOT)
    gold, traces = _records("examples/gold.jsonl"), _records("examples/trace.jsonl")
    comparison = rs.compare(gold, traces, [{"qid": trace["qid"], "refused": True} for trace in traces])
    failed = [r for r in comparison.regressions if r.status == "fail"]
    assert not comparison.passed and "precision" in {r.metric for r in failed}


def test_a_spent_generator_is_an_error_not_an_empty_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    gold, traces = _records("examples/gold.jsonl"), _records("examples/trace.jsonl")
    once = (t for t in traces)
    assert rs.score(gold, once).passed
    with pytest.raises(rs.InputError, match="already read: this iterator"):
        rs.score(gold, once)


@pytest.mark.parametrize("traces", [set(), frozenset({"q1"}), {"qid": "q1"}])
def test_traces_that_are_no_sequence_of_records_are_a_type_error(monkeypatch, traces):
    monkeypatch.chdir(ROOT)
    name = type(traces).__name__
    with pytest.raises(TypeError, match=f"^trace: expected a path or an iterable of records \\(dicts\\), got {name}$"):
        rs.score(_records("examples/gold.jsonl"), traces)


def test_pandas_nan_is_a_missing_value(monkeypatch):
    monkeypatch.chdir(ROOT)
    gold = [{**g, "category": float("nan")} for g in _records("examples/gold.jsonl")]
    plain = [{**g, "category": None} for g in _records("examples/gold.jsonl")]
    traces = _records("examples/trace.jsonl")
    assert rs.score(gold, traces).report("json") == rs.score(plain, traces).report("json")


def test_a_string_is_one_slice_field_or_qid_and_jobs_are_checked(monkeypatch):
    monkeypatch.chdir(ROOT)
    run = rs.score("examples/product/gold.jsonl", "examples/product/trace.jsonl", by="category", explain="Q001")
    assert list(run.slices) == ["category"] and "Q001" in run.evaluation.explained
    with pytest.raises(rs.UsageError, match="jobs: expected a positive integer"):
        rs.score("examples/gold.jsonl", "examples/trace.jsonl", jobs=0)
    assert len(repr(run)) < 2000


def test_a_gates_mapping_is_one_rule_per_metric():
    import ragscore as rs

    gold, traces = ROOT / "examples/gold.jsonl", ROOT / "examples/trace.jsonl"
    cases = [
        ({"precision": "0.5,chr=0.1"}, "gates: precision: '0.5,chr=0.1' holds a comma: one rule per metric"),
        ({"precision,chr": 0.5}, "gates: 'precision,chr' is not a metric name"),
        ({"chr>=0.2": 0.5}, "gates: 'chr>=0.2' is not a metric name"),
        ({"precision": True}, "gates: precision: expected a number, a rule such as \">= 0.6\", \"off\" or None, got True"),
        ({"precision": [0.5]}, "gates: precision: expected a number"),
    ]
    for gates, message in cases:
        with pytest.raises(rs.UsageError) as caught:
            rs.score(gold, traces, gates=gates)
        assert str(caught.value).startswith(message), str(caught.value)
    run = rs.score(gold, traces, gates={"precision": ">= 0.5", "chr": 0.5, "missing": None})
    assert run.document["gates"]["precision"]["threshold"] == 0.5 and "missing" not in run.document["gates"]
