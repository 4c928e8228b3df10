"""Render a compact terminal summary: verdict, counts, and an aligned metric table with gates."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from ragscore.reports.common import aligned, clean, diagnosis_heading, fmt, metric_rows, verdict

__all__ = ["clean", "render_text"]  # clean is re-exported: callers have long taken it from here

_COLOURS: Final = {"pass": "32", "warn": "33", "fail": "31", "skipped": "2", "PASS": "1;32", "FAIL": "1;31"}


def _paint(text: str, key: str, colour: bool) -> str:
    """Wrap ``text`` in an ANSI colour when asked (a terminal, and NO_COLOR unset)."""
    code = _COLOURS.get(key)
    return f"\x1b[{code}m{text}\x1b[0m" if colour and code else text


def render_text(doc: dict[str, Any], *, colour: bool = False) -> Iterator[str]:
    """Yield the summary's lines: one row per metric, with its gate and status when it has one."""
    passed = verdict(doc["pass"])
    counts = doc["counts"]
    # With repeated samples, answered and refused count samples.
    samples = f"{doc['repeats']['samples']} samples, " if "repeats" in doc else ""
    yield f"ragscore {_paint(passed, passed, colour)}  {counts['total']} questions, {samples}{doc['answered']} " \
          f"answered, {doc['refused']} refused, {counts['missing']} missing, {counts['unknown_traces']} unknown, " \
          f"{counts['duplicate_traces']} duplicate traces" \
          + (f", {counts['unreadable']} unreadable" if counts.get("unreadable") else "") \
          + (f", {counts['unreadable_retrieved']} with an unreadable retrieved list"
             if counts.get("unreadable_retrieved") else "") + "\n"
    yield from aligned(metric_rows(doc["metrics"], doc["gates"]), lambda status: _paint(status, status, colour))
    labels = ", ".join(f"{label} {n}" for label, n in doc["labels"].items() if n)
    yield f"labels: {labels or 'none'}\n"
    for d in doc.get("diagnoses", []):
        severity = d["severity"].upper()
        level = "fail" if severity == "CRITICAL" else "warn"
        yield f"{_paint(severity, level, colour)} {clean(diagnosis_heading(d))}\n"
        for cause in d["root_causes"]:
            yield f"  cause: {clean(cause)}\n"
        for action in d["suggested_actions"]:
            yield f"  try:   {clean(action)}\n"
        if d["low_samples"]:
            yield "  worst: " + ", ".join(f"{clean(s['qid'])} ({fmt(s['value'])})" for s in d["low_samples"]) + "\n"
