"""Traces in which nothing is retrieved anywhere (issue 32): LangChain's documented "returning
sources" chain writes ``{"question", "context": [Document...], "answer"}``; ``--trace-format auto``
reads it as the langchain preset (its ``context`` holds Document-like objects), not as the native
contract with the retrieved documents ignored. When no trace retrieved anything readable, one note
says so and names the field that likely holds it (``context``, ``source_nodes``, ragas'
``retrieved_contexts`` without ``retrieved_context_ids``); texts without ids matched to the gold
set's ``gold_chunks`` (--metrics retrieval) count as retrieved.

The LangChain traces are what langchain-core 1.8.3 wrote (tests/data/real/langchain/make_traces.py):
four answers, each retrieving its gold document first, so full recall is 4/4 by hand. The ragas
samples are ragas 0.4.3's own dumps of those answers' texts (tests/data/real/ragas/make_samples.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import DATA, write
from ragscore.loaders.detect import detect

LANGCHAIN = DATA / "real" / "langchain"
RAGAS = DATA / "real" / "ragas"
ADVICE = ("write retrieved_ids, or read ids with --map retrieved_ids=PATH (and --map document_id=PATH inside objects) or the --trace-format "
          "that writes them; texts without ids count only against gold_chunks (--metrics retrieval)")


def _note(fields: str | None, unreadable: str = "") -> str:
    held = f"the traces hold {fields}" if fields else "no trace holds a list ragscore reads as retrieved documents"
    return (f"ragscore: no trace retrieved anything readable (every retrieved list is empty or absent{unreadable}, so "
            f"recall is 0): {held}; {ADVICE}")


def _ragas(isolated: Path) -> None:
    """ragas 0.4.3's own SingleTurnSample.model_dump() of those answers: retrieved_contexts (the texts of
    the Documents langchain-core wrote, in order), retrieved_context_ids null, no qid
    (tests/data/real/ragas/make_samples.py)."""
    shutil.copy(RAGAS / "samples.jsonl", isolated / "ragas.jsonl")


@pytest.fixture
def langchain(isolated: Path) -> Path:
    """The gold set and LangChain's traces in an empty folder (no gates.toml: the default gates)."""
    for name in ("gold.jsonl", "traces.jsonl"):
        shutil.copy(LANGCHAIN / name, isolated / name)
    return isolated


def test_auto_reads_a_returning_sources_chain_as_langchain(ragscore, langchain):
    auto = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--no-fail")
    named = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--trace-format", "langchain", "--no-fail")
    doc = auto.json()
    assert doc["settings"]["trace_format"] == "langchain"
    # Counted by hand: each trace's context lists its gold document first (4 of 4 fully recalled).
    assert doc["metrics"]["full_recall@5"] == 1.0
    assert auto.out == named.out


@pytest.mark.parametrize(("record", "expected"), [
    # LangChain's Document.model_dump() in a native-looking record: langchain.
    ({"qid": "q1", "question": "?", "answer": "a", "context": [{"page_content": "t", "metadata": {}}]}, "langchain"),
    # A context list of plain texts, or a context object, leaves the native contract as it was.
    ({"qid": "q1", "question": "?", "answer": "a", "context": ["t"]}, "native"),
    ({"qid": "q1", "question": "?", "answer": "a", "context": {"page_content": "t"}}, "native"),
    ({"qid": "q1", "question": "?", "answer": "a", "context": []}, "native"),
])
def test_a_context_of_documents_decides_langchain(record, expected):
    assert detect(record) == expected


def test_a_native_read_of_a_context_list_says_nothing_was_retrieved_once(ragscore, langchain):
    run = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--trace-format", "native", "--no-fail")
    assert run.json()["metrics"]["full_recall@5"] == 0.0
    assert [line for line in run.err.splitlines() if "retrieved anything" in line] == [_note('"context"')]


