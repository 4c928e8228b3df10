"""TREC qrels, BEIR qrels (TSV) and TREC run files, read as trec_eval reads them.

A run's ranking of a topic is its documents by score descending, ties broken by docno
descending (byte-wise), whatever their rank column says: trec_eval's order. A docno given twice
for one topic is an error, as in trec_eval.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from ragscore.errors import InputError
from ragscore.loaders.input_file import BOM, InputFile, decode_text


@dataclass(slots=True)
class Qrels:
    """Judgments by topic: docno -> relevance grade (negative grades are judged, never relevant)."""

    source: str
    topics: dict[str, dict[str, int]] = field(default_factory=dict)
    sha256: str = ""


@dataclass(slots=True)
class Run:
    """A run's ranked documents by topic, in trec_eval's order."""

    source: str
    name: str  # the run tag of the first line (trec_eval's "runid")
    topics: dict[str, list[str]] = field(default_factory=dict)
    sha256: str = ""


def _lines(file: InputFile) -> Iterator[tuple[int, list[str]]]:
    """Yield (line number, white-space separated fields) of every non-blank line."""
    for number, raw in enumerate(file.raw_lines(), 1):
        if number == 1:
            raw = raw.removeprefix(BOM)
        text = decode_text(raw, file.name, number)
        fields = text.split()
        if fields:
            yield number, fields


def _grade(text: str, source: str, line: int, column: int) -> int:
    try:
        return int(text)
    except ValueError:
        try:
            value = float(text)  # BEIR writes scores such as "1.0"; a grade is an integer
        except ValueError:
            value = math.nan
        if value == value and value.is_integer() and abs(value) < 1e15:
            return int(value)
        raise InputError(source, f"expected an integer relevance grade, got {text!r}", line, column) from None


def read_qrels(spec: str) -> Qrels:
    """Read TREC qrels (``qid iter docno rel``) or BEIR qrels (``query-id corpus-id score``, tab
    separated, header optional); a docno judged twice for a topic keeps the last grade."""
    file = InputFile(spec)
    qrels = Qrels(file.name)
    width = None
    for line, fields in _lines(file):
        if width is None:
            width = len(fields)
            if width == 3 and not _is_number(fields[2]):  # BEIR's header: query-id corpus-id score
                continue
            if width not in (3, 4):
                raise InputError(file.name, f"expected TREC qrels (qid iter docno rel) or BEIR qrels (query-id "
                                            f"corpus-id score), got {len(fields)} fields", line)
        if len(fields) != width:
            raise InputError(file.name, f"expected {width} fields as on the first line, got {len(fields)}", line)
        qid, docno, grade = (fields[0], fields[2], fields[3]) if width == 4 else fields
        qrels.topics.setdefault(qid, {})[docno] = _grade(grade, file.name, line, 4 if width == 4 else 3)
    if width is None:
        raise InputError(file.name, "no judgments: qrels need at least one line")
    qrels.sha256 = file.sha256
    return qrels


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_run(spec: str, max_docs: int | None = None) -> Run:
    """Read a TREC run (``qid iter docno rank score run_tag``) and rank each topic as trec_eval does;
    ``max_docs`` keeps the first so many of each ranking (trec_eval's -M)."""
    file = InputFile(spec)
    scored: dict[str, dict[str, float]] = {}
    name = None
    for line, fields in _lines(file):
        if len(fields) < 6:  # trec_eval ignores what follows the run tag
            raise InputError(file.name, f"expected a TREC run line (qid iter docno rank score run_tag), got "
                                        f"{len(fields)} fields", line)
        qid, _iter, docno, _rank, score_text, tag = fields[:6]
        try:
            score = float(score_text)
        except ValueError:
            raise InputError(file.name, f"expected a number as the score, got {score_text!r}", line, 5) from None
        if not math.isfinite(score):
            raise InputError(file.name, f"expected a finite score, got {score_text!r}", line, 5)
        if name is None:
            name = tag
        docs = scored.setdefault(qid, {})
        if docno in docs:
            raise InputError(file.name, f"docno {docno!r} is ranked twice for topic {qid!r} (trec_eval refuses it too)",
                             line, 3)
        docs[docno] = score
    run = Run(file.name, name or "")
    for qid, docs in scored.items():
        # Score descending, then docno descending, byte-wise (trec_eval's qsort comparison).
        ranking = sorted(docs, key=lambda doc: doc.encode("utf-8", "surrogateescape"), reverse=True)
        ranking.sort(key=docs.__getitem__, reverse=True)
        run.topics[qid] = ranking[:max_docs] if max_docs is not None else ranking
    run.sha256 = file.sha256
    return run
