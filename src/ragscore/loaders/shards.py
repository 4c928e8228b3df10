"""Several trace files read as one: ``--trace`` given more than once, a quoted glob, or a folder.

The files are read one after the other as one stream of lines ("the last line counts" follows
that order): a glob's matches and a folder's files in sorted order (by path, as Python sorts
strings), several ``--trace`` options in the order given. A folder's hidden files and those whose
name starts with ``_`` (Spark's ``_SUCCESS``, ``.crc`` checksums) are left out, as Hadoop's
readers leave them out; it is not searched recursively (a glob with ``**`` is, as Python's glob
searches, but entering no folder twice: a folder link that leads back is not followed, and a note
says so). Only regular files are read of a folder or a glob: a named pipe, a socket or a device
there (where reading could wait for ever) is left out with a note; one named on its own is read.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import stat
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from ragscore.errors import InputError, UsageError
from ragscore.quoting import visible

STDIN = "-"
_SHOWN = 5  # the paths a note names; it counts the others


@dataclass(frozen=True, slots=True)
class Shards:
    """Trace files read in this order as one stream, and how the user named them."""

    paths: tuple[str, ...]
    specs: tuple[str, ...]  # the paths, globs and folders as the user gave them
    notes: tuple[str, ...] = ()  # what their expansion left out (special files, folder links not followed)

    @property
    def name(self) -> str:
        return ", ".join(self.specs)

    def __str__(self) -> str:
        return self.name


def expand(specs: Sequence[str], option: str = "--trace") -> str | Shards:
    """Turn what the user named (paths, globs, folders) into one path, or the files to read in order.

    One existing file (or "-") stays a path, and so does a glob that matches one file, unless its
    expansion has something to say. A glob that matches nothing, a folder with no file, a file
    named twice, or standard input among several inputs is an error before anything is read.
    """
    if not specs:
        raise UsageError(f"{option}: expected a path")
    if len(specs) == 1 and (specs[0] == STDIN or not _expands(specs[0])):
        return specs[0]
    if STDIN in specs:
        raise UsageError(f"{option} -: standard input cannot be one of several trace inputs")
    paths: list[str] = []
    notes: list[str] = []
    named: dict[object, str] = {}  # the file (device and inode: a hard link too) -> the path that named it first
    for spec in specs:
        for path in _files(spec, notes):
            if not os.path.lexists(path):  # before any file is read, not once the earlier ones are
                raise InputError(path, "no such file")
            real = _file_key(path)
            if real in named:
                if named[real] == path:
                    raise UsageError(f"{option}: {path} is named twice; each file is read once")
                raise UsageError(f"{option}: {named[real]} and {path} are the same file (a link?); each file is "
                                 "read once")
            named[real] = path
            paths.append(path)
    if len(paths) == 1 and len(specs) == 1 and not os.path.isdir(specs[0]) and not notes:
        return paths[0]  # a glob that matches one file: that file, as if named
    return Shards(tuple(paths), tuple(specs), tuple(notes))


def _expands(spec: str) -> bool:
    """Tell whether a spec names several files: a folder, or a glob that is not itself a file's name."""
    return os.path.isdir(spec) or (glob.has_magic(spec) and not os.path.lexists(spec))


def _files(spec: str, notes: list[str]) -> list[str]:
    if os.path.isdir(spec):
        names = sorted(os.path.join(spec, name) for name in os.listdir(spec) if not name.startswith((".", "_")))
        files, left = _regular(names)
        if not files:
            raise InputError(spec, "the folder holds no file to read (hidden files and names starting with _ are "
                                   "left out)" + (f"; {_special(left)}" if left else ""))
    elif glob.has_magic(spec) and not os.path.lexists(spec):
        files, left = _regular(sorted(_glob(spec, notes)))
        if not files:
            raise InputError(spec, "no file matches this pattern" + (f"; {_special(left)}" if left else ""))
    else:
        return [spec]
    if left:
        notes.append(f"{visible(spec)}: {_special(left)}")
    return files


def regular_files(spec: str, paths: Iterable[str], notes: list[str]) -> list[str]:
    """Keep the paths that are regular files (a link is followed), in order, of a folder or glob ``spec``.

    A folder is left out as it is (a folder's folders are not searched); anything else, a named
    pipe, a socket, a device or a link that leads nowhere, is left out with a note added to
    ``notes``: reading a pipe nobody writes to would wait for ever. A file named on its own is
    not checked here: a named pipe given by name (a shell's ``<(...)``) is read.
    """
    kept, left = _regular(paths)
    if left:
        notes.append(f"{visible(spec)}: {_special(left)}")
    return kept


