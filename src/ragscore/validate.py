"""Check gold sets and traces against the data contracts, listing every problem, not the first.

Errors are what ``ragscore`` itself would reject. Warnings are data that is valid but can never
score well (a claim substring too short to match, an answerable item with nothing to cite, ...).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import chain
from typing import IO, Final, NamedTuple

from ragscore.errors import InputError
from ragscore.external import ScoreColumns
from ragscore.finish import unreadable_hint
from ragscore.loaders.detect import detect, is_csv_header, looks_json
from ragscore.loaders.gold import GoldItem, parse_gold_item
from ragscore.loaders.gold_shapes import GoldShape, gold_shape, ragas_csv, ragas_gold
from ragscore.loaders.input_file import peek
from ragscore.loaders.jsonl import (
    BOM,
    InputFile,
    array_or_lines,
    decode_line,
    goes_on,
    iter_json_array,
    iter_values,
    key_index,
)
from ragscore.loaders.near_miss import GOLD_FIELDS, TRACE_FIELDS, key_note, missed_field
from ragscore.loaders.shapes import TraceShape, detect_lines, trace_shape
from ragscore.loaders.shards import Shards
from ragscore.loaders.trace import DOCUMENT_ID_PATHS, Cites, parse_trace
from ragscore.metrics.text import MIN_NEEDLE, normalise
from ragscore.quoting import path_at_line_start, quote
from ragscore.results import Unreadable
from ragscore.settings import Settings

ERROR: Final = "error"
WARNING: Final = "warning"
# Each problem has a kind, the id of its rule ("gold/duplicate-qid"): reports/sarif.py describes each one.
MALFORMED: Final = "input/malformed"
UNREADABLE: Final = "input/unreadable"
_WHITE_SPACE_RE: Final = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding, with where it is, its kind (its rule's id) and the record it is in (``record_key``; empty
    for a problem of the whole file, or of a stream of values that cannot be read)."""

    source: str
    line: int | None
    column: int | None
    severity: str
    message: str
    kind: str
    record: str = ""

    def __str__(self) -> str:
        where = (path_at_line_start(self.source) + (f":{self.line}" if self.line else "")
                 + (f":{self.column}" if self.column else ""))
        return f"{where}: {self.severity}: {self.message}"


def _error(exc: InputError, kind: str, record: str = "") -> Problem:
    return Problem(exc.source, exc.line, exc.column, ERROR, exc.message, kind, record)


def record_key(obj: object, text: str | bytes = "") -> str:
    """Name a record by what stays when lines are added above it: its qid (a non-empty string), else the
    sha256 of its text as written (of its value, when it has no text of its own: a CSV row, a translated
    record)."""
    if type(obj) is dict:
        qid = obj.get("qid")
        if isinstance(qid, str) and qid:
            return f"qid:{qid}"
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if not data.strip() and obj is not None:
        data = json.dumps(obj, sort_keys=True, default=repr).encode("utf-8")
    return "sha256:" + hashlib.sha256(data.strip()).hexdigest()


def _records(
    file: InputFile, problems: list[Problem], ragas_csv_ok: bool = False, arrays: bool = True
) -> Iterator[tuple[int, int, str, object]]:
    """Yield every readable record; record each unreadable line and go on (a JSON array, a CSV file stops).

    With ``ragas_csv_ok``, a file whose first line is a CSV header with ragas' columns is read as
    ragas' CSV export. Without ``arrays`` (traces), a JSON array, and the rest of a file from a line
    whose value goes on past its end, are read as a stream of values, as score reads them (the
    stream's first error stops it).
    """
    document, lines = array_or_lines(file) if arrays else (None, file.raw_lines())
    if document is not None:
        try:
            yield from iter_json_array(document, file.name)
        except InputError as exc:
            problems.append(_error(exc, MALFORMED))
        return
    if ragas_csv_ok:
        first, lines = peek(lines)
        if is_csv_header(first):
            try:
                for line, row in ragas_csv(file.name, lines):
                    yield line, 1, "", row
            except InputError as exc:
                problems.append(_error(exc, MALFORMED))
            return
    values = not arrays  # traces: a JSON array, or values that are not one a line, are read as score reads them
    if values:
        first, lines = peek(lines)
        if first.removeprefix(BOM).lstrip(b" \t\r\n")[:1] == b"[":
            yield from _values(lines, file.name, 1, problems)
            return
    try:
        for number, raw in enumerate(lines, 1):
            if number == 1:
                raw = raw.removeprefix(BOM)
            try:
                text, value = decode_line(raw, file.name, number)
            except InputError as exc:
                if values and goes_on(raw, exc):  # the rest is a stream of values: its first error stops it
                    yield from _values(chain((raw,), lines), file.name, number, problems, False)
                    return
                problems.append(_error(exc, MALFORMED, record_key(None, raw)))
                continue
            if value is not ...:
                yield number, 1, text, value
    except InputError as exc:  # a line too long to read: the lines after it are not
        problems.append(_error(exc, UNREADABLE))


