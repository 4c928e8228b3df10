"""The starter gates.toml that ``ragscore init`` writes."""

from __future__ import annotations

from typing import Final

STARTER_GATES: Final = """\
# ragscore settings and gates. ragscore reads ./gates.toml from the folder it runs in.
# Precedence: built-in defaults < [tool.ragscore] in pyproject.toml < this file < --gates.

[scoring]
refusal_tokens = ["not in context"]  # claims that count as refusals (after NFC and case folding)
# A token matches a claim without the white space and quotes around either and a final ".", "!"
# or ellipsis: the token "not in context" matches the claim '"Not in context."'.
# Regular expressions: a claim one matches (searched anywhere in it, in any case, after NFC and
# case folding) is a refusal too. The list below is the default: uncomment it to change it
# ('literal strings' keep \\b as is), or write refusal_patterns = [] to turn the patterns off.
# refusal_patterns = [
#     '\\bi (do not|don.?t|cannot|can.?t) (know|say|tell)\\b',
#     '\\bnot (mentioned|found|provided|stated|given|specified|available) in the (provided |given )?(context|documents?|sources?|passages?|text)\\b',
#     '\\b(cannot|can.?t|unable to|could not|couldn.?t) (answer|find|determine)\\b',
#     '\\bno (relevant )?information\\b',
#     '\\bthe (context|documents?|sources?|passages?) (does|do) not (contain|mention|say|provide)\\b',
#     '\\b(not enough|insufficient) (information|context)\\b',
#     '\\bi (do not|don.?t) have (enough |any |the )?(information|context|data)\\b',
# ]
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
"""  # noqa: E501 - the file it writes, where a pattern is one line
