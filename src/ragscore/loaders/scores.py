"""Read per-question scores computed by other tools (ragas, LLM judges) from CSV or JSON Lines.

A scores file has one row (CSV) or object (JSON Lines) per question: a join key (``qid``, else
``question``, else ragas' ``user_input``) and some numeric score fields (``faithfulness``,
``answer_relevancy``, ...). Fields that hold text (ragas' ``response``, ``retrieved_contexts``,
``reference``) are not scores and are ignored. A missing value (an empty cell, ``null``,
``NaN``) is kept as None and counted; an infinite one is an error. A CSV header without rows is
read as a file no question has a score in (its known columns are scores without values); more
than ``MAX_NAMES`` score columns is an error before any row is kept.

A JSON Lines file ``ragscore judge`` wrote opens with a header record, ``{"ragscore_judge": {"endpoint",
"model", "rubric", "criteria"}}``: the judge that gave the scores (the endpoint's host, the model, the
rubric's sha256, each criterion's scale), which the run's settings signature then names (``ScoreFile.judge``).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Iterable, Iterator
from typing import Final, NamedTuple

from ragscore.errors import InputError
from ragscore.loaders.jsonl import BOM, InputFile, decode_text, describe, json_error, json_type
from ragscore.score_names import CHARACTERS, FIRST, may_hold, spelling_fault

JOIN_COLUMNS: Final = ("qid", "question", "user_input")
# ragas' dataframe export calls the question "user_input": it joins on the question text.
_JOIN_AS: Final = {"qid": "qid", "question": "question", "user_input": "question"}
_JSON_SUFFIXES: Final = (".jsonl", ".ndjson", ".json")

# CSV cells that mean "no value" (compared stripped and lower-cased).
_MISSING: Final = frozenset({"", "nan", "null", "none", "na", "n/a"})
_INFINITE: Final = frozenset({"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"})
_NUMBER_RE: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SURROGATE_RE: Final = re.compile("[\ud800-\udfff]")
# The first column of DataFrame.to_csv() without index=False (and of a re-export of it).
_PANDAS_INDEX: Final = frozenset({"", "Unnamed: 0"})

EMPTY: Final = "the scores file is empty"
NO_JOIN: Final = 'expected a "qid", "question" or "user_input" column to join the scores on'
NO_SCORES: Final = "no numeric score column found (expected columns such as faithfulness or answer_relevancy)"

# NaN, Infinity and -Infinity decode to floats (json's default); each field then says what it allows.
_DECODER: Final = json.JSONDecoder()


class ScoreRow(NamedTuple):
    """The scores of one question."""

    key: str  # the join key's value (qid as a string, or the question text)
    line: int  # 1-based line where the record starts in the file
    values: dict[str, float | None]  # score name -> finite float, or None for null / NaN / empty cell


JUDGE_KEY: Final = "ragscore_judge"  # the header record of a scores file ``ragscore judge`` wrote
SCALES: Final = ("0-1", "1-5", "pass/fail")  # a judge criterion's scale
_JUDGE_FIELDS: Final = ("endpoint", "model", "rubric", "criteria")


class Judge(NamedTuple):
    """Who gave a scores file's scores: ``ragscore judge``'s header record."""

    endpoint: str               # the endpoint's host (never its path, query or credentials)
    model: str                  # the model asked
    rubric: str                 # the rubric file's sha256
    criteria: dict[str, str]    # each criterion's scale, by score name

    def signed(self) -> dict[str, str]:
        """The judge as the settings signature names it (the scales are the rubric's: its sha256 holds them)."""
        return {"endpoint": self.endpoint, "model": self.model, "rubric": self.rubric}


class ScoreFile(NamedTuple):
    """Every question's scores, by join key."""

    source: str  # the file name as given ("<stdin>" for "-"): what error messages show
    join: str  # "qid" or "question" (a "user_input" column joins as "question")
    names: tuple[str, ...]  # score names in the order they first appear (columns / keys)
    rows: dict[str, ScoreRow]  # by key; a later row for the same key replaces the earlier
    duplicates: list[tuple[int, str]]  # (line, key) of each row that a later row replaced, in file order
    skipped: dict[str, int]  # per score name: how many of the kept rows have no value
    judge: Judge | None = None  # the judge that gave the scores (ragscore judge's header record), if any
    sha256: str | None = None  # the sha256 of the bytes read (decompressed), when loaded ``hashed``


class _NotFinite(ValueError):
    """A cell or value holds an infinite number."""


class _TooLarge(ValueError):
    """A cell or value holds a number beyond ``MAX_SCORE`` in magnitude."""


# Scores are means of per-question values: far from this bound, which keeps every sum, square and
# interval of a million of them finite.
MAX_SCORE: Final = 1e15
MAX_NAMES: Final = 256  # distinct score names per run: each keeps a column of one float per question


def _too_many(source: str, count: int, what: str) -> InputError:
    """Refuse more score columns (or fields) than a run keeps, before reading a single value of them."""
    return InputError(source, f"more than {MAX_NAMES} score {what} (one column is kept per name and question): {count}")


def too_large(value: float) -> str:
    """Describe why a score is refused for its size."""
    return f"at most {MAX_SCORE:g} in magnitude, got {value:g}"


def load_scores(spec: str, known: frozenset[str] = frozenset(), *, hashed: bool = False) -> ScoreFile:
    """Read a scores file (CSV or JSON Lines; ``-`` for standard input); raise at the first problem.

    ``known`` names fields that are scores whatever they hold: a value there that is not a number
    is an error rather than a sign that the field holds text. ``hashed``: keep the sha256 of the
    bytes read (``ScoreFile.sha256``), the file read once (standard input too).
    """
    file = InputFile(spec, hashed=hashed)
    name = file.name
    data = bytearray()  # the bytes alone: a list of lines kept ~40 bytes a line, millions of blank ones too
    for raw in file.raw_lines():
        data += raw
    if data.startswith(BOM):
        del data[: len(BOM)]
    first = next((raw.lstrip(b" \t\r\n") for raw in _lines(data) if raw.strip(b" \t\r\n")), None)
    if first is None:
        raise InputError(name, EMPTY)
    suffix = os.path.splitext(spec)[1].lower()
    if suffix == ".csv":
        as_json = False
    elif suffix in _JSON_SUFFIXES:
        as_json = True
    else:
        as_json = first.startswith(b"{")
    if as_json:
        if first.startswith(b"["):
            raise InputError(
                name,
                "expected JSON Lines (one object per line), got a JSON array "
                '(pandas writes JSON Lines with to_json(orient="records", lines=True))',
                _first_nonblank(_lines(data)),
            )
        loaded = _load_jsonl(name, _lines(data), known)
    else:
        loaded = _load_csv(name, decode_text(bytes(data), name, 1), known)
    return loaded._replace(sha256=file.sha256) if hashed else loaded


def _lines(data: bytearray) -> Iterator[bytes]:
    """The lines of bytes read whole, each as it is needed."""
    return iter(io.BytesIO(data))


def _first_nonblank(lines: Iterable[bytes]) -> int:
    return next(number for number, raw in enumerate(lines, 1) if raw.strip(b" \t\r\n"))


def _check_name(source: str, name: str, line: int, what: str) -> None:
    """Reject a score name that cannot serve as a metric name (in gates and reports), by its spelling
    (``ragscore.score_names``); the names ragscore keeps for its own metrics are checked once read."""
    at = spelling_fault(name)
    if at is None:
        return
    if not name:
        raise InputError(source, f"a score {what} has no name", line)
    readable = not _SURROGATE_RE.search(name)  # a lone surrogate cannot be printed: escape it
    bad = name[at]
    if bad.isspace():
        why, rule = "holds whitespace", f"use {CHARACTERS}"
    elif may_hold(bad):  # a character that may not start a name
        why, rule = f"starts with {json.dumps(bad)}", f"start with {FIRST}"
    else:
        why, rule = f"holds the character {json.dumps(bad, ensure_ascii=not readable)}", f"use {CHARACTERS}"
    raise InputError(
        source,
        f"the score {what} {json.dumps(name, ensure_ascii=not readable)} cannot be a metric name: it {why} ({rule})",
        line,
    )


def _finish(
    source: str, join: str, names: list[str], rows: Iterable[tuple[int, str, dict[str, float | None]]],
    judge: Judge | None = None,
) -> ScoreFile:
    """Index the rows by key (a later row wins), listing the replaced ones and counting missing values."""
    by_key: dict[str, ScoreRow] = {}
    duplicates: list[tuple[int, str]] = []
    for line, key, values in rows:
        earlier = by_key.get(key)
        if earlier is not None:
            duplicates.append((earlier.line, key))
        by_key[key] = ScoreRow(key, line, values)
    duplicates.sort()
    skipped = {score: sum(score in row.values and row.values[score] is None for row in by_key.values())
               for score in names}
    return ScoreFile(source, _JOIN_AS[join], tuple(names), by_key, duplicates, skipped, judge)


# CSV ------------------------------------------------------------------------------------------


def _csv_cell(cell: str) -> float | None:
    """Read one cell: a finite float, None for "no value"; ValueError for text, _NotFinite for inf."""
    text = cell.strip()
    lowered = text.lower()
    if lowered in _MISSING:
        return None
    if lowered in _INFINITE:
        raise _NotFinite(text)
    if not _NUMBER_RE.fullmatch(text):
        raise ValueError(text)
    value = float(text)
    if math.isinf(value):
        raise _NotFinite(text)
    if abs(value) > MAX_SCORE:
        raise _TooLarge(text)
    return value


def csv_records(source: str, text: str) -> list[tuple[int, list[str]]]:
    """Split CSV text into (start line, cells) records, skipping blank lines."""
    reader = csv.reader(io.StringIO(text, newline="\n"), strict=True)
    records: list[tuple[int, list[str]]] = []
    previous = 0
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(text) + 1))  # a cell of retrieved contexts can be long
    try:
        for row in reader:
            start, previous = previous + 1, reader.line_num
            if row and (len(row) > 1 or row[0].strip()):
                records.append((start, row))
    except csv.Error as exc:
        detail = str(exc)
        if "unexpected end of data" in detail:
            raise InputError(
                source, 'invalid CSV: a quoted cell is never closed (its " is in the record that starts here)',
                previous + 1,
            ) from None
        if "expected after" in detail:
            detail = 'a quoted cell must end at a comma or at the end of the line (write a " inside it as "")'
        raise InputError(source, f"invalid CSV: {detail}", reader.line_num) from None
    finally:
        csv.field_size_limit(limit)
    return records


