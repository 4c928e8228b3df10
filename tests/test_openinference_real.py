"""OpenInference spans as the real instrumentors write them (issue 32).

The span files are what openinference-instrumentation-langchain 0.1.80 and -llama-index 4.6.1 exported
(tests/data/real/openinference/make_spans.py, versions.txt), one ``ReadableSpan.to_json()`` per line:

- LangChain writes no ``document.id``: each retrieved document's id is only in ``document.metadata``, a JSON
  string ({"id": "d1"}, or {"source": "rhine.txt"}). q1 retrieves [d1, d2] (gold d1); q2 retrieves
  [rhine.txt, d2] (gold both). By hand: recall@1 = (1 + 1/2) / 2 = 0.75, precision@3 = (1/3 + 2/3) / 2 = 0.5.
- llama-index exports the inner ``VectorIndexRetriever._retrieve`` RETRIEVER span (no documents) before the
  outer ``retrieve`` span (the documents, with their node ids as ``document.id``). Both queries retrieve
  [the d2 node, the d1 node]; q1's gold is the d1 node, q2's the d2 node. By hand: recall@1 = (0 + 1) / 2 = 0.5,
  recall@3 = 1.0.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import DATA
from ragscore.loaders.shapes import TraceShape, trace_shape
from ragscore.loaders.trace import document_id_of

REAL = DATA / "real" / "openinference"


@pytest.fixture
def spans(isolated: Path) -> Path:
    """The span files and their gold sets in an empty folder (no gates.toml: the default gates)."""
    for path in REAL.glob("*.jsonl"):
        shutil.copy(path, isolated / path.name)
    return isolated


def assembled(name: str, mapping: tuple[tuple[str, str], ...] = ()) -> tuple[TraceShape, list[dict[str, Any]]]:
    """The traces the openinference preset assembles from one of the span files, and its shape."""
    shape = trace_shape("openinference", mapping)
    assert shape is not None
    lines = (REAL / name).read_text(encoding="utf-8").splitlines()
    rows = ((n, 1, "", json.loads(text), None) for n, text in enumerate(lines, 1))
    records = [record for _line, _column, record, _obj, _key in shape._assembled(rows, name)]
    for record in records:  # as the join counts each trace it owns
        shape.count_ids(record)
    return shape, records


def test_langchain_documents_are_named_by_their_metadata():
    shape, records = assembled("langchain.jsonl")
    assert all("id" not in d["document"] for record in records for d in record["retrieved_ids"])
    ids = [[document_id_of(d, shape.document_id) for d in record["retrieved_ids"]] for record in records]
    assert ids == [["d1", "d2"], ["rhine.txt", "d2"]]
    assert shape.document_ids == {"document.metadata.id": 3, "document.metadata.source": 1}


def test_langchain_spans_score_by_hand(ragscore, spans):
    run = ragscore("--gold", "gold-langchain.jsonl", "--trace", "langchain.jsonl", "--metrics", "retrieval")
    metrics = run.json()["metrics"]
    assert (metrics["recall@1"], metrics["precision@3"], metrics["recall@3"]) == (0.75, 0.5, 1.0)
    # The report says which metadata keys named the documents, in a note and in the JSON report.
    assert run.json()["inputs"]["trace"]["document_ids"] == {"document.metadata.id": 3, "document.metadata.source": 1}
    assert ("ragscore: the retrieved documents' ids were read from document.metadata.id (3 documents), "
            "document.metadata.source (1 document); --map document_id=PATH reads them from another field\n") in run.err


def test_a_mapped_document_id_is_read_as_mapped_not_from_the_metadata():
    shape, records = assembled("langchain.jsonl", (("document_id", "document.name"),))
    assert [[document_id_of(d, shape.document_id) for d in record["retrieved_ids"]] for record in records] == [
        [None, None]] * 2
    assert shape.document_ids == {}


def test_llamaindex_takes_the_retriever_span_that_holds_the_documents():
    shape, records = assembled("llamaindex.jsonl")
    ids = [[d["document"]["id"] for d in record["retrieved_ids"]] for record in records]
    d2, d1 = "ab0f2c0a-35d5-4eec-b9fe-6e555cdd3e8c", "e6a757c3-362e-446f-aac9-89e80eb532fd"
    assert ids == [[d2, d1], [d2, d1]]
    assert shape.document_ids == {"document.id": 4}  # each has its document.id: the metadata's doc_id is not read


def test_llamaindex_spans_score_by_hand(ragscore, spans):
    run = ragscore("--gold", "gold-llamaindex.jsonl", "--trace", "llamaindex.jsonl", "--metrics", "retrieval",
                   "--no-fail")
    metrics = run.json()["metrics"]
    assert (metrics["recall@1"], metrics["recall@3"]) == (0.5, 1.0)
    assert "document_ids" not in run.json()["inputs"]["trace"]  # the contract's own field: nothing to say
    assert "ids were read from" not in run.err


def span(name: str, start: str, documents: list[str] | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": "q?"}
    for n, doc in enumerate(documents or ()):
        attributes[f"retrieval.documents.{n}.document.id"] = doc
    return {"name": name, "context": {"trace_id": "0x1", "span_id": f"0x{name}"}, "parent_id": None,
            "start_time": start, "attributes": attributes}


@pytest.mark.parametrize(("order", "expected"), [
    # The earliest started of the spans with documents, whatever the order they were written in.
    (["empty", "late", "early"], ["e"]),
    (["early", "late", "empty"], ["e"]),
    (["late", "empty"], ["l"]),
    # No span holds documents: the first one read, and no retrieved list.
    (["empty"], None),
])
def test_the_earliest_retriever_with_documents_is_taken(order, expected):
    shape = trace_shape("openinference", ())
    assert shape is not None
    made = {"empty": span("empty", "2026-01-01T00:00:00Z", None),
            "late": span("late", "2026-01-01T00:00:02Z", ["l"]),
            "early": span("early", "2026-01-01T00:00:01Z", ["e"])}
    rows = ((n, 1, "", made[name], None) for n, name in enumerate(order, 1))
    (_line, _column, record, _obj, _key), = shape._assembled(rows, "spans.jsonl")
    got = record.get("retrieved_ids")
    assert (None if got is None else [d["document"]["id"] for d in got]) == expected
