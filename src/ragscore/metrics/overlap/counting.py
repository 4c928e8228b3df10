"""Counting n-grams, and their clipped overlap, as fast as the standard library allows.

Every overlap metric counts n-grams and adds up, for the n-grams two texts share, the smaller
of the two counts (SQuAD's and ROUGE-N's overlap, BLEU's clipped matches, chrF's matches). The
counts are plain dicts filled by the C loop ``collections.Counter`` itself uses, without a
``Counter`` per text; and when every n-gram of one side occurs once (most of them, past the
shortest orders), the overlap is the size of the shared key set, taken in C as well. The
integers are the same as ``Counter``'s, so every score stays the same to the bit.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

# The loop behind collections.Counter: C in CPython, and collections' own Python loop elsewhere.
_count_elements: Callable[[dict[Any, int], Iterable[Any]], None] = collections._count_elements  # type: ignore[attr-defined]

__all__ = ["Tally", "count", "overlap", "tally"]

K = TypeVar("K", bound=Hashable)
# A text's n-grams of one order: each one's count, or, when each occurs once, just the set of them.
Tally = dict[Any, int] | set[Any]


def count(items: Iterable[K]) -> dict[K, int]:
    """Count each item (a ``Counter`` as a plain dict)."""
    counts: dict[K, int] = {}
    _count_elements(counts, items)
    return counts


def tally(items: Sequence[Any]) -> Tally:
    """The set of ``items`` when each occurs once (the common case, and cheaper to build), else their counts."""
    unique = set(items)
    return unique if len(unique) == len(items) else count(items)


def overlap(a: Mapping[Any, int] | set[Any], a_total: int, b: Mapping[Any, int] | set[Any], b_total: int) -> int:
    """Add up, over the n-grams both texts have, the smaller count; ``a_total`` and ``b_total`` are the
    numbers of n-grams (the sums of the counts), which tell when a side has each n-gram once."""
    if isinstance(a, set) or isinstance(b, set) or len(a) == a_total or len(b) == b_total:
        # Every count of one side is 1, and so is every minimum: the shared n-grams are the overlap.
        return len((a if isinstance(a, set) else a.keys()) & (b if isinstance(b, set) else b.keys()))
    if len(a) > len(b):
        a, b = b, a
    return sum(min(n, b[key]) for key, n in a.items() if key in b)
