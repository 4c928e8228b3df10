"""A run in which no answered trace cites anything (issue 32): LangChain and llama-index write no
citations field, so chr and every metric that needs citations are undefined (null, "n/a"), not 0;
precision counts the claims alone; one note names the cause and the fix, and so does the
diagnosis of precision, instead of a retrieval cause. Decided over the whole run: score, partials
and their merge, --jobs, compare, slices and the Python API agree.

The LangChain traces are what langchain-core 1.8.3 wrote (tests/data/real/langchain/make_traces.py):
four answers to four answerable questions, each retrieving its gold document first; the claims
contain the gold substring for q1, q2 and q4, not for q3 ("The Danube" where the gold says "Rhine").
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import ragscore
from conftest import DATA, write
from ragscore.diagnose import Sample, diagnose
from ragscore.diagnose.rules import parse_rules

LANGCHAIN = DATA / "real" / "langchain"
NOTE = ("no trace cites anything: write answer_json.citations, or --map citations=PATH; chr, chr_answerable, "
        "citation_precision and fabricated_citation_rate are n/a, precision counts the claims alone: answerable, "
        "the claim contained, nothing forbidden")
CITING = ("chr", "chr_answerable", "citation_precision", "fabricated_citation_rate")
CAUSE = ("no trace cites anything: chr and the citation metrics are n/a, and precision counts the claims alone "
         "(answerable, the claim contained, nothing forbidden)")
ACTION = "write the cited ids in answer_json.citations, or --map citations=PATH to where the traces hold them"


@pytest.fixture
def langchain(isolated: Path) -> Path:
    """The gold set and LangChain's traces in an empty folder (no gates.toml: the default gates)."""
    for name in ("gold.jsonl", "traces.jsonl"):
        shutil.copy(LANGCHAIN / name, isolated / name)
    return isolated


def _answer_metrics(doc: dict[str, object]) -> dict[str, object]:
    metrics = doc["metrics"]
    assert isinstance(metrics, dict)
    return {name: metrics[name] for name in ("precision", "chr", "chr_answerable", "under_refusal", "over_refusal",
                                             "containment", "compliance", "citation_precision",
                                             "fabricated_citation_rate", "forbidden_rate", "full_recall@5")}


def test_a_stock_langchain_run_has_no_citation_metrics_and_one_note(ragscore, langchain):
    run = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--trace-format", "langchain")
    doc = run.json()
    # Counted by hand: 4 answered, all answerable; claims contained for q1, q2, q4 (3/4); no citations
    # field (compliance 0/4); every gold document retrieved (full recall 4/4).
    assert _answer_metrics(doc) == {
        "precision": 0.75, "chr": None, "chr_answerable": None, "under_refusal": None, "over_refusal": 0.0,
        "containment": 0.75, "compliance": 0.0, "citation_precision": None, "fabricated_citation_rate": None,
        "forbidden_rate": 0.0, "full_recall@5": 1.0,
    }
    assert doc["chr"] is None and doc["precision"] == 0.75
    assert {name: doc["intervals"][name] for name in CITING} == dict.fromkeys(CITING)
    assert doc["intervals"]["precision"] == [0.300641842582402, 0.9544127391902995]  # Wilson 3/4
    assert doc["labels"]["NO_CITATION_HIT"] == 4  # each question's label still says what its trace lacked
    assert run.err.count("no trace cites anything: write") == 1
    assert run.err.splitlines()[0] == f"ragscore: {NOTE}"
    (diagnosis,) = [d for d in doc["diagnoses"] if d["metric"] == "precision"]
    assert diagnosis == {
        "metric": "precision", "value": 0.75, "threshold": 0.8, "severity": "warning", "direction": "higher",
        "because": "no trace citing anything",
        "root_causes": [CAUSE, "answers are wrong in more than one way: see the labels of the worst questions"],
        "suggested_actions": [ACTION, "look at the labels of the worst questions (--only-failures --format markdown)"],
        # The worst by the claims alone: q3 only (by the labels, all four would be 0).
        "low_samples": [{"qid": "q3", "question": "Which river flows through Germany?",
                         "claim": "The Danube flows through Germany.", "value": 0.0}],
    }
    assert "ragscore: diagnosis: warning precision = 0.7500, past 0.8 (higher is better), with no trace citing " \
           "anything\n" in run.err
    assert "retrieval drift" not in run.out + run.err
    assert "ragscore: SKIPPED chr = n/a (gate >= 0.75)\n" in run.err


