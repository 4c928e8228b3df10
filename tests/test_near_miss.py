"""Keys one edit, a plural, a case or a separator away from a contract field: near_miss, and `validate` on them."""

from __future__ import annotations

import json

import pytest

from conftest import EXAMPLES, write
from ragscore.loaders.fields import CONTRACT_FIELDS
from ragscore.loaders.jsonl import key_index, value_index
from ragscore.loaders.near_miss import (
    GOLD_FIELDS,
    TRACE_FIELDS,
    key_note,
    near_miss,
    one_edit,
    unknown_key_notes,
)

EXAMPLES_GOLD, EXAMPLES_TRACE = EXAMPLES / "gold.jsonl", EXAMPLES / "trace.jsonl"

# --- near_miss -----------------------------------------------------------------------------------


def test_the_contracts():
    assert GOLD_FIELDS == CONTRACT_FIELDS == {
        "qid", "question", "q", "answerable", "gold_claim_substr", "gold_claim", "gold_citations", "gold_ids",
        "gold_relevance", "gold_answers", "forbidden_substr", "gold_chunks", "gold_embeddings", "gold_spans",
        "gold_tool_calls", "tool_match", "gold_arguments_match"}
    assert TRACE_FIELDS == {"qid", "q_id", "q", "question", "answer", "answer_json", "citations", "refused",
                            "retrieved_ids", "chunks", "retrieved_chunks", "retrieved_embeddings", "scores", "tool_calls"}


@pytest.mark.parametrize(("key", "field"), [
    # singular and plural
    ("gold_citation", "gold_citations"),
    ("gold_answer", "gold_answers"),
    ("gold_chunk", "gold_chunks"),
    ("gold_embedding", "gold_embeddings"),
    ("gold_span", "gold_spans"),
    ("gold_tool_call", "gold_tool_calls"),
    ("gold_claims", "gold_claim"),
    ("gold_id", "gold_ids"),
    ("forbidden_subst", "forbidden_substr"),
    ("questions", "question"),
    ("qids", "qid"),
    # one edit: inserted, deleted, replaced, swapped
    ("gold_citatoins", "gold_citations"),
    ("gold_citaions", "gold_citations"),
    ("gold_citetions", "gold_citations"),
    ("gold_citationss", "gold_citations"),
    ("answerabel", "answerable"),
    ("anserable", "answerable"),
    ("gold_claim_subtr", "gold_claim_substr"),
    ("gold_relevence", "gold_relevance"),
    ("qestion", "question"),
    ("quid", "qid"),
    # case, surrounding white space, "-" or a space for "_"
    ("answerable ", "answerable"),
    (" answerable", "answerable"),
    ("answerable\t", "answerable"),
    ("Answerable", "answerable"),
    ("Gold-Citations", "gold_citations"),
    ("gold citations", "gold_citations"),
    ("GOLD_CLAIM_SUBSTR", "gold_claim_substr"),
    ("QID", "qid"),
    ("Q", "q"),
    ("qid ", "qid"),
    (" q ", "q"),
    # both at once
    ("Gold-Citation", "gold_citations"),
    ("gold citation ", "gold_citations"),
])
def test_gold_near_misses(key, field):
    assert near_miss(key, GOLD_FIELDS) == field


@pytest.mark.parametrize(("key", "field"), [
    ("retrieved_id", "retrieved_ids"),
    ("retrieved_idss", "retrieved_ids"),
    ("retreived_ids", "retrieved_ids"),
    ("Retrieved-IDs", "retrieved_ids"),
    ("retrieved_chunk", "retrieved_chunks"),
    ("retrieved_embedding", "retrieved_embeddings"),
    ("citation", "citations"),
    ("Citations", "citations"),
    ("answers", "answer"),
    ("Answer", "answer"),
    ("answer-json", "answer_json"),
    ("answer_jsn", "answer_json"),
    ("chunk", "chunks"),
    ("refuse", "refused"),
    ("refused ", "refused"),
    ("score", "scores"),
    ("q-id", "q_id"),
    ("Q_ID", "q_id"),
])
def test_trace_near_misses(key, field):
    assert near_miss(key, TRACE_FIELDS) == field


@pytest.mark.parametrize("key", sorted(GOLD_FIELDS))
def test_a_gold_field_is_never_a_near_miss(key):
    assert near_miss(key, GOLD_FIELDS) is None


