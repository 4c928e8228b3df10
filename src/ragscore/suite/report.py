"""The reports of ``ragscore run``: the summary table, one JSON with every task's report under its
name, one Markdown with a section per task, one JUnit file with a test suite per task.

Each task's own report is its command's, byte for byte: the JSON embeds the task's JSON text
(indented to its place), the Markdown its Markdown (headings two levels down, under the task's), the JUnit its
test suite (renamed after the task). Task names are checked when the suite is read (letters,
digits, ``_ - .``); every other value from input is escaped by the task's own renderer.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from ragscore.reports.common import cell, code, fmt, signature_line
from ragscore.reports.json_report import dumps_json
from ragscore.reports.junit import clean

if TYPE_CHECKING:
    from ragscore.suite.outcome import SuiteOutcome, TaskOutcome

STATUS_WORDS: Final = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}
_HEADING_RE: Final = re.compile(r"^(#{1,4}) ", re.MULTILINE)
_DECLARATION: Final = '<?xml version="1.0" encoding="UTF-8"?>\n'


def status_word(outcome: TaskOutcome | Mapping[str, Any]) -> str:
    """PASS, FAIL or ERROR; a failing task marked no_fail is "FAIL (no_fail)"."""
    status, no_fail = ((outcome["status"], outcome["no_fail"]) if isinstance(outcome, Mapping)
                       else (outcome.status, outcome.task.no_fail))
    return STATUS_WORDS[status] + (" (no_fail)" if status == "fail" and no_fail else "")


def suite_verdict(run: SuiteOutcome, names: Callable[[list[str]], str] = ", ".join) -> str:
    """Say how the suite ended: which tasks erred or failed (``names`` shows them), else how many passed."""
    erred = [o.task.name for o in run.outcomes if o.status == "error"]
    failed = [o.task.name for o in run.outcomes if o.status == "fail" and o.counts]
    parts = []
    if erred:
        parts.append(f"{len(erred)} of {len(run.outcomes)} tasks could not run: {names(erred)}")
    if failed:
        parts.append(f"{len(failed)} of {len(run.outcomes)} tasks failed a gate: {names(failed)}")
    return "; ".join(parts) if parts else f"all {len(run.outcomes)} tasks passed"


def key_figures(metrics: Mapping[str, Any]) -> str:
    """Show key metrics on one line: ``precision 0.8065  chr 0.8710``."""
    return "  ".join(f"{name} {fmt(value)}" for name, value in metrics.items())


def render_suite_text(run: SuiteOutcome) -> Iterator[str]:
    """The summary table: a row per task with its status and key metrics, then the verdict."""
    from ragscore.reports.common import clean as plain

    rows = [(o["task"], o["command"], status_word(o),
             plain(o["error"]) if o["error"] else key_figures(o["metrics"])) for o in run.summary()]
    widths = [max(len(row[i]) for row in [*rows, ("task", "command", "status", "")]) for i in range(3)]
    yield f"{'task':<{widths[0]}}  {'command':<{widths[1]}}  {'status':<{widths[2]}}  key metrics\n"
    for row in rows:
        yield f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:<{widths[2]}}  {row[3]}".rstrip() + "\n"
    name = f" {plain(run.suite.name)}" if run.suite.name else ""
    yield f"suite{name}: {'PASS' if run.passed else 'FAIL'}: {suite_verdict(run)}\n"


def render_suite_json(run: SuiteOutcome) -> Iterator[str]:
    """The suite's document, then ``tasks``: each task's command, status, error and its own JSON report."""
    doc = run.document
    yield "{\n"
    for key, value in doc.items():
        yield f"  {dumps_json(key)}: {dumps_json(value, indent=2).replace(chr(10), chr(10) + '  ')},\n"
    yield '  "tasks": {'
    for n, o in enumerate(run.outcomes):
        head = {"command": o.task.command, "status": o.status, "no_fail": o.task.no_fail, "error": o.error}
        yield ("\n" if n == 0 else ",\n") + f"    {dumps_json(o.task.name)}: {{\n"
        for key, value in head.items():
            yield f"      {dumps_json(key)}: {dumps_json(value)},\n"
        if o.result is None:
            yield '      "report": null\n    }'
            continue
        text = "".join(o.result.render("json")).rstrip("\n")  # strings hold no raw newline: lines are JSON's
        yield '      "report": ' + text.replace("\n", "\n      ") + "\n    }"
    yield ("\n  }" if run.outcomes else "}") + "\n}\n"


def _summary_table(run: SuiteOutcome) -> Iterator[str]:
    yield "| task | command | status | key metrics |\n|---|---|---|---|\n"
    for o in run.summary():
        figures = cell(o["error"]) if o["error"] else ", ".join(f"{code(name)} {fmt(value)}"
                                                               for name, value in o["metrics"].items())
        yield f"| {code(o['task'])} | {o['command']} | {status_word(o)} | {figures} |\n"


def demote(markdown: str) -> str:
    """Move every heading of a Markdown report two levels down, under its task's (outside fenced code)."""
    parts = re.split(r"(^```.*?^```[^\n]*$)", markdown, flags=re.MULTILINE | re.DOTALL)
    return "".join(part if part.startswith("```") else _HEADING_RE.sub(r"##\1 ", part) for part in parts)