def _load_csv(source: str, text: str, known: frozenset[str]) -> ScoreFile:
    records = csv_records(source, text)
    if not records:
        raise InputError(source, EMPTY)
    header_line, header = records[0]
    columns = [cell.strip() for cell in header]
    join = next((column for column in JOIN_COLUMNS if column in columns), None)
    if join is None:
        raise InputError(source, NO_JOIN, header_line)
    key_at = columns.index(join)
    data = records[1:]

    scores: list[int] = []  # indexes of the score columns
    for index, column in enumerate(columns):
        if column in JOIN_COLUMNS or (index == 0 and column in _PANDAS_INDEX):
            continue
        # With no row, nothing tells a score column from a text one: only the known names count
        # (the score command notes that the file has no rows).
        if column in known or _numeric_column(data, index):
            scores.append(index)
    if len(scores) > MAX_NAMES:
        raise _too_many(source, len(scores), "columns")
    _check_csv_header(source, header_line, columns, join, scores, bool(data))
    names = [columns[index] for index in scores]

    width = len(columns)

    def rows() -> Iterable[tuple[int, str, dict[str, float | None]]]:
        for line, cells in data:
            if len(cells) > width:
                raise InputError(
                    source, f"expected at most {width} cells (one per header column), got {len(cells)}", line
                )
            key = cells[key_at] if key_at < len(cells) else ""
            if not key.strip():
                raise InputError(source, f'expected a "{join}" in every row, got an empty cell', line)
            values: dict[str, float | None] = {}
            for index in scores:
                cell = cells[index] if index < len(cells) else ""
                try:
                    values[columns[index]] = _csv_cell(cell)
                except _NotFinite:
                    raise InputError(
                        source,
                        f'expected "{columns[index]}" to be a finite number (or empty, null, NaN), '
                        f"got {describe(cell.strip())}",
                        line,
                    ) from None
                except _TooLarge:
                    raise InputError(
                        source, f'expected "{columns[index]}" to be {too_large(float(cell))}', line
                    ) from None
                except ValueError:
                    raise InputError(
                        source,
                        f'expected "{columns[index]}" to be a number (or empty, null, NaN), '
                        f"got {describe(cell.strip())}",
                        line,
                    ) from None
            yield line, key, values

    return _finish(source, join, names, rows())


