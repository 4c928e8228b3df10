"""Traces and gold sets in other shapes: field paths, mappings, presets, and what cannot be read (issue 14)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import write
from ragscore.loaders.fieldpath import MISSING, PathError, lookup, parse_path, unflatten

GOLD = [
    {"qid": "Q1", "question": "What is the refund window?", "answerable": True,
     "gold_claim_substr": ["30 days"], "gold_citations": ["d1"]},
    {"qid": "Q2", "question": "Who founded the company?", "answerable": True,
     "gold_claim_substr": ["Ada Lovelace"], "gold_citations": ["d2"]},
    {"qid": "Q3", "question": "What is the CEO's salary?", "answerable": False},
]


def without_reading(doc: dict[str, Any]) -> dict[str, Any]:
    """A report without what says how the inputs were read (settings, signature, inputs)."""
    return {key: value for key, value in doc.items() if key not in ("settings", "signature", "inputs")}


# --- paths --------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "message", "column"), [
    ("", "empty path: expected a key such as answer or metadata.id", 1),
    ("a.", "expected a key after the last '.'", 3),
    ("a..b", "expected a key, got '.' (quote keys that hold dots, brackets or spaces: \"a.b\")", 3),
    ('"ab', 'unterminated quoted key (no closing ")', 1),
    ("[0]", "expected a key, got '[' (quote keys that hold dots, brackets or spaces: \"a.b\")", 1),
    ("a[x]", "expected [N] (a list index) or [*] (every element)", 2),
    ("a b", "expected '.', '[' or the end of the path, got ' '", 2),
    ('a.""', "empty quoted key", 3),
])
def test_a_malformed_path_is_an_error_at_its_character(text, message, column):
    with pytest.raises(PathError) as caught:
        parse_path(text)
    assert (caught.value.message, caught.value.column) == (message, column)


def test_paths_read_keys_indexes_every_element_and_quoted_keys():
    record = {
        "source_documents": [{"metadata": {"id": "d1"}}, {"metadata": {}}, {"metadata": {"id": 7}}],
        "attributes": {"retrieval.documents": '[{"document": {"id": "x"}}]', 'odd"key': 1},
        "gen_ai.usage.input_tokens": 5,
        "messages": [{"content": "first"}, {"content": "last"}],
    }
    assert lookup(record, parse_path("source_documents[*].metadata.id")) == ["d1", None, 7]
    assert lookup(record, parse_path("source_documents[0].metadata.id")) == "d1"
    assert lookup(record, parse_path("messages[-1].content")) == "last"
    assert lookup(record, parse_path("messages[2].content")) is MISSING
    # A JSON string is decoded when the path goes on into it, and at its end for a list concept.
    assert lookup(record, parse_path('attributes."retrieval.documents"[0].document.id')) == "x"
    assert lookup(record, parse_path('attributes."retrieval.documents"'), True) == [{"document": {"id": "x"}}]
    assert lookup(record, parse_path('attributes."retrieval.documents"')) == '[{"document": {"id": "x"}}]'
    # A flattened key is found by the dotted path of its parts.
    assert lookup(record, parse_path("gen_ai.usage.input_tokens")) == 5
    assert lookup(record, parse_path('attributes."odd\\"key"')) == 1
    assert lookup(record, parse_path("nothing.here")) is MISSING


def test_flattened_attributes_nest_into_objects_and_lists():
    flat = {"retrieval.documents.1.document.id": "b", "retrieval.documents.0.document.id": "a",
            "input.value": "q", "a": 1, "a.b": 2}
    assert unflatten(flat) == {"retrieval": {"documents": [{"document": {"id": "a"}}, {"document": {"id": "b"}}]},
                               "input": {"value": "q"}, "a": 1, "a.b": 2}


# --- mapping ------------------------------------------------------------------------------------------

def test_the_langchain_shape_of_the_issue_is_an_error_when_read_as_native(ragscore, isolated):
    # Issue 14: renamed only so that it joins, it was 12 empty answers, precision 0, "retrieval drift".
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [
        {"question": g["question"], "result": "It is 30 days.", "source_documents": [{"metadata": {"id": "d1"}}]}
        for g in GOLD])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--trace-format", "native")
    assert run.status == 2 and run.out == ""
    assert run.err == ('ragscore: error: t.jsonl:1: 3 of 3 traces have nothing ragscore reads (no claim, refusal, '
                       'retrieved list, scores or tool calls; read as native format): its keys are "question", '
                       '"result", '
                       '"source_documents": did you mean --trace-format langchain?\n')
    auto = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--per-question")
    assert auto.status == 0
    doc = auto.json()
    assert doc["settings"]["trace_format"] == "langchain" and "|trace:langchain|" in doc["signature"]
    assert [q["label"] for q in doc["questions"]] == ["NO_CITATION_HIT", "NO_CITATION_HIT", "HALLUCINATION"]
    assert doc["metrics"]["full_recall@5"] == 0.5  # Q1's d1 retrieved; Q2's d2 not
    assert ("ragscore: traces read as langchain (detected from the first record's keys; --trace-format langchain "
            "says so, --trace-format native reads them as the contract)\n") in auto.err


def test_an_unreadable_minority_is_counted_and_named(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [
        {"qid": "Q1", "answer": "30 days", "citations": ["d1"], "retrieved_ids": ["d1"]},
        {"qid": "Q2", "result": "Ada Lovelace", "retrieved_ids": ["d2"]},
        {"qid": "Q3", "answer": "not in context"},
    ])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail")
    assert run.status == 0
    assert run.json()["counts"]["unreadable"] == 1
    assert ('ragscore: 1 trace has no claim or refusal field (scored as empty answers; counts.unreadable): '
            't.jsonl:2: its keys are "qid", "result", "retrieved_ids": did you mean --map claim=result?\n') in run.err
    mapped = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--map", "claim=result", "--per-question")
    doc = mapped.json()
    # Mapped, the claim comes from "result" only: Q1's and Q3's "answer" are no longer read (the
    # mapping replaces the built-in lookup), so those two are unreadable now.
    assert doc["counts"]["unreadable"] == 2
    assert [q["label"] for q in doc["questions"]] == ["NO_CITATION_HIT", "NO_CITATION_HIT", "HALLUCINATION"]
    assert doc["settings"]["trace_fields"] == {"claim": "result"}
    assert '|trace_fields:{"claim": "result"}|' in doc["signature"]


def test_retrieved_entries_may_be_objects_and_one_without_an_id_is_noted(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [
        {"qid": "Q1", "answer": "30 days", "citations": ["d1"], "retrieved_ids": [{"doc_id": "d9"}, {"id": "d1"}]},
        {"qid": "Q2", "answer": "Ada Lovelace", "citations": ["d2"],
         "retrieved_ids": [{"document": {"id": "d2"}}, {"name": "untitled"}]},
        {"qid": "Q3", "answer": "not in context", "chunks": [{"doc_id": "d3", "text": "..."}]},
    ])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--per-question")
    doc = run.json()
    assert [q["label"] for q in doc["questions"]] == ["OK", "NO_CITATION_HIT", "REFUSAL_OK"]
    assert doc["counts"]["unreadable_retrieved"] == 1
    assert ("ragscore: 1 trace has a retrieved list with an entry that gives no id (read as nothing retrieved; "
            "entries that are objects need an id, doc_id or document.id, or --map document_id=PATH): t.jsonl, line 2\n") in run.err
    by_name = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--map", "document_id=name")
    # Read by "name" only, every list has an entry without one.
    assert by_name.json()["counts"]["unreadable_retrieved"] == 3


def test_near_miss_keys_are_noted_by_score(ragscore, isolated):
    gold = [dict(GOLD[0], gold_citation=GOLD[0]["gold_citations"]), *GOLD[1:]]
    del gold[0]["gold_citations"]
    write(isolated / "g.jsonl", gold)
    write(isolated / "t.jsonl", [{"qid": "Q1", "answer": "30 days", "citations": ["d1"], "retrieved_id": ["d1"]}])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "none")
    assert run.err.startswith(
        'ragscore: g.jsonl:1: "gold_citation" is not a field of the gold contract (ignored): did you mean '
        '"gold_citations"? (score checks the first 1,000 lines; ragscore validate checks every record)\n'
        'ragscore: t.jsonl:1: "retrieved_id" is not a field of the trace contract (ignored): did you mean '
        '"retrieved_ids"? (score checks the first 1,000 lines; ragscore validate checks every record)\n')


@pytest.mark.parametrize(("option", "message"), [
    ("claim=result..x", "--map \"claim=result..x\": expected a key, got '.' (quote keys that hold dots, brackets or "
                        "spaces: \"a.b\"), at character 8 of the path \"result..x\""),
    ("clam=result", '--map "clam=result": unknown concept "clam" (known: qid, question, claim, citations, '
                    'retrieved_ids, refused, retrieved_chunks, scores, document_id, latency_ms, tokens_in, tokens_out, cost, ts, '
                    'tool_calls); did you mean "claim"?'),
    ("result", '--map "result": expected CONCEPT=PATH, such as claim=result or '
               "retrieved_ids=source_documents[*].metadata.id"),
])
def test_a_bad_map_option_is_a_usage_error(ragscore, isolated, option, message):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [{"qid": "Q1", "answer": "x"}])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--map", option)
    assert (run.status, run.err) == (2, f"ragscore: error: {message}\n")


def test_a_concept_mapped_twice_is_a_usage_error(ragscore, isolated):
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--map", "claim=a", "--map", "claim=b")
    assert (run.status, run.err) == (2, 'ragscore: error: --map: claim is mapped twice ("a", then "b"); '
                                        "give each concept one path\n")


@pytest.mark.parametrize(("toml", "message"), [
    ('[trace.fields]\nclaim = "result"\nretrieved_ids = "docs[*"\n',
     "gates.toml:3: [trace.fields] expected [N] (a list index) or [*] (every element), at character 5 of the path "
     '"docs[*"'),
    ('[trace.fields]\nclaims = "result"\n',
     'gates.toml:2: [trace.fields] unknown concept "claims" (known: qid, question, claim, citations, retrieved_ids, '
     'refused, retrieved_chunks, scores, document_id, latency_ms, tokens_in, tokens_out, cost, ts, tool_calls); did '
     'you mean "claim"?'),
    ('[trace]\nformat = "langchian"\n',
     "gates.toml:2: [trace] expected one of auto, native, ragas, openinference, otel-genai, langchain, llamaindex, "
     "mlflow, got "
     '"langchian"; did you mean "langchain"?'),
    ('[trace]\nclaim = "result"\n',
     'gates.toml:2: [trace] unknown setting "claim" (map a field in [trace.fields])'),
    ('[gold.fields]\ngold_citations = 3\n',
     'gates.toml:2: [gold.fields] expected "gold_citations" to be a path string such as "metadata.id", got 3'),
])
def test_a_bad_mapping_in_gates_toml_is_an_error_at_its_line(ragscore, isolated, toml, message):
    (isolated / "gates.toml").write_text(toml, encoding="utf-8")
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [{"qid": "Q1", "answer": "x"}])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl")
    assert (run.status, run.err) == (2, f"ragscore: error: {message}\n")


def test_gold_fields_map_a_gold_set_in_another_shape(ragscore, isolated):
    write(isolated / "g.jsonl", [
        {"id": "Q1", "q": {"text": "What is the refund window?"}, "ok": True, "facts": "30 days", "refs": '["d1"]'},
        {"id": "Q2", "q": {"text": "Who founded the company?"}, "ok": True, "facts": ["Ada Lovelace"], "refs": ["d2"]},
        {"id": "Q3", "q": {"text": "What is the CEO's salary?"}, "ok": False},
    ])
    (isolated / "gates.toml").write_text(
        '[gold.fields]\nqid = "id"\nquestion = "q.text"\nanswerable = "ok"\ngold_claim_substr = "facts"\n'
        'gold_citations = "refs"\n', encoding="utf-8")
    write(isolated / "native.jsonl", GOLD)
    write(isolated / "t.jsonl", [
        {"qid": "Q1", "answer": "Within 30 days.", "citations": ["d1"], "retrieved_ids": ["d1"]},
        {"qid": "Q2", "answer": "Charles Babbage", "citations": ["d2"], "retrieved_ids": ["d2"]},
        {"qid": "Q3", "answer": "not in context"},
    ])
    mapped = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--per-question").json()
    (isolated / "gates.toml").unlink()
    native = ragscore("--gold", "native.jsonl", "--trace", "t.jsonl", "--no-fail", "--per-question").json()
    assert without_reading(mapped) == without_reading(native)
    assert mapped["settings"]["gold_fields"]["question"] == "q.text"
    assert [q["label"] for q in mapped["questions"]] == ["OK", "CLAIM_MISMATCH", "REFUSAL_OK"]


def test_a_mapped_gold_field_of_the_wrong_type_names_its_path(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": "Q1", "answerable": True, "refs": {"d1": 1}}])
    (isolated / "gates.toml").write_text('[gold.fields]\ngold_citations = "refs"\n', encoding="utf-8")
    write(isolated / "t.jsonl", [{"qid": "Q1", "answer": "x"}])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl")
    assert run.status == 2
    assert run.err == ('ragscore: error: g.jsonl:1:1: expected "refs" (read as gold_citations) to be a list of ids '
                       "(strings or integers), got an object\n")


def test_a_ragas_dataset_is_its_own_gold_set(ragscore, isolated):
    write(isolated / "data.jsonl", [
        {"user_input": "What is the refund window?", "retrieved_contexts": ["Refunds within 30 days."],
         "retrieved_context_ids": ["d1"], "response": "Refunds: 30 days.", "reference": "30 days",
         "reference_context_ids": ["d1"]},
        {"user_input": "Who founded it?", "retrieved_contexts": ["About us"], "retrieved_context_ids": ["d7"],
         "response": "Grace Hopper", "reference": "Ada Lovelace", "reference_context_ids": ["d2"]},
    ])
    doc = ragscore("--gold", "data.jsonl", "--trace", "data.jsonl", "--no-fail", "--per-question",
                   "--metrics", "retrieval").json()
    assert doc["settings"]["trace_format"] == "ragas"
    # The reference is the gold claim (its phrases) and the reference answer; the reference contexts
    # are the relevant documents (ragas samples cite nothing, so they are not citations to hit).
    assert [(q["qid"], q["label"]) for q in doc["questions"]] == [
        ("What is the refund window?", "OK"), ("Who founded it?", "CLAIM_MISMATCH")]
    assert doc["metrics"]["precision"] == 0.5
    assert doc["metrics"]["recall@1"] == 0.5


def test_the_ragas_csv_export_reads_its_list_cells(ragscore, isolated):
    (isolated / "data.csv").write_text(
        "user_input,retrieved_contexts,retrieved_context_ids,response,reference\n"
        "What is the refund window?,\"['Refunds within 30 days.', \"\"It's final.\"\"]\",['d1'],"
        "\"Refunds: 30 days.\",30 days\n"
        "Who founded it?,['About us'],\"['d7', 'd2']\",Grace Hopper,Ada Lovelace\n", encoding="utf-8")
    write(isolated / "g.jsonl", [
        {"qid": "Q1", "question": "What is the refund window?", "answerable": True, "gold_claim_substr": ["30 days"]},
        {"qid": "Q2", "question": "Who founded it?", "answerable": True, "gold_claim_substr": ["Ada Lovelace"],
         "gold_relevance": {"d2": 2}},
    ])
    doc = ragscore("--gold", "g.jsonl", "--trace", "data.csv", "--no-fail", "--per-question",
                   "--metrics", "retrieval").json()
    assert doc["settings"]["trace_format"] == "ragas"
    assert [q["label"] for q in doc["questions"]] == ["OK", "CLAIM_MISMATCH"]
    assert doc["metrics"]["recall@1"] == 0.0 and doc["metrics"]["recall@3"] == 1.0


# --- randomized: a mapped shape scores as the native one ----------------------------------------------

_ids = st.lists(st.sampled_from(["d1", "d2", "d3", "d4", 5]), max_size=4)
_traces = st.lists(
    st.fixed_dictionaries({
        "qid": st.sampled_from(["Q1", "Q2", "Q3", "Q4"]),
        "answer": st.sampled_from(["30 days", "Ada Lovelace", "not in context", "no idea", ""]),
        "citations": _ids,
        "retrieved_ids": _ids,
    }, optional={"refused": st.booleans()}),
    min_size=1, max_size=8,
)


def _foreign(trace: dict[str, Any], as_json: bool, wrap: bool) -> dict[str, Any]:
    """Write a native trace in a nested shape that a mapping reads back."""
    docs = [{"meta": {"doc.id": i}, "text": f"passage {i}"} for i in trace["retrieved_ids"]]
    out: dict[str, Any] = {
        "run": {"question_id": trace["qid"]},
        "outputs": [{"text": "draft"}, {"text": trace["answer"]}],
        "attributes": {"retrieval.documents": json.dumps(docs) if as_json else docs},
        "cited": json.dumps(trace["citations"]) if wrap else trace["citations"],
    }
    if "refused" in trace:
        out["flags"] = {"refused": trace["refused"]}
    return out


FOREIGN_MAP = ("qid=run.question_id", "claim=outputs[-1].text", "citations=cited", "refused=flags.refused",
               'retrieved_ids=attributes."retrieval.documents"[*].meta."doc.id"')


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(traces=_traces, as_json=st.booleans(), wrap=st.booleans())
def test_a_mapped_shape_scores_exactly_as_the_native_one(ragscore, isolated, traces, as_json, wrap):
    gold = [dict(GOLD[0], gold_citations=["d1", "5"]), GOLD[1], GOLD[2],
            {"qid": "Q4", "answerable": True, "gold_claim_substr": ["30 days"], "gold_citations": ["d3"]}]
    write(isolated / "g.jsonl", gold)
    write(isolated / "native.jsonl", traces)
    write(isolated / "foreign.jsonl", [_foreign(t, as_json, wrap) for t in traces])
    args = ["--gold", "g.jsonl", "--no-fail", "--per-question", "--metrics", "retrieval"]
    native = ragscore(*args, "--trace", "native.jsonl")
    maps = [option for pair in FOREIGN_MAP for option in ("--map", pair)]
    foreign = ragscore(*args, "--trace", "foreign.jsonl", "--trace-format", "native", *maps)
    assert native.status == foreign.status == 0, foreign.err
    mapped = without_reading(foreign.json())
    for question in mapped["questions"]:  # a reason names the field as the record has it
        question["reason"] = question["reason"].replace('the "flags.refused" field', 'the "refused" field')
    assert mapped == without_reading(native.json())


# --- validate reads what score reads -----------------------------------------------------------------

@pytest.mark.parametrize("name", ["native.jsonl", "ragas.jsonl", "ragas.csv", "langchain.jsonl",
                                  "openinference.jsonl", "otel-genai.jsonl"])
def test_validate_reads_every_shipped_format(ragscore, monkeypatch, name):
    from conftest import EXAMPLES

    monkeypatch.chdir(EXAMPLES / "formats")
    run = ragscore("validate", "--gold", "gold.jsonl", "--trace", name)
    assert run.status == 0
    assert run.out == f"{name}: warning: 1 gold question(s) have no trace: TP-07\n"


def test_validate_refuses_what_score_refuses(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [{"question": g["question"], "result": "x"} for g in GOLD])
    run = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl", "--trace-format", "native")
    assert run.status == 2
    assert ('t.jsonl:1: error: 3 of 3 traces have nothing ragscore reads (no claim, refusal, retrieved list, scores '
            'or tool calls; read as native format): its keys are "question", "result": did you mean --map '
            'claim=result?\n') in run.out
    assert ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl", "--map", "claim=result").status == 0


def test_validate_reads_a_ragas_dataset_as_its_own_gold_set(ragscore, monkeypatch):
    from conftest import EXAMPLES

    monkeypatch.chdir(EXAMPLES / "formats")
    run = ragscore("validate", "--gold", "ragas.jsonl", "--trace", "ragas.jsonl")
    assert (run.status, run.out) == (0, "")


def test_the_docs_examples_of_your_traces(ragscore, monkeypatch):
    from conftest import ROOT
    from docs import doc_section

    monkeypatch.chdir(ROOT)
    readme = doc_section("Your traces: formats and mapping")
    command, printed = readme.split("```console\n", 1)[1].split("```", 1)[0].strip().split("\n", 1)
    args = command.strip().removeprefix("$ ragscore ").split()
    run = ragscore(*args)
    assert run.status == 2 and run.err == printed.strip() + "\n"
    toml = readme.split("```toml\n", 1)[1].split("```", 1)[0]
    import tomllib

    tables = tomllib.loads(toml)
    from ragscore.input_config import GOLD_CONCEPTS
    from ragscore.loaders.fieldpath import parse_path
    from ragscore.loaders.shapes import TRACE_CONCEPTS

    for section, concepts in (("trace", TRACE_CONCEPTS), ("gold", GOLD_CONCEPTS)):
        for concept, path in tables[section]["fields"].items():
            assert concept in concepts
            parse_path(path)
    assert "at character 5 of the path \"docs[*\"`" in " ".join(readme.split())


def test_a_phoenix_spans_dataframe_written_as_json_lines(ragscore, isolated):
    # get_spans_dataframe().to_json(orient="records", lines=True): flattened columns, nulls for absent ones.
    spans = [
        {"context.trace_id": "t1", "context.span_id": "s1", "parent_id": None, "span_kind": "CHAIN",
         "attributes.input.value": GOLD[0]["question"], "attributes.output.value": "30 days. citations: [d1]",
         "attributes.retrieval.documents": None},
        {"context.trace_id": "t1", "context.span_id": "s2", "parent_id": "s1", "span_kind": "RETRIEVER",
         "attributes.input.value": GOLD[0]["question"], "attributes.output.value": None,
         "attributes.retrieval.documents": [{"document.id": "d1", "document.content": "Refunds: 30 days."}]},
    ]
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "spans.jsonl", spans)
    doc = ragscore("--gold", "g.jsonl", "--trace", "spans.jsonl", "--no-fail", "--per-question").json()
    assert doc["settings"]["trace_format"] == "openinference"
    assert [q["label"] for q in doc["questions"]] == ["OK", "MISSING_TRACE", "MISSING_TRACE"]


def test_compare_never_pairs_runs_read_differently_without_a_word(ragscore, monkeypatch, tmp_path):
    from conftest import EXAMPLES

    monkeypatch.chdir(EXAMPLES / "formats")
    base = ragscore("--gold", "gold.jsonl", "--trace", "native.jsonl", "--per-question", "--no-fail", "-q")
    (tmp_path / "base.json").write_text(base.out, encoding="utf-8")
    refused = ragscore("compare", "--gold", "gold.jsonl", "--trace", "langchain.jsonl",
                       "--baseline-report", str(tmp_path / "base.json"), "--format", "none")
    assert (refused.status, refused.err) == (2, f"ragscore: error: {tmp_path / 'base.json'}: the baseline report was "
                                                "scored with other settings (trace: native vs langchain)\n")
    mapped = ragscore("compare", "--gold", "gold.jsonl", "--trace", "native.jsonl", "--map", "claim=answer",
                      "--baseline-report", str(tmp_path / "base.json"), "--format", "none")
    assert mapped.status == 2 and 'trace_fields: {} vs {"claim": "answer"}' in mapped.err
    paired = ragscore("compare", "--gold", "gold.jsonl", "--trace", "langchain.jsonl", "--baseline", "native.jsonl",
                      "--format", "none")
    assert paired.status == 0
    assert paired.err.startswith("ragscore: the baseline's traces were read as native, the candidate's as langchain "
                                 "(--trace-format auto)\n")


# --- review fixes ------------------------------------------------------------------------------------

def test_unreadable_counts_do_not_depend_on_the_number_of_processes(ragscore, isolated):
    gold = [{"qid": f"Q{i}", "answerable": True, "gold_claim_substr": ["answer text"]} for i in range(60)]
    traces = [{"result": "x", "qid": f"Q{i}"} if i % 5 == 0 else {"qid": f"Q{i}", "answer": "answer text"}
              for i in range(60)]
    write(isolated / "g.jsonl", gold)
    write(isolated / "t.jsonl", traces)
    one = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--jobs", "1")
    three = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--jobs", "3")
    assert one.status == three.status == 0
    assert one.json()["counts"]["unreadable"] == 12
    assert one.out == three.out and one.err == three.err


@pytest.mark.parametrize("trace", [
    {"qid": "Q1", "answer": "30 days", "retrieved_ids": ["d1"], "context": {"trace_id": "abc"}},
    {"question": "What is the refund window?", "query": "refund window", "answer": "30 days", "chunks": ["d1"]},
])
def test_a_native_trace_with_other_keys_is_read_as_native(ragscore, isolated, trace):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [trace])
    doc = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--per-question").json()
    assert doc["settings"]["trace_format"] == "native"
    assert doc["questions"][0]["label"] == "NO_CITATION_HIT" and doc["counts"]["unknown_traces"] == 0


def test_an_error_in_traces_read_by_auto_names_the_format(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [{"query": "What is the refund window?", "result": "x"}, {"query": 3, "result": "y"}])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl")
    assert run.status == 2
    assert run.err.endswith("(read as langchain, detected from the first record; --trace-format names the format)\n")


def test_refusal_patterns_with_a_bar_keep_the_signature_apart(ragscore, monkeypatch, tmp_path):
    from conftest import EXAMPLES

    monkeypatch.chdir(EXAMPLES / "formats")
    off = tmp_path / "off.toml"
    off.write_text("[scoring]\nrefusal_patterns = []\n", encoding="utf-8")  # the command line's pattern alone
    base = ragscore("--gold", "gold.jsonl", "--trace", "native.jsonl", "--per-question", "--no-fail", "-q",
                    "--refusal-pattern", "zzz|i do not know", "--gates-file", str(off))
    assert 'refusal_patterns:["zzz\\u007ci do not know"]' in base.json()["signature"]
    (tmp_path / "base.json").write_text(base.out, encoding="utf-8")
    run = ragscore("compare", "--gold", "gold.jsonl", "--trace", "native.jsonl", "--baseline-report",
                   str(tmp_path / "base.json"), "--format", "none", "--gates-file", str(_patterns(tmp_path)))
    assert run.status == 2 and "refusal_patterns:" in run.err


def _patterns(folder):
    path = folder / "g2.toml"
    path.write_text('[scoring]\nrefusal_patterns = ["zzz|no idea"]\n', encoding="utf-8")
    return path


def test_otlp_spans_below_an_http_root_read_as_openinference(ragscore, isolated):
    def attrs(**values):
        return [{"key": k.replace("__", "."), "value": {"stringValue": v}} for k, v in values.items()]

    spans = [
        {"traceId": "t1", "spanId": "a", "parentSpanId": "", "name": "POST /ask", "attributes": attrs(http__method="POST")},
        {"traceId": "t1", "spanId": "b", "parentSpanId": "a", "name": "rag", "attributes": attrs(
            openinference__span__kind="CHAIN", input__value=GOLD[0]["question"],
            output__value="Within 30 days. citations: [d1]")},
        {"traceId": "t1", "spanId": "c", "parentSpanId": "b", "name": "retrieve", "attributes": [
            *attrs(openinference__span__kind="RETRIEVER"),
            {"key": "retrieval.documents.0.document.id", "value": {"stringValue": "d1"}}]},
    ]
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "otlp.jsonl", [{"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}])
    doc = ragscore("--gold", "g.jsonl", "--trace", "otlp.jsonl", "--no-fail", "--per-question").json()
    assert doc["settings"]["trace_format"] == "openinference"
    assert doc["questions"][0]["label"] == "OK"


def test_what_cannot_be_read_shows_in_every_report(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [
        {"qid": "Q1", "answer": "30 days", "citations": ["d1"], "retrieved_ids": [{"name": "x"}]},
        {"qid": "Q2", "result": "Ada Lovelace", "retrieved_ids": ["d2"]},
    ])
    md = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "markdown").out
    assert ("**Unreadable:** 1 trace had no claim or refusal field (scored as empty answers); 1 trace had a retrieved "
            "list with an entry that gives no id (read as nothing retrieved).\n") in md
    text = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "text").out
    assert text.splitlines()[0].endswith(", 1 unreadable, 1 with an unreadable retrieved list")
    ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "none", "--html", "r.html")
    page = (isolated / "r.html").read_text(encoding="utf-8")
    assert "unreadable traces" in page and "unreadable retrieved lists" in page


def test_a_mapping_that_finds_nothing_is_noted_and_a_collected_non_list_is_broken(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [{"qid": "Q1", "answer": "30 days", "docs": {"id": "d1"}}])
    typo = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "none",
                    "--map", "retrieved_ids=doc[*].id")
    assert ('ragscore: the mapping retrieved_ids="doc[*].id" found nothing in any of 1 trace (a typo in the path?)\n'
            in typo.err)
    broken = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--map", "retrieved_ids=docs[*].id")
    assert broken.json()["counts"]["unreadable_retrieved"] == 1


def test_validate_checks_scores_as_score_does(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [{"qid": "Q1", "answer": "30 days", "scores": {"judge": "high"}}])
    assert ragscore("--gold", "g.jsonl", "--trace", "t.jsonl").status == 2
    run = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl")
    assert run.status == 2
    assert 't.jsonl:1: error: expected "scores.judge" to be a number or null, got "high"\n' in run.out


def test_a_ragas_gold_set_says_how_it_was_read(ragscore, monkeypatch):
    from conftest import EXAMPLES

    monkeypatch.chdir(EXAMPLES / "formats")
    run = ragscore("--gold", "ragas.jsonl", "--trace", "ragas.jsonl", "--no-fail", "--format", "none")
    assert ('ragscore: the gold set was read as a ragas dataset: reference -> the gold claim and answer, '
            'reference_context_ids -> the relevant documents of --metrics retrieval (not citations: [gold.fields] '
            'gold_citations = "reference_context_ids" makes them citations)\n') in run.err


def test_a_near_miss_beside_its_field_is_a_field_of_its_own(ragscore, isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "t.jsonl", [{"qid": "Q1", "answer": "30 days", "scores": {"judge": 1}, "score": 0.3,
                                  "Citations": ["d1"]}])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "none")
    assert '"score"' not in run.err
    assert '"Citations" is not a field of the trace contract (ignored): did you mean "citations"?' in run.err
