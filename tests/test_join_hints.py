"""What a trace that joins no question is told: its keys, the key nearest to a question or its id
and the --map that reads it; for GenAI spans recorded without their messages, that content
capture is off (issue 32)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write
from ragscore.loaders.trace import join_hint

GENAI = Path(__file__).parent / "data" / "genai"
GOLD = [{"qid": "Q1", "question": "What is the refund window?", "answerable": True, "gold_claim_substr": ["30 days"]},
        {"qid": "Q2", "question": "Who founded the company?", "answerable": True, "gold_claim_substr": ["Ada"]}]
JOIN = 'expected a "qid" (or "q_id") or a question text ("q" or "question") to join on; '


@pytest.mark.parametrize(("record", "hint"), [
    # a llama-index Response dump with the query beside it
    ({"query": "What is the refund window?", "response": "30 days", "source_nodes": [], "metadata": None},
     'its keys are "query", "response", "source_nodes", "metadata": did you mean --map question=query? ("query" '
     "looks like a question)"),
    # a Response dump alone: nothing to join on
    ({"response": "30 days", "source_nodes": [], "metadata": {"a": 1}},
     'its keys are "response", "source_nodes", "metadata", and none is a question or its id: map one with --map '
     'qid=PATH or --map question=PATH (see "Your traces" in the README)'),
    # a join field written wrong
    ({"Question": "What?", "answer": "x"},
     'its keys are "Question", "answer": did you mean --map question=Question? ("Question" looks like a question)'),
    # an id beats a text; one level down
    ({"meta": {"question_id": 7}, "input": "What?"},
     'its keys are "meta", "input": did you mean --map qid=meta.question_id? ("question_id" looks like a '
     "question's id)"),
    # JSON text of an object is looked into, two levels down (MLflow's info.request_preview)
    ({"info": {"trace_id": "tr-1", "request_preview": '{"query": "What is the refund window?"}'}, "data": {}},
     'its keys are "info", "data": did you mean --map question=info.request_preview.query? ("query" looks like a '
     "question)"),
    # keys that need quoting in a path
    ({"in.puts": {"query": "What?"}},
     'its keys are "in.puts": did you mean --map question="in.puts".query? ("query" looks like a question)'),
    # at most 8 keys are named
    ({f"k{n}": n for n in range(10)},
     'its keys are "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", ... (10 keys), and none is a question or its id: '
     'map one with --map qid=PATH or --map question=PATH (see "Your traces" in the README)'),
    ({}, 'it has no keys, and none is a question or its id: map one with --map qid=PATH or --map question=PATH (see '
         '"Your traces" in the README)'),
])
def test_the_hint_names_the_keys_and_the_nearest_join_field(record, hint):
    assert join_hint(record) == hint


def test_the_suggested_mapping_joins(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [{"query": "What is the refund window?", "response": "30 days", "docs": []}])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--trace-format", "native")
    assert (run.status, run.err) == (2, f"ragscore: error: t.jsonl:1: {JOIN}its keys are \"query\", \"response\", "
                                        '"docs": did you mean --map question=query? ("query" looks like a '
                                        "question)\n")
    again = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--trace-format", "native", "--no-fail",
                     "--map", "question=query", "--map", "claim=response")
    assert again.status == 0, again.err
    assert again.json()["counts"]["traced"] == 1


def test_genai_spans_recorded_without_content_say_that_capture_is_off(ragscore, isolated):
    # Spans that opentelemetry-instrumentation-openai-v2 recorded with its default settings (see make_spans.py).
    write(isolated / "g.jsonl", GOLD)
    spans = GENAI / "spans.json"
    first = json.loads(spans.read_text(encoding="utf-8").split("\n}\n")[0] + "\n}")
    assert "gen_ai.input.messages" not in first["attributes"] and first["events"] == []
    message = (f'expected a question (or a qid) to join on in the spans of trace "{first["context"]["trace_id"]}": '
               'they hold GenAI attributes ("gen_ai.operation.name", "gen_ai.request.model", '
               '"gen_ai.response.finish_reasons", "gen_ai.response.id", "gen_ai.response.model", "gen_ai.system", '
               "...) but no message content, which GenAI instrumentations record only with content capture on: set "
               "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true where the pipeline runs, or give each trace an "
               "attribute that names its question and read it with --map qid=PATH")
    run = ragscore("--gold", "g.jsonl", "--trace", spans, "--trace-format", "otel-genai")
    assert (run.status, run.err) == (2, f"ragscore: error: {spans}:1: {message}\n")
    auto = ragscore("--gold", "g.jsonl", "--trace", spans)
    assert auto.status == 2
    assert auto.err == (f"ragscore: error: {spans}:1: {message} (read as otel-genai, detected from the first record; "
                        "--trace-format names the format)\n")  # span.to_json() with GenAI attributes


def test_spans_without_a_question_name_the_attribute_nearest_to_one(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    span = {"context": {"trace_id": "t1", "span_id": "s1"}, "parent_id": None, "span_kind": "CHAIN",
            "attributes": {"openinference.span.kind": "CHAIN", "session.query_id": "Q1", "output.value": "30 days"}}
    write(isolated / "t.jsonl", [span])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--trace-format", "openinference")
    assert (run.status, run.err) == (2, 'ragscore: error: t.jsonl:1: expected a question (or a qid) to join on in the '
                                        'spans of trace "t1": did you mean --map qid=session.query_id? (the span '
                                        "attribute \"query_id\" looks like a question's id)\n")
    again = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--trace-format", "openinference", "--no-fail",
                     "--map", "qid=session.query_id")
    assert again.status == 0, again.err
    assert again.json()["counts"]["traced"] == 1


@pytest.mark.parametrize(("path", "fmt"), [
    ("mlflow/traces.jsonl", "mlflow"),  # Trace.to_json() as MLflow 3 writes it (tests/data/mlflow/make_traces.py)
    ("llamaindex/responses.jsonl", "llamaindex"),  # query engine answers (tests/data/llamaindex/make_responses.py)
])
def test_a_preset_read_as_native_is_told_the_format_that_reads_it(ragscore, isolated, path, fmt):
    traces = Path(__file__).parent / "data" / path
    write(isolated / "g.jsonl", GOLD)
    run = ragscore("--gold", "g.jsonl", "--trace", traces, "--trace-format", "native")
    assert (run.status, run.err) == (2, f"ragscore: error: {traces}:1: {JOIN}the keys look like {fmt}'s: "
                                        f"--trace-format {fmt} reads them\n")
    auto = ragscore("--gold", "g.jsonl", "--trace", traces, "--no-fail")
    assert auto.status == 0, auto.err
    assert auto.err.startswith(f"ragscore: traces read as {fmt} (detected")


def test_mlflow_traces_read_as_native_can_still_be_mapped(ragscore, isolated):
    # The hint looks into JSON text two levels down: the question in info.request_preview.
    traces = Path(__file__).parent / "data" / "mlflow" / "traces.jsonl"
    first = json.loads(traces.read_text(encoding="utf-8").splitlines()[0])
    assert join_hint(first) == ('its keys are "info", "data": did you mean --map question=info.request_preview.question?'
                                ' ("question" looks like a question)')
