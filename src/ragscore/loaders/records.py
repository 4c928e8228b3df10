"""Already-parsed records given to the Python API in place of a file.

A gold set or a trace file may be any iterable of dicts (a DataFrame's ``to_dict("records")``,
a generator). It is read once, in order, like a file: errors point at "record N", and its digest
is the sha256 of the records written as canonical JSON Lines (sorted keys, no spaces), so the
same records give the same report.

A record may also be the object a pipeline has (a LangChain ``Document``, a llama-index
``NodeWithScore``, a ragas sample, any pydantic model or dataclass), and so may any value inside a
dict: it is read as the CLI reads the JSON its library writes (``to_dict()``, else pydantic's
``model_dump(mode="json")``, else ``dict()``, else the dataclass's fields). Inside, a tuple is a
list, a set a list sorted by its members' JSON, an Enum its value, a date, time or datetime its
``isoformat()``; anything else is an error naming its type, the record and where in it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import enum
import hashlib
import json
import os
import weakref
from collections.abc import Iterable, Iterator, Mapping, Sequence
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
            if type(record) is not dict:
                record = self._record(record, n)
            if type(record) is dict and any(type(v) is float and v != v for v in record.values()):
                # pandas writes a missing value as NaN (to_dict("records")): it is a missing value here too
                record = {k: None if type(v) is float and v != v else v for k, v in record.items()}
            try:
                if not _plain(record):  # an object, a tuple, an Enum... inside: read as its JSON would be
                    record = self._json(record, n, "")
                update(dumps(record).encode("utf-8", "surrogatepass") + b"\n")
            except (TypeError, ValueError) as exc:
                raise InputError(self.name, f"not JSON data: {exc}", n) from None
            except RecursionError:  # a list that holds itself, or thousands of levels deep
                raise InputError(self.name, "not JSON data: a value holds itself, or is nested too deeply", n) from None
            yield n, record

    def _record(self, record: object, n: int) -> object:
        """A record that is not a dict as its JSON reads: an object's dict; JSON that is no object as
        it is (the reader says "expected a JSON object"); anything else an error naming its type."""
        if isinstance(record, Mapping) and not type(record).__module__.startswith("ragscore."):
            return self._json(record, n, "")  # an OrderedDict, a defaultdict, a MappingProxyType: a plain dict
        # (ragscore's own records that are dicts, stages.records.Sourced, keep where they were read)
        if record is None or isinstance(record, (str, int, float, list, dict)):
            return record
        converted = _converted(record)
        if not isinstance(converted, Mapping):
            raise InputError(self.name, f"expected a record (a dict, or an object with model_dump(), to_dict() or "
                                        f"dict(), or a dataclass), got {type(record).__name__}", n)
        return converted

    def _json(self, value: object, n: int, at: str) -> Any:
        """``value`` as ``json.loads(json.dumps(value, default=...))`` reads it, without the text."""
        if type(value) in _SCALARS:
            return value
        if isinstance(value, Mapping):
            return {self._key(k, n, at): self._json(v, n, f"{at}.{k}" if at else str(k)) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self._json(v, n, f"{at}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, (set, frozenset)):  # no order of its own: sorted, so the same set gives the same bytes
            return sorted((self._json(v, n, f"{at}[]") for v in value), key=_CANONICAL.encode)
        if isinstance(value, bool):
            return bool(value)
        if isinstance(value, enum.Enum) and not isinstance(value, (str, int, float)):
            return self._json(value.value, n, at)
        if isinstance(value, str):  # a str subclass (a StrEnum): json writes the text
            return str.__str__(value)
        if isinstance(value, int):  # an int subclass (an IntEnum): json writes the number
            return int.__index__(value)
        if isinstance(value, float):
            return float.__float__(value)
        if isinstance(value, (datetime.date, datetime.time)):  # datetime is a date
            return value.isoformat()
        converted = _converted(value)
        if converted is value:
            raise InputError(self.name, f"at {at}: expected a JSON value (or an object with model_dump(), to_dict() "
                                        f"or dict(), or a dataclass), got {type(value).__name__}", n)
        return self._json(converted, n, at)

    def _key(self, key: object, n: int, at: str) -> str:
        """A key as json writes it: text as it is, a number, true, false or null as its JSON text."""
        if isinstance(key, str):
            return str.__str__(key)
        if key is None or isinstance(key, (int, float)):
            return _CANONICAL.encode(key)
        raise InputError(self.name, f"at {at or 'the record'}: a key must be text, a number, true, false or null, "
                                    f"got {type(key).__name__}", n)


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
_SCALARS = frozenset({str, int, float, bool, type(None)})  # JSON's own, not subclasses


def _plain(value: object) -> bool:
    """Whether ``value`` holds only what JSON text reads as (dicts with text keys, lists, text,
    numbers, booleans, null): then it is the record as it is, and nothing need be copied. Loops,
    not all(): this runs on every record (100,000 plain traces: 0.2 s)."""
    kind = type(value)
    if kind is dict or isinstance(value, dict):  # a dict subclass too (stages.records.Sourced keeps its line)
        for k, v in value.items():  # type: ignore[attr-defined]  # noqa: SIM110 (a loop: faster than all())
            if type(k) is not str or (type(v) not in _SCALARS and not _plain(v)):
                return False
        return True
    if kind is list:
        for v in value:  # type: ignore[attr-defined]  # noqa: SIM110
            if type(v) not in _SCALARS and not _plain(v):
                return False
        return True
    return kind in _SCALARS


def _converted(value: object) -> object:
    """An object's fields as the JSON its library writes holds them, or ``value`` itself when it
    has none. ``to_dict()`` first: llama-index's adds the ``class_name`` its own dumps hold."""
    for method in ("to_dict", "model_dump", "dict"):
        convert = getattr(value, method, None)
        if callable(convert) and not isinstance(value, type):
            if method == "model_dump":
                with contextlib.suppress(TypeError, ValueError):  # not pydantic's, or a field JSON cannot hold
                    return convert(mode="json")
            with contextlib.suppress(TypeError):  # a method of that name that wants arguments: not this one
                result: object = convert()
                return result
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return value
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
    if _is_data_frame(source):  # a pandas DataFrame iterates over its column names: its rows are the records
        source = source.to_dict("records")
    if _spent(source):
        raise InputError(f"<{role} records>", "already read: this iterator (a generator?) was read by an earlier "
                                              "call; pass a list, or a new generator")
    if isinstance(source, (bytes, Mapping)) or not isinstance(source, Iterable):
        raise TypeError(f"{role}: expected a path or an iterable of records (dicts), got {type(source).__name__}")
    return Records(source, role)


def _spent(source: object) -> bool:
    """Tell whether an iterator was read by an earlier call (an unhashable iterable, a ragas dataset, was not)."""
    try:
        return source in _SPENT
    except TypeError:
        return False


def _is_data_frame(source: object) -> bool:
    return type(source).__name__ == "DataFrame" and callable(getattr(source, "to_dict", None)) and hasattr(
        source, "columns")


Source = str | os.PathLike[str] | Iterable[Mapping[str, Any]]


# Traces may also be several files read as one: a glob, a folder, or a list of paths (and globs).
TraceSource = Source | Sequence[str | os.PathLike[str]] | Shards
