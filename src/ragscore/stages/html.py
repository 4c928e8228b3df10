"""Render a stage document as one self-contained HTML page, in the main report's style.

It reuses the main HTML report's style sheet, Content-Security-Policy (the page loads nothing
and runs no script), escaping and gate chart; every value from input is escaped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ragscore.reports.common import fmt, verdict
from ragscore.reports.html import esc, footer, gates_section, html_table, page_head, verdict_html
from ragscore.stages.tables import Table, accounting_table, detail_tables, metric_table, summary_table


def _cell(value: object) -> str:
    """Escape one value: numbers formatted and marked '#' (right-aligned), text as it is ("#1" too: see ``esc``)."""
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return "#" + esc(fmt(value))
    return esc(value)


def _section(table: Table, table_id: str) -> str:
    out = f"<h2>{esc(table.title)}</h2>\n"
    if table.header:
        out += html_table([esc(h) for h in table.header], [[_cell(v) for v in row] for row in table.rows], table_id)
    if table.note:
        out += f'<p class="note">{esc(table.note)}</p>\n'
    return out


def render_stage_html(doc: dict[str, Any]) -> Iterator[str]:
    """Render the verdict, counts, gates with their chart, metrics, the stage's tables and the accounting."""
    stage = esc(doc["stage"])
    yield page_head(f"ragscore {stage} report: {verdict(doc['pass'])}") + f"<h1>ragscore {stage} report</h1>\n"
    yield verdict_html(doc)
    yield _section(summary_table(doc), "counts")
    yield html_table(["input", "path", "sha256"],
                     [[esc(role), f"<code>{esc(i['path'])}</code>", f"<code>{esc(i['sha256'])}</code>"]
                      for role, i in doc["inputs"].items()], "inputs")
    yield gates_section(doc["gates"])
    yield _section(metric_table(doc), "metrics")
    for n, table in enumerate(detail_tables(doc)):
        yield _section(table, f"detail-{n}")
    accounting = accounting_table(doc)
    if accounting is not None:
        yield _section(accounting, "accounting")
    yield footer(doc) + "</body>\n</html>\n"