def _values(lines: Iterator[bytes], source: str, line: int, problems: list[Problem], array: bool | None = None
            ) -> Iterator[tuple[int, int, str, object]]:
    """Yield the records of a stream of JSON values (see ``iter_values``); its first error is a problem and stops it."""
    try:
        yield from iter_values(lines, source, line, array)
    except InputError as exc:
        problems.append(_error(exc, MALFORMED))


class _NearMisses:
    """The keys of one file that are near misses of a contract field: each key once, at its first record, counted."""

    def __init__(self, source: str, known: frozenset[str], what: str, severity: str) -> None:
        self.source, self.known, self.what, self.severity = source, known, what, severity
        self.verdicts: dict[str, str] = {}  # key -> the field it is meant to be
        self.found: dict[str, tuple[int, int | None, int]] = {}  # key -> (line, column, records)
        self.records: dict[str, str] = {}  # key -> the first record that has it (record_key)

    def check(self, obj: object, line: int, column: int, text: str) -> None:
        """Look at one record's keys."""
        if type(obj) is not dict:
            return
        for key in obj:
            suggestion = missed_field(key, obj, self.known)  # None too when the record has the field
            if suggestion is None:
                continue
            self.verdicts[key] = suggestion
            if key in self.found:
                first_line, first_column, records = self.found[key]
                self.found[key] = (first_line, first_column, records + 1)
            else:
                self.found[key] = (*_position(line, column, text, key_index(text, key)), 1)
                self.records[key] = record_key(obj, text)

    def problems(self) -> list[Problem]:
        """One problem per near-miss key, at the first record that has it."""
        out = []
        for key, (line, column, records) in self.found.items():
            more = records - 1
            tail = f" (and {more} more record{'s' * (more != 1)})" if more else ""
            message = key_note(key, self.verdicts[key], self.what) + tail
            out.append(Problem(self.source, line, column, self.severity, message, "contract/near-miss-field",
                               self.records[key]))
        return out


def _position(line: int, column: int, text: str, index: int | None) -> tuple[int, int | None]:
    """Turn an index into a record's text into a line and column (the record's own line without one)."""
    if index is None:
        return line, None
    before = text[:index]
    newlines = before.count("\n")
    return line + newlines, (index - before.rfind("\n") if newlines else column + index)


_NOTHING_TO_CITE: Final = "gold/nothing-to-cite"


def _gold_warnings(
    item: GoldItem, obj: dict[str, object], refusals: frozenset[str], patterns: tuple[re.Pattern[str], ...] = ()
) -> list[tuple[str, str]]:
    """Each warning of a gold item: its kind and its message."""
    warnings = []
    substr = obj.get("gold_claim_substr")
    if isinstance(substr, list):
        for entry in substr:
            if isinstance(entry, str) and len(normalise(entry)) < MIN_NEEDLE:
                warnings.append(("gold/short-claim-substring", f'"gold_claim_substr" entry "{entry}" is shorter than '
                                 f"{MIN_NEEDLE} characters and never matches"))
    if item.answerable and not item.citations and "gold_spans" in obj:
        warnings.append((_NOTHING_TO_CITE, 'answerable item with "gold_spans" and no "gold_citations": chr and '
                         "precision judge citations by id, so a citation can only hit by citing nothing "
                         "(cited_evidence_recall judges them by the text they cover)"))
    elif item.answerable and not item.citations:
        warnings.append((_NOTHING_TO_CITE, 'answerable item without "gold_citations": a citation can only hit by '
                         "citing nothing"))
    claims = [obj.get("gold_claim")] + (substr if isinstance(substr, list) else [])
    for claim in claims:
        if item.answerable and isinstance(claim, str):
            text = normalise(claim)
            found = next((r for r in sorted(refusals) if r and r in text), None)
            if found is not None:
                warnings.append(("gold/refusal-in-claim",
                                 f'the gold claim of an answerable item contains the refusal phrase "{found}"'))
                break
            matching = next((p for p in patterns if p.search(text.strip()) is not None), None)
            if matching is not None:
                warnings.append(("gold/refusal-in-claim", "the gold claim of an answerable item matches the refusal "
                                 f"pattern {quote(matching.pattern)}"))
                break
    return warnings


