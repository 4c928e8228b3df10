"""What a suite run is, apart from its reports: each task's outcome, the verdict, the summary and the notes
(``suite.run`` runs the tasks; its reports, ``suite.report`` and ``suite.html``, read these)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Final

from ragscore.suite.config import Suite, Task
from ragscore.suite.tasks import Figures, Result
from ragscore.version import __version__

SCHEMA_VERSION: Final = 1


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
class SuiteOutcome:
    """Every task of a suite run: the verdict, the summary, the notes (``SuiteRun`` adds its reports)."""

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
        from ragscore.reports.common import shown_path

        return {
            "kind": "suite", "pass": self.passed, "schema": SCHEMA_VERSION, "version": __version__,
            "suite": self.suite.name, "source": shown_path(self.suite.source), "signature": self.signature,
            "summary": self.summary(),
        }

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