def _numeric_column(data: list[tuple[int, list[str]]], index: int) -> bool:
    """Tell whether a column holds a number in some row and nothing but numbers or "no value"."""
    seen = False
    for _, cells in data:
        if index >= len(cells):
            continue
        try:
            seen |= _csv_cell(cells[index]) is not None
        except (_NotFinite, _TooLarge):
            seen = True  # a number all the same: reported as not finite, or too large
        except ValueError:
            return False
    return seen


def _check_csv_header(source: str, line: int, columns: list[str], join: str, scores: list[int], rows: bool) -> None:
    """Reject a repeated join or score column, a score column with an unusable name, and no score column
    (unless the file has no rows: then no column could show that it holds numbers)."""
    places: dict[str, list[int]] = {}  # every column's places, in one pass (a file may have 100,000 columns)
    for place, column in enumerate(columns):
        places.setdefault(column, []).append(place)
    for index in sorted([columns.index(join), *scores]):
        found = places[columns[index]]
        if len(found) > 1:
            raise InputError(
                source, f'the column "{columns[index]}" appears twice (columns {found[0] + 1} and {found[1] + 1})', line
            )
    for index in scores:
        _check_name(source, columns[index], line, "column")
    if not scores and rows:
        raise InputError(source, NO_SCORES)


