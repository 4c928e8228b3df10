"""The link stage: hand-checked ranking, hits@K, MRR and NIL detection."""

from __future__ import annotations

import random

import pytest

from ragscore.stages import link
from ragscore.stages.link import NO_PREDICTION, LinkResult, Mention, Prediction, rank_of, ranking


def P(*candidates: tuple[str, float], nil: bool = False) -> Prediction:
    return Prediction(tuple(candidates), nil)


def run(items: list[tuple[Mention, Prediction]], cutoffs: tuple[int, ...] = (1, 3, 5)) -> dict[str, float | None]:
    result = LinkResult(cutoffs)
    for gold, pred in items:
        result.add(gold, pred)
    return result.metrics()


def test_candidates_rank_by_score_ties_in_file_order_repeats_ignored():
    pred = P(("a", 0.2), ("b", 0.9), ("c", 0.5), ("d", 0.5), ("b", 0.1), ("e", -1))
    assert ranking(pred.candidates) == ["b", "c", "d", "a", "e"]
    assert [rank_of(kb, pred) for kb in ("b", "c", "d", "a", "e", "zzz")] == [1, 2, 3, 4, 5, None]


def test_hits_and_mrr_hand_checked():
    items = [
        (Mention("Paris", "Q90"), P(("Q90", 0.9), ("Q1", 0.1))),                  # rank 1
        (Mention("Cambridge", "Q350"), P(("Q49108", 0.7), ("Q350", 0.6))),        # rank 2
        (Mention("Kourou", "Q2"), P(("a", 4), ("b", 3), ("c", 2), ("Q2", 1))),    # rank 4
        (Mention("Ada", "Q7"), P(("x", 1.0))),                                     # not found
    ]
    m = run(items)
    assert (m["hits@1"], m["hits@3"], m["hits@5"]) == (0.25, 0.5, 0.75)
    assert m["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 4 + 0) / 4)


def test_a_tie_at_the_gold_id_keeps_file_order():
    m = run([(Mention("Ada", "Q7"), P(("Q9", 0.5), ("Q7", 0.5)))])
    assert (m["hits@1"], m["mrr"]) == (0.0, 0.5)


def test_nil_mentions_are_left_out_of_hits_and_mrr():
    items = [(Mention("Paris", "Q90"), P(("Q90", 1.0))), (Mention("nobody", None), P(("Q90", 1.0)))]
    m = run(items)
    assert (m["hits@1"], m["mrr"]) == (1.0, 1.0)


def test_a_nil_flag_ranks_nothing_for_a_linkable_mention():
    m = run([(Mention("Paris", "Q90"), P(("Q90", 1.0), nil=True))])
    assert (m["hits@1"], m["mrr"]) == (0.0, 0.0)
    assert (m["nil_precision"], m["nil_recall"], m["nil_f1"]) == (0.0, 0.0, 0.0)  # a false NIL flag, no NIL gold


def test_nil_detection_hand_checked():
    items = [
        (Mention("a", None), P(nil=True)),                 # true positive
        (Mention("b", None), P(("Q1", 0.3))),              # false negative
        (Mention("c", None), P(nil=True)),                 # true positive
        (Mention("d", "Q4"), P(("Q4", 0.9), nil=True)),   # false positive (and a miss)
        (Mention("e", "Q5"), P(("Q5", 0.9))),
    ]
    m = run(items)
    assert m["nil_precision"] == pytest.approx(2 / 3)
    assert m["nil_recall"] == pytest.approx(2 / 3)
    assert m["nil_f1"] == pytest.approx(2 / 3)
    assert (m["hits@1"], m["mrr"]) == (0.5, 0.5)


def test_without_any_nil_the_nil_scores_are_undefined_and_without_links_hits_are():
    m = run([(Mention("a", "Q1"), P(("Q1", 1)))])
    assert (m["nil_precision"], m["nil_recall"], m["nil_f1"]) == (None, None, None)
    m = run([(Mention("a", None), P(nil=True))])
    assert (m["hits@1"], m["mrr"]) == (None, None)
    assert m["nil_f1"] == 1.0


def test_a_missing_prediction_has_no_candidate_and_no_nil_flag():
    m = run([(Mention("a", "Q1"), NO_PREDICTION), (Mention("b", None), NO_PREDICTION)])
    assert (m["hits@5"], m["mrr"]) == (0.0, 0.0)
    assert (m["nil_precision"], m["nil_recall"]) == (0.0, 0.0)


def test_cutoffs_name_the_metrics_in_order():
    assert list(run([(Mention("a", "Q1"), P(("Q1", 1)))], (2, 10))) == [
        "hits@2", "hits@10", "mrr", "nil_precision", "nil_recall", "nil_f1"]


def test_a_repeated_kb_id_counts_once_at_its_highest_score():
    pred = P(("a", 0.1), ("b", 0.5), ("a", 0.9), ("c", 0.3), ("b", 0.2))
    assert ranking(pred.candidates) == ["a", "b", "c"]  # a at 0.9, b at 0.5: the lower repeats take no place
    assert [rank_of(kb, pred) for kb in ("a", "b", "c")] == [1, 2, 3]
    assert ranking(P(("x", 0.5), ("y", 0.5), ("x", 0.5)).candidates) == ["x", "y"]  # equal scores: the first listed


def test_the_docs_state_the_repeated_id_rule_the_code_follows():
    from docs import doc_section

    readme = doc_section("ragscore link: entity linking")
    assert "counts once, **at its highest score**" in readme
    assert "its first place counts" not in link.__doc__ and "at its highest score" in link.__doc__


def test_mrr_does_not_depend_on_the_order_of_the_mentions():
    rng = random.Random(7)
    items = []
    for n in range(400):
        rank = rng.randint(1, 12)
        candidates = [(f"x{k}", 100.0 - k) for k in range(1, rank)] + [(f"Q{n}", 100.0 - rank)]
        items.append((Mention("m", f"Q{n}"), P(*candidates)))
    values = {run(rng.sample(items, len(items)))["mrr"] for _ in range(20)}
    assert len(values) == 1
