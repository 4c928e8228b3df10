"""The ner stage: hand-checked matching rules, token scores, averages, and a maximum partial matching."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragscore.stages.ner import Entity, Matching, NerResult, entity_tokens, match_entities


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


def test_partial_matching_is_maximum_where_greedy_pairs_fewer():
    # "Bank of New York Mellon": gold ORG [0,16) "Bank of New York" and [8,23) "New York Mellon";
    # predictions [3,16) "k of New York" and [0,3) "Ban". Greedy by overlap pairs [0,16) with [3,16)
    # (13 characters) and strands both others; an augmenting path moves [0,16) to [0,3).
    gold, pred = [E(0, 16, "ORG"), E(8, 23, "ORG")], [E(3, 16, "ORG"), E(0, 3, "ORG")]
    m = match_entities(gold, pred)
    assert m == Matching((), ((0, 1), (1, 0)))
    metrics = score(gold, pred, "Bank of New York Mellon").metrics()
    assert (metrics["partial_precision"], metrics["partial_recall"]) == (1.0, 1.0)


def test_a_strict_pair_moves_when_that_gains_a_partial_pair():
    # G0 [0,10) is predicted exactly; G1 [5,8) overlaps only that prediction, and P1 [0,3) only G0.
    gold, pred = [E(0, 10), E(5, 8)], [E(0, 10), E(0, 3)]
    m = match_entities(gold, pred)
    assert m.strict == ((0, 0),)
    assert m.partial == ((0, 1), (1, 0))
    metrics = score(gold, pred).metrics()
    assert (metrics["strict_recall"], metrics["partial_recall"]) == (0.5, 1.0)


def test_greedy_pairs_stay_when_no_pair_is_gained():
    # Two maximum matchings exist; the greedy step's choice (largest overlap) is kept.
    gold, pred = [E(0, 10), E(20, 30)], [E(2, 10), E(0, 4), E(20, 22)]
    assert match_entities(gold, pred).partial == ((0, 0), (1, 2))


def test_the_partial_matching_does_not_depend_on_input_order_in_count():
    gold = [E(0, 16, "ORG"), E(8, 23, "ORG"), E(30, 34, "PER"), E(31, 40, "PER")]
    pred = [E(3, 16, "ORG"), E(0, 3, "ORG"), E(33, 35, "PER"), E(30, 32, "PER")]
    rng = random.Random(3)
    for _ in range(20):
        g, p = rng.sample(gold, len(gold)), rng.sample(pred, len(pred))
        assert len(match_entities(g, p).partial) == 4


def _overlap(a: Entity, b: Entity) -> bool:
    return a.type == b.type and max(a.start, b.start) < min(a.end, b.end)


def brute_force_maximum(gold: Sequence[Entity], pred: Sequence[Entity], pairs=_overlap) -> int:
    """The largest number of one-to-one pairs, by trying every assignment (small inputs only)."""
    @cache
    def best(i: int, used: frozenset[int]) -> int:
        if i == len(gold):
            return 0
        options = [best(i + 1, used)]  # gold i stays unpaired
        options += [1 + best(i + 1, used | {j}) for j, p in enumerate(pred) if j not in used and pairs(gold[i], p)]
        return max(options)
    return best(0, frozenset())


_entity = st.builds(lambda start, length, kind: Entity(start, start + length, kind),
                    st.integers(0, 25), st.integers(1, 8), st.sampled_from("AB"))


@settings(max_examples=400, deadline=None)
@given(st.lists(_entity, max_size=7), st.lists(_entity, max_size=7))
def test_matchings_are_one_to_one_and_as_large_as_brute_force_finds(gold, pred):
    m = match_entities(gold, pred)
    assert m == match_entities(gold, pred)  # deterministic
    for pairs in (m.strict, m.partial):
        assert list(pairs) == sorted(pairs)
        assert len({i for i, _ in pairs}) == len(pairs) == len({j for _, j in pairs})
    assert all(gold[i] == pred[j] for i, j in m.strict)
    assert all(_overlap(gold[i], pred[j]) for i, j in m.partial)
    # Both matchings are maximum: no one-to-one pairing of their kind has more pairs.
    assert len(m.strict) == sum((Counter(gold) & Counter(pred)).values()) == brute_force_maximum(
        gold, pred, lambda a, b: a == b)
    assert len(m.partial) == brute_force_maximum(gold, pred)
    # Maximality in particular: no unpaired gold entity overlaps an unpaired prediction.
    free_gold = set(range(len(gold))) - {i for i, _ in m.partial}
    free_pred = set(range(len(pred))) - {j for _, j in m.partial}
    assert not [(i, j) for i in free_gold for j in free_pred if _overlap(gold[i], pred[j])]
    # The reported counts are those of the matchings, type by type.
    result = score(gold, pred)
    for kind, counts in result.per_type.items():
        assert counts.partial_tp == brute_force_maximum([g for g in gold if g.type == kind],
                                                        [p for p in pred if p.type == kind])
        assert counts.strict_tp == sum(1 for i, _ in m.strict if gold[i].type == kind)


def _tokens_by_scan(text: str, entities: list[Entity]) -> set[tuple[int, str]]:
    spans = [t.span() for t in re.finditer(r"\S+", text)]
    return {(n, e.type) for e in entities for n, (start, end) in enumerate(spans) if start < e.end and e.start < end}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab \n\t", max_size=30), st.lists(_entity, max_size=6))
def test_token_lookup_by_bisection_equals_a_scan_of_every_token(text, entities):
    assert entity_tokens(text, entities) == _tokens_by_scan(text, entities)


def _rules_restated(gold: Sequence[Entity], pred: Sequence[Entity]) -> tuple[tuple[int, int], ...]:
    """The documented partial matching, step by step over every pair (quadratic: small inputs only)."""
    def ov(i: int, j: int) -> int:
        return min(gold[i].end, pred[j].end) - max(gold[i].start, pred[j].start)

    free = {g: [i for i, x in enumerate(gold) if x == g] for g in gold}
    pred_of: dict[int, int] = {}
    for j, p in enumerate(pred):  # (1) strict pairs, each copy once, in file order
        if free.get(p):
            pred_of[free[p].pop(0)] = j
    gold_of = {j: i for i, j in pred_of.items()}
    edges = [(i, j) for i in range(len(gold)) for j in range(len(pred)) if _overlap(gold[i], pred[j])]
    # (2) greedy: largest overlap, earliest gold span, earliest predicted span, file order
    for i, j in sorted(edges, key=lambda e: (-ov(*e), gold[e[0]].start, gold[e[0]].end, pred[e[1]].start, pred[e[1]].end, *e)):
        if i not in pred_of and j not in gold_of:
            pred_of[i], gold_of[j] = j, i
    options = {i: sorted((j for g, j in edges if g == i), key=lambda j: (-ov(i, j), pred[j].start, pred[j].end, j))
               for i in range(len(gold))}

    def augment(i: int, seen: set[int]) -> bool:  # (3) Kuhn's depth-first search, recursive
        for j in options[i]:
            if j not in seen:
                seen.add(j)
                if j not in gold_of or augment(gold_of[j], seen):
                    pred_of[i], gold_of[j] = j, i
                    return True
        return False

    for i in sorted((i for i in range(len(gold)) if i not in pred_of), key=lambda i: (gold[i].start, gold[i].end, i)):
        augment(i, set())
    return tuple(sorted(pred_of.items()))


_wide_entity = st.builds(lambda start, length, kind: Entity(start, start + length, kind),
                         st.integers(0, 60), st.sampled_from([1, 2, 3, 5, 8, 13, 30, 61]), st.sampled_from("AB"))


@settings(max_examples=300, deadline=None)
@given(st.lists(_wide_entity, max_size=40), st.lists(_wide_entity, max_size=40), st.data())
def test_the_partial_pairs_are_those_the_documented_steps_choose(gold, pred, data):
    # The indexed, lazy matcher must choose exactly the pairs the three documented steps choose,
    # both with small types (scanned) and larger ones (searched through the span tree).
    pred = pred + data.draw(st.lists(st.sampled_from(gold), max_size=5)) if gold else pred  # some exact copies
    assert match_entities(gold, pred).partial == _rules_restated(gold, pred)
