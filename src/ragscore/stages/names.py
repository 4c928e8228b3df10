"""The metric names of each stage, with direction and meaning: what gates resolve and reports describe.

Declared in a registry of their own (``STAGE_METRICS``, a second ``Registry``), apart from the
scorer's (``ragscore.metrics.METRICS``) on purpose: the stage names (``accuracy``, ``strict_f1``,
``hits@K``) are not metrics of the main scorer, and declaring them there would let a ``[gates]``
table of ``ragscore score`` name them.
"""

from __future__ import annotations

from typing import Final

from ragscore.metrics.registry import Direction, MetricSpec, Registry, expand

H, L = Direction.HIGHER, Direction.LOWER

COUNTS: Final = (
    MetricSpec("missing", L, "counts", "gold items without a prediction (scored as an empty prediction)", "count"),
    MetricSpec("unknown_predictions", L, "counts", "prediction lines whose id is not in the gold file (ignored)",
               "count"),
    MetricSpec("duplicate_predictions", L, "counts", "prediction lines replaced by a later line with the same id",
               "count"),
)

_NER_KINDS: Final = (
    ("strict", "exact span and type"),
    ("partial", "overlapping span, same type"),
)
NER: Final = tuple(
    MetricSpec(f"{avg}{kind}_{score}", H, "ner",
               f"{'macro-averaged' if avg else 'micro-averaged'} {score} of entities, {how}")
    for avg in ("", "macro_")
    for kind, how in _NER_KINDS
    for score in ("precision", "recall", "f1")
) + tuple(
    MetricSpec(f"token_{score}", H, "ner", f"micro-averaged {score} of (white-space token, type) pairs")
    for score in ("precision", "recall", "f1")
)

CLASSIFY: Final = (
    MetricSpec("accuracy", H, "classify", "share of gold items predicted with their exact label"),
    MetricSpec("macro_precision", H, "classify", "mean precision over the labels in gold or predictions"),
    MetricSpec("macro_recall", H, "classify", "mean recall over the labels in gold or predictions"),
    MetricSpec("macro_f1", H, "classify", "mean F1 over the labels in gold or predictions"),
    MetricSpec("weighted_precision", H, "classify", "precision averaged over labels, weighted by support"),
    MetricSpec("weighted_recall", H, "classify", "recall averaged over labels, weighted by support"),
    MetricSpec("weighted_f1", H, "classify", "F1 averaged over labels, weighted by support"),
)
HIERARCHY: Final = (
    MetricSpec("category_accuracy", H, "classify", "share of gold items predicted within the gold label's category"),
    MetricSpec("category_gap", L, "classify", "category accuracy minus accuracy: errors that stay within a category"),
)

LINK: Final = (
    MetricSpec("hits@K", H, "link", "share of non-NIL mentions whose kb id is among the top K candidates"),
    MetricSpec("mrr", H, "link", "mean reciprocal rank of the gold kb id over non-NIL mentions (0 when absent)"),
    MetricSpec("nil_precision", H, "link", "share of NIL flags given to NIL mentions"),
    MetricSpec("nil_recall", H, "link", "share of NIL mentions flagged NIL"),
    MetricSpec("nil_f1", H, "link", "harmonic mean of NIL precision and recall"),
)


STAGE_METRICS: Final = Registry((*NER, *CLASSIFY, *HIERARCHY, *LINK, *COUNTS))
_HIERARCHY_NAMES: Final = frozenset(spec.name for spec in HIERARCHY)


def stage_specs(stage: str, cutoffs: tuple[int, ...] = (), hierarchy: bool = False) -> dict[str, MetricSpec]:
    """Return the concrete metrics a run of ``stage`` computes, by name, in report order (counts last)."""
    specs = [spec for spec in STAGE_METRICS.specs(stage) if hierarchy or spec.name not in _HIERARCHY_NAMES]
    specs += STAGE_METRICS.specs("counts")
    return {name: spec for spec in specs for name in expand((spec,), cutoffs)}


def find_spec(stage: str, name: str) -> MetricSpec | None:
    """Find a stage metric's spec by a concrete name, whatever the run's settings (``hits@7`` finds ``hits@K``)."""
    spec = STAGE_METRICS.lookup(name)
    return spec if spec is not None and spec.family in (stage, "counts") else None
