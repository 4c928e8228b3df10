"""Diagnoses: built-in rules fire past their thresholds and stay quiet on them, cases over other
metrics, the worst questions (ties by qid), configuration overrides, and scores from other tools."""

from __future__ import annotations

import json
import random

import pytest

from conftest import EXAMPLES, checked_report, write
from ragscore.diagnose import Sample, builtin_rules, diagnose
from ragscore.diagnose.rules import rule_for
from ragscore.metrics.names import lookup
from ragscore.metrics.registry import Direction

PRODUCT = EXAMPLES / "product"
RULES = builtin_rules()
K = 5


def _concrete(name: str) -> str:
    return name.replace("@K", f"@{K}")


def _nudge(bound: float, direction: Direction, past: bool) -> float:
    step = 0.01 if past else -0.01
    return bound - step if direction is Direction.HIGHER else bound + step


@pytest.mark.parametrize("name", sorted(RULES))
def test_each_builtin_rule_fires_past_its_thresholds_and_stays_quiet_on_them(name):
    rule = RULES[name]
    metric = _concrete(name)
    direction = rule.better(metric)
    spec = lookup(metric)
    assert direction is (spec.direction if spec else Direction.HIGHER)  # rules agree with the registry
    assert rule.causes and rule.actions
    for level, bound in (("warning", rule.warning), ("critical", rule.critical)):
        if bound is None:
            continue
        found = diagnose({metric: _nudge(bound, direction, True)}, RULES, K, {})
        assert [(d.metric, d.severity, d.threshold) for d in found] == [(metric, level, bound)]
    if rule.warning is not None:
        assert diagnose({metric: rule.warning}, RULES, K, {}) == []
        assert diagnose({metric: _nudge(rule.warning, direction, False)}, RULES, K, {}) == []
    if rule.critical is not None and rule.warning is not None:
        on_critical = diagnose({metric: rule.critical}, RULES, K, {})
        assert [d.severity for d in on_critical] == ["warning"]  # past the warning, not past the critical


def test_the_issue_thresholds_of_common_external_scores():
    expected = {"faithfulness": (0.7, 0.5), "answer_relevancy": (0.7, 0.5), "context_recall": (0.7, 0.5),
                "context_precision": (0.6, 0.4), "noise_sensitivity": (0.3, 0.5), "factual_correctness": (0.6, 0.4),
                "semantic_similarity": (0.7, 0.5)}
    for name, (warning, critical) in expected.items():
        assert (RULES[name].warning, RULES[name].critical) == (warning, critical)
    assert RULES["noise_sensitivity"].better("noise_sensitivity") is Direction.LOWER
    found = diagnose({"noise_sensitivity": 0.31, "faithfulness": 0.49}, RULES, K, {})
    assert [(d.metric, d.severity) for d in found] == [("faithfulness", "critical"), ("noise_sensitivity", "warning")]


def test_precision_causes_depend_on_the_citation_hit_rate():
    low_chr = diagnose({"precision": 0.5, "chr": 0.6}, RULES, K, {})
    assert low_chr[0].metric == "precision" and low_chr[0].because == "chr < 0.75"
    assert low_chr[0].root_causes[0] == "grounding is broken: the evidence cited is wrong"
    assert any("retrieval drift" in c for c in low_chr[0].root_causes)
    high_chr = diagnose({"precision": 0.5, "chr": 0.9}, RULES, K, {})
    assert [d.metric for d in high_chr] == ["precision"] and high_chr[0].because == "chr >= 0.75"
    assert "miss the gold substrings" in high_chr[0].root_causes[0]
    assert any("answer template" in a for a in high_chr[0].suggested_actions)
    on_boundary = diagnose({"precision": 0.5, "chr": 0.75}, RULES, K, {})
    assert on_boundary[0].because == "chr >= 0.75"
    no_chr = diagnose({"precision": 0.5, "chr": None}, RULES, K, {})
    assert no_chr[0].because is None and no_chr[0].root_causes == RULES["precision"].causes


def test_rules_for_every_cutoff_and_report_order():
    assert rule_for("recall@10", RULES) is RULES["recall@K"] and rule_for("full_recall@3", RULES) is RULES["full_recall@K"]
    metrics = {"precision": 0.75, "under_refusal": 0.5, "recall@10": 0.6, "compliance": 0.5}
    found = diagnose(metrics, RULES, K, {"precision": [Sample("q1", None, "x", 0.0)]})
    assert [(d.metric, d.severity) for d in found] == [
        ("under_refusal", "critical"), ("compliance", "critical"), ("precision", "warning"), ("recall@10", "warning")]
    assert found[2].low_samples == (Sample("q1", None, "x", 0.0),)


