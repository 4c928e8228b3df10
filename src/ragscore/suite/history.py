"""A suite's history: one JSON line per run, appended, read back for the dashboard.

Each line holds a version label, the time the caller gave (``--time`` or ``SOURCE_DATE_EPOCH``,
never the clock: the same run writes the same line), the suite's and every task's settings
signature, the inputs' sha256 and every task's figures (``suite.tasks.Figures``).

An append is one ``write`` of the whole line to a file opened for appending, under an exclusive
lock where the system has one, then ``fsync``: a run that is killed leaves either its whole line
or a torn one at the end. A torn line is told from a record by not being JSON while starting as
every record starts (``{"ragscore_history":``): reading reports and skips it, and the next append
first ends it with a newline, so that its own line stands alone. Any other line that is not a
history record (a merge conflict's marker, JSON of another shape) is an error at its line.
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

from ragscore import __version__
from ragscore.errors import InputError, UsageError
from ragscore.quoting import json_safe, quote

if TYPE_CHECKING:
    from ragscore.suite.run import SuiteRun

FORMAT_KEY: Final = "ragscore_history"
FORMAT_VERSION: Final = 1
MAX_LINE: Final = 64 * 1024 * 1024  # no history line is that long
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
    except (ValueError, OverflowError, OSError):
        raise UsageError(f"{source} {quote(text)}: expected seconds since 1970 or an ISO 8601 time such as "
                         "2026-11-24T09:00:00Z") from None
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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


_HEAD: Final = b'{"' + FORMAT_KEY.encode() + b'":'


def is_torn(raw: bytes) -> bool:
    """Whether a line that is not JSON is the start of a record a killed run left (every record starts
    with its format key)."""
    text = raw.rstrip(b"\r\n")
    return text.startswith(_HEAD) or (bool(text) and _HEAD.startswith(text))


def check_appendable(path: str | os.PathLike[str]) -> None:
    """Refuse, before a run, a history that cannot be appended to: a folder, a missing folder, or a
    file that is not a history (its first line is neither a record nor the start of one)."""
    spec = os.fspath(path)
    if os.path.isdir(spec):
        raise UsageError(f"--history {quote(spec)}: is a folder, expected a file")
    if not os.path.exists(spec):
        folder = os.path.dirname(spec) or "."
        if not os.path.isdir(folder):
            raise UsageError(f"--history {quote(spec)}: no such folder {quote(folder)}")
        return
    try:
        with open(spec, "rb") as stream:
            first = stream.readline(MAX_LINE + 1)
    except OSError as exc:
        raise UsageError(f"--history {quote(spec)}: cannot read: {exc.strerror or exc}") from None
    if not first.strip() or is_torn(first):
        try:
            record = json.loads(first)
        except (UnicodeDecodeError, json.JSONDecodeError):
            return  # empty, or the start of a record a killed run left
        if isinstance(record, dict) and FORMAT_KEY in record:
            return
    raise UsageError(f"--history {quote(spec)}: is not a ragscore history (its first line is not a history "
                     "record); name a new file or a history ragscore run wrote")


def encode(record: Mapping[str, Any]) -> bytes:
    """One history line: compact JSON (no NaN), UTF-8, ending in a newline."""
    return (json_safe(json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":"))) + "\n").encode()


def append(path: str | os.PathLike[str], record: Mapping[str, Any]) -> None:
    """Append one record to the history at ``path`` (created if missing), atomically as the module says."""
    line = encode(record)
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise UsageError(f"--history {quote(os.fspath(path))}: cannot open: {exc.strerror or exc}") from None
    try:
        _lock(fd)
        size = os.fstat(fd).st_size
        torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        data = (b"\n" if torn else b"") + line
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except OSError as exc:
        raise UsageError(f"--history {quote(os.fspath(path))}: cannot write: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # no advisory locks here: appends are still one write each
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


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
            except (UnicodeDecodeError, json.JSONDecodeError):
                if not is_torn(raw):
                    raise InputError(source, "not JSON, nor the start of a history record a stopped run left: "
                                             "not a ragscore history line", number) from None
                history.skipped.append(number)
                continue
            _check(record, source, number)
            history.records.append(record)
            history.lines.append(number)
    return history


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
