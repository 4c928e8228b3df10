"""Run one stage end to end, without I/O beyond reading its two inputs: load, join, score."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragscore.errors import InputError
from ragscore.loaders.records import Records
from ragscore.quoting import quote
from ragscore.stages import classify, link, ner
from ragscore.stages.config import StageConfig
from ragscore.stages.names import stage_specs
from ragscore.stages.records import Joined, load_joined


@dataclass(frozen=True, slots=True)
class StageEvaluation:
    """What a stage run computed: the joined inputs, the metrics by name and the stage's detail tables."""

    stage: str
    joined: Joined[Any, Any]
    metrics: dict[str, float | int | None]
    detail: dict[str, Any]


def _ordered(
    config: StageConfig, values: dict[str, float | None], joined: Joined[Any, Any]
) -> dict[str, float | int | None]:
    """Put the metrics in the order of the stage's names, with the accounting counts last."""
    counts = joined.counts
    values = {**values, "missing": counts["missing"], "unknown_predictions": counts["unknown_predictions"],
              "duplicate_predictions": counts["duplicate_predictions"]}
    return {name: values[name] for name in stage_specs(config.stage, config.cutoffs, config.hierarchy is not None)}


def _nothing_to_score(joined: Joined[Any, Any], what: str) -> InputError:
    """The error of a run in which neither side holds what the stage scores: it would pass on undefined metrics."""
    return InputError(joined.gold_name, f"{what}, in the gold file or in the predictions ({quote(joined.pred_name)}): "
                                        "nothing to score (every metric of it would be n/a)")


def evaluate_stage(config: StageConfig, gold: str | Records, pred: str | Records) -> StageEvaluation:
    """Load and join the inputs (raising InputError at the first bad line), then score the stage.

    A run in which neither side holds an entity (ner) or a link (link: every gold kb_id null and no
    prediction listing a candidate) is an input error: a wrong column or an empty export, not a pass.
    (classify cannot have none: every gold line has a label.)
    """
    detail: dict[str, Any]
    if config.stage == "ner":
        joined_ner = load_joined(gold, pred, ner.parse_gold, ner.parse_pred, ner.check_pred)
        if not any(doc.entities or found for _, doc, found in joined_ner.pairs):
            raise _nothing_to_score(joined_ner, "no entity")
        result = ner.score_ner(joined_ner)
        detail = {"per_type": result.per_type_table(), "type_distribution": result.distribution()}
        return StageEvaluation("ner", joined_ner, _ordered(config, result.metrics(), joined_ner), detail)
    if config.stage == "classify":
        joined_cls = load_joined(gold, pred, classify.parse_label, classify.parse_label)
        counted = classify.score_classify(classify.joined_pairs(joined_cls), config.hierarchy)
        detail = {
            "per_class": counted.per_class(),
            "confusion": counted.confusion(),
            "top_confusions": counted.top_confusions(),
        }
        return StageEvaluation("classify", joined_cls, _ordered(config, counted.metrics(), joined_cls), detail)
    joined_link = load_joined(gold, pred, link.parse_gold, link.parse_pred)
    if not any(mention.kb_id is not None or (found is not None and found.candidates)
               for _, mention, found in joined_link.pairs):
        raise _nothing_to_score(joined_link, "no link (every gold kb_id is null and no prediction lists a candidate)")
    linked = link.score_link(joined_link, config.cutoffs)
    detail = {"nil": linked.nil_counts()}
    return StageEvaluation("link", joined_link, _ordered(config, linked.metrics(), joined_link), detail)