def _many_failures(folder, n=60, seed=3):
    """Questions whose qids are shuffled in the file, half of them refused though answerable."""
    rng = random.Random(seed)
    qids = [f"q{i:03d}" for i in range(n)]
    rng.shuffle(qids)
    write(folder / "g.jsonl", [{"qid": q, "question": f"What is {q}?", "answerable": True, "gold_citations": ["d1"],
                                "gold_claim_substr": ["yes"]} for q in qids])
    traces = []
    for i, q in enumerate(qids):
        refused = int(q[1:]) % 2 == 0
        traces.append({"qid": q, "retrieved_ids": ["d1"], "refused": refused,
                       "answer_json": {"claim": f"yes {q}", "citations": ["d1"]},
                       "scores": {"faithfulness": round(rng.choice([0.1, 0.2, 0.9]), 1), "judge": i % 3 or None}})
    write(folder / "t.jsonl", traces)


def test_worst_questions_ties_broken_by_qid_and_the_same_with_every_job_count(ragscore, isolated):
    _many_failures(isolated)
    docs = [ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--jobs", jobs, "--no-fail").json() for jobs in "123"]
    assert docs[0] == docs[1] == docs[2]
    by_metric = {d["metric"]: d for d in docs[0]["diagnoses"]}
    over = by_metric["over_refusal"]
    assert over["severity"] == "critical" and over["value"] == 0.5
    assert [s["qid"] for s in over["low_samples"]] == ["q000", "q002", "q004", "q006", "q008"]
    assert over["low_samples"][0] == {"qid": "q000", "question": "What is q000?", "claim": "yes q000", "value": 1.0}
    faithfulness = by_metric["faithfulness"]["low_samples"]
    values = [s["value"] for s in faithfulness]
    assert values == sorted(values) and all(v < 0.7 for v in values)  # only questions past the bound, worst first
    keys = [(s["value"], s["qid"]) for s in faithfulness]
    assert keys == sorted(keys)


def test_samples_setting_and_its_errors(ragscore, isolated):
    _many_failures(isolated)
    write(isolated / "gates.toml", "[diagnose]\nsamples = 2\n")
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail").json()
    assert all(len(d["low_samples"]) <= 2 for d in doc["diagnoses"])
    write(isolated / "gates.toml", "[diagnose]\nsamples = 0\n")
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail").json()
    assert doc["diagnoses"] and all(d["low_samples"] == [] for d in doc["diagnoses"])
    write(isolated / "gates.toml", "[diagnose]\nsamples = -1\n")
    assert ragscore("--gold", "g.jsonl", "--trace", "t.jsonl").err == (
        'ragscore: error: gates.toml:2: [diagnose] expected "samples" to be a whole number >= 0, got -1\n')


def test_configured_rules_override_and_extend_the_builtin_ones(ragscore, isolated):
    write(isolated / "gates.toml", """
[diagnose.precision]
warning = 0.9
causes = ["our own cause"]
actions = ["our own action"]
cases = []

[diagnose.chr]
warning = 0.95
critical = 0.9

[diagnose.latency_ms]
direction = "lower"
warning = 800
critical = 2000
causes = ["slow retrieval"]
actions = ["cache embeddings"]

[gates]
latency_ms = 1500
""")
    write(isolated / "s.jsonl", [{"qid": q, "latency_ms": v} for q, v in (("Q001", 900), ("Q002", 1800), ("Q003", 700))])
    run = ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "trace.jsonl", "--scores", "s.jsonl", "--no-fail")
    doc = checked_report(run.out)
    found = {d["metric"]: d for d in doc["diagnoses"]}
    assert found["precision"]["severity"] == "warning" and found["precision"]["threshold"] == 0.9  # 0.8065 < 0.9
    assert found["precision"]["root_causes"] == ["our own cause"] and found["precision"]["because"] is None
    assert found["chr"]["severity"] == "critical" and found["chr"]["threshold"] == 0.9  # 0.871 < 0.9
    assert found["chr"]["root_causes"] == list(RULES["chr"].causes)  # keys not given keep the built-in values
    latency = found["latency_ms"]
    assert (latency["value"], latency["severity"], latency["direction"]) == (pytest.approx(3400 / 3), "warning", "lower")
    assert [(s["qid"], s["value"]) for s in latency["low_samples"]] == [("Q002", 1800.0), ("Q001", 900.0)]
    gate = doc["gates"]["latency_ms"]
    assert (gate["op"], gate["status"]) == ("<=", "pass")  # a bare threshold follows the configured direction


