"""Write report files atomically: each file appears whole or not at all, and no temporary file stays.

Only a regular file (or a path not yet taken) is replaced by renaming a temporary file over it. A
FIFO, a character device (``/dev/null``, ``/dev/stdout``) or a socket is written in place: renaming
over it would replace the device node itself. The temporary files are removed on every failure,
including SIGTERM and Ctrl-C (the command line turns SIGTERM into an exception for that).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable, Mapping
from contextlib import suppress
from pathlib import Path

from ragscore.errors import RagscoreError
from ragscore.quoting import visible


class ReportWriteError(RagscoreError):
    """A report file could not be written."""


def _failed(path: str, exc: OSError) -> ReportWriteError:
    return ReportWriteError(f"{visible(path)}: cannot write report: {exc.strerror or exc}")


def _replaceable(path: str) -> bool:
    """Tell whether renaming over ``path`` is safe: a regular file that is no symbolic link, or no file yet.

    Anything else is written in place: a FIFO or a device, and a symbolic link, which may lead to
    either (``/dev/stdout`` is a link to ``/proc/self/fd/1``) and must stay a link in any case.
    """
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return True  # no file yet, a missing folder or a permission problem: staging says which


def file_identity(path: str) -> tuple[object, bool]:
    """Identify a file by device and inode (a file yet to be written: by its real path); say whether it is a
    character device.

    ``-`` is standard input: whatever file it was redirected from.
    """
    try:
        info = os.fstat(sys.stdin.fileno()) if path == "-" else os.stat(path)
    except (OSError, ValueError, AttributeError):  # no such file, or standard input closed or replaced
        if path == "-":
            return "-", False
        # "new/../gold.jsonl" cannot be opened before new/ is made (split makes it), and then it is gold.jsonl
        real = os.path.realpath(path)
        try:
            info = os.stat(real)
        except OSError:
            return real, False
    return (info.st_dev, info.st_ino), stat.S_ISCHR(info.st_mode)


def first_overwrite(inputs: Iterable[tuple[str, str]],
                    outputs: Iterable[tuple[str, str]]) -> tuple[str, str, str] | None:
    """Find the first output (name, path) that is an input or an output of another name, by device and
    inode; return it with the name of what it would overwrite. Inputs may repeat (a run compared with
    itself); a character device (``/dev/null``) may be named any number of times. A FIFO is a file like
    any other: written in place, and refused only when it is an input too."""
    seen: dict[object, str] = {}
    for name, path in inputs:
        identity, device = file_identity(path)
        if not device:
            seen.setdefault(identity, name)
    for name, path in outputs:
        identity, device = file_identity(path)
        if device:
            continue
        other = seen.setdefault(identity, name)
        if other != name:
            return name, path, other
    return None


def write_reports(files: Mapping[str, Iterable[str]]) -> None:
    """Write each report (text, or its pieces) to its path: all to temporary files, then rename.

    An input error is raised before this is called, so no report is written then; a failure here
    (a missing folder, a full disk, a signal) leaves no partial regular file behind. Reports for
    FIFOs and devices are written in place once every regular file is staged.
    """
    import secrets  # only a run that writes a file pays for importing it

    staged: list[tuple[str, str]] = []
    in_place = [(path, text) for path, text in files.items() if not _replaceable(path)]
    try:
        for path, text in files.items():
            if not _replaceable(path):
                continue
            target = Path(path)
            tmp = str(target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp"))
            staged.append((tmp, path))  # known before it exists, so that a signal cannot orphan it
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # less the umask
            except OSError as exc:
                raise _failed(path, exc) from None
            try:
                with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
                    out.writelines(text)
            except OSError as exc:  # a full disk, say
                raise _failed(path, exc) from None
        for path, text in in_place:
            try:
                with open(path, "w", encoding="utf-8", newline="\n") as out:
                    out.writelines(text)
            except OSError as exc:
                raise _failed(path, exc) from None
        for tmp, path in staged:
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise _failed(path, exc) from None
    finally:
        for tmp, _ in staged:
            with suppress(OSError):  # never created (a missing folder, a name too long) or already renamed
                os.unlink(tmp)
