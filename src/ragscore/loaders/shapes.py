"""Trace records in the shapes pipelines log, read as the native contract.

A *format* says where each concept of the trace contract (the question, the claim, the ranked
evidence, ...) sits in a record: ``native`` is the contract itself; ``ragas`` and ``langchain``
are per-record mappings; ``openinference`` and ``otel-genai`` are spans, grouped by trace id
into one record per pipeline run. ``[trace.fields]`` / ``--map`` override any concept's path.

Every format ends in the same place: a dict in the native shape, which ``parse_trace`` reads.
The native format without a mapping skips all of this (``trace_shape`` returns None), so the
default run pays nothing for it.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Final, TypedDict, TypeGuard

from ragscore.errors import InputError
from ragscore.loaders.detect import detect, detect_text, is_csv_header, looks_json
from ragscore.loaders.fieldpath import MISSING, FieldPath, lookup, parse_path, unflatten
from ragscore.loaders.input_file import peek
from ragscore.loaders.jsonl import (
    BOM,
    InputFile,
    NeedsOneProcess,
    decode_line,
    decode_text,
    describe,
    first_value,
    iter_jsonl,
)
from ragscore.loaders.mlflow import DOCUMENT_ID as MLFLOW_DOCUMENT_ID
from ragscore.loaders.mlflow import mlflow_record
from ragscore.loaders.records import Records
from ragscore.loaders.scores import csv_records
from ragscore.loaders.shards import Shards
from ragscore.loaders.times import nanoseconds
from ragscore.loaders.trace import DOCUMENT_ID_PATHS, JOIN_EXPECTED, document_id_of, join_hint, join_like
from ragscore.quoting import quote

FORMATS: Final = ("native", "ragas", "openinference", "otel-genai", "langchain", "llamaindex", "mlflow")
CHOICES: Final = ("auto", *FORMATS)
SPAN_FORMATS: Final = frozenset({"openinference", "otel-genai"})

# The concepts a trace mapping may name, and the native key each one becomes.
TRACE_CONCEPTS: Final = {
    "qid": "qid",
    "question": "question",
    "claim": "answer",
    "citations": "citations",
    "retrieved_ids": "retrieved_ids",
    "refused": "refused",
    "retrieved_chunks": "retrieved_chunks",
    "scores": "scores",
    "document_id": "",  # read inside each retrieved entry that is an object
    "latency_ms": "latency_ms",  # operations.py reads these four
    "tokens_in": "input_tokens",
    "tokens_out": "output_tokens",
    "cost": "cost",
    "ts": "ts",  # when a trace ran (ragscore monitor's windows)
}
CONTAINERS: Final = frozenset({"citations", "retrieved_ids", "retrieved_chunks", "scores"})
# The native keys a mapped concept replaces (the built-in lookup is dropped, not mixed in).
_REPLACES: Final = {
    "qid": ("qid", "q_id"),
    "question": ("question", "q"),
    "claim": ("answer",),
    "citations": ("citations",),
    "retrieved_ids": ("retrieved_ids", "chunks"),
    "refused": ("refused",),
    "retrieved_chunks": ("retrieved_chunks",),
    "scores": ("scores",),
    "latency_ms": ("latency_ms", "latency", "duration_ms", "start_time", "end_time"),
    "tokens_in": ("input_tokens", "prompt_tokens"),
    "tokens_out": ("output_tokens", "completion_tokens"),
    "cost": ("cost", "cost_usd"),
    "ts": ("ts", "timestamp"),
}
# ... and, for the token counts, the keys inside "usage" they replace.
_IN_USAGE: Final = {"tokens_in": ("prompt_tokens", "input_tokens"),
                    "tokens_out": ("completion_tokens", "output_tokens")}
_IN_ANSWER_JSON: Final = {"claim": "claim", "citations": "citations", "refused": "refused"}

PRESETS: Final[Mapping[str, Mapping[str, tuple[str, ...]]]] = {
    "ragas": {
        "qid": ("qid",),
        "question": ("user_input",),
        "claim": ("response",),
        "retrieved_ids": ("retrieved_context_ids",),
        "retrieved_chunks": ("retrieved_contexts",),
    },
    "langchain": {
        "qid": ("qid",),
        "question": ("query", "question", "input"),
        "claim": ("result", "answer", "output"),
        "retrieved_ids": ("source_documents", "context"),
        "retrieved_chunks": ("source_documents[*].page_content", "context[*].page_content"),
        "document_id": ("metadata.id", "metadata.doc_id", "id"),
    },
    # llama-index Response dumps: {"query", "response", "source_nodes": [NodeWithScore.to_dict()]}; a node's id is
    # its own (the ids llama-index's RetrieverEvaluator judges), the source document's is node.relationships."1".node_id
    "llamaindex": {
        "qid": ("qid",),
        "question": ("query", "query_str", "question"),
        "claim": ("response", "answer"),
        "retrieved_ids": ("source_nodes",),
        "retrieved_chunks": ("source_nodes[*].node.text",),
        "document_id": ("node.metadata.id", "node.metadata.doc_id", "node.id_", "node.node_id", "id_"),
    },
    # openinference-instrumentation-langchain never writes document.id: the id is in document.metadata (JSON text)
    "openinference": {"qid": ("metadata.qid",), "document_id": ("document.id", *(
        f"document.metadata.{key}" for key in ("id", "doc_id", "document_id", "source", "file_path", "file_name",
                                               "url")))},
    "otel-genai": {"document_id": ("id",)},
    "mlflow": {"document_id": MLFLOW_DOCUMENT_ID},  # the rest is read by loaders.mlflow
}
# Columns of ragas' CSV export that hold lists (pandas writes them as Python list literals).
_RAGAS_LIST_COLUMNS: Final = frozenset(
    {"retrieved_contexts", "retrieved_context_ids", "reference_contexts", "reference_context_ids", "multi_responses"})


def resolve(fmt: str, spec: str | Shards) -> str:
    """Resolve "auto" for a rereadable input from its first record (the run reads it again, whole)."""
    if fmt != "auto":
        return fmt
    file = InputFile(spec, hashed=False)
    try:
        first, lines = peek(file.raw_lines())
        found, lines = detect_lines(first, lines)
    except InputError as exc:
        raise file.located(exc) from None
    if isinstance(lines, Generator):
        lines.close()
    return found


def detect_lines(first: bytes, lines: Iterator[bytes]) -> tuple[str, Iterator[bytes]]:
    """Name the format of a trace input from its first record, and give its lines again: from the
    first line when it holds a whole record (JSON Lines), else from the first value of the stream
    (a pretty-printed record, one array's first element)."""
    if looks_json(first) and not one_value(first):
        value, lines = first_value(lines)
        return detect(value), lines
    return detect_text(first), lines


def splittable(fmt: str, mapping: tuple[tuple[str, str], ...], spec: str | Shards) -> bool:
    """Tell whether workers can split a trace file of this (resolved) format by record."""
    if fmt in SPAN_FORMATS:
        return False
    first = _first_line(spec)
    if fmt == "ragas" and not looks_json(first):
        return False  # a CSV file: a quoted cell may hold line breaks
    return one_value(first)


def one_value(line: bytes) -> bool:
    """Tell whether a line holds one whole JSON value (JSON Lines); a file whose first line does
    not (pretty-printed, concatenated or one array) is read as a stream of values, in one process."""
    try:
        decode_line(line.removeprefix(BOM), "", 1)
    except InputError:
        return False
    return line.removeprefix(BOM).lstrip(b" \t\r\n")[:1] != b"["


def _first_line(spec: str | Shards) -> bytes:
    """Read an input's first line (an error at its own file's line, of several files)."""
    file = InputFile(spec, hashed=False)
    try:
        first, _ = peek(file.raw_lines())
    except InputError as exc:
        raise file.located(exc) from None
    return first


def _open_parsed(records: Records, fmt: str, mapping: tuple[tuple[str, str], ...]
                 ) -> tuple[str, TraceShape | None, Iterator[tuple[int, int, object, object, bytes | None]]]:
    """Open records given to the Python API: already parsed, read once."""
    rows: Iterator[tuple[int, int, str, object, bytes | None]] = ((n, 1, "", obj, None) for n, obj in records)
    if fmt == "auto":
        head = next(rows, None)
        fmt = detect(head[3]) if head is not None else "native"
        rows = chain([head] if head is not None else [], rows)
    shape = trace_shape(fmt, mapping)
    if shape is None:
        return fmt, None, rows
    if shape.spans:
        return fmt, shape, shape._assembled(rows, records.name)
    return fmt, shape, ((n, c, obj, shape.translate(obj, records.name, n), k) for n, c, _, obj, k in rows)


def open_records(
    file: InputFile | Records, fmt: str, mapping: tuple[tuple[str, str], ...], part: int = 0, parts: int = 1
) -> tuple[str, TraceShape | None, Iterator[tuple[int, int, object, object, bytes | None]]]:
    """Open a trace file in its format ("auto": from its first record); return the format, its shape
    (None: the native contract, read as is) and the records."""
    if isinstance(file, Records):
        return _open_parsed(file, fmt, mapping)
    lines = None
    csv_input = False
    if fmt in ("auto", "ragas"):
        first, lines = peek(file.raw_lines())
        if fmt == "auto":
            fmt, lines = detect_lines(first, lines)
        csv_input = fmt == "ragas" and not looks_json(first)
        if csv_input and isinstance(file.spec, Shards):  # each file's header would read as a record
            raise InputError(file.spec.paths[0], "a CSV file cannot be read as one of several trace files: give one "
                                                 "CSV file, or write JSON Lines")
    shape = trace_shape(fmt, mapping, csv_input)
    if shape is None:
        return fmt, None, iter_jsonl(file, part, parts, lines, values=True)
    if parts > 1 and (shape.spans or shape.csv):
        raise NeedsOneProcess  # the spans of a trace, or a CSV record, may be anywhere in the file
    return fmt, shape, shape.records(file, part, parts, lines)


@dataclass
class TraceShape:
    """How the records of one trace format (and mapping) become native-shaped dicts."""

    name: str
    fields: dict[str, tuple[FieldPath, ...]]   # concept -> paths tried in order
    mapped: frozenset[str]                     # concepts the user mapped (over the format's own)
    document_id: tuple[FieldPath, ...]
    csv: bool = False
    sources: dict[str, str] = field(default_factory=dict)  # native key -> how the user wrote the path
    found: dict[str, int] = field(default_factory=dict)    # mapped concept -> records its path was found in
    document_ids: dict[str, int] = field(default_factory=dict)  # document_id path -> retrieved objects it gave an id

    @property
    def spans(self) -> bool:
        return self.name in SPAN_FORMATS

    def translate(self, obj: object, source: str, line: int) -> object:
        """Turn one record into the native shape (records that are not objects pass: the parser rejects them)."""
        if type(obj) is not dict:
            return obj
        if self.name == "mlflow":
            out = mlflow_record(obj)
            for concept in self.mapped:
                out.pop(TRACE_CONCEPTS[concept], None)
        elif self.name == "native":
            out = dict(obj)
            for concept in self.fields:
                for key in _REPLACES.get(concept, ()):
                    out.pop(key, None)
                answer_json = out.get("answer_json")
                if concept in _IN_ANSWER_JSON and type(answer_json) is dict and _IN_ANSWER_JSON[concept] in answer_json:
                    out["answer_json"] = {k: v for k, v in answer_json.items() if k != _IN_ANSWER_JSON[concept]}
                usage = out.get("usage")
                if concept in _IN_USAGE and type(usage) is dict:
                    out["usage"] = {k: v for k, v in usage.items() if k not in _IN_USAGE[concept]}
        else:
            out = {}
        for concept, paths in self.fields.items():
            native = TRACE_CONCEPTS[concept]
            if not native:
                continue
            for path in paths:
                value = lookup(obj, path, concept in CONTAINERS)
                if value is not MISSING and value is not None:
                    out[native] = value
                    if concept in self.mapped:
                        self.found[concept] = self.found.get(concept, 0) + 1
                    break
        if self.name != "native" and out.get("qid") is None and not isinstance(out.get("question"), str):
            raise InputError(source, f"{JOIN_EXPECTED} (the {self.name} format reads the question from "
                                     f"{self.sources.get('question', 'no field')}); {join_hint(obj)}", line)
        return self.checked(out, source, line)

    def records(self, file: InputFile, part: int, parts: int, lines: Iterator[bytes] | None = None
                ) -> Iterator[tuple[int, int, object, object, bytes | None]]:
        """Yield the file's records as ``iter_jsonl`` yields lines, with the record as read in place
        of its text and the native-shaped record as the value."""
        if self.csv:
            rows: Iterator[tuple[int, int, str, object, bytes | None]] = (
                (line, 1, "", row, None) for line, row in ragas_csv(file.name, lines or file.raw_lines()))
        else:
            rows = iter_jsonl(file, part, parts, lines, values=True)
        if self.spans:
            yield from self._assembled(rows, file.name)
            return
        for line, column, _text, obj, key in rows:
            yield line, column, obj, self.translate(obj, file.name, line), key

    def _assembled(self, rows: Iterator[tuple[int, int, str, object, bytes | None]], source: str
                   ) -> Iterator[tuple[int, int, object, object, bytes | None]]:
        """Group spans by trace id (the whole file: a trace's spans may be anywhere) into one record each."""
        traces: dict[str, list[_Span]] = {}
        for line, _column, _text, obj, _key in rows:
            if type(obj) is not dict:
                raise InputError(source, f"expected a JSON object (a span), got {describe(obj)}", line)
            spans = _otlp_spans(obj, source, line) if "resourceSpans" in obj else [_phoenix_span(obj, source, line)]
            for span in spans:
                traces.setdefault(span["trace"], []).append(span)
        for trace_id, spans in traces.items():
            record = _openinference_trace(spans) if self.name == "openinference" else _genai_trace(spans)
            record["trace_id"] = trace_id
            for concept, paths in self.fields.items():
                if concept in self.mapped and TRACE_CONCEPTS[concept]:
                    value = _first_in_spans(spans, paths, concept in CONTAINERS)
                    if value is MISSING:
                        record.pop(TRACE_CONCEPTS[concept], None)
                    else:
                        record[TRACE_CONCEPTS[concept]] = value
                        self.found[concept] = self.found.get(concept, 0) + 1
                elif concept == "qid" and "qid" not in record:
                    value = _first_in_spans(spans, paths, False)
                    if value is not MISSING:
                        record["qid"] = value
            line = spans[0]["line"]
            if record.get("qid") is None and record.get("question") is None:
                raise InputError(source, _no_join(spans, trace_id), line)
            yield line, 1, record, self.checked(record, source, line), None

    def count_ids(self, record: dict[str, object]) -> None:
        """Count, for each document_id path, the retrieved objects it gives an id (the parser reads it, in each
        retrieved entry that is an object), and a record in which a mapped document_id path gives one. Called
        for each trace its part owns (every part reads every record)."""
        entries = record.get("retrieved_ids", record.get("chunks"))
        if type(entries) is not list:
            return
        counts, given = self.document_ids, False
        for entry in entries:
            if type(entry) is dict:
                for path in self.document_id:
                    if document_id_of(entry, (path,)) is not None:
                        counts[path.text] = counts.get(path.text, 0) + 1
                        given = True
                        break
        if given and "document_id" in self.mapped:
            self.found["document_id"] = self.found.get("document_id", 0) + 1

    def checked(self, record: dict[str, object], source: str, line: int) -> dict[str, object]:
        """Reject a record whose mapped qid cannot be a qid, naming where it was read from."""
        qid = record.get("qid")
        if qid is not None and (isinstance(qid, bool) or not isinstance(qid, (str, int)) or qid == ""):
            raise InputError(source, f'expected the qid (from {self.sources.get("qid", "qid")}) to be a non-empty '
                                     f"string or an integer, got {describe(qid)}", line)
        return record

    def relabel(self, where: str | None) -> str | None:
        """Name the field a concept was read from as the user's record has it."""
        if where is None:
            return None
        return self.sources.get(where, where)


def trace_shape(name: str, mapping: tuple[tuple[str, str], ...], csv_input: bool = False) -> TraceShape | None:
    """Build the shape of a resolved format and mapping; None for the native contract as is."""
    if name == "native" and not mapping:
        return None
    preset = PRESETS.get(name, {})
    fields = {concept: tuple(parse_path(p) for p in paths) for concept, paths in preset.items()}
    for concept, text in mapping:
        fields[concept] = (parse_path(text),)
    document_id = fields.pop("document_id", None) or DOCUMENT_ID_PATHS
    sources = {}
    for concept, paths in fields.items():
        native = TRACE_CONCEPTS[concept]
        sources[native] = " or ".join(p.text for p in paths)
    if "claim" in fields:
        sources["answer text"] = f"{sources['answer']} text"
    if name == "mlflow":  # read by loaders.mlflow, not by paths
        sources.setdefault("question", "the root span's inputs")
    return TraceShape(name, fields, frozenset(c for c, _ in mapping), document_id, csv_input, sources)


# Where GenAI spans keep the messages (the semantic conventions' attributes, old and new).
_GENAI_CONTENT: Final = tuple(parse_path(p) for p in (
    '"gen_ai.input.messages"', '"gen_ai.output.messages"', '"gen_ai.prompt"', '"gen_ai.completion"',
    "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.prompt", "gen_ai.completion"))
_SHOWN_ATTRIBUTES: Final = 6


def _no_join(spans: list[_Span], trace_id: str) -> str:
    """Say why the spans of a trace give no question to join on, and how they could: GenAI spans
    recorded without their messages (content capture off), else the nearest attribute to map."""
    head = f"expected a question (or a qid) to join on in the spans of trace {quote(trace_id)}"
    keys = sorted({key for span in spans for key in _flat_keys(span["attributes"])})
    genai = [key for key in keys if key.startswith("gen_ai.")]
    if genai and not any(lookup(span["attributes"], path) not in (MISSING, None)
                         for span in spans for path in _GENAI_CONTENT):
        shown = ", ".join(map(quote, genai[:_SHOWN_ATTRIBUTES])) + (", ..." if len(genai) > _SHOWN_ATTRIBUTES else "")
        return (f"{head}: they hold GenAI attributes ({shown}) but no message content, which GenAI instrumentations "
                "record only with content capture on: set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true "
                "where the pipeline runs, or give each trace an attribute that names its question and read it with "
                "--map qid=PATH")
    for span in spans:
        found = join_like(span["attributes"])
        if found is not None:
            concept, path, key = found
            what = "a question's id" if concept == "qid" else "a question"
            return f"{head}: did you mean --map {concept}={path}? (the span attribute {quote(key)} looks like {what})"
    shown = ", ".join(map(quote, keys[:_SHOWN_ATTRIBUTES])) + (", ..." if len(keys) > _SHOWN_ATTRIBUTES else "")
    return (f"{head}: their attributes are {shown or 'none'}, and none is a question or its id: map one with "
            "--map qid=PATH or --map question=PATH (see \"Your traces\" in the README)")


def _flat_keys(attributes: dict[str, object], prefix: str = "", depth: int = 0) -> Iterator[str]:
    """The attribute keys of a span, nested ones written with dots as exporters write them (a few levels)."""
    for key, value in attributes.items():
        if type(value) is dict and value and depth < 4:
            yield from _flat_keys(value, f"{prefix}{key}.", depth + 1)
        else:
            yield prefix + key


def _first_in_spans(spans: list[_Span], paths: tuple[FieldPath, ...], container: bool) -> object:
    for span in spans:
        for path in paths:
            value = lookup(span["attributes"], path, container)
            if value is not MISSING and value is not None:
                return value
    return MISSING


# --- spans -----------------------------------------------------------------------------------------

class _Span(TypedDict):
    """One span as either exporter's layout is read: what assembling a trace needs of it."""

    trace: str
    kind: str  # the OpenInference span kind, upper case ("" when none)
    root: bool
    id: object
    parent: object
    attributes: dict[str, object]
    line: int
    start: int | None  # nanoseconds since 1970 (None: not given, or unreadable)
    end: int | None


def _phoenix_span(obj: dict[str, object], source: str, line: int) -> _Span:
    """Read one span as Phoenix (or any OpenInference JSON exporter) writes it."""
    context = obj.get("context")
    trace = ((context.get("trace_id") if type(context) is dict else None) or obj.get("context.trace_id")
             or obj.get("trace_id") or obj.get("traceId"))
    if isinstance(trace, int) and not isinstance(trace, bool):
        trace = str(trace)
    if not isinstance(trace, str) or not trace:
        raise InputError(source, 'expected a span with a trace id ("context": {"trace_id": ...}, "context.trace_id", '
                                 '"trace_id" or "traceId")', line)
    span_id = _span_ref((context.get("span_id") if type(context) is dict else None) or obj.get("context.span_id")
                        or obj.get("span_id") or obj.get("spanId"), _PHOENIX_SPAN_ID, source, line)
    attributes = obj.get("attributes")
    if type(attributes) is not dict:  # a spans dataframe written as JSON: "attributes.input.value" columns
        attributes = {key[len("attributes."):]: value for key, value in obj.items()
                      if key.startswith("attributes.") and value is not None}
    attributes = unflatten(attributes)
    kind = obj.get("span_kind")
    if not isinstance(kind, str):
        kind = lookup(attributes, parse_path("openinference.span.kind"))
    parent = _span_ref(obj.get("parent_id", obj.get("parentId", obj.get("parent_span_id"))), _PHOENIX_PARENT, source,
                       line)
    return {"trace": trace, "kind": str(kind).upper() if isinstance(kind, str) else "", "root": not parent,
            "id": span_id, "parent": parent, "attributes": attributes, "line": line,
            "start": nanoseconds(obj.get("start_time")), "end": nanoseconds(obj.get("end_time"))}


_PHOENIX_SPAN_ID: Final = 'the span id ("context": {"span_id": ...}, "context.span_id", "span_id" or "spanId")'
_PHOENIX_PARENT: Final = 'the parent span id ("parent_id", "parentId" or "parent_span_id")'
_MAX_NANOS: Final = 2**64 - 1  # OTLP's times are fixed64


def _span_ref(value: object, what: str, source: str, line: int) -> object:
    """A span's id or its parent's as given (text, or an integer), or None; anything else cannot name a span."""
    if value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise InputError(source, f"expected {what} to be a string, got {describe(value)}", line)


def _otlp_value(value: object) -> object:
    """Convert one OTLP/JSON AnyValue ({"stringValue": ...}, int64 as a string, ...) to plain JSON data."""
    if type(value) is not dict or len(value) != 1:
        return None
    (kind, inner), = value.items()
    if kind == "stringValue" or kind == "bytesValue":
        return inner
    if kind == "intValue":
        try:
            return int(inner)
        except (TypeError, ValueError):
            return None
    if kind == "doubleValue":
        return inner if isinstance(inner, (int, float)) and not isinstance(inner, bool) else None
    if kind == "boolValue":
        return inner if isinstance(inner, bool) else None
    if kind == "arrayValue":
        values = inner.get("values", []) if type(inner) is dict else []
        return [_otlp_value(v) for v in values] if type(values) is list else None
    if kind == "kvlistValue":
        values = inner.get("values", []) if type(inner) is dict else []
        return _otlp_attributes(values) if type(values) is list else None
    return None


def _otlp_attributes(items: object) -> dict[str, object]:
    out: dict[str, object] = {}
    if type(items) is list:
        for item in items:
            if type(item) is dict and isinstance(item.get("key"), str):
                out[item["key"]] = _otlp_value(item.get("value"))
    return out


def _otlp_spans(obj: dict[str, object], source: str, line: int) -> list[_Span]:
    """Read the spans of one OTLP/JSON line (resourceSpans -> scopeSpans -> spans)."""
    spans: list[_Span] = []
    resources = obj.get("resourceSpans")
    if type(resources) is not list:
        raise InputError(source, f'expected "resourceSpans" to be an array, got {describe(resources)}', line)
    for resource in resources:
        scopes = (resource.get("scopeSpans", resource.get("instrumentationLibrarySpans")) if type(resource) is dict
                  else None)
        for scope in scopes if type(scopes) is list else ():
            for span in (scope.get("spans") if type(scope) is dict else None) or ():
                if type(span) is not dict:
                    continue
                trace = span.get("traceId")
                if not isinstance(trace, str) or not trace:
                    raise InputError(source, 'expected every span to have a "traceId"', line)
                attributes = _otlp_attributes(span.get("attributes"))
                kind = attributes.get("openinference.span.kind")
                parent = _span_ref(span.get("parentSpanId"), 'a span\'s "parentSpanId"', source, line)
                span_id = _span_ref(span.get("spanId"), 'a span\'s "spanId"', source, line)
                spans.append({"trace": trace, "kind": kind.upper() if isinstance(kind, str) else "",
                              "root": not parent, "id": span_id, "parent": parent, "attributes": unflatten(attributes)
                              if "openinference.span.kind" in attributes else attributes, "line": line,
                              "start": _nanos(span, "startTimeUnixNano", source, line),
                              "end": _nanos(span, "endTimeUnixNano", source, line)})
    return spans


def _nanos(span: dict[str, object], key: str, source: str, line: int) -> int | None:
    """Read one of OTLP's times, nanoseconds since the epoch (a fixed64, written as a string or a number); None
    when the span has none. Anything else is an error: no time can be read from it."""
    value = span.get(key)
    if value is None:
        return None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value.lstrip("0")) <= 20:
        value = int(value)  # not a longer one: past 2**64 either way, and Python converts at most 4,300 digits
    if type(value) is int and 0 <= value <= _MAX_NANOS:
        return value
    raise InputError(source, f'expected a span\'s "{key}" to be nanoseconds since 1970 (an unsigned 64-bit integer), '
                             f"got {quote(value) if isinstance(value, str) else describe(value)}", line)


