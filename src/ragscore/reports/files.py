"""Write report files atomically: each file appears whole or not at all, and no temporary file stays."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from ragscore.errors import RagscoreError


class ReportWriteError(RagscoreError):
    """A report file could not be written."""


def _file_mode() -> int:
    """Return the mode a plain new file gets under the current umask (mkstemp uses 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_reports(files: Mapping[str, Iterable[str]]) -> None:
    """Write each report (text, or its pieces) to its path: all to temporary files, then rename.

    An input error is raised before this is called, so no report is written then; a failure here
    (a missing folder, a full disk) leaves no partial file behind.
    """
    mode = _file_mode()
    staged: list[tuple[str, str]] = []
    try:
        for path, text in files.items():
            folder = Path(path).parent
            try:
                fd, tmp = tempfile.mkstemp(prefix=f".{Path(path).name}.", suffix=".tmp", dir=folder)
            except OSError as exc:
                raise ReportWriteError(f"{path}: cannot write report: {exc.strerror}") from None
            staged.append((tmp, path))
            os.chmod(tmp, mode)
            try:
                with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
                    out.writelines(text)
            except OSError as exc:  # a full disk, say
                raise ReportWriteError(f"{path}: cannot write report: {exc.strerror}") from None
        for tmp, path in staged:
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise ReportWriteError(f"{path}: cannot write report: {exc.strerror}") from None
    finally:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
