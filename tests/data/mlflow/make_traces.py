"""Write traces.jsonl: MLflow 3 traces of a small retrieval chain, one ``Trace.to_json()`` per line
(a CHAIN span with the question and answer, a RETRIEVER span returning ``mlflow.entities.Document``s).

    MLFLOW_ENABLE_ASYNC_TRACE_LOGGING=false MLFLOW_ALLOW_FILE_STORE=true \\
        python tests/data/mlflow/make_traces.py tests/data/mlflow/traces.jsonl

Written with mlflow-skinny 3.17.2 (see versions.txt, which this script writes next to the
traces), tracking to a temporary folder (the file store); no model or network is used.
"""

from __future__ import annotations

import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import mlflow
from mlflow.entities import Document, SpanType

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


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as store:
        mlflow.set_tracking_uri((Path(store) / "mlruns").as_uri())  # a new file store makes its default experiment
        lines = []
        for question, reply, ids in RUNS:
            answer(question, reply, ids)
            trace = mlflow.get_trace(mlflow.get_last_active_trace_id())
            lines.append(trace.to_json() + "\n")
    out.write_text("".join(lines), encoding="utf-8")
    (out.parent / "versions.txt").write_text(f"mlflow-skinny=={version('mlflow-skinny')}\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
