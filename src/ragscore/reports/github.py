"""Render the report document for GitHub Actions: workflow-command annotations and the job summary."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from ragscore.quoting import visible
from ragscore.reports.common import gate_finding
from ragscore.reports.files import ReportWriteError

# The runner decodes these from a command's message; anything else passes as it is.
_DATA_ESCAPES: Final = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))
# A property (title=...) also ends at a comma and must not hold the "::" that ends the properties.
_PROPERTY_ESCAPES: Final = (*_DATA_ESCAPES, (":", "%3A"), (",", "%2C"))
_COMMANDS: Final = {"fail": "error", "warn": "warning"}


def _escape(text: str, escapes: Iterable[tuple[str, str]]) -> str:
    # "%" comes first in each table, so the escapes added afterwards are not escaped again.
    for raw, escaped in escapes:
        text = text.replace(raw, escaped)
    return text


def escape_data(text: str) -> str:
    """Escape a workflow command's message so that the runner shows it as written.

    Any other control character (an ESC that would colour the log, a tab, U+2028) shows as an
    escape, as in the reports, so the command is one line of plain text.
    """
    return visible(_escape(text, _DATA_ESCAPES))


def escape_property(text: str) -> str:
    """Escape a workflow command's property value, such as its title."""
    return visible(_escape(text, _PROPERTY_ESCAPES))


def annotation_lines(doc: dict[str, Any], questions: Iterable[Mapping[str, Any]] | None = None) -> list[str]:
    """Return one ``::error`` line per failed gate and one ``::warning`` line per warned gate, in gate order;
    a gate on a grounding rate names the questions whose findings made it (from ``questions``, the report's
    per-question entries, when the run kept them), never what their claims say."""
    lines: list[str] = []
    for metric, gate in doc["gates"].items():
        command = _COMMANDS.get(gate["status"])
        if command is not None:
            title = escape_property(f"ragscore gate {metric}")
            found = gate_finding(metric, gate)
            if metric in _FINDINGS and questions is not None:
                found += _named(questions, *_FINDINGS[metric])
            lines.append(f"::{command} title={title}::{escape_data(found)}")
    return lines


# The findings each grounding rate counts against it (metrics.grounding.Finding: kind, verdicts).
_FINDINGS: Final = {
    "quote_verified_rate": ("quote", frozenset({"misattributed", "unverified"})),
    "quote_misattributed_rate": ("quote", frozenset({"misattributed"})),
    "quote_unverified_rate": ("quote", frozenset({"unverified"})),
    "number_unsupported_rate": ("number", frozenset({"unsupported"})),
    "leak_rate": ("leak", frozenset({"from_context", "invented"})),
    "leak_from_context_rate": ("leak", frozenset({"from_context"})),
}
_NAMED: Final = 5  # questions an annotation names


def _named(questions: Iterable[Mapping[str, Any]], kind: str, verdicts: frozenset[str]) -> str:
    """``: in q2, q6 and 3 more`` for the questions with such a finding (empty when none is known)."""
    qids = [q["qid"] for q in questions if (g := q.get("grounding")) and any(
        f["kind"] == kind and f["verdict"] in verdicts for f in g["findings"])]
    if not qids:
        return ""
    shown = ", ".join(qids[:_NAMED])
    return f": in {shown}" + (f" and {len(qids) - _NAMED:,} more" if len(qids) > _NAMED else "")


def append_step_summary(markdown: Iterable[str], path: str) -> None:
    """Append the Markdown report to the job summary file (GITHUB_STEP_SUMMARY), creating it if need be."""
    # Render the whole text first, so that a failure while rendering appends nothing. The report
    # shows every control character from the input as an escape: its only raw ones are its line ends.
    text = "".join(markdown)
    try:
        with open(path, "a", encoding="utf-8", newline="\n") as summary:
            summary.write(text)
    except OSError as exc:
        raise ReportWriteError(f"{path}: cannot append the GitHub step summary: {exc.strerror}") from None


def report_on_github(document: dict[str, Any], write_line: Callable[[str], object], summary_path: str | None,
                     questions: Iterable[Mapping[str, Any]] | None = None) -> None:
    """Report a run to GitHub Actions as ``score`` and ``merge`` do: each annotation (``annotation_lines``)
    through ``write_line``, then the Markdown report appended to the job summary at ``summary_path``
    (``GITHUB_STEP_SUMMARY``; none when empty or None)."""
    from ragscore.reports.markdown import render_markdown

    for line in annotation_lines(document, questions):
        write_line(line)
    if summary_path:
        append_step_summary(render_markdown(document), summary_path)
