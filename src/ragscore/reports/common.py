"""What every renderer words and formats the same way: numbers, the verdict, gates, Markdown cells.

The score report, the comparison and the stage reports, in every format, take these from here,
so a number, a gate's rule or the verdict reads the same wherever it is shown.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from ragscore.gates import GateResult, format_threshold
from ragscore.metrics.registry import Direction
from ragscore.quoting import has_unsafe, visible

# Characters that Markdown (or the HTML it may carry) would interpret inside a table cell.
# Escaping [ and ] defuses links and images; & is escaped as an entity so none is decoded.
_ACTIVE_RE: Final = re.compile(r"([\\`*_\[\]<>|~])")
_NEWLINES_RE: Final = re.compile(r"\r\n|\r|\n")
# What inline code can show as it is in a table cell: no backtick (it would end the code) and no pipe.
_CODE_RE: Final = re.compile(r"[^`|]+")
# How the verdict counts gates that did not fail, in this order.
_ENDED: Final = (("pass", "passed"), ("warn", "warned"), ("skipped", "skipped"))


def fmt(value: float | int | None) -> str:
    """Format a metric value: counts as integers, rates with four decimals, None as n/a."""
    if value is None:
        return "n/a"
    if isinstance(value, int):
        return str(value)
    return f"{value:.4f}"


def verdict(passed: object) -> str:
    """Name the verdict of a run: PASS or FAIL."""
    return "PASS" if passed else "FAIL"


def gates_verdict(gates: Mapping[str, Mapping[str, Any]], name: Callable[[str], str]) -> str:
    """Say how the gates ended, after the verdict: which failed, else how many passed, warned or were skipped.

    ``name`` shows a metric's name in the report's format (inline code, escaped).
    """
    failed = [metric for metric, gate in gates.items() if gate["status"] == "fail"]
    statuses = [gate["status"] for gate in gates.values()]
    if failed:
        return f"{len(failed)} of {len(gates)} gates failed: " + ", ".join(name(metric) for metric in failed)
    if not gates:
        return "no gates"
    if all(status == "pass" for status in statuses):
        return f"all {len(gates)} gates passed"
    return "no gate failed (" + ", ".join(f"{statuses.count(s)} {word}" for s, word in _ENDED if s in statuses) + ")"


def gate_bound(op: str, bound: float) -> str:
    """Show one bound of a gate: ``>= 0.8``."""
    return f"{op} {format_threshold(bound)}"


def gate_rule(gate: Mapping[str, Any]) -> str:
    """Show a gate's rule: its bound, and its warn level when it has one (``>= 0.9 (warn >= 0.95)``)."""
    rule = gate_bound(gate["op"], gate["threshold"])
    return rule if gate.get("warn") is None else f"{rule} (warn {gate_bound(gate['op'], gate['warn'])})"


def gate_finding(metric: str, gate: Mapping[str, Any], show: Callable[[str], str] = str) -> str:
    """Say what a failed or warned gate found, against the bound it crossed.

    ``precision = 0.7000, expected >= 0.8``; a warning names the gate's bound too. ``show``
    makes the metric's name and the operator safe for the format.
    """
    op = show(gate["op"])
    found = f"{show(metric)} = {fmt(gate['value'])}"
    if gate["status"] == "fail":
        return f"{found}, expected {op} {format_threshold(gate['threshold'])}"
    return (f"{found}, expected {op} {format_threshold(gate['warn'])} to pass without a warning"
            f" (the gate requires {op} {format_threshold(gate['threshold'])})")


def cut_for_table(text: str | None, limit: int = 160) -> str | None:
    """Cut a long claim or question for a table (the JSON report keeps it whole)."""
    if text is None or len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def diagnosis_heading(d: Mapping[str, Any]) -> str:
    """Say what crossed which threshold: 'under_refusal = 0.2500, past 0.15 (lower is better)'."""
    return (f"{d['metric']} = {fmt(d['value'])}, past {format_threshold(d['threshold'])} "
            f"({d['direction']} is better)" + (f", with {d['because']}" if d["because"] else ""))