def test_text_and_markdown_say_n_a(ragscore, langchain):
    text = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--trace-format", "langchain",
                    "--format", "text", "--html", "r.html").out
    assert "chr                          n/a  >= 0.75  skipped\n" in text
    assert "citation_precision           n/a\n" in text
    assert "  cause: " + CAUSE + "\n" in text
    md = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--trace-format", "langchain",
                  "--format", "markdown").out
    assert "| `chr` | n/a | n/a | higher |" in md
    assert "| `fabricated_citation_rate` | n/a | n/a | lower |" in md
    page = (langchain / "r.html").read_text(encoding="utf-8")
    assert CAUSE in page


def test_strict_fails_a_gate_on_an_undefined_citation_metric(ragscore, langchain):
    write(langchain / "gates.toml", "[gates]\nprecision = 0.5\nchr = 0.5\nfabricated_citation_rate = 0.1\n")
    run = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--trace-format", "langchain", "--strict")
    assert run.status == 1
    assert run.json()["gates"]["chr"]["status"] == "fail"
    assert "ragscore: FAIL    chr = n/a (gate >= 0.5)\n" in run.err
    assert "ragscore: FAIL    fabricated_citation_rate = n/a (gate <= 0.1)\n" in run.err
    relaxed = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--trace-format", "langchain")
    assert (relaxed.status, relaxed.json()["gates"]["chr"]["status"]) == (0, "skipped")


def test_mapping_the_citations_as_the_note_says_scores_them(ragscore, langchain):
    records = [json.loads(line) for line in (langchain / "traces.jsonl").read_text(encoding="utf-8").splitlines()]
    write(langchain / "cited.jsonl", [{**r, "sources": [r["context"][0]["id"]]} for r in records])
    run = ragscore("--gold", "gold.jsonl", "--trace", "cited.jsonl", "--trace-format", "langchain",
                   "--map", "citations=sources")
    doc = run.json()
    assert {name: doc["metrics"][name] for name in ("precision", *CITING)} == {
        "precision": 0.75, "chr": 1.0, "chr_answerable": 1.0, "citation_precision": 1.0,
        "fabricated_citation_rate": 0.0}
    assert "no trace cites anything" not in run.err
    assert doc["diagnoses"][0]["because"] == "chr >= 0.75"


GOLD = [{"qid": f"q{i}", "question": f"Q{i}?", "answerable": True, "gold_claim_substr": ["Paris"],
         "gold_citations": [f"d{i}"]} for i in range(1, 5)]


def _trace(i: int, **answer: object) -> dict[str, object]:
    return {"qid": f"q{i}", "retrieved_ids": [f"d{i}", "x"], "answer_json": {"claim": "Paris.", **answer}}


@pytest.mark.parametrize(("traces", "cites"), [
    ([_trace(i) for i in range(1, 5)], False),                      # no field
    # an empty list on every trace: the traces write citations and cite nothing (a pipeline that stopped
    # citing), scored 0, not undefined
    ([_trace(i, citations=[]) for i in range(1, 5)], True),
    ([_trace(1, citations=["d1"]), *(_trace(i) for i in range(2, 5))], True),  # one id, once
    ([_trace(1, citations="d1"), *(_trace(i) for i in range(2, 5))], True),    # a field that is no list
    ([_trace(1, citations=["d1"], refused=True), *(_trace(i) for i in range(2, 5))], False),  # a refusal's
])
def test_which_runs_cite_nothing(ragscore, isolated, traces, cites):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", traces)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail")
    metrics = run.json()["metrics"]
    assert (NOTE in run.err) is not cites
    if cites:  # scored as always: the traces that cite nothing miss
        hits = sum(t["answer_json"].get("citations") == ["d1"] for t in traces)
        assert (metrics["chr"], metrics["precision"]) == (hits / 4, hits / 4)
    else:
        answered = sum(not t["answer_json"].get("refused", False) for t in traces)
        assert metrics["chr"] is None and metrics["precision"] == 1.0 and metrics["containment"] == answered / 4