@pytest.mark.parametrize("key", sorted(TRACE_FIELDS))
def test_a_trace_field_is_never_a_near_miss(key):
    assert near_miss(key, TRACE_FIELDS) is None


@pytest.mark.parametrize("key", [
    # the extra fields gold sets carry for slicing
    "category", "tags", "lang", "language", "source", "difficulty", "id", "notes", "metadata", "topic", "type",
    "domain", "split", "created_at", "author", "reference", "ground_truth", "context", "contexts", "answer",
    "answers", "doc_id", "question_id", "query", "label", "level", "gold", "claim", "citations",
    # too short to tell a typo from a field of one's own: exact case and white space only
    "qd", "qi", "id", "q_", "Qi", "ids", "a", "",
])
def test_common_gold_extras_are_no_near_misses(key):
    assert near_miss(key, GOLD_FIELDS) is None


@pytest.mark.parametrize("key", [
    "latency_ms", "model", "tokens", "cost", "trace_id", "timestamp", "run_id", "span_id", "prompt", "response",
    "user_input", "contexts", "retrieved_contexts", "source_documents", "documents", "metadata", "usage",
    "duration", "error", "status", "input", "output", "query", "result", "sources", "id", "qd", "ts", "temperature",
    "gold_citations", "answerable", "retrieved_scores", "reranked_ids",
])
def test_common_trace_extras_are_no_near_misses(key):
    assert near_miss(key, TRACE_FIELDS) is None


def test_a_key_one_edit_from_two_fields_is_no_near_miss():
    # "quid" is one edit from "qid" and (replacing u) from "q_id"; "qidd" from "qid" only.
    assert near_miss("quid", TRACE_FIELDS) is None
    assert near_miss("qiid", TRACE_FIELDS) is None
    assert near_miss("quid", GOLD_FIELDS) == "qid"
    assert near_miss("qidd", TRACE_FIELDS) == "qid"
    assert near_miss("ab", {"abc", "abd"}) is None
    assert near_miss("abcx", {"abcd", "abce"}) is None


def test_neighbours_within_the_contract():
    # q, qid and q_id, gold_claim and gold_claim_substr are all fields: none suggests another.
    assert near_miss("gold_claim_subst", GOLD_FIELDS) == "gold_claim_substr"
    assert near_miss("gold_claim_", GOLD_FIELDS) == "gold_claim"
    assert near_miss("q_id", TRACE_FIELDS) is None
    assert near_miss("q_id", GOLD_FIELDS) == "qid"  # the gold contract has no q_id: a gold item's id is "qid"
    assert near_miss("qi", TRACE_FIELDS) is None
    assert near_miss("id", TRACE_FIELDS) is None


def test_known_may_be_any_collection():
    assert near_miss("colour", ["color", "size"]) == "color"
    assert near_miss("Size", ("color", "size")) == "size"
    assert near_miss("weight", {"color", "size"}) is None
    assert near_miss("color", []) is None


def test_a_long_key_costs_little():
    assert near_miss("x" * 1_000_000, GOLD_FIELDS) is None
    assert near_miss(" " * 100 + "gold_citation" + " " * 100, GOLD_FIELDS) == "gold_citations"


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("abcd", "abcd", False), ("abcd", "abc", True), ("abc", "abcd", True), ("abcd", "xbcd", True),
    ("abcd", "abdc", True), ("abcd", "bacd", True), ("abcd", "badc", False), ("abcd", "ab", False),
    ("abcd", "acbd", True), ("abcd", "abxy", False), ("", "a", True), ("", "", False), ("ab", "ba", True),
    ("abc", "cba", False),
])
def test_one_edit(a, b, expected):
    assert one_edit(a, b) is expected
    assert one_edit(b, a) is expected


# --- messages ------------------------------------------------------------------------------------


def test_key_note():
    assert key_note("gold_citation", "gold_citations", "gold") == (
        '"gold_citation" is not a field of the gold contract: did you mean "gold_citations"?')
    assert key_note("answerable ", "answerable", "gold") == (
        '"answerable " is not a field of the gold contract: did you mean "answerable"?')
    assert key_note("retrieved_id", "retrieved_ids", "trace") == (
        '"retrieved_id" is not a field of the trace contract: did you mean "retrieved_ids"?')
    # control characters are escaped, quotes too: the note stays one line
    assert key_note("answerable\n", "answerable", "gold") == (
        '"answerable\\n" is not a field of the gold contract: did you mean "answerable"?')
    assert key_note('Gold"citations', "gold_citations", "gold").startswith('"Gold\\"citations" is not')


