"""Run every task of a suite, in file order, each even when another fails; build the suite's document.

A task ends ``pass``, ``fail`` (a gate failed) or ``error`` (its input or options could not be
read: the message says where). The suite passes when no task errs and every task passes, except
those marked ``no_fail``; it exits 2 when a task erred, else 1 when a gate failed, else 0, as
every command does.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ragscore.errors import RagscoreError, UsageError
from ragscore.suite.config import Suite, Task, load_suite
from ragscore.suite.html import render_suite_html
from ragscore.suite.outcome import SuiteOutcome, TaskOutcome
from ragscore.suite.report import render_suite_json, render_suite_junit, render_suite_markdown, render_suite_text
from ragscore.suite.tasks import execute, figures

FORMATS: Final = ("text", "json", "markdown", "html", "junit")


@dataclass
class SuiteRun(SuiteOutcome):
    """Every task of a suite run: the verdict, the summary, each task's report."""

    def comment(self, key: str | None = None) -> Iterator[str]:
        """Yield the suite as a pull-request comment (``--format pr-comment``); ``key``: its marker's key, else the
        suite's name, else its file's."""
        from ragscore.suite.report import render_suite_comment

        return render_suite_comment(self, key)

    def badge(self, metric: str | None = None) -> Iterator[str]:
        """Yield a shields.io endpoint badge of the verdict, or of ``metric`` (``TASK:METRIC``: a task's metric,
        coloured by its gate)."""
        from ragscore.reports.badge import gate_statuses, metric_badge, verdict_badge

        if metric is None:
            return verdict_badge(self.passed)
        task, colon, name = metric.partition(":")
        outcome = next((o for o in self.outcomes if o.task.name == task), None)
        if not colon or outcome is None:
            from ragscore.suggest import did_you_mean

            raise UsageError(f"--badge-metric: expected TASK:METRIC, a task of the suite and one of its metrics, got "
                             f"{metric!r}" + did_you_mean(task, [o.task.name for o in self.outcomes]))
        figures = outcome.figures
        return metric_badge(name, figures.metrics if figures else {}, gate_statuses(figures.gates if figures else {}))

    def render(self, format: str = "text") -> Iterator[str]:
        """Yield the suite's report in ``format``: text (the summary table), json, markdown, html or junit; a
        ``pr-comment`` and a ``badge`` as ``comment()`` and ``badge()`` give them."""
        if format == "pr-comment":
            return self.comment()
        if format == "badge":
            return self.badge()
        renderers = {"text": render_suite_text, "json": render_suite_json, "markdown": render_suite_markdown,
                     "html": render_suite_html, "junit": render_suite_junit}
        if format not in renderers:
            raise UsageError(f"unknown suite format {format!r} (formats: {', '.join(FORMATS)})")
        return renderers[format](self)

    def report(self, format: str = "text") -> str:
        """Return the suite's report in ``format``: the command line's bytes."""
        return "".join(self.render(format))


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
