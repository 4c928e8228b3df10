"""MLflow traces read as native trace records (``--trace-format mlflow``).

One record is one ``mlflow.entities.Trace.to_json()`` as MLflow 3 writes it: ``{"info": ...,
"data": {"spans": [...]}}``, each span with ``span_id``, ``parent_span_id`` and its times in
``start_time_unix_nano`` and ``end_time_unix_nano``. A span's attributes are JSON text
(``mlflow.spanType`` is ``"\\"RETRIEVER\\""``), so each one read is decoded: a claim is the text the
pipeline returned, not that text with its quotes.

- the question: the root span's inputs (text, or the object's ``question``/``query``/``input``...,
  or the last user message of a chat request), else the retriever's;
- the claim: the root span's outputs (text, or the object's ``answer``/``output``..., or a chat
  completion's first choice), else the last LLM span's;
- the retrieved documents: the outputs of the earliest started RETRIEVER span that returned any
  (``mlflow.entities.Document``: ``page_content``, ``metadata``, ``id``);
- the qid: the trace's tag or metadata ``qid``, else the root inputs' ``qid``;
- latency and ``ts`` from the spans' times; token counts from the trace's ``mlflow.trace.tokenUsage``.
"""

from __future__ import annotations

import json
from typing import Final

from ragscore.loaders.fieldpath import MISSING, lookup, parse_path

# Where a retrieved mlflow.entities.Document names its id, in the order tried: the Document's own id, then the
# metadata keys MLflow's retrieval evaluation and vector-search retrievers write (doc_uri, chunk_id).
DOCUMENT_ID: Final = ("id", "metadata.doc_id", "metadata.id", "metadata.doc_uri", "metadata.chunk_id")
_QUESTION_KEYS: Final = ("question", "query", "input", "user_input", "q", "prompt")
_ANSWER_KEYS: Final = ("answer", "output", "result", "response", "content", "text")
_QID: Final = tuple(parse_path(p) for p in ("info.tags.qid", "info.trace_metadata.qid"))


def is_mlflow(record: dict[str, object]) -> bool:
    """Tell whether a record is one MLflow trace (``Trace.to_json()``)."""
    data = record.get("data")
    return type(record.get("info")) is dict and type(data) is dict and type(data.get("spans")) is list


def mlflow_record(obj: dict[str, object]) -> dict[str, object]:
    """One MLflow trace as a native-shaped record (what it lacks left out: the parser reports it)."""
    data = obj.get("data")
    info = obj.get("info")
    spans = [_span(s) for s in (data.get("spans") if type(data) is dict else None) or () if type(s) is dict]
    ids = {span["id"] for span in spans if span["id"] is not None}
    root = next((s for s in spans if s["parent"] is None or s["parent"] not in ids), None)
    retriever = _retriever(spans)
    llms = [s for s in spans if s["type"] in ("LLM", "CHAT_MODEL")]
    record: dict[str, object] = {}
    qid = next((v for v in (lookup(obj, p) for p in _QID) if v is not MISSING and v is not None), None)
    inputs = _attribute(root, "mlflow.spanInputs") if root else None
    if qid is None and type(inputs) is dict:
        qid = inputs.get("qid")
    if qid is not None:
        record["qid"] = qid
    question = _text(inputs, _QUESTION_KEYS, "user")
    if question is None and retriever is not None:
        question = _text(_attribute(retriever, "mlflow.spanInputs"), _QUESTION_KEYS, "user")
    if question is not None:
        record["question"] = question
    claim = _text(_attribute(root, "mlflow.spanOutputs"), _ANSWER_KEYS, "assistant") if root else None
    if claim is None and llms:
        claim = _text(_attribute(llms[-1], "mlflow.spanOutputs"), _ANSWER_KEYS, "assistant")
    if claim is not None:
        record["answer"] = claim
    if retriever is not None:
        documents = _attribute(retriever, "mlflow.spanOutputs")
        record["retrieved_ids"] = documents
        texts = [d.get("page_content") if type(d) is dict else None for d in documents] if type(
            documents) is list else []
        if texts and all(isinstance(t, str) for t in texts):
            record["retrieved_chunks"] = texts
    _operations(record, spans, info if type(info) is dict else {})
    return record


