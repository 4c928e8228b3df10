"""Read one pipeline trace line into the fields scoring needs, accepting both trace shapes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from ragscore.errors import InputError
from ragscore.loaders.jsonl import describe

# "citations: [a, b]" at the end of (or anywhere in) an answer text.
_CITATIONS_RE: Final = re.compile(r"citations\s*:\s*\[([^\]]*)\]", re.IGNORECASE)
_ID_SPLIT_RE: Final = re.compile(r"[,\s]+")
_QUOTES: Final = "'\"`"


class Cites(StrEnum):
    """The state of a trace's citations."""

    LIST = "list"        # a list of ids: the trace is compliant
    ABSENT = "absent"    # no field and nothing parsed: no citation made, non-compliant
    INVALID = "invalid"  # present but not a list of ids: never hits, non-compliant


@dataclass(frozen=True, slots=True)
class TraceView:
    """What one trace line says, in the one shape scoring reads."""

    line: int
    qid: str | None
    question: str | None
    retrieved: tuple[str, ...]
    claim: str
    claim_from: str | None         # which field held the claim; None when there was none
    refused: bool | None           # the explicit refusal field, when there is one
    refused_from: str | None
    citations: tuple[str, ...]
    cites: Cites
    citations_from: str | None


def _as_id(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _ids(value: object) -> tuple[str, ...] | None:
    """Return a list of ids as strings, or None when ``value`` is not a list of ids."""
    if not isinstance(value, list):
        return None
    out = tuple(map(_as_id, value))
    return None if None in out else out  # type: ignore[return-value]


def _retrieved(obj: dict[str, object]) -> tuple[str, ...]:
    """Read the ranked evidence ids; a malformed list reads as nothing retrieved."""
    if "retrieved_ids" in obj:
        return _ids(obj["retrieved_ids"]) or ()
    chunks = obj.get("chunks")
    if not isinstance(chunks, list):
        return ()
    out = []
    for chunk in chunks:
        ident = _as_id(chunk.get("id")) if isinstance(chunk, dict) else _as_id(chunk)
        if ident is not None:
            out.append(ident)
    return tuple(out)


def parse_text_citations(answer: str) -> tuple[tuple[str, ...] | None, str]:
    """Find ``citations: [a, b]`` in an answer text; return the ids and the text without it."""
    match = _CITATIONS_RE.search(answer)
    if match is None:
        return None, answer
    ids = tuple(p.strip(_QUOTES) for p in _ID_SPLIT_RE.split(match.group(1)))
    claim = (answer[: match.start()] + answer[match.end() :]).strip()
    return tuple(i for i in ids if i), claim


def _join_key(obj: dict[str, object], source: str, line: int) -> tuple[str | None, str | None]:
    """Return (qid, question) to join on; reject a line that offers neither."""
    for key in ("qid", "q_id"):
        value = obj.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
            raise InputError(
                source, f'expected "{key}" to be a non-empty string or an integer, got {describe(value)}', line
            )
        return str(value), None
    for key in ("q", "question"):
        value = obj.get(key)
        if isinstance(value, str):
            return None, value
    raise InputError(source, 'expected a "qid" (or "q_id") or a question text ("q" or "question") to join on', line)


def parse_trace(obj: object, source: str, line: int) -> TraceView:
    """Read a decoded trace; only an unjoinable line is an error, shape faults are scored."""
    if not isinstance(obj, dict):
        raise InputError(source, f"expected a JSON object, got {describe(obj)}", line, 1)
    qid, question = _join_key(obj, source, line)
    answer_json = obj.get("answer_json")

    refused: bool | None = None
    refused_from = None
    if isinstance(obj.get("refused"), bool):
        refused, refused_from = obj["refused"], "refused"  # type: ignore[assignment]
    elif isinstance(answer_json, dict) and isinstance(answer_json.get("refused"), bool):
        refused, refused_from = answer_json["refused"], "answer_json.refused"

    # A null field counts as absent; anything else that is not a list of ids is invalid.
    claim_value: object
    citations: tuple[str, ...] | None = None
    if isinstance(answer_json, dict):
        claim_value, claim_from = answer_json.get("claim"), "answer_json.claim"
        raw_citations, citations_from = answer_json.get("citations"), "answer_json.citations"
    else:
        claim_value, claim_from = obj.get("answer"), "answer"
        raw_citations, citations_from = obj.get("citations"), "citations"
        if raw_citations is None and isinstance(claim_value, str):
            citations, claim_value = parse_text_citations(claim_value)
            citations_from = "answer text"
    if raw_citations is not None:
        citations = _ids(raw_citations)
        cites = Cites.INVALID if citations is None else Cites.LIST
    else:
        cites = Cites.ABSENT if citations is None else Cites.LIST
    if cites is Cites.ABSENT:
        citations_from = None

    claim = claim_value if isinstance(claim_value, str) else ""
    return TraceView(
        line=line,
        qid=qid,
        question=question,
        retrieved=_retrieved(obj),
        claim=claim,
        claim_from=claim_from if isinstance(claim_value, str) else None,
        refused=refused,
        refused_from=refused_from,
        citations=citations or (),
        cites=cites,
        citations_from=citations_from,
    )
