"""Build a stage's report document (the JSON report's data, which every format renders) and its text forms.

Shape, in this key order (``stage_report.schema.json`` is the contract)::

    stage, pass, schema, version, signature, settings, inputs, counts, metrics, gates,
    <the stage's tables>, accounting

The stage's tables: ner ``per_type`` and ``type_distribution``; classify ``per_class``,
``confusion`` and ``top_confusions``; link ``nil``. ``accounting`` lists the ids behind the
counts (missing gold ids, and the ids of unknown and replaced prediction lines, in file order).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from importlib.resources import files
from typing import Any, Final

from ragscore.gates import GateResult
from ragscore.loaders.jsonl import InputFile
from ragscore.reports.common import aligned, gate_table, metric_rows, verdict
from ragscore.reports.document import display_path
from ragscore.reports.json_report import render_json
from ragscore.stages.config import StageConfig
from ragscore.stages.evaluate import StageEvaluation
from ragscore.version import __version__

SCHEMA_VERSION: Final = 1
SCHEMA_FILE: Final = "stage_report.schema.json"
DETAIL_KEYS: Final = {"ner": ("per_type", "type_distribution"),
                      "classify": ("per_class", "confusion", "top_confusions"),
                      "link": ("nil",)}


def load_stage_schema() -> dict[str, Any]:
    """Load the JSON Schema of the stage reports, shipped in the package."""
    schema: dict[str, Any] = json.loads(files("ragscore.stages").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))
    return schema


def signature(config: StageConfig) -> str:
    """Return one line naming the version and every setting that changes a score or a verdict."""
    parts = [f"ragscore:{__version__}", f"stage:{config.stage}", f"strict:{'yes' if config.strict else 'no'}"]
    if config.stage == "link":
        parts.append("cutoffs:" + ",".join(map(str, config.cutoffs)))
    if config.stage == "classify":
        if config.hierarchy is None:
            parts.append("hierarchy:none")
        else:
            text = json.dumps(config.hierarchy, ensure_ascii=False, sort_keys=True)
            parts.append(f"hierarchy:{len(config.hierarchy)}:{hashlib.sha256(text.encode()).hexdigest()[:12]}")
    return "|".join(parts)


def build_stage_document(
    ev: StageEvaluation, config: StageConfig, results: list[GateResult], passed: bool,
    schemes: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Assemble the stage report in its fixed key order; ``schemes``: the tag scheme each CoNLL input
    was read in, by role (gold, pred), recorded with that input."""
    joined = ev.joined
    doc: dict[str, Any] = {
        "stage": ev.stage,
        "pass": passed,
        "schema": SCHEMA_VERSION,
        "version": __version__,
        "signature": signature(config),
        "settings": config.settings(),
        "inputs": {
            role: {"path": display_path(InputFile(spec, hashed=False)), "sha256": digest,
                   **({"scheme": schemes[role]} if schemes and role in schemes else {})}
            for role, spec, digest in zip(("gold", "pred"), joined.paths, joined.digests, strict=True)
        },
        "counts": joined.counts,
        "metrics": ev.metrics,
        "gates": gate_table(results),
    }
    for key in DETAIL_KEYS[ev.stage]:
        doc[key] = ev.detail[key]
    doc["accounting"] = {"missing_ids": joined.missing_ids, "unknown_ids": joined.unknown_ids,
                         "duplicate_ids": joined.duplicate_ids}
    return doc


def render_stage_json(doc: dict[str, Any]) -> Iterator[str]:
    """Render the document as indented JSON (the main report's renderer: no NaN, stable order)."""
    return render_json(doc, questions=False)


def render_stage_text(doc: dict[str, Any]) -> Iterator[str]:
    """Yield a compact summary: the verdict and counts, then one aligned row per metric with its gate."""
    counts = doc["counts"]
    yield (f"ragscore {doc['stage']} {verdict(doc['pass'])}  {counts['gold']} gold items, "
           f"{counts['predicted']} predicted, "
           f"{counts['missing']} missing, {counts['unknown_predictions']} unknown, "
           f"{counts['duplicate_predictions']} duplicate predictions\n")
    yield from aligned(metric_rows(doc["metrics"], doc["gates"]))
