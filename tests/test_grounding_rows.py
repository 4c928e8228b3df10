"""--metrics grounding's findings in the per-question rows (issue 34): each quote, unsupported number and leak
at its characters, the evidence used, the same in one process, in parts merged, and as the counts add up."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write
from ragscore.loaders.trace import parse_trace
from ragscore.metrics.grounding import MISATTRIBUTED, SHORT, UNVERIFIED, VERIFIED, grounding_findings, grounding_row

PASSAGES = ['The policy says "refunds are accepted within 30 days" of purchase.',
            "Revenue grew 87.3% in 2021. Write to jane.doe@example.com."]
TRACES = [
    ('It says "refunds are accepted within 30 days"; revenue grew 85% in 2022.', ["d1"]),
    ('"revenue grew 87.3% in 2021", and mail jane.doe@example.com or bob@example.org.', ["d1"]),
    ("not in context", []),
]


def test_each_answer_lists_its_findings_and_the_parts_give_the_same(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "question": "What does it say? (bob@example.org)",
                                  "answerable": True} for i in range(len(TRACES))])
    write(isolated / "t.jsonl", [{"qid": f"q{i}", "retrieved_ids": ["d1", "d2"], "retrieved_chunks": PASSAGES,
                                  "answer_json": {"claim": claim, "citations": cited}}
                                 for i, (claim, cited) in enumerate(TRACES)])
    args = ("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "grounding", "--per-question", "--no-fail")
    whole = ragscore(*args)
    rows = {q["qid"]: q for q in whole.json()["questions"]}
    assert rows["q0"]["grounding"] == {"evidence": "cited", "passages": 1, "numbers": 3, "findings": [
        {"kind": "quote", "start": 9, "end": 44, "verdict": "verified"},
        {"kind": "number", "start": 60, "end": 63, "verdict": "unsupported"},
        {"kind": "number", "start": 67, "end": 71, "verdict": "unsupported"}]}
    # The quote is in d2, not in the cited d1: misattributed, and its numbers unsupported by d1.
    assert rows["q1"]["grounding"]["findings"] == [
        {"kind": "quote", "start": 1, "end": 27, "verdict": "misattributed"},
        {"kind": "number", "start": 14, "end": 19, "verdict": "unsupported"},
        {"kind": "number", "start": 23, "end": 27, "verdict": "unsupported"},
        {"kind": "leak", "start": 39, "end": 59, "verdict": "from_context", "leak": "email"},
        {"kind": "leak", "start": 63, "end": 78, "verdict": "echoed", "leak": "email"}]
    assert rows["q1"]["claim"] == '"revenue grew 87.3% in 2021", and mail [email] or [email].'
    assert rows["q2"]["grounding"] is None  # refused: not judged
    assert "jane.doe" not in whole.out and "bob@" not in whole.out.replace("(bob@example.org)", "")
    for part in (1, 2):
        assert ragscore("partial", *args[:-1], "--part", f"{part}/2", "-o", f"p{part}.json").status == 0
    merged = ragscore("merge", "p1.json", "p2.json", "--per-question", "--no-fail")
    assert merged.out == whole.out  # a damaged finding is an error: tests/test_grounding_edges.py


CLAIM_PARTS = st.lists(st.sampled_from([
    '"refunds are accepted within 30 days"', '"refunds are accepted within 31 days"', '"in short"',
    '"revenue grew 87.3% in 2021"', "87%", "85%", "$35M", "2021", "write to jane.doe@example.com",
    "bob@example.org", "and", "the report", "4111 1111 1111 1111",
]), max_size=8)


@given(CLAIM_PARTS, st.sampled_from([[], ["d1"], ["d2"], ["d9"]]), st.booleans())
@settings(max_examples=200, deadline=None)
def test_the_findings_add_up_to_the_counts(parts, cited, texts):
    claim = " ".join(parts)
    view = parse_trace({"qid": "q", "retrieved_ids": ["d1", "d2"], "answer_json": {"claim": claim,
                                                                                  "citations": cited}}, "t", 1)
    passages = PASSAGES if texts else []
    found = grounding_findings(claim, view.retrieved, view.citations, passages, "bob@example.org?")
    verdicts = [f.verdict for f in found.items if f.kind == "quote"]
    leaks = [f.verdict for f in found.items if f.kind == "leak"]
    expected = (len(verdicts) - verdicts.count(SHORT), verdicts.count(VERIFIED), verdicts.count(MISATTRIBUTED),
                verdicts.count(UNVERIFIED), verdicts.count(SHORT), found.numbers,
                sum(f.kind == "number" for f in found.items), 1, any(w != "echoed" for w in leaks),
                "from_context" in leaks, 0, 0, 0, 0, 0)  # no provider response: no provider citations
    assert grounding_row(view, passages, "bob@example.org?") == tuple(float(x) for x in expected)


def test_a_failed_grounding_gate_s_annotation_names_its_questions_not_their_text(ragscore, isolated, monkeypatch):
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "question": "Who?", "answerable": True} for i in range(8)])
    write(isolated / "t.jsonl", [{"qid": f"q{i}", "retrieved_ids": ["d1", "d2"], "retrieved_chunks": PASSAGES,
                                  "answer_json": {"claim": "Write to jane.doe@example.com." if i % 2 else "Jane.",
                                                  "citations": []}} for i in range(8)])
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--gates", "leak_rate<=0.1", "-q")
    assert run.status == 1
    assert ("::error title=ragscore gate leak_rate::leak_rate = 0.5000, expected <= 0.1: in q1, q3, q5, q7"
            in run.err.splitlines())
    assert "jane" not in run.err.lower()
