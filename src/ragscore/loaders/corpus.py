"""Passage texts by id (``--corpus``): read a corpus for the ids and texts the traces use.

A corpus is JSON Lines, one passage per line: BEIR's ``corpus.jsonl`` (``_id``, ``title``,
``text``) or ``id``/``doc_id`` with ``text``/``contents``/``page_content``; gzip, bzip2 and xz are
read as every input is. A BEIR passage is its title and its text joined by a newline.

Only what the traces use is kept: the traces are read first for the ids whose text they lack and
the texts that lack an id, then the corpus is streamed once, so that memory follows the traces
and not the corpus (traces that cannot be read twice, standard input or records, keep every
passage). A trace's own passage texts win over the corpus; texts without ids get the id of the
corpus passage with the same text once folded (``ragscore.text.fold_text``; a passage's text
without its title matches too; of passages with the same text the first in the corpus).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

from ragscore.errors import InputError, SideInputError
from ragscore.loaders.input_file import InputFile
from ragscore.loaders.jsonl import ObjectFields, describe, is_mine, iter_jsonl
from ragscore.loaders.trace import DOCUMENT_ID_PATHS, TraceView, parse_trace
from ragscore.quoting import quote
from ragscore.text import fold_text

ID_KEYS: Final = ("_id", "id", "doc_id")                  # a corpus line's id, the first present
TEXT_KEYS: Final = ("text", "contents", "page_content")   # ... and its text
ENTRY_TEXT_KEYS: Final = ("text", "page_content", "content")  # a trace's retrieved entry's own text
EXAMPLES: Final = 5  # trace lines kept for each note


class CorpusError(SideInputError):
    """An error in the corpus file (not in the traces it is read for)."""


def text_key(text: str) -> bytes:
    """What a passage text is matched by: a digest of its folded form (16 bytes, however long the text)."""
    return hashlib.blake2b(fold_text(text).encode(), digest_size=16).digest()


def entry_texts(obj: dict[str, object]) -> list[str | None]:
    """The passage texts a trace carries, one per retrieved entry (None: that entry has none): its
    ``retrieved_chunks``, else the ``text`` (``page_content``, ``content``) of each object in its retrieved list."""
    chunks = obj.get("retrieved_chunks")
    if type(chunks) is list and chunks:
        if set(map(type, chunks)) == {str}:  # (in C: a trace's texts are read for every answer)
            return chunks
        if all(type(c) is str or c is None for c in chunks) and any(type(c) is str for c in chunks):
            return chunks  # a null: that passage has no text (the others keep theirs)
    entries = obj.get("retrieved_ids") if "retrieved_ids" in obj else obj.get("chunks")
    if type(entries) is not list or not any(type(e) is dict for e in entries):
        return []
    out: list[str | None] = []
    for entry in entries:
        text = None
        if type(entry) is dict:
            for key in ENTRY_TEXT_KEYS:
                value = entry.get(key)
                if type(value) is str:
                    text = value
                    break
        out.append(text)
    return out if any(t is not None for t in out) else []


def passage_texts(obj: dict[str, object] | None) -> list[str]:
    """A trace's passage texts, one per retrieved entry ("" for an entry without one)."""
    if obj is None:
        return []
    texts = entry_texts(obj)
    return texts if not texts or None not in texts else [t or "" for t in texts]  # type: ignore[return-value]


@dataclass(slots=True)
class CorpusUse:
    """What a run read of its corpus, and what of its traces the corpus could not give."""

    path: str
    sha256: str
    documents: int
    identified: int = 0     # traces whose passage texts (without ids) were given ids by the corpus
    unmatched: int = 0      # ... their texts that no corpus passage has
    unmatched_lines: list[int] = field(default_factory=list)
    untexted: int = 0       # retrieved ids without a text in the trace or the corpus
    untexted_lines: list[int] = field(default_factory=list)

    def __add__(self, other: CorpusUse) -> CorpusUse:
        return CorpusUse(self.path, self.sha256, self.documents, self.identified + other.identified,
                         self.unmatched + other.unmatched,
                         sorted(self.unmatched_lines + other.unmatched_lines)[:EXAMPLES],
                         self.untexted + other.untexted, sorted(self.untexted_lines + other.untexted_lines)[:EXAMPLES])


@dataclass(slots=True)
class Corpus:
    """The passages of a corpus that a run's traces use: text by id, and id by text."""

    use: CorpusUse
    texts: dict[str, str]
    ids: dict[bytes, str]
    documents: dict[str, str] = field(default_factory=dict)  # the texts gold spans index (``text``, no title)

    def resolve(self, view: TraceView, obj: dict[str, object]) -> tuple[TraceView, dict[str, object]]:
        """Give a trace the passage texts (and, to texts without ids, the ids) the corpus has: a copy of
        ``obj`` whose ``retrieved_chunks`` holds one text per retrieved id."""
        texts = entry_texts(obj)
        ids = view.retrieved
        use = self.use
        if ids:
            have = len(texts)
            filled: list[str] = []
            missing = 0
            for rank, doc in enumerate(ids):
                text = texts[rank] if rank < have else None
                if text is None:
                    text = self.texts.get(doc)
                    if text is None:
                        missing += 1
                        text = ""
                filled.append(text)
            if missing:
                use.untexted += missing
                if len(use.untexted_lines) < EXAMPLES:
                    use.untexted_lines.append(view.line)
            if missing == len(ids):  # no passage has a text: nothing to judge the claim against
                return view, obj
            return view, {**obj, "retrieved_chunks": filled}
        if not texts or view.retrieved_bad:
            return view, obj
        found: list[str] = []
        unmatched = 0
        for rank, passage in enumerate(texts, 1):
            match = self.ids.get(text_key(passage)) if passage else None  # an empty text names no passage
            if match is None:
                unmatched += 1
            found.append(f"(passage {rank}: no corpus entry)" if match is None else match)  # ranked, relevant to none
        use.identified += 1
        if unmatched:
            use.unmatched += unmatched
            if len(use.unmatched_lines) < EXAMPLES:
                use.unmatched_lines.append(view.line)
        return view._replace(retrieved=tuple(found)), {**obj, "retrieved_chunks": [t or "" for t in texts]}


