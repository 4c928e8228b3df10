"""Evidence spans' character counts (metrics/spans.py, issue 35, begun) against a brute-force reference that
marks every character: random spans over a few documents, overlapping, touching, empty and at the ends."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ragscore.metrics.spans import Coverage, coverage, union

DOCUMENTS = ("a", "b", "c")


def _spans(size: int = 40):
    span = st.tuples(st.sampled_from(DOCUMENTS), st.integers(0, size), st.integers(0, size)).map(
        lambda t: (t[0], min(t[1], t[2]), max(t[1], t[2])))
    return st.lists(span, max_size=8)


def _marked(spans) -> set[tuple[str, int]]:
    return {(document, i) for document, start, end in spans for i in range(start, end)}


@given(_spans(), _spans())
@settings(max_examples=2000, deadline=None)
def test_coverage_counts_each_character_once(gold, retrieved):
    gold_chars, retrieved_chars = _marked(gold), _marked(retrieved)
    assert coverage(gold, retrieved) == Coverage(len(gold_chars), len(retrieved_chars),
                                                 len(gold_chars & retrieved_chars))


@given(_spans())
@settings(max_examples=1000, deadline=None)
def test_the_union_is_sorted_disjoint_and_holds_the_same_characters(spans):
    joined = union(spans)
    for intervals in joined.values():
        assert all(start < end for start, end in intervals)
        assert all(a[1] < b[0] for a, b in zip(intervals, intervals[1:], strict=False))  # touching ones joined
    assert {(d, i) for d, intervals in joined.items() for s, e in intervals for i in range(s, e)} == _marked(spans)


def test_the_same_evidence_chunked_three_ways_covers_the_same_gold():
    text_length = 1000
    gold = [("doc", 120, 340), ("doc", 300, 420), ("doc", 900, 1000)]
    fixed = [("doc", s, min(s + 100, text_length)) for s in range(0, text_length, 100)]
    windows = [("doc", s, min(s + 150, text_length)) for s in range(0, text_length, 75)]
    sentences = [("doc", s, e) for s, e in ((0, 37), (37, 250), (250, 251), (251, 700), (700, 1000))]
    counts = {coverage(gold, chunks).covered for chunks in (fixed, windows, sentences)}
    assert counts == {420 - 120 + 100}
    assert coverage(gold, []) == Coverage(400, 0, 0) and coverage([], fixed) == Coverage(0, 1000, 0)
