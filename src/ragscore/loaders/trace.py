"""Read one pipeline trace line into the fields scoring needs, accepting both trace shapes.

This runs once per trace line (up to millions), so it reads fields with plain dict look-ups and
builds its result with ``tuple.__new__``; the rare shapes take slower branches.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Final, NamedTuple

from ragscore.errors import InputError
from ragscore.loaders.chunks import entry_span, span_id
from ragscore.loaders.detect import detect
from ragscore.loaders.fieldpath import FieldPath, lookup, parse_path
from ragscore.loaders.jsonl import describe, is_string_list
from ragscore.loaders.near_miss import near_miss
from ragscore.loaders.provider_responses import cited_ids, provider_response
from ragscore.quoting import quote

# "citations: [a, b]" at the end of (or anywhere in) an answer text.
_CITATIONS_RE: Final = re.compile(r"citations\s*:\s*\[([^\]]*)\]", re.IGNORECASE)
_ID_SPLIT_RE: Final = re.compile(r"[,\s]+")
_QUOTES: Final = "'\"`"
# Where a retrieved entry that is an object keeps its id, in order ([trace.fields] document_id).
DOCUMENT_ID_PATHS: Final = tuple(parse_path(p) for p in ("id", "doc_id", "document.id"))
# Where the trace contract itself reads a retrieved object's id: ids a trace format read anywhere else are named.
OWN_ID_PATHS: Final = frozenset(path.text for path in DOCUMENT_ID_PATHS)


class Cites(StrEnum):
    """The state of a trace's citations."""

    LIST = "list"        # a list of ids: the trace is compliant
    ABSENT = "absent"    # no field (or null) and nothing parsed: no citation made, non-compliant
    INVALID = "invalid"  # present but not a list of ids: never hits, non-compliant


class TraceView(NamedTuple):
    """What one trace line says, in the one shape scoring reads."""

    line: int
    qid: str | None
    question: str | None
    retrieved: list[str] | tuple[str, ...]
    claim: str
    claim_from: str | None         # which field held the claim; None when there was none
    refused: bool | None           # the explicit refusal field, when there is one
    refused_from: str | None
    citations: list[str] | tuple[str, ...]
    cites: Cites
    citations_from: str | None
    retrieved_bad: bool = False    # a retrieved list that could not be read (an entry with no id): read as empty
    refused_bad: bool = False      # a "refused" field that is neither true, false nor null: read as absent


_new_view = tuple.__new__
_LIST, _ABSENT, _INVALID = Cites.LIST, Cites.ABSENT, Cites.INVALID


def _ids(value: object) -> list[str] | tuple[str, ...] | None:
    """Return a list of ids as strings (the list itself when it holds only strings), else None."""
    if is_string_list(value):
        return value
    if type(value) is not list:
        return None
    out = []
    for v in value:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, int) and not isinstance(v, bool):
            out.append(str(v))
        else:
            return None
    return tuple(out)


def _retrieved(obj: dict[str, object], document_id: tuple[FieldPath, ...]) -> tuple[list[str] | tuple[str, ...], bool]:
    """Read the ranked evidence ids, and whether the list was unreadable.

    Entries may be ids or objects that hold one (at the first of ``document_id``'s paths), or that hold a span of
    a document and no id (``loaders.chunks.entry_span``: known by the span, ``DOC:START-END``). A list
    with an entry that gives no id reads as nothing retrieved, in both shapes, rather than
    shifting the ranks of the entries after it; it is flagged, so that it is counted and noted.
    """
    if "retrieved_ids" in obj:
        value = obj["retrieved_ids"]
        if is_string_list(value):
            return value, False
    else:
        chunks = obj.get("chunks")
        if type(chunks) is not list:
            return (), chunks is not None
        value = [chunk.get("id", chunk) if isinstance(chunk, dict) and "id" in chunk else chunk for chunk in chunks]
    if value is None:
        return (), False
    ids = _ids(value)
    if ids is not None:
        return ids, False
    if type(value) is not list:
        return (), True
    out = []
    for entry in value:
        if type(entry) is dict:
            found = document_id_of(entry, document_id)
            if found is None and (span := entry_span(entry)) is not None:
                found = span_id(span)  # a chunk without an id (LangChain's splitters write none): known by its span
            entry = found
        if isinstance(entry, str) or (isinstance(entry, int) and not isinstance(entry, bool)):
            out.append(str(entry))
        else:
            return (), True
    return tuple(out), False


