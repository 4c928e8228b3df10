"""Write traces.jsonl: MLflow 3 traces of a small retrieval chain, one ``Trace.to_json()`` per line
(a CHAIN span with the question and answer, a RETRIEVER span returning ``mlflow.entities.Document``s).

The first two are a plain chain (text in, text out, Documents with their ``id``). The third is a chat
pipeline: its qid set as a trace tag (``mlflow.update_current_trace(tags={"qid": ...})``), a chat request in,
a chat completion out, an LLM span reporting token usage, an inner RETRIEVER span that returns nothing
before the one that returns Documents named only by ``metadata.doc_uri``.

fallback.jsonl, beside it: one trace whose first retriever (a filtered search) returns no documents
and whose fallback retriever, started after it, returns them.

    MLFLOW_ENABLE_ASYNC_TRACE_LOGGING=false MLFLOW_ALLOW_FILE_STORE=true \\
        python tests/data/mlflow/make_traces.py tests/data/mlflow/traces.jsonl

Written with mlflow-skinny 3.17.2 (see versions.txt, which this script writes next to the
traces), tracking to a temporary folder (the file store); no model or network is used. (MLflow 2.22
writes no trace to a file store, so its older layout has no file here and is not read.)
"""

from __future__ import annotations

import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import mlflow
from mlflow.entities import Document, SpanType
from mlflow.tracing.constant import SpanAttributeKey

RUNS = (
    ("What is the refund window?", "Refunds are accepted within 30 days.", ["d1", "d3"]),
    ("Who founded the company?", "Ada Lovelace founded it.", ["d4", "d2"]),
)


@mlflow.trace(span_type=SpanType.RETRIEVER)
def retrieve(query: str, ids: list[str]) -> list[Document]:
    return [Document(page_content=f"text of {i}", metadata={"doc_uri": f"docs/{i}.md", "chunk_id": i}, id=i)
            for i in ids]


@mlflow.trace(span_type=SpanType.CHAIN)
def answer(question: str, reply: str, ids: list[str]) -> str:
    retrieve(question, ids)
    return reply


@mlflow.trace(span_type=SpanType.RETRIEVER)
def lookup(query: str) -> None:
    """An inner retriever step that returns nothing (its caller returns the documents)."""


@mlflow.trace(span_type=SpanType.RETRIEVER)
def search(query: str) -> list[Document]:
    lookup(query)
    return [Document(page_content=f"text of {uri}", metadata={"doc_uri": uri}) for uri in ("docs/d2.md", "docs/d4.md")]


@mlflow.trace(span_type=SpanType.LLM)
def complete(messages: list[dict[str, str]]) -> dict[str, object]:
    span = mlflow.get_current_active_span()
    span.set_attribute(SpanAttributeKey.CHAT_USAGE, {"input_tokens": 41, "output_tokens": 7, "total_tokens": 48})
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "offline",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "It was founded by Ada Lovelace."}}]}


@mlflow.trace(span_type=SpanType.CHAT_MODEL)
def chat(messages: list[dict[str, str]]) -> dict[str, object]:
    mlflow.update_current_trace(tags={"qid": "q3"})
    search(messages[-1]["content"])
    return complete(messages)


@mlflow.trace(span_type=SpanType.RETRIEVER)
def filtered_search(query: str) -> list[Document]:
    return []


@mlflow.trace(span_type=SpanType.RETRIEVER)
def fallback_search(query: str) -> list[Document]:
    return [Document(page_content="Refunds are accepted within 30 days.", id="d1"),
            Document(page_content="Shipping takes a week.", id="d7")]


@mlflow.trace(span_type=SpanType.CHAIN)
def answer_with_fallback(question: str) -> str:
    filtered_search(question) or fallback_search(question)
    return "Refunds are accepted within 30 days."


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as store:
        mlflow.set_tracking_uri((Path(store) / "mlruns").as_uri())  # a new file store makes its default experiment
        lines = []
        for question, reply, ids in RUNS:
            answer(question, reply, ids)
            lines.append(last_trace().to_json() + "\n")
        chat([{"role": "system", "content": "Answer from the documents."},
              {"role": "user", "content": "Who started the company?"}])
        lines.append(last_trace().to_json() + "\n")
        answer_with_fallback("What is the refund window?")
        fallback = last_trace().to_json() + "\n"
    out.write_text("".join(lines), encoding="utf-8")
    (out.parent / "fallback.jsonl").write_text(fallback, encoding="utf-8")
    (out.parent / "versions.txt").write_text(f"mlflow-skinny=={version('mlflow-skinny')}\n", encoding="utf-8")


def last_trace() -> mlflow.entities.Trace:
    """The trace just written."""
    return mlflow.get_trace(mlflow.get_last_active_trace_id())


if __name__ == "__main__":
    main(Path(sys.argv[1]))
