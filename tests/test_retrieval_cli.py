"""The retrieval family end to end: enabling it, its means, text and similarity relevance."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import EXAMPLES, checked_report, write
from ragscore.cli import main

CUTOFFS = (1, 3, 5, 10)


def _run(tmp, gold, traces, *args):
    write(tmp / "g.jsonl", gold)
    write(tmp / "t.jsonl", traces)

    status = main(["--gold", str(tmp / "g.jsonl"), "--trace", str(tmp / "t.jsonl"), "--format", "none", "-q",
                   "--json", str(tmp / "r.json"), "--no-fail", *args])
    assert status == 0
    return checked_report((tmp / "r.json").read_text())


def test_family_is_off_by_default_and_on_by_option_config_or_gate(ragscore, isolated):
    gold, trace = EXAMPLES / "gold.jsonl", EXAMPLES / "trace.jsonl"
    assert "mrr" not in ragscore("--gold", gold, "--trace", trace).json()["metrics"]
    assert "mrr" in ragscore("--gold", gold, "--trace", trace, "--metrics", "retrieval").json()["metrics"]
    doc = ragscore("--gold", gold, "--trace", trace, "--gates", "ndcg@3>=0.5").json()
    assert doc["gates"]["ndcg@3"]["status"] == "pass" and doc["settings"]["metrics"] == ["answer", "retrieval"]
    write(isolated / "gates.toml", '[scoring]\nmetrics = ["all"]\ncutoffs = [2]\n')
    metrics = ragscore("--gold", gold, "--trace", trace).json()["metrics"]
    assert {"precision@2", "ndcg@2", "sim_recall@2"} <= set(metrics) and "ndcg@10" not in metrics


def test_unknown_family_is_a_usage_error(ragscore, isolated):
    run = ragscore("--gold", EXAMPLES / "gold.jsonl", "--trace", EXAMPLES / "trace.jsonl", "--metrics", "retreival")
    assert (run.status, run.err) == (
        2, 'ragscore: error: --metrics: unknown metric family "retreival" (known: answer, retrieval, similarity, text, grounding, evidence, tools, all); '
           'did you mean "retrieval"?\n')


def test_counted_questions_and_zero_for_missing_or_empty(tmp_path):
    gold = [
        {"qid": "a", "answerable": True, "gold_citations": ["d1", "d2"]},
        {"qid": "b", "answerable": True, "gold_relevance": {"d3": 2, "d4": 0, "d5": -1}},
        {"qid": "c", "answerable": True, "gold_citations": ["d6"]},     # no trace: counted, scores 0
        {"qid": "d", "answerable": True, "gold_citations": ["d7"]},     # empty retrieved list: 0
        {"qid": "e", "answerable": False, "gold_citations": ["d8"]},    # unanswerable: not counted
        {"qid": "f", "answerable": True, "gold_relevance": {"d9": 0}},  # nothing relevant: not counted
    ]
    traces = [
        {"qid": "a", "retrieved_ids": ["x", "d2", "d2", "d1"], "answer_json": {"claim": "c", "citations": []}},
        {"qid": "b", "retrieved_ids": ["d5", "d3"], "answer_json": {"claim": "c", "citations": []}},
        {"qid": "d", "retrieved_ids": [], "answer_json": {"claim": "c", "citations": []}},
        {"qid": "e", "retrieved_ids": ["d8"], "answer_json": {"claim": "c", "citations": []}},
        {"qid": "f", "retrieved_ids": ["d9"], "answer_json": {"claim": "c", "citations": []}},
    ]
    doc = _run(tmp_path, gold, traces, "--metrics", "retrieval", "--per-question")
    # a: d2 at rank 2, d1 at rank 3 (the repeated d2 takes no rank) -> MRR 1/2; b: d3 at rank 2 -> 1/2.
    assert doc["metrics"]["mrr"] == pytest.approx((1 / 2 + 1 / 2 + 0 + 0) / 4, abs=1e-12)
    assert doc["metrics"]["precision@1"] == 0.0
    assert doc["metrics"]["recall@3"] == pytest.approx((1 + 1 + 0 + 0) / 4, abs=1e-12)
    # AP: a = (1/2 + 2/3) / 2, b = 1/2.
    assert doc["metrics"]["map"] == pytest.approx(((1 / 2 + 2 / 3) / 2 + 1 / 2) / 4, abs=1e-12)
    # bpref: a has nothing graded 0 (citations), both retrieved: 1; b's d5 (grade -1) is skipped and
    # nothing graded 0 is above d3: 1. ndcg: a = (1/log2 3 + 1/log2 4) / (1 + 1/log2 3); b = (2/log2 3) / 2.
    assert doc["metrics"]["bpref"] == 0.5
    ndcg_a = (1 / math.log2(3) + 1 / 2) / (1 + 1 / math.log2(3))
    assert doc["metrics"]["ndcg"] == pytest.approx((ndcg_a + 1 / math.log2(3)) / 4, abs=1e-12)
    assert doc["metrics"]["map@1"] == 0.0 and doc["metrics"]["map@3"] == doc["metrics"]["map"]
    counted = [q["qid"] for q in doc["questions"] if q["metrics"]["mrr"] is not None]
    assert counted == ["a", "b", "c", "d"]
    for name in ("bpref", "ndcg", "map@10"):
        assert [q["metrics"][name] for q in doc["questions"]][4:] == [None, None], name  # e, f not counted
        assert doc["intervals"][name] is not None, name
    by_qid = {q["qid"]: q["metrics"] for q in doc["questions"]}
    assert (by_qid["a"]["bpref"], by_qid["b"]["bpref"], by_qid["c"]["bpref"], by_qid["d"]["bpref"]) == (1, 1, 0, 0)
    assert by_qid["b"]["ndcg"] == pytest.approx(1 / math.log2(3), abs=1e-15)


def test_judged_non_relevant_ids_lower_bpref(tmp_path):
    gold = [{"qid": "a", "answerable": True, "gold_relevance": {"r": 1, "s": 1, "n1": 0, "n2": 0, "n3": 0}}]
    traces = [{"qid": "a", "retrieved_ids": ["n1", "r", "u", "n2", "s"], "answer_json": {"claim": "c", "citations": []}}]
    metrics = _run(tmp_path, gold, traces, "--metrics", "retrieval", "--cutoffs", "2")["metrics"]
    # R = 2, N_J = 3 (grade 0), bound 2; u is unjudged. r: 1 - 1/2; s: 1 - 2/2 = 0 -> bpref = 1/4.
    assert metrics["bpref"] == 0.25
    assert metrics["map@2"] == pytest.approx((1 / 2) / 2) and metrics["map"] == pytest.approx((1 / 2 + 2 / 5) / 2)


def test_gates_on_bpref_ndcg_and_map_at_k(ragscore, isolated):
    gold, trace = EXAMPLES / "gold.jsonl", EXAMPLES / "trace.jsonl"
    doc = ragscore("--gold", gold, "--trace", trace, "--gates", "bpref>=0.5,ndcg>=0.9,map@3>=0.2", "--no-fail").json()
    assert doc["settings"]["metrics"] == ["answer", "retrieval"]  # a gate on them turns the family on
    statuses = {name: doc["gates"][name]["status"] for name in ("bpref", "ndcg", "map@3")}
    assert statuses == {"bpref": "pass", "ndcg": "fail", "map@3": "pass"}
    assert doc["metrics"]["ndcg"] == pytest.approx(doc["metrics"]["ndcg@10"])  # nothing ranked below 10 here
    run = ragscore("--gold", gold, "--trace", trace, "--gates", "bpre>=0.5")
    assert (run.status, run.err) == (2, 'ragscore: error: --gates: unknown metric "bpre"; did you mean "bpref"?\n')
    run = ragscore("--gold", gold, "--trace", trace, "--gates", "map@7>=0.5")
    assert run.status == 2 and 'metric "map@7" is not computed with these settings: add 7 to the cutoffs' in run.err


def test_relevance_by_chunk_text(tmp_path):
    gold = [{"qid": "a", "answerable": True, "gold_chunks": ["The Café opens at 9.", "Closed on Sundays."]}]
    traces = [{"qid": "a", "retrieved_chunks": ["Parking is free.", "the café opens at 9.", "CLOSED ON SUNDAYS."],
               "answer_json": {"claim": "c", "citations": []}}]
    metrics = _run(tmp_path, gold, traces, "--metrics", "retrieval")["metrics"]
    assert (metrics["mrr"], metrics["recall@3"], metrics["precision@3"]) == (0.5, 1.0, pytest.approx(2 / 3))


def test_similarity_relevance(tmp_path):
    gold = [{"qid": "a", "answerable": True, "gold_embeddings": [[1.0, 0.0], [0.0, 1.0]]}]
    traces = [{"qid": "a", "retrieved_embeddings": [[0.6, 0.8], [0.99, 0.1], [0.1, 0.99]],
               "answer_json": {"claim": "c", "citations": []}}]
    metrics = _run(tmp_path, gold, traces, "--metrics", "similarity", "--cutoffs", "1,2")["metrics"]
    # cos([0.6,0.8], gold) = 0.6 / 0.8 (0.8 matches the second gold item at threshold 0.8); the
    # second vector matches the first gold item, so both gold items are matched by the top 2.
    assert metrics["sim_precision@1"] == 1.0 and metrics["sim_recall@1"] == 0.5
    assert metrics["sim_recall@2"] == 1.0 and metrics["sim_precision@2"] == 1.0


def test_bad_gold_embeddings_are_an_input_error(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": "a", "answerable": True, "gold_embeddings": [[1, 2], [3]]}])
    run = ragscore("--gold", "g.jsonl", "--trace", EXAMPLES / "trace.jsonl")
    assert run.err == ('ragscore: error: g.jsonl:1:53: expected "gold_embeddings" to be a non-empty list of '
                       "equal-length, non-empty lists of numbers\n")


ids = st.sampled_from([f"d{i}" for i in range(12)])


@st.composite
def runs(draw):
    n = draw(st.integers(1, 6))
    gold, traces = [], []
    for i in range(n):
        grades = draw(st.dictionaries(ids, st.integers(-1, 3), min_size=1, max_size=5))
        gold.append({"qid": f"q{i}", "answerable": draw(st.booleans()) or True, "gold_relevance": grades})
        if draw(st.integers(0, 4)):
            traces.append({"qid": f"q{i}", "retrieved_ids": draw(st.lists(ids, max_size=12)),
                           "answer_json": {"claim": "c", "citations": []}})
    if not traces:  # a run of no trace records is an input error: one that joins no question keeps every one untraced
        traces.append({"qid": "unknown", "retrieved_ids": [], "answer_json": {"claim": "c", "citations": []}})
    return gold, traces


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(runs())
def test_means_equal_pytrec_eval(tmp_path_factory, case):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    gold, traces = case
    doc = _run(tmp_path_factory.mktemp("r"), gold, traces, "--metrics", "retrieval")
    qrels = {g["qid"]: g["gold_relevance"] for g in gold if any(v >= 1 for v in g["gold_relevance"].values())}
    if not qrels:
        assert doc["metrics"]["mrr"] is None
        return
    run = {}
    for t in traces:
        ranked = list(dict.fromkeys(t["retrieved_ids"]))
        run[t["qid"]] = {doc_id: float(len(ranked) - r) for r, doc_id in enumerate(ranked)}
    measures = {"map", "recip_rank", "Rprec", "bpref", "ndcg", "P.1,3,5,10", "recall.1,3,5,10", "ndcg_cut.1,3,5,10",
                "map_cut.1,3,5,10"}
    scored = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate({q: r for q, r in run.items() if r})
    pairs = {"mrr": "recip_rank", "map": "map", "rprec": "Rprec", "bpref": "bpref", "ndcg": "ndcg"}
    pairs.update({f"{ours}@{k}": f"{theirs}_{k}" for k in CUTOFFS
                  for ours, theirs in (("precision", "P"), ("recall", "recall"), ("ndcg", "ndcg_cut"),
                                       ("map", "map_cut"))})
    for ours, theirs in pairs.items():
        # Questions with no trace or nothing retrieved score 0 (pytrec_eval leaves them out).
        expected = math.fsum(scored[q][theirs] for q in scored) / len(qrels)
        assert doc["metrics"][ours] == pytest.approx(expected, abs=1e-9), ours
