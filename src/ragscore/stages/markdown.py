"""Render a stage document as Markdown; every cell that comes from input is escaped."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ragscore.reports.common import cell, code, gate_rule, gates_verdict, signature_line, verdict
from ragscore.stages.tables import Table, accounting_table, detail_tables, metric_table, summary_table


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
    out = [f"# ragscore {doc['stage']} report", "", f"**{verdict(doc['pass'])}**: {gates_verdict(doc['gates'], code)}."]
    out += _table(summary_table(doc))
    out += ["", "## Gates", ""]
    if doc["gates"]:
        out += ["| metric | rule | value | status |", "|---|---|---|---|"]
        out += [f"| {cell(name)} | {gate_rule(g)} | {cell(g['value'])} | {g['status']} |"
                for name, g in doc["gates"].items()]
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