@pytest.mark.parametrize(("toml", "error"), [
    ("[diagnose.precision]\nwarnign = 0.8\n",
     'gates.toml:1: [diagnose.precision] unknown key "warnign" (known: direction, warning, critical, causes, actions, cases)'),
    ("[diagnose.precision]\ndirection = \"up\"\n",
     "gates.toml:1: [diagnose.precision] expected \"direction\" to be \"higher\" or \"lower\", got 'up'"),
    ("[diagnose.precision]\nwarning = 0.5\ncritical = 0.6\n",
     "gates.toml:1: [diagnose.precision] the warning threshold 0.5 must not be past the critical one (0.6): for a "
     "higher-is-better metric it lies above it"),
    ("[diagnose.my_score]\ncauses = [\"x\"]\n",
     'gates.toml:1: [diagnose.my_score] expected a "warning" or a "critical" threshold'),
    ("\n[diagnose.precision]\n[[diagnose.precision.cases]]\nwhen = [\"chr ~ 1\"]\n",
     "gates.toml:2: [diagnose.precision] expected a condition such as \"chr < 0.75\" (<, <=, >, >=), got 'chr ~ 1'"),
    ("[diagnose]\nprecision = 0.8\n",
     'gates.toml:2: [diagnose] expected "precision" to be a table [diagnose.precision] of warning, critical, '
     'direction, causes, actions and cases (or "samples = N")'),
    ("[diagnose.precision]\ncauses = [1]\n",
     'gates.toml:1: [diagnose.precision] expected "causes" to be a list of non-empty strings'),
    ("[diagnose.precison]\nwarning = 0.9\n",
     'gates.toml:1: [diagnose.precison] unknown metric "precison"; did you mean "precision"?'),
    ("[diagnose.chr]\nwarning = 0.9\n[[diagnose.chr.cases]]\nwhen = [\"precison < 0.5\"]\n",
     'gates.toml:1: [diagnose.chr] a case names an unknown metric "precison"; did you mean "precision"?'),
])
def test_rule_configuration_errors_point_at_the_table(ragscore, isolated, toml, error):
    write(isolated / "gates.toml", toml)
    run = ragscore("--gold", EXAMPLES / "gold.jsonl", "--trace", EXAMPLES / "trace.jsonl")
    assert (run.status, run.err) == (2, f"ragscore: error: {error}\n")


def test_scores_from_traces_and_from_a_file(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "question": f"Question {i}?", "answerable": True} for i in range(4)])
    write(isolated / "t.jsonl", [
        {"qid": "q0", "claim": "a", "scores": {"faithfulness": 0.9, "judge": 4}},
        {"qid": "q1", "claim": "b", "scores": {"faithfulness": None}},
        {"qid": "q2", "claim": "c", "scores": {"faithfulness": 0.3}},
        {"qid": "q2", "claim": "c2"},  # a later line replaces the trace, scores included
        {"qid": "q3", "claim": "d", "scores": {"faithfulness": 0.2}},
    ])
    write(isolated / "s.csv", "user_input,response,faithfulness,answer_relevancy\n"
                              '"Question 3?","d, with a comma",0.4,0.8\n'
                              "Question 0?,a,,nan\n"
                              "Question 9?,z,0.1,0.1\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--scores", "s.csv", "--no-fail")
    doc = checked_report(run.out)
    # faithfulness: q0 0.9 (the trace's: the file's empty cell is no value), q1 null (the trace's), q2 none (its
    # later trace line has no scores), q3 0.4 (the file's value replaces the trace's 0.2)
    assert doc["scores"] == {"answer_relevancy": {"questions": 1, "nulls": 1}, "faithfulness": {"questions": 2, "nulls": 1},
                             "judge": {"questions": 1, "nulls": 0}}
    assert doc["metrics"]["faithfulness"] == 0.65 and doc["metrics"]["judge"] == 4.0
    assert doc["metrics"]["answer_relevancy"] == 0.8
    assert doc["scores_file"] == {"path": "s.csv", "join": "question", "rows": 3, "unmatched": 1,
                                  "unmatched_keys": ["Question 9?"], "duplicates": 0}
    assert "ragscore: 1 row of s.csv matches no gold question (ignored): Question 9?\n" in run.err
    assert "ragscore: score faithfulness: 1 question has null or NaN (skipped); the mean is over 2\n" in run.err
    low, high = doc["intervals"]["faithfulness"]
    assert 0.4 <= low <= 0.65 <= high <= 0.9
    # joined by question text in a parallel run: one process does it, with the same result
    assert ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--scores", "s.csv", "--no-fail", "--jobs", "2").out == run.out


