"""quote_verified_rate compared with ragas' QuotedSpansAlignment on the same traces (issue 34).

tests/data/ragas_quotes/traces.jsonl holds traces with quotes of every kind; ragas.json what ragas
0.4.3's ``QuotedSpansAlignment`` made of them (written by make_ragas_quotes.py there: each span
ragas judged, whether it matched, each sample's value). ragas is not in the test extra (it is the
``ragas`` extra: see pyproject.toml), so its outputs are committed; the last test regenerates them
when ragas is installed and fails when ragas no longer gives what is committed.

Each trace is a row of ROWS: where the two definitions agree, ragscore judges the quotes ragas
judges and verifies the ones ragas matches; every other row names the difference it shows, and
docs/metrics.md's table of differences ("Quotes compared with ragas") has a row for each of them.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import DATA, write
from docs import doc_section
from ragscore.metrics.grounding import MISATTRIBUTED, SHORT, UNVERIFIED, VERIFIED, evidence_of, judge_quote, quotes

HERE = DATA / "ragas_quotes"
TRACES: list[dict[str, Any]] = [json.loads(line) for line in (HERE / "traces.jsonl").read_text("utf-8").splitlines()]
RAGAS: dict[str, Any] = json.loads((HERE / "ragas.json").read_text("utf-8"))
SAMPLES: dict[str, dict[str, Any]] = {s["qid"]: s for s in RAGAS["samples"]}

AGREE = ""
# The differences, as the first column of docs/metrics.md's table names them.
SCORE, MARKS, APOSTROPHES, LENGTH, FOLDING = "the score", "quotation marks", "apostrophes", "minimum length", "folding"
ENDS, EVIDENCE, JOINED, NO_TEXT = "punctuation at the ends", "evidence", "passages joined", "no passage text"
V, M, U, S = VERIFIED, MISATTRIBUTED, UNVERIFIED, SHORT

# qid: (the difference it shows or AGREE, ragscore's verdict on each quote it finds, whether ragas matched
# each span it judged; None: ragscore does not judge the trace, it has no passage text)
ROWS: dict[str, tuple[str, list[str] | None, list[bool]]] = {
    "verbatim": (AGREE, [V], [True]),
    "case-and-space": (AGREE, [V], [True]),         # case and runs of white space
    "typographic-marks": (AGREE, [V], [True]),      # “…”
    "no-break-space": (AGREE, [V], [True]),         # a no-break space in the passage is white space to both
    "changed-word": (AGREE, [U], [False]),
    "inserted-not": (AGREE, [U], [False]),
    "multiple": (AGREE, [V, U], [True, False]),     # each quote of an answer is judged
    "other-passage-uncited": (AGREE, [V], [True]),  # cites nothing: every passage is its evidence
    "line-break": (AGREE, [], []),                  # neither reads a quote across a line break
    "part-of-a-word": (AGREE, [V], [True]),         # both find the quote as a substring: no word boundaries
    "no-quotes": (SCORE, [], []),                   # ragscore leaves the trace out; ragas scores it 1.0
    "single-quotes": (MARKS, [], [True]),
    "low-quotes": (MARKS, [], [True]),              # „…“
    "apostrophe-inside": (APOSTROPHES, [V], []),
    "apostrophe-before": (APOSTROPHES, [V], [False]),
    "short": (LENGTH, [S], [True]),                 # 11 characters, 4 words
    "one-long-word": (LENGTH, [V], []),             # 14 characters, 1 word
    "dash": (FOLDING, [V], [False]),                # en dashes in the passage
    "ligature": (FOLDING, [V], [False]),            # "ﬁ" in the passage (NFKC)
    "decomposed-accent": (FOLDING, [V], [False]),   # "e" and a combining accent in the passage (NFKC)
    "sharp-s": (FOLDING, [V], [False]),             # "STRASSE" and "Straße": case folded, not lower-cased
    "trailing-stop": (ENDS, [V], [False]),
    "other-passage-cited": (EVIDENCE, [M], [True]),
    "across-passages": (JOINED, [U], [True]),
    "no-passage-text": (NO_TEXT, None, [False]),
}


def ragscore_verdicts(trace: dict[str, Any]) -> list[tuple[str, str]] | None:
    """Each quote ragscore finds in the trace's claim and its verdict; None when the trace has no passage text."""
    passages = trace.get("retrieved_chunks")
    if not passages:
        return None
    evidence, others, _ = evidence_of(trace["retrieved_ids"], trace["answer_json"]["citations"], passages)
    return [(q.text, judge_quote(q.text, evidence, others)) for q in quotes(trace["answer_json"]["claim"])]


