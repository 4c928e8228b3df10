"""TREC qrels, BEIR qrels (TSV) and TREC run files, read as trec_eval reads them.

A run's ranking of a topic is its documents by score descending, ties broken by docno
descending (byte-wise), whatever their rank column says: trec_eval's order. A docno given twice
for one topic is an error, as in trec_eval.

Numbers are read as trec_eval reads them (a grade with C's atol, a score with atof), when it
reads the whole field: a field it would read only the start of is an error, not another number
(trec_eval reads the score 1_0 and 1,5 as 1, the grade 1e3 as 1; Python's float and int would
read 1_0 as 10). BEIR's grade 1.0 is 1 to both. A grade past a C long (atol clamps it) and a
score that is not finite are errors too.

Two readers give the same result. The fast one reads a regular file in blocks of whole lines
and splits each block at once (a column of the tokens is a slice of them); it reads a file only
while every line has the expected number of fields and every value parses. Anything else
(a blank line, a missing or extra field, a bad score, a repeated docno, bytes that are not
UTF-8) sends the file to the line-by-line reader, from its start, whose errors name the line
and column.
"""

from __future__ import annotations

import gc
import hashlib
import math
import multiprocessing
import os
import re
import signal
import threading
from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from itertools import compress, count, groupby, islice
from multiprocessing.connection import Connection
from operator import eq, itemgetter
from typing import IO, Final, TypeVar

from ragscore.errors import InputError
from ragscore.loaders.input_file import BOM, MAX_LINE_BYTES, InputFile, decode_text, utf16_encoding
from ragscore.parallel import available_cores
from ragscore.quoting import quote
from ragscore.trec.measures import LONG_MAX, c_double, c_long

T = TypeVar("T")