# JSON Lines -----------------------------------------------------------------------------------


def _json_line(raw: bytes, source: str, line: int) -> object:
    """Decode one JSON Lines line (NaN and Infinity allowed here, judged per field); ``...`` if blank."""
    text = decode_text(raw, source, line).rstrip("\r\n")
    start = len(text) - len(text.lstrip(" \t\r\n"))
    if start == len(text):
        return ...
    try:
        value, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        message, pos = json_error(exc)
        raise InputError(source, message, line, pos + 1) from None
    except RecursionError:
        raise InputError(source, "invalid JSON: nested too deeply to read", line) from None
    except ValueError as exc:  # an integer with more digits than Python converts
        detail = "a number has too many digits" if "digits" in str(exc) else str(exc)
        raise InputError(source, f"invalid JSON: {detail}", line) from None
    rest = text[end:]
    if rest.strip(" \t\r\n"):
        column = end + len(rest) - len(rest.lstrip(" \t\r\n")) + 1
        raise InputError(source, "invalid JSON: extra data after the value (one value per line)", line, column)
    return value


def _is_number(value: object) -> bool:
    """Tell whether a decoded value is a number other than NaN (which means "no value")."""
    return (type(value) is int) or (type(value) is float and not math.isnan(value))


def _json_score(source: str, line: int, name: str, value: object) -> float | None:
    """Read one score field's value: a finite float, or None for absent, null or NaN."""
    if value is None:
        return None
    if type(value) is float:
        if math.isnan(value):
            return None
        if math.isinf(value):
            shown = "Infinity" if value > 0 else "-Infinity"
            raise InputError(source, f'expected "{name}" to be a finite number or null, got {shown}', line)
        if abs(value) > MAX_SCORE:
            raise InputError(source, f'expected "{name}" to be {too_large(value)}', line)
        return value
    if type(value) is int:
        try:
            number = float(value)
        except OverflowError:
            raise InputError(
                source, f'expected "{name}" to be a finite number or null, got a number beyond 1.8e308', line
            ) from None
        if abs(number) > MAX_SCORE:
            raise InputError(source, f'expected "{name}" to be {too_large(number)}', line)
        return number
    kind = json_type(value)
    article = "an" if kind[0] in "aeiou" else "a"
    shown = "" if isinstance(value, (list, dict)) else f" ({describe(value)})"
    raise InputError(source, f'expected "{name}" to be a number or null, got {article} {kind}{shown}', line)