def test_gates_on_external_scores(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": "q0", "answerable": True}, {"qid": "q1", "answerable": True}])
    write(isolated / "t.jsonl", [{"qid": "q0", "claim": "a", "scores": {"faithfulness": 0.6, "house_metric": 2}},
                                 {"qid": "q1", "claim": "b", "scores": {"faithfulness": 0.7}}])
    args = ("--gold", "g.jsonl", "--trace", "t.jsonl")
    off = "missing=off,precision=off,chr=off,over=off,"
    run = ragscore(*args, "--gates", off + "faithfulness=0.7,house_metric>=3,never_seen=0.5")
    assert run.status == 1
    gates = run.json()["gates"]
    assert {name: g["status"] for name, g in gates.items()} == {
        "faithfulness": "fail", "house_metric": "fail", "never_seen": "skipped", "under_refusal": "skipped"}
    run = ragscore(*args, "--gates", "faithfulnes=0.7")
    assert run.err == 'ragscore: error: --gates: unknown metric "faithfulnes"; did you mean "faithfulness"?\n'
    run = ragscore(*args, "--gates", "precison=0.7")
    assert run.err == 'ragscore: error: --gates: unknown metric "precison"; did you mean "precision"?\n'


@pytest.mark.parametrize(("trace", "error"), [
    ({"qid": "q0", "claim": "a", "scores": [0.5]},
     't.jsonl:1: expected "scores" to be an object of score names and numbers, got an array'),
    ({"qid": "q0", "claim": "a", "scores": {"faithfulness": "high"}},
     't.jsonl:1: expected "scores.faithfulness" to be a number or null, got "high"'),
    ({"qid": "q0", "claim": "a", "scores": {"faithfulness": True}},
     't.jsonl:1: expected "scores.faithfulness" to be a number or null, got true'),
    ({"qid": "q0", "claim": "a", "scores": {"my score": 1}},
     't.jsonl:1: "scores": expected score names of letters, digits and _ . @ : / -, starting with a letter, digit '
     'or _ (like "faithfulness"), got "my score"'),
    ({"qid": "q0", "claim": "a", "scores": {"::add-mask::x": 1}},  # would start a line of the text report
     't.jsonl:1: "scores": expected score names of letters, digits and _ . @ : / -, starting with a letter, digit '
     'or _ (like "faithfulness"), got "::add-mask::x"'),
    ({"qid": "q0", "claim": "a", "scores": {"precision": 1}},
     't.jsonl:1: "scores": a score is named "precision", like a ragscore metric (answer): rename the score'),
    ({"qid": "q0", "claim": "a", "scores": {"ndcg@3": 1}},
     't.jsonl:1: "scores": a score is named "ndcg@3", like a ragscore metric (retrieval): rename the score'),
    ({"qid": "q0", "claim": "a", "scores": {"big": 1e300}},
     't.jsonl:1: expected "scores.big" to be at most 1e+15 in magnitude, got 1e+300'),
    ({"qid": "q0", "claim": "a", "scores": {"huge": 10 ** 400}},
     't.jsonl:1: expected "scores.huge" to be at most 1e+15 in magnitude, got an integer of 401 digits'),
])
def test_bad_trace_scores_are_input_errors(ragscore, isolated, trace, error):
    write(isolated / "g.jsonl", [{"qid": "q0", "answerable": True}])
    write(isolated / "t.jsonl", [trace])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--json", "out.json")
    assert (run.status, run.out) == (2, "")
    assert run.err == f"ragscore: error: {error}\n"
    assert not (isolated / "out.json").exists()


@pytest.mark.parametrize(("name", "content", "error"), [
    ("s.csv", "qid,faithfulness\nQ001,0.5\nQ002,high\n",
     's.csv:3: expected "faithfulness" to be a number (or empty, null, NaN), got "high"'),
    ("s.jsonl", '{"qid": "Q001", "faithfulness": 0.5}\n{"qid": "Q002", "faithfulness": "x"}\n',
     's.jsonl:2: expected "faithfulness" to be a number or null, got a string ("x")'),
    ("s.jsonl", '{"qid": "Q001", "faithfulness": 0.5}\n{"faithfulness": 0.4}\n', None),
    ("s.csv", "id,faithfulness\nQ001,0.5\n", None),
])
def test_bad_score_files_are_input_errors_with_line_numbers(ragscore, isolated, name, content, error):
    write(isolated / name, content)
    run = ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "trace.jsonl", "--scores", name,
                   "--json", "out.json")
    assert run.status == 2 and run.out == "" and not (isolated / "out.json").exists()
    assert run.err.startswith(f"ragscore: error: {name}:")
    if error is not None:
        assert run.err == f"ragscore: error: {error}\n"


