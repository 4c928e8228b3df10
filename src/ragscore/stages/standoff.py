"""BRAT standoff annotations and TSV/CSV tables as the stage commands' records.

- BRAT: a ``.ann`` file beside its ``.txt`` (or a folder of them, one document per file, its
  id the file's name without ``.ann``). Text-bound annotations (``T1<tab>PER 0 5;9 12<tab>...``)
  are the entities; a discontinuous one counts by its full extent (from its smallest start to its
  largest end, as brat's own first_start and last_end read it), so it matches a contiguous span
  with the same ends. Each fragment must start before it ends, within the text, and the
  annotation's text column (brat writes the text of its fragments, joined by a space) must be the
  text of the ``.txt`` at its offsets, white space aside: byte offsets written for brat's
  character offsets, or a ``.txt`` changed after annotation, would score other spans. Relations,
  events, attributes and notes are not entities and are skipped. Of a folder, only regular files
  are read.
- TSV or CSV with a header: ``classify`` reads ``id`` and ``label``; ``link`` reads gold rows
  ``id, mention, kb_id`` (an empty kb_id or ``NIL``: no entity) and prediction rows
  ``id, kb_id, score``, one per candidate (an empty kb_id or ``NIL``: the prediction is NIL; a
  score is a finite number). A column read is named once in the header, and every row has its cell.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Final, NamedTuple, cast

from ragscore.errors import InputError
from ragscore.loaders.input_file import BOM, InputFile, decode_text
from ragscore.loaders.shards import file_kind, regular_files
from ragscore.quoting import quote
from ragscore.stages.records import Sourced

NIL = ("", "NIL")
# A number as JSON and CSV write one: no nan, inf, hex or 1_000 (which float() would read).
_NUMBER_RE: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _text(path: Path) -> str:
    file = InputFile(str(path))
    stream = file._open()
    try:
        return decode_text(file.read_rest(stream, "a document").removeprefix(BOM), file.name, 1)
    finally:
        file._close(stream)


def brat_document(ann: Path) -> Sourced:
    """Read one ``.ann`` file (and the length of its ``.txt``) as a ner record."""
    txt = ann.with_suffix(".txt")
    if not txt.is_file():
        kind = f" (a regular file; it is {file_kind(txt.stat().st_mode)})" if txt.exists() and not txt.is_dir() else ""
        raise InputError(str(ann), f"expected its text beside it, in {txt.name}{kind}")
    text = _text(txt)
    entities = []
    # Lines end at "\n" alone, as every reader here counts them (str.splitlines would also end one
    # at a form feed or U+2028 inside an annotation's text, and every later line would be misnumbered).
    for number, line in enumerate(_text(ann).split("\n"), 1):
        if not line.startswith("T"):
            continue  # relations (R), events (E), attributes (A, M), notes (#), equivalences (*)
        parts = line.removesuffix("\r").split("\t")
        if len(parts) < 2 or not parts[1].strip():
            raise InputError(str(ann), "expected a text-bound annotation: ID<tab>TYPE START END<tab>TEXT", number)
        kind, _, spans = parts[1].partition(" ")
        if not kind:  # " PER 0 3" or " 0 3": the entity would have no type
            raise InputError(str(ann), "expected a text-bound annotation: ID<tab>TYPE START END<tab>TEXT, got no type",
                             number, len(parts[0]) + 2)
        # The text column (brat always writes it; another tool may not), where it starts in the line.
        check = None if len(parts) < 3 else partial(_check_text, str(ann), number, len(parts[0]) + len(parts[1]) + 3,
                                                    txt.name, text, "\t".join(parts[2:]))
        fragments = _fragments(str(ann), spans, number, len(parts[0]) + len(kind) + 3, txt.name, len(text), check)
        # A discontinuous annotation counts by its extent, as brat's own first_start and last_end
        # read it: the smallest start and the largest end, in whatever order its fragments are written.
        entities.append({"start": min(a for a, _ in fragments), "end": max(b for _, b in fragments), "type": kind})
    return Sourced({"id": ann.stem, "text": text, "entities": entities}, str(ann), None)


def _same_text(a: str, b: str) -> bool:
    return a == b or a.split() == b.split()  # white space aside: a newline in a span, written as a space


def _check_text(source: str, line: int, column: int, txt: str, text: str, written: str,
                fragments: list[tuple[int, int]]) -> None:
    """Raise unless ``written`` (an annotation's text column) is the text at its fragments, as brat writes
    it (the fragments' texts joined by a space); say why it may not be: byte offsets, or a changed .txt.
    Offsets outside the text are left to the caller's error unless they are byte offsets."""
    at_chars = " ".join(text[start:end] for start, end in fragments)
    if _same_text(at_chars, written):
        return
    encoded = text.encode("utf-8")
    at_bytes = " ".join(encoded[start:end].decode("utf-8", errors="replace") for start, end in fragments)
    if _same_text(at_bytes, written):
        cause = "byte offsets? brat counts characters"
    elif max(end for _, end in fragments) > len(text):
        return  # outside the text: the caller says so
    else:
        cause = f"{txt} changed after annotation?"
    spans = ";".join(f"{start}-{end}" for start, end in fragments)
    raise InputError(source, f"the annotation's text {quote(written, 40)} is not the text of {txt} at {spans}: "
                             f"{quote(at_chars, 40)} ({cause})", line, column)


def _fragments(source: str, spans: str, line: int, column: int, txt: str, length: int,
               check: Callable[[list[tuple[int, int]]], None] | None = None) -> list[tuple[int, int]]:
    """Read an annotation's ``START END;START END`` fragments (``column``: where ``spans`` starts in
    its line); each must start before it ends, within the text. ``check`` sees the fragments before
    their ends are checked against the text's length."""
    fragments = []
    columns = []
    for fragment in spans.split(";"):
        at = column + len(fragment) - len(fragment.lstrip())
        bounds = fragment.split()
        if len(bounds) != 2 or not all(b.isascii() and b.isdigit() for b in bounds):
            raise InputError(source, f"expected START END offsets (separated by ';'), got {quote(spans)}", line, at)
        try:
            start, end = int(bounds[0]), int(bounds[1])
        except ValueError:  # more digits than int() converts
            raise InputError(source, f"expected START END offsets (separated by ';'), got {quote(spans)}", line,
                             at) from None
        if not start < end:
            raise InputError(source, f"expected a span's start before its end, got {start}-{end}", line, at)
        fragments.append((start, end))
        columns.append(at)
        column += len(fragment) + 1
    if check is not None:
        check(fragments)
    for (start, end), at in zip(fragments, columns, strict=True):
        if end > length:
            raise InputError(source, f"span {start}-{end} is outside the text of {txt} ({length} characters)", line, at)
    return fragments


def brat(spec: str, notes: list[str] | None = None) -> list[Sourced]:
    """Read a ``.ann`` file, or every ``.ann`` file of a folder in name order, as ner records.

    Of a folder only regular files are read (a link is followed): a named pipe, a socket or a
    device named ``x.ann`` (where reading could wait for ever) is left out, with a note added to
    ``notes``, as a folder of traces leaves it out. A ``.ann`` named on its own is read as it is.
    """
    path = Path(spec)
    if not path.is_dir():
        return [brat_document(path)]
    left: list[str] = []
    files = regular_files(spec, [str(ann) for ann in sorted(path.glob("*.ann"))], left)
    if notes is not None:
        notes += left
    if not files:
        raise InputError(spec, "expected .ann files in this folder" + (" (regular files)" if left else ""))
    return [brat_document(Path(ann)) for ann in files]


class _Table(NamedTuple):
    rows: list[tuple[int, dict[str, str]]]  # (line, row by column name)
    header: list[str]
    lines: list[str]  # the file's lines, to place a cell in its line
    delimiter: str

    source: str

    def record(self, fields: dict[str, object], line: int) -> Sourced:
        """A row's record, knowing its line and where its cells are (for errors about it)."""
        columns = {name: self.column(line, name) for name in fields if name in self.header}
        return Sourced(fields, self.source, line, columns)

    def column(self, line: int, name: str) -> int | None:
        """Where the cell of column ``name`` starts in ``line`` (None when that cannot be told)."""
        if line > len(self.lines):  # lines ended by CR alone: csv ends them there, "\n" does not
            return None
        return _cell_column(self.lines[line - 1], self.delimiter, self.header.index(name))


def _rows(spec: str, columns: tuple[str, ...]) -> _Table:
    """Read a TSV (tab-separated) or CSV file with a header naming ``columns`` (each once): its (line, row) pairs."""
    from ragscore.loaders.scores import csv_records

    file = InputFile(spec)
    stream = file._open()
    try:
        text = decode_text(file.read_rest(stream, "a table").removeprefix(BOM), file.name, 1)
    finally:
        file._close(stream)
    delimiter = "\t" if os.path.splitext(spec)[1].lower() == ".tsv" or "\t" in text.split("\n", 1)[0] else ","
    records = _tsv_records(file.name, text) if delimiter == "\t" else csv_records(file.name, text)
    if not records:
        raise InputError(file.name, "expected a header line and rows")
    header_line, cells = records[0]
    header = [cell.strip() for cell in cells]
    lines = text.split("\n")
    raw = lines[header_line - 1] if header_line <= len(lines) else '"'  # (a quote: not placed)
    _check_header(file.name, header, columns, header_line, raw, delimiter)
    rows = []
    needed = max(header.index(column) for column in columns) + 1  # a row may leave out the columns after these
    for line, cells in records[1:]:
        if len(cells) > len(header):
            raise InputError(file.name, f"expected at most {len(header)} cells, got {len(cells)}", line)
        if len(cells) < needed:
            missing = next(column for column in columns if header.index(column) >= len(cells))
            raise InputError(file.name, f"expected a {quote(missing)} cell (column {header.index(missing) + 1}), "
                                        f"got {len(cells)} cell{'s' * (len(cells) != 1)}", line)
        # Not strict: a short row leaves its last columns out (and a strict= keyword costs every row).
        rows.append((line, {name: cell.strip() for name, cell in zip(header, cells)}))  # noqa: B905
    return _Table(rows, header, lines, delimiter, file.name)


def _tsv_records(source: str, text: str) -> list[tuple[int, list[str]]]:
    """Split TSV text into (start line, cells) records, skipping blank lines."""
    reader = csv.reader(io.StringIO(text, newline="\n"), delimiter="\t")
    records: list[tuple[int, list[str]]] = []
    previous = 0
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(text) + 1))  # a cell may be long
    try:
        for row in reader:
            start, previous = previous + 1, reader.line_num
            if any(row):
                records.append((start, row))
    except csv.Error as exc:
        detail = str(exc)
        if "new-line character" in detail:
            detail = "a line ends with a carriage return alone (expected LF or CRLF line ends)"
        raise InputError(source, f"invalid TSV: {detail}", previous + 1) from None
    finally:
        csv.field_size_limit(limit)
    return records


