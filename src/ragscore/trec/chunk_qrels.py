"""Qrels for one chunking (``ragscore qrels``): the chunks that hold each question's gold spans, with their grades,
as TREC qrels, so that ``ragscore trec`` (and trec_eval, pytrec_eval, ranx, ...) score a run of its chunk ids.

A chunk is relevant by the rule ``score`` judges a trace's chunk ids by (``metrics.spans.relevant_chunks``):
it holds a whole gold span it overlaps, or at least half of its characters are gold characters; with
``min_overlap`` C, at least C of its characters are gold characters. Its grade is that of the gold span it
shares most characters with.

The lines are ``qid 0 chunk_id grade``: the questions in the gold set's order, each question's chunks by
document id, then start, end and chunk id (code point order). Only answerable questions with gold spans get
lines; those no chunk qualifies for are listed in a note, never dropped unsaid. An id a line cannot hold as it
is, or should not, is an error at its line: white space (TREC files are split into fields at it), a control
character, what GitHub Actions reads as a command in a line of output (a qid that starts with "::", "##[").
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from ragscore.errors import InputError, UsageError
from ragscore.quoting import has_unsafe, quote

# A note names at most this many questions (and documents).
_NAMED = 5


def id_problem(ident: str) -> str | None:
    """What keeps an id from being a field of a TREC file, as it is (None: nothing)."""
    if ident.split() != [ident]:  # Python's white space: C's (trec_eval's) and more, which Python tools split at
        return "holds white space, at which TREC files are split into fields"
    if "##[" in ident:
        return "holds two number signs before a bracket, which GitHub Actions reads as a command in any line"
    if has_unsafe(ident):
        return "holds a control character, which a qrels file does not hold"
    return None


def _qid_problem(qid: str) -> str | None:
    if qid.startswith("::"):
        return 'starts with "::": a qrels line starts with its qid, and GitHub Actions reads such a line as a command'
    problem = id_problem(qid)
    return problem if problem is None else f'{problem} (an item without a "qid" is known by its question)'


@dataclass(frozen=True)
class ChunkQrels:
    """The qrels of one chunking: each judged question's relevant chunks and their grades, and what got no line."""

    gold: str  # the gold file's name
    chunks: str  # the chunks file's name
    min_overlap: int | None
    topics: dict[str, dict[str, int]] = field(repr=False)  # qid -> chunk id -> grade, in the order written
    questions: int = 0  # the gold set's questions
    unanswerable: int = 0
    without_spans: int = 0  # answerable questions without gold spans, or whose spans are all empty
    unmatched: tuple[str, ...] = ()  # answerable questions with gold spans that no chunk qualifies for
    unchunked: tuple[str, ...] = ()  # the documents of their gold spans that the chunking has no chunk of

    @property
    def judgments(self) -> int:
        """How many lines the qrels hold."""
        return sum(map(len, self.topics.values()))

    def lines(self) -> Iterator[str]:
        """Yield the qrels, a line at a time: ``qid 0 chunk_id grade``."""
        for qid, judged in self.topics.items():
            for chunk, grade in judged.items():
                yield f"{qid} 0 {chunk} {grade}\n"

    @property
    def text(self) -> str:
        """The qrels file's text."""
        return "".join(self.lines())

    def notes(self) -> list[str]:
        """How many questions got lines and how many lines, what got none and why."""
        judged = len(self.topics)
        without = "answerable without gold_spans (or with empty ones)"
        left = [f"{count:,} {what}" for count, what in ((self.unanswerable, "unanswerable"),
                                                          (self.without_spans, without)) if count]
        notes = [f"qrels: {self.judgments:,} relevant chunk{'s' * (self.judgments != 1)} of {judged:,} "
                 f"question{'s' * (judged != 1)}" + (f"; no lines for {' and '.join(left)}" if left else "")]
        if self.unmatched:
            count = len(self.unmatched)
            lower = ("a lower --min-overlap" if self.min_overlap is not None and self.min_overlap > 1
                     else "--min-overlap 1" if self.min_overlap is None else "")
            hint = f"; {lower} judges a chunk by fewer gold characters" if lower else ""
            notes.append(f"qrels: {count:,} answerable question{'s' * (count != 1)} with gold spans "
                         f"{'have' if count != 1 else 'has'} no chunk that qualifies, so no line (a run that ranks "
                         f"{'them' if count != 1 else 'it'} is unjudged there){hint}: {_listed(self.unmatched)}")
            if self.unchunked:
                docs = len(self.unchunked)
                notes.append(f"qrels: {docs:,} document{'s' * (docs != 1)} of their gold spans "
                             f"{'have' if docs != 1 else 'has'} no chunk in {self.chunks}: {_listed(self.unchunked)}")
        return notes