def test_diagnoses_in_every_report_format_escape_their_input(ragscore, isolated):
    write(isolated / "gates.toml", '[diagnose.precision]\nwarning = 0.99\ncauses = ["<b>bold</b> | pipe"]\ncases = []\n')
    qid = "Q|<i>1</i>"
    write(isolated / "g.jsonl", [{"qid": qid, "question": "Why <script>?", "answerable": True, "gold_citations": ["d1"]}])
    write(isolated / "t.jsonl", [{"qid": qid, "retrieved_ids": ["d1", "d2"],
                                  "answer_json": {"claim": "a|b\n# h", "citations": ["d2"]}}])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "markdown", "--html", "r.html")
    md = run.out
    assert "### critical: precision = 0.0000, past 0.6 \\(higher is better\\)" in md.replace("\\_", "_") or \
        "### critical: precision = 0.0000, past 0.6 (higher is better)" in md
    assert "- \\<b\\>bold\\</b\\> \\| pipe" in md
    assert "| Q\\|\\<i\\>1\\</i\\> | Why \\<script\\>? | a\\|b<br># h | 0.0000 |" in md
    page = (isolated / "r.html").read_text()
    assert "<li>&lt;b&gt;bold&lt;/b&gt; | pipe</li>" in page and "<script>?" not in page
    text = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "text").out
    assert "CRITICAL precision = 0.0000, past 0.6 (higher is better)\n  cause: <b>bold</b> | pipe\n" in text
    assert "  worst: Q|<i>1</i> (0.0000)\n" in text


def test_the_docs_diagnosis_example(ragscore, monkeypatch):
    from conftest import ROOT
    from docs import doc_block

    monkeypatch.chdir(ROOT)
    run = ragscore("--gold", "examples/product/gold.jsonl", "--trace", "examples/product/baseline.jsonl",
                   "--format", "text", "--no-fail", "-q")
    command = "$ ragscore --gold examples/product/gold.jsonl --trace examples/product/baseline.jsonl --format text --no-fail -q\n"
    assert run.out == doc_block(command).split(command, 1)[1]
    doc = json.loads(ragscore("--gold", "examples/product/gold.jsonl", "--trace", "examples/product/baseline.jsonl",
                              "--no-fail", "-q").out)
    assert doc["diagnoses"][0]["because"] == "chr < 0.75"


def test_the_docs_rules_example_is_valid(ragscore, isolated):
    from docs import doc_section

    toml = doc_section("Diagnoses: why a run fails and what to try").split("```toml\n", 1)[1].split("```", 1)[0]
    write(isolated / "gates.toml", toml)
    write(isolated / "s.jsonl", [{"qid": "Q001", "latency_ms": 2500}])
    doc = ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "baseline.jsonl", "--scores", "s.jsonl",
                   "--no-fail").json()
    found = {d["metric"]: d for d in doc["diagnoses"]}
    assert found["latency_ms"]["severity"] == "critical" and found["latency_ms"]["because"] == "chr < 0.75"
    assert found["precision"]["severity"] == "critical" and len(found["precision"]["low_samples"]) == 3