def _regular(paths: Iterable[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The paths that are regular files, and those left out that are not folders (with what they are)."""
    kept, left = [], []
    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            left.append((path, "a link that leads nowhere" if os.path.islink(path) else "unreadable"))
            continue
        if stat.S_ISREG(mode):
            kept.append(path)
        elif not stat.S_ISDIR(mode):
            left.append((path, file_kind(mode)))
    return kept, left


def _special(left: list[tuple[str, str]]) -> str:
    """Say which entries were left out for not being regular files."""
    shown = ", ".join(f"{visible(path)} ({kind})" for path, kind in left[:_SHOWN])
    more = f" and {len(left) - _SHOWN:,} more" if len(left) > _SHOWN else ""
    what = "entry that is not a regular file (reading it" if len(left) == 1 else \
        "entries that are not regular files (reading one"
    return f"left out {len(left):,} {what} could wait for ever): {shown}{more}"


def file_kind(mode: int) -> str:
    """Say what a file that is no regular file is (its ``st_mode``)."""
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _glob(pattern: str, notes: list[str]) -> list[str]:
    """What ``glob.glob(pattern, recursive=True)`` gives, except that each ``**`` enters a folder once.

    Python's glob follows every folder link under ``**``, so a link back to a folder above it is
    searched again and again (for ever: the paths grow, the folder is the same). Here a folder
    that one ``**`` has entered already, by its own path or a link, is not entered again; a note
    names the links not followed.
    """
    skipped: list[str] = []
    found = list(_iglob(pattern, False, skipped))
    if skipped:
        shown = ", ".join(map(visible, sorted(skipped)[:_SHOWN]))
        more = f" and {len(skipped) - _SHOWN:,} more" if len(skipped) > _SHOWN else ""
        notes.append(f"{visible(pattern)}: {_count(len(skipped), 'path', 'paths')} not followed, each a folder ** had "
                     f"searched already, reached again by a link (a loop?): {shown}{more}")
    return found


def _iglob(pathname: str, dironly: bool, skipped: list[str]) -> Iterator[str]:
    """``glob._iglob`` (Python 3.11, recursive, hidden names left out), with ``_walk`` for ``**``."""
    dirname, basename = os.path.split(pathname)
    if not glob.has_magic(pathname):
        if os.path.isdir(pathname) if dironly else os.path.lexists(pathname):
            yield pathname
        return
    if not dirname:
        yield from _in_folder(dirname, basename, dironly, skipped)
        return
    dirs: Iterable[str] = (_iglob(dirname, True, skipped) if dirname != pathname and glob.has_magic(dirname)
                           else (dirname,))
    for folder in dirs:
        for name in _in_folder(folder, basename, dironly, skipped):
            yield os.path.join(folder, name)


def _in_folder(folder: str, pattern: str, dironly: bool, skipped: list[str]) -> Iterator[str]:
    """The names in ``folder`` (relative to it) that one component of a pattern matches."""
    if not glob.has_magic(pattern):
        if os.path.isdir(folder) if not pattern else os.path.lexists(os.path.join(folder, pattern)):
            yield pattern
        return
    if pattern == "**":
        yield ""  # the folder itself: ** matches no folder too
        yield from _walk(folder, dironly, skipped)
        return
    names = _names(folder or os.curdir, dironly)
    if not pattern.startswith("."):
        names = [name for name in names if not name.startswith(".")]
    yield from fnmatch.filter(names, pattern)


def _walk(folder: str, dironly: bool, skipped: list[str]) -> Iterator[str]:
    """Every path under ``folder`` (relative to it, hidden names left out), entering no folder twice."""
    top = _folder_id(folder or os.curdir)
    entered = {top} if top is not None else set()
    pending = deque([""])
    while pending:  # breadth first, in name order: of two ways into a folder, the shorter path is the one searched
        here = pending.popleft()
        for name in _names(os.path.join(folder, here) or os.curdir, dironly):
            if name.startswith("."):
                continue
            relative = os.path.join(here, name)
            path = os.path.join(folder, relative)
            identity = _folder_id(path)
            if identity is not None and identity in entered:  # neither matched nor searched: its files were
                skipped.append(path)
                continue
            yield relative
            if identity is not None:
                entered.add(identity)
                pending.append(relative)


def _file_key(path: str) -> object:
    """The file a path names: its device and inode (another spelling, a symbolic or a hard link: the same),
    or its real path when it cannot be read (a broken link: its open then says why)."""
    try:
        status = os.stat(path)
    except OSError:
        return os.path.realpath(path)
    return status.st_dev, status.st_ino


def _folder_id(path: str) -> tuple[int, int] | None:
    """A folder's device and inode (a link followed); None for anything else."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_dev, status.st_ino) if stat.S_ISDIR(status.st_mode) else None


def _names(folder: str, dironly: bool) -> list[str]:
    try:
        with os.scandir(folder) as entries:
            return sorted(entry.name for entry in entries if not dironly or _is_dir(entry))  # the same order everywhere
    except OSError:
        return []


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def input_notes(*inputs: object) -> list[str]:
    """The notes of the inputs (an InputFile, records, a path or Shards) that were folders or globs."""
    notes: list[str] = []
    for item in inputs:
        spec = getattr(item, "spec", item)
        if isinstance(spec, Shards):
            notes += spec.notes
    return notes


def paths_of(spec: str | Shards) -> tuple[str, ...]:
    """The files an input reads."""
    return spec.paths if isinstance(spec, Shards) else (spec,)
