"""A suite's history: one JSON line per run, appended, read back for the dashboard.

Each line holds a version label, the time the caller gave (``--time`` or ``SOURCE_DATE_EPOCH``,
never the clock: the same run writes the same line), the suite's and every task's settings
signature, the inputs' sha256 and every task's figures (``suite.tasks.Figures``).

An append is atomic as ``ragscore.appending`` makes it: a run that is killed leaves either its whole
line or a torn one at the end, without a newline. Reading reports and skips such a last line; the next
append cuts it off before writing its own (a last line that is whole JSON but lacks its newline
gets one instead). A line Python's JSON reader cannot read (nested too deeply, an integer of more
digits than it converts) counts as not JSON. Any other line that is not a history record (a merge
conflict's marker, JSON of another shape, nesting deeper than ``MAX_DEPTH``) is an error at its line.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from ragscore import appending
from ragscore.errors import InputError, UsageError
from ragscore.quoting import quote
from ragscore.version import __version__

if TYPE_CHECKING:
    from ragscore.suite.run import SuiteRun

FORMAT_KEY: Final = "ragscore_history"
FORMAT_VERSION: Final = 1
MAX_LINE: Final = 64 * 1024 * 1024  # no history line is that long
MAX_DEPTH: Final = 64  # nor nests that deep (a record ragscore writes nests 7 levels); deeper would overflow the stack
_REQUIRED: Final = ("label", "time", "pass", "tasks")
_EPOCH_RE: Final = re.compile(r"-?\d{1,12}")


def parse_time(text: str, source: str = "--time") -> str:
    """Read a time: seconds since the epoch, or ISO 8601 with a UTC offset (``Z``); return it as UTC ISO 8601."""
    text = text.strip()
    try:
        if _EPOCH_RE.fullmatch(text):
            moment = dt.datetime.fromtimestamp(int(text), dt.UTC)
        else:
            moment = dt.datetime.fromisoformat(text)
            if moment.tzinfo is None:
                raise UsageError(f"{source} {quote(text)}: give a UTC offset (such as Z or +02:00), so that the "
                                 "time means one moment")
        moment = moment.astimezone(dt.UTC)
    except (ValueError, OverflowError, OSError):
        raise UsageError(f"{source} {quote(text)}: expected seconds since 1970 or an ISO 8601 time such as "
                         "2026-11-24T09:00:00Z (in UTC, between the years 1 and 9999)") from None
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:"
            f"{moment.second:02d}Z")


def run_time(given: str | None, environ: Mapping[str, str] = os.environ) -> str | None:
    """The run's time: ``given`` (--time), else SOURCE_DATE_EPOCH, else none (never the clock)."""
    if given is not None:
        return parse_time(given)
    epoch = environ.get("SOURCE_DATE_EPOCH")
    return None if not epoch else parse_time(epoch, "SOURCE_DATE_EPOCH")


