"""The report of ``ragscore agree``: annotators' agreement on a gold set, as JSON and Markdown."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ragscore.gates import GateResult
from ragscore.goldset.agreement import EXAMPLES
from ragscore.reports.common import cell, clean, code, fmt, gate_rule, gate_table, verdict
from ragscore.reports.console import gate_lines
from ragscore.version import __version__


def build_agree_document(
    inputs: Sequence[Mapping[str, Any]], fields: Sequence[str], shared: int, partial: Sequence[str],
    metrics: Mapping[str, float | None], disagreeing: Mapping[str, Sequence[str]], results: list[GateResult],
    passed: bool,
) -> dict[str, Any]:
    """Assemble the agreement report: verdict, inputs, measures, gates, then the disagreements."""
    return {
        "pass": passed,
        "schema": 1,
        "kind": "agree",
        "version": __version__,
        "inputs": [dict(entry) for entry in inputs],
        "fields": ["answerable", *fields, "gold_citations"],
        "counts": {"questions": shared, "in_some_files_only": len(partial)},
        "in_some_files_only": list(partial[:EXAMPLES]),
        "metrics": dict(metrics),
        "gates": gate_table(results),
        "disagreeing": {name: {"count": len(qids), "qids": list(qids[:EXAMPLES])}
                        for name, qids in disagreeing.items()},
    }


def render_agree_markdown(doc: Mapping[str, Any]) -> Iterator[str]:
    """Render the agreement for a pull request: verdict, measures, gates, disagreeing questions."""
    files = ", ".join(code(entry["path"]) for entry in doc["inputs"])
    yield (f"# ragscore agree\n\n**{verdict(doc['pass'])}**: {len(doc['inputs'])} annotators ({files}), "
           f"{doc['counts']['questions']} questions in every file.\n\n")
    yield "| measure | value |\n|---|---|\n"
    for name, value in doc["metrics"].items():
        yield f"| {code(name)} | {fmt(value)} |\n"
    if doc["gates"]:
        yield "\n| gate | rule | value | status |\n|---|---|---|---|\n"
        for name, g in doc["gates"].items():
            yield f"| {code(name)} | {gate_rule(g)} | {fmt(g['value'])} | {g['status']} |\n"
    yield "\n| field | questions in disagreement | first of them |\n|---|---|---|\n"
    for name, d in doc["disagreeing"].items():
        yield f"| {code(name)} | {d['count']} | {', '.join(cell(q) for q in d['qids'])} |\n"


def agree_notes(doc: Mapping[str, Any], results: list[GateResult]) -> list[str]:
    """One line per field in disagreement, the qids in some files only, then the gates."""
    notes = []
    if doc["counts"]["in_some_files_only"]:
        shown = ", ".join(doc["in_some_files_only"][:5])
        notes.append(f"{doc['counts']['in_some_files_only']} qids are in some files only (left out): {shown}")
    for name, d in doc["disagreeing"].items():
        if d["count"]:
            notes.append(f"{name}: the annotators disagree on {d['count']} of {doc['counts']['questions']} "
                         f"questions: {', '.join(d['qids'][:5])}" + (", ..." if d["count"] > 5 else ""))
    return [clean(note) for note in notes] + (gate_lines(results, doc["pass"]) if results else [])  # qids: input