def validate(
    gold_spec: str, trace_spec: str | Shards | None, settings: Settings, lenient: bool = False
) -> list[Problem]:
    """Check a gold set (and traces, when given); return every problem found, in file order.

    A key that is a near miss of a contract field (``gold_citation``) is an error, or with
    ``lenient`` a warning.
    """
    problems: list[Problem] = []
    gold_file = InputFile(gold_spec)
    near_misses = _NearMisses(gold_file.name, GOLD_FIELDS, "gold", WARNING if lenient else ERROR)
    refusals, patterns = settings.refusal_forms(), settings.refusal_regexes()
    items: dict[str, tuple[GoldItem, int]] = {}
    by_question: dict[str, list[str]] = {}
    folded: dict[str, list[str]] = {}
    may_be_ragas = settings.trace_format in ("auto", "ragas")
    shape: GoldShape | None = None
    try:
        for n, (line, column, text, obj) in enumerate(_records(gold_file, problems, may_be_ragas)):
            if n == 0:
                shape = gold_shape(settings.gold_fields, may_be_ragas and ragas_gold(obj))
            written = obj, text  # the record as written, which names it (record_key)
            if shape is None:
                near_misses.check(obj, line, column, text)
            else:
                obj, text = shape.translate(obj), ""
            try:
                item = parse_gold_item(obj, gold_file.name, line, column, text, frozenset({"question"}))
            except InputError as exc:
                problems.append(_error(exc if shape is None else shape.rename(exc), "gold/invalid-item",
                                       record_key(*written)))
                continue
            record = f"qid:{item.qid}"
            if item.qid in items:
                first = items[item.qid][1]
                message = f"duplicate qid {quote(item.qid)} (first defined on line {first})"
                problems.append(Problem(gold_file.name, line, None, ERROR, message, "gold/duplicate-qid", record))
                continue
            items[item.qid] = (item, line)
            if item.question is not None:
                by_question.setdefault(item.question, []).append(item.qid)
            folded.setdefault(_WHITE_SPACE_RE.sub("", normalise(item.qid)), []).append(item.qid)
            assert type(obj) is dict  # parse_gold_item took it: a JSON object
            for kind, message in _gold_warnings(item, obj, refusals, patterns):
                if shape is not None and shape.ragas and kind == _NOTHING_TO_CITE:
                    continue  # ragas samples cite nothing: their reference contexts are relevance, not citations
                problems.append(Problem(gold_file.name, line, None, WARNING, message, kind, record))
    except InputError as exc:  # the file cannot be opened
        return [_error(exc, UNREADABLE)]
    problems += near_misses.problems()
    if not items and not any(p.severity == ERROR for p in problems):
        problems.append(Problem(gold_file.name, None, None, ERROR, "no questions: a gold set needs at least one",
                                "gold/empty"))
    for qids in folded.values():
        if len(qids) > 1:
            line = items[qids[1]][1]
            listed = ", ".join(f'"{q}"' for q in qids)
            problems.append(Problem(gold_file.name, line, None, WARNING, f"qids differ only by case or white space: "
                                    f"{listed}", "gold/similar-qids", f"qid:{qids[1]}"))
    trace_file = None if trace_spec is None else InputFile(trace_spec)
    if trace_file is not None:
        problems += _validate_traces(trace_file, items, by_question, lenient, settings)
    problems.sort(key=lambda p: (p.source != gold_file.name, p.line or 0, p.column or 0))
    if trace_file is not None and isinstance(trace_spec, Shards):  # each at its own file's line
        problems = [_located(p, trace_file) for p in problems]
    return problems