def test_parallel_runs_read_the_quoted_questions_again_from_either_gold_shape(ragscore, isolated):
    items = [{"qid": f"q{i}", "question": f"Question {i}?", "answerable": i % 3 > 0, "gold_citations": ["d1"]}
             for i in range(30)]
    (isolated / "g.json").write_text("[\n" + ",\n".join("  " + json.dumps(item) for item in items) + "\n]\n")
    write(isolated / "g.jsonl", items)
    traces = [{"qid": f"q{i}", "retrieved_ids": ["d1"], "answer_json": {"claim": f"claim {i}", "citations": ["d2"]}}
              for i in range(30)]
    traces.insert(0, dict(traces[5], answer_json={"claim": "overridden", "citations": []}))  # a duplicate, replaced
    write(isolated / "t.jsonl", traces)
    outputs = {ragscore("--gold", gold, "--trace", "t.jsonl", "--jobs", jobs, "--no-fail").out.replace(gold, "G")
               for gold in ("g.json", "g.jsonl") for jobs in "12"}
    assert len(outputs) == 2  # the two gold files differ only in their digests
    doc = json.loads(outputs.pop())
    samples = {d["metric"]: d["low_samples"] for d in doc["diagnoses"]}["under_refusal"]
    assert [(s["qid"], s["question"], s["claim"]) for s in samples] == [
        ("q0", "Question 0?", "claim 0"), ("q12", "Question 12?", "claim 12"), ("q15", "Question 15?", "claim 15"),
        ("q18", "Question 18?", "claim 18"), ("q21", "Question 21?", "claim 21")]


def test_per_question_reports_carry_each_questions_scores(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "answerable": True} for i in range(3)])
    write(isolated / "t.jsonl", [{"qid": "q0", "claim": "a", "scores": {"faithfulness": 0.25}},
                                 {"qid": "q1", "claim": "b", "scores": {"faithfulness": None, "judge": 2}},
                                 {"qid": "q2", "claim": "c"}])
    outputs = [ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--per-question", "--no-fail", "--jobs", j).out
               for j in "12"]
    assert outputs[0] == outputs[1]
    doc = checked_report(outputs[0])
    assert [(q["metrics"]["faithfulness"], q["metrics"]["judge"]) for q in doc["questions"]] == [
        (0.25, None), (None, 2.0), (None, None)]


def _two_questions(folder, scores=({"faithfulness": 0.1}, {"faithfulness": 0.2})):
    write(folder / "g.jsonl", [{"qid": "a", "question": "Same?", "answerable": True},
                               {"qid": "b", "question": "Other?", "answerable": True}])
    write(folder / "t.jsonl", [{"qid": q, "claim": "x", "scores": s} for q, s in zip("ab", scores, strict=True)])


OFF = "missing=off,precision=off,chr=off,over=off,under=off"


def test_a_text_cell_in_a_gated_score_column_is_an_error_not_a_text_column(ragscore, isolated):
    _two_questions(isolated)
    write(isolated / "s.csv", "qid,myscore\na,0.1\nb,n.a.\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--scores", "s.csv", "--gates", OFF + ",myscore>=0.9")
    assert (run.status, run.err) == (2, 'ragscore: error: s.csv:3: expected "myscore" to be a number (or empty, null, NaN), '
                                        'got "n.a."\n')


def test_a_row_without_a_field_keeps_the_traces_value(ragscore, isolated):
    _two_questions(isolated)
    write(isolated / "s.jsonl", [{"qid": "a", "judge": 3}, {"qid": "b", "faithfulness": 0.6}])
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--scores", "s.jsonl", "--no-fail").json()
    assert doc["metrics"]["faithfulness"] == pytest.approx(0.35) and doc["scores"]["faithfulness"] == {"questions": 2, "nulls": 0}
    assert doc["scores"]["judge"] == {"questions": 1, "nulls": 0}


