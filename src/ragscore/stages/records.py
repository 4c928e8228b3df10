"""Load a stage's gold and prediction files and join them by ``id``, accounting for every line.

Both files are JSON Lines or a JSON array of objects (as for the gold set of ``ragscore``).
Gold ids must be unique. A prediction id seen again replaces the earlier line (the last counts,
as for traces); a prediction whose id is not in the gold file is counted and ignored; a gold
item without a prediction is counted as missing and scored by the stage as an empty prediction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ragscore.errors import InputError
from ragscore.loaders.jsonl import InputFile, ObjectFields, array_or_lines, describe, iter_json_array, iter_jsonl
from ragscore.loaders.records import Records
from ragscore.quoting import quote

G = TypeVar("G")
P = TypeVar("P")


class Fields(ObjectFields):
    """Typed access to one decoded object, raising InputError at the offending field's position."""

    def require(self, key: str, what: str) -> object:
        """Return a required field's value; ``what`` describes it for the error."""
        if key not in self.obj:
            raise self.fail(None, f'missing required field "{key}" ({what})')
        return self.obj[key]

    def ident(self, key: str, value: object, where: str | None = None) -> str:
        """Turn an id (a non-empty string or an integer) into a string."""
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        raise self.fail(
            key, f"expected {where or quoted(key)} to be a non-empty string or an integer, got {describe(value)}"
        )

    def string(self, key: str, value: object, where: str | None = None) -> str:
        """Return ``value`` when it is a string."""
        if isinstance(value, str):
            return value
        raise self.fail(key, f"expected {where or quoted(key)} to be a string, got {describe(value)}")

    def items(self, key: str, value: object) -> list[dict[str, object]]:
        """Return ``value`` when it is a list of objects."""
        if not isinstance(value, list):
            raise self.fail(key, f"expected {quoted(key)} to be a list of objects, got {describe(value)}")
        for n, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.fail(key, f"expected {quoted(key)}[{n}] to be an object, got {describe(item)}")
        return value


class Sourced(dict[str, object]):
    """A record read from a file that is no JSON (a table, CoNLL, BRAT), with where it is in that file:
    an error about it names that file's line (and a table cell's column), not the record's number."""

    __slots__ = ("columns", "line", "source")

    def __init__(self, fields: Mapping[str, object], source: str, line: int | None,
                 columns: Mapping[str, int | None] | None = None) -> None:
        super().__init__(fields)
        self.source, self.line, self.columns = source, line, dict(columns or {})


class _SourcedFields(Fields):
    """A ``Sourced`` record's fields: an error points at the record's own file, line and cell."""

    def __init__(self, record: Sourced) -> None:
        super().__init__(record, record.source, record.line or 0, 0, "")
        self.record = record

    def fail(self, key: str | None, message: str) -> InputError:
        record = self.record
        column = record.columns.get(key) if key is not None and record.line is not None else None
        return InputError(record.source, message, record.line, column)


def quoted(key: str) -> str:
    """Quote a field name for an error message."""
    return f'"{key}"'


@dataclass(slots=True)
class Joined(Generic[G, P]):
    """Gold items in file order, each with its prediction (None when missing), and the accounting."""

    gold_name: str
    pred_name: str
    pairs: list[tuple[str, G, P | None]]
    pred_lines: int = 0
    missing_ids: list[str] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)  # one entry per ignored line, in file order
    duplicate_ids: list[str] = field(default_factory=list)  # one entry per replaced line, in file order
    digests: tuple[str, str] = ("", "")
    paths: tuple[str, str] = ("", "")

    @property
    def counts(self) -> dict[str, int]:
        """Return the accounting in a fixed order: every prediction line is scored, unknown or replaced."""
        return {
            "gold": len(self.pairs),
            "predicted": len(self.pairs) - len(self.missing_ids),
            "missing": len(self.missing_ids),
            "prediction_lines": self.pred_lines,
            "unknown_predictions": len(self.unknown_ids),
            "duplicate_predictions": len(self.duplicate_ids),
        }


def iter_objects(file: InputFile | Records) -> Iterator[Fields]:
    """Yield each record of a JSON Lines file or a JSON array (or of records given to the Python
    API) as ``Fields``; reject non-objects."""
    records: Iterator[tuple[int, int, str, object]]
    if isinstance(file, Records):
        for n, value in file:
            if isinstance(value, Sourced):
                yield _SourcedFields(value)
            elif isinstance(value, dict):
                yield Fields(value, file.name, n, 1, "")
            else:
                _not_object(file.name, n, value)
        return
    document, lines = array_or_lines(file)
    if document is not None:
        records = iter_json_array(document, file.name)
    else:
        records = ((line, col, text, value) for line, col, text, value, _ in iter_jsonl(file, first=lines))
    for line, column, text, value in records:
        if not isinstance(value, dict):
            raise InputError(file.name, f"expected a JSON object, got {describe(value)}", line, column)
        yield Fields(value, file.name, line, column, text)


def _not_object(source: str, n: int, value: object) -> Fields:
    raise InputError(source, f"expected a JSON object, got {describe(value)}", n)


def record_id(f: Fields) -> str:
    """Read a record's required ``id``."""
    return f.ident("id", f.require("id", "a non-empty string or an integer"))


def load_joined(
    gold_spec: str | Records,
    pred_spec: str | Records,
    parse_gold: Callable[[Fields], G],
    parse_pred: Callable[[Fields], P],
    check_pred: Callable[[Fields, G, P], None] | None = None,
) -> Joined[G, P]:
    """Read both files strictly, raising at the first bad line, and join them by ``id``.

    ``check_pred``, when given, checks each prediction line whose id is in the gold file against
    its gold item (raising InputError at the prediction's line), as a replaced line is too.
    """
    gold_file = gold_spec if isinstance(gold_spec, Records) else InputFile(gold_spec)
    pred_file = pred_spec if isinstance(pred_spec, Records) else InputFile(pred_spec)
    gold: dict[str, G] = {}
    first_line: dict[str, int] = {}
    for f in iter_objects(gold_file):
        ident = record_id(f)
        if ident in gold:
            raise f.fail("id", f"duplicate id {quote(ident)} (first defined on line {first_line[ident]})")
        gold[ident] = parse_gold(f)
        first_line[ident] = f.line
    if not gold:
        raise InputError(
            gold_file.name, "no items: a gold file needs at least one (JSON Lines, or a JSON array of objects)"
        )
    preds: dict[str, P] = {}
    joined: Joined[G, P] = Joined(gold_file.name, pred_file.name, [])
    for f in iter_objects(pred_file):
        joined.pred_lines += 1
        ident = record_id(f)
        pred = parse_pred(f)  # a bad line is an error even when its id is unknown
        if ident not in gold:
            joined.unknown_ids.append(ident)
            continue
        if check_pred is not None:
            check_pred(f, gold[ident], pred)
        if ident in preds:
            joined.duplicate_ids.append(ident)
        preds[ident] = pred
    for ident, item in gold.items():
        pred_or_none = preds.get(ident)
        if ident not in preds:
            joined.missing_ids.append(ident)
        joined.pairs.append((ident, item, pred_or_none))
    joined.digests = (gold_file.sha256, pred_file.sha256)
    joined.paths = (str(gold_file.spec), str(pred_file.spec))
    return joined
