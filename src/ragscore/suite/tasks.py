"""Run one task of a suite through its command's Python API, and pick the figures a suite keeps of it.

A task runs exactly as its command would in the suite's folder: the same API call the command
line makes, with the task's options as the command's options. What the suite keeps of each
(``Figures``): every metric, the intervals, the gates, the key metrics, the significant changes
(a comparison), and a breakdown of the latest run for the dashboard (labels and the failing
questions of a scored run, the confusion matrix of classify, the type distribution of ner).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from ragscore.suite.config import Task

# The figures shown of each command when the task names none (those its report has).
DEFAULT_KEYS: Final = {
    "score": ("precision", "chr", "under_refusal", "over_refusal", "ndcg@10"),
    "compare": ("precision", "chr", "under_refusal", "over_refusal"),
    "trec": ("ndcg@10", "map"),
    "ner": ("strict_f1", "partial_f1"),
    "classify": ("accuracy", "macro_f1"),
    "link": ("mrr", "hits@1"),
}
WORST: Final = 10  # failing questions kept of a scored run


class Result(Protocol):
    """What every command's result gives: its report document and formats, notes and verdict."""

    @property
    def passed(self) -> bool: ...

    @property
    def document(self) -> dict[str, Any]: ...

    def render(self, format: str = "json") -> Iterable[str]: ...

    def notes(self) -> list[str]: ...


@dataclass
class Figures:
    """What a suite keeps of one task's result (the history's entry for it)."""

    metrics: dict[str, float | int | None]
    key_metrics: list[str]
    intervals: dict[str, list[float]] = field(default_factory=dict)
    gates: dict[str, dict[str, Any]] = field(default_factory=dict)
    changes: dict[str, dict[str, Any]] | None = None  # metric -> delta, p_adjusted, significant (comparisons)
    breakdown: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)
    signature: str | None = None


def execute(task: Task) -> Result:
    """Run ``task`` through its command's API; raise RagscoreError on bad input."""
    from ragscore import api
    from ragscore.comparing import api as comparing

    o = dict(task.options)
    if task.command == "score":
        config = api.load_config(o.get("gates_file"), **_settings(o))
        return api.score(o["gold"], o["trace"], config=config, scores=o.get("scores"),
                         per_question=o.get("per_question", False), only_failures=o.get("only_failures", False),
                         by=o.get("by", ()), keep_rows=True, jobs=o.get("jobs"))
    if task.command == "compare":
        config = api.load_config(o.get("gates_file"), **_settings(o))
        if "runs" in o:
            return comparing.compare_several(o["gold"], [[run] for run in o["runs"]], names=o.get("names"),
                                             columns=o.get("columns"), config=config, jobs=o.get("jobs"))
        return comparing.compare(o["gold"], o.get("baseline"), o["trace"], baseline_report=o.get("baseline_report"),
                                 config=config, jobs=o.get("jobs"), scores=o.get("scores"),
                                 baseline_scores=o.get("baseline_scores"),
                                 allow_judge_change=o.get("allow_judge_change", False))
    if task.command == "trec":
        from ragscore.trec.api import score_trec

        return score_trec(o["qrels"], o["runs"], measures=o.get("measures", ()), per_query=o.get("per_query", False),
                          complete=o.get("complete", False), max_docs=o.get("max_docs"), level=o.get("level", 1),
                          gates=_gate_text(o.get("gates")), gates_file=o.get("gates_file"),
                          confidence=o.get("confidence", 0.95), bootstrap=o.get("bootstrap", 1000),
                          seed=o.get("seed", "0"))
    from ragscore.stages.api import STAGES

    stage = STAGES[task.command]
    extra = {key: o[key] for key in ("cutoffs", "scheme") if key in o}
    result: Result = stage(o["gold"], o["pred"], gates=o.get("gates"), gates_file=o.get("gates_file"),
                           strict=o.get("strict"), input_format=o.get("input_format", "auto"), **extra)
    return result


# Task keys of score and compare that are keyword settings of the API, under the API's names.
_SETTING_NAMES: Final = {"k": "k", "cutoffs": "cutoffs", "refusal_token": "refusal_tokens",
                         "refusal_pattern": "refusal_patterns", "require_claim": "require_claim",
                         "scope_citations": "scope_citations", "strict": "strict", "gates": "gates",
                         "metrics": "metrics", "confidence": "confidence", "bootstrap": "bootstrap", "seed": "seed",
                         "trace_format": "trace_format", "map": "fields", "repeats": "repeats", "pass_k": "pass_k",
                         "test": "test", "correction": "correction"}


def _settings(options: Mapping[str, Any]) -> dict[str, Any]:
    return {_SETTING_NAMES[key]: value for key, value in options.items() if key in _SETTING_NAMES}


def _gate_text(gates: str | Mapping[str, Any] | None) -> str | None:
    if gates is None or isinstance(gates, str):
        return gates
    from ragscore.keywords import gate_spec

    return gate_spec(gates)


# --- what a suite keeps of each result ---------------------------------------------------------------