def _json_key(source: str, line: int, join: str, obj: dict[str, object]) -> str:
    """Return a record's join key: a non-empty string, or an integer as its decimal string."""
    if join not in obj:
        raise InputError(source, f'missing "{join}" (the first record has it, so every record is joined on it)', line)
    value = obj[join]
    if type(value) is str and value:
        if _SURROGATE_RE.search(value):
            raise InputError(source, "invalid string: a lone UTF-16 surrogate escape (\\ud800-\\udfff)", line)
        return value
    if type(value) is int:
        return str(value)
    raise InputError(source, f'expected "{join}" to be a non-empty string or an integer, got {describe(value)}', line)


def _judge(source: str, line: int, value: object) -> Judge:
    """Read ``ragscore judge``'s header record, each field checked."""
    shape = ('expected "ragscore_judge" to be an object of "endpoint", "model" and "rubric" (text) and "criteria" '
             '(each criterion\'s scale): the header ragscore judge writes')
    if type(value) is not dict or sorted(value) != sorted(_JUDGE_FIELDS):
        raise InputError(source, shape, line)
    criteria = value["criteria"]
    if (not all(type(value[k]) is str and value[k] for k in ("endpoint", "model", "rubric"))
            or type(criteria) is not dict or not criteria):
        raise InputError(source, shape, line)
    for name, scale in criteria.items():
        if scale not in SCALES:
            raise InputError(source, f"the criterion {json.dumps(name)} has the scale {describe(scale)}: expected "
                                     + ", ".join(SCALES), line)
        _check_name(source, name, line, "field")
    return Judge(value["endpoint"], value["model"], value["rubric"], dict(criteria))


def _load_jsonl(source: str, lines: Iterable[bytes], known: frozenset[str]) -> ScoreFile:
    records: list[tuple[int, dict[str, object]]] = []
    judge: Judge | None = None
    first_seen: dict[str, int] = {}  # every field, in order of first appearance, with its line
    numeric: set[str] = set()
    for number, raw in enumerate(lines, 1):
        obj = _json_line(raw, source, number)
        if obj is ...:
            continue
        if type(obj) is not dict:
            raise InputError(source, f"expected a JSON object, got {describe(obj)}", number)
        if JUDGE_KEY in obj:
            if records or judge is not None or len(obj) > 1:
                raise InputError(source, f'a "{JUDGE_KEY}" header record may only open the file, alone', number)
            judge = _judge(source, number, obj[JUDGE_KEY])
            known = known | frozenset(judge.criteria)
            first_seen.update((name, number) for name in judge.criteria)
            continue
        for field, value in obj.items():
            first_seen.setdefault(field, number)
            if _is_number(value) or (type(value) is float and math.isinf(value)):
                numeric.add(field)
        records.append((number, obj))
    if not records:
        raise InputError(source, EMPTY)
    first_line, first = records[0]
    join = next((field for field in JOIN_COLUMNS if field in first), None)
    if join is None:
        raise InputError(source, NO_JOIN, first_line)
    names = [field for field in first_seen if field not in JOIN_COLUMNS and (field in numeric or field in known)]
    if len(names) > MAX_NAMES:
        raise _too_many(source, len(names), "fields")
    for field in names:
        _check_name(source, field, first_seen[field], "field")
    if not names:
        raise InputError(source, NO_SCORES)

    def rows() -> Iterable[tuple[int, str, dict[str, float | None]]]:
        for line, obj in records:
            key = _json_key(source, line, join, obj)
            get = obj.get
            # A field the line does not have is no value from this row (not a null).
            yield line, key, {field: _json_score(source, line, field, get(field)) for field in names if field in obj}

    return _finish(source, join, names, rows(), judge)


__all__ = ["JUDGE_KEY", "MAX_NAMES", "SCALES", "Judge", "ScoreFile", "ScoreRow", "load_scores"]
