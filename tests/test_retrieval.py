"""Retrieval metrics against trec_eval: shared vectors, trec_eval's own test data, pytrec_eval."""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragscore.metrics.retrieval import (
    cosine,
    retrieval_metric_names,
    retrieval_values,
    similarity_metric_names,
    similarity_values,
    text_relevance,
)

DATA = Path(__file__).resolve().parent / "data"
TREC = DATA / "trec_eval_test"
VECTORS = json.loads((DATA / "ir_vectors.json").read_text(encoding="utf-8"))

# trec_eval measure stem -> ragscore metric stem ("P_5" -> "precision@5", "map" -> "map").
TREC_TO_OURS = {
    "P": "precision",
    "recall": "recall",
    "ndcg_cut": "ndcg",
    "success": "hit",
    "map": "map",
    "recip_rank": "mrr",
    "Rprec": "rprec",
}
# Measures the shared vectors do not hold: checked against trec_eval's own output and pytrec_eval.
TREC_TO_OURS_MORE = {"map_cut": "map", "ndcg": "ndcg", "bpref": "bpref"}
_MEASURE_RE = re.compile(r"^(?P<stem>[A-Za-z_]+?)(?:_(?P<k>[0-9]+))?$")


def ours(measure: str) -> str:
    """Map a trec_eval measure name (``ndcg_cut_5``) to ours (``ndcg@5``)."""
    match = _MEASURE_RE.match(measure)
    assert match is not None, measure
    stem, k = match.group("stem"), match.group("k")
    return (TREC_TO_OURS | TREC_TO_OURS_MORE)[stem] + (f"@{k}" if k else "")


def cutoffs_of(measures: Sequence[str]) -> tuple[int, ...]:
    """Return the cutoffs named by trec_eval measures, ascending."""
    return tuple(sorted({int(k) for m in measures if (k := _MEASURE_RE.match(m).group("k"))}))