def _operations(record: dict[str, object], spans: list[_Span], tokens: dict[str, int | None]) -> None:
    """Give a trace assembled from spans its operational fields: the token counts summed over its
    spans, and its latency, from the first span's start to the last one's end (the root's duration
    when it encloses the rest)."""
    for name, total in tokens.items():
        if total is not None:
            record[name] = total
    starts = [s["start"] for s in spans if s["start"] is not None]
    ends = [s["end"] for s in spans if s["end"] is not None]
    if starts:
        record["ts"] = min(starts) / 1e9  # when the trace began, in epoch seconds (ragscore monitor's windows)
    if starts and ends and max(ends) >= min(starts):
        record["latency_ms"] = (max(ends) - min(starts)) / 1_000_000  # integers, divided once


_JSON_INPUT_KEYS: Final = ("question", "query", "input", "user_input")
_JSON_OUTPUT_KEYS: Final = ("answer", "result", "output", "response")


def _text_value(value: object, keys: tuple[str, ...]) -> object:
    """A span's input.value or output.value: text, or JSON text whose object names the text."""
    if isinstance(value, str) and value.lstrip()[:1] == "{":
        decoded = lookup({"v": value}, parse_path("v"), True)
        if type(decoded) is dict:
            for key in keys:
                if isinstance(decoded.get(key), str):
                    return decoded[key]
    return value


