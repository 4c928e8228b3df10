"""Traces in which nothing is retrieved anywhere (issue 32): LangChain's documented "returning
sources" chain writes ``{"question", "context": [Document...], "answer"}``; ``--trace-format auto``
reads it as the langchain preset (its ``context`` holds Document-like objects), not as the native
contract with the retrieved documents ignored.

The LangChain traces are what langchain-core 1.8.3 wrote (tests/data/real/langchain/make_traces.py):
four answers, each retrieving its gold document first, so full recall is 4/4 by hand.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import DATA
from ragscore.loaders.detect import detect

LANGCHAIN = DATA / "real" / "langchain"


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
