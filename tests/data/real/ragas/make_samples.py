"""Write samples.jsonl: ragas samples in their most common shape, retrieved_contexts without
retrieved_context_ids, as ragas itself dumps them (``SingleTurnSample(...).model_dump()``).

The samples are LangChain's "returning sources" answers (tests/data/real/langchain/traces.jsonl,
written by langchain-core): each sample's user_input, response and the page_content of its
context Documents, in order. No qid: ragas samples have none (they join the gold set by question).
Run with ragas installed (tests do not need it):

    python tests/data/real/ragas/make_samples.py > tests/data/real/ragas/samples.jsonl

Written with ragas 0.4.3 (Python 3.11; langchain-community < 0.4, which ragas 0.4.3 imports);
versions.txt records them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ragas import SingleTurnSample

TRACES = Path(__file__).resolve().parent.parent / "langchain" / "traces.jsonl"


def main() -> None:
    for line in TRACES.read_text(encoding="utf-8").splitlines():
        trace = json.loads(line)
        sample = SingleTurnSample(user_input=trace["question"], response=trace["answer"],
                                  retrieved_contexts=[document["page_content"] for document in trace["context"]])
        sys.stdout.write(json.dumps(sample.model_dump(), sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