def _check_header(spec: str, header: list[str], columns: tuple[str, ...], line: int, raw: str, delimiter: str) -> None:
    """Refuse a header without the columns read, or with one of them twice (the last would win unseen)."""
    missing = [c for c in columns if c not in header]
    if missing:
        raise InputError(spec, f"expected the columns {', '.join(columns)} in the header, "
                               f"missing {', '.join(missing)}", line)
    for name in columns:
        places = [place for place, column in enumerate(header) if column == name]
        if len(places) > 1:
            raise InputError(spec, f"the column {quote(name)} appears twice (columns {places[0] + 1} and "
                                   f"{places[1] + 1})", line, _cell_column(raw, delimiter, places[1]))


def _cell_column(raw: str, delimiter: str, place: int) -> int | None:
    """Where cell ``place`` starts in its line (None past its cells, or when the line quotes a cell)."""
    cells = raw.removesuffix("\r").split(delimiter)
    if place >= len(cells) or '"' in raw:
        return None
    before = sum(len(cell) + 1 for cell in cells[:place])
    cell = cells[place]
    return before + (len(cell) - len(cell.lstrip()) if cell.strip() else 0) + 1  # at its text, or its start


def classify_table(spec: str) -> list[Sourced]:
    """Read ``id, label`` rows as classify records."""
    table = _rows(spec, ("id", "label"))
    return [table.record({"id": row["id"], "label": row["label"]}, line) for line, row in table.rows]


