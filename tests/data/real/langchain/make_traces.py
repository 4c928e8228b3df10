"""Write traces.jsonl: the output of LangChain's documented "returning sources" chain, as a user dumps it.

The chain is LangChain's own (RunnableParallel, a prompt, a chat model, StrOutputParser) with its
fake chat model (no model download) and a retriever over a few Documents; each output dict
({"qid", "question", "context": [Document, ...], "answer"}) is written with Document.model_dump().
No citations field: LangChain writes none. Run with langchain-core installed (tests do not need it):

    python tests/data/real/langchain/make_traces.py > tests/data/real/langchain/traces.jsonl

Written with langchain-core 1.8.3 (Python 3.11); versions.txt records them.
"""

from __future__ import annotations

import json
import sys
from operator import itemgetter

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableParallel, RunnablePassthrough

DOCUMENTS = [
    Document(id="d1", page_content="Paris is the capital of France.", metadata={"id": "d1", "source": "fr.txt"}),
    Document(id="d2", page_content="Berlin is the capital of Germany.", metadata={"id": "d2", "source": "de.txt"}),
    Document(id="d3", page_content="The Rhine flows through Germany.", metadata={"id": "d3", "source": "rhine.txt"}),
    Document(id="d4", page_content="Madrid is the capital of Spain.", metadata={"id": "d4", "source": "es.txt"}),
]


class WordRetriever(BaseRetriever):
    """The k documents sharing most words with the query (ties: in corpus order)."""

    k: int = 2

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        words = set(query.lower().rstrip("?").split())
        ranked = sorted(DOCUMENTS, key=lambda d: -len(words & set(d.page_content.lower().rstrip(".").split())))
        return ranked[: self.k]


QUESTIONS = [
    ("q1", "What is the capital of France?"),
    ("q2", "What is the capital of Germany?"),
    ("q3", "Which river flows through Germany?"),
    ("q4", "What is the capital of Spain?"),
]
ANSWERS = [
    "The capital of France is Paris.",
    "Berlin is the capital of Germany.",
    "The Danube flows through Germany.",
    "Madrid.",
]


def main() -> None:
    llm = FakeListChatModel(responses=ANSWERS)
    prompt = ChatPromptTemplate.from_template("Answer from the context.\n\n{context}\n\nQuestion: {question}")
    answer = (
        RunnablePassthrough.assign(context=lambda x: "\n\n".join(d.page_content for d in x["context"]))
        | prompt | llm | StrOutputParser()
    )
    chain = RunnableParallel(
        qid=itemgetter("qid"), question=itemgetter("question"), context=itemgetter("question") | WordRetriever()
    ).assign(answer=answer)
    for qid, question in QUESTIONS:
        out = chain.invoke({"qid": qid, "question": question})
        out["context"] = [d.model_dump() for d in out["context"]]
        sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
