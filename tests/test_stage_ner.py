"""The ner stage: hand-checked matching rules, token scores, averages, and strict <= partial."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragscore.stages.ner import Entity, NerResult, entity_tokens, match_entities


def E(start: int, end: int, kind: str = "X") -> Entity:
    return Entity(start, end, kind)


def score(gold: list[Entity], pred: list[Entity], text: str = " " * 40) -> NerResult:
    result = NerResult()
    result.add_document(text, gold, pred)
    return result


def test_exact_span_and_type_is_a_strict_and_a_partial_match():
    m = match_entities([E(0, 5)], [E(0, 5)])
    assert (m.strict, m.partial) == (((0, 0),), ((0, 0),))


def test_nested_prediction_matches_partially_and_only_once():
    # gold "New York City"; predictions "New York" and "York" both lie inside it.
    m = match_entities([E(0, 13, "LOC")], [E(0, 8, "LOC"), E(4, 8, "LOC")])
    assert m.strict == ()
    assert m.partial == ((0, 0),)  # the larger overlap (8 characters) wins; "York" stays unmatched
    metrics = score([E(0, 13, "LOC")], [E(0, 8, "LOC"), E(4, 8, "LOC")]).metrics()
    assert (metrics["strict_precision"], metrics["strict_recall"]) == (0.0, 0.0)
    assert (metrics["partial_precision"], metrics["partial_recall"]) == (0.5, 1.0)


def test_overlapping_golds_the_prediction_goes_to_the_larger_overlap():
    m = match_entities([E(0, 5), E(4, 10)], [E(3, 8)])  # overlaps 2 and 4 characters
    assert m.partial == ((1, 0),)


def test_adjacent_spans_do_not_overlap():
    m = match_entities([E(0, 5)], [E(5, 9)])
    assert m.partial == ()
    assert score([E(0, 5)], [E(5, 9)]).metrics()["partial_f1"] == 0.0


def test_type_clash_matches_neither_strictly_nor_partially():
    result = score([E(0, 5, "PER")], [E(0, 5, "ORG")])
    assert match_entities([E(0, 5, "PER")], [E(0, 5, "ORG")]).partial == ()
    table = result.per_type_table()
    assert (table["PER"]["strict_recall"], table["PER"]["strict_precision"]) == (0.0, 0.0)  # no ORG->PER credit
    assert (table["ORG"]["gold"], table["ORG"]["predicted"]) == (0, 1)
    assert result.distribution() == {"ORG": {"gold": 0, "predicted": 1, "over_prediction": 1},
                                     "PER": {"gold": 1, "predicted": 0, "over_prediction": -1}}


def test_duplicate_predictions_match_once_and_the_copy_is_a_false_positive():
    metrics = score([E(0, 5)], [E(0, 5), E(0, 5)]).metrics()
    assert (metrics["strict_precision"], metrics["strict_recall"]) == (0.5, 1.0)
    assert metrics["strict_f1"] == pytest.approx(2 / 3)
    assert (metrics["partial_precision"], metrics["partial_recall"]) == (0.5, 1.0)


def test_duplicate_gold_entities_each_need_their_own_prediction():
    metrics = score([E(0, 5), E(0, 5)], [E(0, 5)]).metrics()
    assert (metrics["strict_precision"], metrics["strict_recall"]) == (1.0, 0.5)


def test_strict_pairs_are_made_before_partial_ones():
    # G0 [2,6) is predicted exactly; G1 [0,10) contains that prediction too, and has P1 [7,10) of its own.
    # A greedy overlap-only matcher would give P0 to G1 (earlier start, same overlap) and leave G0 unmatched.
    gold, pred = [E(2, 6), E(0, 10)], [E(2, 6), E(7, 10)]
    m = match_entities(gold, pred)
    assert m.strict == ((0, 0),)
    assert m.partial == ((0, 0), (1, 1))


def test_equal_overlaps_go_to_the_earliest_prediction():
    m = match_entities([E(0, 10)], [E(7, 10), E(0, 3)])  # both overlap by 3 characters
    assert m.partial == ((0, 1),)


def test_partial_candidates_tie_broken_by_earliest_gold():
    m = match_entities([E(5, 8), E(0, 3)], [E(2, 6)])  # overlaps: 1 character each
    assert m.partial == ((1, 0),)


def test_tokens_are_white_space_tokens_touched_by_an_entity():
    text = "New York City is big"
    assert entity_tokens(text, [E(0, 13, "LOC")]) == {(0, "LOC"), (1, "LOC"), (2, "LOC")}
    assert entity_tokens(text, [E(5, 6, "LOC")]) == {(1, "LOC")}  # inside "York"
    assert entity_tokens(text, [E(3, 4, "LOC")]) == set()  # only the space
    metrics = score([E(0, 13, "LOC")], [E(0, 8, "LOC")], text).metrics()
    assert (metrics["token_precision"], metrics["token_recall"]) == (1.0, pytest.approx(2 / 3))
    assert metrics["token_f1"] == pytest.approx(0.8)


def test_micro_and_macro_averages_hand_checked():
    # PER: 2 gold, 2 predicted, 1 strict; ORG: 1 gold, 0 predicted; LOC: 0 gold, 1 predicted.
    gold = [E(0, 4, "PER"), E(10, 14, "PER"), E(20, 24, "ORG")]
    pred = [E(0, 4, "PER"), E(10, 13, "PER"), E(30, 34, "LOC")]
    m = score(gold, pred).metrics()
    assert (m["strict_precision"], m["strict_recall"]) == (pytest.approx(1 / 3), pytest.approx(1 / 3))
    assert (m["partial_precision"], m["partial_recall"]) == (pytest.approx(2 / 3), pytest.approx(2 / 3))
    # macro over {LOC, ORG, PER}: strict precision (0 + 0 + 0.5) / 3, partial recall (0 + 0 + 1) / 3
    assert m["macro_strict_precision"] == pytest.approx(0.5 / 3)
    assert m["macro_strict_f1"] == pytest.approx(0.5 / 3)
    assert m["macro_partial_recall"] == pytest.approx(1 / 3)


def test_no_entity_anywhere_leaves_every_entity_metric_undefined():
    m = score([], []).metrics()
    assert all(value is None for value in m.values())


def test_counts_add_up_over_documents():
    one, two = score([E(0, 4, "A")], [E(0, 4, "A")]), score([E(0, 4, "A")], [E(1, 4, "A")])
    both = NerResult()
    both.add_document(" " * 40, [E(0, 4, "A")], [E(0, 4, "A")])
    both.add_document(" " * 40, [E(0, 4, "A")], [E(1, 4, "A")])
    total = one.total()
    total += two.total()
    assert total == both.total()


_entity = st.builds(lambda start, length, kind: Entity(start, start + length, kind),
                    st.integers(0, 25), st.integers(1, 8), st.sampled_from("AB"))


@settings(max_examples=300, deadline=None)
@given(st.lists(_entity, max_size=8), st.lists(_entity, max_size=8))
def test_strict_never_exceeds_partial_and_matching_is_one_to_one(gold, pred):
    m = match_entities(gold, pred)
    for pairs in (m.strict, m.partial):
        assert len({i for i, _ in pairs}) == len(pairs) == len({j for _, j in pairs})
    assert all(gold[i] == pred[j] for i, j in m.strict)
    assert all(gold[i].type == pred[j].type and max(gold[i].start, pred[j].start) < min(gold[i].end, pred[j].end)
               for i, j in m.partial)
    assert len(m.strict) == sum((Counter(gold) & Counter(pred)).values())
    assert len(m.strict) <= len(m.partial) <= min(len(gold), len(pred))
    metrics = score(gold, pred).metrics()
    if gold or pred:
        for name in ("precision", "recall", "f1"):
            assert metrics[f"strict_{name}"] <= metrics[f"partial_{name}"]
            assert metrics[f"macro_strict_{name}"] <= metrics[f"macro_partial_{name}"] + 1e-12