def clean(text: str) -> str:
    """Keep input from moving the cursor, colouring a terminal or adding a line: each control character
    shows as an escape."""
    return visible(text)


def cell(value: object) -> str:
    """Escape a value for one Markdown table cell: no pipe, markup or control character survives.

    A line break shows as ``<br>``; any other control character as an escape (``\\x1b``).
    """
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return fmt(value)
    text = str(value).replace("&", "&amp;")
    if not has_unsafe(text):  # the common case, kept fast: a report can list a million questions
        return _ACTIVE_RE.sub(r"\\\1", text)
    return "<br>".join(_ACTIVE_RE.sub(r"\\\1", visible(line)) for line in _NEWLINES_RE.split(text))


def code(value: object) -> str:
    """Show a name as Markdown inline code, control characters escaped; a name that code cannot hold
    shows as an escaped cell."""
    text = visible(str(value))
    return f"`{text}`" if _CODE_RE.fullmatch(text) else cell(text)


def signature_line(signature: str) -> str:
    """Show the settings signature as Markdown inline code (it holds refusal tokens and the seed, from the input)."""
    return f"\nSettings: `{visible(signature).replace('`', '')}`\n"


def metric_rows(
    metrics: Mapping[str, float | None], gates: Mapping[str, Mapping[str, Any]]
) -> list[tuple[str, str, str, str]]:
    """Lay out the text summary's table: each metric, its value, its gate's bound and status (blank without a gate)."""
    rows = []
    for name, value in metrics.items():
        gate = gates.get(name)
        rule = gate_bound(gate["op"], gate["threshold"]) if gate else ""
        rows.append((clean(name), fmt(value), rule, gate["status"] if gate else ""))
    return rows


def aligned(rows: list[tuple[str, str, str, str]], paint: Callable[[str], str] = str) -> list[str]:
    """Align the text summary's metric table under its header; ``paint`` colours a status."""
    widths = [max(len(row[i]) for row in [*rows, ("metric", "value", "gate", "status")]) for i in range(3)]
    lines = [f"{'metric':<{widths[0]}}  {'value':>{widths[1]}}  {'gate':<{widths[2]}}  status\n"]
    for name, value, rule, status in rows:
        lines.append(f"{name:<{widths[0]}}  {value:>{widths[1]}}  {rule:<{widths[2]}}  {paint(status)}".rstrip() + "\n")
    return lines


def change_mark(delta: float | None, direction: Direction | None) -> str:
    """Mark a change of a metric: "▲ better", "▼ worse" (an arrow alone cannot say which), "=" for
    none up to the last bits (a mean over 2 values against one over 3), a bare arrow for a count
    that is neither better nor worse when it moves; empty for no change computed."""
    if delta is None:
        return ""
    if abs(delta) < 1e-12:
        return "="
    arrow = "▲" if delta > 0 else "▼"
    if direction is None:
        return arrow
    return arrow + (" better" if (delta > 0) == (direction is Direction.HIGHER) else " worse")


# The report formats of score (and of the stages): json is the document, the rest render it.
FORMATS: Final = ("json", "markdown", "text", "html", "junit")


def shown_path(spec: str) -> str:
    """Show one path (or "-") without the machine's folders (no absolute paths in reports): relative to the
    working folder inside it, else by its name alone."""
    if spec == "-":
        return "-"
    path = Path(spec)
    if not path.is_absolute():
        return path.as_posix()
    try:
        return Path(os.path.relpath(path)).as_posix() if path.is_relative_to(Path.cwd()) else path.name
    except ValueError:  # another drive on Windows
        return path.name


def gate_table(results: list[GateResult]) -> dict[str, dict[str, Any]]:
    """Return the gates keyed by metric, as the main report has them (a settings file's path as every report shows
    a path: no folder of the machine)."""
    return {
        r.gate.metric: {"op": r.gate.op, "threshold": r.gate.threshold, "warn": r.gate.warn, "value": r.value,
                        "status": r.status.value, "source": shown_path(r.gate.source)}
        for r in results
    }
