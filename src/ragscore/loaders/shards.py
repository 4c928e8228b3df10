"""Several trace files read as one: ``--trace`` given more than once, a quoted glob, or a folder.

The files are read one after the other as one stream of lines ("the last line counts" follows
that order): a glob's matches and a folder's files in sorted order (by path, as Python sorts
strings), several ``--trace`` options in the order given. A folder's hidden files and those whose
name starts with ``_`` (Spark's ``_SUCCESS``, ``.crc`` checksums) are left out, as Hadoop's
readers leave them out; it is not searched recursively (a glob with ``**`` is).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass

from ragscore.errors import InputError, UsageError

STDIN = "-"


@dataclass(frozen=True, slots=True)
class Shards:
    """Trace files read in this order as one stream, and how the user named them."""

    paths: tuple[str, ...]
    specs: tuple[str, ...]  # the paths, globs and folders as the user gave them

    @property
    def name(self) -> str:
        return ", ".join(self.specs)

    def __str__(self) -> str:
        return self.name


def expand(specs: Sequence[str], option: str = "--trace") -> str | Shards:
    """Turn what the user named (paths, globs, folders) into one path, or the files to read in order.

    One existing file (or "-") stays a path. A glob that matches nothing, a folder with no file, a
    file named twice, or standard input among several inputs is an error before anything is read.
    """
    if not specs:
        raise UsageError(f"{option}: expected a path")
    if len(specs) == 1 and (specs[0] == STDIN or not _expands(specs[0])):
        return specs[0]
    if STDIN in specs:
        raise UsageError(f"{option} -: standard input cannot be one of several trace inputs")
    paths: list[str] = []
    named: dict[str, str] = {}  # the file's real path -> the path that named it first
    for spec in specs:
        for path in _files(spec):
            if not os.path.lexists(path):  # before any file is read, not once the earlier ones are
                raise InputError(path, "no such file")
            real = os.path.realpath(path)
            if real in named:
                if named[real] == path:
                    raise UsageError(f"{option}: {path} is named twice; each file is read once")
                raise UsageError(f"{option}: {named[real]} and {path} are the same file (a link?); each file is "
                                 "read once")
            named[real] = path
            paths.append(path)
    if len(paths) == 1 and len(specs) == 1 and not os.path.isdir(specs[0]):
        return paths[0]  # a glob that matches one file: that file, as if named
    return Shards(tuple(paths), tuple(specs))


def _expands(spec: str) -> bool:
    """Tell whether a spec names several files: a folder, or a glob that is not itself a file's name."""
    return os.path.isdir(spec) or (glob.has_magic(spec) and not os.path.lexists(spec))


def _files(spec: str) -> list[str]:
    if os.path.isdir(spec):
        files = sorted(os.path.join(spec, name) for name in os.listdir(spec) if not name.startswith((".", "_")))
        files = [path for path in files if os.path.isfile(path)]
        if not files:
            raise InputError(spec, "the folder holds no file to read (hidden files and names starting with _ are "
                                   "left out)")
        return files
    if glob.has_magic(spec) and not os.path.lexists(spec):
        files = sorted(path for path in glob.glob(spec, recursive=True) if os.path.isfile(path))
        if not files:
            raise InputError(spec, "no file matches this pattern")
        return files
    return [spec]


def paths_of(spec: str | Shards) -> tuple[str, ...]:
    """The files an input reads."""
    return spec.paths if isinstance(spec, Shards) else (spec,)
