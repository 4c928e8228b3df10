"""Render a stage document as one self-contained HTML page, in the main report's style.

It reuses the main HTML report's style sheet, Content-Security-Policy (the page loads nothing
and runs no script), escaping and gate chart; every value from input is escaped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ragscore.reports.html import CSP, CSS, esc, gate_chart, html_table, rule, status_class, verdict_html
from ragscore.reports.markdown import fmt
from ragscore.stages.tables import Table, accounting_table, detail_tables, metric_table, summary_table


def _cell(value: object) -> str:
    """Escape one value: numbers formatted and marked '#' (right-aligned), text as it is ("#1" too: see ``esc``)."""
    if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return "#" + esc(fmt(value))  # type: ignore[arg-type]
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
    verdict = "PASS" if doc["pass"] else "FAIL"
    stage = esc(doc["stage"])
    yield (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>ragscore {stage} report: {verdict}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"<h1>ragscore {stage} report</h1>\n"
    )
    yield verdict_html(doc)
    yield _section(summary_table(doc), "counts")
    yield html_table(["input", "path", "sha256"], [[esc(role), f"<code>{esc(i['path'])}</code>", f"<code>{esc(i['sha256'])}</code>"]
                                              for role, i in doc["inputs"].items()], "inputs")
    gates = doc["gates"]
    yield "<h2>Gates</h2>\n"
    if gates:
        yield html_table(["metric", "rule", "value", "status", "source"], [
            [f"<code>{esc(name)}</code>", esc(rule(g)), "#" + esc(fmt(g["value"])),
             f'<span class="{status_class(g["status"])}">{esc(g["status"])}</span>', esc(g["source"])]
            for name, g in gates.items()], "gates")
        yield gate_chart(gates)
    else:
        yield "<p>No gates are set.</p>\n"
    yield _section(metric_table(doc), "metrics")
    for n, table in enumerate(detail_tables(doc)):
        yield _section(table, f"detail-{n}")
    accounting = accounting_table(doc)
    if accounting is not None:
        yield _section(accounting, "accounting")
    yield (f'<footer>\n<p class="note">ragscore {esc(doc["version"])}; settings: '
           f'<code id="signature">{esc(doc["signature"])}</code></p>\n</footer>\n</body>\n</html>\n')
