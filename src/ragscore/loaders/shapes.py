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

from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import Final

from ragscore.errors import InputError
from ragscore.loaders.detect import detect, detect_text, looks_json
from ragscore.loaders.fieldpath import MISSING, FieldPath, lookup, parse_path
from ragscore.loaders.gold_shapes import ragas_csv
from ragscore.loaders.input_file import peek
from ragscore.loaders.jsonl import (
    BOM,
    InputFile,
    NeedsOneProcess,
    decode_line,
    describe,
    first_value,
    iter_jsonl,
)
from ragscore.loaders.mlflow import DOCUMENT_ID as MLFLOW_DOCUMENT_ID
from ragscore.loaders.mlflow import mlflow_record
from ragscore.loaders.records import Records
from ragscore.loaders.shards import Shards
from ragscore.loaders.spans import (
    Span,
    first_in_spans,
    genai_trace,
    no_join,
    openinference_trace,
    otlp_spans,
    phoenix_span,
)
from ragscore.loaders.trace import DOCUMENT_ID_PATHS, JOIN_EXPECTED, document_id_of, join_hint

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
    "tool_calls": "tool_calls",  # the calls an agent made (the tools family: loaders/tool_calls.py)
}
CONTAINERS: Final = frozenset({"citations", "retrieved_ids", "retrieved_chunks", "scores", "tool_calls"})
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
    "tool_calls": ("tool_calls",),
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
        traces: dict[str, list[Span]] = {}
        for line, _column, _text, obj, _key in rows:
            if type(obj) is not dict:
                raise InputError(source, f"expected a JSON object (a span), got {describe(obj)}", line)
            spans = otlp_spans(obj, source, line) if "resourceSpans" in obj else [phoenix_span(obj, source, line)]
            for span in spans:
                traces.setdefault(span["trace"], []).append(span)
        for trace_id, spans in traces.items():
            record = openinference_trace(spans) if self.name == "openinference" else genai_trace(spans)
            record["trace_id"] = trace_id
            for concept, paths in self.fields.items():
                if concept in self.mapped and TRACE_CONCEPTS[concept]:
                    value = first_in_spans(spans, paths, concept in CONTAINERS)
                    if value is MISSING:
                        record.pop(TRACE_CONCEPTS[concept], None)
                    else:
                        record[TRACE_CONCEPTS[concept]] = value
                        self.found[concept] = self.found.get(concept, 0) + 1
                elif concept == "qid" and "qid" not in record:
                    value = first_in_spans(spans, paths, False)
                    if value is not MISSING:
                        record["qid"] = value
            line = spans[0]["line"]
            if record.get("qid") is None and record.get("question") is None:
                raise InputError(source, no_join(spans, trace_id), line)
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


# --- spans -----------------------------------------------------------------------------------------


# --- ragas CSV -------------------------------------------------------------------------------------


# --- gold records ----------------------------------------------------------------------------------