def test_the_whole_run_decides_across_partials_and_jobs(ragscore, isolated):
    gold = [{"qid": f"q{i}", "question": f"Q{i}?", "answerable": True, "gold_claim_substr": ["Paris"],
             "gold_citations": [f"d{i}"]} for i in range(1, 9)]
    write(isolated / "g.jsonl", gold)
    from ragscore import owner

    parts = {q["qid"]: owner(q["qid"], 2) for q in gold}
    assert set(parts.values()) == {0, 1}
    citer = next(qid for qid, part in parts.items() if part == 1)  # only part 2 has a trace that cites
    for name, cited in (("none.jsonl", None), ("one.jsonl", citer)):
        write(isolated / name, [{"qid": q["qid"], "retrieved_ids": [f"d{q['qid'][1:]}"],
                                 "answer_json": {"claim": "Paris.", **({"citations": [f"d{q['qid'][1:]}"]}
                                                                    if q["qid"] == cited else {})}}
                                for q in gold])
        whole = ragscore("--gold", "g.jsonl", "--trace", name, "--no-fail")
        jobs = ragscore("--gold", "g.jsonl", "--trace", name, "--no-fail", "--jobs", "2")
        assert (jobs.out, jobs.err) == (whole.out, whole.err)
        for part in (1, 2):
            made = ragscore("partial", "--gold", "g.jsonl", "--trace", name, "--part", f"{part}/2",
                            "-o", f"p{part}.json")
            assert made.status == 0, made.err
        merged = ragscore("merge", "p1.json", "p2.json", "--no-fail")
        assert (merged.out, merged.err) == (whole.out, whole.err)
        metrics = whole.json()["metrics"]
        if cited is None:
            assert metrics["chr"] is None and metrics["precision"] == 1.0 and NOTE in whole.err
        else:  # one trace of eight cites (in part 2): part 1's traces count as citing nothing
            assert metrics["chr"] == 0.125 and metrics["precision"] == 0.125 and NOTE not in whole.err


def test_the_python_api_says_the_same(langchain):
    run = ragscore.score("gold.jsonl", "traces.jsonl", trace_format="langchain")
    assert run.notes()[0] == NOTE
    assert {name: run.evaluation.metrics()[name] for name in ("precision", *CITING)} == {
        "precision": 0.75, **dict.fromkeys(CITING)}
    records = [json.loads(line) for line in (langchain / "traces.jsonl").read_text(encoding="utf-8").splitlines()]
    again = ragscore.score("gold.jsonl", records, trace_format="langchain")
    one, other = json.loads(run.report()), json.loads(again.report())
    assert (again.notes(), other["metrics"], other["diagnoses"]) == (run.notes(), one["metrics"], one["diagnoses"])


def test_compare_decides_for_each_run(ragscore, langchain):
    records = [json.loads(line) for line in (langchain / "traces.jsonl").read_text(encoding="utf-8").splitlines()]
    write(langchain / "cited.jsonl", [{**r, "sources": [r["context"][0]["id"]]} for r in records])
    run = ragscore("compare", "--gold", "gold.jsonl", "--baseline", "cited.jsonl", "--trace", "traces.jsonl",
                   "--trace-format", "langchain", "--map", "citations=sources", "--no-fail")
    metrics = json.loads(run.out)["metrics"]
    assert run.err.splitlines()[0] == f"ragscore: the candidate's traces: {NOTE}"
    assert metrics["chr"] == {"baseline": 1.0, "candidate": None, "delta": None, "delta_interval": None,
                              "p_value": None, "p_adjusted": None, "method": None}
    # Both 0.75: the baseline's by its labels (q3's claim misses), the candidate's by the claims alone,
    # question by question the same, so the paired interval is a point.
    assert metrics["precision"]["delta"] == 0.0 and metrics["precision"]["delta_interval"] == [0.0, 0.0]


def test_slices_decide_by_the_whole_run(ragscore, langchain):
    write(langchain / "gold.jsonl", [{**json.loads(line), "topic": "capital" if "capital" in line else "river"}
                                     for line in (LANGCHAIN / "gold.jsonl").read_text(encoding="utf-8").splitlines()])
    doc = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--trace-format", "langchain",
                   "--by", "topic", "--no-fail").json()
    slices = doc["slices"]["topic"]
    assert {label: (s["metrics"]["precision"], s["metrics"]["chr"], s["intervals"]["chr"])
            for label, s in slices.items()} == {"capital": (1.0, None, None), "river": (0.0, None, None)}


def test_a_diagnosis_rule_of_ones_own_keeps_its_causes_after_the_missing_citations():
    rules = parse_rules({"precision": {"warning": 0.9, "causes": ["mine"], "actions": ["do this"]}}, "gates.toml",
                        lambda key: None, {})
    metrics = {"precision": 0.5, "chr": None}
    sample = Sample("q1", "Q?", "a", 0.0)
    (d,) = diagnose(metrics, rules, 5, {"precision": [sample]}, cites=False)
    assert (d.because, d.root_causes, d.suggested_actions) == ("no trace citing anything", (CAUSE, "mine"),
                                                               (ACTION, "do this"))
    (d,) = diagnose(metrics, rules, 5, {"precision": [sample]})
    assert (d.because, d.root_causes, d.suggested_actions) == (None, ("mine",), ("do this",))


