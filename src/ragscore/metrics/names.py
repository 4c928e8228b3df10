"""The scorer's metrics by name: look one up, say which way it improves, and the rule for the names of
scores from other evaluators (they must not take a metric's name)."""

from __future__ import annotations

from ragscore.metrics import METRICS
from ragscore.metrics.registry import CONDITIONAL, REPEATS, SCORES, Direction, MetricSpec
from ragscore.quoting import quote
from ragscore.score_names import CHARACTERS, FIRST, well_spelt

MONITORED = "monitor"  # the family of ragscore monitor's own metrics


def lookup(name: str) -> MetricSpec | None:
    """Find the spec of one of the scorer's metrics by a concrete name (see ``Registry.lookup``)."""
    return METRICS.lookup(name)


def direction_of(name: str) -> Direction:
    """Say which way one of the scorer's metrics, or another evaluator's score, improves."""
    return METRICS.direction_of(name)


def score_name_problem(name: str, sampled: bool = False, monitored: bool = False) -> str | None:
    """Say why a score from another evaluator cannot be called ``name``, or None when it can.

    The one rule, for a trace's "scores", ``--scores`` files and the names gates take as scores:
    spelt as ``ragscore.score_names`` says, not ending in ``@K`` (every cutoff, in diagnosis
    rules), and not one of ragscore's metric names or aliases (nor, for a metric computed per
    cutoff, its name with another suffix: ``ndcg@v2``). The common names (``faithfulness``) are
    declared as scores, so they may be used, and so may the names of metrics a run does not
    compute (``CONDITIONAL``): those of repeated samples unless ``sampled``, and monitor's unless ``monitored``.
    """
    if not well_spelt(name):
        return (f"expected score names of {CHARACTERS}, starting with {FIRST} (like \"faithfulness\"), "
                f"got {quote(name, 40)}")
    metrics = METRICS
    if name in metrics.aliases:
        return (f'a score is named "{name}", like an alias of the ragscore metric {metrics.aliases[name]}: '
                "rename the score")
    spec = metrics.owner(name)
    if spec is not None and spec.family != SCORES and (spec.family not in CONDITIONAL or (
            sampled and spec.family == REPEATS) or (monitored and spec.family == MONITORED)):
        return f'a score is named "{name}", like a ragscore metric ({spec.family}): rename the score'
    if name.endswith("@K"):
        return f'a score is named "{name}", and "@K" stands for every cutoff of a metric: rename the score'
    return None
