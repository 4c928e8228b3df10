"""The starter gates.toml that ``ragscore init`` writes."""

from __future__ import annotations

import json
from typing import Final

from ragscore.settings import DEFAULT_REFUSAL_PATTERNS

_STARTER: Final = """\
# ragscore settings and gates. ragscore reads ./gates.toml from the folder it runs in.
# Precedence: built-in defaults < [tool.ragscore] in pyproject.toml < this file < --gates.

[scoring]
refusal_tokens = ["not in context"]  # claims that count as refusals (after NFC and case folding)
# A token matches a claim without the white space and quotes around either and a final ".", "!"
# or ellipsis: the token "not in context" matches the claim '"Not in context."'.
# Regular expressions: a claim one matches (searched in it, in any case, after NFC and case
# folding) is a refusal too. The list below is the default, each anchored at the claim's start: an
# answer that hedges part of itself stays an answer. Uncomment it to change it; an empty list
# (refusal_patterns = []) turns the patterns off.
# refusal_patterns = [
{patterns}# ]
k = 5                                # the k of recall@k
# cutoffs = [1, 3, 5, 10]            # cutoffs of the retrieval metrics
# metrics = ["retrieval", "text"]    # optional metric families (or "all")
require_claim = true                 # precision also needs the claim to contain a gold substring
scope_citations = true               # a citation only hits when it is among the retrieved ids
strict = false                       # true: a gate on an undefined metric fails instead of skipping

[gates]
# A bare number is a minimum for higher-is-better metrics, a maximum for lower-is-better ones.
precision = 0.80
chr = 0.75
under_refusal = 0.05                 # answers to unanswerable questions
over_refusal = 0.10                  # refusals of answerable questions
missing = 0                          # gold questions without a trace
# compliance = { min = 0.90, warn = 0.95 }   # between the two: a warning
# "ndcg@10" = 0.60                   # naming a retrieval metric turns the family on
"""
# Each default pattern on a line of its own, as a TOML basic string (json.dumps writes a valid one).
STARTER_GATES: Final = _STARTER.replace("{patterns}", "".join(
    f"#     {json.dumps(pattern)},\n" for pattern in DEFAULT_REFUSAL_PATTERNS))
