"""Evidence as spans of documents: how many characters of the gold evidence a set of retrieved spans
covers, counted on documents' character offsets, so that gold survives re-chunking.

Pure functions over ``(document, start, end)`` spans (character offsets, end exclusive). Spans that
overlap or touch count their characters once; an empty span counts none. ``coverage`` gives the three
counts every evidence metric is a ratio of: the gold characters, the retrieved characters and the gold
characters retrieved (recall is the last over the first, precision the last over the second, IoU the last
over the first two less the last, a hit is any of it); ``evidence_row`` is the evidence family's row.

``relevant_chunks`` judges the chunks of one chunking (``--chunks``, ``loaders.chunks.ChunkIndex``)
against a question's gold spans, by the one rule ``ragscore qrels`` writes and ``score`` judges
a trace's chunk ids by.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from ragscore.loaders.chunks import ChunkIndex

Span = tuple[str, int, int]  # a document's id, and a start and an end offset into its text (end exclusive)


class Coverage(NamedTuple):
    """The characters of one question's gold evidence and retrieved evidence, and of both."""

    gold: int       # gold characters (each once, however many gold spans hold it)
    retrieved: int  # retrieved characters (each once)
    covered: int    # gold characters among the retrieved ones


def union(spans: Iterable[Span]) -> dict[str, list[tuple[int, int]]]:
    """Each document's spans as sorted, disjoint intervals: overlapping or touching spans joined, empty ones
    left out."""
    by_document: dict[str, list[tuple[int, int]]] = {}
    for document, start, end in spans:
        if end > start:
            by_document.setdefault(document, []).append((start, end))
    out: dict[str, list[tuple[int, int]]] = {}
    for document, intervals in by_document.items():
        intervals.sort()
        joined = [intervals[0]]
        for start, end in intervals[1:]:
            last_start, last_end = joined[-1]
            if start <= last_end:
                joined[-1] = (last_start, max(last_end, end))
            else:
                joined.append((start, end))
        out[document] = joined
    return out


def characters(intervals: Iterable[tuple[int, int]]) -> int:
    """How many characters disjoint intervals hold."""
    return sum(end - start for start, end in intervals)


