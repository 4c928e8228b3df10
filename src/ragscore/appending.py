"""JSON Lines files that grow one whole line at a time: a suite's history, a judge's ledger.

An append is one ``write`` of the whole line to a file opened for appending, under an exclusive
lock where the system has one (``flock``), then ``fsync``: a process that is killed leaves either its
whole line or a torn one at the end, without a newline. Before each append, a last line without its
newline is dealt with: cut off when it is not JSON (the start of a line a killed process left, which
holds nothing that can be read), given its newline when it is whole JSON.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ragscore.errors import UsageError
from ragscore.quoting import json_safe, quote


def encode(record: Mapping[str, Any], *, sort_keys: bool = False) -> bytes:
    """One line: compact JSON (no NaN), UTF-8, ending in a newline."""
    text = json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":"), sort_keys=sort_keys)
    return (json_safe(text) + "\n").encode()


def open_for_append(path: str | os.PathLike[str], what: str) -> int:
    """Open (creating it) the file at ``path`` for appending; ``what`` names it in an error (``--history``)."""
    try:
        return os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise UsageError(f"{what} {quote(os.fspath(path))}: cannot open: {exc.strerror or exc}") from None


def append_to(fd: int, line: bytes, path: str | os.PathLike[str], what: str) -> None:
    """Append one whole line to an open file, atomically as the module says."""
    try:
        lock(fd)
        try:
            data = _after_tail(fd) + line
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            unlock(fd)
    except OSError as exc:
        raise UsageError(f"{what} {quote(os.fspath(path))}: cannot write: {exc.strerror or exc}") from None


def append(path: str | os.PathLike[str], line: bytes, what: str) -> None:
    """Append one whole line to the file at ``path`` (created if missing)."""
    fd = open_for_append(path, what)
    try:
        append_to(fd, line, path, what)
    finally:
        os.close(fd)


def _after_tail(fd: int) -> bytes:
    """Deal with a last line that has no newline, before appending: a whole record gets its newline;
    the start of one a killed process left is cut off."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return b""
    start = size
    while start > 0:  # back to the end of the last whole line
        chunk = os.pread(fd, min(start, 65536), max(start - 65536, 0))
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            start = start - len(chunk) + cut + 1
            break
        start -= len(chunk)
    tail = os.pread(fd, size - start, start)
    try:
        json.loads(tail)
        return b"\n"
    except (ValueError, RecursionError):  # as the readers skip it: not JSON, or JSON that cannot be read
        os.ftruncate(fd, start)
        return b""


def lock(fd: int) -> None:
    """Take the file's exclusive lock (where the system has advisory locks; else appends are still one write)."""
    try:
        import fcntl
    except ImportError:
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


def unlock(fd: int) -> None:
    """Release the file's lock."""
    try:
        import fcntl
    except ImportError:
        return
    fcntl.flock(fd, fcntl.LOCK_UN)
