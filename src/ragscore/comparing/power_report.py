"""The report of ``ragscore power``: per metric, what a run's size detects and what a change needs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ragscore.reports.common import code, fmt, signature_line
from ragscore.settings import Settings
from ragscore.version import __version__


def build_power_document(settings: Settings, gold: Mapping[str, Any], trace: Mapping[str, Any], target: float,
                         rows: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Assemble the report: the settings, then a row per metric."""
    return {
        "schema": 1,
        "kind": "power",
        "version": __version__,
        "signature": settings.signature(),
        "inputs": {"gold": dict(gold), "trace": dict(trace)},
        "power": target,
        "confidence": settings.confidence,
        "method": "normal test of paired differences (statsmodels NormalIndPower, ratio=0); sd = the run's "
                  "per-question sd times sqrt(2)",
        "metrics": {name: dict(row) for name, row in rows.items()},
    }


def render_power_markdown(doc: Mapping[str, Any]) -> Iterator[str]:
    """A table: each metric's questions, spread, detectable change and the questions a change needs."""
    level = f"{doc['power'] * 100:g}% power, two-sided {1 - doc['confidence']:.2g}"
    yield (f"# ragscore power\n\nWhat a paired comparison of a run like this one can detect ({level}; the "
           "next run's errors taken as independent of this one's, which errs toward more questions).\n\n")
    yield "| metric | value | questions | detectable change | change | questions needed |\n|---|---|---|---|---|---|\n"
    for name, m in doc["metrics"].items():
        yield (f"| {code(name)} | {fmt(m['value'])} | {m['questions']} | {fmt(m['detectable'])} | "
               f"{fmt(m['detect'])} | {m['needed'] if m['needed'] is not None else 'n/a'} |\n")
    yield signature_line(doc["signature"])


def power_notes(doc: Mapping[str, Any]) -> list[str]:
    """One line per metric."""
    notes = []
    for name, m in doc["metrics"].items():
        if m["detectable"] is None:
            notes.append(f"{name}: no spread over {m['questions']} questions: nothing to estimate")
            continue
        notes.append(f"{name}: {m['questions']} questions detect a change of {m['detectable']:.4f}; a change of "
                     f"{fmt(m['detect'])} needs {m['needed']:,} questions")
    return notes