def _span(obj: dict[str, object]) -> dict[str, object]:
    """What reading a trace needs of one span."""
    parent = obj.get("parent_span_id")
    span_id = obj.get("span_id")
    attributes = obj.get("attributes")
    attributes = attributes if type(attributes) is dict else {}
    kind = _decoded(attributes.get("mlflow.spanType"))
    start = obj.get("start_time_unix_nano")
    end = obj.get("end_time_unix_nano")
    return {"id": span_id if isinstance(span_id, (str, int)) else None,
            "parent": parent if isinstance(parent, (str, int)) and parent != "" else None,
            "type": kind.upper() if isinstance(kind, str) else "", "attributes": attributes,
            "start": start if type(start) is int and start >= 0 else None,
            "end": end if type(end) is int and end >= 0 else None}


def _decoded(value: object) -> object:
    """An attribute's value: MLflow writes each one as JSON text; text that is not JSON stays text."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value


def _attribute(span: dict[str, object], key: str) -> object:
    attributes = span["attributes"]
    assert type(attributes) is dict
    return _decoded(attributes.get(key))


def _retriever(spans: list[dict[str, object]]) -> dict[str, object] | None:
    """The RETRIEVER span a trace is scored on: the earliest started of those that returned documents (a
    filter that returned none before a fallback that returned some is passed over), else the first."""
    retrievers = [s for s in spans if s["type"] == "RETRIEVER"]
    holding = [s for s in retrievers if _returned(_attribute(s, "mlflow.spanOutputs"))]
    if holding:  # a span with no start time sorts after those with one, in the order read
        return min(holding, key=lambda s: (s["start"] is None, s["start"] or 0))
    return retrievers[0] if retrievers else None


def _returned(outputs: object) -> bool:
    """Tell whether a retriever's outputs are documents it returned: a list that is not empty."""
    return type(outputs) is list and len(outputs) > 0


def _text(value: object, keys: tuple[str, ...], role: str) -> object:
    """The text an inputs or outputs value holds: itself when text, an object's first text field of ``keys``,
    the last ``role`` message of a chat request or reply, a chat completion's first choice; else None."""
    if isinstance(value, str):
        return value
    if type(value) is not dict:
        return None
    for key in keys:
        if isinstance(value.get(key), str):
            return value[key]
    choices = value.get("choices")
    if type(choices) is list and choices and type(choices[0]) is dict:
        message = choices[0].get("message")
        if type(message) is dict and isinstance(message.get("content"), str):
            return message["content"]
    messages = value.get("messages")
    if type(messages) is list:
        for message in reversed(messages):
            if type(message) is dict and message.get("role") == role and isinstance(message.get("content"), str):
                return message["content"]
    texts = [v for v in value.values() if isinstance(v, str)]
    return texts[0] if len(texts) == 1 and len(value) == 1 else None


def _operations(record: dict[str, object], spans: list[dict[str, object]], info: dict[str, object]) -> None:
    """The trace's start (``ts``, epoch seconds), latency (first start to last end) and token counts."""
    starts = [s["start"] for s in spans if type(s["start"]) is int]
    ends = [s["end"] for s in spans if type(s["end"]) is int]
    if starts:
        record["ts"] = min(starts) / 1e9
    if starts and ends and max(ends) >= min(starts):
        record["latency_ms"] = (max(ends) - min(starts)) / 1_000_000
    metadata = info.get("trace_metadata")
    usage = _decoded(metadata.get("mlflow.trace.tokenUsage")) if type(metadata) is dict else None
    if type(usage) is dict:
        for key in ("input_tokens", "output_tokens"):
            if type(usage.get(key)) is int:
                record[key] = usage[key]