def _listed(ids: tuple[str, ...]) -> str:
    shown = ", ".join(map(quote, ids[:_NAMED]))
    return shown if len(ids) <= _NAMED else f"e.g. {shown}"


def chunk_qrels(gold: str | os.PathLike[str], chunks: str | os.PathLike[str],
                min_overlap: int | None = None) -> ChunkQrels:
    """Judge the chunks of a chunking against every answerable question's gold spans; raise ``InputError`` at the
    first problem of either file, or when no question gets a line."""
    from ragscore.loaders.chunks import Chunk, ChunksError, load_chunks
    from ragscore.loaders.gold import KEEP_SPANS, line_of, load_gold
    from ragscore.loaders.jsonl import InputFile
    from ragscore.metrics.spans import relevant_chunks

    if min_overlap is not None and (isinstance(min_overlap, bool) or not isinstance(min_overlap, int)
                                    or min_overlap < 1):
        raise UsageError(f"min_overlap: expected a positive integer or None, got {min_overlap!r}")
    gold_spec, chunks_spec = os.fspath(gold), os.fspath(chunks)
    if gold_spec == chunks_spec == "-":
        raise UsageError("only one of the gold set and the chunks can be '-' (standard input)")
    gold_file, chunks_file = InputFile(gold_spec), InputFile(chunks_spec)
    gold_set = load_gold(gold_file, keep=frozenset({KEEP_SPANS}))
    index = load_chunks(chunks_file, id_problem)
    chunk_of = {ident: Chunk(ident, *span) for ident, span in index.spans.items()}
    documents = {chunk.doc for chunk in chunk_of.values()}
    topics: dict[str, dict[str, int]] = {}
    unanswerable = without_spans = 0
    unmatched: list[str] = []
    unchunked: dict[str, None] = {}
    for position, item in enumerate(gold_set.items):
        if not item.answerable:
            unanswerable += 1
            continue
        spans = item.spans
        if not spans or all(end <= start for _, start, end, _ in spans):  # no gold character to hold
            without_spans += 1
            continue
        problem = _qid_problem(item.qid)
        if problem is not None:
            packed = gold_set.places[position]
            raise InputError(gold_file.name, f"qid {quote(item.qid)} {problem}", line_of(packed), packed & 0xFFFFFFFF)
        relevant = relevant_chunks(spans, index, min_overlap)
        if not relevant:
            unmatched.append(item.qid)
            unchunked.update((doc, None) for doc, *_ in spans if doc not in documents)
            continue
        order = sorted(relevant, key=lambda ident: (chunk_of[ident].doc, chunk_of[ident].start, chunk_of[ident].end,
                                                    ident))
        topics[item.qid] = {ident: relevant[ident] for ident in order}
    if not topics:
        if not unmatched:
            raise InputError(gold_file.name, 'no answerable question has "gold_spans": no qrels to write (ragscore '
                                             "qrels judges chunks by the gold spans of documents)")
        count, docs = len(unmatched), len(unchunked)
        missing = (f" ({docs:,} of their documents {'have' if docs != 1 else 'has'} no chunk: "
                   f"{_listed(tuple(unchunked))})" if docs else "")
        raise ChunksError(chunks_file.name, f"no chunk qualifies for the gold spans of "
                                            f"{'any of the ' if count != 1 else 'the '}{count:,} answerable "
                                            f"question{'s' * (count != 1)} that {'have' if count != 1 else 'has'} "
                                            f"them{missing}: are these chunks of the same documents, their offsets "
                                            "into the same texts?")
    return ChunkQrels(gold_file.name, chunks_file.name, min_overlap, topics, len(gold_set.items), unanswerable,
                      without_spans, tuple(unmatched), tuple(unchunked))
