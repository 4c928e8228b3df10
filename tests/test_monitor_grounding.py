"""monitor --metrics grounding (issue 34): the grounding rates of production traces, per window,
gated and tested for drift, the same as score counts them on the same traces."""

from __future__ import annotations

import json

from conftest import validated, write
from ragscore.schema import MONITOR_SCHEMA_FILE, load_schema

try:
    from jsonschema import Draft202012Validator

    VALIDATOR = Draft202012Validator(load_schema(MONITOR_SCHEMA_FILE))
except ImportError:  # the test extra is not installed
    VALIDATOR = None

HOUR = 1_764_000_000 - 1_764_000_000 % 3600
PASSAGES = ['The policy says "refunds are accepted within 30 days" of purchase.',
            "Revenue grew 87.3% in 2021. Contact jane.doe@example.com for the report."]
CLAIMS = [
    'Per policy, "refunds are accepted within 30 days".',  # a verified quote; 30 supported
    "Revenue grew 85% in 2022.",                           # two unsupported numbers
    "Write to jane.doe@example.com.",                      # a leak from the context
    "not in context",                                      # a refusal: not counted
    '"refunds are accepted within 90 days", it says.',     # an unverified quote; 90 unsupported
]


def _traces(hours: int, claims: list[str]) -> list[dict]:
    return [{"ts": HOUR + h * 3600 + i * 60, "qid": f"q{h}-{i}", "question": "What does it say?",
             "retrieved_ids": ["d1", "d2"], "retrieved_chunks": PASSAGES,
             "answer_json": {"claim": claim, "citations": []}}
            for h in range(hours) for i, claim in enumerate(claims)]


def _doc(text: str) -> dict:
    return validated(text, VALIDATOR, "the monitor report")


def test_each_window_counts_its_answers_findings(ragscore, isolated):
    write(isolated / "t.jsonl", _traces(3, CLAIMS))
    doc = _doc(ragscore("monitor", "--trace", "t.jsonl", "--metrics", "grounding", "--min-n", "1").out)
    # Per hour: quotes 2 judged, 1 verified, 1 unverified; numbers 30, 85%, 2022, 90: 3 unsupported; 4 answered,
    # 1 leak from the context.
    expected = {"quote_verified_rate": 0.5, "quote_misattributed_rate": 0.0, "quote_unverified_rate": 0.5,
                "number_unsupported_rate": 0.75, "leak_rate": 0.25, "leak_from_context_rate": 0.25}
    for scope in [doc, *doc["windows"]]:
        assert {name: scope["metrics"][name] for name in expected} == expected
    assert doc["settings"]["metrics"] == ["grounding"] and doc["signature"].endswith("|metrics:grounding|ci:0.95")
    # Without the family: the report is as before (no grounding keys, the same signature as ever).
    plain = _doc(ragscore("monitor", "--trace", "t.jsonl", "--min-n", "1").out)
    assert "leak_rate" not in plain["metrics"] and "metrics" not in plain["settings"]


def test_monitor_and_score_count_the_same_traces_alike(ragscore, isolated):
    traces = _traces(2, CLAIMS)
    write(isolated / "t.jsonl", traces)
    write(isolated / "g.jsonl", [{"qid": t["qid"], "question": t["question"], "answerable": True} for t in traces])
    scored = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "grounding", "--no-fail").json()
    watched = _doc(ragscore("monitor", "--trace", "t.jsonl", "--metrics", "grounding").out)
    names = [name for name in scored["metrics"] if name.startswith(("quote_", "number_", "leak_"))]
    assert {n: watched["metrics"][n] for n in names} == {n: scored["metrics"][n] for n in names}


def test_a_gate_or_a_drift_bound_turns_the_family_on_and_drift_is_tested(ragscore, isolated):
    write(isolated / "base.jsonl", _traces(2, [CLAIMS[0]] * 20))
    write(isolated / "t.jsonl", _traces(2, [CLAIMS[0]] * 10 + [CLAIMS[4]] * 10))
    run = ragscore("monitor", "--trace", "t.jsonl", "--baseline", "base.jsonl", "--gates",
                   "quote_unverified_rate<=0.2", "--min-n", "5")
    doc = _doc(run.out)
    assert run.status == 1 and doc["metrics"]["quote_unverified_rate"] == 0.5
    assert "FAIL    quote_unverified_rate = 0.5000 (gate <= 0.2)" in run.err
    drift = {(d["window"], d["metric"]): d for d in doc["drift"]}
    assert drift[("all", "quote_unverified_rate")]["significant"] and drift[("all", "quote_unverified_rate")][
        "baseline"] == 0.0
    (isolated / "gates.toml").write_text("[monitor.drift]\nnumber_unsupported_rate = 0.1\n", encoding="utf-8")
    bounded = ragscore("monitor", "--trace", "t.jsonl", "--baseline", "base.jsonl", "--min-n", "5")
    assert bounded.status == 1 and "number_unsupported_rate" in _doc(bounded.out)["metrics"]
    (isolated / "gates.toml").write_text("[monitor.drift]\nleak_rat = 0.1\n", encoding="utf-8")
    typo = ragscore("monitor", "--trace", "t.jsonl")
    assert typo.status == 2 and 'did you mean "leak_rate"?' in typo.err


def test_monitor_reads_passage_texts_from_a_corpus(ragscore, isolated):
    write(isolated / "corpus.jsonl", [{"_id": "d1", "text": PASSAGES[0]}, {"_id": "d2", "text": PASSAGES[1]}])
    traces = [{k: v for k, v in t.items() if k != "retrieved_chunks"} for t in _traces(1, CLAIMS)]
    write(isolated / "t.jsonl", traces)
    doc = _doc(ragscore("monitor", "--trace", "t.jsonl", "--metrics", "grounding", "--corpus", "corpus.jsonl").out)
    assert doc["metrics"]["number_unsupported_rate"] == 0.75 and doc["inputs"]["corpus"]["documents"] == 2
    without = _doc(ragscore("monitor", "--trace", "t.jsonl", "--metrics", "grounding").out)
    assert without["metrics"]["number_unsupported_rate"] is None  # no passage texts: nothing judged


def test_monitor_takes_only_the_grounding_family(ragscore, isolated):
    write(isolated / "t.jsonl", _traces(1, CLAIMS))
    run = ragscore("monitor", "--trace", "t.jsonl", "--metrics", "retrieval")
    assert (run.status, run.err) == (2, "ragscore: error: --metrics: monitor reads no gold set: grounding is the one "
                                        "family it takes\n")
    assert "jane.doe" not in ragscore("monitor", "--trace", "t.jsonl", "--metrics", "grounding", "--format",
                                      "markdown").out
    assert json.loads(ragscore("monitor", "--trace", "t.jsonl", "--metrics", "grounding").out)["pass"]