def test_joining_scores_on_a_question_text_two_gold_items_share_is_an_error(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": q, "question": "Same?", "answerable": True} for q in "ab"])
    write(isolated / "t.jsonl", [{"qid": q, "claim": "x"} for q in "ab"])
    write(isolated / "s.csv", "question,faithfulness\nSame?,0.1\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--scores", "s.csv")
    assert (run.status, run.err) == (2, "ragscore: error: s.csv:2: the question text matches 2 gold items (a, b); join the "
                                        "scores on a qid column instead\n")


def test_gates_on_score_names_near_known_metrics_work_once_the_score_is_there(ragscore, isolated):
    _two_questions(isolated, ({"contextual_recall": 0.4}, {"contextual_recall": 0.6}))
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--gates", OFF + ",contextual_recall>=0.5")
    assert run.status == 0 and run.json()["gates"]["contextual_recall"]["status"] == "pass"
    write(isolated / "gates.toml", "[gates]\ncontextual_recal = 0.5\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--json", "r.json")
    assert (run.status, run.err) == (2, 'ragscore: error: gates.toml:2: unknown metric "contextual_recal"; '
                                        'did you mean "contextual_recall"?\n')
    assert not (isolated / "r.json").exists()


def test_slices_carry_external_scores_and_their_gates(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "answerable": True, "category": "xy"[i % 2]} for i in range(4)])
    write(isolated / "t.jsonl", [{"qid": f"q{i}", "claim": "c", "scores": {"faithfulness": v}}
                                 for i, v in enumerate((0.2, 0.9, 0.4, 0.7))])
    gates_off = "".join(f'{gate.split("=")[0]} = "off"\n' for gate in OFF.split(","))
    write(isolated / "gates.toml", f"[gates]\n{gates_off}[slice_gates]\nmin_n = 1\nfaithfulness = 0.5\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--by", "category")
    doc = checked_report(run.out)
    x, y = doc["slices"]["category"]["x"], doc["slices"]["category"]["y"]
    assert x["metrics"]["faithfulness"] == pytest.approx(0.3) and y["metrics"]["faithfulness"] == 0.8
    assert (x["gates"]["faithfulness"]["status"], y["gates"]["faithfulness"]["status"]) == ("fail", "pass")
    assert run.status == 1 and x["intervals"]["faithfulness"] is not None


def test_regression_gates_follow_a_configured_direction(ragscore, isolated):
    _two_questions(isolated, ({"noise": 0.9}, {"noise": 0.9}))
    (isolated / "t.jsonl").rename(isolated / "base.jsonl")
    _two_questions(isolated, ({"noise": 0.1}, {"noise": 0.1}))
    write(isolated / "gates.toml", '[regression]\nnoise = 0.01\n[diagnose.noise]\ndirection = "lower"\nwarning = 0.5\n')
    run = ragscore("compare", "--gold", "g.jsonl", "--baseline", "base.jsonl", "--trace", "t.jsonl")
    assert run.status == 0 and json.loads(run.out)["regressions"]["noise"]["worse_by"] == pytest.approx(-0.8)


def test_the_number_of_score_names_is_bounded(ragscore, isolated):
    from ragscore.external import MAX_NAMES

    write(isolated / "g.jsonl", [{"qid": "a", "answerable": True}])
    write(isolated / "t.jsonl", [{"qid": "a", "claim": "x", "scores": {f"s{i}": 1 for i in range(MAX_NAMES + 1)}}])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl")
    assert (run.status, run.err) == (2, f'ragscore: error: t.jsonl:1: "scores": more than {MAX_NAMES} different score '
                                        f'names in one run (one column is kept per name and question): "s{MAX_NAMES}"\n')


def test_a_mean_on_its_threshold_is_exactly_on_it(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "answerable": True} for i in range(3)])
    write(isolated / "t.jsonl", [{"qid": f"q{i}", "claim": "c", "scores": {"faithfulness": 0.7}} for i in range(3)])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--gates", OFF + ",faithfulness>=0.7")
    doc = run.json()
    assert run.status == 0 and doc["metrics"]["faithfulness"] == 0.7
    assert "faithfulness" not in {d["metric"] for d in doc["diagnoses"]}


def test_rules_by_alias_and_for_one_cutoff_keep_the_templates_texts(ragscore, isolated):
    write(isolated / "gates.toml", '[diagnose."recall@k"]\nwarning = 1.01\ncritical = 1.005\n'
                                   '[diagnose."recall@5"]\nwarning = 1.01\n')
    doc = ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "trace.jsonl", "--metrics", "retrieval",
                   "--no-fail").json()
    found = {d["metric"]: d for d in doc["diagnoses"]}
    assert found["full_recall@5"]["severity"] == "critical"
    assert found["full_recall@5"]["root_causes"] == list(RULES["full_recall@K"].causes)
    assert found["recall@5"]["threshold"] == 1.01 and found["recall@5"]["severity"] == "warning"  # past 1.01, not 0.5
    assert found["recall@5"]["root_causes"] == list(RULES["recall@K"].causes)  # the template's texts and critical bound


