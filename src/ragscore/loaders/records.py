"""Already-parsed records given to the Python API in place of a file.

A gold set or a trace file may be any iterable of dicts (a DataFrame's ``to_dict("records")``,
a generator). It is read once, in order, like a file: errors point at "record N", and its digest
is the sha256 of the records written as canonical JSON Lines (sorted keys, no spaces), so the
same records give the same report.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import weakref
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ragscore.errors import InputError
from ragscore.loaders.shards import Shards, expand


class Records:
    """Records read once, in order, hashing each as it goes."""

    rereadable = False

    def __init__(self, records: Iterable[Any], role: str, name: str | None = None) -> None:
        # A file read into records by another reader (CoNLL, BRAT, a table) keeps its path as its name.
        self.name = self.spec = name if name is not None else f"<{role} records>"
        self._records: Iterable[Any] | None = records
        self._hash = hashlib.sha256()

    @property
    def sha256(self) -> str:
        """Return the digest of every record read so far."""
        return self._hash.hexdigest()

    def locate(self, line: int) -> tuple[str, int]:
        """Name record ``line`` as (input, number), as ``InputFile.locate`` names a line."""
        return self.name, line

    def where(self, line: int) -> str:
        """Name record ``line`` as reports name a line of a file."""
        return f"{self.name}:{line}"

    def located(self, exc: InputError) -> InputError:
        """The error as it is (records are one input; see ``InputFile.located``)."""
        return exc

    def __iter__(self) -> Iterator[tuple[int, object]]:
        """Yield ``(n, record)`` from 1; a second pass is a usage error (an iterator is spent)."""
        records, self._records = self._records, None
        if records is None:
            raise InputError(self.name, "already read: records given as an iterable are read once")
        if iter(records) is records:  # an iterator (a generator): it cannot be read again
            with contextlib.suppress(TypeError):  # not weakly referenceable: not remembered
                _SPENT.add(records)
        update, dumps = self._hash.update, _CANONICAL.encode
        for n, record in enumerate(records, 1):
            if type(record) is dict and any(type(v) is float and v != v for v in record.values()):
                # pandas writes a missing value as NaN (to_dict("records")): it is a missing value here too
                record = {k: None if type(v) is float and v != v else v for k, v in record.items()}
            try:
                update(dumps(record).encode("utf-8", "surrogatepass") + b"\n")
            except (TypeError, ValueError) as exc:
                raise InputError(self.name, f"not JSON data: {exc}", n) from None
            yield n, record


def no_trace_records(source: Records | Any, what: str = "") -> InputError:
    """The error of a trace input that gives no record: an empty or blank file, or records given to
    the Python API that yield none (an iterator read already, ``iter(list)`` or ``map``, yields none
    and cannot be told from an empty one). ``what`` names the option it came from."""
    named = f" ({what})" if what else ""
    if isinstance(source, Records):
        return InputError(source.name, f"no trace records{named}: the iterable yielded none (an iterator read "
                                       "already, such as iter(list) or map(...), yields none): pass a list")
    return InputError(source.name, f"no trace records{named}: a trace input needs at least one (an empty or blank "
                                   "file is no run)")


_SPENT: weakref.WeakSet[Any] = weakref.WeakSet()  # iterators read once already
_CANONICAL = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def as_input(source: Any, role: str) -> str | Records:
    """Take a path (or "-") as it is, anything else iterable as records."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return _records(source, role)


def as_traces(source: Any, role: str = "trace") -> str | Shards | Records:
    """Take traces as ``as_input`` takes an input, or several files read as one: a glob, a folder,
    or a list of paths (and globs)."""
    if isinstance(source, (str, os.PathLike)):
        return expand([os.fspath(source)])
    if isinstance(source, (list, tuple)) and source and all(isinstance(s, (str, os.PathLike)) for s in source):
        return expand([os.fspath(s) for s in source])
    if isinstance(source, Shards):
        return source
    return _records(source, role)


def _records(source: Any, role: str) -> Records:
    if isinstance(source, Records):
        return source
    if isinstance(source, (set, frozenset)):  # unordered, and what it holds is hashable: no record is
        raise TypeError(f"{role}: expected a path or an iterable of records (dicts), got {type(source).__name__}")
    if source in _SPENT:
        raise InputError(f"<{role} records>", "already read: this iterator (a generator?) was read by an earlier "
                                              "call; pass a list, or a new generator")
    if isinstance(source, (bytes, Mapping)) or not isinstance(source, Iterable):
        raise TypeError(f"{role}: expected a path or an iterable of records (dicts), got {type(source).__name__}")
    return Records(source, role)