def render_suite_summary(run: SuiteOutcome) -> Iterator[str]:
    """A title, the verdict and the summary table (the GitHub job summary; the Markdown report's start)."""
    title = f"ragscore suite {code(run.suite.name)}" if run.suite.name else "ragscore suite"
    yield f"# {title}\n\n**{'PASS' if run.passed else 'FAIL'}**: {cell(suite_verdict(run))}.\n\n"
    yield from _summary_table(run)


def render_suite_markdown(run: SuiteOutcome) -> Iterator[str]:
    """A title and the summary table, then a section per task holding its own Markdown report."""
    yield from render_suite_summary(run)
    for o in run.outcomes:
        yield f"\n## Task {code(o.task.name)} ({o.task.command}): {status_word(o)}\n\n"
        if o.result is None:
            yield f"Could not run: {cell(o.error)}\n"
            continue
        yield demote("".join(o.result.render("markdown")))
    yield signature_line(run.signature)


def annotation_lines(run: SuiteOutcome) -> list[str]:
    """GitHub Actions annotations: an error per task that could not run and per failed gate (a warning
    per warned one), each titled with its task."""
    from ragscore.reports.common import gate_finding
    from ragscore.reports.github import escape_data, escape_property

    lines = []
    for o in run.outcomes:
        if o.error is not None:
            lines.append(f"::error title={escape_property(f'ragscore {o.task.name}')}::{escape_data(o.error)}")
        for metric, gate in (o.figures.gates if o.figures else {}).items():
            command = {"fail": "error", "warn": "warning"}.get(gate["status"])
            if command is not None:
                title = escape_property(f"ragscore {o.task.name}: gate {metric}")
                finding = (f"{metric} worse by {fmt(gate['value'])} (allowed {gate['threshold']:g})"
                           if str(gate["op"]).startswith("worse") else gate_finding(metric, gate))
                lines.append(f"::{command} title={title}::{escape_data(finding)}")
    return lines


def _compare_suite(doc: Mapping[str, Any]) -> ET.Element:
    """A comparison's test suite: a test case per regression gate."""
    suite = ET.Element("testsuite")
    for metric, r in doc.get("regressions", {}).items():
        case = ET.SubElement(suite, "testcase", classname="ragscore.regressions", name=clean(metric))
        if r["status"] == "fail":
            message = f"{clean(metric)} worse by {fmt(r['worse_by'])}, allowed {r['allowed']:g}"
            ET.SubElement(case, "failure", message=message, type="regression").text = message
    return suite


