"""Run every task of a suite, in file order, each even when another fails; build the suite's document.

A task ends ``pass``, ``fail`` (a gate failed) or ``error`` (its input or options could not be
read: the message says where). The suite passes when no task errs and every task passes, except
those marked ``no_fail``; it exits 2 when a task erred, else 1 when a gate failed, else 0, as
every command does.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ragscore.errors import RagscoreError
from ragscore.suite.config import Suite, Task, load_suite
from ragscore.suite.tasks import Figures, Result, execute, figures
from ragscore.version import __version__

SCHEMA_VERSION: Final = 1
FORMATS: Final = ("text", "json", "markdown", "html", "junit")


@dataclass
class TaskOutcome:
    """One task's end: its status, its result (None when it erred) and what the suite keeps of it."""

    task: Task
    status: str                      # "pass", "fail" or "error"
    result: Result | None = field(default=None, repr=False)
    figures: Figures | None = field(default=None, repr=False)
    error: str | None = None

    @property
    def counts(self) -> bool:
        """Whether this task's verdict is the suite's (a task marked no_fail reports only)."""
        return not self.task.no_fail


@dataclass
class SuiteRun:
    """Every task of a suite run: the verdict, the summary, each task's report."""

    suite: Suite
    outcomes: list[TaskOutcome]

    @property
    def errored(self) -> bool:
        """Whether a task could not be run (its input or options were bad)."""
        return any(o.status == "error" for o in self.outcomes)

    @property
    def passed(self) -> bool:
        """Whether no task erred and every task that counts passed its gates."""
        return not self.errored and all(o.status == "pass" for o in self.outcomes if o.counts)

    @property
    def signature(self) -> str:
        """One line naming the version and every task's settings signature (a digest of them)."""
        lines = "\n".join(f"{o.task.name}:{o.task.command}:{o.figures.signature if o.figures else ''}"
                          for o in self.outcomes)
        return f"ragscore:{__version__}|suite:{hashlib.sha256(lines.encode('utf-8')).hexdigest()[:16]}"

    def summary(self) -> list[dict[str, Any]]:
        """One row per task: its command, status and key metrics (and failed gates, or its error)."""
        rows = []
        for o in self.outcomes:
            f = o.figures
            rows.append({
                "task": o.task.name, "command": o.task.command, "status": o.status,
                "no_fail": o.task.no_fail,
                "metrics": {name: f.metrics.get(name) for name in f.key_metrics} if f else {},
                "failed_gates": [name for name, gate in (f.gates if f else {}).items() if gate["status"] == "fail"],
                "error": o.error,
            })
        return rows

    @property
    def document(self) -> dict[str, Any]:
        """The suite's JSON report without the tasks' own reports (``render("json")`` adds them)."""
        from ragscore.reports.document import shown_path

        return {
            "kind": "suite", "pass": self.passed, "schema": SCHEMA_VERSION, "version": __version__,
            "suite": self.suite.name, "source": shown_path(self.suite.source), "signature": self.signature,
            "summary": self.summary(),
        }

    def render(self, format: str = "text") -> Iterator[str]:
        """Yield the suite's report in ``format``: text (the summary table), json, markdown, html or junit."""
        from ragscore.reports import suite_report

        if format == "html":
            from ragscore.reports.suite_html import render_suite_html

            return render_suite_html(self)
        renderers = {"text": suite_report.render_suite_text, "json": suite_report.render_suite_json,
                     "markdown": suite_report.render_suite_markdown, "junit": suite_report.render_suite_junit}
        if format not in renderers:
            from ragscore.errors import UsageError

            raise UsageError(f"unknown suite format {format!r} (formats: {', '.join(FORMATS)})")
        return renderers[format](self)

    def report(self, format: str = "text") -> str:
        """Return the suite's report in ``format``: the command line's bytes."""
        return "".join(self.render(format))

    def notes(self) -> list[str]:
        """Every task's notes, each line naming its task, then each error and the key metrics a task lacks."""
        notes = []
        for o in self.outcomes:
            name = o.task.name
            if o.result is not None:
                notes += [f"{name}: {line}" for line in o.result.notes()]
            if o.error is not None:
                notes.append(f"{name}: error: {o.error}")
            if o.figures is not None:
                notes += [f"{name}: key metric {metric!r} is not among the task's metrics"
                          for metric in o.figures.key_metrics if metric not in o.figures.metrics]
        return notes


def run_suite(path: str | None = None, *, only: str | Sequence[str] = (), cwd: str | Path | None = None) -> SuiteRun:
    """Run the suite ``path`` (default ./ragscore.toml, else [tool.ragscore.suite] of ./pyproject.toml):
    every task (or those named in ``only``, in the file's order), each from the suite file's folder.

    The working directory is that folder while the tasks run (so that every task reads its paths and
    its gates.toml as its command would there); it is restored after. Not for use from threads.
    """
    return run_tasks(load_suite(path, None if cwd is None else Path(cwd)), only)


def run_tasks(suite: Suite, only: str | Sequence[str] = ()) -> SuiteRun:
    """Run the tasks of a suite already read (all, or those named in ``only``, in the file's order)."""
    named = {suite.task(name).name for name in ([only] if isinstance(only, str) else only)}
    chosen = [task for task in suite.tasks if task.name in named] if named else list(suite.tasks)
    outcomes = []
    with contextlib.chdir(suite.folder):
        for task in chosen:
            outcomes.append(run_task(task))
    return SuiteRun(suite, outcomes)


def run_task(task: Task) -> TaskOutcome:
    """Run one task; an input or usage error ends this task alone (status "error")."""
    try:
        result = execute(task)
        confidence = getattr(result, "confidence", None)
        kept = figures(task, result, None if confidence is None else 1 - confidence)
    except RagscoreError as exc:
        return TaskOutcome(task, "error", error=str(exc))
    return TaskOutcome(task, "pass" if result.passed else "fail", result, kept)