def _line_of(file: InputFile, line: int) -> str:
    """Name a line of the traces: "line 3", or of several files, "b.jsonl:2"."""
    return file.where(line) if isinstance(file.spec, Shards) else f"line {line}"


def _located(problem: Problem, traces: InputFile) -> Problem:
    if problem.source != traces.name or problem.line is None:
        return problem
    source, line = traces.locate(problem.line)
    return replace(problem, source=source, line=line)


def _trace_records(
    file: InputFile, settings: Settings, problems: list[Problem]
) -> tuple[TraceShape | None, list[tuple[int, int, str, object]]]:
    """Read every trace record in its format ("auto": the first record's); spans are assembled into
    one record per trace, and a CSV export is read as a whole (its first error stops it)."""
    fmt = settings.trace_format
    if fmt in ("auto", "ragas"):  # validate holds every record anyway: the file is read once, here
        raw = bytearray()  # the bytes alone: a list of lines kept ~40 bytes a line, millions of blank ones too
        try:
            for piece in file.raw_lines():
                raw += piece
        except InputError as exc:  # a file that cannot be read (of several: the lines before it are checked)
            if not raw:
                raise
            problems.append(_error(exc, UNREADABLE))
        first, lines = peek(iter(io.BytesIO(raw)))
        fmt = detect_lines(first, lines)[0] if fmt == "auto" else fmt  # the first record, as score reads it
        csv_input = fmt == "ragas" and not looks_json(first)
        if csv_input and isinstance(file.spec, Shards):  # each file's header would read as a record
            problems.append(Problem(file.spec.paths[0], None, None, ERROR, "a CSV file cannot be read as one of "
                                    "several trace files", UNREADABLE))
            return None, []
        file = _Lines(file, raw)
    else:
        csv_input = False
    shape = trace_shape(fmt, settings.trace_fields, csv_input)
    if shape is not None and (shape.spans or shape.csv):
        records: list[tuple[int, int, str, object]] = []
        try:
            for line, column, _record, obj, _ in shape.records(file, 0, 1):
                records.append((line, column, "", obj))
        except InputError as exc:
            problems.append(_error(exc, MALFORMED))
        return shape, records
    return shape, list(_records(file, problems, arrays=False))


class _Lines(InputFile):
    """An input whose bytes were read already (standard input cannot be read twice)."""

    def __init__(self, file: InputFile, data: bytearray) -> None:
        super().__init__(file.spec, hashed=False)
        self.starts, self.members = file.starts, file.members  # several files: where each one starts
        self.name, self._data = file.name, data

    def _open(self) -> IO[bytes]:
        return io.BytesIO(self._data)


class _Trace(NamedTuple):
    """A trace record, to place its problems."""

    source: str
    line: int
    record: object
    text: str
    qid: str | None

    def problem(self, severity: str, message: str, kind: str) -> Problem:
        """A problem of this trace, at its line, named by its qid (else by its text) wherever it moves."""
        named = f"qid:{self.qid}" if self.qid else record_key(self.record, self.text)
        return Problem(self.source, self.line, None, severity, message, kind, named)


