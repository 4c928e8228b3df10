"""Trace files that are not JSON Lines but JSON all the same: pretty-printed records one after
another (``ReadableSpan.to_json()``, which OpenTelemetry's ConsoleSpanExporter writes), values
concatenated on a line, one JSON array of traces (issue 32)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from conftest import write
from ragscore.errors import InputError
from ragscore.loaders import input_file
from ragscore.loaders.jsonl import InputFile, iter_jsonl, iter_values

GOLD = [
    {"qid": "Q1", "question": "What is the refund window?", "answerable": True,
     "gold_claim_substr": ["30 days"], "gold_citations": ["d1"]},
    {"qid": "Q2", "question": "Who founded the company?", "answerable": True,
     "gold_claim_substr": ["Ada Lovelace"], "gold_citations": ["d2"]},
]
TRACES = [
    {"qid": "Q1", "answer": "Refunds are accepted within 30 days.", "citations": ["d1"], "retrieved_ids": ["d1", "d3"]},
    {"qid": "Q2", "answer": "It was founded by Ada Lovelace [d2].", "citations": ["d2"], "retrieved_ids": ["d4", "d2"]},
]


def report(ragscore: Any, trace: str, *more: str) -> tuple[dict[str, Any], list[int]]:
    """A run's report without what names and hashes its inputs and the questions' trace lines
    (the same traces, written another way), and those lines."""
    run = ragscore("--gold", "g.jsonl", "--trace", trace, "--no-fail", "--per-question", "--metrics", "retrieval",
                   *more)
    assert run.status == 0, run.err
    doc = {key: value for key, value in run.json().items() if key not in ("inputs", "signature")}
    lines = [row.pop("trace_line") for row in doc["questions"]]
    return doc, lines


@pytest.mark.parametrize(("written", "lines"), [
    pytest.param(lambda traces: json.dumps(traces, indent=2), [2, 13], id="one array, indented"),
    pytest.param(lambda traces: json.dumps(traces), [1, 1], id="one array on one line"),
    pytest.param(lambda traces: "\n".join(json.dumps(t, indent=4) for t in traces) + "\n", [1, 12],
                 id="indented, one after another"),
    pytest.param(lambda traces: "".join(json.dumps(t) for t in traces), [1, 1], id="concatenated on one line"),
    pytest.param(lambda traces: "\n\n" + json.dumps(traces[0]) + "\n" + json.dumps(traces[1], indent=1), [3, 4],
                 id="JSON Lines, then an indented record"),
])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_json_that_is_not_json_lines_scores_as_the_same_records(ragscore, isolated, written, lines, jobs):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", TRACES)
    (isolated / "t.json").write_text(written(TRACES), encoding="utf-8")
    doc, found = report(ragscore, "t.json", "--jobs", jobs)
    assert doc == report(ragscore, "t.jsonl")[0]
    assert found == lines
    assert doc["metrics"]["mrr"] == 0.75  # d1 first, d2 second: the records as written


def test_each_record_keeps_its_own_line_and_column():
    text = '[\n  {"qid": "Q1"},\n  {\n    "qid": "Q2"\n  }, {"qid": "Q3"}\n]\n'
    records = [(line, column, value) for line, column, _, value in iter_values(text.encode().splitlines(True), "t")]
    assert records == [(2, 3, {"qid": "Q1"}), (3, 3, {"qid": "Q2"}), (5, 6, {"qid": "Q3"})]


def _error(text: str) -> str:
    with pytest.raises(InputError) as caught:
        list(iter_values(text.encode().splitlines(True), "t.json"))
    return str(caught.value)


@pytest.mark.parametrize(("text", "message"), [
    ('{\n  "qid": "Q1",\n  "answer": x\n}\n', "t.json:3:13: invalid JSON: Expecting value"),
    ('{"qid": "Q1"}\n{\n  "qid": "Q2",\n  "answer": "30\n', 't.json:4:16: invalid JSON: invalid control character '
     "U+000A in a string (write it as \\u000a)"),
    ('{"qid": "Q1"}\n\n  {\n  "qid": "Q2",\n  "answer": {"a": 1\n',
     "t.json:3:3: invalid JSON: the input ends inside the value that starts here (2 closing brackets missing)"),
    ('[\n  {"qid": "Q1"},\n]\n', "t.json:3:1: invalid JSON: expected a value after ',' in the array, got ']'"),
    ('[\n  {"qid": "Q1"}\n  {"qid": "Q2"}\n]\n', "t.json:3:3: invalid JSON: expected ',' or ']' in the array, got '{'"),
    ('[\n  {"qid": "Q1"}\n', "t.json:2: invalid JSON: expected ',' or ']' in the array, got the end of the file"),
    ('[{"qid": "Q1"}]\n{"qid": "Q2"}\n', "t.json:2:1: invalid JSON: extra data after the array"),
    ('{"qid": "Q1",\n "score": NaN}', "t.json:2:11: invalid JSON: NaN is not a number JSON allows (use null)"),
])
def test_an_error_in_a_stream_of_values_is_at_its_own_line_and_column(text, message):
    assert _error(text) == message


def test_a_value_past_the_longest_record_is_refused_at_its_first_line(monkeypatch):
    monkeypatch.setattr(input_file, "MAX_LINE_BYTES", 100)
    text = '{"qid": "Q1"}\n  {\n' + '  "a": "xxxxxxxxxx",\n' * 6 + "}\n"
    assert _error(text) == "t.json:2:3: a value longer than 100 bytes (the longest record ragscore reads)"


def test_json_lines_keep_their_errors(tmp_path):
    # A line with a value and something else after it is no stream of values: the same error as before.
    path = write(tmp_path / "t.jsonl", '{"qid": "Q1"}\n{"qid": "Q2"} x\n')
    with pytest.raises(InputError) as caught:
        list(iter_jsonl(InputFile(str(path)), values=True))
    assert str(caught.value) == f"{path}:2:15: invalid JSON: extra data after the value (one value per line)"


def test_a_trace_error_in_an_indented_file_names_the_records_line(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    (isolated / "t.json").write_text(json.dumps(TRACES[0], indent=2) + "\n" + json.dumps({"answer": "x"}, indent=2),
                                     encoding="utf-8")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.json")
    assert run.status == 2
    assert run.err.startswith("ragscore: error: t.json:12: expected a \"qid\" (or \"q_id\") or a question text")


# --- real spans: OpenTelemetry's ConsoleSpanExporter writes span.to_json() (indent 4) per span -------

def _console_spans(path: Path, metadata_ids: bool = False) -> None:
    """Record one OpenInference-shaped pipeline run per question with the real SDK, written as
    ConsoleSpanExporter writes them: each span's to_json() and a line end."""
    with path.open("w", encoding="utf-8") as out:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out)))
        tracer = provider.get_tracer("test")
        for qid, question, answer, documents in (("Q1", "What is the refund window?", "Within 30 days.", ["d1", "d3"]),
                                                 ("Q2", "Who founded the company?", "Ada Lovelace.", ["d4", "d2"])):
            with tracer.start_as_current_span("chain", attributes={
                    "openinference.span.kind": "CHAIN", "input.value": question, "output.value": answer,
                    "metadata": json.dumps({"qid": qid})}):
                retrieved: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": question}
                for n, doc in enumerate(documents):
                    retrieved[f"retrieval.documents.{n}.document.content"] = f"text of {doc}"
                    if metadata_ids:  # as openinference-instrumentation-langchain writes them: no document.id
                        retrieved[f"retrieval.documents.{n}.document.metadata"] = json.dumps({"id": doc})
                    else:
                        retrieved[f"retrieval.documents.{n}.document.id"] = doc
                with tracer.start_as_current_span("retrieve", attributes=retrieved):
                    pass
        provider.shutdown()


