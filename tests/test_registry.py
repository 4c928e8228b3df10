"""One declarative registry: every metric declared once in ragscore.metrics, complete on any import,
and one rule for the names of scores from other evaluators (traces, --scores, gates)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import replace

import pytest

from conftest import EXAMPLES, ROOT, checked_report, write
from ragscore.errors import ConfigError
from ragscore.external import KNOWN, name_problem
from ragscore.gates import ALIASES, resolve_metric
from ragscore.metrics import METRICS, Registry
from ragscore.metrics.families import FAMILIES
from ragscore.metrics.registry import expand
from ragscore.results import metric_names
from ragscore.settings import Settings
from ragscore.stages.names import STAGE_METRICS, find_spec, stage_specs

GOLD = EXAMPLES / "gold.jsonl"
TRACES = [json.loads(line) for line in (EXAMPLES / "trace.jsonl").read_text(encoding="utf-8").splitlines()]


def fresh(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a new interpreter, which has imported nothing of ragscore yet."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True,
                          check=False)


@pytest.mark.parametrize("module", ["ragscore.gates", "ragscore.metrics.registry"])
def test_one_import_gives_complete_answers(module):
    run = fresh(f"""
        import sys
        import {module}
        from ragscore.gates import default_op
        from ragscore.metrics.registry import Direction
        from ragscore.metrics.names import direction_of, lookup
        ops = {{name: default_op(name) for name in (
            "under_refusal", "over_refusal", "fabricated_citation_rate", "precision", "full_recall@5", "ndcg@10",
            "hit@3", "sim_recall@2", "rougeL_f", "corpus_bleu", "missing", "unknown_traces", "duplicate_traces",
            "noise_sensitivity", "faithfulness")}}
        assert ops == {{
            "under_refusal": "<=", "over_refusal": "<=", "fabricated_citation_rate": "<=", "precision": ">=",
            "full_recall@5": ">=", "ndcg@10": ">=", "hit@3": ">=", "sim_recall@2": ">=", "rougeL_f": ">=",
            "corpus_bleu": ">=", "missing": "<=", "unknown_traces": "<=", "duplicate_traces": "<=",
            "noise_sensitivity": "<=", "faithfulness": ">="}}, ops
        assert direction_of("under_refusal") is Direction.LOWER and direction_of("missing") is Direction.LOWER
        assert (lookup("hit@3").kind, lookup("corpus_chrf").kind, lookup("missing").kind) == ("rate", "corpus", "count")
        assert lookup("rougeL_f").family == "text" and lookup("ndcg@10").family == "retrieval"
        assert lookup("ndcg@K") is None and lookup("accuracy") is None  # a template, and a stage metric
        # Nothing that used to declare metrics as a side effect was imported.
        loaded = {{"ragscore.evaluate", "ragscore.external", "ragscore.metrics.answer", "ragscore.metrics.families"}}
        assert not loaded & set(sys.modules), loaded & set(sys.modules)
        print("ok")
    """)
    assert (run.returncode, run.stdout, run.stderr) == (0, "ok\n", "")


def test_a_gate_on_a_declared_metric_parses_alone():
    run = fresh("""
        from ragscore.gates import parse_gate_option
        names = ["under_refusal", "missing", "ndcg@10"]
        gates = parse_gate_option("under_refusal=0.1,missing=0,ndcg@10=0.5,judge@v2=0.7", names, 5, external=True)
        print(" ".join(f"{g.metric}{g.op}{g.threshold:g}" for g in gates.values()))
    """)
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout == "under_refusal<=0.1 missing<=0 ndcg@10>=0.5 judge@v2>=0.7\n"


def test_the_families_take_their_names_from_the_registry():
    settings = Settings(families=tuple(FAMILIES), cutoffs=(1, 3), k=4)
    for name, family in FAMILIES.items():
        assert family.names(settings) == METRICS.names(name, settings.cutoffs)
    answer = METRICS.names("answer", (4,))
    assert answer[-1] == "full_recall@4"
    assert metric_names(settings) == (
        answer + expand(METRICS.specs("retrieval") + METRICS.specs("similarity") + METRICS.specs("text")
                               + METRICS.specs("grounding") + METRICS.specs("evidence") + METRICS.specs("tools"),
                               (1, 3))
        + METRICS.names("counts")
    )
    assert KNOWN == frozenset(METRICS.names("scores"))
    sampled = replace(settings, repeats="samples", pass_k=(1, 3))  # the metrics of repeated samples
    assert metric_names(sampled) == answer + METRICS.names("repeats", (1, 3)) + metric_names(settings)[len(answer):]
    in_sessions = replace(sampled, session="session_id")  # sessions: their metrics before the counts
    assert metric_names(in_sessions) == (metric_names(sampled)[:-3] + METRICS.names("sessions", (1, 3))
                                         + METRICS.names("counts"))
    every = (set(metric_names(in_sessions)) | KNOWN | set(METRICS.names("operations"))
             | set(METRICS.names("monitor")))
    assert every == {name for spec in METRICS for name in expand((spec,), (4,) if spec.family == "answer" else (1, 3))}


def test_the_text_names_follow_the_implementation():
    from ragscore.metrics.overlap import corpus_metric_names, text_metric_names
    from ragscore.metrics.overlap.rouge import ROUGE_TYPES

    rouge = [name for name in text_metric_names() if name.startswith("rouge")]
    assert rouge == [f"{kind}_{part}" for kind in ROUGE_TYPES for part in "prf"]
    assert text_metric_names() + corpus_metric_names() == METRICS.names("text")


def test_a_registry_refuses_a_name_declared_twice_and_an_alias_of_nothing():
    spec = METRICS.lookup("precision")
    with pytest.raises(ValueError, match="declared twice"):
        Registry((spec, spec))
    with pytest.raises(ValueError, match="undeclared"):
        Registry((spec,), {"p": "chr"})


def test_the_stage_commands_have_a_registry_of_their_own():
    assert isinstance(STAGE_METRICS, Registry) and STAGE_METRICS is not METRICS
    assert METRICS.lookup("accuracy") is None and METRICS.lookup("hits@5") is None
    assert STAGE_METRICS.lookup("ndcg@10") is None and STAGE_METRICS.lookup("under_refusal") is None
    assert STAGE_METRICS.lookup("missing").description != METRICS.lookup("missing").description
    assert find_spec("link", "hits@7").name == "hits@K" and find_spec("ner", "hits@7") is None
    assert find_spec("classify", "category_gap").direction.value == "lower"
    assert list(stage_specs("classify")) == [
        "accuracy", "macro_precision", "macro_recall", "macro_f1", "weighted_precision", "weighted_recall",
        "weighted_f1", "missing", "unknown_predictions", "duplicate_predictions"]
    assert list(stage_specs("classify", hierarchy=True))[7:9] == ["category_accuracy", "category_gap"]
    assert list(stage_specs("link", (1, 5)))[:3] == ["hits@1", "hits@5", "mrr"]


# One rule for a score's name --------------------------------------------------------------------

# "hit" is the stem of hit@K but no metric ("ndcg" is one: trec_eval's nDCG of the whole list).
SCORE_NAMES = ["judge@v2", "judge@5", "judge@gpt-4.1", "9lives", "llm/judge:gpt-4.1", "a.b-c", "_x", "faithfulness",
               "accuracy", "hit", "hits@5", "latency_ms"]
NOT_SCORE_NAMES = ["::add-mask::x", "-x", ".x", "@x", "my score", "f1%", "", "ndcg@v2", "ndcg@K", "ndcg@0",
                   "judge@K", "full_recall@x"]


@pytest.mark.parametrize("name", SCORE_NAMES)
def test_a_name_a_trace_may_give_a_score_can_be_gated(name):
    assert name_problem(name) is None
    assert resolve_metric(name, sorted(KNOWN), 5, "--gates", external=True) == name


@pytest.mark.parametrize("name", NOT_SCORE_NAMES)
def test_a_name_no_score_may_have_cannot_be_gated_as_one(name):
    assert name_problem(name) is not None
    with pytest.raises(ConfigError, match="unknown metric"):
        resolve_metric(name, sorted(KNOWN), 5, "--gates", external=True)


@pytest.mark.parametrize(("name", "metric"), [
    ("precision", "precision"), ("ndcg@10", "ndcg@10"), ("full_recall@5", "full_recall@5"), ("missing", "missing"),
    ("under", "under_refusal"), ("over", "over_refusal"), ("recall@k", "full_recall@5"),
    ("ndcg", "ndcg"), ("bpref", "bpref"), ("map@10", "map@10"),
])
def test_a_ragscore_name_is_a_metric_to_gates_and_no_score_name(name, metric):
    assert name_problem(name) is not None
    names = metric_names(Settings(families=("retrieval",), cutoffs=(10,)))
    assert resolve_metric(name, names, 5, "--gates", external=True) == metric
    assert set(ALIASES) == {"under", "over", "recall@k"}


@pytest.mark.parametrize(("name", "error"), [
    ("judge@K", 'a score is named "judge@K", and "@K" stands for every cutoff of a metric: rename the score'),
    ("ndcg@v2", 'a score is named "ndcg@v2", like a ragscore metric (retrieval): rename the score'),
    ("full_recall@K", 'a score is named "full_recall@K", like a ragscore metric (answer): rename the score'),
])
def test_names_ragscore_keeps(ragscore, isolated, name, error):
    write(isolated / "g.jsonl", [{"qid": "q0", "answerable": True}])
    write(isolated / "t.jsonl", [{"qid": "q0", "claim": "a", "scores": {name: 1}}])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl")
    assert (run.status, run.err) == (2, f'ragscore: error: t.jsonl:1: "scores": {error}\n')
    write(isolated / "s.csv", f"qid,{name}\nq0,1\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--scores", "s.csv")
    assert (run.status, run.err) == (2, f"ragscore: error: s.csv: {error}\n")


def judged(values) -> list[dict]:
    return [{**trace, "scores": {"judge@v2": value}} for trace, value in zip(TRACES, values, strict=True)]


def test_a_score_named_with_an_at_is_reported_and_gated(ragscore, isolated):
    write(isolated / "t.jsonl", judged([0.9, 0.8, 1.0]))
    run = ragscore("--gold", GOLD, "--trace", "t.jsonl", "--gates", "judge@v2=0.85", "--markdown", "r.md")
    doc = checked_report(run.out)
    assert run.status == 0, run.err
    assert doc["metrics"]["judge@v2"] == pytest.approx(0.9)
    assert doc["scores"]["judge@v2"]["questions"] == 3
    gate = doc["gates"]["judge@v2"]
    assert (gate["op"], gate["threshold"], gate["status"]) == (">=", 0.85, "pass")
    assert run.err == "ragscore: pass: 6 gates checked, none failed\n"
    assert "judge@v2" in (isolated / "r.md").read_text(encoding="utf-8")

    write(isolated / "gates.toml", '[gates]\n"judge@v2" = { min = 0.95 }\n')
    run = ragscore("--gold", GOLD, "--trace", "t.jsonl", "--format", "text")
    assert run.status == 1
    assert "ragscore: FAIL    judge@v2 = 0.9000 (gate >= 0.95)\n" in run.err
    assert "judge@v2" in run.out


def test_a_scores_file_column_with_an_at_is_gated(ragscore, isolated):
    write(isolated / "s.csv", "qid,judge@v2,judge@5\nA0001,0.5,1\nA0002,0.7,1\nA0003,0.6,1\n")
    run = ragscore("--gold", GOLD, "--trace", EXAMPLES / "trace.jsonl", "--scores", "s.csv",
                   "--gates", "judge@v2=0.65,judge@5=1")
    doc = checked_report(run.out)
    assert run.status == 1
    assert (doc["gates"]["judge@v2"]["status"], doc["gates"]["judge@5"]["status"]) == ("fail", "pass")
    assert doc["metrics"]["judge@v2"] == pytest.approx(0.6)


def test_a_regression_bound_on_a_score_with_an_at(ragscore, isolated):
    write(isolated / "base.jsonl", judged([0.9, 0.9, 0.9]))
    write(isolated / "t.jsonl", judged([0.5, 0.5, 0.5]))
    write(isolated / "gates.toml", '[regression]\n"judge@v2" = 0.1\n')
    run = ragscore("compare", "--gold", GOLD, "--baseline", "base.jsonl", "--trace", "t.jsonl")
    assert run.status == 1, run.err
    assert json.loads(run.out)["metrics"]["judge@v2"]["delta"] == pytest.approx(-0.4)


@pytest.mark.parametrize(("header", "message"), [
    ("qid,-x", 'the score column "-x" cannot be a metric name: it starts with "-" (start with a letter, digit or _)'),
    ("qid,::x", 'the score column "::x" cannot be a metric name: it starts with ":" (start with a letter, digit or _)'),
])
def test_the_scores_loader_names_the_line_of_a_name_no_score_may_have(ragscore, isolated, header, message):
    write(isolated / "s.csv", f"{header}\nA0001,1\n")
    run = ragscore("--gold", GOLD, "--trace", EXAMPLES / "trace.jsonl", "--scores", "s.csv")
    assert (run.status, run.err) == (2, f"ragscore: error: s.csv:1: {message}\n")


def test_the_report_schema_takes_every_name_a_metric_may_have():
    from ragscore.schema import load_schema
    from ragscore.score_names import METRIC_PATTERN

    patterns = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "propertyNames" in node and "pattern" in node["propertyNames"]:
                patterns.add(node["propertyNames"]["pattern"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(load_schema())
    assert patterns == {f"^(?:{METRIC_PATTERN})$"}
