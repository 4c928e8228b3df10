"""The field names of the gold contract (the gold loader reads them, the near-miss check and the settings name
them)."""

from __future__ import annotations

from typing import Final

# Fields the contract defines; anything else is kept in ``GoldItem.extra`` for slicing.
CONTRACT_FIELDS: Final = frozenset(
    {
        "qid",
        "question",
        "q",
        "answerable",
        "gold_claim_substr",
        "gold_claim",
        "gold_citations",
        "gold_ids",
        "gold_relevance",
        "gold_answers",
        "forbidden_substr",
        "gold_chunks",
        "gold_embeddings",
        "gold_spans",
        "gold_tool_calls",
        "tool_match",
        "gold_arguments_match",
    }
)
