"""Evidence spans' character counts (metrics/spans.py, issue 35) against a brute-force reference that marks every
character: random spans over a few documents, overlapping, touching, empty and at the ends. The evidence family's
fast paths (a union grown span by span in ``evidence_row``, chunk ids looked up at once and spans read only to the
deepest cutoff in ``trace_spans``, the usual chunk and gold span read with a few checks) against the plain
readings they replace."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from ragscore.loaders.chunks import Chunk, ChunkIndex, entry_span, load_chunks, trace_spans
from ragscore.loaders.gold import parse_gold_item, parse_gold_item_checked
from ragscore.metrics.spans import Coverage, coverage, evidence_row, union

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


def _reference_row(gold, ranked, cited, cutoffs):
    """evidence_row's values, each character marked: the union of the top K made afresh for every K."""
    gold_chars = _marked(gold)
    if not gold_chars:
        return None

    def counts(spans):
        chars = _marked(spans)
        return len(gold_chars & chars), len(chars)

    at = [counts([s for s in ranked[:k] if s is not None]) for k in cutoffs]
    n = len(gold_chars)
    covered, retrieved = counts(cited)
    return (*(c / n for c, _ in at), *(c / r if r else 0.0 for c, r in at), *(c / (n + r - c) for c, r in at),
            *(1.0 if c else 0.0 for c, _ in at), covered / n, covered / retrieved if retrieved else 0.0)


def _ranked_spans(size: int = 40):
    span = st.tuples(st.sampled_from(DOCUMENTS), st.integers(0, size), st.integers(0, size)).map(
        lambda t: (t[0], min(t[1], t[2]), max(t[1], t[2])))
    backwards = st.tuples(st.sampled_from(DOCUMENTS), st.integers(1, size), st.integers(0, size)).map(
        lambda t: (t[0], t[1], t[2] % t[1]))  # end before start: holds no character, as an empty span
    return st.lists(st.one_of(span, span, span, st.none(), backwards), max_size=14)


@given(_spans(), _ranked_spans(), _spans(), st.lists(st.integers(1, 16), max_size=6))
@settings(max_examples=3000, deadline=None)
def test_evidence_row_counts_each_character_as_marking_them_does(gold, ranked, cited, cutoffs):
    """Cutoffs in any order, repeated, past the ranking's end; a ranking with gaps (None) and empty spans."""
    assert evidence_row(gold, ranked, cited, tuple(cutoffs)) == _reference_row(gold, ranked, cited, cutoffs)
    assert evidence_row(gold, ranked, cited, cutoffs) == _reference_row(gold, ranked, cited, cutoffs)


def test_evidence_row_on_a_worked_example():
    gold = [("a", 10, 30), ("b", 0, 10)]  # 30 gold characters
    ranked = [("c", 0, 50), None, ("a", 20, 40), ("a", 0, 15), ("a", 14, 21), ("b", 5, 5)]
    row = evidence_row(gold, ranked, [("a", 25, 35), ("a", 30, 31)], (1, 3, 10))
    # top 1: nothing gold; top 3: a[20,30) of 70 characters; all: a[10,30) of 50 + 40 characters
    assert row == (0.0, 10 / 30, 20 / 30, 0.0, 10 / 70, 20 / 90, 0.0, 10 / 90, 20 / 100, 0.0, 1.0, 1.0,
                   5 / 30, 5 / 10)


def _reference_trace_spans(entries, ids, citations, index):
    """trace_spans as first written: every entry read by entry_span, the cited ones through a map of ids."""
    listed = entries if type(entries) is list else ()
    ranked = [entry_span(entry) for entry in listed]
    if index is not None:
        for rank, ident in enumerate(ids):
            if rank >= len(ranked):
                ranked.append(index.span(ident))
            elif ranked[rank] is None:
                ranked[rank] = index.span(ident)
    cited = []
    if citations:
        by_id = {}
        for ident, span in zip(ids, ranked, strict=False):
            if span is not None:
                by_id.setdefault(ident, span)
        for ident in citations:
            span = by_id.get(ident)
            if span is None and index is not None:
                span = index.span(ident)
            if span is not None:
                cited.append(span)
    return ranked, cited


IDS = ("c1", "c2", "c3", "c4", "x")
INDEX = ChunkIndex([Chunk("c1", "a", 0, 10), Chunk("c2", "a", 5, 20), Chunk("c3", "b", 0, 7), Chunk("c9", "c", 3, 3)])
_offset = st.one_of(st.integers(0, 30), st.integers(-3, -1), st.booleans(), st.none(), st.just("4"))
_entry = st.one_of(
    st.sampled_from(IDS),
    st.fixed_dictionaries({"id": st.sampled_from(IDS), "doc": st.sampled_from(("a", "b", "", 7, True)),
                           "start": _offset, "end": _offset}),
    st.fixed_dictionaries({"id": st.sampled_from(IDS), "start": _offset, "end": _offset},
                          optional={"doc_id": st.sampled_from(("a", "b")), "doc": st.none()}),
    st.fixed_dictionaries({"id": st.sampled_from(IDS), "page_content": st.text(max_size=5),
                           "metadata": st.fixed_dictionaries({"source": st.just("a"), "start_index": _offset})}),
    st.fixed_dictionaries({"id": st.sampled_from(IDS)}),
    st.none(), st.integers(0, 3),
)