def _attr(span: _Span, path: str, container: bool = False) -> object:
    value = lookup(span["attributes"], parse_path(path), container)
    return None if value is MISSING else value


def _sum_tokens(spans: list[_Span], paths: tuple[str, ...]) -> int | None:
    total, seen = 0, False
    for span in spans:
        for path in paths:
            value = _attr(span, path)
            if isinstance(value, int) and not isinstance(value, bool):
                total, seen = total + value, True
                break
    return total if seen else None


def _documents(documents: object, content: str) -> dict[str, object]:
    """Retrieved documents (objects) as the native retrieved ids (entries the parser reads ids in) and texts."""
    if documents is None:
        return {}
    out: dict[str, object] = {"retrieved_ids": documents}
    if type(documents) is list:
        path = parse_path(content)
        texts = [lookup(d, path) for d in documents]
        if texts and all(isinstance(t, str) for t in texts):
            out["retrieved_chunks"] = texts
    return out


def _retriever(spans: list[_Span]) -> _Span | None:
    """The RETRIEVER span whose documents a trace is scored on: the earliest started of those that hold
    ``retrieval.documents`` (llama-index's inner ``_retrieve`` span holds none and may be exported first),
    else the first RETRIEVER span."""
    retrievers = [s for s in spans if s["kind"] == "RETRIEVER"]
    holding = [s for s in retrievers if _attr(s, "retrieval.documents", True) is not None]
    if holding:  # a span with no start time sorts after those with one, in the order read
        return min(holding, key=lambda s: (s["start"] is None, s["start"] or 0))
    return retrievers[0] if retrievers else None


