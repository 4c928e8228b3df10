"""Loaders: both trace shapes, field aliases, ids, and streaming in memory bounded by the gold set."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from conftest import write
from ragscore.evaluate import evaluate
from ragscore.loaders.gold import load_gold
from ragscore.loaders.trace import Cites, parse_text_citations, parse_trace
from ragscore.settings import Settings


def view(obj):
    return parse_trace(obj, "t.jsonl", 1)


def test_answer_json_shape():
    v = view({"q_id": 12, "retrieved_ids": ["a", 3], "answer_json": {"claim": "x", "citations": ["a"], "refused": False}})
    assert (v.qid, tuple(v.retrieved), v.claim, tuple(v.citations), v.cites, v.refused) == ("12", ("a", "3"), "x", ("a",), Cites.LIST, False)
    assert (v.citations_from, v.refused_from) == ("answer_json.citations", "answer_json.refused")


def test_top_level_refused_wins_over_answer_json():
    v = view({"qid": "a", "refused": True, "answer_json": {"claim": "x", "refused": False}})
    assert (v.refused, v.refused_from) == (True, "refused")


def test_answer_text_shape_parses_and_removes_the_citation_list():
    v = view({"q": "Why?", "chunks": [{"id": "d1"}, {"id": 2}, "d3"],
              "answer": "It is blue. Citations: ['d1', \"d3\",  `2`]"})
    assert (v.qid, v.question, tuple(v.retrieved)) == (None, "Why?", ("d1", "2", "d3"))
    assert (v.claim, v.citations, v.cites, v.citations_from) == ("It is blue.", ("d1", "d3", "2"), Cites.LIST, "answer text")


def test_a_chunk_without_an_id_makes_the_list_unreadable_in_both_shapes():
    assert view({"qid": "a", "chunks": [{"id": "d1"}, {"text": "no id"}, {"id": "d3"}]}).retrieved == ()
    assert view({"qid": "a", "retrieved_ids": ["d1", None, "d3"]}).retrieved == ()


def test_fields_are_taken_one_by_one_from_either_shape():
    v = view({"qid": "a", "answer_json": {"citations": ["d1"]}, "answer": "From the top level."})
    assert (v.claim, v.claim_from, tuple(v.citations), v.citations_from) == (
        "From the top level.", "answer", ("d1",), "answer_json.citations")
    v = view({"qid": "a", "answer_json": {"claim": "Inside."}, "citations": ["d2"]})
    assert (v.claim, tuple(v.citations), v.citations_from) == ("Inside.", ("d2",), "citations")


def test_text_citations_edge_cases():
    assert parse_text_citations("citations: []") == ((), "")
    assert parse_text_citations("no list here") == (None, "no list here")
    assert parse_text_citations("a CITATIONS:[x y,z] b citations: [w]") == (("x", "y", "z"), "a  b citations: [w]")


@pytest.mark.parametrize(
    ("obj", "cites"),
    [
        ({"qid": "a", "answer_json": {"claim": "x"}}, Cites.ABSENT),
        ({"qid": "a", "answer_json": {"claim": "x", "citations": None}}, Cites.ABSENT),
        ({"qid": "a", "answer_json": {"claim": "x", "citations": "d1"}}, Cites.INVALID),
        ({"qid": "a", "answer_json": {"claim": "x", "citations": ["d1", None]}}, Cites.INVALID),
        ({"qid": "a", "answer_json": {"claim": "x", "citations": [1, 2]}}, Cites.LIST),
        ({"qid": "a", "answer": "x", "citations": ["d1"]}, Cites.LIST),
        ({"qid": "a", "answer": "x", "citations": {"d1": 1}}, Cites.INVALID),
        ({"qid": "a", "answer": "x"}, Cites.ABSENT),
    ],
)
def test_citation_states(obj, cites):
    assert view(obj).cites is cites


def test_shape_faults_are_scored_not_rejected():
    v = view({"qid": "a", "retrieved_ids": "d1", "answer_json": {"claim": 42}})
    assert (v.retrieved, v.claim, v.claim_from, v.cites) == ((), "", None, Cites.ABSENT)
    assert view({"qid": "a", "answer_json": "oops"}).claim == ""


def test_gold_aliases_and_items_without_qid(tmp_path):
    path = write(tmp_path / "g.json", json.dumps([
        {"q": "Where?", "answerable": True, "gold_ids": ["d1", 7], "gold_claim": "In Paris."},
        {"qid": 5, "question": "When?", "answerable": False, "tags": {"lang": "en"}},
    ]))
    gold = load_gold(str(path))
    first, second = gold.items
    assert (first.qid, first.question, tuple(first.citations), first.needles) == ("Where?", "Where?", ("d1", "7"), ("in paris",))
    assert (second.qid, second.extra, gold.places[1] >> 32) == ("5", None, 1)
    assert load_gold(str(path), keep=frozenset({"extra"})).items[1].extra == {"tags": {"lang": "en"}}
    assert gold.index_of_question("When?") == 1 and gold.index_of_question("Who?") is None


def _peak(gold_path, trace_path) -> int:
    tracemalloc.start()
    try:
        evaluate(str(gold_path), str(trace_path), Settings())
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_follows_the_gold_set_not_the_trace_file(tmp_path):
    n = 2000
    gold = write(tmp_path / "g.jsonl", [{"qid": f"q{i}", "answerable": i % 5 > 0, "gold_citations": [f"d{i}"],
                                         "gold_claim_substr": [f"answer {i}"]} for i in range(n)])
    lines = [json.dumps({"qid": f"q{i}", "retrieved_ids": [f"d{j}" for j in range(i, i + 20)],
                         "answer_json": {"claim": f"The answer {i} is here. " * 5, "citations": [f"d{i}"]}}) + "\n"
             for i in range(n)]
    once = write(tmp_path / "once.jsonl", "".join(lines))
    ten_times = write(tmp_path / "ten.jsonl", "".join(lines) * 10)
    small, large = _peak(gold, once), _peak(gold, ten_times)
    assert large < 1.25 * small, (small, large)
