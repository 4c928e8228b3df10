"""Write responses.jsonl: llama-index query engine answers dumped as the issue's users dump them,
one per line: ``{"query", "response", "source_nodes": [NodeWithScore.to_dict()], "metadata"}``.

    python tests/data/llamaindex/make_responses.py tests/data/llamaindex/responses.jsonl

The index and the engine are llama-index-core's own (VectorStoreIndex, as_query_engine) with its
fake models (MockEmbedding, MockLLM): no model or network is used. Written with llama-index-core
0.14 (see versions.txt, which this script writes next to the responses).
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

from llama_index.core import Document, Settings, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM

DOCUMENTS = [
    Document(text="Refunds are accepted within 30 days of purchase.", doc_id="d1", metadata={"source": "refunds.md"}),
    Document(text="The company was founded by Ada Lovelace.", doc_id="d2", metadata={"source": "history.md"}),
]
QUESTIONS = ("What is the refund window?", "Who founded the company?")


def main(out: Path) -> None:
    Settings.embed_model = MockEmbedding(embed_dim=8)
    Settings.llm = MockLLM(max_tokens=8)
    engine = VectorStoreIndex.from_documents(DOCUMENTS).as_query_engine(similarity_top_k=2)
    lines = []
    for question in QUESTIONS:
        response = engine.query(question)
        dump = {"query": question, "response": str(response),
                "source_nodes": [node.to_dict() for node in response.source_nodes], "metadata": response.metadata}
        lines.append(json.dumps(dump, sort_keys=False) + "\n")
    out.write_text("".join(lines), encoding="utf-8")
    (out.parent / "versions.txt").write_text(f"llama-index-core=={version('llama-index-core')}\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