def test_unknown_key_notes_are_sorted_and_each_key_once():
    keys = ["zzz", "retrieved_id", "qid", "Answer", "latency_ms", "retrieved_id", "citation"]
    assert unknown_key_notes(keys, TRACE_FIELDS, "trace") == [
        '"Answer" is not a field of the trace contract: did you mean "answer"?',
        '"citation" is not a field of the trace contract: did you mean "citations"?',
        '"retrieved_id" is not a field of the trace contract: did you mean "retrieved_ids"?',
    ]
    assert unknown_key_notes(iter(["gold_citation", "category"]), GOLD_FIELDS, "gold") == [
        '"gold_citation" is not a field of the gold contract: did you mean "gold_citations"?']
    assert unknown_key_notes([], GOLD_FIELDS, "gold") == []
    assert unknown_key_notes(GOLD_FIELDS, GOLD_FIELDS, "gold") == []


def test_key_index_finds_the_key_itself():
    text = '{"a": {"gold_citation": 1}, "gold_citation" : [1], "b": "\\"gold_citation\\": 2"}'
    assert text[key_index(text, "gold_citation"):].startswith('"gold_citation" : [1]')
    assert text[value_index(text, "gold_citation"):].startswith("[1]")
    assert key_index(text, "nope") is None
    escaped = '{"gold\\u005fcitation": 1}'
    assert key_index(escaped, "gold_citation") == 1


# --- validate ------------------------------------------------------------------------------------

GOOD_GOLD = {"qid": "Q1", "question": "What?", "answerable": True, "gold_citations": ["d1"],
             "gold_claim_substr": ["long enough"]}
GOOD_TRACE = {"qid": "Q1", "retrieved_ids": ["d1"], "answer_json": {"claim": "long enough", "citations": ["d1"]}}


def test_validate_reports_a_near_miss_once_per_key_with_a_count(ragscore, isolated):
    gold = [{**GOOD_GOLD, "qid": f"Q{n}"} for n in range(1, 46)]
    for item in gold[2:44]:
        item["gold_citation"] = item.pop("gold_citations")
    gold[4]["answerable "] = gold[4].pop("answerable")
    gold[5]["category"] = "billing"  # an extra field of one's own: fine
    write(isolated / "g.jsonl", gold)
    run = ragscore("validate", "--gold", "g.jsonl", "-q")
    column = column_of(gold[2], "gold_citation")
    assert run.status == 2
    assert run.out.splitlines() == [
        f'g.jsonl:3:{column}: error: "gold_citation" is not a field of the gold contract: did you mean '
        '"gold_citations"? (and 41 more records)',
        "g.jsonl:5:1: error: missing required field \"answerable\" (true or false)",
        f'g.jsonl:5:{column_of(gold[4], "answerable ")}: error: "answerable " is not a field of the '
        'gold contract: did you mean "answerable"?',
    ]
    assert run.err == ""


def test_validate_near_misses_in_traces(ragscore, isolated):
    write(isolated / "g.jsonl", [GOOD_GOLD, {**GOOD_GOLD, "qid": "Q2"}])
    write(isolated / "t.jsonl", b'{"qid": "Q1", "retrieved_id": ["d1"], "answer_json": {"claim": "long enough", '
                                b'"citations": ["d1"]}, "latency_ms": 5}\n'
                                b'{"qid": "Q2", "retrieved_id": ["d1"], "Answer": "long enough", "model": "m"}\n')
    run = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl", "-q")
    assert run.status == 2
    assert run.out.splitlines() == [
        't.jsonl:1:15: error: "retrieved_id" is not a field of the trace contract: did you mean "retrieved_ids"? '
        "(and 1 more record)",
        't.jsonl:2:39: error: "Answer" is not a field of the trace contract: did you mean "answer"?',
    ]
    assert run.err == ""


def column_of(record: dict, key: str) -> int:
    """The column of a key in a record written by ``write``."""
    return 1 + json.dumps(record).index(json.dumps(key) + ":")


