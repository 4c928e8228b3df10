"""One chunking of the documents (``--chunks``): JSON Lines, one chunk per line, ``{"id", "doc", "start",
"end"}`` (the chunk's id, its document's id and the character offsets of the span it holds, end exclusive).

``score`` resolves a trace's chunk ids to spans through it (the evidence family) and judges them against a
question's gold spans (the retrieval family); ``ragscore qrels`` writes qrels for it. Every error names the
line and the field; an id given twice is an error at its second line.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Final, NamedTuple

from ragscore.errors import InputError, SideInputError
from ragscore.loaders.input_file import STDIN, InputFile
from ragscore.loaders.jsonl import ObjectFields, describe, iter_jsonl
from ragscore.quoting import quote
from ragscore.suggest import did_you_mean

KEYS = ("id", "doc", "start", "end")
Span = tuple[str, int, int]  # a document's id, and a start and an end offset into its text (end exclusive)


class Chunk(NamedTuple):
    """One chunk of a chunking: its id and the span of its document it holds."""

    id: str
    doc: str
    start: int
    end: int


class ChunksUse(NamedTuple):
    """Which chunking a run read (``--chunks``): the report's ``inputs.chunks``, and what the parts of a run and a
    baseline report are checked to agree on."""

    path: str
    sha256: str
    chunks: int


class ChunkIndex:
    """One chunking of the documents (``--chunks``): each chunk's span by id, and the chunks of a document that
    overlap a span, found by bisection. Chunk ids are unique (``load_chunks`` refuses a second one).

    A document's chunks are kept in classes of length (lengths of the same bit length, within a factor of two), each
    sorted by start: a class is searched from the span's start less its longest chunk, so that one long chunk (a
    whole document beside its parts) does not make every search walk all the short ones.
    """

    use: ChunksUse | None = None  # the file it was read from (load_chunks)

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        self.spans: dict[str, Span] = {}  # each chunk's span (document, start, end) by id
        by_doc: dict[str, dict[int, list[str]]] = {}
        docs: dict[str, str] = {}  # one string for each document, however many chunks name it
        for ident, doc, start, end in chunks:
            doc = docs.setdefault(doc, doc)
            self.spans[ident] = (doc, start, end)
            if end > start:  # an empty chunk overlaps nothing
                by_doc.setdefault(doc, {}).setdefault((end - start).bit_length(), []).append(ident)
        spans = self.spans
        self._docs: dict[str, list[tuple[list[int], list[str], int]]] = {}
        for doc, classes in by_doc.items():
            self._docs[doc] = []
            for ids in classes.values():
                ids.sort(key=lambda i: (spans[i][1], spans[i][2], i))
                self._docs[doc].append(([spans[i][1] for i in ids], ids, max(spans[i][2] - spans[i][1] for i in ids)))

    def __len__(self) -> int:
        return len(self.spans)

    def span(self, chunk_id: str) -> Span | None:
        """The span a chunk id holds (None: not a chunk of this chunking)."""
        return self.spans.get(chunk_id)

    def overlapping(self, doc: str, start: int, end: int) -> list[Chunk]:
        """The chunks that share at least one character with the span, in order of their start."""
        found = self._docs.get(doc)
        if found is None or end <= start:
            return []
        spans = self.spans
        out = []
        for starts, ids, longest in found:
            for ident in ids[bisect_left(starts, start - longest):bisect_left(starts, end)]:
                _, chunk_start, chunk_end = spans[ident]
                if chunk_end > start:
                    out.append(Chunk(ident, doc, chunk_start, chunk_end))
        if len(found) > 1:
            out.sort(key=_order)
        return out


def _order(chunk: Chunk) -> tuple[int, int, str]:
    return chunk.start, chunk.end, chunk.id


class ChunksError(SideInputError):
    """An error in the chunks file (not in the traces or the gold set)."""


def load_chunks(spec: str | InputFile, check_id: Callable[[str], str | None] | None = None) -> ChunkIndex:
    """Read a chunks file whole into a ``ChunkIndex``; raise ``ChunksError`` at the first problem.

    ``check_id`` tells what is wrong with a chunk id (None: nothing) for a use that asks more of them than the
    chunking does (``ragscore qrels``: a TREC docno); its answer is an error at the id's line.
    """
    file = spec if isinstance(spec, InputFile) else InputFile(spec)
    try:
        index = ChunkIndex(_chunks(file, check_id))
    except ChunksError:
        raise
    except InputError as exc:
        raise ChunksError(exc.source, exc.message, exc.line, exc.column) from None
    if not len(index):
        raise ChunksError(file.name, 'no chunks: expected JSON Lines of {"id", "doc", "start", "end"}')
    index.use = ChunksUse(file.name, file.sha256, len(index))
    return index


def load_scoring_chunks(spec: str) -> ChunkIndex:
    """Read ``score``'s, ``partial``'s and ``compare``'s chunking (``--chunks``): every part of a run (``--jobs``,
    ``partial``) and each run compared reads it, so standard input or a pipe, which gives one reading (the other
    parts would find "no chunks"), is refused with the reason, as a corpus is."""
    file = InputFile(spec)
    if spec == STDIN or os.path.exists(spec) and not file.rereadable:
        raise ChunksError(file.name, "a chunking is read by every part of a run and by each run compared: give a "
                                     "file, not standard input or a pipe")
    return load_chunks(file)


def _chunks(file: InputFile, check_id: Callable[[str], str | None] | None = None) -> Iterator[Chunk]:
    lines: dict[str, int] = {}
    name = file.name
    for line, column, text, obj, _key in iter_jsonl(file):
        if type(obj) is dict and len(obj) == 4:  # the usual chunk, {"id", "doc", "start", "end"}: a few checks
            ident, doc, start, end = obj.get("id"), obj.get("doc"), obj.get("start"), obj.get("end")
            if (type(ident) is str and ident and type(doc) is str and doc and type(start) is int
                    and type(end) is int and 0 <= start <= end and ident not in lines
                    and (check_id is None or check_id(ident) is None)):
                lines[ident] = line
                yield Chunk(ident, doc, start, end)
                continue
        if type(obj) is not dict:
            raise InputError(name, f'expected a JSON object (a chunk: {{"id", "doc", "start", "end"}}), got '
                                   f"{describe(obj)}", line, column)
        fields = ObjectFields(obj, name, line, column, text)
        for key in obj:
            if key not in KEYS and key not in ("text", "page_content", "metadata"):
                raise fields.fail(key, f"unknown key {quote(key)} in a chunk{did_you_mean(key, list(KEYS))} (a chunk "
                                       'has "id", "doc", "start" and "end"; "text" is allowed and not read)')
        ident, doc = (_ident(fields, key) for key in ("id", "doc"))
        problem = None if check_id is None else check_id(ident)
        if problem is not None:
            raise fields.fail("id", f"chunk id {quote(ident)} {problem}")
        start, end = (_offset(fields, key) for key in ("start", "end"))
        if end < start:
            raise fields.fail("end", f"expected the chunk to end where it starts or after (end is exclusive), got "
                                     f"start {start:,} and end {end:,}")
        first = lines.get(ident)
        if first is not None:
            raise fields.fail("id", f"duplicate chunk id {quote(ident)} (first at line {first:,})")
        lines[ident] = line
        yield Chunk(ident, doc, start, end)


def _ident(fields: ObjectFields, key: str) -> str:
    value = fields.obj.get(key)
    if type(value) is str and value or type(value) is int:
        return str(value)
    got = describe(value) if key in fields.obj else "none"
    raise fields.fail(key if key in fields.obj else None,
                      f'expected "{key}" to be a non-empty string or an integer, got {got}')


def _offset(fields: ObjectFields, key: str) -> int:
    value = fields.obj.get(key)
    if type(value) is int and value >= 0:
        return value
    got = describe(value) if key in fields.obj else "none"
    raise fields.fail(key if key in fields.obj else None,
                      f'expected "{key}" to be a character offset (an integer of 0 or more), got {got}')


def _doc(value: object) -> str | None:
    if type(value) is str and value:
        return value
    return str(value) if type(value) is int else None


def _offsets(start: object, end: object) -> tuple[int, int] | None:
    if type(start) is int and type(end) is int and 0 <= start <= end:
        return start, end
    return None


def entry_span(entry: object) -> Span | None:
    """The span of its document a retrieved entry holds, when it says: ``doc`` (or ``doc_id``) with ``start`` and
    ``end``; LangChain's ``metadata.start_index`` (its text splitters' ``add_start_index``), its document from
    ``metadata.source`` or else ``metadata.id``, ending after its ``page_content``; llama-index's ``start_char_idx`` and
    ``end_char_idx`` of a node (or of a ``NodeWithScore``'s), its document the node's source
    (``relationships."1".node_id``, else ``ref_doc_id``). None when it says none of these."""
    if type(entry) is not dict:
        return None
    get = entry.get
    if "start" in entry:
        doc, offsets = _doc(get("doc", get("doc_id"))), _offsets(get("start"), get("end"))
        return None if doc is None or offsets is None else (doc, *offsets)
    metadata = get("metadata")
    if type(metadata) is dict and "start_index" in metadata:
        start, text = metadata.get("start_index"), get("page_content")
        # metadata.source names the file a loader read; metadata.id is the chunk's own id in the langchain preset
        doc = _doc(metadata.get("source", metadata.get("id")))
        if doc is None or type(text) is not str or type(start) is not int or start < 0:  # -1: the splitter lost it
            return None
        return doc, start, start + len(text)
    node = get("node", entry)
    if type(node) is dict and "start_char_idx" in node:
        offsets = _offsets(node.get("start_char_idx"), node.get("end_char_idx"))
        relationships = node.get("relationships")
        source = relationships.get("1") if type(relationships) is dict else None
        doc = _doc(source.get("node_id") if type(source) is dict else node.get("ref_doc_id"))
        return None if doc is None or offsets is None else (doc, *offsets)
    return None


def span_id(span: Span) -> str:
    """The id a retrieved entry that holds a span and no id is known by: ``DOC:START-END``."""
    doc, start, end = span
    return f"{doc}:{start}-{end}"


def trace_spans(entries: object, ids: Sequence[str], citations: Sequence[str], index: ChunkIndex | None,
                depth: int | None = None) -> tuple[list[Span | None], list[Span]]:
    """A trace's retrieved spans in rank order (None: an entry without one) and its cited spans.

    ``entries`` is the trace's retrieved list as written and ``ids`` the ids read from it: an entry's span is
    its own, else that of its id in the chunking ``index``. A citation names a retrieved entry's id (its span),
    else a chunk of ``index``; a citation of neither covers nothing. ``depth``: only the spans of the first
    ``depth`` ranks are listed (and read; a cited entry's wherever it ranks).
    """
    listed = entries if type(entries) is list else ()
    full = max(len(listed), len(ids)) if index is not None else len(listed)
    shown = full if depth is None else max(0, min(depth, full))
    ranked: list[Span | None]
    if index is not None and listed and set(map(type, listed)) == _ONLY_STR:  # chunk ids alone: the chunking's
        get = index.spans.get
        ranked = list(map(get, ids[:shown]))
        if len(ranked) < shown:
            ranked += [None] * (shown - len(ranked))
        # A cited id's span is the chunking's, whether it was retrieved or not.
        return ranked, [span for span in map(get, citations) if span is not None]
    ranked = [_span_at(rank, listed, ids, index) for rank in range(shown)]
    cited: list[Span] = []
    if citations:
        for ident in citations:
            span = _first_span(ident, ids, ranked, listed, index)
            if span is None and index is not None:
                span = index.span(ident)
            if span is not None:
                cited.append(span)
    return ranked, cited


_ONLY_STR: Final = {str}


def _span_at(rank: int, listed: Sequence[object], ids: Sequence[str], index: ChunkIndex | None) -> Span | None:
    """The span of the entry at ``rank``: its own, else that of its id in the chunking."""
    span = None
    if rank < len(listed):
        entry = listed[rank]
        if type(entry) is dict:  # the usual entry, {"id", "doc", "start", "end"}: read without entry_span
            doc, start, end = entry.get("doc"), entry.get("start"), entry.get("end")
            if type(doc) is str and doc and type(start) is int and type(end) is int and 0 <= start <= end:
                return doc, start, end
        span = entry_span(entry)
    if span is None and index is not None and rank < len(ids):
        span = index.span(ids[rank])
    return span


def _first_span(ident: str, ids: Sequence[str], ranked: list[Span | None], listed: Sequence[object],
                index: ChunkIndex | None) -> Span | None:
    """The span of the first retrieved entry that has id ``ident`` and a span (read from its entry when it ranks
    below the spans listed in ``ranked``)."""
    start = 0
    while True:
        try:
            rank = ids.index(ident, start)
        except ValueError:
            return None
        span = ranked[rank] if rank < len(ranked) else _span_at(rank, listed, ids, index)
        if span is not None:
            return span
        start = rank + 1
