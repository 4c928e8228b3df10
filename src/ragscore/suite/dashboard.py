"""Turn a suite's history into the dashboard's data: every task's key metrics over the versions,
and the latest run's breakdown.

Tasks are shown in the latest run's order, then those only earlier runs had. A task's charts are
its key metrics of every version (the union, the latest's first). Each point carries its value,
its interval where the run kept one, its gate, and a significant change where a paired test of
the version before against this one backs it: the task's own (a ``compare``, or a ``trec`` with
several runs, whose baseline is the candidate the same task had the version before), or on a
``score`` task that of such a ``compare`` task of the same run whose candidate is the score
task's inputs (the same gold and trace sha256), on the metrics both give the very same value
(scored alike). A comparison against a fixed baseline marks
nothing: its change is not one between versions.

A history is input: a value that is not a number reads as no value, never as a wrong one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from ragscore.reports.reported import Renderer, Reported
from ragscore.suite.dashboard_report import render_dashboard_html, render_dashboard_markdown
from ragscore.suite.history import History
from ragscore.version import __version__

SCHEMA_VERSION: Final = 1


_OPS: Final = (">=", "<=", ">", "<")  # a gate on the value, drawn on its chart
_REGRESSION: Final = "worse by <="    # a comparison's allowed worsening: in its gate table, not on a chart
_BIGGEST: Final = 2 ** 53              # past this, no number a chart can place


def _number(value: object) -> float | int | None:
    """A number of the history, or None: not a number, not finite, or too large to draw."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value if abs(value) <= _BIGGEST else None  # infinity and NaN too


def _finite(value: Any) -> Any:
    """A history's data with every number JSON or a chart cannot hold (1e999 reads as infinity) as None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number(value)
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


def _gate(value: object, ops: tuple[str, ...] = _OPS) -> dict[str, Any] | None:
    """A gate as the charts (``ops``: on the value) and tables (a regression too) read it; None: none,
    or not one they can show."""
    if not isinstance(value, dict) or _number(value.get("threshold")) is None or value.get("op") not in ops:
        return None
    status = value.get("status")
    return {"op": value["op"], "threshold": value["threshold"], "warn": _number(value.get("warn")),
            "value": _number(value.get("value")), "status": status if isinstance(status, str) else None}


def _change(value: object) -> dict[str, Any] | None:
    if not isinstance(value, dict) or value.get("significant") is not True:
        return None
    return {"delta": _number(value.get("delta")), "p_adjusted": _number(value.get("p_adjusted"))}


def _sha(entry: object) -> str | None:
    sha = entry.get("sha256") if isinstance(entry, dict) else None
    return sha if isinstance(sha, str) else None


def _pair(task: object) -> tuple[str | None, str | None]:
    """The sha256 of what a task's paired test compared: (baseline, candidate); (None, None) without one."""
    if not isinstance(task, dict) or not isinstance(task.get("inputs"), dict):
        return None, None
    inputs = task["inputs"]
    runs = inputs.get("runs")
    if task.get("command") in ("compare", "trec") and isinstance(runs, list) and len(runs) > 1:
        return _sha(runs[0]), _sha(runs[-1])
    if task.get("command") == "compare":
        return _sha(inputs.get("baseline")), _sha(inputs.get("trace"))
    return None, None


def _consecutive(task: object, before: object) -> bool:
    """Whether a task's paired test compared this version with the one before (its baseline is the
    candidate that version's same task had)."""
    baseline, _ = _pair(task)
    _, previous = _pair(before)
    return baseline is not None and baseline == previous