def _validate_traces(
    file: InputFile, items: dict[str, tuple[GoldItem, int]], by_question: dict[str, list[str]], lenient: bool,
    settings: Settings,
) -> list[Problem]:
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    near_misses = _NearMisses(file.name, TRACE_FIELDS, "trace", WARNING if lenient else ERROR)
    keys: dict[str, list[str]] = {"qid": [], "question": []}  # the first keys that joined nothing, by kind
    try:
        shape, records = _trace_records(file, settings, problems)
    except InputError as exc:
        return [_error(exc, UNREADABLE)]
    bare: list[tuple[int, object]] = []  # traces with nothing ragscore reads, and the record as written
    for line, column, text, obj in records:
        record = obj
        try:
            if shape is None:
                near_misses.check(obj, line, column, text)
            elif not (shape.spans or shape.csv):
                obj = shape.translate(obj, file.name, line)
            view = parse_trace(obj, file.name, line, DOCUMENT_ID_PATHS if shape is None else shape.document_id)
            if type(obj) is dict and obj.get("scores") is not None:  # checked as score checks it
                ScoreColumns(1).put_trace(0, obj["scores"], file.name, line)
        except InputError as exc:
            problems.append(_error(exc, "trace/invalid-record", record_key(record, text)))
            continue
        at = _Trace(file.name, line, record, text, view.qid)
        if view.claim_from is None and view.refused_from is None:
            if type(obj) is dict and not any(key in obj for key in ("retrieved_ids", "chunks", "scores", "tool_calls")):
                bare.append((line, record))
            problems.append(at.problem(WARNING, "no claim or refusal field: scored as an empty answer"
                                       + (f" (read as {shape.name})" if shape is not None else ""), "trace/no-answer"))
        if view.refused_bad:
            problems.append(at.problem(WARNING, '"refused" is neither true nor false: read as absent (the claim '
                                       "decides)", "trace/invalid-refused"))
        if view.retrieved_bad:
            problems.append(at.problem(WARNING, "the retrieved list has an entry that gives no id: read as nothing "
                                       "retrieved", "trace/retrieved-without-id"))
        qid = view.qid
        if qid is None:
            matches = by_question.get(view.question or "", [])
            if len(matches) > 1:
                problems.append(at.problem(ERROR, f"the question text matches {len(matches)} gold items; give the "
                                           'trace a "qid"', "trace/ambiguous-question"))
                continue
            qid = matches[0] if matches else None
        if qid is None or qid not in items:
            kind, key = ("qid", view.qid) if view.qid is not None else ("question", view.question)
            if len(keys[kind]) < 2 and key is not None and key not in keys[kind]:
                keys[kind].append(key)
            problems.append(at.problem(WARNING, "the trace matches no gold question (ignored)", "trace/unmatched"))
            continue
        if qid in seen:
            problems.append(at.problem(WARNING, f"another trace for {quote(qid)} ({_line_of(file, seen[qid])}); the "
                                       "last one counts", "trace/duplicate"))
        seen[qid] = line
        if view.cites is Cites.LIST:
            outside = [c for c in view.citations if c not in view.retrieved]
            if outside:
                problems.append(at.problem(WARNING, "cites ids that are not among the retrieved ids: "
                                           + ", ".join(outside), "trace/cites-unretrieved"))
        elif view.cites is Cites.INVALID:
            problems.append(at.problem(WARNING, f"{view.citations_from} is not a list of ids",
                                       "trace/invalid-citations"))
    if len(bare) * 2 > len(records):  # as score refuses it
        line, record = bare[0]
        fmt = "native" if shape is None else shape.name
        example = Unreadable(tuple(record) if type(record) is dict else (), True, detect(record))
        problems.append(Problem(file.name, line, None, ERROR, f"{len(bare):,} of {len(records):,} traces have nothing "
                                "ragscore reads (no claim, refusal, retrieved list, scores or tool calls; read as "
                                f"{fmt} format): " + unreadable_hint(example, fmt), "trace/nothing-read",
                                record_key(record)))
    problems += near_misses.problems()
    if items and not seen and (keys["qid"] or keys["question"] or not any(p.severity == ERROR for p in problems)):
        problems.append(Problem(file.name, None, None, ERROR, _nothing_joins(keys, items, by_question),
                                "trace/nothing-joins"))
    missing = [qid for qid in items if qid not in seen]
    if missing:
        listed = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        problems.append(Problem(file.name, None, None, WARNING,
                                f"{len(missing)} gold question(s) have no trace: {listed}", "trace/untraced-questions"))
    return problems


def _nothing_joins(
    keys: dict[str, list[str]], items: dict[str, tuple[GoldItem, int]], by_question: dict[str, list[str]]
) -> str:
    """Say that no trace joins a gold question, showing the first keys of both sides, by what the traces join on."""
    def first(values: list[str]) -> str:
        return "first: " + ", ".join(quote(v) for v in values[:2])

    if not keys["qid"] and not keys["question"]:
        return "no trace joins a gold question: the file holds no trace"
    sides = []
    if keys["qid"]:
        sides.append(f"the traces' qids ({first(keys['qid'])}) match none of the gold set's ({first(list(items))})")
    if keys["question"]:
        gold = f"({first(list(by_question))})" if by_question else "(it has none)"
        sides.append(f"the traces' question texts ({first(keys['question'])}) match none of the gold set's {gold}")
    return "no trace joins a gold question: " + "; ".join(sides)