def test_spans_written_by_the_console_exporter_are_scored(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    _console_spans(isolated / "spans.json")
    assert (isolated / "spans.json").read_text(encoding="utf-8").startswith('{\n    "name": "retrieve",\n')
    run = ragscore("--gold", "g.jsonl", "--trace", "spans.json", "--no-fail", "--per-question", "--metrics", "retrieval")
    assert run.status == 0, run.err
    assert run.err.startswith("ragscore: traces read as openinference (detected from the first record's keys;")
    doc = run.json()
    assert (doc["counts"]["traced"], doc["counts"]["unreadable"], doc["counts"]["unreadable_retrieved"]) == (2, 0, 0)
    # Each trace at the line of its first span: the exporter wrote each run's retriever span, then its chain span.
    starts = [n for n, line in enumerate((isolated / "spans.json").read_text().splitlines(), 1) if line == "{"]
    assert len(starts) == 4
    assert [(row["qid"], row["claim"], row["trace_line"]) for row in doc["questions"]] == [
        ("Q1", "Within 30 days.", starts[0]), ("Q2", "Ada Lovelace.", starts[2])]
    assert (doc["metrics"]["mrr"], doc["metrics"]["hit@1"], doc["metrics"]["recall@5"]) == (0.75, 0.5, 1.0)


def test_a_document_id_mapped_into_the_metadata_of_spans_is_found(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    _console_spans(isolated / "spans.json", metadata_ids=True)
    run = ragscore("--gold", "g.jsonl", "--trace", "spans.json", "--no-fail", "--metrics", "retrieval",
                   "--map", "document_id=document.metadata.id")
    assert run.status == 0, run.err
    assert "found nothing" not in run.err
    doc = run.json()
    assert (doc["metrics"]["mrr"], doc["counts"]["unreadable_retrieved"]) == (0.75, 0)
    typo = ragscore("--gold", "g.jsonl", "--trace", "spans.json", "--no-fail", "--format", "none",
                    "--map", "document_id=document.metadata.doc")
    assert ('ragscore: the mapping document_id="document.metadata.doc" found nothing in any of 2 traces (a typo in '
            "the path?)\n") in typo.err


def test_validate_reads_them_as_score_does(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    (isolated / "t.json").write_text(json.dumps(TRACES, indent=2), encoding="utf-8")
    run = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.json")
    assert (run.status, run.out, run.err) == (0, "", "ragscore: 0 errors, 0 warnings\n")
    (isolated / "bad.json").write_text(json.dumps(TRACES[0], indent=2) + "\n{\n  \"qid\": x\n}\n", encoding="utf-8")
    bad = ragscore("validate", "--gold", "g.jsonl", "--trace", "bad.json")
    assert bad.status == 2
    assert "bad.json:13:10: error: invalid JSON: Expecting value\n" in bad.out


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text("ab{}[]\",: \\\n\té", max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("k{}[]\" ", max_size=3), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.dictionaries(st.text("qk[]{}\"", max_size=3), _JSON, max_size=3), min_size=1, max_size=4),
       st.sampled_from([None, 0, 1, 2, 4]), st.sampled_from(["\n", "", " ", "\n\n"]), st.booleans())
def test_any_records_written_any_way_read_back_at_their_lines(records, indent, between, array):
    """Records written indented or not, apart or concatenated, or as one array, read back as
    themselves, each at the line and column where its text starts."""
    texts = [json.dumps(record, indent=indent) for record in records]
    text = ("[" + between + ("," + between).join(texts) + between + "]") if array else between.join(texts)
    read = list(iter_values(text.encode().splitlines(True), "t.json"))
    assert [value for _, _, _, value in read] == records
    for (line, column, piece, _), record in zip(read, records, strict=True):
        start = sum(len(row) + 1 for row in text.split("\n")[: line - 1]) + column - 1
        assert text[start:].startswith(piece) and json.loads(piece) == record


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_line_cut_short_in_json_lines_is_an_error_at_its_own_line(ragscore, isolated, jobs):
    # Read as the start of a value spanning lines, "{" would fail where the next record starts (line 3).
    write(isolated / "g.jsonl", GOLD)
    (isolated / "t.jsonl").write_text(json.dumps(TRACES[0]) + '\n{"qid": "Q2", "answer": \n' + json.dumps(TRACES[1])
                                      + "\n", encoding="utf-8")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--jobs", jobs)
    assert (run.status, run.err) == (2, "ragscore: error: t.jsonl:2:25: invalid JSON: Expecting value\n")
