"""The judge's ledger: JSON Lines, one record per judgment, appended as each comes back, read back to replay.

A judgment is known by its key: the sha256 of the canonical JSON of the endpoint's base URL, the
model, the criterion's text and how its reply is read, the sampling parameters, the sample's index and
the exact prompt (the question's inputs rendered into the template). A changed model, rubric text or
parameter is another key: it misses the ledger and is judged afresh (or, replayed, is unjudged).

A record holds the key, the question and criterion it judged (to read the ledger by), the score read
from the reply (null when none could be: then ``error`` says why), the reply's text, the model the
server says answered, the token usage, the seconds the call took and when it was made. Appends are
atomic (``ragscore.appending``); a torn last line (a run killed while writing it) is skipped on reading
and cut before the next append. The last record of a key wins. ``compact`` rewrites the ledger with
one record per key in key order, each line's keys sorted: the same judgments, the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ragscore import appending
from ragscore.errors import InputError, UsageError
from ragscore.quoting import quote

FORMAT_KEY: Final = "ragscore_judgment"
FORMAT_VERSION: Final = 1
MAX_LINE: Final = 64 * 1024 * 1024
_HEX: Final = frozenset("0123456789abcdef")
_WHAT: Final = "--ledger"


def judgment_key(endpoint: str, model: str, criterion: Mapping[str, object], parameters: Mapping[str, object],
                 sample: int, prompt: str) -> str:
    """The key of one judgment (hex sha256 of its canonical JSON)."""
    payload = {"endpoint": endpoint, "model": model, "criterion": dict(criterion), "parameters": dict(parameters),
               "sample": sample, "prompt": prompt}
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Ledger:
    """A ledger read back: the last record of each key, and the torn lines skipped."""

    source: str
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    line_of: dict[str, int] = field(default_factory=dict)  # the line of each key's last record
    skipped: list[int] = field(default_factory=list)
    lines: int = 0
    count: int = 0  # the records read, each of a key's too

    def notes(self) -> list[str]:
        """Say which lines were skipped."""
        if not self.skipped:
            return []
        return [f"{self.source}: an incomplete last line skipped (a run stopped while writing it?): line "
                f"{self.skipped[-1]}"]


def read_ledger(path: str) -> Ledger:
    """Read a ledger (a missing file is an empty one); a record of the wrong shape is an error at its line."""
    ledger = Ledger(path)
    try:
        stream = open(path, "rb")  # noqa: SIM115 (closed below)
    except FileNotFoundError:
        return ledger
    except IsADirectoryError:
        raise InputError(path, "is a folder, expected a ledger file (JSON Lines)") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}") from None
    with stream:
        for number, raw in enumerate(iter(lambda: stream.readline(MAX_LINE + 1), b""), 1):
            if len(raw) > MAX_LINE:
                raise InputError(path, f"a line longer than {MAX_LINE:,} bytes: not a ledger", number)
            ledger.lines = number
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except (ValueError, RecursionError):
                if raw.endswith(b"\n"):  # a killed run leaves its line without one: this one is whole
                    raise InputError(path, "not JSON: not a ragscore judge ledger line", number) from None
                ledger.skipped.append(number)
                continue
            _check(record, path, number)
            ledger.records[record["key"]] = record
            ledger.line_of[record["key"]] = number
            ledger.count += 1
    return ledger


def _check(record: object, source: str, line: int) -> None:
    if not isinstance(record, dict) or FORMAT_KEY not in record:
        raise InputError(source, f"not a ragscore judge ledger record (no {FORMAT_KEY!r} key): name a new file or "
                                 "a ledger ragscore judge wrote", line)
    if record[FORMAT_KEY] != FORMAT_VERSION:
        raise InputError(source, f"a ledger record of format {record[FORMAT_KEY]!r}; this ragscore reads format "
                                 f"{FORMAT_VERSION}", line)
    key = record.get("key")
    if not isinstance(key, str) or len(key) != 64 or not _HEX.issuperset(key):
        raise InputError(source, "a ledger record's key must be a sha256 in hex", line)
    score = record.get("score")
    if score is not None and (type(score) not in (int, float) or not _finite(score)):
        raise InputError(source, f"a ledger record's score must be a number or null, got {_shown(score)}", line)
    if score is None and not isinstance(record.get("error"), str):
        raise InputError(source, "a ledger record without a score must say why (its error)", line)


def _finite(number: float) -> bool:
    try:
        return math.isfinite(number)
    except OverflowError:  # an integer too large for a float
        return False


def _shown(value: object) -> str:
    return "a number of more than 57 digits" if type(value) is int and value.bit_length() > 192 else json.dumps(value)


class Appender:
    """A ledger open for the judgments of one run: each appended whole, as it comes back."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = appending.open_for_append(path, _WHAT)

    def add(self, record: Mapping[str, Any]) -> None:
        """Append one judgment's record."""
        appending.append_to(self.fd, appending.encode({FORMAT_KEY: FORMAT_VERSION, **record}, sort_keys=True),
                            self.path, _WHAT)

    def close(self) -> None:
        """Close the file (every record is on disk already)."""
        os.close(self.fd)


def check_ledger_path(path: str) -> None:
    """Refuse, before any call, a ledger that cannot take records: a folder, a device, a missing folder."""
    if os.path.exists(path):
        if not os.path.isfile(path):
            raise UsageError(f"--ledger {quote(path)}: is not a regular file")
        return
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise UsageError(f"--ledger {quote(path)}: no such folder {quote(folder)}")


def compact(path: str) -> tuple[int, int]:
    """Rewrite the ledger with the last record of each key, in key order, each line's keys sorted (canonical
    bytes), replacing the file at once under its lock; return the records before and after."""
    check_ledger_path(path)
    if not os.path.exists(path):
        raise UsageError(f"--ledger {quote(path)}: no such file to compact")
    fd = appending.open_for_append(path, _WHAT)
    try:
        appending.lock(fd)  # no run appends while the file is replaced
        ledger = read_ledger(path)
        folder = os.path.dirname(os.path.abspath(path))
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".ledger-", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                for key in sorted(ledger.records):
                    out.write(appending.encode(ledger.records[key], sort_keys=True))
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temporary, os.stat(path).st_mode & 0o777)
            os.replace(temporary, path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
    except OSError as exc:
        raise UsageError(f"--ledger {quote(path)}: cannot compact: {exc.strerror or exc}") from None
    finally:
        appending.unlock(fd)
        os.close(fd)
    return ledger.count, len(ledger.records)
