"""Write the span files: what the real OpenInference instrumentors export for a tiny retrieval pipeline.

langchain.jsonl: openinference-instrumentation-langchain over a langchain-core chain (a retriever over four
Documents whose ids are only in their metadata, {"id": ...} for two, {"source": ...} for the rest, and the
fake chat model). The instrumentor writes no ``document.id``: each document's metadata is a JSON string.

llamaindex.jsonl: openinference-instrumentation-llama-index over a llama-index-core VectorStoreIndex
(MockEmbedding, MockLLM: no model download) queried with as_query_engine(similarity_top_k=2). Each query's
trace holds an inner ``_retrieve`` RETRIEVER span without documents before the outer ``retrieve`` span with
them. That span writes each node's own id (a random UUID per run, not the Document's id_) as ``document.id``, so
the gold set names the node ids this run wrote (the metadata's "doc_id" says which Document each one is).

Each span is written as ``ReadableSpan.to_json(indent=None)``, one per line, in the order the
InMemorySpanExporter holds them (the order spans ended). Run with the versions in versions.txt installed
(tests do not need them):

    python tests/data/real/openinference/make_spans.py tests/data/real/openinference
"""

from __future__ import annotations

import sys
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

QUESTIONS = ["What is the capital of France?", "Which river flows through Germany?"]


def provider() -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    return tracer_provider, exporter


def write(exporter: InMemorySpanExporter, path: Path) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for span in exporter.get_finished_spans():
            out.write(span.to_json(indent=None) + "\n")


def langchain(path: Path) -> None:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.output_parsers import StrOutputParser
    from langchain_core.prompts import ChatPromptTemplate
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import RunnablePassthrough
    from openinference.instrumentation.langchain import LangChainInstrumentor

    documents = [
        Document(page_content="Paris is the capital of France.", metadata={"id": "d1"}),
        Document(page_content="Berlin is the capital of Germany.", metadata={"id": "d2"}),
        Document(page_content="The Rhine flows through Germany.", metadata={"source": "rhine.txt"}),
        Document(page_content="Madrid is the capital of Spain.", metadata={"source": "es.txt"}),
    ]

    class WordRetriever(BaseRetriever):
        """The two documents sharing most words with the query (ties: in corpus order)."""

        def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun
                                    ) -> list[Document]:
            words = set(query.lower().strip("?").split())
            ranked = sorted(documents, key=lambda d: -len(words & set(d.page_content.lower().strip(".").split())))
            return ranked[:2]

    tracer_provider, exporter = provider()
    LangChainInstrumentor().instrument(tracer_provider=tracer_provider)
    prompt = ChatPromptTemplate.from_template("Answer from the context.\n{context}\nQuestion: {question}")
    model = FakeListChatModel(responses=["Paris.", "The Rhine."])
    chain = ({"context": WordRetriever(), "question": RunnablePassthrough()} | prompt | model | StrOutputParser())
    for question in QUESTIONS:
        chain.invoke(question)
    LangChainInstrumentor().uninstrument()
    write(exporter, path)


def llamaindex(path: Path) -> None:
    from llama_index.core import Document, Settings, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    tracer_provider, exporter = provider()
    LlamaIndexInstrumentor().instrument(tracer_provider=tracer_provider)
    Settings.embed_model = MockEmbedding(embed_dim=8)
    Settings.llm = MockLLM(max_tokens=8)
    documents = [Document(text="Paris is the capital of France.", id_="d1", metadata={"doc_id": "d1"}),
                 Document(text="The Rhine flows through Germany.", id_="d2", metadata={"doc_id": "d2"}),
                 Document(text="Madrid is the capital of Spain.", id_="d3", metadata={"doc_id": "d3"})]
    index = VectorStoreIndex.from_documents(documents)
    exporter.clear()  # the spans of building the index: not a pipeline run
    engine = index.as_query_engine(similarity_top_k=2)
    for question in QUESTIONS:
        engine.query(question)
    LlamaIndexInstrumentor().uninstrument()
    write(exporter, path)


if __name__ == "__main__":
    target = Path(sys.argv[1])
    langchain(target / "langchain.jsonl")
    llamaindex(target / "llamaindex.jsonl")
