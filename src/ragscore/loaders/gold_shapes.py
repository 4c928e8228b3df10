"""Gold records in another shape, read as the gold contract: ``[gold.fields]`` mappings and a ragas dataset as
its own gold set (JSON Lines, or ragas' CSV export, whose list columns are Python list literals)."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Final

from ragscore.errors import InputError
from ragscore.loaders.detect import is_csv_header, looks_json
from ragscore.loaders.fieldpath import MISSING, FieldPath, lookup, parse_path
from ragscore.loaders.input_file import peek
from ragscore.loaders.jsonl import (
    BOM,
    InputFile,
    decode_line,
    decode_text,
    iter_jsonl,
)
from ragscore.loaders.scores import csv_records

# Columns of ragas' CSV export that hold lists (pandas writes them as Python list literals).
_RAGAS_LIST_COLUMNS: Final = frozenset(
    {"retrieved_contexts", "retrieved_context_ids", "reference_contexts", "reference_context_ids", "multi_responses"})


def _list_cell(text: str) -> object:
    """A list cell of ragas' CSV export: a Python list literal (or JSON); other text stays text."""
    if text.lstrip()[:1] != "[":
        return text
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, list) else text


def ragas_csv(name: str, lines: Iterator[bytes]) -> Iterator[tuple[int, dict[str, object]]]:
    """Yield (line, row) for each row of ragas' CSV export, its list columns decoded (read whole:
    a quoted cell may hold line breaks)."""
    text = decode_text(b"".join(lines).removeprefix(BOM), name, 1)
    records = csv_records(name, text)
    if not records:
        return
    _, header = records[0]
    names = [cell.strip() for cell in header]
    for line, cells in records[1:]:
        if len(cells) > len(names):
            raise InputError(name, f"expected at most {len(names)} cells (one per header column), got {len(cells)}",
                             line)
        # Not strict: a short row leaves its last columns out (and a strict= keyword costs every row).
        yield line, {name: _list_cell(cell) if name in _RAGAS_LIST_COLUMNS else cell
                     for name, cell in zip(names, cells)}  # noqa: B905


# Gold fields that hold lists: a mapped string becomes a one-element list (a single reference answer).
_GOLD_LISTS: Final = frozenset(
    {"gold_claim_substr", "gold_citations", "gold_answers", "forbidden_substr", "gold_chunks"}
)


_GOLD_CONTAINERS: Final = _GOLD_LISTS | {"gold_relevance", "gold_embeddings"}


_GOLD_ALIASES: Final = {"question": ("question", "q"), "gold_citations": ("gold_citations", "gold_ids")}


# A ragas sample as a gold item: reference -> the reference claim and answer; the reference
# context ids -> the relevant documents of the retrieval metrics (grade 1: ragas samples cite
# nothing, so they are not citations to hit), their texts -> gold chunks; every question is
# answerable (ragas has no unanswerable questions) unless the record says otherwise. The
# sample's other ragas fields are the pipeline's, not the gold set's.
RAGAS_GOLD: Final = (
    ("question", "user_input"), ("gold_claim", "reference"), ("gold_answers", "reference"),
    ("gold_relevance", "reference_context_ids"), ("gold_chunks", "reference_contexts"),
)


_RAGAS_KEYS: Final = frozenset({
    "user_input", "retrieved_contexts", "retrieved_context_ids", "reference_contexts", "reference_context_ids",
    "response", "multi_responses", "reference", "rubrics"})


@dataclass
class GoldShape:
    """How gold records in another shape become the native contract."""

    fields: tuple[tuple[str, FieldPath], ...]
    ragas: bool = False

    def translate(self, obj: object) -> object:
        if type(obj) is not dict:
            return obj
        if self.ragas:
            out = {key: value for key, value in obj.items() if key not in _RAGAS_KEYS}
            out.setdefault("answerable", True)
        else:
            out = dict(obj)
        for concept, _ in self.fields:
            for key in _GOLD_ALIASES.get(concept, (concept,)):
                out.pop(key, None)
        for concept, path in self.fields:
            value = lookup(obj, path, concept in _GOLD_CONTAINERS)
            if value is MISSING or value is None or (self.ragas and value == ""):
                continue
            if concept in _GOLD_LISTS and isinstance(value, str):
                value = [value]
            elif concept == "gold_relevance" and type(value) is list:  # a list of relevant ids: grade 1 each
                value = {str(v): 1 for v in value if isinstance(v, (str, int)) and not isinstance(v, bool)} \
                    if all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in value) else value
            out[concept] = value
        return out

    def rename(self, exc: InputError) -> InputError:
        """Name the mapped path in an error about a contract field."""
        message = exc.message
        for concept, path in self.fields:
            message = message.replace(f'"{concept}"', f'"{path.text}" (read as {concept})')
        return InputError(exc.source, message, exc.line, exc.column)


def gold_records(
    file: InputFile, part: int, parts: int, mapping: tuple[tuple[str, str], ...], trace_format: str,
    document: str | None, lines: Iterator[bytes], skipped: list[int] | None = None,
) -> tuple[GoldShape | None, Iterator[tuple[int, int, str, object, bytes | None]]]:
    """Read a gold set's records, in ragas' shape too (when the traces may be ragas: a ragas
    dataset is its own gold set), with ``[gold.fields]`` applied (``skipped``: see ``iter_jsonl``)."""
    from ragscore.loaders.jsonl import iter_json_array

    records: Iterator[tuple[int, int, str, object, bytes | None]]
    ragas = False
    if document is not None:
        elements = iter_json_array(document, file.name)
        head = next(elements, None)
        records = chain([(*head, None)] if head else [], ((*record, None) for record in elements))
        ragas = head is not None and ragas_gold(head[3])
    else:
        first, lines = peek(lines)
        if trace_format in ("auto", "ragas") and is_csv_header(first):
            records = ((line, 1, "", row, None) for line, row in ragas_csv(file.name, lines))
            ragas = True
        else:
            records = iter_jsonl(file, part, parts, lines, skipped)
            if looks_json(first):
                with contextlib.suppress(InputError):
                    ragas = ragas_gold(decode_line(first, file.name, 1)[1])
    return gold_shape(mapping, ragas and trace_format in ("auto", "ragas")), records


def ragas_gold(record: object) -> bool:
    """Tell whether a gold record is a ragas sample (a ragas dataset as its own gold set)."""
    return type(record) is dict and "user_input" in record and "answerable" not in record


def gold_shape(mapping: tuple[tuple[str, str], ...], ragas: bool) -> GoldShape | None:
    """Build how gold records are read: ragas' shape and/or [gold.fields]; None for the contract as is."""
    pairs = (*RAGAS_GOLD, *mapping) if ragas else mapping
    return GoldShape(tuple((concept, parse_path(path)) for concept, path in pairs), ragas) if pairs else None