def trec_order(scores: Mapping[str, float]) -> list[str]:
    """Rank a scored run the way trec_eval does: score descending, ties by docno descending."""
    # Python compares str by code point, which is UTF-8 byte order: trec_eval's strcmp.
    return [doc for doc, _ in sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def scored(ranked: Sequence[str], relevance: Mapping[str, int], cutoffs: Sequence[int]) -> dict[str, float]:
    """Return one question's metrics by name."""
    return dict(zip(retrieval_metric_names(cutoffs), retrieval_values(ranked, relevance, cutoffs), strict=True))


# ---------------------------------------------------------------------------------------------
# Names


def test_names_are_grouped_by_metric_then_cutoff() -> None:
    assert retrieval_metric_names((1, 3)) == (
        "precision@1", "precision@3", "recall@1", "recall@3", "f1@1", "f1@3",
        "hit@1", "hit@3", "ndcg@1", "ndcg@3", "map@1", "map@3", "mrr", "map", "rprec", "ndcg", "bpref",
        "hybrid_log_rank",
    )  # fmt: skip
    assert similarity_metric_names((2, 5)) == (
        "sim_precision@2", "sim_precision@5", "sim_recall@2", "sim_recall@5",
        "sim_f1@2", "sim_f1@5", "sim_hybrid_log_rank",
    )  # fmt: skip


def test_value_count_matches_names_even_when_everything_is_zero() -> None:
    cutoffs = (1, 3, 5, 10)
    n = len(retrieval_metric_names(cutoffs))
    assert retrieval_values([], {"a": 1}, cutoffs) == (0.0,) * n
    assert len(retrieval_values(["a"], {"a": 1}, cutoffs)) == n
    assert similarity_values([], [[1.0]], cutoffs) == (0.0,) * len(similarity_metric_names(cutoffs))


# ---------------------------------------------------------------------------------------------
# Shared vectors (generated with pytrec_eval-terrier 0.5.11)


def _vector_checks(case: dict) -> list[tuple[str, Mapping[str, int], dict[str, float]]]:
    """Return (qid, qrels, expected pytrec_eval measures) for each evaluated query of a case."""
    expected = case["expected_pytrec_eval"]
    if all(isinstance(v, dict) for v in expected.values()):
        # Per-query expectations (query_set_mismatch): pytrec_eval evaluates only the queries in
        # both run and qrels; the mean over them is the integrator's business, not this module's.
        return [(qid, case["qrels"][qid], measures) for qid, measures in expected.items()]
    (qid,) = case["run"]
    return [(qid, case["qrels"][qid], expected)]


@pytest.mark.parametrize("case", VECTORS["cases"], ids=[c["name"] for c in VECTORS["cases"]])
def test_shared_vectors(case: dict) -> None:
    level = case["relevance_level"]
    for qid, qrels, expected in _vector_checks(case):
        ranked = trec_order(case["run"][qid])
        cutoffs = cutoffs_of(list(expected))
        graded = scored(ranked, qrels, cutoffs)
        # ragscore's relevance level is fixed at 1 (SPEC: grade >= 1). For another level, the
        # binary measures are those of the grades thresholded at that level; ndcg_cut ignores the
        # level in trec_eval, so it is checked on the original grades.
        binary = scored(ranked, {d: (g if g >= level else 0) for d, g in qrels.items()}, cutoffs)
        for measure, value in expected.items():
            name = ours(measure)
            got = graded[name] if name.startswith("ndcg@") else binary[name]
            assert got == pytest.approx(value, abs=1e-9), (case["name"], qid, measure)


def test_shared_vectors_cover_every_trec_measure_we_map() -> None:
    stems = set()
    for case in VECTORS["cases"]:
        for _, _, expected in _vector_checks(case):
            stems |= {_MEASURE_RE.match(m).group("stem") for m in expected}
    assert stems == set(TREC_TO_OURS)


def test_shared_vectors_new_measures_against_pytrec_eval(pytrec_eval: ModuleType) -> None:
    # The vectors were made before bpref, ndcg and map@K were here: pytrec_eval gives them now,
    # at each case's relevance level, on the same qrels and run (ties in score included).
    for case in VECTORS["cases"]:
        level = case["relevance_level"]
        for qid, qrels, expected in _vector_checks(case):
            cutoffs = cutoffs_of(list(expected))
            measures = {"bpref", "ndcg", f"map_cut.{','.join(map(str, cutoffs))}"}
            evaluator = pytrec_eval.RelevanceEvaluator({qid: qrels}, measures, relevance_level=level)
            reference = evaluator.evaluate({qid: case["run"][qid]})[qid]
            ranked = trec_order(case["run"][qid])
            got = scored(ranked, at_level(qrels, level), cutoffs) | {"ndcg": scored(ranked, qrels, cutoffs)["ndcg"]}
            assert len(reference) == 2 + len(cutoffs)
            for measure, value in reference.items():
                assert got[ours(measure)] == pytest.approx(value, abs=1e-9), (case["name"], qid, measure)


def test_vector_tie_order_is_docno_descending() -> None:
    # The vectors' convention, checked directly: 'd9' > 'd10' byte-wise, so d9 ranks first.
    assert trec_order({"d10": 1.0, "d9": 1.0, "d1": 0.5}) == ["d9", "d10", "d1"]
    assert trec_order({"a": 0.5, "b": 0.5, "c": 0.5}) == ["c", "b", "a"]


# ---------------------------------------------------------------------------------------------
# trec_eval's own test data (usnistgov/trec_eval test/)


def _read_run(name: str = "results.test") -> dict[str, dict[str, float]]:
    """Read a run (results.test) as qid -> docno -> score."""
    run: dict[str, dict[str, float]] = defaultdict(dict)
    for line in (TREC / name).read_text(encoding="utf-8").splitlines():
        qid, _q0, docno, _rank, score = line.split()[:5]  # trec_eval ignores what follows the score
        run[qid][docno] = float(score)  # the rank column is ignored, as trec_eval does
    return dict(run)


def _read_qrels(name: str) -> dict[str, dict[str, int]]:
    """Read a qrels file as qid -> docno -> grade."""
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in (TREC / name).read_text(encoding="utf-8").splitlines():
        qid, _iter, docno, rel = line.split()
        qrels[qid][docno] = int(rel)
    return dict(qrels)


def _read_out() -> dict[str, float]:
    """Read out.test as measure -> value (the "all" rows)."""
    out = {}
    for line in (TREC / "out.test").read_text(encoding="utf-8").splitlines():
        measure, scope, value = line.split()
        assert scope == "all"
        if measure != "runid":
            out[measure] = float(value)
    return out


RUN = _read_run()
OUT = _read_out()
OUT_MEASURES = [
    m for m in OUT if (match := _MEASURE_RE.match(m)) and match.group("stem") in TREC_TO_OURS | TREC_TO_OURS_MORE
]


def test_out_test_was_made_with_qrels_test() -> None:
    # num_rel in out.test is the count of grade >= 1 in qrels.test (qrels.rel_level demotes two of
    # those documents to -1), so out.test is checked against qrels.test only.
    def n_rel(qrels: dict[str, dict[str, int]]) -> int:
        return sum(g >= 1 for q in RUN for g in qrels[q].values())

    assert OUT["num_rel"] == n_rel(_read_qrels("qrels.test")) == 561
    assert n_rel(_read_qrels("qrels.rel_level")) == 559
    assert OUT["num_q"] == len(RUN) and OUT["num_ret"] == sum(map(len, RUN.values()))
    # out.test is trec_eval's default measure set: no recall_k, ndcg_cut_k or success_k in it.
    assert sorted({ours(m).split("@")[0] for m in OUT_MEASURES}) == ["bpref", "map", "mrr", "precision", "rprec"]


def test_trec_eval_out_test() -> None:
    qrels = _read_qrels("qrels.test")
    cutoffs = cutoffs_of(OUT_MEASURES)
    per_topic = [scored(trec_order(RUN[qid]), qrels[qid], cutoffs) for qid in sorted(RUN)]
    for measure in OUT_MEASURES:
        mean = math.fsum(values[ours(measure)] for values in per_topic) / len(per_topic)
        # out.test prints 4 decimals.
        assert mean == pytest.approx(OUT[measure], abs=5e-5), measure
    # num_rel_ret: every topic retrieved 500 documents, so recall@500 * R counts them.
    deepest = max(cutoffs)
    assert all(len(docs) <= deepest for docs in RUN.values())
    rel_ret = sum(
        values[f"recall@{deepest}"] * sum(g >= 1 for g in qrels[qid].values())
        for qid, values in zip(sorted(RUN), per_topic, strict=True)
    )
    assert round(rel_ret) == OUT["num_rel_ret"]


def test_trec_eval_run_has_score_ties_that_the_order_decides() -> None:
    # The pytrec_eval comparison below checks the tie order only if ties exist in the run.
    for scores in RUN.values():
        if trec_order(scores) != sorted(scores, key=lambda d: (-scores[d], d)):
            return
    pytest.fail("no score ties in results.test")


def at_level(qrels: Mapping[str, int], level: int) -> dict[str, int]:
    """Judgments that at relevance level 1 mean what ``qrels`` means at ``level``: a grade below
    the level but not negative becomes 0 (judged non-relevant, for bpref); others are kept."""
    return {doc: 0 if 0 <= grade < level else grade for doc, grade in qrels.items()}


# trec_eval -m all_trec -q outputs: (file, qrels, run, -l level, -M depth). With -c, every judged
# topic is averaged, one with no run scoring 0: as score counts a question with no trace.
TREC_Q_OUTPUTS = [
    ("out.test.aq", "qrels.test", "results.test", 1, None),
    ("out.test.aqc", "qrels.test", "results.trunc", 1, None),
    ("out.test.aqcM", "qrels.test", "results.trunc", 1, 100),
    ("out.test.aql", "qrels.rel_level", "results.test", 2, None),
]
NEW_MEASURES = re.compile(r"^(bpref|ndcg|map_cut_[0-9]+)$")


@pytest.mark.parametrize("out, qrels_file, run_file, level, depth", TREC_Q_OUTPUTS, ids=[o[0] for o in TREC_Q_OUTPUTS])
def test_bpref_ndcg_and_map_cut_equal_trec_eval_output(
    out: str, qrels_file: str, run_file: str, level: int, depth: int | None
) -> None:
    printed: dict[str, dict[str, float]] = defaultdict(dict)  # topic -> measure -> value
    for line in (TREC / out).read_text(encoding="utf-8").splitlines():
        measure, topic, value = line.split()
        if NEW_MEASURES.match(measure):
            printed[topic][measure] = float(value)
    qrels, run = _read_qrels(qrels_file), _read_run(run_file)
    topics = sorted(t for t in printed if t != "all")
    assert topics == sorted(qrels) and len(printed["all"]) == 11  # bpref, ndcg, map_cut_5 ... 1000
    cutoffs = cutoffs_of(list(printed["all"]))
    per_topic = {}
    for qid in topics:
        ranked = trec_order(run.get(qid, {}))[:depth]
        binary = scored(ranked, at_level(qrels[qid], level), cutoffs)
        per_topic[qid] = binary | {"ndcg": scored(ranked, qrels[qid], cutoffs)["ndcg"]}  # nDCG ignores the level
    for topic, measures in printed.items():
        for measure, value in measures.items():
            name = ours(measure)
            got = (math.fsum(v[name] for v in per_topic.values()) / len(per_topic) if topic == "all"
                   else per_topic[topic][name])
            assert got == pytest.approx(value, abs=5e-5 + 1e-12), (out, topic, measure)  # 4 decimals printed


# ---------------------------------------------------------------------------------------------
# pytrec_eval, the reference


@pytest.fixture(scope="module")
def pytrec_eval() -> ModuleType:
    """Import the reference implementation, skipping the test without it."""
    return pytest.importorskip("pytrec_eval")


def _pytrec_measures(cutoffs: Sequence[int]) -> set[str]:
    ks = ",".join(map(str, cutoffs))
    return {
        f"ndcg_cut.{ks}", f"P.{ks}", f"recall.{ks}", f"success.{ks}", f"map_cut.{ks}",
        "map", "recip_rank", "Rprec", "ndcg", "bpref",
    }  # fmt: skip


def _reference(pytrec_eval: ModuleType, qrels: Mapping[str, int], scores: Mapping[str, float], cutoffs: Sequence[int]):
    """Return pytrec_eval's values for one query under our names (f1 from its P and recall)."""
    evaluator = pytrec_eval.RelevanceEvaluator({"q": dict(qrels)}, _pytrec_measures(cutoffs))
    result = evaluator.evaluate({"q": dict(scores)})["q"]
    expected = {ours(measure): value for measure, value in result.items()}
    for k in cutoffs:
        p, r = result[f"P_{k}"], result[f"recall_{k}"]
        expected[f"f1@{k}"] = 2 * p * r / (p + r) if p + r else 0.0
    return expected


def _assert_matches(got: Mapping[str, float], expected: Mapping[str, float], context: object) -> None:
    """Check every metric but the hybrid against pytrec_eval's, to 1e-9."""
    missing = set(got) - set(expected) - {"hybrid_log_rank"}
    assert not missing, missing
    for name, value in expected.items():
        assert got[name] == pytest.approx(value, abs=1e-9), (name, context)


@pytest.mark.parametrize("qrels_file", ["qrels.test", "qrels.rel_level"])
def test_trec_eval_data_against_pytrec_eval(pytrec_eval: ModuleType, qrels_file: str) -> None:
    qrels = _read_qrels(qrels_file)
    cutoffs = (1, 3, 5, 10, 15, 20, 30, 100, 200, 500, 1000)
    for qid, scores in RUN.items():
        # pytrec_eval orders the scores itself; ours gets trec_order's list.
        expected = _reference(pytrec_eval, qrels[qid], scores, cutoffs)
        _assert_matches(scored(trec_order(scores), qrels[qid], cutoffs), expected, (qrels_file, qid))


DOCS = [f"d{i}" for i in range(12)]
UNJUDGED = ["u0", "u1", "u10", "u2"]


@st.composite
def judged_runs(draw: st.DrawFn) -> tuple[dict[str, int], list[str], tuple[int, ...]]:
    """Draw graded qrels with at least one relevant id, a ranked list with repeats, cutoffs."""
    qrels = draw(st.dictionaries(st.sampled_from(DOCS), st.integers(-2, 4), max_size=len(DOCS)))
    qrels[draw(st.sampled_from(DOCS))] = draw(st.integers(1, 4))
    ranked = draw(st.lists(st.sampled_from(DOCS + UNJUDGED), max_size=20))
    cutoffs = tuple(draw(st.lists(st.integers(1, 25), min_size=1, max_size=5, unique=True)))
    return qrels, ranked, cutoffs


@settings(max_examples=300, deadline=None)
@given(judged_runs())
def test_matches_pytrec_eval(pytrec_eval: ModuleType, case: tuple[dict[str, int], list[str], tuple[int, ...]]) -> None:
    qrels, ranked, cutoffs = case
    unique = list(dict.fromkeys(ranked))
    # Distinct descending scores, so pytrec_eval's ranks are exactly the de-duplicated order.
    scores = {doc: float(len(unique) - i) for i, doc in enumerate(unique)}
    expected = _reference(pytrec_eval, qrels, scores, cutoffs)
    _assert_matches(scored(ranked, qrels, cutoffs), expected, case)


@st.composite
def tied_runs(draw: st.DrawFn) -> tuple[dict[str, int], dict[str, float], tuple[int, ...]]:
    """Draw graded qrels and a scored run whose scores tie often (few distinct values)."""
    qrels, _, cutoffs = draw(judged_runs())
    docs = draw(st.lists(st.sampled_from(DOCS + UNJUDGED), max_size=16, unique=True))
    scores = {doc: draw(st.sampled_from([0.5, 1.0, 2.0, -1.0])) for doc in docs}
    return qrels, scores, cutoffs


@settings(max_examples=300, deadline=None)
@given(tied_runs())
def test_matches_pytrec_eval_with_ties_in_score(
    pytrec_eval: ModuleType, case: tuple[dict[str, int], dict[str, float], tuple[int, ...]]
) -> None:
    # pytrec_eval orders the scored run itself; ours gets trec_order's list (ties: docno descending).
    qrels, scores, cutoffs = case
    expected = _reference(pytrec_eval, qrels, scores, cutoffs)
    _assert_matches(scored(trec_order(scores), qrels, cutoffs), expected, case)


@settings(max_examples=300, deadline=None)
@given(judged_runs(), st.floats(0, 1), st.floats(0.01, 100))
def test_hybrid_matches_its_formula(
    case: tuple[dict[str, int], list[str], tuple[int, ...]], alpha: float, gamma: float
) -> None:
    qrels, ranked, cutoffs = case
    unique = list(dict.fromkeys(ranked))
    n = len(unique)
    relevant = {d for d, g in qrels.items() if g >= 1}
    ranks = [i for i, d in enumerate(unique, 1) if d in relevant]

    def logrank(rank: int) -> float:
        return 1.0 if n == 1 else 1 - math.log(1 + gamma * (rank - 1)) / math.log(1 + gamma * (n - 1))

    expected = 0.0 if n == 0 else (
        alpha * len(ranks) / len(relevant) + (1 - alpha) * sum(map(logrank, ranks)) / len(relevant)
    )
    got = retrieval_values(ranked, qrels, cutoffs, alpha=alpha, gamma=gamma)[-1]
    assert got == pytest.approx(expected, abs=1e-9)
    assert -1e-12 <= got <= 1 + 1e-12


# ---------------------------------------------------------------------------------------------
# Hybrid log-rank, by hand


def hybrid(ranked: Sequence[str], relevance: Mapping[str, int], alpha: float = 0.5, gamma: float = 1.0) -> float:
    """Return one question's hybrid_log_rank."""
    return scored_with(ranked, relevance, alpha, gamma)["hybrid_log_rank"]


def scored_with(ranked: Sequence[str], relevance: Mapping[str, int], alpha: float, gamma: float) -> dict[str, float]:
    """Return one question's metrics by name at cutoffs 1 and 3, with the hybrid's parameters."""
    cutoffs = (1, 3)
    values = retrieval_values(ranked, relevance, cutoffs, alpha=alpha, gamma=gamma)
    return dict(zip(retrieval_metric_names(cutoffs), values, strict=True))


def test_hybrid_by_hand() -> None:
    rel = {"r1": 1, "r2": 2, "r3": 1, "n": 0}
    # N = 4, R = 3; r1 at rank 2, r2 at rank 4, r3 not retrieved. recall over all N = 2/3.
    # logrank(2, 4) = 1 - ln 2 / ln 4 = 1/2; logrank(4, 4) = 1 - ln 4 / ln 4 = 0.
    # hybrid = 0.5 * 2/3 + 0.5 * (1/2 + 0) / 3 = 1/3 + 1/12 = 5/12.
    assert hybrid(["x", "r1", "n", "r2"], rel) == pytest.approx(5 / 12, abs=1e-12)
    # alpha = 1: recall over the whole list (2/3), not recall@K (recall@3 would be 1/3).
    assert hybrid(["x", "r1", "n", "r2"], rel, alpha=1) == pytest.approx(2 / 3, abs=1e-12)
    # alpha = 0: the log-rank part alone, (1/2 + 0) / 3 = 1/6.
    assert hybrid(["x", "r1", "n", "r2"], rel, alpha=0) == pytest.approx(1 / 6, abs=1e-12)
    # Everything relevant, in a list of exactly R = N = 3: recall 1; logranks 1, 1 - ln 2 / ln 3
    # = 0.369070..., and 0 -> hybrid = 0.5 + 0.5 * (1 + 0.369070 + 0) / 3 = 0.728178...
    assert hybrid(["r2", "r1", "r3"], rel) == pytest.approx(0.5 + 0.5 * (2 - math.log(2) / math.log(3)) / 3)
    assert hybrid(["r2", "r1", "r3"], rel) == pytest.approx(0.728178, abs=1e-6)


def test_hybrid_single_item_and_gamma() -> None:
    # N = 1: logrank is 1 by definition (the formula would be 0/0). R = 2: 0.5 * 1/2 + 0.5 * 1/2.
    assert hybrid(["r1"], {"r1": 1, "r2": 1}) == 0.5
    # gamma = 3, N = 3, R = 1, relevant at rank 2: logrank = 1 - ln(1 + 3) / ln(1 + 6)
    # = 1 - 1.386294 / 1.945910 = 0.287586...; hybrid = 0.5 + 0.5 * 0.287586 = 0.643793
    assert hybrid(["x", "r", "y"], {"r": 1}, gamma=3) == pytest.approx(0.643793, abs=1e-6)
    assert hybrid(["x", "r", "y"], {"r": 1}, gamma=3) == pytest.approx(1 - 0.5 * math.log(4) / math.log(7))
    with pytest.raises(ValueError, match="gamma"):
        hybrid(["r"], {"r": 1}, gamma=0)


def test_duplicates_take_no_rank() -> None:
    # [x, x, r] is [x, r]: N = 2, r at rank 2, logrank(2, 2) = 0 -> hybrid = 0.5 * 1 + 0 = 0.5,
    # mrr = 1/2, precision@3 = 1/3 (not 0 at rank 3, not 2/3 for a repeat of r).
    values = scored_with(["x", "x", "r", "r"], {"r": 1}, 0.5, 1.0)
    assert values["hybrid_log_rank"] == 0.5
    assert values["mrr"] == 0.5
    assert values["precision@3"] == pytest.approx(1 / 3)
    assert values["hit@1"] == 0.0 and values["hit@3"] == 1.0


def test_negative_grades_are_not_penalties_in_ndcg() -> None:
    # trec_eval: a negative grade is zero gain and absent from the ideal ranking, so retrieving it
    # at rank 1 costs exactly what an unjudged id does: ndcg@3 = (1 / log2 3) / 1.
    with_negative = scored(["neg", "r"], {"neg": -3, "r": 1}, (3,))
    unjudged = scored(["u", "r"], {"r": 1}, (3,))
    assert with_negative == unjudged
    assert with_negative["ndcg@3"] == pytest.approx(1 / math.log2(3))
    assert with_negative["rprec"] == 0.0  # R = 1: only rank 1 counts


# ---------------------------------------------------------------------------------------------
# bpref, ndcg and map@K, by hand


BY_HAND = {"r1": 1, "r2": 2, "r3": 1, "n1": 0, "n2": 0, "neg": -1}
RANKED_BY_HAND = ["n1", "r1", "neg", "u", "n2", "r2"]  # u is unjudged


def test_bpref_by_hand() -> None:
    # R = 3 (r1, r2, r3), judged non-relevant N_J = 2 (n1, n2: grade 0), bound min(R, N_J) = 2;
    # neg (grade -1) and u (unjudged) are skipped. r1 has n1 above it: 1 - 1/2; r2 has n1 and n2
    # above it: 1 - 2/2 = 0; r3 is not retrieved. bpref = (1/2 + 0 + 0) / 3 = 1/6.
    assert scored(RANKED_BY_HAND, BY_HAND, (1,))["bpref"] == pytest.approx(1 / 6, abs=1e-15)
    # More judged non-relevant ids than relevant ones: the bound is R = 1, and n_r is capped at R.
    many = {"r": 1, "n1": 0, "n2": 0, "n3": 0, "n4": 0}
    assert scored(["n1", "n2", "r"], many, (1,))["bpref"] == 0.0
    assert scored(["r", "n1", "n2"], many, (1,))["bpref"] == 1.0
    # R = 2, N_J = 3, bound 2: r below one non-relevant id gives 1 - 1/2; s is not retrieved.
    assert scored(["n1", "r"], {"r": 1, "s": 1, "n1": 0, "n2": 0, "n3": 0}, (1,))["bpref"] == 0.25


def test_bpref_without_judged_non_relevant_ids_is_the_share_retrieved() -> None:
    # Citations only (every judged id relevant, nothing graded 0): each relevant id retrieved adds
    # 1 wherever it ranks, so bpref = relevant ids retrieved / R; unjudged ids above cost nothing.
    assert scored(["x", "y", "a", "z"], {"a": 1, "b": 1}, (1,))["bpref"] == 0.5
    assert scored(["a", "b"], {"a": 1, "b": 1}, (1,))["bpref"] == 1.0


def test_grade_zero_differs_from_unjudged_only_in_bpref() -> None:
    judged_zero = scored(["z", "r"], {"z": 0, "r": 1}, (1, 3))
    unjudged = scored(["z", "r"], {"r": 1}, (1, 3))
    assert judged_zero["bpref"] == 0.0 and unjudged["bpref"] == 1.0
    assert {k: v for k, v in judged_zero.items() if k != "bpref"} == {k: v for k, v in unjudged.items() if k != "bpref"}


def test_ndcg_by_hand() -> None:
    # Gains: r1 (grade 1) at rank 2, r2 (grade 2) at rank 6. Ideal ranking: 2, 1, 1 (r3 counts
    # though not retrieved): IDCG = 2 + 1/log2 3 + 1/2.
    dcg = 1 / math.log2(3) + 2 / math.log2(7)
    idcg = 2 + 1 / math.log2(3) + 1 / 2
    values = scored(RANKED_BY_HAND, BY_HAND, (3, 10))
    assert values["ndcg"] == pytest.approx(dcg / idcg, abs=1e-15)
    assert values["ndcg"] == pytest.approx(0.429056, abs=1e-6)
    # ndcg@3 sees r1 only; ndcg@10 sees the whole list and the whole ideal ranking: it is ndcg.
    assert values["ndcg@3"] == pytest.approx((1 / math.log2(3)) / idcg, abs=1e-15)
    assert values["ndcg@10"] == values["ndcg"]


def test_ndcg_ideal_is_not_truncated_by_the_list_length() -> None:
    # One relevant id of two retrieved at rank 1: DCG = 1, IDCG = 1 + 1/log2 3 (both relevant ids).
    assert scored(["a"], {"a": 1, "b": 1}, (1,))["ndcg"] == pytest.approx(1 / (1 + 1 / math.log2(3)), abs=1e-15)
    # ndcg@1 truncates the ideal at 1, so it is 1.
    assert scored(["a"], {"a": 1, "b": 1}, (1,))["ndcg@1"] == 1.0


def test_map_at_k_by_hand() -> None:
    # Relevant retrieved at ranks 2 (r1) and 6 (r2), R = 3: precision there is 1/2 and 2/6.
    values = scored(RANKED_BY_HAND, BY_HAND, (1, 3, 6, 100))
    assert values["map@1"] == 0.0
    assert values["map@3"] == pytest.approx((1 / 2) / 3, abs=1e-15)  # divided by R, not by min(R, K)
    assert values["map@6"] == pytest.approx((1 / 2 + 2 / 6) / 3, abs=1e-15)  # 5/18
    assert values["map@6"] == values["map@100"] == values["map"]


def test_new_metrics_with_an_empty_list_or_duplicates() -> None:
    empty = scored([], {"a": 1, "n": 0}, (1, 5))
    assert (empty["bpref"], empty["ndcg"], empty["map@1"], empty["map@5"]) == (0.0, 0.0, 0.0, 0.0)
    # [n, n, a, a] is [n, a]: a at rank 2 below one judged non-relevant id (R = N_J = 1): bpref 0;
    # map@2 = (1/2) / 1; ndcg = (1/log2 3) / 1.
    repeated = scored(["n", "n", "a", "a"], {"a": 1, "n": 0}, (1, 2))
    assert repeated == scored(["n", "a"], {"a": 1, "n": 0}, (1, 2))
    assert (repeated["bpref"], repeated["map@1"], repeated["map@2"]) == (0.0, 0.0, 0.5)
    assert repeated["ndcg"] == pytest.approx(1 / math.log2(3), abs=1e-15)


def test_unsorted_cutoffs_keep_their_order() -> None:
    values = scored(["a", "x", "b"], {"a": 1, "b": 1}, (3, 1))
    assert values["precision@3"] == pytest.approx(2 / 3) and values["precision@1"] == 1.0
    assert list(values)[:2] == ["precision@3", "precision@1"]


# ---------------------------------------------------------------------------------------------
# Relevance by chunk text


def test_text_relevance_by_hand() -> None:
    gold = ["The Cat", "Straße", "the cat", "Cafe\u0301"]  # "the cat" repeats "The Cat"
    retrieved = ["dog", "STRASSE", "Dog", "caf\u00e9", "the cat ", "THE CAT"]
    ranked, relevance = text_relevance(gold, retrieved)
    # casefold: "Straße" -> "strasse" = "STRASSE"; NFC: "Cafe" + combining acute = "café";
    # "the cat " keeps its trailing space, so it is not gold; "Dog" repeats "dog" (r0).
    assert relevance == {"g0": 1, "g1": 1, "g3": 1}
    assert ranked == ["r0", "g1", "r0", "g3", "r4", "g0"]
    # De-duplicated: [r0, g1, g3, r4, g0], N = 5; relevant at ranks 2, 3, 5; R = 3.
    values = scored(ranked, relevance, (1, 3, 5))
    assert values["precision@1"] == 0.0
    assert values["precision@3"] == pytest.approx(2 / 3)
    assert values["recall@5"] == 1.0
    assert values["mrr"] == 0.5
    assert values["map"] == pytest.approx((1 / 2 + 2 / 3 + 3 / 5) / 3)  # 0.588888...


def test_text_relevance_empty() -> None:
    assert text_relevance([], ["a"]) == (["r0"], {})
    assert text_relevance(["a"], []) == ([], {"g0": 1})


# ---------------------------------------------------------------------------------------------
# Relevance by embedding similarity


def test_cosine() -> None:
    assert cosine([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [-1.0, 0.0]) == -1.0
    assert cosine([3.0, 4.0], [0.0, 1.0]) == 0.8  # 4 / (5 * 1), exact
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0
    with pytest.raises(ValueError, match="lengths"):
        cosine([1.0], [1.0, 2.0])


def test_similarity_by_hand() -> None:
    gold = [[1.0, 0.0], [0.0, 1.0]]  # g1, g2
    retrieved = [
        [1.0, 1.0],  # rank 1: cosine 0.7071 with both -> no match
        [3.0, 4.0],  # rank 2: 0.6 with g1, exactly 0.8 with g2 -> matches g2 (>= is inclusive)
        [1.0, 0.1],  # rank 3: 0.995 with g1 -> matches g1
        [0.0, 0.0],  # rank 4: norm 0, cosine 0 -> no match
    ]
    cutoffs = (1, 2, 3, 5)
    values = dict(zip(similarity_metric_names(cutoffs), similarity_values(gold, retrieved, cutoffs), strict=True))
    # Relevant retrieved at ranks 2, 3; gold g2 first matched at rank 2, g1 at rank 3.
    assert [values[f"sim_precision@{k}"] for k in cutoffs] == pytest.approx([0, 1 / 2, 2 / 3, 2 / 5])
    assert [values[f"sim_recall@{k}"] for k in cutoffs] == pytest.approx([0, 1 / 2, 1, 1])
    # f1@3 = 2 (2/3)(1) / (2/3 + 1) = 0.8; f1@5 = 2 (0.4)(1) / 1.4 = 4/7.
    assert [values[f"sim_f1@{k}"] for k in cutoffs] == pytest.approx([0, 1 / 2, 0.8, 4 / 7])
    # N = 4: logrank(2, 4) = 1 - ln 2 / ln 4 = 0.5; logrank(3, 4) = 1 - ln 3 / ln 4 = 0.207519;
    # hybrid = 0.5 * 2/2 + 0.5 * (0.5 + 0.207519) / 2 = 0.676880.
    assert values["sim_hybrid_log_rank"] == pytest.approx(0.5 + 0.25 * (1.5 - math.log(3) / math.log(4)))
    assert values["sim_hybrid_log_rank"] == pytest.approx(0.676880, abs=1e-6)


def test_similarity_one_item_matching_two_gold_and_two_matching_one() -> None:
    gold = [[1.0, 0.0], [1.0, 0.1]]  # cosine 0.995 to each other
    # Rank 1 matches both gold items: one relevant item for precision, two gold items for recall.
    values = similarity_values(gold, [[1.0, 0.05], [1.0, 0.0]], (1, 2))
    names = similarity_metric_names((1, 2))
    got = dict(zip(names, values, strict=True))
    assert got["sim_precision@1"] == 1.0 and got["sim_recall@1"] == 1.0
    assert got["sim_precision@2"] == 1.0 and got["sim_recall@2"] == 1.0
    # Both gold items first matched at rank 1 (logrank 1): hybrid = 0.5 + 0.5 * 2/2 = 1.
    assert got["sim_hybrid_log_rank"] == 1.0
    # Threshold above every cosine: nothing matches.
    assert similarity_values(gold, [[0.0, 1.0]], (1,), threshold=0.8) == (0.0, 0.0, 0.0, 0.0)


@settings(max_examples=200, deadline=None)
@given(judged_runs(), st.floats(0, 1), st.floats(0.01, 10))
def test_similarity_with_one_hot_embeddings_equals_id_metrics(
    case: tuple[dict[str, int], list[str], tuple[int, ...]], alpha: float, gamma: float
) -> None:
    qrels, ranked, cutoffs = case
    # One-hot vectors: cosine is 1 for the same id and 0 otherwise, so a match is id equality.
    vocabulary = DOCS + UNJUDGED
    onehot = {doc: [float(doc == other) for other in vocabulary] for doc in vocabulary}
    relevant = [d for d, g in qrels.items() if g >= 1]
    unique = list(dict.fromkeys(ranked))
    by_id = dict(zip(
        retrieval_metric_names(cutoffs),
        retrieval_values(unique, dict.fromkeys(relevant, 1), cutoffs, alpha=alpha, gamma=gamma),
        strict=True,
    ))  # fmt: skip
    by_similarity = similarity_values(
        [onehot[d] for d in relevant], [onehot[d] for d in unique], cutoffs, alpha=alpha, gamma=gamma
    )
    for name, value in zip(similarity_metric_names(cutoffs), by_similarity, strict=True):
        assert value == by_id[name.removeprefix("sim_")], name
