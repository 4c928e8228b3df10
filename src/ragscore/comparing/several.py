"""Several runs on one gold set, side by side: ``ragscore compare --gold G RUN_A RUN_B RUN_C ...``.

Every run is scored once; every pair of runs is then compared exactly as ``compare --baseline A
--trace B`` compares them (the same paired test of each metric and the same correction across a
pair's metrics), so a cell of the table and the pairwise report agree. A run's cell for a metric
is its value, marked with the letters of the runs it is significantly better than; each pair has
its wins, ties and losses over the table's metrics.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from ragscore.comparison import Delta, Run, compare_runs, pair_runs
from ragscore.metrics.names import direction_of
from ragscore.metrics.registry import Direction
from ragscore.settings import Settings

LETTERS: Final = string.ascii_uppercase
MAX_RUNS: Final = len(LETTERS)  # each run is named by a letter in the marks
DEFAULT_COLUMNS: Final = ("precision", "chr", "under_refusal", "over_refusal")


@dataclass(frozen=True, slots=True)
class PairResult:
    """Two runs compared: each metric's move from ``a`` to ``b``, and the table's wins, ties and losses."""

    a: int
    b: int
    deltas: dict[str, Delta]
    better: dict[str, int | None]  # metric -> the run significantly better (a or b), None: neither
    wins: int    # metrics of the table where a is significantly better
    ties: int
    losses: int  # ... where b is


def better_of(a: int, b: int, name: str, delta: Delta, alpha: float) -> int | None:
    """Say which run of a pair is significantly better on a metric (the change b − a, adjusted p < alpha)."""
    if delta.p_adjusted is None or delta.delta is None or delta.p_adjusted >= alpha or delta.delta == 0:
        return None
    rises = delta.delta > 0
    return b if rises == (direction_of(name) is Direction.HIGHER) else a


def compare_several(
    runs: Sequence[Run], qids: Sequence[str], settings: Settings, columns: Sequence[str], test: str, correction: str,
    groups: tuple[tuple[int, ...], ...] | None = None,
) -> list[PairResult]:
    """Compare every pair of runs as ``compare`` would (run ``a`` the baseline, ``b`` the candidate; ``groups``: the
    questions of each session, which the tests pair whole)."""
    alpha = 1 - settings.confidence
    out = []
    for a in range(len(runs)):
        for b in range(a + 1, len(runs)):
            paired = pair_runs(runs[a], runs[b], qids, settings, test != "bootstrap" or groups is not None)
            if groups is not None:
                paired = replace(paired, groups=groups)
            deltas = compare_runs(runs[a].metrics, runs[b].metrics, paired, settings, test, correction)
            better = {name: better_of(a, b, name, d, alpha) for name, d in deltas.items()}
            chosen = [better.get(name) for name in columns]
            wins, losses = chosen.count(a), chosen.count(b)
            out.append(PairResult(a, b, deltas, better, wins, len(columns) - wins - losses, losses))
    return out


def marks(run: int, name: str, pairs: Sequence[PairResult]) -> str:
    """The letters of the runs ``run`` is significantly better than on ``name``, in order."""
    beaten = sorted((p.b if p.a == run else p.a) for p in pairs if p.better.get(name) == run)
    return "".join(LETTERS[i] for i in beaten)