def _openinference_trace(spans: list[_Span]) -> dict[str, object]:
    """One pipeline run from OpenInference spans: the root's input and output, the documents of the retriever
    that holds some (their ids are read by the format's document_id paths: ``document.id``, else a key of
    ``document.metadata``)."""
    # The pipeline's root: the topmost OpenInference span (an HTTP server's span may sit above it).
    kinds = {s["id"] for s in spans if s["kind"] and s["id"]}
    root = next((s for s in spans if s["kind"] and (s["root"] or s["parent"] not in kinds)), None)
    if root is None:
        root = next((s for s in spans if s["root"]), None)
    retriever = _retriever(spans)
    llms = [s for s in spans if s["kind"] == "LLM"]
    record: dict[str, object] = {}
    question = _attr(root, "input.value") if root else None
    if question is None and retriever is not None:
        question = _attr(retriever, "input.value")
    if question is not None:
        record["question"] = _text_value(question, _JSON_INPUT_KEYS)
    claim = _attr(root, "output.value") if root else None
    if claim is None and llms:
        claim = _attr(llms[-1], "output.value")
    if claim is not None:
        record["answer"] = _text_value(claim, _JSON_OUTPUT_KEYS)
    if retriever is not None:
        record.update(_documents(_attr(retriever, "retrieval.documents", True), "document.content"))
    _operations(record, spans, {"input_tokens": _sum_tokens(llms, ("llm.token_count.prompt",)),
                                "output_tokens": _sum_tokens(llms, ("llm.token_count.completion",))})
    return record