def link_gold_table(spec: str) -> list[Sourced]:
    """Read ``id, mention, kb_id`` rows as link gold records (an empty kb_id or NIL: no entity)."""
    table = _rows(spec, ("id", "mention", "kb_id"))
    return [table.record({"id": row["id"], "mention": row["mention"],
                          "kb_id": None if row["kb_id"] in NIL else row["kb_id"]}, line)
            for line, row in table.rows]


def link_pred_table(spec: str) -> list[Sourced]:
    """Read ``id, kb_id, score`` rows, one per candidate, as link predictions (kb_id empty or NIL: NIL);
    a prediction is where its first row is."""
    table = _rows(spec, ("id", "kb_id", "score"))
    preds: dict[str, Sourced] = {}
    for line, row in table.rows:
        pred = preds.get(row["id"])
        if pred is None:
            pred = preds[row["id"]] = table.record({"id": row["id"], "candidates": [], "nil": False}, line)
        if row["kb_id"] in NIL:
            pred["nil"] = True
            continue
        cell = row["score"]
        score = float(cell) if _NUMBER_RE.fullmatch(cell) else math.nan
        if not math.isfinite(score):
            raise InputError(spec, f"expected the score to be a finite number (such as 0.87), got {quote(cell)}", line,
                             table.column(line, "score"))
        cast("list[dict[str, object]]", pred["candidates"]).append({"kb_id": row["kb_id"], "score": score})
    return list(preds.values())