def document_id_of(entry: dict[str, object], paths: tuple[FieldPath, ...]) -> object:
    """The id a retrieved entry that is an object gives (at the first of ``paths`` that holds one), else None."""
    for path in paths:
        value = lookup(entry, path)
        if isinstance(value, str) and value or isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def parse_text_citations(answer: str) -> tuple[tuple[str, ...] | None, str]:
    """Find ``citations: [a, b]`` in an answer text; return the ids and the text without it."""
    match = _CITATIONS_RE.search(answer)
    if match is None:
        return None, answer
    ids = tuple(p.strip(_QUOTES) for p in _ID_SPLIT_RE.split(match.group(1)))
    claim = (answer[: match.start()] + answer[match.end() :]).strip()
    return tuple(i for i in ids if i), claim


JOIN_EXPECTED: Final = 'expected a "qid" (or "q_id") or a question text ("q" or "question") to join on'


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
    looks_like = detect(obj)
    hint = (f"; the keys look like {looks_like}'s: --trace-format {looks_like} reads them"
            if looks_like != "native" else "; " + join_hint(obj))
    raise InputError(source, JOIN_EXPECTED + hint, line)


# Keys that usually hold a question's id or its text, for the hint of a trace that joins no question
# (a llama-index Response dump's "query", the "question" inside MLflow's "request_preview", a chain's
# "inputs"); the join fields themselves count below the top level.
QID_LIKE: Final = ("question_id", "query_id", "questionid", "queryid", "qa_id", "example_id", "sample_id", "item_id")
QUESTION_LIKE: Final = (
    "question", "q", "query", "query_str", "user_input", "input", "inputs", "prompt", "user_query", "query_text",
    "question_text", "input_text", "request", "request_preview", "user_message", "message", "text",
)
_JOIN_FIELDS: Final = frozenset({"qid", "q_id", "q", "question"})
_SHOWN_KEYS: Final = 8
_SEARCHED_KEYS: Final = 200


def shown_keys(record: Mapping[str, object]) -> str:
    """Name a record's top-level keys for a message: quoted, at most ``_SHOWN_KEYS`` of them."""
    keys = list(record)
    if not keys:
        return "it has no keys"
    more = f", ... ({len(keys):,} keys)" if len(keys) > _SHOWN_KEYS else ""
    return "its keys are " + ", ".join(quote(key) for key in keys[:_SHOWN_KEYS]) + more


def join_hint(record: Mapping[str, object]) -> str:
    """Say what a trace that joins no question holds and how it could join: its keys, and the
    ``--map qid=PATH`` or ``--map question=PATH`` that reads the key nearest to one (a join field
    written wrong, a key named like a question's id or text, at the top or one level down)."""
    found = join_like(record)
    if found is None:
        return (f"{shown_keys(record)}, and none is a question or its id: map one with --map qid=PATH or "
                '--map question=PATH (see "Your traces" in the README)')
    concept, path, key = found
    what = "a question's id" if concept == "qid" else "a question"
    return f"{shown_keys(record)}: did you mean --map {concept}={path}? ({quote(key)} looks like {what})"


def join_like(record: Mapping[str, object]) -> tuple[str, str, str] | None:
    """The concept, path and key of the key nearest to a join field, else None (see ``join_hint``)."""
    for key, value in record.items():  # a join field written wrong: "Question", "qid "
        field = near_miss(key, _JOIN_FIELDS)
        if field is not None and _joinable(value, field in ("qid", "q_id")):
            return ("qid" if field in ("qid", "q_id") else "question"), path_key(key), key
    # The record, and the objects one and two levels down (JSON text of an object too: MLflow's
    # "request_preview", a chain's "inputs"), breadth first; a few hundred keys a level at most.
    levels: list[tuple[str, Mapping[str, object]]] = [("", record)]
    start = 0
    for _ in range(2):
        end = len(levels)
        for prefix, level in levels[start:end]:
            for key, value in list(level.items())[:_SEARCHED_KEYS]:
                if type(value) is str and value.lstrip()[:1] == "{":
                    value = lookup({"v": value}, parse_path("v"), True)
                if type(value) is dict:
                    levels.append((prefix + path_key(key) + ".", value))
        start = end
    for names, concept in ((QID_LIKE, "qid"), (QUESTION_LIKE, "question")):
        for prefix, level in levels:
            for key, value in level.items():
                if key.lower() in names and _joinable(value, concept == "qid"):
                    return concept, prefix + path_key(key), key
    return None