# The fast reader splits blocks of about this many bytes (whole lines): small enough that a
# block's tokens stay in the processor's cache.
_BLOCK_BYTES: Final = 1 << 16
# trec_eval splits a line at C's white space (isspace in the C locale); Python's str.split also at
# these, which would cut a docno "doc\u00a0one" in two or drop the end of a run tag.
_PY_ONLY_SPACE_RE: Final = re.compile("[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_C_FIELD_RE: Final = re.compile(r"[^ \t\n\r\f\v]+")
# Put after each line's last token before a block is split: a token of its own (it is never in
# the text the fast reader reads), so that every line's fields are checked in one slice.
_END: Final = "\x01"
_MARKED_END: Final = " \x01\n"
# A run file this large is read by two processes (where two cores are free), each half of it.
_PARALLEL_MIN_BYTES: Final = 32 << 20
# How far past the middle of the file a topic's first line is looked for.
_SPLIT_WINDOW_BYTES: Final = 4 << 20


@dataclass(slots=True)
class Qrels:
    """Judgments by topic: docno -> relevance grade (negative grades are judged, never relevant)."""

    source: str
    topics: dict[str, dict[str, int]] = field(default_factory=dict)
    sha256: str = ""


class Rankings(Mapping[str, list[str]]):
    """A run's rankings by topic: each one's docnos in trec_eval's order, a new list at each read.

    A ranking is held as one string (its docnos, a line each) until it is read: a run of millions
    of lines costs a few large strings, not millions of objects, and a reader (``evaluate``) gets
    docnos fresh in the processor's cache.
    """

    __slots__ = ("_text",)

    def __init__(self, text: dict[str, str] | None = None) -> None:
        """Hold rankings given as text: topic -> its docnos in order, joined by newlines (none is empty)."""
        self._text: dict[str, str] = text if text is not None else {}

    def __getitem__(self, qid: str) -> list[str]:
        return self._text[qid].split("\n")

    def __contains__(self, qid: object) -> bool:
        return qid in self._text

    def __iter__(self) -> Iterator[str]:
        return iter(self._text)

    def __len__(self) -> int:
        return len(self._text)

    def __repr__(self) -> str:
        return f"Rankings({len(self._text)} topics)"


@dataclass(slots=True)
class Run:
    """A run's ranked documents by topic, in trec_eval's order."""

    source: str
    name: str  # the run tag of the first line (trec_eval's "runid")
    topics: Mapping[str, list[str]] = field(default_factory=Rankings)
    sha256: str = ""


class _NotFast(Exception):
    """The fast reader cannot read this input exactly as the line-by-line reader does."""


def _lines(file: InputFile) -> Iterator[tuple[int, list[str], str]]:
    """Yield (line number, white-space separated fields, the line) of every non-blank line."""
    for number, raw in enumerate(file.raw_lines(), 1):
        if number == 1:
            raw = raw.removeprefix(BOM)
        text = decode_text(raw, file.name, number)
        fields = text.split() if _PY_ONLY_SPACE_RE.search(text) is None else _C_FIELD_RE.findall(text)
        if fields:
            yield number, fields, text


def _column(text: str, index: int) -> int:
    """The column (from 1, in characters) where field ``index`` (from 0) of a white-space separated line starts."""
    for n, match in enumerate(_C_FIELD_RE.finditer(text)):
        if n == index:
            return match.start() + 1
    return len(text) + 1


def _blocks(file: InputFile, update: Callable[[bytes], object]) -> Iterator[str]:
    """Yield the decompressed text of a regular file in blocks of whole lines (the last one ended with a
    newline), hashing every byte read; raise _NotFast on what the line-by-line reader must read."""
    stream: IO[bytes] = file._open()  # InputFile's own reading (decompressed, transcoded), in blocks
    try:
        yield from _text_blocks(lambda: file._read(stream), update, True)
    finally:
        file._close(stream)


def _text_blocks(read: Callable[[], bytes], update: Callable[[bytes], object], first: bool) -> Iterator[str]:
    """Yield what ``read`` returns (until it returns nothing) in decoded blocks of whole lines, a newline
    after the last one; ``first``: the start of the file, where a byte-order mark is left out."""
    rest = b""
    while chunk := read():
        update(chunk)
        if first:
            chunk = chunk.removeprefix(BOM)
            first = False
        end = chunk.rfind(b"\n") + 1
        if not end:
            rest += chunk
            if len(rest) > MAX_LINE_BYTES:
                raise _NotFast
            continue
        data, rest = rest + chunk[:end], chunk[end:]
        yield from _split_block(data)
    if rest:
        yield from _split_block(rest + b"\n")


def _split_block(data: bytes) -> Iterator[str]:
    """Cut whole lines into blocks of about _BLOCK_BYTES, decoded."""
    start = 0
    size = len(data)
    while start < size:
        stop = data.rfind(b"\n", start, start + _BLOCK_BYTES) + 1 if start + _BLOCK_BYTES < size else size
        if stop <= start:  # one line longer than a block
            stop = data.find(b"\n", start) + 1
        try:
            text = data[start:stop].decode("utf-8")
        except UnicodeDecodeError:
            raise _NotFast from None
        if (not text.isascii() and _PY_ONLY_SPACE_RE.search(text)) or any(c in text for c in "\x1c\x1d\x1e\x1f"):
            raise _NotFast  # white space that str.split cuts at and trec_eval does not: the line reader's rule
        yield text
        start = stop


def _fields(block: str, width: int) -> list[str]:
    """Split a block of lines of exactly ``width`` fields each into its tokens, each line's followed by _END;
    raise _NotFast when a line is blank or has another number of fields."""
    if _END in block:
        raise _NotFast
    tokens = block.replace("\n", _MARKED_END).split()
    lines, odd = divmod(len(tokens), width + 1)
    # The ends are tokens of their own, one a line: every line has its width when they all fall in place.
    if odd or tokens[width::width + 1].count(_END) != lines:
        raise _NotFast
    return tokens


def _fast(read: Callable[[InputFile], T], file: InputFile) -> T | None:
    """Read with the fast reader, or return None when the line-by-line reader must (from the start)."""
    if file.spec == "-" or not file.rereadable:
        return None
    enabled = gc.isenabled()
    gc.disable()  # millions of short-lived lists and strings, no cycle among them
    try:
        return read(file)
    except _NotFast:
        return None
    finally:
        if enabled:
            gc.enable()


def _grade(text: str, source: str, line: int, column: int) -> int:
    whole, point, zeros = text.partition(".")  # BEIR writes grades such as "1.0"; atol reads them as 1
    grade = c_long(whole) if not point or not zeros.strip("0") else None
    if grade is None:
        raise InputError(source, f"expected an integer relevance grade, got {quote(text)}", line, column)
    if not -LONG_MAX - 1 <= grade <= LONG_MAX:
        raise InputError(source, f"a relevance grade past trec_eval's range (a C long, ±{LONG_MAX:,}), got "
                                 f"{quote(text)}", line, column)
    return grade


def _score(text: str, source: str, line: int, column: int) -> float:
    score = c_double(text)
    if score is None:
        raise InputError(source, f"expected a number as the score, got {quote(text)}", line, column)
    if not math.isfinite(score):
        raise InputError(source, f"expected a finite score, got {quote(text)}", line, column)
    return score


def read_qrels(spec: str) -> Qrels:
    """Read TREC qrels (``qid iter docno rel``) or BEIR qrels (``query-id corpus-id score``, tab
    separated, header optional); a docno judged twice for a topic keeps the last grade."""
    fast = _fast(_read_qrels_fast, InputFile(spec, hashed=False))
    return fast if fast is not None else _read_qrels_lines(InputFile(spec))


def _read_qrels_fast(file: InputFile) -> Qrels:
    digest = hashlib.sha256()
    qrels = Qrels(file.name)
    topics = qrels.topics
    width = 0
    for block in _blocks(file, digest.update):
        if not width:
            head = block[:block.find("\n")].split()
            width = len(head)
            if width == 3 and not _is_number(head[2]):  # BEIR's header
                block = block[block.find("\n") + 1:]
            elif width not in (3, 4):
                raise _NotFast
        tokens = _fields(block, width)
        step = width + 1
        qids, docnos = tokens[0::step], tokens[width - 2::step]
        column = tokens[width - 1::step]
        try:
            grades = list(map(int, column))
        except ValueError:  # BEIR's "1.0", or an error: read line by line
            raise _NotFast from None
        if _python_only(column) or (grades and not -LONG_MAX - 1 <= min(grades) <= max(grades) <= LONG_MAX):
            raise _NotFast
        start = 0
        for qid, same in groupby(qids):
            stop = start + len(list(same))
            judged = topics.get(qid)
            if judged is None:
                topics[qid] = dict(zip(docnos[start:stop], grades[start:stop], strict=True))
            else:
                judged.update(zip(docnos[start:stop], grades[start:stop], strict=True))
            start = stop
    if not topics:
        raise _NotFast  # no judgments: the error is the line-by-line reader's
    qrels.sha256 = digest.hexdigest()
    return qrels


def _read_qrels_lines(file: InputFile) -> Qrels:
    qrels = Qrels(file.name)
    width = None
    for line, fields, text in _lines(file):
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
        qrels.topics.setdefault(qid, {})[docno] = _grade(grade, file.name, line, _column(text, width - 1))
    if width is None:
        raise InputError(file.name, "no judgments: qrels need at least one line")
    if not qrels.topics:  # one line of three fields, the third not a number: read as BEIR's header
        raise InputError(file.name, "no judgments: the only line reads as the header of BEIR qrels (query-id "
                                    "corpus-id score); TREC qrels have four fields (qid iter docno rel)", 1)
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
    fast = _fast(_read_run_fast, InputFile(spec, hashed=False))
    if fast is None:
        fast = _read_run_lines(InputFile(spec))
    name, text, sha256 = fast
    if max_docs is not None:
        for qid, joined in text.items():
            if joined.count("\n") >= max_docs:  # more than max_docs documents
                text[qid] = joined[:len(joined) - len(joined.split("\n", max_docs)[-1]) - 1]
    return Run(spec if spec != "-" else "<stdin>", name, Rankings(text), sha256)


class _Topics:
    """Rankings read so far: each topic's docnos joined in trec_eval's order and their scores, in that order."""

    __slots__ = ("name", "scores", "text")

    def __init__(self) -> None:
        self.name: str | None = None  # the first line's run tag
        self.text: dict[str, str] = {}
        self.scores: dict[str, array[float]] = {}

    def add(self, qid: str, docs: list[str], scores: list[float]) -> None:
        """Rank a topic's lines (more of them, when the topic was ranked already: its lines are not all together)."""
        known = self.text.get(qid)
        if known is not None:
            docs = known.split("\n") + docs
            scores = self.scores[qid].tolist() + scores
        if len(set(docs)) != len(docs):
            raise _NotFast  # a docno ranked twice: the line-by-line reader names its line
        docs, scores = _ranked(docs, scores)
        self.text[qid] = "\n".join(docs)
        self.scores[qid] = array("d", scores)

    def merge(self, other: _Topics) -> None:
        """Add the topics of the lines that follow these ones."""
        if self.name is None:
            self.name = other.name
        for qid, text in other.text.items():
            if qid in self.text:
                self.add(qid, text.split("\n"), other.scores[qid].tolist())
            else:
                self.text[qid], self.scores[qid] = text, other.scores[qid]


def _read_run_fast(file: InputFile) -> tuple[str, dict[str, str], str]:
    path = file.spec if isinstance(file.spec, str) else None
    split = _split_point(file, path) if path is not None else None
    if path is not None and split is not None:
        read = _read_in_two(path, split)
        if read is not None:
            return read
    digest = hashlib.sha256()
    topics = _topics(_blocks(file, digest.update))
    return topics.name or "", topics.text, digest.hexdigest()


def _split_point(file: InputFile, path: str) -> int | None:
    """Where a second process could start reading a large plain file: the first line of a topic past the
    middle (None: a small, compressed or transcoded file, one core, or no topic starts there)."""
    if available_cores() < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return None
    try:
        size = os.path.getsize(path)
        if size < _PARALLEL_MIN_BYTES:
            return None
        file._close(file._open())  # the checks of the first bytes (binary input, compression, UTF-16)
        if file.compressed or utf16_encoding(file.head) is not None:
            return None
        with open(path, "rb") as raw:
            raw.seek(size // 2)
            window = raw.read(_SPLIT_WINDOW_BYTES)
    except OSError:
        return None
    lines = window.split(b"\n")[1:-1]  # whole lines only
    first = lines[0].split(None, 1)[:1] if lines else []
    offset = size // 2 + len(window.split(b"\n", 1)[0]) + 1
    for line in lines:
        if line.split(None, 1)[:1] != first:
            return offset
        offset += len(line) + 1
    return None


def _read_in_two(path: str, split: int) -> tuple[str, dict[str, str], str] | None:
    """Read the lines before ``split`` here and the rest in a forked process, hashing the file meanwhile;
    None when a topic's lines are on both sides (read in one process then)."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    worker = context.Process(target=_read_part, args=(path, split, send), daemon=True)
    worker.start()
    send.close()
    digest = hashlib.sha256()
    hashing = threading.Thread(target=_hash_file, args=(path, digest), daemon=True)
    hashing.start()
    try:
        with open(path, "rb") as raw:
            remaining = split

            def read() -> bytes:
                nonlocal remaining
                chunk = raw.read(min(remaining, 1 << 20))
                remaining -= len(chunk)
                return chunk

            topics = _topics(_text_blocks(read, _ignore, True))
        try:
            later = receive.recv()
        except EOFError:  # the process ended without a word (killed): read the file in one process
            return None
    finally:
        receive.close()
        if worker.is_alive():
            worker.terminate()
        worker.join()
        hashing.join()
    if isinstance(later, BaseException):
        raise later
    if later is None:
        raise _NotFast
    name, text = later
    if not text.keys().isdisjoint(topics.text):
        return None
    topics.text.update(text)
    return topics.name or name or "", topics.text, digest.hexdigest()


def _ignore(_: bytes) -> None:
    pass


def _hash_file(path: str, digest: hashlib._Hash) -> None:
    with open(path, "rb") as raw:
        while chunk := raw.read(1 << 20):
            digest.update(chunk)


def _read_part(path: str, start: int, send: Connection) -> None:
    """In the forked process: read the lines from ``start`` on and send (run tag, rankings), None (the
    line-by-line reader must read the file) or the exception raised."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    gc.disable()
    result: object
    try:
        with open(path, "rb") as raw:
            raw.seek(start)
            topics = _topics(_text_blocks(partial(raw.read, 1 << 20), _ignore, False))
        result = (topics.name, topics.text)
    except _NotFast:
        result = None
    except BaseException as exc:  # noqa: BLE001 - sent to the parent, which raises it
        result = exc
    send.send(result)
    send.close()


def _topics(blocks: Iterator[str]) -> _Topics:
    """Read run lines, a block at a time: each topic is ranked when its lines end (again if more come later)."""
    topics = _Topics()
    qid: str | None = None  # the topic whose lines the last block ended with
    docs: list[str] = []
    scores: list[float] = []
    for block in blocks:
        tokens = _fields(block, 6)
        if not tokens:
            continue
        if topics.name is None:
            topics.name = tokens[5]
        qids, docnos = tokens[0::7], tokens[2::7]
        column = tokens[4::7]
        try:
            values = list(map(float, column))
        except ValueError:
            raise _NotFast from None
        if _python_only(column):
            raise _NotFast
        total = sum(values)
        if total - total != 0.0:  # an infinite or NaN score (or a sum past the largest float): an error
            raise _NotFast
        del tokens
        start = 0
        for same_qid, same in groupby(qids):
            stop = start + len(list(same))
            if same_qid == qid:
                docs += docnos[start:stop]
                scores += values[start:stop]
            else:
                if qid is not None:
                    topics.add(qid, docs, scores)
                qid, docs, scores = same_qid, docnos[start:stop], values[start:stop]
            start = stop
    if qid is not None:
        topics.add(qid, docs, scores)
    return topics


def _python_only(column: list[str]) -> bool:
    """Whether a column of numbers Python read holds one C's atol or atof would read otherwise (1_0, other
    scripts' digits: the only text int and float read that C does not read whole)."""
    joined = " ".join(column)
    return "_" in joined or not joined.isascii()


def _ranked(docs: list[str], scores: list[float]) -> tuple[list[str], list[float]]:
    """Order one topic's documents by score descending, then docno descending (the lists may be reordered)."""
    # A str compares by code point, which orders UTF-8 text as its bytes do.
    if scores == sorted(scores, reverse=True):  # in the file's order already, but for ties
        ties = list(compress(count(), map(eq, scores, islice(scores, 1, None))))
        if len(ties) * 16 <= len(scores):
            return _break_ties(docs, ties), scores
    pairs = sorted(zip(scores, docs, strict=True), reverse=True)
    return list(map(itemgetter(1), pairs)), list(map(itemgetter(0), pairs))


def _break_ties(docs: list[str], ties: list[int]) -> list[str]:
    """Order each run of equal scores by docno descending; ``ties`` are the indexes whose score the next one's
    equals, ascending."""
    i = 0
    while i < len(ties):
        first = j = i
        while j + 1 < len(ties) and ties[j + 1] == ties[j] + 1:
            j += 1
        docs[ties[first]:ties[j] + 2] = sorted(docs[ties[first]:ties[j] + 2], reverse=True)
        i = j + 1
    return docs


def _read_run_lines(file: InputFile) -> tuple[str, dict[str, str], str]:
    scored: dict[str, dict[str, float]] = {}
    name = None
    for line, fields, text in _lines(file):
        if len(fields) < 6:  # trec_eval ignores what follows the run tag
            raise InputError(file.name, f"expected a TREC run line (qid iter docno rank score run_tag), got "
                                        f"{len(fields)} fields", line)
        qid, _iter, docno, _rank, score_text, tag = fields[:6]
        score = _score(score_text, file.name, line, _column(text, 4))
        if name is None:
            name = tag
        docs = scored.setdefault(qid, {})
        if docno in docs:
            raise InputError(file.name, f"docno {docno!r} is ranked twice for topic {qid!r} (trec_eval refuses it too)",
                             line, _column(text, 2))
        docs[docno] = score
    rankings = {qid: "\n".join(_ranked(list(docs), list(docs.values()))[0]) for qid, docs in scored.items()}
    return name or "", rankings, file.sha256
