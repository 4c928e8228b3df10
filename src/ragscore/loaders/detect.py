"""Tell the trace format a record is written in from its keys (``--trace-format auto``)."""

from __future__ import annotations

from ragscore.errors import InputError
from ragscore.loaders.jsonl import BOM, decode_line


def detect(record: object) -> str:
    """Name the format a record is written in, from its keys (native when none fits)."""
    if type(record) is not dict:
        return "native"
    if "resourceSpans" in record:
        return "openinference" if _otlp_is_openinference(record["resourceSpans"]) else "otel-genai"
    context = record.get("context")
    if "span_kind" in record or "context.trace_id" in record or (
            type(context) is dict and ("span_id" in context or "trace_id" in context)):
        return "openinference"
    if "user_input" in record:
        return "ragas"
    if "source_documents" in record or (
        any(k in record for k in ("query", "input")) and any(k in record for k in ("result", "output", "answer"))
        and not any(k in record for k in ("qid", "answer_json", "retrieved_ids"))
    ):
        return "langchain"
    return "native"


def _otlp_is_openinference(resources: object) -> bool:
    """Tell whether the first span of an OTLP/JSON line carries OpenInference's span kind."""
    for resource in resources if type(resources) is list else ():
        scopes = resource.get("scopeSpans") if type(resource) is dict else None
        for scope in scopes if type(scopes) is list else ():
            for span in (scope.get("spans") if type(scope) is dict else None) or ():
                attributes = span.get("attributes") if type(span) is dict else None
                return type(attributes) is list and any(
                    type(a) is dict and a.get("key") == "openinference.span.kind" for a in attributes)
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
    if b"user_input" in first and b"," in first:
        return "ragas"
    return "native"
