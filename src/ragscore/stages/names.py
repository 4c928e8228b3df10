"""The metric names of each stage, with direction and meaning: what gates resolve and reports describe.

Kept apart from ``ragscore.metrics.registry`` on purpose: the stage names (``accuracy``,
``strict_f1``, ``hits@K``) are not metrics of the main scorer, and registering them there would
let a ``[gates]`` table of ``ragscore score`` name them.
"""

from __future__ import annotations

from typing import Final

from ragscore.metrics.registry import Direction, MetricSpec, split_cutoff

H, L = Direction.HIGHER, Direction.LOWER

COUNTS: Final = (
    MetricSpec("missing", L, "counts", "gold items without a prediction (scored as an empty prediction)", "count"),
    MetricSpec("unknown_predictions", L, "counts", "prediction lines whose id is not in the gold file (ignored)", "count"),
    MetricSpec("duplicate_predictions", L, "counts", "prediction lines replaced by a later line with the same id", "count"),
)

_NER_KINDS: Final = (
    ("strict", "exact span and type"),
    ("partial", "overlapping span, same type"),
)
NER: Final = tuple(
    MetricSpec(f"{avg}{kind}_{score}", H, "ner", f"{'macro-averaged' if avg else 'micro-averaged'} {score} of entities, {how}")
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


def stage_specs(stage: str, cutoffs: tuple[int, ...] = (), hierarchy: bool = False) -> dict[str, MetricSpec]:
    """Return the concrete metrics a run of ``stage`` computes, by name, in report order (counts last)."""
    specs: tuple[MetricSpec, ...]
    if stage == "ner":
        specs = NER
    elif stage == "classify":
        specs = CLASSIFY + (HIERARCHY if hierarchy else ())
    else:
        specs = LINK
    out: dict[str, MetricSpec] = {}
    for spec in specs + COUNTS:
        if spec.parametric:
            for k in cutoffs:
                out[spec.name.replace("@K", f"@{k}")] = spec
        else:
            out[spec.name] = spec
    return out


def find_spec(stage: str, name: str) -> MetricSpec | None:
    """Find a stage metric's spec by a concrete name, whatever the run's settings (``hits@7`` finds ``hits@K``)."""
    every = {spec.name: spec for spec in (NER if stage == "ner" else CLASSIFY + HIERARCHY if stage == "classify" else LINK) + COUNTS}
    if name in every and not every[name].parametric:
        return every[name]
    template, k = split_cutoff(name)
    spec = every.get(template) if k is not None else None
    return spec if spec is not None and spec.parametric else None
