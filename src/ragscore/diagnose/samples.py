"""Pick the worst questions for a metric while a worker still holds its questions.

A worker does not know yet which metrics will be diagnosed (that needs the totals of every
worker), so it picks, for each metric that has a rule, its own ``n`` worst questions among
those whose value is past the rule's bound; the parent keeps the ``n`` worst of all workers.
Worst means the lowest value for a higher-is-better metric (the highest otherwise); ties go
to the smaller qid. Answer metrics are read from the packed codes, grouped, so the cost is a
pass over the questions plus one per metric over the questions past the bound.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Callable, Mapping, Sequence
from itertools import chain

from ragscore.diagnose import Sample
from ragscore.metrics.registry import Direction, split_cutoff

Picked = tuple[float, str, Sample]  # (sort key: lower is worse, qid, the sample)
Found = tuple[float, str, int, float]  # (sort key, qid, position in the part, value)


def worst_questions(
    targets: Sequence[tuple[str, Direction, float]],
    n: int,
    codes: array[int],
    code_values: Callable[[int], Sequence[float | None]],
    answer_names: Sequence[str],
    floats: Mapping[str, Sequence[float]],
    qid_of: Callable[[int], str],
) -> dict[str, list[Found]]:
    """Return, per target metric this part can score, its ``n`` worst questions past the bound.

    A target named with ``@K`` (a rule for every cutoff of a score from another evaluator, whose
    names are only known now) stands for each such score this part has, unless targeted itself.
    """
    named = {name for name, _, _ in targets}
    targets = [expanded for target in targets for expanded in (
        [(f, target[1], target[2]) for f in floats if split_cutoff(f)[0] == target[0] and f not in named]
        if target[0].endswith("@K") else [target])]
    answer_index = {name: i for i, name in enumerate(answer_names)}
    groups: dict[int, list[int]] = {}
    if any(name in answer_index and name not in floats for name, _, _ in targets):
        for position, code in enumerate(codes):
            groups.setdefault(code, []).append(position)
    picked: dict[str, list[Found]] = {}
    for name, direction, bound in targets:
        sign = 1.0 if direction is Direction.HIGHER else -1.0
        if name in floats:
            values = floats[name]
            # NaN (not counted) compares false either way, so it is never picked.
            if direction is Direction.HIGHER:
                positions = [p for p, v in enumerate(values) if v < bound]
            else:
                positions = [p for p, v in enumerate(values) if v > bound]
            best = heapq.nsmallest(n, positions, key=lambda p: (sign * values[p], qid_of(p)))  # noqa: B023
            chosen = [(p, values[p]) for p in best]
        elif name in answer_index:
            i = answer_index[name]
            by_value: dict[float, list[list[int]]] = {}
            for code, members in groups.items():
                value = code_values(code)[i]
                if value is not None and (value < bound if direction is Direction.HIGHER else value > bound):
                    by_value.setdefault(value, []).append(members)
            chosen = []
            for value in sorted(by_value, key=lambda v: sign * v):  # noqa: B023
                tied = heapq.nsmallest(n - len(chosen), chain.from_iterable(by_value[value]), key=qid_of)
                chosen += [(p, value) for p in tied]
                if len(chosen) >= n:
                    break
        else:
            continue  # a metric this run has no per-question values of (a count, a corpus score)
        picked[name] = [(sign * value, qid_of(p), p, value) for p, value in chosen]
    return picked


def with_texts(
    found: Mapping[str, list[Found]], texts: Mapping[int, tuple[str | None, str | None]]
) -> dict[str, list[Picked]]:
    """Turn found positions into samples, with each question's text and claim (by position)."""
    return {name: [(key, qid, Sample(qid, *texts[p], value)) for key, qid, p, value in picks]
            for name, picks in found.items()}


def keep_worst(parts: Sequence[Mapping[str, list[Picked]]], n: int) -> dict[str, list[Sample]]:
    """Merge the workers' picks: the ``n`` worst of all, ties to the smaller qid."""
    names = dict.fromkeys(name for part in parts for name in part)
    return {name: [s for _, _, s in heapq.nsmallest(n, chain.from_iterable(p.get(name, ()) for p in parts),
                                                     key=lambda t: (t[0], t[1]))]
            for name in names}
