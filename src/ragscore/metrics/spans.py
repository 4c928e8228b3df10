"""Evidence as spans of documents (issue 35, begun): how many characters of the gold evidence a set of
retrieved spans covers, counted on documents' character offsets, so that gold survives re-chunking.

Pure functions over ``(document, start, end)`` spans (character offsets, end exclusive). Spans that
overlap or touch count their characters once; an empty span counts none. ``coverage`` gives the three
counts every evidence metric is a ratio of: the gold characters, the retrieved characters and the gold
characters retrieved (recall is the last over the first, precision the last over the second, IoU the last
over the first two less the last, a hit is any of it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

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