def test_lenient_makes_near_misses_warnings(ragscore, isolated):
    gold, trace = {**GOOD_GOLD, "Gold-Citations": ["d2"]}, {**GOOD_TRACE, "citation": ["d1"]}
    write(isolated / "g.jsonl", [gold])
    write(isolated / "t.jsonl", [trace])
    run = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl", "--lenient")
    assert run.status == 0
    assert run.out.splitlines() == [
        f'g.jsonl:1:{column_of(gold, "Gold-Citations")}: warning: "Gold-Citations" is not a field of the gold contract: '
        'did you mean "gold_citations"?',
        f't.jsonl:1:{column_of(trace, "citation")}: warning: "citation" is not a field of the trace contract: '
        'did you mean "citations"?',
    ]
    assert run.err == "ragscore: 0 errors, 2 warnings\n"
    strict = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl")
    assert strict.status == 2
    assert [line.split(": ")[1] for line in strict.out.splitlines()] == ["error", "error"]
    assert ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl", "--lenient", "-q").out == ""


def test_validate_near_miss_in_a_json_array_has_its_line_and_column(ragscore, isolated):
    write(isolated / "g.json", '[\n  {"qid": "Q1", "question": "What?",\n   "answerable": true,\n'
                               '   "gold_citation": ["d1"], "gold_claim_substr": ["long enough"]}\n]\n')
    run = ragscore("validate", "--gold", "g.json", "-q")
    assert run.status == 2
    assert run.out == 'g.json:4:4: error: "gold_citation" is not a field of the gold contract: did you mean "gold_citations"?\n'


def test_validate_quotes_a_key_with_control_characters(ragscore, isolated):
    # (a typo of a field the record lacks: one beside its field may be a field of its own)
    first = {key: value for key, value in GOOD_GOLD.items() if key != "gold_citations"} | {"gold_citation\u001b": ["d1"]}
    second = {**GOOD_GOLD, "qid": "Q2", "answerable\n": 1}
    write(isolated / "g.jsonl", [first, second])
    at_first, at_second = column_of(first, "gold_citation\u001b"), column_of(second, "answerable\n")
    run = ragscore("validate", "--gold", "g.jsonl", "-q")
    assert run.status == 2
    assert run.out.splitlines() == [
        f'g.jsonl:1:{at_first}: error: "gold_citation\\x1b" is not a field of the '
        'gold contract: did you mean "gold_citations"?',
        f'g.jsonl:2:{at_second}: error: "answerable\\n" is not a field of the gold '
        'contract: did you mean "answerable"?',
    ]


def test_no_near_miss_for_extra_fields(ragscore, isolated):
    extras = {"category": "a", "tags": ["x"], "lang": "en", "source": "s", "difficulty": 2, "id": 7, "notes": "",
              "metadata": {"gold_citation": 1}}
    write(isolated / "g.jsonl", [{**GOOD_GOLD, **extras}])
    write(isolated / "t.jsonl", [{**GOOD_TRACE, "latency_ms": 3, "model": "m", "tokens": 5, "cost": 0.1,
                                  "trace_id": "t", "timestamp": "2024-01-01", "answer_json": {"claim": "long enough",
                                  "citations": ["d1"], "citation": "nested keys are not checked"}}])
    run = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl")
    assert (run.status, run.out, run.err) == (0, "", "ragscore: 0 errors, 0 warnings\n")


# --- validate: nothing joins ----------------------------------------------------------------------


def test_no_trace_joins_by_qid(ragscore, isolated):
    write(isolated / "g.jsonl", [GOOD_GOLD, {**GOOD_GOLD, "qid": "Q2"}, {**GOOD_GOLD, "qid": "Q3"}])
    write(isolated / "t.jsonl", [{**GOOD_TRACE, "qid": "a"}, {**GOOD_TRACE, "qid": "b"}, {**GOOD_TRACE, "qid": "c"}])
    run = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl")
    assert run.status == 2
    assert run.out.splitlines() == [
        't.jsonl: error: no trace joins a gold question: the traces\' qids (first: "a", "b") match none of the gold '
        'set\'s (first: "Q1", "Q2")',
        "t.jsonl: warning: 3 gold question(s) have no trace: Q1, Q2, Q3",
        "t.jsonl:1: warning: the trace matches no gold question (ignored)",
        "t.jsonl:2: warning: the trace matches no gold question (ignored)",
        "t.jsonl:3: warning: the trace matches no gold question (ignored)",
    ]
    assert run.err == "ragscore: 1 error, 4 warnings\n"
    quiet = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl", "-q")
    assert (quiet.status, quiet.out.count("\n"), quiet.err) == (2, 1, "")
    # --lenient does not change it: nothing would be scored
    assert ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl", "--lenient").status == 2


