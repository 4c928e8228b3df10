"""Write examples/formats/mlflow.jsonl and llamaindex.jsonl: the run of native-with-tokens.jsonl, traced
by MLflow 3 and answered as llama-index query-engine responses, by the libraries themselves.

    MLFLOW_ENABLE_ASYNC_TRACE_LOGGING=false MLFLOW_ALLOW_FILE_STORE=true \\
        python tests/data/formats/make_library_examples.py

- mlflow.jsonl: for each trace, ``@mlflow.trace`` functions replay it (a CHAIN span taking the question
  and returning the answer, a RETRIEVER span returning ``mlflow.entities.Document``s with the retrieved
  ids and texts, an LLM span reporting the trace's token counts), and ``Trace.to_json()`` is one line.
- llamaindex.jsonl: for each trace, a llama-index-core ``Response`` with ``NodeWithScore(TextNode(id_=
  the retrieved id, text=its text))`` source nodes, dumped as ``{"query", "response", "source_nodes":
  [NodeWithScore.to_dict()]}``.

No model, index or network is used: the answers are the recorded ones. The versions that wrote the
files are in library-versions.txt, next to this script.
"""

from __future__ import annotations

import json
import tempfile
from importlib.metadata import version
from pathlib import Path

import mlflow
from llama_index.core.base.response.schema import Response
from llama_index.core.schema import NodeWithScore, TextNode
from mlflow.entities import Document, SpanType
from mlflow.tracing.constant import SpanAttributeKey

HERE = Path(__file__).parent
EXAMPLES = HERE.parents[2] / "examples" / "formats"


@mlflow.trace(span_type=SpanType.RETRIEVER)
def retrieve(query: str, ids: list[str], texts: list[str]) -> list[Document]:
    return [Document(page_content=text, id=i) for i, text in zip(ids, texts, strict=True)]


@mlflow.trace(span_type=SpanType.LLM)
def generate(question: str, answer: str, tokens: tuple[int, int]) -> str:
    usage = {"input_tokens": tokens[0], "output_tokens": tokens[1], "total_tokens": sum(tokens)}
    mlflow.get_current_active_span().set_attribute(SpanAttributeKey.CHAT_USAGE, usage)
    return answer


@mlflow.trace(span_type=SpanType.CHAIN)
def answer(question: str, trace: dict[str, object]) -> str:
    retrieve(question, trace["retrieved_ids"], trace["retrieved_chunks"])
    return generate(question, trace["answer"], (trace["input_tokens"], trace["output_tokens"]))


def main() -> None:
    traces = [json.loads(line) for line in (HERE / "native-with-tokens.jsonl").read_text(encoding="utf-8").splitlines()]
    with tempfile.TemporaryDirectory() as store:
        mlflow.set_tracking_uri((Path(store) / "mlruns").as_uri())
        lines = []
        for trace in traces:
            answer(trace["question"], trace)
            lines.append(mlflow.get_trace(mlflow.get_last_active_trace_id()).to_json() + "\n")
    (EXAMPLES / "mlflow.jsonl").write_text("".join(lines), encoding="utf-8")
    lines = []
    for trace in traces:
        nodes = [NodeWithScore(node=TextNode(id_=i, text=text), score=round(1 - rank / 10, 1))
                 for rank, (i, text) in enumerate(zip(trace["retrieved_ids"], trace["retrieved_chunks"], strict=True))]
        response = Response(response=trace["answer"], source_nodes=nodes)
        dump = {"query": trace["question"], "response": str(response),
                "source_nodes": [node.to_dict() for node in response.source_nodes]}
        lines.append(json.dumps(dump) + "\n")
    (EXAMPLES / "llamaindex.jsonl").write_text("".join(lines), encoding="utf-8")
    (HERE / "library-versions.txt").write_text(
        f"mlflow-skinny=={version('mlflow-skinny')}\nllama-index-core=={version('llama-index-core')}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
