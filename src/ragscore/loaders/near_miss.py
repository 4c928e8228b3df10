"""Keys that are almost certainly a contract field written wrong: ``gold_citation``, ``"answerable "``.

A gold item with ``gold_citation`` (singular) is read as having no citations, and a trace with
``retrieved_id`` as having retrieved nothing: both score badly without a word. A key is a *near
miss* of a contract field when it is not a field itself and

- differs from one only in case, surrounding white space, or ``-`` or a space for ``_``
  (``"Gold-Citations"``, ``"answerable "``, ``"QID"``); or, for keys of at least 4 characters
  (after that normalisation),
- is one edit away from one: a character inserted, deleted or replaced, or two adjacent
  characters swapped (Damerau-Levenshtein distance 1: ``gold_citaitons``), which covers the
  singular and the plural (``gold_citation``, ``retrieved_id``, ``gold_answer``).

Shorter keys need the exact case and white space match: ``q`` and ``qid`` are both fields, and
``id`` or ``qd`` are too short to tell a typo from a field of one's own. A key one edit away from
two fields is no near miss (it is not *almost certainly* either). Pure functions, no I/O.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Final

from ragscore.loaders.fields import CONTRACT_FIELDS
from ragscore.quoting import quote

GOLD_FIELDS: Final[frozenset[str]] = frozenset(CONTRACT_FIELDS)
TRACE_FIELDS: Final[frozenset[str]] = frozenset(
    {
        "qid",
        "q_id",
        "q",
        "question",
        "answer",
        "answer_json",
        "citations",
        "refused",
        "retrieved_ids",
        "chunks",
        "retrieved_chunks",
        "retrieved_embeddings",
        "scores",
        "tool_calls",
    }
)

MIN_EDIT_LENGTH: Final = 4  # shorter keys are near misses only by case, white space or "-"
_SEPARATORS_RE: Final = re.compile(r"[\s-]")


def _normal(key: str) -> str:
    """Fold case, drop surrounding white space, and write ``-`` and inner white space as ``_``."""
    return _SEPARATORS_RE.sub("_", key.strip().casefold())


def one_edit(a: str, b: str) -> bool:
    """Tell whether ``a`` and ``b`` are exactly one edit apart (Damerau-Levenshtein distance 1).

    An edit inserts, deletes or replaces one character, or swaps two adjacent ones. Linear time.
    """
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    start = 0
    while start < len(a) and a[start] == b[start]:
        start += 1
    if len(a) < len(b):  # one character inserted into a
        return a[start:] == b[start + 1 :]
    if a[start + 1 :] == b[start + 1 :]:  # one replaced
        return True
    # two adjacent ones swapped
    return (start + 1 < len(a) and a[start] == b[start + 1] and a[start + 1] == b[start]
            and a[start + 2 :] == b[start + 2 :])


def near_miss(key: str, known: Collection[str]) -> str | None:
    """Return the field of ``known`` that ``key`` is almost certainly meant to be, else None.

    See the module's description; a key that is itself in ``known`` is never a near miss.
    """
    if key in known:
        return None
    normal = _normal(key)
    same = sorted(field for field in known if _normal(field) == normal)
    if same:
        return same[0] if len(same) == 1 else None
    if len(normal) < MIN_EDIT_LENGTH:
        return None
    close = [field for field in known if one_edit(normal, _normal(field))]
    return close[0] if len(close) == 1 else None


# Names other tools give a field, more than one edit away from it: a gold item's "tool_calls" (the trace's key),
# "expected_tool_calls" (as some agent evaluators name them).
_NAMED_OTHERWISE: Final = {"tool_calls": "gold_tool_calls", "expected_tool_calls": "gold_tool_calls",
                           "reference_tool_calls": "gold_tool_calls"}

# A field given under another name. A key one edit or a plural away from a field is not a typo
# when the record has the field already (a trace's "score" beside its "scores" is a field of its
# own); one that differs only in case, white space or "-" always is.
_SAME_FIELD: Final = {
    "question": ("question", "q"), "q": ("question", "q"), "gold_citations": ("gold_citations", "gold_ids"),
    "gold_ids": ("gold_citations", "gold_ids"), "qid": ("qid", "q_id"), "q_id": ("qid", "q_id"),
    "answer": ("answer", "answer_json"), "retrieved_ids": ("retrieved_ids", "chunks"),
    "chunks": ("retrieved_ids", "chunks"),
}


@functools.lru_cache(maxsize=4096)
def _verdict(key: str, known: frozenset[str]) -> str | None:
    return near_miss(key, known)


def missed_field(key: str, record: Mapping[str, object], known: frozenset[str]) -> str | None:
    """The contract field ``key`` of ``record`` is a typo of, when the record lacks that field; else None."""
    if key in known:
        return None
    named = _NAMED_OTHERWISE.get(key)
    suggestion = named if named in known else _verdict(key, known)
    if suggestion is None:
        return None
    same_field = _SAME_FIELD.get(suggestion, (suggestion,))
    if _normal(key) != _normal(suggestion) and any(name in record for name in same_field):
        return None  # "score" beside "scores": a field of its own ("Scores" beside it is still a typo)
    return suggestion


def near_misses(
    record: Mapping[str, object], line: int, found: dict[str, tuple[str, int]], known: frozenset[str]
) -> None:
    """Add the keys of ``record`` that are typos of a field it lacks to ``found`` (key -> (field, first line))."""
    for key in record:
        if key not in known and key not in found:
            suggestion = missed_field(key, record, known)
            if suggestion is not None:
                found[key] = (suggestion, line)


def contract_name(what: str) -> str:
    """Name a contract for a message: ``gold`` → ``the gold contract``."""
    return f"the {what} contract"


def key_note(key: str, suggestion: str, where: str) -> str:
    """Say that ``key`` is not a field of the ``where`` contract (``"gold"``, ``"trace"``) and what it may be.

    ``"gold_citation" is not a field of the gold contract: did you mean "gold_citations"?``
    """
    return f"{quote(key)} is not a field of {contract_name(where)}: did you mean {quote(suggestion)}?"


def unknown_key_notes(keys: Iterable[str], known: Collection[str], what: str) -> list[str]:
    """Return one note per near-miss key among ``keys`` (see ``key_note``), sorted by key, each key once.

    ``what`` names the contract (``"gold"`` or ``"trace"``); ``known`` is its fields
    (``GOLD_FIELDS``, ``TRACE_FIELDS``).
    """
    notes = []
    for key in sorted(set(keys)):
        suggestion = near_miss(key, known)
        if suggestion is not None:
            notes.append(key_note(key, suggestion, what))
    return notes