def test_ragas_texts_without_ids_are_named(ragscore, langchain):
    _ragas(langchain)
    run = ragscore("--gold", "gold.jsonl", "--trace", "ragas.jsonl", "--no-fail")
    # No gold_chunks to match the texts to: each of the 4 traces' lists is unreadable, in one note.
    assert run.json()["counts"]["unreadable_retrieved"] == 4
    assert [line for line in run.err.splitlines() if "retriev" in line] == [
        _note('"retrieved_contexts" without "retrieved_context_ids"',
              ", 4 traces with an unreadable list (counts.unreadable_retrieved)"),
        "ragscore: diagnosis: critical full_recall@5 = 0.0000, past 0.6 (higher is better), with no trace retrieving "
        "anything readable"]


def test_texts_matched_to_gold_chunks_count_as_retrieved(ragscore, langchain):
    _ragas(langchain)
    gold = [json.loads(line) for line in (langchain / "gold.jsonl").read_text(encoding="utf-8").splitlines()]
    texts = {"q1": "Paris is the capital of France.", "q2": "Berlin is the capital of Germany.",
             "q3": "The Rhine flows through Germany.", "q4": "Madrid is the capital of Spain."}
    write(langchain / "chunks.jsonl", [{**g, "gold_chunks": [texts[g["qid"]]]} for g in gold])
    run = ragscore("--gold", "chunks.jsonl", "--trace", "ragas.jsonl", "--metrics", "retrieval", "--no-fail")
    # By hand: each sample's first text is its question's gold chunk.
    doc = run.json()
    assert (doc["metrics"]["recall@1"], doc["counts"]["unreadable_retrieved"]) == (1.0, 0)
    assert (run.status, "retrieved anything" in run.err) == (0, False)


def test_one_trace_that_retrieves_silences_the_note(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": q, "question": "?", "answerable": True, "gold_claim_substr": ["x"],
                                  "gold_citations": ["d1"]}
                                 for q in ("q1", "q2")])
    write(isolated / "t.jsonl", [{"qid": "q1", "answer": "x", "source_nodes": [{"node": {"id_": "d1"}}]},
                                 {"qid": "q2", "answer": "x", "retrieved_ids": ["d1"]}])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail")
    assert (run.status, "retrieved anything" in run.err) == (0, False)
    write(isolated / "t.jsonl", [{"qid": "q1", "answer": "x", "source_nodes": [{"node": {"id_": "d1"}}]},
                                 {"qid": "q2", "answer": "x", "retrieved_ids": []}])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail")
    assert [line for line in run.err.splitlines() if "retrieved anything" in line] == [_note('"source_nodes"')]


def test_the_note_is_the_same_across_partials_and_jobs(ragscore, langchain):
    whole = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--trace-format", "native", "--no-fail")
    jobs = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--trace-format", "native", "--no-fail",
                    "--jobs", "2")
    assert (jobs.out, jobs.err) == (whole.out, whole.err)
    for part in (1, 2):
        made = ragscore("partial", "--gold", "gold.jsonl", "--trace", "traces.jsonl", "--trace-format", "native",
                        "--part", f"{part}/2", "-o", f"p{part}.json")
        assert made.status == 0, made.err
    merged = ragscore("merge", "p1.json", "p2.json", "--no-fail")
    assert (merged.out, merged.err) == (whole.out, whole.err)
    assert _note('"context"') in whole.err.splitlines()


def test_the_note_is_made_when_no_field_is_found_either(ragscore, isolated):
    # Native traces that log no retrieved list at all: said so, and the diagnosis of recall says why.
    write(isolated / "g.jsonl", [{"qid": q, "question": f"{q}?", "answerable": True, "gold_citations": ["d1"],
                                  "gold_claim_substr": ["thirty days"]} for q in ("q1", "q2")])
    write(isolated / "t.jsonl", [{"qid": q, "answer_json": {"claim": "thirty days", "citations": ["d1"]}}
                                 for q in ("q1", "q2")])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail")
    assert _note(None) in run.err.splitlines()
    [recall] = [d for d in run.json()["diagnoses"] if d["metric"] == "full_recall@5"]
    assert recall["root_causes"][0].startswith("no trace retrieved anything readable")
    assert recall["because"] == "no trace retrieving anything readable"