def _task_suite(o: TaskOutcome) -> ET.Element:
    """The task's own JUnit test suite (a comparison's: its regression gates), named after the task."""
    if o.result is None:
        suite = ET.Element("testsuite")
        case = ET.SubElement(suite, "testcase", classname="ragscore.suite", name="run")
        ET.SubElement(case, "error", message=clean(o.error or ""), type="input").text = clean(o.error or "")
    elif o.task.command == "compare":
        suite = _compare_suite(o.result.document)
    else:
        root = ET.fromstring("".join(o.result.render("junit")).encode("utf-8"))
        found = root.find("testsuite") if root.tag == "testsuites" else root
        assert found is not None
        suite = found
    cases = suite.findall("testcase")
    suite.attrib.update(name=f"{o.task.name} ({o.task.command})", tests=str(len(cases)),
                        failures=str(sum(c.find("failure") is not None for c in cases)),
                        errors=str(sum(c.find("error") is not None for c in cases)),
                        skipped=str(sum(c.find("skipped") is not None for c in cases)))
    for case in cases:
        case.set("classname", f"{o.task.name}.{case.get('classname', '')}".rstrip("."))
    return suite


def render_suite_junit(run: SuiteOutcome) -> Iterator[str]:
    """One JUnit file: a test suite per task (its gates, and its questions with per_question)."""
    suites = [_task_suite(o) for o in run.outcomes]
    totals = {key: str(sum(int(s.get(key, "0")) for s in suites)) for key in ("tests", "failures", "errors")}
    root = ET.Element("testsuites", {"name": "ragscore suite", **totals})
    root.extend(suites)
    ET.indent(root)
    yield _DECLARATION + ET.tostring(root, encoding="unicode") + "\n"


def render_suite_comment(run: SuiteOutcome, key: str | None = None) -> Iterator[str]:
    """The suite as a pull-request comment: the verdict; a row per task with its status, key metrics and failed
    gates; each failed gate against its bound, and each task's error, in a collapsed list; the marker (``key``,
    else the suite's name, else its file's)."""
    from ragscore.reports.common import cut_for_table
    from ragscore.reports.pr_comment import (
        NAME,
        Listing,
        assemble,
        comment_key,
        counted,
        finding,
        footer,
        key_of_path,
        short,
        some,
        table,
    )

    name = f" {short(run.suite.name)}" if run.suite.name else ""
    because = suite_verdict(run, lambda names: some([cell(cut_for_table(n, NAME)) for n in names]))
    tasks = []
    rows = []
    for o, row in zip(run.outcomes, run.summary(), strict=True):
        figures = cell(row["error"]) if row["error"] else ", ".join(f"{code(n)} {fmt(v)}"
                                                                    for n, v in row["metrics"].items())
        tasks.append(f"| {code(row['task'])} | {row['command']} | {status_word(row)} | {figures} | "
                     f"{', '.join(code(g) for g in row['failed_gates'])} |")
        for metric, gate in (o.figures.gates if o.figures else {}).items():
            if gate["status"] == "fail":
                rows.append(f"| {code(o.task.name)} | {finding(metric, gate)} |")
        if o.error is not None:
            rows.append(f"| {code(o.task.name)} | could not run: {cell(o.error)} |")
    details = [(counted(len(rows), "failed gate or error", "failed gates and errors"),
                [Listing("Each task's failed gates and errors:", table(["task", "what"]), rows, "rows")])] if rows \
        else []
    head: list[str | Listing] = [
        f"**ragscore suite{name}: {'PASS' if run.passed else 'FAIL'}** · {because}", "",
        Listing("", table(["task", "command", "status", "key metrics", "failed gates"]), tasks, "tasks")]
    fallback = run.suite.name or key_of_path(str(run.suite.source))
    yield from assemble(head, details, footer(run.signature), comment_key(key, fallback))