def test_no_trace_joins_by_question_text(ragscore, isolated):
    write(isolated / "g.jsonl", [GOOD_GOLD, {**GOOD_GOLD, "qid": "Q2", "question": "Why?"}])
    write(isolated / "t.jsonl", [{"question": "what?", "answer": "x"}, {"question": "what?", "answer": "y"},
                                 {"q": "When?\n", "answer": "z"}])
    run = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl", "-q")
    assert run.status == 2
    assert run.out == ('t.jsonl: error: no trace joins a gold question: the traces\' question texts (first: "what?", '
                       '"When?\\n") match none of the gold set\'s (first: "What?", "Why?")\n')


def test_no_trace_joins_either_way(ragscore, isolated):
    write(isolated / "g.jsonl", [{k: v for k, v in GOOD_GOLD.items() if k != "question"}])
    write(isolated / "t.jsonl", [{"qid": "x", "answer": "x"}, {"question": "What?", "answer": "y"}])
    run = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl", "-q")
    assert run.status == 2
    assert run.out == ('t.jsonl: error: no trace joins a gold question: the traces\' qids (first: "x") match none of the '
                       'gold set\'s (first: "Q1"); the traces\' question texts (first: "What?") match none of the gold '
                       "set's (it has none)\n")


def test_an_empty_trace_file_joins_nothing(ragscore, isolated):
    write(isolated / "g.jsonl", [GOOD_GOLD])
    write(isolated / "t.jsonl", "\n")
    run = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl")
    assert run.status == 2
    assert run.out.splitlines() == [
        "t.jsonl: error: no trace joins a gold question: the file holds no trace",
        "t.jsonl: warning: 1 gold question(s) have no trace: Q1",
    ]


def test_unreadable_traces_are_errors_already(ragscore, isolated):
    write(isolated / "g.jsonl", [GOOD_GOLD])
    write(isolated / "t.jsonl", "{oops\n[1]\n")
    run = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl", "-q")
    assert run.status == 2
    assert "no trace joins" not in run.out and run.out.count("error:") == 2


def test_one_trace_joining_is_enough(ragscore, isolated):
    write(isolated / "g.jsonl", [GOOD_GOLD, {**GOOD_GOLD, "qid": "Q2"}])
    write(isolated / "t.jsonl", [{**GOOD_TRACE, "qid": "zz"}, GOOD_TRACE])
    run = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl")
    assert run.status == 0
    assert run.err == "ragscore: 0 errors, 2 warnings\n"


def test_the_docs_examples(ragscore, isolated):
    from docs import doc_text

    readme = " ".join(doc_text().split())
    gold = [{"qid": f"Q{n}", "question": "What?", "answerable": True, "gold_citation": ["d1"],
             "gold_claim_substr": ["long enough"]} for n in range(1, 46)]
    gold[0]["gold_citations"] = gold[0].pop("gold_citation")
    gold[1]["gold_citations"] = gold[1].pop("gold_citation")
    gold[44]["gold_citations"] = gold[44].pop("gold_citation")
    write(isolated / "g.jsonl", gold)
    write(isolated / "t.jsonl", [{"qid": "a", "answer": "x"}, {"qid": "b", "answer": "y"}])
    run = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl", "-q")
    assert run.status == 2
    lines = run.out.splitlines()
    assert lines[0] == ('g.jsonl:3:56: error: "gold_citation" is not a field of the gold contract: did you mean '
                        '"gold_citations"? (and 41 more records)')
    assert lines[1] == ('t.jsonl: error: no trace joins a gold question: the traces\' qids (first: "a", "b") match '
                        'none of the gold set\'s (first: "Q1", "Q2")')
    for line in lines:
        assert f"`{line}`" in readme
    repeated = ragscore("--trace", "t.jsonl", "--gold", "a.jsonl", "--gold", "b.jsonl")
    assert f"`{repeated.err.strip()}`" in readme
    unseen = ragscore("--gold", EXAMPLES_GOLD, "--trace", EXAMPLES_TRACE, "--gates", "latency_ms=1500", "--format", "none")
    line = next(line for line in unseen.err.splitlines() if "latency_ms" in line)
    assert f"`{line.removeprefix('ragscore: ')}`" in readme