def _keys(task: Task, metrics: Mapping[str, Any]) -> list[str]:
    if task.key_metrics is not None:
        return list(task.key_metrics)
    keys = [name for name in DEFAULT_KEYS[task.command] if name in metrics]
    return keys or [name for name, value in metrics.items() if isinstance(value, (int, float))][:2]


def _gates(table: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name: {key: gate.get(key) for key in ("op", "threshold", "warn", "value", "status")}
            for name, gate in table.items()}


def figures(task: Task, result: Result, alpha: float | None = None) -> Figures:
    """Pick what the suite keeps of ``result``; ``alpha`` is a comparison's significance level."""
    doc = result.document
    command = task.command
    if command == "score":
        return _score_figures(task, result, doc)
    if command == "compare" and "pairs" in doc:  # several runs: the last one, against the first
        last = doc["runs"][-1]
        pair = next((p for p in doc["pairs"] if p["baseline"] == doc["runs"][0]["name"]
                     and p["candidate"] == last["name"]), None)
        changes = None if pair is None else {
            name: {"delta": m["delta"], "p_adjusted": m["p_adjusted"], "significant": m.get("better") is not None}
            for name, m in pair["metrics"].items()}
        metrics = dict(last["metrics"])
        return Figures(metrics, _keys(task, metrics), changes=changes, signature=doc.get("signature"),
                       inputs={"gold": doc.get("gold"), "runs": [{"path": r["path"], "sha256": r["sha256"]}
                                                                 for r in doc["runs"]]})
    if command == "compare":
        level = 0.05 if alpha is None else alpha
        metrics = {name: m["candidate"] for name, m in doc["metrics"].items()}
        changes = {name: {"delta": m["delta"], "p_adjusted": m["p_adjusted"],
                          "significant": m["p_adjusted"] is not None and m["p_adjusted"] < level}
                   for name, m in doc["metrics"].items()}
        gates = {name: {"op": "worse by <=", "threshold": r["allowed"], "warn": None, "value": r["worse_by"],
                        "status": r["status"]} for name, r in doc["regressions"].items()}
        return Figures(metrics, _keys(task, metrics), gates=gates, changes=changes, inputs=dict(doc["inputs"]),
                       signature=doc.get("signature"),
                       breakdown={"fixed": doc["changed"]["fixed"], "broken": doc["changed"]["broken"]}
                       if doc.get("changed") else {})
    if command == "trec":
        return _trec_figures(task, doc)
    breakdown: dict[str, Any] = {"counts": doc["counts"]}
    if command == "classify":
        breakdown["confusion"] = doc["confusion"]
    elif command == "ner":
        breakdown["type_distribution"] = doc["type_distribution"]
    metrics = dict(doc["metrics"])
    return Figures(metrics, _keys(task, metrics), gates=_gates(doc["gates"]), breakdown=breakdown,
                   inputs=dict(doc["inputs"]), signature=doc.get("signature"))


def _score_figures(task: Task, result: Result, doc: Mapping[str, Any]) -> Figures:
    from ragscore.metrics.answer import PASSING_LABELS

    passing = {label.value for label in PASSING_LABELS}
    worst = []
    questions = getattr(result, "questions", None)  # a Run that kept its rows (a suite's always does)
    for q in questions() if callable(questions) else ():
        if q["label"] not in passing:
            worst.append({"qid": q["qid"], "label": q["label"], "question": q.get("question"),
                          "reason": q.get("reason")})
            if len(worst) == WORST:
                break
    metrics = dict(doc["metrics"])
    intervals = {name: list(pair) for name, pair in doc.get("intervals", {}).items() if pair is not None}
    breakdown = {"labels": dict(doc["labels"]), "counts": dict(doc["counts"]), "worst": worst}
    return Figures(metrics, _keys(task, metrics), intervals=intervals, gates=_gates(doc["gates"]),
                   breakdown=breakdown, inputs=dict(doc["inputs"]), signature=doc.get("signature"))


def _trec_figures(task: Task, doc: Mapping[str, Any]) -> Figures:
    if doc["kind"] == "trec":
        metrics = dict(doc["metrics"])
        return Figures(metrics, _keys(task, metrics), gates=_gates(doc["gates"]), inputs=dict(doc["inputs"]),
                       signature=doc.get("signature"), breakdown={"counts": dict(doc["counts"])})
    last = doc["runs"][-1]
    alpha = 1 - doc["settings"]["confidence"]
    comparison = doc["comparisons"][-1]["metrics"]
    changes = {name: {"delta": m["delta"], "p_adjusted": m["p_adjusted"],
                      "significant": m["p_adjusted"] is not None and m["p_adjusted"] < alpha}
               for name, m in comparison.items()}
    metrics = dict(last["metrics"])
    return Figures(metrics, _keys(task, metrics), gates=_gates(last["gates"]), changes=changes,
                   inputs=dict(doc["inputs"]), signature=doc.get("signature"),
                   breakdown={"counts": dict(last["counts"])})
