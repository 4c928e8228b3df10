"""Spans as the tracing exporters write them (Phoenix / OpenInference JSON, OTLP/JSON), and one pipeline run
assembled from the spans of a trace: OpenInference's root input and output and the retriever's documents,
or the OpenTelemetry GenAI conventions' retrieval and inference spans (``--trace-format openinference``,
``otel-genai``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, Final, TypedDict, TypeGuard

from ragscore.errors import InputError
from ragscore.loaders.fieldpath import MISSING, FieldPath, lookup, parse_path, unflatten
from ragscore.loaders.jsonl import describe
from ragscore.loaders.times import nanoseconds
from ragscore.loaders.trace import join_like
from ragscore.quoting import quote

# Where GenAI spans keep the messages (the semantic conventions' attributes, old and new).
_GENAI_CONTENT: Final = tuple(parse_path(p) for p in (
    '"gen_ai.input.messages"', '"gen_ai.output.messages"', '"gen_ai.prompt"', '"gen_ai.completion"',
    "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.prompt", "gen_ai.completion"))


_SHOWN_ATTRIBUTES: Final = 6


def no_join(spans: list[Span], trace_id: str) -> str:
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


def first_in_spans(spans: list[Span], paths: tuple[FieldPath, ...], container: bool) -> object:
    for span in spans:
        for path in paths:
            value = lookup(span["attributes"], path, container)
            if value is not MISSING and value is not None:
                return value
    return MISSING


class Span(TypedDict):
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


def phoenix_span(obj: dict[str, object], source: str, line: int) -> Span:
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


def otlp_spans(obj: dict[str, object], source: str, line: int) -> list[Span]:
    """Read the spans of one OTLP/JSON line (resourceSpans -> scopeSpans -> spans)."""
    spans: list[Span] = []
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


def _operations(record: dict[str, object], spans: list[Span], tokens: dict[str, int | None]) -> None:
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


def _attr(span: Span, path: str, container: bool = False) -> object:
    """An attribute of a span; a quoted dotted key (``"gen_ai.tool.name"``, as OTLP keeps GenAI's keys) is found
    nested too (as a console exporter's span is read: every dotted key nested)."""
    value = lookup(span["attributes"], parse_path(path), container)
    if value is MISSING and path.startswith('"') and path.endswith('"'):
        value = lookup(span["attributes"], parse_path(path[1:-1]), container)
    return None if value is MISSING else value


def _has(span: Span, key: str) -> bool:
    """Whether a span holds an attribute, as written or nested."""
    return key in span["attributes"] or _attr(span, f'"{key}"') is not None


def _sum_tokens(spans: list[Span], paths: tuple[str, ...]) -> int | None:
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


def _retriever(spans: list[Span]) -> Span | None:
    """The RETRIEVER span whose documents a trace is scored on: the earliest started of those that hold
    ``retrieval.documents`` (llama-index's inner ``_retrieve`` span holds none and may be exported first),
    else the first RETRIEVER span."""
    retrievers = [s for s in spans if s["kind"] == "RETRIEVER"]
    holding = [s for s in retrievers if _attr(s, "retrieval.documents", True) is not None]
    if holding:  # a span with no start time sorts after those with one, in the order read
        return min(holding, key=lambda s: (s["start"] is None, s["start"] or 0))
    return retrievers[0] if retrievers else None


def openinference_trace(spans: list[Span]) -> dict[str, object]:
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
    calls = _openinference_calls(spans, llms)
    if calls is not None:
        record["tool_calls"] = calls
    _operations(record, spans, {"input_tokens": _sum_tokens(llms, ("llm.token_count.prompt",)),
                                "output_tokens": _sum_tokens(llms, ("llm.token_count.completion",))})
    return record


def _started(spans: list[Span]) -> list[Span]:
    """Spans in the order they started (one with no start time after those with one, in the order read)."""
    return sorted(spans, key=lambda s: (s["start"] is None, s["start"] or 0))


def _openinference_calls(spans: list[Span], llms: list[Span]) -> list[object] | None:
    """The tool calls of an OpenInference run, in the order made: those the LLM spans' output messages hold
    (``llm.output_messages.N.message.tool_calls.M.tool_call.function``: the name and the arguments' JSON text),
    else one per TOOL span (``tool.name``; the arguments are ``input.value``, JSON text when ``input.mime_type`` is
    ``application/json``, else a single argument's bare value, read as that JSON value); None when no span says
    anything of tool calls."""
    calls, said = _output_calls(llms, "llm.output_messages", _openinference_message_calls)
    if calls:
        return calls
    tools = _started([s for s in spans if s["kind"] == "TOOL"])
    for tool in tools:
        value = _attr(tool, "input.value")
        json_text = _attr(tool, "input.mime_type") == "application/json" and isinstance(value, str)
        calls.append({"name": _attr(tool, "tool.name"),
                      "arguments": value if json_text else json.dumps(value) if value is not None else "{}"})
    return calls if calls or said or tools else None


def _genai_calls(spans: list[Span], inference: list[Span]) -> list[object] | None:
    """The tool calls of a GenAI run, in the order made: one per ``execute_tool`` span (``gen_ai.tool.name``,
    ``gen_ai.tool.call.arguments``: JSON text), else the ``tool_call`` parts of the inference spans' output
    messages; None when no span says anything of tool calls (no tool span, no output messages)."""
    tools = [s for s in spans if _attr(s, '"gen_ai.operation.name"') == "execute_tool"
             and _attr(s, '"gen_ai.tool.name"') is not None]
    if tools:  # the arguments are recorded only with content capture on: a span without them is no call, counted
        return [{"name": _attr(s, '"gen_ai.tool.name"'), "arguments": arguments}
                if (arguments := _attr(s, '"gen_ai.tool.call.arguments"')) is not None
                else {"type": "execute_tool", "name": _attr(s, '"gen_ai.tool.name"')} for s in _started(tools)]
    calls, said = _output_calls(inference, '"gen_ai.output.messages"', _genai_message_calls)
    return calls if said else None


def _output_calls(spans: list[Span], path: str, calls_of: Callable[[object], list[object]]
                  ) -> tuple[list[object], bool]:
    """The calls the output messages of spans hold, in the order the spans started, and whether any span holds
    output messages at all."""
    calls: list[object] = []
    said = False
    for span in _started(spans):
        messages = _attr(span, path, True)
        if type(messages) is list:
            said = True
            for message in messages:
                calls += calls_of(message)
    return calls, said


def _openinference_message_calls(message: object) -> list[object]:
    """An OpenInference output message's calls (``message.tool_calls.N.tool_call``)."""
    listed = message.get("message", {}).get("tool_calls") if type(message) is dict else None
    return [c.get("tool_call") if type(c) is dict else c for c in listed] if type(listed) is list else []


def _genai_message_calls(message: object) -> list[object]:
    """A GenAI output message's ``tool_call`` parts."""
    parts = message.get("parts") if type(message) is dict else None
    return [p for p in parts if type(p) is dict and p.get("type") == "tool_call"] if type(parts) is list else []


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


def genai_trace(spans: list[Span]) -> dict[str, object]:
    """One pipeline run from OpenTelemetry GenAI spans: the retrieval span's query and documents, the
    last inference span's output message."""
    retrieval = next((s for s in spans if _has(s, "gen_ai.retrieval.documents")
                      or _attr(s, '"gen_ai.operation.name"') == "retrieval"), None)
    inference = [s for s in spans if _has(s, "gen_ai.output.messages") or _has(s, "gen_ai.completion")]
    record: dict[str, object] = {}
    question = _attr(retrieval, '"gen_ai.retrieval.query.text"') if retrieval else None
    if question is None and inference:
        question = _message_text(_attr(inference[-1], '"gen_ai.input.messages"', True), "user")
    if question is None:  # no output messages (Traceloop's chat spans): the first span that holds input messages
        asking = next((s for s in _started(spans) if _has(s, "gen_ai.input.messages")), None)
        question = _message_text(_attr(asking, '"gen_ai.input.messages"', True), "user") if asking else None
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
    calls = _genai_calls(spans, inference)
    if calls is not None:
        record["tool_calls"] = calls
    _operations(record, spans, {"input_tokens": _sum_tokens(spans, ('"gen_ai.usage.input_tokens"',)),
                                "output_tokens": _sum_tokens(spans, ('"gen_ai.usage.output_tokens"',))})
    return record