def _joinable(value: object, qid: bool) -> bool:
    """Tell whether a value could be joined on: text (a question, or an id), or an integer id."""
    if isinstance(value, str):  # not the JSON text of an object: what it holds is looked into
        return bool(value.strip()) and value.lstrip()[:1] != "{"
    return qid and isinstance(value, int) and not isinstance(value, bool)


def path_key(key: str) -> str:
    """Write a key as a path step: bare when it can be, else quoted."""
    if key and key.isprintable() and not any(c in key for c in '.[]" '):
        return key
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _provider_citations(obj: dict[str, object], retrieved: list[str] | tuple[str, ...]
                        ) -> tuple[tuple[str, ...], str] | None:
    """The ids a provider response the trace keeps cites (loaders/provider_responses.py), and where they were
    read; None when it keeps none with a citation."""
    response = provider_response(obj)
    if response is None or not response.citations:
        return None
    return tuple(cited_ids(response, retrieved)), f"{response.key}'s {response.provider} citations"


def parse_trace(
    obj: object, source: str, line: int, document_id: tuple[FieldPath, ...] = DOCUMENT_ID_PATHS
) -> TraceView:
    """Read a decoded trace; only an unjoinable line is an error, shape faults are scored."""
    if type(obj) is not dict:
        raise InputError(source, f"expected a JSON object, got {describe(obj)}", line, 1)
    qid = obj.get("qid")
    if type(qid) is str and qid:
        question = None
    else:
        qid, question = _join_key(obj, source, line)

    answer_json = obj.get("answer_json")
    top = refused = obj.get("refused")
    refused_bad = False
    if refused is True or refused is False:
        refused_from: str | None = "refused"
    elif type(answer_json) is dict and ((refused := answer_json.get("refused")) is True or refused is False):
        refused_from = "answer_json.refused"
        refused_bad = top is not None
    else:
        refused_bad = top is not None or refused is not None  # "yes", 1, "true": not a boolean
        refused = refused_from = None

    # Field by field: each concept from its preferred field, else from the other shape's.
    # A null field counts as absent; anything else that is not a list of ids is invalid.
    citations: list[str] | tuple[str, ...] | None = None
    claim = claim_from = raw_citations = citations_from = None
    if type(answer_json) is dict:
        claim, claim_from = answer_json.get("claim"), "answer_json.claim"
        raw_citations, citations_from = answer_json.get("citations"), "answer_json.citations"
    if claim is None:
        claim, claim_from = obj.get("answer"), "answer"
    if raw_citations is None:
        raw_citations, citations_from = obj.get("citations"), "citations"
        if raw_citations is None and claim_from == "answer" and type(claim) is str:
            citations, claim = parse_text_citations(claim)
            citations_from = "answer text"
    retrieved, retrieved_bad = _retrieved(obj, document_id)
    if raw_citations is not None:
        citations = _ids(raw_citations)
        cites = _INVALID if citations is None else _LIST
    elif citations is None:
        cites, citations_from = _ABSENT, None
        if "response" in obj or "raw_response" in obj:  # no citations field: a provider's own citations, if any
            provided = _provider_citations(obj, retrieved)
            if provided is not None:
                citations, citations_from = provided
                cites = _LIST
    else:
        cites = _LIST
    if type(claim) is not str:
        claim, claim_from = "", None
    return _new_view(TraceView, (
        line, qid, question, retrieved, claim, claim_from, refused, refused_from,
        citations or (), cites, citations_from, retrieved_bad, refused_bad,
    ))
