"""Build the documents of the trec reports: the JSON report's data, which every format renders.

One run (``kind: "trec"``), in this key order (``trec_report.schema.json`` is the contract)::

    kind, pass, schema, version, signature, settings, inputs, run_id, counts, metrics, trec_names, gates

Several runs (``kind: "trec_compare"``), the first one the baseline::

    kind, pass, schema, version, signature, settings, inputs, counts, trec_names, runs, comparisons

``runs`` holds each run's ``run_id, pass, counts, metrics, gates``; ``comparisons`` each other
run against the baseline: every metric's ``baseline, candidate, delta, delta_interval, p_value,
p_adjusted, method``, as ``ragscore compare`` reports them. With trec_eval's ``-q``, a
``queries`` list closes either document: each scored query's values (of each run, null where a
run did not score it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from ragscore.comparison import Delta
from ragscore.gates import GateResult, gates_pass
from ragscore.loaders.input_file import InputFile
from ragscore.reports.common import gate_table
from ragscore.reports.document import display_path
from ragscore.trec.files import Qrels
from ragscore.trec.scoring import Scored, TrecSettings, compare, paired_queries
from ragscore.version import __version__

SCHEMA_VERSION: Final = 1
SCHEMA_FILE: Final = "trec_report.schema.json"


def load_trec_schema() -> dict[str, Any]:
    """Load the JSON Schema of the trec reports, shipped in the package."""
    import json
    from importlib.resources import files

    schema: dict[str, Any] = json.loads(files("ragscore.trec").joinpath(SCHEMA_FILE).read_text(encoding="utf-8"))
    return schema


def input_of(spec: str, sha256: str) -> dict[str, str]:
    """Name an input as every report does: its path (relative, never absolute) and the sha256 of its content."""
    return {"path": display_path(InputFile(spec, hashed=False)), "sha256": sha256}


def _head(kind: str, passed: bool, settings: TrecSettings, compared: bool) -> dict[str, Any]:
    return {"kind": kind, "pass": passed, "schema": SCHEMA_VERSION, "version": __version__,
            "signature": settings.signature(compared), "settings": settings.as_dict(compared)}


def _trec_names(run: Scored) -> dict[str, str]:
    return {c.name: c.trec for c in run.columns if c.trec is not None}


def build_trec_document(settings: TrecSettings, qrels: tuple[str, str], run: Scored, results: list[GateResult],
                        per_query: bool = False) -> dict[str, Any]:
    """Assemble the report of one run: ``qrels`` is the judgments' (path as given, sha256)."""
    doc = _head("trec", gates_pass(results), settings, False)
    doc.update({
        "inputs": {"qrels": input_of(*qrels), "run": input_of(run.spec, run.sha256)},
        "run_id": run.run_id,
        "counts": run.counts,
        "metrics": run.metrics,
        "trec_names": _trec_names(run),
        "gates": gate_table(results),
    })
    if per_query:
        doc["queries"] = [{"qid": qid, "metrics": run.query_metrics(qid)} for qid in run.evaluated.per_query]
    return doc


def _delta(d: Delta) -> dict[str, Any]:
    return {"baseline": d.baseline, "candidate": d.candidate, "delta": d.delta,
            "delta_interval": None if d.interval is None else list(d.interval), "p_value": d.p_value,
            "p_adjusted": d.p_adjusted, "method": d.method}


def build_comparison_document(settings: TrecSettings, qrels: tuple[str, str], judged: Qrels, runs: Sequence[Scored],
                              results: Sequence[list[GateResult]], per_query: bool = False) -> dict[str, Any]:
    """Assemble the comparison of several runs with the first: each run's values and gates, and the paired tests."""
    qids = paired_queries(judged, runs, settings.complete)
    doc = _head("trec_compare", all(gates_pass(r) for r in results), settings, True)
    doc.update({
        "inputs": {"qrels": input_of(*qrels), "runs": [input_of(r.spec, r.sha256) for r in runs]},
        "counts": {"judged": len(judged.topics), "paired": len(qids)},
        "trec_names": _trec_names(runs[0]),
        "runs": [{"run_id": r.run_id, "pass": gates_pass(gates), "counts": r.counts, "metrics": r.metrics,
                  "gates": gate_table(gates)} for r, gates in zip(runs, results, strict=True)],
        "comparisons": [{"baseline": 0, "candidate": n, "metrics": {
            name: _delta(d) for name, d in compare(runs[0], run, qids, settings).items()}}
            for n, run in enumerate(runs) if n],
    })
    if per_query:
        doc["queries"] = [{"qid": qid, "runs": [r.query_metrics(qid) for r in runs]} for qid in qids]
    return doc


def labels(run_ids: Sequence[str], paths: Sequence[str]) -> list[str]:
    """Name each run for a table or a note: its run id, or its path where runs share a run id (or have
    none), and where paths are shown alike too (a run given twice, or runs in other folders shown by
    their file name), its place among the runs as well ("run.txt (2)"): every run has its own name."""
    named = [run_id if run_id and run_ids.count(run_id) == 1 else path
             for run_id, path in zip(run_ids, paths, strict=True)]
    return [f"{name} ({n})" if named.count(name) > 1 else name for n, name in enumerate(named, 1)]


def run_labels(doc: dict[str, Any]) -> list[str]:
    """Name each run of a comparison document (see ``labels``)."""
    return labels([r["run_id"] for r in doc["runs"]], [source["path"] for source in doc["inputs"]["runs"]])
