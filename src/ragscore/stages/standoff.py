"""BRAT standoff annotations and TSV/CSV tables as the stage commands' records.

- BRAT: a ``.ann`` file beside its ``.txt`` (or a folder of them, one document per file, its
  id the file's name without ``.ann``). Text-bound annotations (``T1<tab>PER 0 5;9 12<tab>...``)
  are the entities; a discontinuous one counts by its full extent (from its first start to its
  last end), so it matches a contiguous span with the same ends. Relations, events, attributes
  and notes are not entities and are skipped.
- TSV or CSV with a header: ``classify`` reads ``id`` and ``label``; ``link`` reads gold rows
  ``id, mention, kb_id`` (an empty kb_id or ``NIL``: no entity) and prediction rows
  ``id, kb_id, score``, one per candidate (an empty kb_id or ``NIL``: the prediction is NIL).
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import cast

from ragscore.errors import InputError
from ragscore.loaders.input_file import BOM, InputFile, decode_text

NIL = ("", "NIL")


def _text(path: Path) -> str:
    file = InputFile(str(path))
    stream = file._open()
    try:
        return decode_text(file.read_rest(stream, "a document").removeprefix(BOM), file.name, 1)
    finally:
        file._close(stream)


def brat_document(ann: Path) -> dict[str, object]:
    """Read one ``.ann`` file (and the length of its ``.txt``) as a ner record."""
    txt = ann.with_suffix(".txt")
    if not txt.is_file():
        raise InputError(str(ann), f"expected its text beside it, in {txt.name}")
    text = _text(txt)
    entities = []
    for number, line in enumerate(_text(ann).splitlines(), 1):
        if not line.startswith("T"):
            continue  # relations (R), events (E), attributes (A, M), notes (#), equivalences (*)
        parts = line.split("\t")
        if len(parts) < 2 or not parts[1].strip():
            raise InputError(str(ann), "expected a text-bound annotation: ID<tab>TYPE START END<tab>TEXT", number)
        kind, _, spans = parts[1].partition(" ")
        try:
            offsets = [(int(a), int(b)) for a, b in (span.split() for span in spans.split(";"))]
        except ValueError:
            raise InputError(str(ann), f"expected START END offsets (separated by ';'), got {spans!r}",
                             number) from None
        start, end = offsets[0][0], max(b for _, b in offsets)
        if not 0 <= start < end <= len(text):
            raise InputError(str(ann), f"span {start}-{end} is outside the text of {txt.name} ({len(text)} characters)",
                             number)
        entities.append({"start": start, "end": end, "type": kind})
    return {"id": ann.stem, "text": text, "entities": entities}


def brat(spec: str) -> list[dict[str, object]]:
    """Read a ``.ann`` file, or every ``.ann`` file of a folder in name order, as ner records."""
    path = Path(spec)
    if path.is_dir():
        files = sorted(path.glob("*.ann"))
        if not files:
            raise InputError(spec, "expected .ann files in this folder")
        return [brat_document(ann) for ann in files]
    return [brat_document(path)]


def _rows(spec: str) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Read a TSV (tab-separated) or CSV file with a header: its columns and (line, row) pairs."""
    from ragscore.loaders.scores import csv_records

    file = InputFile(spec)
    stream = file._open()
    try:
        text = decode_text(file.read_rest(stream, "a table").removeprefix(BOM), file.name, 1)
    finally:
        file._close(stream)
    if os.path.splitext(spec)[1].lower() == ".tsv" or "\t" in text.split("\n", 1)[0]:
        records = [(n, row) for n, row in enumerate(csv.reader(io.StringIO(text), delimiter="\t"), 1) if any(row)]
    else:
        records = csv_records(file.name, text)
    if not records:
        raise InputError(file.name, "expected a header line and rows")
    header = [cell.strip() for cell in records[0][1]]
    rows = []
    for line, cells in records[1:]:
        if len(cells) > len(header):
            raise InputError(file.name, f"expected at most {len(header)} cells, got {len(cells)}", line)
        # Not strict: a short row leaves its last columns out (and a strict= keyword costs every row).
        rows.append((line, {name: cell.strip() for name, cell in zip(header, cells)}))  # noqa: B905
    return header, rows


def _need(spec: str, header: list[str], columns: tuple[str, ...]) -> None:
    missing = [c for c in columns if c not in header]
    if missing:
        raise InputError(spec, f"expected the columns {', '.join(columns)} in the header, "
                               f"missing {', '.join(missing)}", 1)


def classify_table(spec: str) -> list[dict[str, object]]:
    """Read ``id, label`` rows as classify records."""
    header, rows = _rows(spec)
    _need(spec, header, ("id", "label"))
    return [{"id": row["id"], "label": row["label"]} for _, row in rows]


def link_gold_table(spec: str) -> list[dict[str, object]]:
    """Read ``id, mention, kb_id`` rows as link gold records (an empty kb_id or NIL: no entity)."""
    header, rows = _rows(spec)
    _need(spec, header, ("id", "mention", "kb_id"))
    return [{"id": row["id"], "mention": row["mention"], "kb_id": None if row["kb_id"] in NIL else row["kb_id"]}
            for _, row in rows]


def link_pred_table(spec: str) -> list[dict[str, object]]:
    """Read ``id, kb_id, score`` rows, one per candidate, as link predictions (kb_id empty or NIL: NIL)."""
    header, rows = _rows(spec)
    _need(spec, header, ("id", "kb_id", "score"))
    preds: dict[str, dict[str, object]] = {}
    for line, row in rows:
        pred = preds.setdefault(row["id"], {"id": row["id"], "candidates": [], "nil": False})
        if row["kb_id"] in NIL:
            pred["nil"] = True
            continue
        try:
            score = float(row["score"])
        except ValueError:
            raise InputError(spec, f"expected a number as the score, got {row['score']!r}", line) from None
        cast("list[dict[str, object]]", pred["candidates"]).append({"kb_id": row["kb_id"], "score": score})
    return list(preds.values())
