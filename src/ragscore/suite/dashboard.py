"""Turn a suite's history into the dashboard's data: every task's key metrics over the versions,
and the latest run's breakdown.

Tasks are shown in the latest run's order, then those only earlier runs had. A task's charts are
its key metrics of every version (the union, the latest's first). Each point carries its value,
its interval where the run kept one, its gate, and a significant change where a paired test
backs one: the task's own comparison (``compare``, ``trec`` with several runs), or a ``compare``
task of the same run whose candidate is this task's inputs (the same gold and trace sha256).

A history is input: a value that is not a number reads as no value, never as a wrong one.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from ragscore import __version__
from ragscore.api import Reported
from ragscore.suite.history import History

SCHEMA_VERSION: Final = 1


def _number(value: object) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if math.isfinite(value) else None


def _finite(value: Any) -> Any:
    """A history's data with every number JSON cannot write (1e999 reads as infinity) as None."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(v) for key, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _interval(value: object) -> list[float] | None:
    if isinstance(value, list) and len(value) == 2:
        low, high = _number(value[0]), _number(value[1])
        if low is not None and high is not None and low <= high:
            return [low, high]
    return None


def _gate(value: object) -> dict[str, Any] | None:
    if not isinstance(value, dict) or _number(value.get("threshold")) is None or not isinstance(value.get("op"), str):
        return None
    return {"op": value["op"], "threshold": value["threshold"], "warn": _number(value.get("warn")),
            "status": value.get("status") if isinstance(value.get("status"), str) else None}


def _change(value: object) -> dict[str, Any] | None:
    if not isinstance(value, dict) or value.get("significant") is not True:
        return None
    return {"delta": _number(value.get("delta")), "p_adjusted": _number(value.get("p_adjusted"))}


def _sha(inputs: object, role: str) -> str | None:
    entry = inputs.get(role) if isinstance(inputs, dict) else None
    sha = entry.get("sha256") if isinstance(entry, dict) else None
    return sha if isinstance(sha, str) else None


def _linked_changes(tasks: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The changes a compare task of this run vouches for, by the name of each score task it compared."""
    out: dict[str, dict[str, Any]] = {}
    for task in tasks.values():
        if not isinstance(task, dict) or task.get("command") != "compare" or not isinstance(task.get("changes"), dict):
            continue
        gold, trace = _sha(task.get("inputs"), "gold"), _sha(task.get("inputs"), "trace")
        for name, other in tasks.items():
            if (isinstance(other, dict) and other.get("command") == "score" and gold is not None
                    and trace is not None and (_sha(other.get("inputs"), "gold"), _sha(other.get("inputs"), "trace"))
                    == (gold, trace)):
                out[name] = task["changes"]
    return out


def _task_names(records: Sequence[Mapping[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    if records:
        names.update(dict.fromkeys(records[-1]["tasks"]))
    for record in reversed(records):
        names.update(dict.fromkeys(record["tasks"]))
    return list(names)


def _key_metrics(records: Sequence[Mapping[str, Any]], name: str) -> list[str]:
    keys: dict[str, None] = {}
    for record in reversed(records):
        task = record["tasks"].get(name)
        if isinstance(task, dict):
            keys.update(dict.fromkeys(k for k in task.get("key_metrics", []) if isinstance(k, str)))
    return list(keys)


def _point(task: Mapping[str, Any] | None, metric: str, linked: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if task is None:
        return None
    own = task.get("changes")
    changes: Mapping[str, Any] = own if isinstance(own, dict) else linked or {}
    return {
        "value": _number(task.get("metrics", {}).get(metric)),
        "interval": _interval(task.get("intervals", {}).get(metric)),
        "gate": _gate(task.get("gates", {}).get(metric)),
        "change": _change(changes.get(metric)),
    }


def build_dashboard(history: History) -> dict[str, Any]:
    """Assemble the dashboard's data from a history (at least one record)."""
    records = history.records
    linked = [_linked_changes(r["tasks"]) for r in records]
    versions = [{"label": r["label"], "time": r["time"] if isinstance(r.get("time"), str) else None,
                 "pass": r["pass"] is True, "line": line} for r, line in zip(records, history.lines, strict=True)]
    tasks = []
    for name in _task_names(records):
        entries = [r["tasks"].get(name) if isinstance(r["tasks"].get(name), dict) else None for r in records]
        latest_index = max(i for i, e in enumerate(entries) if e is not None)
        latest = entries[latest_index]
        assert latest is not None
        series = {metric: [_point(e, metric, link.get(name)) for e, link in zip(entries, linked, strict=True)]
                  for metric in _key_metrics(records, name)}
        tasks.append({
            "name": name,
            "command": latest["command"],
            "series": series,
            "statuses": [None if e is None else e.get("status") for e in entries],
            "latest": _finite({"version": latest_index, "status": latest.get("status"), "error": latest.get("error"),
                               "metrics": latest.get("metrics", {}), "gates": latest.get("gates", {}),
                               "breakdown": latest.get("breakdown", {}), "changes": latest.get("changes")}),
        })
    return {"kind": "dashboard", "schema": SCHEMA_VERSION, "version": __version__,
            "source": os.path.basename(history.source),
            "suite": records[-1].get("suite") if records else None, "versions": versions,
            "skipped_lines": list(history.skipped), "tasks": tasks}


@dataclass
class Dashboard(Reported):
    """A history's dashboard: render it as HTML, Markdown or JSON (it has no verdict: it passes)."""

    KIND: ClassVar[str] = "dashboard"
    RENDERERS: ClassVar[dict[str, tuple[str, str]]] = {
        "html": ("ragscore.reports.dashboard_report", "render_dashboard_html"),
        "markdown": ("ragscore.reports.dashboard_report", "render_dashboard_markdown"),
    }
    skipped: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return True

    def notes(self) -> list[str]:
        """Which lines of the history were skipped."""
        return list(self.skipped)


def dashboard(history: str | os.PathLike[str]) -> Dashboard:
    """Read a suite's history (``ragscore run --history``) and build its dashboard."""
    from ragscore.errors import InputError
    from ragscore.suite.history import read

    read_back = read(history)
    if not read_back.records:
        raise InputError(read_back.source, "holds no complete run: nothing to show (write one with ragscore run "
                                           "--history)")
    return Dashboard(build_dashboard(read_back), read_back.notes())