def wanted(records: Iterator[tuple[int, int, object, object, bytes | None]], name: str,
           document_id: tuple[object, ...] | None, part: int, parts: int,
           joined: bool = True) -> tuple[set[str], set[bytes]]:
    """Read a part's traces for what the corpus must give them: the retrieved ids without a text of their
    own, and the keys (``text_key``) of texts without ids (``joined=False``: traces joined to no question, as
    monitor reads them, need no qid or question)."""
    paths = DOCUMENT_ID_PATHS if document_id is None else document_id
    ids: set[str] = set()
    keys: set[bytes] = set()
    for line, _column, _record, obj, key in records:
        if not joined and type(obj) is dict:
            obj = {**obj, "qid": "-"}
        view = parse_trace(obj, name, line, paths)  # type: ignore[arg-type]  # the format's paths
        if parts > 1 and view.qid is not None and not is_mine(key, view.qid, part, parts):
            continue
        texts = entry_texts(obj)  # type: ignore[arg-type]  # parse_trace checked: a dict
        if view.retrieved:
            have = len(texts)
            ids.update(doc for rank, doc in enumerate(view.retrieved) if rank >= have or texts[rank] is None)
        elif texts and not view.retrieved_bad:
            keys.update(text_key(t) for t in texts if t)
    return ids, keys


def load_corpus(file: InputFile, ids: set[str] | None, keys: set[bytes] | None,
                documents: frozenset[str] = frozenset()) -> Corpus:
    """Stream a corpus (an ``InputFile``), keeping the passages of ``ids`` and the ids of the texts of
    ``keys`` (None: every passage and every text), and the texts of ``documents`` (their ``text`` alone, without
    a title: what gold spans' offsets index). A duplicate id the run uses is an error at its line."""
    try:
        return _load(file, ids, keys, documents)
    except CorpusError:
        raise
    except InputError as exc:
        raise CorpusError(exc.source, exc.message, exc.line, exc.column) from None


def _load(file: InputFile, ids: set[str] | None, keys: set[bytes] | None, documents: frozenset[str]) -> Corpus:
    texts: dict[str, str] = {}
    bodies: dict[str, str] = {}
    by_key: dict[bytes, str] = {}
    lines: dict[str, int] = {}
    count = 0
    name = file.name
    for line, column, text, obj, _key in iter_jsonl(file):
        if type(obj) is not dict:
            raise InputError(name, f"expected a JSON object (a passage with an id and a text), got {describe(obj)}",
                             line, column)
        doc, passage, body = _passage(ObjectFields(obj, name, line, column, text))
        count += 1
        if ids is None or doc in ids or doc in documents:
            first = lines.get(doc)
            if first is not None:
                raise ObjectFields(obj, name, line, column, text).fail(
                    _id_key(obj), f"duplicate id {quote(doc)} (first at line {first}): each passage needs its own id")
            lines[doc] = line
            if ids is None or doc in ids:
                texts[doc] = passage
            if doc in documents:
                bodies[doc] = body
        if keys is None or keys:
            for candidate in (passage, body) if body is not passage else (passage,):
                if not candidate:
                    continue  # an empty text (a passage with a title only) is matched by no text
                k = text_key(candidate)
                if (keys is None or k in keys) and k not in by_key:
                    by_key[k] = doc
    return Corpus(CorpusUse(name, file.sha256, count), texts, by_key, bodies)


def _id_key(obj: dict[str, object]) -> str | None:
    return next((k for k in ID_KEYS if k in obj), None)


def _passage(fields: ObjectFields) -> tuple[str, str, str]:
    """A corpus line's id, its passage (the title, a newline and the text, when it has a title) and its text."""
    obj = fields.obj
    key = _id_key(obj)
    if key is None:
        raise fields.fail(None, 'expected an id: "_id" (BEIR), "id" or "doc_id"')
    doc = obj[key]
    if isinstance(doc, bool) or not isinstance(doc, (str, int)) or doc == "":
        raise fields.fail(key, f'expected "{key}" to be a non-empty string or an integer, got {describe(doc)}')
    text_key_ = next((k for k in TEXT_KEYS if k in obj), None)
    if text_key_ is None:
        raise fields.fail(None, 'expected a text: "text" (BEIR), "contents" or "page_content"')
    body = obj[text_key_]
    if type(body) is not str:
        raise fields.fail(text_key_, f'expected "{text_key_}" to be a string, got {describe(body)}')
    title = obj.get("title")
    if title is not None and type(title) is not str:
        raise fields.fail("title", f'expected "title" to be a string, got {describe(title)}')
    return str(doc), (f"{title}\n{body}" if title else body), body
