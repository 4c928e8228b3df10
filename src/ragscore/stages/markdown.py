"""Render a stage document as Markdown; every cell that comes from input is escaped."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ragscore.gates import format_threshold
from ragscore.reports.markdown import cell, code, signature_line
from ragscore.stages.tables import Table, accounting_table, detail_tables, metric_table, summary_table


def _verdict(doc: dict[str, Any]) -> str:
    gates = doc["gates"]
    failed = [name for name, g in gates.items() if g["status"] == "fail"]
    if failed:
        detail = f"{len(failed)} of {len(gates)} gates failed: " + ", ".join(code(name) for name in failed)
    elif not gates:
        detail = "no gates"
    elif all(g["status"] == "pass" for g in gates.values()):
        detail = f"all {len(gates)} gates passed"
    else:
        statuses = [g["status"] for g in gates.values()]
        detail = "no gate failed (" + ", ".join(f"{statuses.count(s)} {s}" for s in dict.fromkeys(statuses)) + ")"
    return f"**{'PASS' if doc['pass'] else 'FAIL'}**: {detail}."


def _rule(gate: dict[str, Any]) -> str:
    text = f"{gate['op']} {format_threshold(gate['threshold'])}"
    return text if gate["warn"] is None else f"{text} (warn {gate['op']} {format_threshold(gate['warn'])})"


def _table(table: Table) -> list[str]:
    out = ["", f"## {table.title}", ""]
    if table.header:
        out += ["| " + " | ".join(cell(h) for h in table.header) + " |", "|" + "---|" * len(table.header)]
        out += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.rows]
    if table.note:
        out += ["", table.note] if table.header else [table.note]
    return out


def render_stage_markdown(doc: dict[str, Any]) -> Iterator[str]:
    """Render the verdict, counts, gates, metrics, the stage's tables and the accounting, line by line."""
    out = [f"# ragscore {doc['stage']} report", "", _verdict(doc)]
    out += _table(summary_table(doc))
    out += ["", "## Gates", ""]
    if doc["gates"]:
        out += ["| metric | rule | value | status |", "|---|---|---|---|"]
        out += [f"| {cell(name)} | {_rule(g)} | {cell(g['value'])} | {g['status']} |" for name, g in doc["gates"].items()]
    else:
        out.append("No gates are set.")
    out += _table(metric_table(doc))
    for table in detail_tables(doc):
        out += _table(table)
    accounting = accounting_table(doc)
    if accounting is not None:
        out += _table(accounting)
    yield from (line + "\n" for line in out)
    yield signature_line(doc["signature"])