def _all_strings(values: list[Any]) -> TypeGuard[list[str]]:
    return all(isinstance(value, str) for value in values)


def _message_text(messages: object, role: str) -> str | None:
    """The text of the last message of ``role`` in GenAI messages (parts of type text, joined)."""
    if type(messages) is not list:
        return None
    for message in reversed(messages):
        if type(message) is dict and message.get("role") == role:
            parts = message.get("parts")
            if type(parts) is list:
                texts = [p.get("content") for p in parts if type(p) is dict and p.get("type") == "text"]
                if texts and _all_strings(texts):
                    return "\n".join(texts)
            content = message.get("content")
            return content if isinstance(content, str) else None
    return None


def _genai_trace(spans: list[_Span]) -> dict[str, object]:
    """One pipeline run from OpenTelemetry GenAI spans: the retrieval span's query and documents, the
    last inference span's output message."""
    retrieval = next((s for s in spans if "gen_ai.retrieval.documents" in s["attributes"]
                      or _attr(s, '"gen_ai.operation.name"') == "retrieval"), None)
    inference = [s for s in spans if "gen_ai.output.messages" in s["attributes"]
                 or "gen_ai.completion" in s["attributes"]]
    record: dict[str, object] = {}
    question = _attr(retrieval, '"gen_ai.retrieval.query.text"') if retrieval else None
    if question is None and inference:
        question = _message_text(_attr(inference[-1], '"gen_ai.input.messages"', True), "user")
    if question is not None:
        record["question"] = question
    if inference:
        last = inference[-1]
        claim: object = _message_text(_attr(last, '"gen_ai.output.messages"', True), "assistant")
        if claim is None:
            claim = _attr(last, '"gen_ai.completion"')
        if claim is not None:
            record["answer"] = claim
    if retrieval is not None:
        record.update(_documents(_attr(retrieval, '"gen_ai.retrieval.documents"', True), "content"))
    _operations(record, spans, {"input_tokens": _sum_tokens(spans, ('"gen_ai.usage.input_tokens"',)),
                                "output_tokens": _sum_tokens(spans, ('"gen_ai.usage.output_tokens"',))})
    return record