def test_each_question_is_reported_as_the_run(ragscore, langchain):
    doc = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--trace-format", "langchain",
                   "--per-question", "--no-fail").json()
    values = {q["qid"]: (q["metrics"]["precision"], *(q["metrics"][name] for name in CITING))
              for q in doc["questions"]}
    assert values == {"q1": (1.0, None, None, None, None), "q2": (1.0, None, None, None, None),
                      "q3": (0.0, None, None, None, None), "q4": (1.0, None, None, None, None)}


def test_with_repeated_samples_precision_is_undefined_too(ragscore, langchain):
    text = (langchain / "traces.jsonl").read_text(encoding="utf-8")
    (langchain / "twice.jsonl").write_text(text + text, encoding="utf-8")
    run = ragscore("--gold", "gold.jsonl", "--trace", "twice.jsonl", "--trace-format", "langchain",
                   "--repeats", "samples", "--per-question", "--no-fail")
    doc = run.json()
    assert {name: doc["metrics"][name] for name in ("precision", *CITING, "containment")} == {
        "precision": None, **dict.fromkeys(CITING), "containment": 0.75}
    assert {name: doc["intervals"][name] for name in ("precision", *CITING)} == dict.fromkeys(("precision", *CITING))
    assert all(q["metrics"][name] is None for q in doc["questions"] for name in ("precision", *CITING))
    assert run.err.splitlines()[0] == (
        "ragscore: no trace cites anything: write answer_json.citations, or --map citations=PATH; chr, "
        "chr_answerable, citation_precision and fabricated_citation_rate are n/a, precision is n/a too (each "
        "question's samples were judged by their citations)")


@pytest.mark.parametrize(("key", "value", "error"), [
    ("citing", 4, '"result.tally.citing" (4) is greater than "result.tally.answered" (3)'),
    ("claim_ok", 4, '"result.tally.claim_ok" (4) is greater than "result.tally.answered" (3)'),
])
def test_a_partial_whose_new_counts_no_run_makes_is_refused(ragscore, langchain, key, value, error):
    for part in (1, 2):
        assert ragscore("partial", "--gold", "gold.jsonl", "--trace", "traces.jsonl", "--trace-format", "langchain",
                        "--part", f"{part}/2", "-o", f"p{part}.json").status == 0
    doc = json.loads((langchain / "p1.json").read_text(encoding="utf-8"))
    assert (doc["version"], doc["result"]["tally"]["answered"], doc["result"]["tally"]["citing"]) == (4, 3, 0)
    doc["result"]["tally"][key] = value
    (langchain / "p1.json").write_text(json.dumps(doc), encoding="utf-8")
    run = ragscore("merge", "p1.json", "p2.json")
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: p1.json: a damaged ragscore partial: {error}\n")


def test_monitor_says_the_same_for_its_period(ragscore, isolated):
    # No gold: the whole period decides. Two windows; nothing cites in either, then one trace cites.
    traces = [{"qid": "q1", "answer": "a", "retrieved_ids": ["d1"], "ts": 0},
              {"qid": "q2", "answer": "b", "retrieved_ids": ["d2"], "ts": 3600}]
    write(isolated / "t.jsonl", traces)
    run = ragscore("monitor", "--trace", "t.jsonl", "--no-fail")
    doc = json.loads(run.out)
    assert doc["metrics"]["fabricated_citation_rate"] is None
    assert [w["metrics"]["fabricated_citation_rate"] for w in doc["windows"]] == [None, None]
    assert ("ragscore: no trace cites anything: write answer_json.citations, or --map citations=PATH; "
            "fabricated_citation_rate is n/a") in run.err.splitlines()
    traces[1]["answer_json"] = {"claim": "b", "citations": ["d9"]}
    write(isolated / "t.jsonl", traces)
    run = ragscore("monitor", "--trace", "t.jsonl", "--no-fail")
    doc = json.loads(run.out)
    # One of two answers cites an id it did not retrieve; the window that cites nothing fabricated nothing.
    assert doc["metrics"]["fabricated_citation_rate"] == 0.5
    assert [w["metrics"]["fabricated_citation_rate"] for w in doc["windows"]] == [0.0, 1.0]
    assert "cites anything" not in run.err
