"""The mlflow and llamaindex trace formats, read from what the libraries wrote (issue 32).

- tests/data/mlflow/traces.jsonl: three ``Trace.to_json()`` lines MLflow 3 wrote (make_traces.py,
  versions.txt). Traces 1 and 2 are a plain chain (text in and out; Documents with their ``id``):
  q1 retrieves [d1, d3], q2 [d4, d2]. Trace 3 is a chat pipeline: qid "q3" as a trace tag, a chat
  request in, a chat completion out, 41 + 7 tokens on its LLM span, an inner retriever that returns
  nothing started after the outer one that returns [docs/d2.md, docs/d4.md] (named by metadata.doc_uri).
- tests/data/llamaindex/responses.jsonl: two query-engine answers llama-index-core wrote
  (make_responses.py, versions.txt): {"query", "response", "source_nodes": [NodeWithScore.to_dict()]};
  both retrieve [the d2 node, the d1 node]; MockLLM answers "text text ...".
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import DATA, write
from ragscore.loaders.detect import detect
from ragscore.loaders.mlflow import mlflow_record

MLFLOW = DATA / "mlflow" / "traces.jsonl"
LLAMAINDEX = DATA / "llamaindex" / "responses.jsonl"
GOLD = [
    {"qid": "q1", "question": "What is the refund window?", "answerable": True, "gold_claim_substr": ["30 days"],
     "gold_citations": ["d1"]},
    {"qid": "q2", "question": "Who founded the company?", "answerable": True, "gold_claim_substr": ["Ada Lovelace"],
     "gold_citations": ["d4"]},
    {"qid": "q3", "question": "Who started the company?", "answerable": True, "gold_claim_substr": ["Ada Lovelace"],
     "gold_citations": ["docs/d4.md"]},
]


NODE_NOTE = ("the retrieved documents' ids were read from node.id_ (4 documents): llama-index node ids "
             "(node.relationships.1.node_id is each node's source document); --map document_id=PATH reads them from "
             "another field")


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def mlflow_run(isolated: Path) -> Path:
    write(isolated / "gold.jsonl", GOLD)
    shutil.copy(MLFLOW, isolated / "traces.jsonl")
    return isolated


def test_auto_detects_both_formats():
    assert {detect(record) for record in _lines(MLFLOW)} == {"mlflow"}
    assert {detect(record) for record in _lines(LLAMAINDEX)} == {"llamaindex"}


def test_an_mlflow_trace_reads_as_its_pipeline_ran():
    first, _, chat = (mlflow_record(record) for record in _lines(MLFLOW))
    # The root span's inputs and outputs are JSON text: the claim is decoded, not kept with its quotes.
    assert (first["question"], first["answer"]) == ("What is the refund window?", "Refunds are accepted within 30 days.")
    assert [d["id"] for d in first["retrieved_ids"]] == ["d1", "d3"]
    assert first["retrieved_chunks"] == ["text of d1", "text of d3"]
    assert "qid" not in first and "input_tokens" not in first
    # The chat pipeline: the tag's qid, the last user message, the completion's text, the retriever that
    # returned documents (not the inner one that returned null), the trace's token usage.
    assert (chat["qid"], chat["question"], chat["answer"]) == ("q3", "Who started the company?",
                                                               "It was founded by Ada Lovelace.")
    assert [d["metadata"]["doc_uri"] for d in chat["retrieved_ids"]] == ["docs/d2.md", "docs/d4.md"]
    assert (chat["input_tokens"], chat["output_tokens"]) == (41, 7)
    spans = _lines(MLFLOW)[2]["data"]["spans"]
    start = min(s["start_time_unix_nano"] for s in spans)
    assert chat["ts"] == start / 1e9
    assert chat["latency_ms"] == (max(s["end_time_unix_nano"] for s in spans) - start) / 1_000_000


def test_mlflow_traces_score_by_hand(ragscore, mlflow_run):
    run = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--metrics", "retrieval", "--no-fail")
    doc = run.json()
    metrics = doc["metrics"]
    # recall@1: q1 [d1, d3] hits d1, q2 [d4, d2] hits d4, q3 [docs/d2.md, docs/d4.md] misses: 2/3; recall@3 = 1.
    assert (metrics["recall@1"], metrics["recall@3"]) == (2 / 3, 1.0)
    # Nothing cites: precision is the claims alone, all three contained.
    assert (metrics["precision"], metrics["chr"]) == (1.0, None)
    assert (metrics["tokens_in_mean"], metrics["tokens_total"]) == (41.0, 48.0)
    assert doc["settings"]["trace_format"] == "mlflow"
    assert doc["inputs"]["trace"]["document_ids"] == {"id": 4, "metadata.doc_uri": 2}
    assert run.err.splitlines()[:2] == [
        "ragscore: traces read as mlflow (detected from the first record's keys; --trace-format mlflow says so, "
        "--trace-format native reads them as the contract)",
        "ragscore: the retrieved documents' ids were read from id (4 documents), metadata.doc_uri (2 documents); "
        "--map document_id=PATH reads them from another field",
    ]


def test_an_mlflow_mapping_reads_the_trace_record(ragscore, mlflow_run):
    # A mapped concept is read from the Trace.to_json() record itself, in place of the format's own.
    run = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--metrics", "retrieval", "--no-fail",
                   "--map", "document_id=metadata.doc_uri", "--map", "claim=info.response_preview")
    doc = run.json()
    # Only q3's documents have a doc_uri the gold set names: docs/d4.md, second.
    assert (doc["metrics"]["recall@1"], doc["metrics"]["recall@3"]) == (0.0, 1 / 3)
    assert doc["inputs"]["trace"]["document_ids"] == {"metadata.doc_uri": 6}
    assert "ids were read from" not in run.err  # mapped: the user named the field


def test_mlflow_runs_are_the_same_in_jobs_and_partials(ragscore, mlflow_run):
    whole = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--metrics", "retrieval", "--no-fail")
    jobs = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--metrics", "retrieval", "--no-fail",
                    "--jobs", "2")
    assert (jobs.out, jobs.err) == (whole.out, whole.err)
    # Two traces join by question text: a partial covers the whole run (the record survives its JSON).
    made = ragscore("partial", "--gold", "gold.jsonl", "--trace", "traces.jsonl", "--metrics", "retrieval",
                    "--part", "1/1", "-o", "p1.json")
    assert made.status == 0, made.err
    merged = ragscore("merge", "p1.json", "--no-fail")
    assert merged.json()["inputs"]["trace"]["document_ids"] == whole.json()["inputs"]["trace"]["document_ids"]
    exact = {k: v for k, v in whole.json()["metrics"].items() if not k.startswith("latency_")}
    assert {k: v for k, v in merged.json()["metrics"].items() if not k.startswith("latency_")} == exact  # (a sketch)


def test_llamaindex_responses_name_their_node_ids(ragscore, isolated):
    write(isolated / "gold.jsonl", [
        {"qid": "q1", "question": "What is the refund window?", "answerable": True, "gold_citations": ["d1"]},
        {"qid": "q2", "question": "Who founded the company?", "answerable": True, "gold_citations": ["d2"]}])
    shutil.copy(LLAMAINDEX, isolated / "responses.jsonl")
    run = ragscore("--gold", "gold.jsonl", "--trace", "responses.jsonl", "--metrics", "retrieval", "--no-fail")
    nodes = [[n["node"]["id_"] for n in record["source_nodes"]] for record in _lines(LLAMAINDEX)]
    assert run.json()["inputs"]["trace"]["document_ids"] == {"node.id_": 4}
    assert run.json()["metrics"]["recall@3"] == 0.0  # node ids are not the documents' ids the gold set names
    assert f"ragscore: {NODE_NOTE}" in run.err.splitlines()
    # Mapped to the source document: both retrieve [d2, d1]; q1's d1 is second, q2's d2 first.
    mapped = ragscore("--gold", "gold.jsonl", "--trace", "responses.jsonl", "--metrics", "retrieval", "--no-fail",
                      "--map", "document_id=node.relationships.1.node_id")
    metrics = mapped.json()["metrics"]
    assert (metrics["recall@1"], metrics["recall@3"], metrics["mrr"]) == (0.5, 1.0, 0.75)
    assert mapped.json()["inputs"]["trace"]["document_ids"] == {"node.relationships.1.node_id": 4}
    # Gold by node id (llama-index's own RetrieverEvaluator judges node ids): read as they are.
    write(isolated / "gold.jsonl", [
        {"qid": "q1", "question": "What is the refund window?", "answerable": True, "gold_citations": [nodes[0][1]]},
        {"qid": "q2", "question": "Who founded the company?", "answerable": True, "gold_citations": [nodes[1][0]]}])
    by_node = ragscore("--gold", "gold.jsonl", "--trace", "responses.jsonl", "--metrics", "retrieval", "--no-fail")
    assert (by_node.json()["metrics"]["recall@1"], by_node.json()["metrics"]["recall@3"]) == (0.5, 1.0)


def test_compare_names_where_each_runs_ids_came_from(ragscore, isolated):
    write(isolated / "gold.jsonl", [
        {"qid": "q1", "question": "What is the refund window?", "answerable": True, "gold_citations": ["d1"]},
        {"qid": "q2", "question": "Who founded the company?", "answerable": True, "gold_citations": ["d2"]}])
    native = [{"question": r["query"], "answer": r["response"],
               "retrieved_ids": [n["node"]["relationships"]["1"]["node_id"] for n in r["source_nodes"]]}
              for r in _lines(LLAMAINDEX)]
    write(isolated / "native.jsonl", native)
    run = ragscore("compare", "--gold", "gold.jsonl", "--baseline", "native.jsonl", "--trace", LLAMAINDEX, "--no-fail")
    assert run.status == 0, run.err
    lines = run.err.splitlines()
    assert lines[0] == ("ragscore: the baseline's traces were read as native, the candidate's as llamaindex "
                        "(--trace-format auto)")
    assert f"ragscore: the candidate's traces: {NODE_NOTE}" in lines
    assert not any("baseline's traces: the retrieved" in line for line in lines)  # native ids: nothing to say


def test_an_mlflow_retriever_that_returned_nothing_is_passed_over(ragscore, isolated):
    # fallback.jsonl (make_traces.py): a filtered search returned [], then the fallback returned [d1, d7].
    trace = _lines(DATA / "mlflow" / "fallback.jsonl")[0]
    assert [d["id"] for d in mlflow_record(trace)["retrieved_ids"]] == ["d1", "d7"]
    write(isolated / "gold.jsonl", [GOLD[0]])
    run = ragscore("--gold", "gold.jsonl", "--trace", DATA / "mlflow" / "fallback.jsonl", "--metrics", "retrieval",
                   "--no-fail")
    assert (run.json()["metrics"]["full_recall@5"], run.json()["metrics"]["recall@1"]) == (1.0, 1.0)


def test_ids_are_counted_once_however_the_run_is_split(ragscore, isolated):
    # Each part reads every record: only the traces it owns count where their ids came from.
    write(isolated / "gold.jsonl", [{"qid": f"q{i}", "question": f"q{i}?", "answerable": True,
                                     "gold_citations": ["d1"]} for i in range(40)])
    record = _lines(LLAMAINDEX)[0]
    write(isolated / "t.jsonl", [{**record, "qid": f"q{i}"} for i in range(40)])
    whole = ragscore("--gold", "gold.jsonl", "--trace", "t.jsonl", "--no-fail")
    jobs = ragscore("--gold", "gold.jsonl", "--trace", "t.jsonl", "--no-fail", "--jobs", "2")
    assert whole.json()["inputs"]["trace"]["document_ids"] == {"node.id_": 80}
    assert (jobs.out, jobs.err) == (whole.out, whole.err)
    for part in (1, 2):
        made = ragscore("partial", "--gold", "gold.jsonl", "--trace", "t.jsonl", "--part", f"{part}/2",
                        "-o", f"p{part}.json")
        assert made.status == 0, made.err
    merged = ragscore("merge", "p1.json", "p2.json", "--no-fail")
    assert merged.json()["inputs"]["trace"]["document_ids"] == {"node.id_": 80}


def test_a_preset_record_without_a_question_names_its_own_keys(ragscore, isolated):
    # A llama-index Response dumped without its query: the error names the keys of the record as written.
    record = {k: v for k, v in _lines(LLAMAINDEX)[0].items() if k != "query"}
    write(isolated / "gold.jsonl", GOLD)
    write(isolated / "t.jsonl", [record])
    run = ragscore("--gold", "gold.jsonl", "--trace", "t.jsonl", "--trace-format", "llamaindex")
    assert (run.status, run.err) == (2, 'ragscore: error: t.jsonl:1: expected a "qid" (or "q_id") or a question text '
                                        '("q" or "question") to join on (the llamaindex format reads the question '
                                        'from query or query_str or question); its keys are "response", '
                                        '"source_nodes", "metadata", and none is a question or its id: map one with '
                                        '--map qid=PATH or --map question=PATH (see "Your traces" in the README)\n')


def test_native_traces_that_also_log_documents_stay_native(ragscore, isolated):
    # A native trace (answer_json, retrieved_ids) that keeps its LangChain Documents in "context" too.
    write(isolated / "gold.jsonl", [{"qid": "q1", "question": "What is the refund window?", "answerable": True,
                                     "gold_citations": ["d1"], "gold_claim_substr": ["30 days"]}])
    trace = {"qid": "q1", "answer_json": {"claim": "Within 30 days.", "citations": ["d1"]}, "retrieved_ids": ["d1"],
             "context": [{"page_content": "Refunds are accepted within 30 days.", "metadata": {"id": "d1"}}]}
    assert detect(trace) == "native"
    write(isolated / "t.jsonl", [trace])
    metrics = ragscore("--gold", "gold.jsonl", "--trace", "t.jsonl").json()["metrics"]
    assert (metrics["precision"], metrics["chr"], metrics["full_recall@5"]) == (1.0, 1.0, 1.0)
