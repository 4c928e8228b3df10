"""Tell the trace format a record is written in from its keys (``--trace-format auto``)."""

from __future__ import annotations

from typing import Final

from ragscore.errors import InputError
from ragscore.loaders.jsonl import BOM, decode_line
from ragscore.loaders.mlflow import is_mlflow
from ragscore.quoting import quote

# A record with a key of the native contract to join on and one to score is native, whatever
# else it holds (a "context" object, a "query" field), unless its "context" is a list of
# LangChain Documents: a "returning sources" chain's output ({"question", "context", "answer"}),
# and it has none of the keys only the native contract writes (answer_json, retrieved_ids, chunks).
_NATIVE_JOIN: Final = ("qid", "q_id", "question", "q")
_NATIVE_CONTENT: Final = ("answer", "answer_json", "retrieved_ids", "chunks", "refused")
_NATIVE_ANSWER: Final = ("answer_json", "retrieved_ids", "chunks")  # only the native contract writes these


def looks_json(first: bytes) -> bool:
    """Tell whether a first line starts a JSON object or array (else: a CSV file, for ragas)."""
    return first.removeprefix(BOM).lstrip(b" \t\r\n")[:1] in (b"{", b"[")


def is_csv_header(first: bytes) -> bool:
    """Tell whether a first line is the header of ragas' CSV export (not JSON, names user_input)."""
    return not looks_json(first) and b"user_input" in first and b"," in first


def detect(record: object) -> str:
    """Name the format a record is written in, from its keys (native when none fits)."""
    if type(record) is not dict:
        return "native"
    if _holds_documents(record.get("context")) and not any(key in record for key in _NATIVE_ANSWER):
        return "langchain"
    if any(key in record for key in _NATIVE_JOIN) and any(key in record for key in _NATIVE_CONTENT):
        return "native"
    if is_mlflow(record):
        return "mlflow"
    if type(record.get("source_nodes")) is list and any(key in record for key in ("query", "query_str", "response")):
        return "llamaindex"
    if "resourceSpans" in record:
        return "openinference" if _otlp_is_openinference(record["resourceSpans"]) else "otel-genai"
    context = record.get("context")
    if "span_kind" in record or "context.trace_id" in record or (
            type(context) is dict and ("span_id" in context or "trace_id" in context)):
        return "otel-genai" if _genai_span(record) else "openinference"
    if "user_input" in record:
        return "ragas"
    if "source_documents" in record or (
        any(k in record for k in ("query", "input")) and any(k in record for k in ("result", "output", "answer"))
        and not any(k in record for k in ("qid", "answer_json", "retrieved_ids"))
    ):
        return "langchain"
    return "native"


def retrieval_field(record: object) -> str | None:
    """Name the field in which a trace that gave no retrieved list likely keeps what it retrieved
    (a list the format read does not read as ids), quoted; None when it holds none of them."""
    if type(record) is not dict:
        return None
    for key in ("context", "source_documents", "source_nodes", "documents"):
        if type(record.get(key)) is list and record[key]:
            return quote(key)
    for texts, ids in (("retrieved_contexts", "retrieved_context_ids"), ("retrieved_chunks", "retrieved_ids")):
        if record.get(texts) and not record.get(ids):
            return f"{quote(texts)} without {quote(ids)}"
    return None


def _holds_documents(value: object) -> bool:
    """Tell whether a value is a list of LangChain Document-like objects (dicts with page_content)."""
    return type(value) is list and any(type(entry) is dict and "page_content" in entry for entry in value)


def _genai_span(span: dict[str, object]) -> bool:
    """Tell whether a span as the OpenTelemetry SDK writes it (``span.to_json()``) is a GenAI span: GenAI
    attributes and no OpenInference span kind."""
    attributes = span.get("attributes")
    return ("span_kind" not in span and type(attributes) is dict and "openinference.span.kind" not in attributes
            and any(type(key) is str and key.startswith("gen_ai.") for key in attributes))


def _otlp_is_openinference(resources: object) -> bool:
    """Tell whether a span of an OTLP/JSON line carries OpenInference's span kind (the root may be
    an HTTP server's span, with the pipeline's spans below it)."""
    for resource in resources if type(resources) is list else ():
        scopes = resource.get("scopeSpans") if type(resource) is dict else None
        for scope in scopes if type(scopes) is list else ():
            for span in (scope.get("spans") if type(scope) is dict else None) or ():
                attributes = span.get("attributes") if type(span) is dict else None
                if type(attributes) is list and any(
                        type(a) is dict and a.get("key") == "openinference.span.kind" for a in attributes):
                    return True
    return False


def detect_text(head: bytes) -> str:
    """Name the format of an input from its first line (bytes): JSON decided by its keys, a CSV
    header with ragas' columns as ragas, anything else native (the real pass reports it)."""
    first = head.removeprefix(BOM).lstrip(b" \t\r\n").split(b"\n", 1)[0]
    if first[:1] == b"{":
        try:
            _, value = decode_line(first, "", 1)
        except InputError:
            return "native"
        return detect(value)
    return "ragas" if is_csv_header(first) else "native"