def test_every_trace_is_a_row_and_ragas_outputs_are_its_own():
    assert [t["qid"] for t in TRACES] == list(SAMPLES) and set(ROWS) == set(SAMPLES)
    for sample in RAGAS["samples"]:
        # a sample's value is its matched spans over its spans, 1.0 when it has none
        matched = sample["matched"]
        assert sample["value"] == (sum(matched) / len(matched) if matched else 1.0)
    assert RAGAS["generator"].startswith("tests/data/ragas_quotes/make_ragas_quotes.py (ragas 0.4.3,")


@pytest.mark.parametrize("trace", TRACES, ids=[t["qid"] for t in TRACES])
def test_each_trace_agrees_with_ragas_or_shows_its_documented_difference(trace):
    difference, verdicts, matched = ROWS[trace["qid"]]
    sample = SAMPLES[trace["qid"]]
    found = ragscore_verdicts(trace)
    assert (None if found is None else [v for _, v in found]) == verdicts
    assert sample["matched"] == matched
    if difference == AGREE:  # the same quotes judged, and verified exactly where ragas matched them
        assert found is not None and [q.strip() for q, _ in found] == sample["spans"]
        assert [v == VERIFIED for _, v in found] == matched
    elif difference == MARKS:  # ragas judges a span in marks that are no quotation marks to ragscore
        assert found == [] and sample["spans"]
    elif difference == APOSTROPHES:  # ragas pairs an apostrophe with the quote's opening mark: the quote is lost
        assert found is not None and found[0][0] not in sample["spans"]
        assert sample["spans"] == (["s policy says"] if trace["qid"] == "apostrophe-before" else [])


def test_the_run_s_rate_and_ragas_mean(ragscore, isolated):
    """Over the traces: ragscore's rate is the run's verified quotes over its judged quotes; ragas' score is
    the mean of its samples' values (a sample with no span counts 1.0). The older ragas function
    quoted_spans_alignment divides as ragscore does, but misses typographic marks."""
    write(isolated / "g.jsonl", [{"qid": t["qid"], "question": f"{t['qid']}?", "answerable": True} for t in TRACES])
    write(isolated / "t.jsonl", TRACES)
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "grounding", "--no-fail").json()
    verdicts = [v for t in TRACES for _, v in ragscore_verdicts(t) or []]
    counts = doc["grounding"]
    assert (counts["quotes_judged"], counts["quotes_verified"], counts["quotes_misattributed"],
            counts["quotes_unverified"], counts["quotes_short"]) == (20, 15, 1, 4, 1) == (
        len(verdicts) - verdicts.count(S), verdicts.count(V), verdicts.count(M), verdicts.count(U), verdicts.count(S))
    assert doc["metrics"]["quote_verified_rate"] == 15 / 20
    values = [s["value"] for s in RAGAS["samples"]]
    assert RAGAS["mean"] == sum(values) / len(values) == 15.5 / 25
    spans = [m for s in RAGAS["samples"] for m in s["matched"]]
    assert (sum(spans), len(spans)) == (12, 22)  # QuotedSpansAlignment: 12 of its 22 spans matched
    legacy = RAGAS["legacy"]  # without the two in typographic marks ("typographic-marks", "low-quotes")
    assert (legacy["matched"], legacy["total"], legacy["citation_alignment_quoted_spans"]) == (10, 20, 0.5)


def test_the_docs_explain_every_difference():
    section = doc_section("Quotes compared with ragas")
    rows = re.findall(r"^\| \*\*(.+?)\*\* \|", section, re.MULTILINE)
    assert sorted(rows) == sorted({d for d, _, _ in ROWS.values() if d != AGREE})
    assert "ragas 0.4.3" in section and "tests/data/ragas_quotes/" in section


@pytest.mark.skipif(importlib.util.find_spec("ragas") is None,
                    reason="ragas is not installed (pip install 'ragscore-cli[ragas]')")
def test_ragas_still_gives_its_committed_outputs(tmp_path: Path):
    target = tmp_path / "ragas.json"
    subprocess.run([sys.executable, str(HERE / "make_ragas_quotes.py"), str(target)], check=True, timeout=300)
    fresh = json.loads(target.read_text("utf-8"))
    assert {k: v for k, v in fresh.items() if k != "generator"} == {k: v for k, v in RAGAS.items() if k != "generator"}