def test_a_score_file_column_named_like_a_metric_is_blamed_on_the_file(ragscore, isolated):
    _two_questions(isolated)
    write(isolated / "s.csv", "qid,chr_answerable\na,0.5\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--scores", "s.csv")
    assert run.err == ('ragscore: error: s.csv: a score is named "chr_answerable", like a ragscore metric (answer): '
                       "rename the score\n")


def test_a_rule_for_every_cutoff_of_an_external_score_quotes_its_worst_questions(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "answerable": True} for i in range(3)])
    write(isolated / "t.jsonl", [{"qid": f"q{i}", "claim": "c", "scores": {"judge@3": v}} for i, v in enumerate((0.2, 0.95, 0.5))])
    write(isolated / "gates.toml", '[diagnose."judge@K"]\nwarning = 0.9\ncauses = ["judged low"]\nactions = ["look"]\n')
    for jobs in "12":
        doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--jobs", jobs).json()
        judge = {d["metric"]: d for d in doc["diagnoses"]}["judge@3"]
        assert [(s["qid"], s["value"]) for s in judge["low_samples"]] == [("q0", 0.2), ("q2", 0.5)]


def test_the_score_name_bound_is_the_same_for_every_job_count(ragscore, isolated):
    from ragscore.external import MAX_NAMES

    n = MAX_NAMES + 40
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "answerable": True} for i in range(n)])
    write(isolated / "t.jsonl", [{"qid": f"q{i}", "claim": "x", "scores": {f"s{i}": 0.5}} for i in range(n)])
    errors = {ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--jobs", jobs).err for jobs in "123"}
    assert errors == {f'ragscore: error: t.jsonl:{MAX_NAMES + 1}: "scores": more than {MAX_NAMES} different score names '
                      f'in one run (one column is kept per name and question): "s{MAX_NAMES}"\n'}
    write(isolated / "s.csv", "qid," + ",".join(f"c{i}" for i in range(n)) + "\nq0," + ",".join("1" for _ in range(n)) + "\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "g.jsonl", "--scores", "s.csv")
    assert run.err == f"ragscore: error: s.csv: more than {MAX_NAMES} score columns (one column is kept per name and question): {n}\n"


def test_gates_on_common_score_names_the_run_lacks_are_skipped(ragscore, isolated):
    run = ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "trace.jsonl", "--gates", "faithfulness=0.5",
                   "--no-fail")
    assert run.status == 0 and run.json()["gates"]["faithfulness"]["status"] == "skipped"
    assert ragscore("--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "trace.jsonl", "--gates", "faithfulness=0.5",
                    "--no-fail", "--strict").json()["gates"]["faithfulness"]["status"] == "fail"


def test_compare_tests_external_scores_and_regression_gates_take_their_names(ragscore, isolated):
    n = 30
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "answerable": True} for i in range(n)])
    write(isolated / "base.jsonl", [{"qid": f"q{i}", "claim": "x", "scores": {"judge": 0.9}} for i in range(n)])
    write(isolated / "t.jsonl", [{"qid": f"q{i}", "claim": "x", "scores": {"judge": 0.5}} for i in range(n)])
    write(isolated / "gates.toml", "[regression]\njudge = 0.1\nrequire_significance = true\n")
    outputs = []
    for jobs in "12":
        run = ragscore("compare", "--gold", "g.jsonl", "--baseline", "base.jsonl", "--trace", "t.jsonl", "--jobs", jobs)
        outputs.append(run.out)
        assert run.status == 1
    assert outputs[0] == outputs[1]
    judge = json.loads(outputs[0])["metrics"]["judge"]
    assert judge["delta"] == pytest.approx(-0.4) and judge["p_value"] is not None and judge["method"] == "bootstrap"
    write(isolated / "gates.toml", "[regression]\njudg = 0.1\n")
    run = ragscore("compare", "--gold", "g.jsonl", "--baseline", "base.jsonl", "--trace", "t.jsonl")
    assert (run.status, run.err) == (2, 'ragscore: error: gates.toml:2: unknown metric "judg"; did you mean "judge"?\n')


def test_a_score_may_not_take_an_aliases_name(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": "a", "answerable": True}])
    write(isolated / "t.jsonl", [{"qid": "a", "claim": "x", "scores": {"recall@k": 0.2}}])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl")
    assert run.err == ('ragscore: error: t.jsonl:1: "scores": a score is named "recall@k", like an alias of the '
                       "ragscore metric full_recall@K: rename the score\n")
