"""Check gold sets and traces against the data contracts, listing every problem, not the first.

Errors are what ``ragscore`` itself would reject. Warnings are data that is valid but can never
score well (a claim substring too short to match, an answerable item with nothing to cite, ...).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from ragscore.errors import InputError
from ragscore.loaders.gold import GoldItem, parse_gold_item
from ragscore.loaders.jsonl import BOM, InputFile, array_or_lines, decode_line, iter_json_array
from ragscore.loaders.trace import Cites, parse_trace
from ragscore.metrics.text import MIN_NEEDLE, normalise
from ragscore.quoting import path_at_line_start, quote
from ragscore.settings import Settings

ERROR: Final = "error"
WARNING: Final = "warning"
_WHITE_SPACE_RE: Final = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding, with where it is."""

    source: str
    line: int | None
    column: int | None
    severity: str
    message: str

    def __str__(self) -> str:
        where = path_at_line_start(self.source) + (f":{self.line}" if self.line else "") + (f":{self.column}" if self.column else "")
        return f"{where}: {self.severity}: {self.message}"


def _error(exc: InputError) -> Problem:
    return Problem(exc.source, exc.line, exc.column, ERROR, exc.message)


def _records(file: InputFile, problems: list[Problem]) -> Iterator[tuple[int, int, str, object]]:
    """Yield every readable record; record each unreadable line and go on (a JSON array stops)."""
    document, lines = array_or_lines(file)
    if document is not None:
        try:
            yield from iter_json_array(document, file.name)
        except InputError as exc:
            problems.append(_error(exc))
        return
    try:
        for number, raw in enumerate(lines, 1):
            if number == 1:
                raw = raw.removeprefix(BOM)
            try:
                text, value = decode_line(raw, file.name, number)
            except InputError as exc:
                problems.append(_error(exc))
                continue
            if value is not ...:
                yield number, 1, text, value
    except InputError as exc:  # a line too long to read: the lines after it are not
        problems.append(_error(exc))


def _gold_warnings(item: GoldItem, obj: dict[str, object], refusals: frozenset[str]) -> list[str]:
    warnings = []
    substr = obj.get("gold_claim_substr")
    if isinstance(substr, list):
        for entry in substr:
            if isinstance(entry, str) and len(normalise(entry)) < MIN_NEEDLE:
                warnings.append(f'"gold_claim_substr" entry "{entry}" is shorter than {MIN_NEEDLE} characters and never matches')
    if item.answerable and not item.citations:
        warnings.append('answerable item without "gold_citations": a citation can only hit by citing nothing')
    claims = [obj.get("gold_claim")] + (substr if isinstance(substr, list) else [])
    for claim in claims:
        if item.answerable and isinstance(claim, str):
            found = next((r for r in sorted(refusals) if r and r in normalise(claim)), None)
            if found is not None:
                warnings.append(f'the gold claim of an answerable item contains the refusal phrase "{found}"')
                break
    return warnings


def validate(gold_spec: str, trace_spec: str | None, settings: Settings) -> list[Problem]:
    """Check a gold set (and traces, when given); return every problem found, in file order."""
    problems: list[Problem] = []
    gold_file = InputFile(gold_spec)
    refusals = settings.refusal_forms()
    items: dict[str, tuple[GoldItem, int]] = {}
    by_question: dict[str, list[str]] = {}
    folded: dict[str, list[str]] = {}
    try:
        for line, column, text, obj in _records(gold_file, problems):
            try:
                item = parse_gold_item(obj, gold_file.name, line, column, text, frozenset({"question"}))
            except InputError as exc:
                problems.append(_error(exc))
                continue
            if item.qid in items:
                first = items[item.qid][1]
                problems.append(Problem(gold_file.name, line, None, ERROR, f"duplicate qid {quote(item.qid)} (first defined on line {first})"))
                continue
            items[item.qid] = (item, line)
            if item.question is not None:
                by_question.setdefault(item.question, []).append(item.qid)
            folded.setdefault(_WHITE_SPACE_RE.sub("", normalise(item.qid)), []).append(item.qid)
            for message in _gold_warnings(item, obj, refusals):  # type: ignore[arg-type]
                problems.append(Problem(gold_file.name, line, None, WARNING, message))
    except InputError as exc:  # the file cannot be opened
        return [_error(exc)]
    if not items and not any(p.severity == ERROR for p in problems):
        problems.append(Problem(gold_file.name, None, None, ERROR, "no questions: a gold set needs at least one"))
    for qids in folded.values():
        if len(qids) > 1:
            line = items[qids[1]][1]
            listed = ", ".join(f'"{q}"' for q in qids)
            problems.append(Problem(gold_file.name, line, None, WARNING, f"qids differ only by case or white space: {listed}"))
    if trace_spec is not None:
        problems += _validate_traces(InputFile(trace_spec), items, by_question)
    return sorted(problems, key=lambda p: (p.source != gold_file.name, p.line or 0, p.column or 0))


def _validate_traces(file: InputFile, items: dict[str, tuple[GoldItem, int]], by_question: dict[str, list[str]]) -> list[Problem]:
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    try:
        records = list(_records(file, problems))
    except InputError as exc:
        return [_error(exc)]
    for line, _column, _text, obj in records:
        try:
            view = parse_trace(obj, file.name, line)
        except InputError as exc:
            problems.append(_error(exc))
            continue
        qid = view.qid
        if qid is None:
            matches = by_question.get(view.question or "", [])
            if len(matches) > 1:
                problems.append(Problem(file.name, line, None, ERROR,
                                        f'the question text matches {len(matches)} gold items; give the trace a "qid"'))
                continue
            qid = matches[0] if matches else None
        if qid is None or qid not in items:
            problems.append(Problem(file.name, line, None, WARNING, "the trace matches no gold question (ignored)"))
            continue
        if qid in seen:
            problems.append(Problem(file.name, line, None, WARNING,
                                    f"another trace for {quote(qid)} (line {seen[qid]}); the last one counts"))
        seen[qid] = line
        if view.cites is Cites.LIST:
            outside = [c for c in view.citations if c not in view.retrieved]
            if outside:
                problems.append(Problem(file.name, line, None, WARNING,
                                        f"cites ids that are not among the retrieved ids: {', '.join(outside)}"))
        elif view.cites is Cites.INVALID:
            problems.append(Problem(file.name, line, None, WARNING, f"{view.citations_from} is not a list of ids"))
    missing = [qid for qid in items if qid not in seen]
    if missing:
        listed = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        problems.append(Problem(file.name, None, None, WARNING,
                                f"{len(missing)} gold question(s) have no trace: {listed}"))
    return problems
