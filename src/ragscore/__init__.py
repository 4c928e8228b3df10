"""ragscore: a deterministic, dependency-free scorer and CI gate for RAG pipelines.

The Python API (the command line is its first client)::

    import ragscore

    run = ragscore.score("gold.jsonl", "traces.jsonl", gates={"precision": 0.8})
    run.passed, run.metrics["precision"], run.report("markdown")

These names are the stable API; every other module may change between versions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragscore.version import __version__

__all__ = [
    "Agreement",
    "ChunkQrels",
    "Comparison",
    "Config",
    "ConfigError",
    "Dashboard",
    "InputError",
    "Judgments",
    "MonitorRun",
    "Partial",
    "PowerReport",
    "RagscoreError",
    "Run",
    "RunsTable",
    "StageRun",
    "SuiteRun",
    "TrecRun",
    "UsageError",
    "__version__",
    "agree",
    "agree_judge",
    "classify",
    "compare",
    "compare_several",
    "dashboard",
    "finalize",
    "judge",
    "link",
    "load_config",
    "monitor",
    "ner",
    "owner",
    "partial",
    "power",
    "qrels",
    "run_suite",
    "score",
    "score_trec",
    "split",
]

if TYPE_CHECKING:
    from ragscore.api import Run, finalize, load_config, owner, partial, score
    from ragscore.comparing.api import Comparison, PowerReport, RunsTable, compare, compare_several, power
    from ragscore.config import Config
    from ragscore.errors import ConfigError, InputError, RagscoreError, UsageError
    from ragscore.goldset.api import Agreement, agree, agree_judge, split
    from ragscore.judging.api import Judgments, judge
    from ragscore.monitoring.api import MonitorRun, monitor
    from ragscore.partials import Partial
    from ragscore.stages.api import StageRun, classify, link, ner
    from ragscore.suite.dashboard import Dashboard, dashboard
    from ragscore.suite.run import SuiteRun, run_suite
    from ragscore.trec.api import ChunkQrels, TrecRun, qrels, score_trec

# Imported on first use, so that `import ragscore` (and the command line's start) stays light.
_HOMES = {
    name: home
    for home, names in (
        ("ragscore.api", ("Run", "finalize", "load_config", "owner", "partial", "score")),
        ("ragscore.goldset.api", ("Agreement", "agree", "agree_judge", "split")),
        ("ragscore.comparing.api", ("Comparison", "RunsTable", "PowerReport", "compare", "compare_several", "power")),
        ("ragscore.monitoring.api", ("MonitorRun", "monitor")),
        ("ragscore.judging.api", ("Judgments", "judge")),
        ("ragscore.stages.api", ("StageRun", "ner", "classify", "link")),
        ("ragscore.trec.api", ("TrecRun", "score_trec", "ChunkQrels", "qrels")),
        ("ragscore.suite.run", ("SuiteRun", "run_suite")),
        ("ragscore.suite.dashboard", ("Dashboard", "dashboard")),
        ("ragscore.partials", ("Partial",)),
        ("ragscore.config", ("Config",)),
        ("ragscore.errors", ("ConfigError", "InputError", "RagscoreError", "UsageError")),
    )
    for name in names
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ragscore' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