def _changes(records: Sequence[Mapping[str, Any]], i: int) -> dict[str, Mapping[str, Any]]:
    """The significant changes version ``i`` can show, by task: a paired test of the version before
    against this one; on a score task, that of a compare task whose candidate is the score task's
    inputs (the same gold and trace sha256)."""
    if i == 0:
        return {}
    tasks, before = records[i]["tasks"], records[i - 1]["tasks"]
    out: dict[str, Mapping[str, Any]] = {}
    for name, task in tasks.items():
        if not isinstance(task, dict) or not isinstance(task.get("changes"), dict):
            continue
        if not _consecutive(task, before.get(name)):
            continue
        out[name] = task["changes"]
        if task.get("command") != "compare" or not isinstance(task.get("inputs"), dict):
            continue
        gold, trace = _sha(task["inputs"].get("gold")), _sha(task["inputs"].get("trace"))
        for other, entry in tasks.items():
            if (isinstance(entry, dict) and entry.get("command") == "score" and isinstance(entry.get("inputs"), dict)
                    and gold is not None and trace is not None
                    and (_sha(entry["inputs"].get("gold")), _sha(entry["inputs"].get("trace"))) == (gold, trace)):
                out[other] = _same_values(task, entry)
    return out


def _same_values(compare: Mapping[str, Any], score: Mapping[str, Any]) -> dict[str, Any]:
    """A compare task's changes of the metrics a score task has the very same value of (scored alike: the
    same settings, or settings that do not change them)."""
    candidate, values = compare.get("metrics"), score.get("metrics")
    if not isinstance(candidate, dict) or not isinstance(values, dict):
        return {}
    return {metric: change for metric, change in compare["changes"].items()
            if metric in values and _number(values[metric]) is not None and candidate.get(metric) == values[metric]}


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


def _point(task: Mapping[str, Any] | None, metric: str, changes: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if task is None:
        return None
    return {
        "value": _number(task.get("metrics", {}).get(metric)),
        "interval": _interval(task.get("intervals", {}).get(metric)),
        "gate": _gate(task.get("gates", {}).get(metric)),
        "change": _change((changes or {}).get(metric)),
    }


def _signature(task: Mapping[str, Any] | None) -> str | None:
    value = None if task is None else task.get("signature")
    return value if isinstance(value, str) else None


def build_dashboard(history: History) -> dict[str, Any]:
    """Assemble the dashboard's data from a history (at least one record)."""
    records = history.records
    changes = [_changes(records, i) for i in range(len(records))]
    versions = [{"label": r["label"], "time": r["time"] if isinstance(r.get("time"), str) else None,
                 "pass": r["pass"] is True, "line": line} for r, line in zip(records, history.lines, strict=True)]
    tasks = []
    for name in _task_names(records):
        entries = [r["tasks"].get(name) if isinstance(r["tasks"].get(name), dict) else None for r in records]
        latest_index = max(i for i, e in enumerate(entries) if e is not None)
        latest = entries[latest_index]
        assert latest is not None
        series = {metric: [_point(e, metric, found.get(name)) for e, found in zip(entries, changes, strict=True)]
                  for metric in _key_metrics(records, name)}
        signatures = [_signature(e) for e in entries]
        gates = latest.get("gates", {})
        tasks.append({
            "name": name,
            "command": latest["command"],
            "series": series,
            "statuses": [None if e is None else e["status"] for e in entries],
            # Where the task's settings changed from the version before: its values may not compare.
            "settings_changed": [i for i in range(1, len(entries)) if signatures[i] is not None
                                 and signatures[i - 1] is not None and signatures[i] != signatures[i - 1]],
            "latest": {"version": latest_index, "status": latest["status"], "error": _text(latest.get("error")),
                       "metrics": _finite(latest.get("metrics", {})),
                       "gates": {metric: gate for metric, g in gates.items()
                                 if (gate := _gate(g, (*_OPS, _REGRESSION))) is not None},
                       "breakdown": _finite(latest.get("breakdown", {}))},
        })
    return {"kind": "dashboard", "schema": SCHEMA_VERSION, "version": __version__,
            "source": os.path.basename(history.source),
            "suite": _text(records[-1].get("suite")) if records else None, "versions": versions,
            "skipped_lines": list(history.skipped), "tasks": tasks}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


@dataclass
class Dashboard(Reported):
    """A history's dashboard: render it as HTML, Markdown or JSON (it has no verdict: it passes)."""

    KIND: ClassVar[str] = "dashboard"
    RENDERERS: ClassVar[dict[str, Renderer]] = {
        "html": render_dashboard_html,
        "markdown": render_dashboard_markdown,
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
