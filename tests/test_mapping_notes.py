"""The note that a --map path found nothing, for every concept a mapping may name (issue 32)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import write
from ragscore.loaders.shapes import TRACE_CONCEPTS

GOLD = [{"qid": "Q1", "question": "What is the refund window?", "answerable": True,
         "gold_claim_substr": ["30 days"], "gold_citations": ["d1"]}]

# A value for each concept, put at x.<concept> in the trace: a concept added to TRACE_CONCEPTS
# without one here fails the tests below (KeyError), so every concept's note stays tested.
VALUES: dict[str, object] = {
    "qid": "Q1",
    "question": "What is the refund window?",
    "claim": "30 days",
    "citations": ["d1"],
    "retrieved_ids": ["d1"],
    "refused": False,
    "retrieved_chunks": ["Refunds are accepted within 30 days."],
    "scores": {"judge": 0.5},
    "document_id": "d1",
    "latency_ms": 12,
    "tokens_in": 3,
    "tokens_out": 4,
    "cost": 0.01,
    "ts": 1_700_000_000,
    "tool_calls": [{"name": "search", "arguments": {"q": "refunds"}}],
}


def _trace(concept: str) -> dict[str, Any]:
    """A trace that joins by qid and by question (a mapped qid or question drops only its own key)."""
    trace: dict[str, Any] = {"qid": "Q1", "question": "What is the refund window?", "answer": "30 days",
                             "citations": ["d1"], "retrieved_ids": ["d1"]}
    if concept == "document_id":  # read inside each retrieved entry that is an object
        trace["retrieved_ids"] = [{"x": {"document_id": VALUES[concept]}}]
    else:
        trace["x"] = {concept: VALUES[concept]}
    return trace


@pytest.mark.parametrize("concept", sorted(TRACE_CONCEPTS))
def test_a_mapping_that_finds_its_value_is_not_noted(ragscore, isolated, concept):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace(concept)])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--map", f"{concept}=x.{concept}")
    assert run.status == 0, run.err
    assert "found nothing" not in run.err
    counts = json.loads(run.out)["counts"]
    assert (counts["traced"], counts["unreadable"], counts["unreadable_retrieved"]) == (1, 0, 0)


@pytest.mark.parametrize("concept", sorted(TRACE_CONCEPTS))
def test_a_mapping_that_finds_nothing_is_noted(ragscore, isolated, concept):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [_trace(concept), _trace(concept)])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "none",
                   "--map", f"{concept}=y.{concept}")
    assert run.status == 0, run.err
    assert (f'ragscore: the mapping {concept}="y.{concept}" found nothing in any of 2 traces (a typo in the path?)\n'
            in run.err)