# --- ragas CSV -------------------------------------------------------------------------------------

def _list_cell(text: str) -> object:
    """A list cell of ragas' CSV export: a Python list literal (or JSON); other text stays text."""
    if text.lstrip()[:1] != "[":
        return text
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, list) else text


def ragas_csv(name: str, lines: Iterator[bytes]) -> Iterator[tuple[int, dict[str, object]]]:
    """Yield (line, row) for each row of ragas' CSV export, its list columns decoded (read whole:
    a quoted cell may hold line breaks)."""
    text = decode_text(b"".join(lines).removeprefix(BOM), name, 1)
    records = csv_records(name, text)
    if not records:
        return
    _, header = records[0]
    names = [cell.strip() for cell in header]
    for line, cells in records[1:]:
        if len(cells) > len(names):
            raise InputError(name, f"expected at most {len(names)} cells (one per header column), got {len(cells)}",
                             line)
        # Not strict: a short row leaves its last columns out (and a strict= keyword costs every row).
        yield line, {name: _list_cell(cell) if name in _RAGAS_LIST_COLUMNS else cell
                     for name, cell in zip(names, cells)}  # noqa: B905


# --- gold records ----------------------------------------------------------------------------------

# Gold fields that hold lists: a mapped string becomes a one-element list (a single reference answer).
_GOLD_LISTS: Final = frozenset(
    {"gold_claim_substr", "gold_citations", "gold_answers", "forbidden_substr", "gold_chunks"}
)
_GOLD_CONTAINERS: Final = _GOLD_LISTS | {"gold_relevance", "gold_embeddings"}
_GOLD_ALIASES: Final = {"question": ("question", "q"), "gold_citations": ("gold_citations", "gold_ids")}
# A ragas sample as a gold item: reference -> the reference claim and answer; the reference
# context ids -> the relevant documents of the retrieval metrics (grade 1: ragas samples cite
# nothing, so they are not citations to hit), their texts -> gold chunks; every question is
# answerable (ragas has no unanswerable questions) unless the record says otherwise. The
# sample's other ragas fields are the pipeline's, not the gold set's.
RAGAS_GOLD: Final = (
    ("question", "user_input"), ("gold_claim", "reference"), ("gold_answers", "reference"),
    ("gold_relevance", "reference_context_ids"), ("gold_chunks", "reference_contexts"),
)
_RAGAS_KEYS: Final = frozenset({
    "user_input", "retrieved_contexts", "retrieved_context_ids", "reference_contexts", "reference_context_ids",
    "response", "multi_responses", "reference", "rubrics"})