def version_label(given: str | None, folder: Path, environ: Mapping[str, str] = os.environ) -> str:
    """The run's version label: ``given`` (--label), else GITHUB_SHA, else ``git describe`` of ``folder``."""
    if given is not None:
        if not given.strip():
            raise UsageError("--label: expected a version label, got an empty one")
        return given
    if environ.get("GITHUB_SHA"):
        return environ["GITHUB_SHA"]
    try:
        done = subprocess.run(["git", "describe", "--always", "--dirty", "--tags"], cwd=folder, capture_output=True,
                              text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        done = None
    if done is not None and done.returncode == 0 and done.stdout.strip():
        return done.stdout.strip()
    raise UsageError("--history needs a version label: give --label (the suite is not in a git checkout, and "
                     "GITHUB_SHA is not set)")


def entry(run: SuiteRun, label: str, time: str | None) -> dict[str, Any]:
    """Build the history line of a suite run."""
    tasks: dict[str, Any] = {}
    for o in run.outcomes:
        task: dict[str, Any] = {"command": o.task.command, "status": o.status, "no_fail": o.task.no_fail,
                                "error": o.error}
        if o.figures is not None:
            task.update(asdict(o.figures))
        tasks[o.task.name] = task
    return {FORMAT_KEY: FORMAT_VERSION, "label": label, "time": time, "version": __version__,
            "suite": run.suite.name, "suite_sha256": run.suite.sha256, "signature": run.signature, "pass": run.passed,
            "tasks": tasks}


def check_appendable(path: str | os.PathLike[str]) -> list[str]:
    """Refuse, before a run, a history that cannot take its line: a folder, a device or a pipe, a
    missing folder, or a file that is not a history (read whole, as the dashboard reads it); return
    what reading it noted."""
    spec = os.fspath(path)
    if not os.path.exists(spec):
        folder = os.path.dirname(spec) or "."
        if not os.path.isdir(folder):
            raise UsageError(f"--history {quote(spec)}: no such folder {quote(folder)}")
        return []
    if not os.path.isfile(spec):
        raise UsageError(f"--history {quote(spec)}: is not a regular file")
    try:
        return read(spec).notes()
    except InputError as exc:
        raise UsageError(f"--history {quote(spec)}: is not a ragscore history ({exc}); name a new file or a history "
                         "ragscore run wrote") from None


def encode(record: Mapping[str, Any]) -> bytes:
    """One history line: compact JSON (no NaN), UTF-8, ending in a newline."""
    return appending.encode(record)


def append(path: str | os.PathLike[str], record: Mapping[str, Any]) -> None:
    """Append one record to the history at ``path`` (created if missing), atomically (``ragscore.appending``)."""
    appending.append(path, encode(record), "--history")


@dataclass
class History:
    """A history read back: its records in file order, and the lines skipped (torn by a crash)."""

    source: str
    records: list[dict[str, Any]]
    lines: list[int]                                           # each record's line
    skipped: list[int] = field(default_factory=list)           # lines that were not JSON

    def notes(self) -> list[str]:
        """Say which lines were skipped."""
        if not self.skipped:
            return []
        shown = ", ".join(map(str, self.skipped[:10])) + (", ..." if len(self.skipped) > 10 else "")
        return [f"{self.source}: {len(self.skipped)} incomplete line{'s' if len(self.skipped) > 1 else ''} skipped "
                f"(a run stopped while writing it?): line {shown}"]


def read(path: str | os.PathLike[str]) -> History:
    """Read a history file; a torn line is skipped (``History.skipped``), a record of the wrong shape is an error."""
    source = os.fspath(path)
    try:
        stream = open(source, "rb")  # noqa: SIM115 (closed below)
    except FileNotFoundError:
        raise InputError(source, "no such file") from None
    except IsADirectoryError:
        raise InputError(source, "is a folder, expected a history file (JSON Lines)") from None
    except OSError as exc:
        raise InputError(source, f"cannot read: {exc.strerror or exc}") from None
    history = History(source, [], [])
    with stream:
        for number, raw in enumerate(iter(lambda: stream.readline(MAX_LINE + 1), b""), 1):
            if len(raw) > MAX_LINE:
                raise InputError(source, f"a line longer than {MAX_LINE:,} bytes: not a history", number)
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
                if raw.endswith(b"\n"):  # a killed run leaves its line without one: this one is whole
                    raise InputError(source, f"{_unreadable(exc)}: not a ragscore history line", number) from None
                history.skipped.append(number)
                continue
            _check(record, source, number)
            history.records.append(record)
            history.lines.append(number)
    return history


def _unreadable(exc: Exception) -> str:
    """Say why a line is no JSON that can be read."""
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply to read"
    if isinstance(exc, (UnicodeDecodeError, json.JSONDecodeError)):
        return "not JSON"
    return "JSON with an integer of too many digits to read"  # Python converts at most 4,300 by default


def _too_deep(value: object) -> bool:
    """Whether ``value`` nests lists and objects deeper than ``MAX_DEPTH`` (walked without recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _check(record: object, source: str, line: int) -> None:
    if not isinstance(record, dict) or FORMAT_KEY not in record:
        raise InputError(source, f"not a ragscore history record (no {FORMAT_KEY!r} key): write histories with "
                                 "ragscore run --history", line)
    if record[FORMAT_KEY] != FORMAT_VERSION:
        raise InputError(source, f"a history record of format {record[FORMAT_KEY]!r}; this ragscore reads format "
                                 f"{FORMAT_VERSION}", line)
    for key in _REQUIRED:
        if key not in record:
            raise InputError(source, f"a history record without {key!r}", line)
    if _too_deep(record):
        raise InputError(source, f"a history record nested deeper than {MAX_DEPTH} levels: not one ragscore run "
                                 "wrote", line)
    if not isinstance(record["label"], str) or not isinstance(record["tasks"], dict):
        raise InputError(source, "a history record's label must be a string and its tasks an object", line)
    for name, task in record["tasks"].items():
        if (not isinstance(task, dict) or not isinstance(task.get("command"), str)
                or task.get("status") not in ("pass", "fail", "error")):
            raise InputError(source, f"task {quote(name)}: expected an object with a command and a status (pass, "
                                     "fail or error)", line)
        for key in ("metrics", "intervals", "gates", "breakdown"):
            if not isinstance(task.get(key, {}), dict):
                raise InputError(source, f"task {quote(name)}: {key} must be an object", line)
        if not isinstance(task.get("key_metrics", []), list):
            raise InputError(source, f"task {quote(name)}: key_metrics must be a list", line)