def shared(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """How many characters two lists of sorted, disjoint intervals share (one pass over both)."""
    total = i = j = 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if end > start:
            total += end - start
        if a[i][1] <= b[j][1]:
            i += 1
        else:
            j += 1
    return total


def coverage(gold: Iterable[Span], retrieved: Iterable[Span]) -> Coverage:
    """The gold characters, the retrieved characters and the gold characters retrieved, each counted once."""
    gold_union, retrieved_union = union(gold), union(retrieved)
    covered = sum(shared(intervals, retrieved_union[document])
                  for document, intervals in gold_union.items() if document in retrieved_union)
    return Coverage(sum(map(characters, gold_union.values())), sum(map(characters, retrieved_union.values())),
                    covered)


def evidence_row(gold: Sequence[Span], ranked: Sequence[Span | None], cited: Sequence[Span], cutoffs: Sequence[int]
                 ) -> tuple[float, ...] | None:
    """One question's evidence metrics, in the order of ``METRICS.names("evidence", cutoffs)``: the recall at each
    cutoff K of the union of the top K retrieved spans (``None``: a retrieved entry without a span, which covers
    nothing), then its precision, IoU and hit at each; then the recall and precision of the cited spans. A
    precision with nothing retrieved (or cited) is 0, as trec_eval's P@K is. None when the gold spans hold no
    character.

    The ranked spans are joined once, each added to the union of those above it (``_counts``), and the counts
    read at each cutoff: not a union of the top K made afresh for each K."""
    if len(gold) == 1:  # one gold span (of a question's usual one to three): its union is itself
        document, start, end = gold[0]
        gold_union = {document: [(start, end)]} if end > start else {}
        gold_chars = max(end - start, 0)
    else:
        gold_union = union(gold)
        gold_chars = sum(map(characters, gold_union.values()))
    if not gold_chars:
        return None
    n = len(ranked)
    stops = _STOPS.get((n, cutoffs)) if type(cutoffs) is tuple else None
    if stops is None:
        stops = [len(range(n)[:k]) for k in cutoffs]  # how many spans ranked[:k] holds, for any k
        if type(cutoffs) is tuple and len(_STOPS) < 1024:
            _STOPS[n, cutoffs] = stops
    at = _counts(gold_union, ranked, stops)
    recall, precision, iou, hit = [], [], [], []
    for covered, retrieved in at:
        recall.append(covered / gold_chars)
        precision.append(covered / retrieved if retrieved else 0.0)
        iou.append(covered / (gold_chars + retrieved - covered))
        hit.append(1.0 if covered else 0.0)
    if len(cited) == 1:  # the usual answer cites one passage: no union to make
        document, start, end = cited[0]
        retrieved = max(end - start, 0)
        covered = shared(gold_union[document], [(start, end)]) if retrieved and document in gold_union else 0
    else:
        covered, retrieved = _counts(gold_union, cited, [len(cited)])[0] if cited else (0, 0)
    return (*recall, *precision, *iou, *hit, covered / gold_chars, covered / retrieved if retrieved else 0.0)


_STOPS: dict[tuple[int, tuple[int, ...]], list[int]] = {}  # evidence_row's stops by (spans ranked, cutoffs)


def _counts(gold_union: Mapping[str, list[tuple[int, int]]], spans: Sequence[Span | None], stops: Sequence[int]
            ) -> list[tuple[int, int]]:
    """For each of ``stops`` S, the gold characters among the first S spans and the characters of their union
    (``None`` spans hold none). One pass: each span is joined to its document's union of the spans before it,
    which adds its new characters to the count; a document's gold characters are counted again only when a span
    adds characters to it."""
    joined: dict[str, tuple[str, int, int] | list[tuple[int, int]]] = {}  # a document's only span, or the union
    covered_in: dict[str, int] = {}  # the gold characters counted in each gold document
    changed: list[str] = []  # the gold documents spans added characters to since the last stop
    covered = retrieved = done = 0
    at: dict[int, tuple[int, int]] = {}
    for stop in sorted(set(stops)):
        for span in spans[done:stop]:
            if span is None:
                continue
            document, start, end = span
            if end <= start:
                continue
            known = joined.get(document)
            if known is None:
                retrieved += end - start
                if document not in gold_union:
                    joined[document] = span  # a list only if the document comes again
                    continue
                joined[document] = [(start, end)]
            else:
                if type(known) is tuple:
                    joined[document] = known = [(known[1], known[2])]
                added = _join(known, start, end)  # type: ignore[arg-type]  # a list now
                if not added:
                    continue
                retrieved += added
                if document not in gold_union:
                    continue
            changed.append(document)
        for document in changed:  # the gold characters of a changed gold document, counted again
            now = shared(gold_union[document], joined[document])  # type: ignore[arg-type]  # a gold document's: a list
            covered += now - covered_in.get(document, 0)
            covered_in[document] = now
        changed.clear()
        done = stop
        at[stop] = (covered, retrieved)
    return [at[stop] for stop in stops]


def _join(intervals: list[tuple[int, int]], start: int, end: int) -> int:
    """Join a non-empty span to sorted, disjoint intervals that neither overlap nor touch, in place; return how
    many characters it adds."""
    i, n = 0, len(intervals)
    while i < n and intervals[i][1] < start:
        i += 1
    j, low, high, inside = i, start, end, 0
    while j < n and intervals[j][0] <= end:
        s, e = intervals[j]
        inside += e - s
        low, high = min(low, s), max(high, e)
        j += 1
    intervals[i:j] = [(low, high)]
    return high - low - inside


GradedSpan = tuple[str, int, int, int]  # a gold span and its grade


def relevant_chunks(gold: Sequence[GradedSpan], index: ChunkIndex, min_overlap: int | None = None) -> dict[str, int]:
    """The chunks of a chunking that hold a question's gold evidence, each with its grade.

    A chunk is relevant when it holds a whole gold span it overlaps, or when at least half of its own
    characters are gold characters; with ``min_overlap`` C, when at least C of its characters are gold
    characters. Its grade is that of the gold span it shares most characters with (of equal shares, the
    higher grade). Chunks that share no character with the gold spans are not relevant.
    """
    gold_union = union((doc, start, end) for doc, start, end, _ in gold)
    out: dict[str, int] = {}
    seen: set[str] = set()
    for doc, start, end, _ in gold:
        for chunk in index.overlapping(doc, start, end):
            if chunk.id in seen:
                continue
            seen.add(chunk.id)
            gold_chars = shared(gold_union[doc], [(chunk.start, chunk.end)])
            spans = [(min(g_end, chunk.end) - max(g_start, chunk.start), grade, g_start, g_end)
                     for g_doc, g_start, g_end, grade in gold
                     if g_doc == doc and g_end > chunk.start and g_start < chunk.end and g_end > g_start]
            if not gold_chars:
                relevant = False
            elif min_overlap is not None:
                relevant = gold_chars >= min_overlap
            else:
                relevant = (2 * gold_chars >= chunk.end - chunk.start
                            or any(chunk.start <= g_start and g_end <= chunk.end for _, _, g_start, g_end in spans))
            if relevant:
                out[chunk.id] = max(spans)[1]
    return out