@dataclass
class GoldShape:
    """How gold records in another shape become the native contract."""

    fields: tuple[tuple[str, FieldPath], ...]
    ragas: bool = False

    def translate(self, obj: object) -> object:
        if type(obj) is not dict:
            return obj
        if self.ragas:
            out = {key: value for key, value in obj.items() if key not in _RAGAS_KEYS}
            out.setdefault("answerable", True)
        else:
            out = dict(obj)
        for concept, _ in self.fields:
            for key in _GOLD_ALIASES.get(concept, (concept,)):
                out.pop(key, None)
        for concept, path in self.fields:
            value = lookup(obj, path, concept in _GOLD_CONTAINERS)
            if value is MISSING or value is None or (self.ragas and value == ""):
                continue
            if concept in _GOLD_LISTS and isinstance(value, str):
                value = [value]
            elif concept == "gold_relevance" and type(value) is list:  # a list of relevant ids: grade 1 each
                value = {str(v): 1 for v in value if isinstance(v, (str, int)) and not isinstance(v, bool)} \
                    if all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value) else value
            out[concept] = value
        return out

    def rename(self, exc: InputError) -> InputError:
        """Name the mapped path in an error about a contract field."""
        message = exc.message
        for concept, path in self.fields:
            message = message.replace(f'"{concept}"', f'"{path.text}" (read as {concept})')
        return InputError(exc.source, message, exc.line, exc.column)