@given(st.one_of(st.lists(_entry, max_size=12), st.lists(st.sampled_from(IDS), min_size=1, max_size=12), st.none()),
       st.lists(st.sampled_from(IDS), max_size=12), st.lists(st.sampled_from((*IDS, "c9", "zz")), max_size=4),
       st.sampled_from((None, INDEX)), st.one_of(st.none(), st.integers(0, 14)), st.booleans())
@settings(max_examples=3000, deadline=None)
def test_trace_spans_reads_what_entry_span_and_the_chunking_give(entries, ids, citations, index, depth, own_ids):
    """Entries of every kind (their own spans, chunk ids, malformed ones), the ids read from them or a list of
    another length; each citation's span found wherever it ranks, past ``depth`` too."""
    if own_ids and type(entries) is list:
        ids = [e.get("id") if type(e) is dict else e for e in entries if type(e) is str or type(e) is dict]
    ranked, cited = _reference_trace_spans(entries, ids, citations, index)
    assert trace_spans(entries, ids, citations, index, depth) == (ranked if depth is None else ranked[:depth], cited)


@given(st.lists(st.tuples(st.sampled_from(DOCUMENTS), st.integers(0, 40), st.integers(0, 40)), max_size=12),
       st.sampled_from(DOCUMENTS), st.integers(0, 45), st.integers(0, 45))
@settings(max_examples=1000, deadline=None)
def test_the_chunks_overlapping_a_span_are_those_sharing_a_character(raw, doc, start, end):
    chunks = [Chunk(f"k{i}", d, min(s, e), max(s, e)) for i, (d, s, e) in enumerate(raw)]
    index = ChunkIndex(chunks)
    expected = sorted((c for c in chunks if c.doc == doc and c.end > start and c.start < end and end > start
                       and c.end > c.start),  # an empty chunk shares no character
                      key=lambda c: (c.start, c.end, c.id))
    assert index.overlapping(doc, start, end) == expected
    assert all(index.span(c.id) == (c.doc, c.start, c.end) for c in chunks) and index.span("nope") is None


_gold_span = st.dictionaries(st.sampled_from(("doc", "start", "end", "grade", "note")),
                             st.one_of(st.integers(-1, 9), st.sampled_from(("d", "", True, None, 2.0))), max_size=5)


@given(st.one_of(st.lists(st.one_of(_gold_span, st.fixed_dictionaries(
    {"doc": st.sampled_from(("d", "e")), "start": st.integers(0, 5), "end": st.integers(0, 9)},
    optional={"grade": st.integers(0, 3), "note": st.just(1)}), st.just("d")), max_size=3), st.just({}), st.none()),
       st.sampled_from((frozenset({"spans"}), frozenset(), frozenset({"spans", "question"}))))
@settings(max_examples=2000, deadline=None)
def test_the_usual_gold_spans_read_as_field_by_field_checks_read_them(spans, keep):
    item = {"qid": "q1", "question": "Why?", "answerable": True, "gold_claim_substr": ["the answer"],
            "gold_citations": ["c1"]}
    if spans is not None:
        item["gold_spans"] = spans
    text = json.dumps(item)
    try:
        expected = parse_gold_item_checked(item, "gold.jsonl", 1, 1, text, keep)
    except Exception as exc:  # an error: the same one, from the fast reading too
        error = type(exc), str(exc)
        try:
            parse_gold_item(item, "gold.jsonl", 1, 1, text, keep)
        except Exception as again:
            assert (type(again), str(again)) == error
        else:
            raise AssertionError(f"no error, expected {error}") from None
        return
    assert parse_gold_item(item, "gold.jsonl", 1, 1, text, keep) == expected


def test_the_usual_chunk_and_the_rest_read_alike(tmp_path):
    lines = ['{"id": "c1", "doc": "a", "start": 0, "end": 10}', '{"id": 7, "doc": "a", "start": 5, "end": 9}',
             '{"id": "c3", "doc": 2, "start": 0, "end": 0, "text": "x"}', '{"doc": "b", "id": "c4", "end": 4, "start": 1}']
    path = tmp_path / "chunks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    index = load_chunks(str(path))
    assert [index.span(i) for i in ("c1", "7", "c3", "c4")] == [("a", 0, 10), ("a", 5, 9), ("2", 0, 0), ("b", 1, 4)]
    for bad, message in (('{"id": "c1", "doc": "a", "start": 3, "end": 4}', 'duplicate chunk id "c1" (first at line 1)'),
                         ('{"id": "c5", "doc": "a", "start": 4, "end": 3}', "expected the chunk to end where it starts"),
                         ('{"id": "c5", "doc": "a", "start": true, "end": 3}', '"start" to be a character offset'),
                         ('{"id": "", "doc": "a", "start": 0, "end": 3}', '"id" to be a non-empty string'),
                         ('{"id": "c5", "dok": "a", "start": 0, "end": 3}', 'unknown key "dok"')):
        path.write_text("\n".join([*lines, bad]) + "\n")
        try:
            load_chunks(str(path))
        except Exception as exc:
            assert message in str(exc) and "chunks.jsonl:5:" in str(exc), str(exc)
        else:
            raise AssertionError(f"read {bad}")