def gold_records(
    file: InputFile, part: int, parts: int, mapping: tuple[tuple[str, str], ...], trace_format: str,
    document: str | None, lines: Iterator[bytes], skipped: list[int] | None = None,
) -> tuple[GoldShape | None, Iterator[tuple[int, int, str, object, bytes | None]]]:
    """Read a gold set's records, in ragas' shape too (when the traces may be ragas: a ragas
    dataset is its own gold set), with ``[gold.fields]`` applied (``skipped``: see ``iter_jsonl``)."""
    from ragscore.loaders.jsonl import iter_json_array

    records: Iterator[tuple[int, int, str, object, bytes | None]]
    ragas = False
    if document is not None:
        elements = iter_json_array(document, file.name)
        head = next(elements, None)
        records = chain([(*head, None)] if head else [], ((*record, None) for record in elements))
        ragas = head is not None and ragas_gold(head[3])
    else:
        first, lines = peek(lines)
        if trace_format in ("auto", "ragas") and is_csv_header(first):
            records = ((line, 1, "", row, None) for line, row in ragas_csv(file.name, lines))
            ragas = True
        else:
            records = iter_jsonl(file, part, parts, lines, skipped)
            if looks_json(first):
                with contextlib.suppress(InputError):
                    ragas = ragas_gold(decode_line(first, file.name, 1)[1])
    return gold_shape(mapping, ragas and trace_format in ("auto", "ragas")), records


def ragas_gold(record: object) -> bool:
    """Tell whether a gold record is a ragas sample (a ragas dataset as its own gold set)."""
    return type(record) is dict and "user_input" in record and "answerable" not in record


def gold_shape(mapping: tuple[tuple[str, str], ...], ragas: bool) -> GoldShape | None:
    """Build how gold records are read: ragas' shape and/or [gold.fields]; None for the contract as is."""
    pairs = (*RAGAS_GOLD, *mapping) if ragas else mapping
    return GoldShape(tuple((concept, parse_path(path)) for concept, path in pairs), ragas) if pairs else None
