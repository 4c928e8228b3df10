"""Load a gold set (JSON Lines or a JSON array) into validated, immutable items."""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from itertools import chain
from typing import Final, NamedTuple

from ragscore.errors import InputError, SideInputError
from ragscore.loaders.fields import CONTRACT_FIELDS
from ragscore.loaders.jsonl import (
    BOM,
    InputFile,
    ObjectFields,
    array_or_lines,
    describe,
    is_mine,
    is_string_list,
    iter_json_array,
    iter_jsonl,
    objects_at,
)
from ragscore.loaders.records import Records
from ragscore.loaders.tool_calls import GoldTools, gold_tools
from ragscore.quoting import quote
from ragscore.text import MIN_NEEDLE, Rule, containment_rule, normalise

# Optional fields a metric family can ask the loader to keep (see GoldItem).
KEEP_QUESTION: Final = "question"
KEEP_RELEVANCE: Final = "relevance"
KEEP_ANSWERS: Final = "answers"
KEEP_EXTRA: Final = "extra"
KEEP_CHUNKS: Final = "chunks"
KEEP_EMBEDDINGS: Final = "embeddings"
KEEP_SPANS: Final = "spans"
KEEP_TOOLS: Final = "tools"
KEEP_REFERENCE: Final = "reference"  # the first gold_answers entry, else gold_claim (ragscore judge's {reference})
SPAN_KEYS: Final = ("doc", "start", "end", "grade")  # a gold span's keys (grade optional)
_NO_KEEP: Final[frozenset[str]] = frozenset()
_INT_ONLY: Final = frozenset({int})
_ONLY_QUESTION: Final = frozenset({"question"})

# The score command checks the keys of the records on the first this many lines of each input
# for near misses of the contract's fields (a systematic typo); validate checks every record.
KEY_SAMPLE_LINES: Final = 1000


def place(line: int, column: int) -> int:
    """Pack a line and column into one integer that sorts in file order."""
    return line << 32 | column


def line_of(packed: int) -> int:
    """Return the line of a ``place``."""
    return packed >> 32


NONE: Final = "(none)"  # the slice of questions that lack the field


def slice_labels(item: GoldItem, path: str) -> tuple[str, ...]:
    """Read a dotted path (``tags.lang``) of a gold item: its labels (a list gives several)."""
    first, *rest = path.split(".")
    value: object = item.answerable if first == "answerable" and not rest else (item.extra or {}).get(first)
    for key in rest:
        value = value.get(key) if isinstance(value, dict) else None
    if value is None or value == []:
        return (NONE,)
    values = value if isinstance(value, list) else [value]
    return tuple(dict.fromkeys(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)
                               for v in values))


class GoldItem(NamedTuple):
    """One question of the gold set, with its containment rule prepared once.

    Fields that only some metric families read (relevance, answers, chunks, embeddings, extra)
    are kept, in one small mapping, only when the loader is asked to, so that a million-question
    gold set stays small.
    """

    qid: str
    question: str | None
    answerable: bool
    citations: tuple[str, ...]
    rule: Rule
    needles: tuple[str, ...]
    forbidden: tuple[str, ...]
    forbidden_norm: tuple[str, ...]
    kept: Mapping[str, object] | None = None  # the optional fields asked for, by KEEP_* name

    @property
    def relevance(self) -> Mapping[str, int] | None:
        """Return the graded relevance (``gold_relevance``), if kept."""
        return self.kept.get(KEEP_RELEVANCE) if self.kept else None  # type: ignore[return-value]

    @property
    def answers(self) -> list[str] | None:
        """Return the reference answers (``gold_answers``), if kept."""
        return self.kept.get(KEEP_ANSWERS) if self.kept else None  # type: ignore[return-value]

    @property
    def chunks(self) -> list[str] | None:
        """Return the relevant chunk texts (``gold_chunks``), if kept."""
        return self.kept.get(KEEP_CHUNKS) if self.kept else None  # type: ignore[return-value]

    @property
    def embeddings(self) -> list[list[float]] | None:
        """Return the gold vectors (``gold_embeddings``), if kept."""
        return self.kept.get(KEEP_EMBEDDINGS) if self.kept else None  # type: ignore[return-value]

    @property
    def spans(self) -> tuple[tuple[str, int, int, int], ...] | None:
        """Return the gold evidence as spans of documents (``gold_spans``: document, start, end, grade), if kept."""
        return self.kept.get(KEEP_SPANS) if self.kept else None  # type: ignore[return-value]

    @property
    def tools(self) -> GoldTools | None:
        """Return the expected tool calls and their rules (``gold_tool_calls``, ``tool_match``,
        ``gold_arguments_match``), if kept."""
        return self.kept.get(KEEP_TOOLS) if self.kept else None  # type: ignore[return-value]

    @property
    def reference(self) -> str | None:
        """Return the reference answer (the first ``gold_answers`` entry, else ``gold_claim``), if kept."""
        return self.kept.get(KEEP_REFERENCE) if self.kept else None  # type: ignore[return-value]

    @property
    def extra(self) -> Mapping[str, object] | None:
        """Return the fields the contract does not define (``tags``, ``category``, ...), if kept."""
        return self.kept.get(KEEP_EXTRA) if self.kept else None  # type: ignore[return-value]


@dataclass(slots=True)
class GoldSet:
    """The gold items in file order, indexed by qid (and lazily by question text)."""

    source: InputFile | Records
    items: list[GoldItem]
    by_qid: dict[str, int]
    places: array[int]  # each item's place(line, column): its order in the file, 8 bytes per item
    _by_question: dict[str, int | None] | None = None
    # Keys a typo away from a contract field the record lacks ("gold_citation"), on the records
    # of the first KEY_SAMPLE_LINES lines: key -> (the field, the first line).
    extra_keys: dict[str, tuple[str, int]] = field(default_factory=dict)
    ragas: bool = False  # read as a ragas dataset (its own gold set)
    questions_kept: bool = True  # each item's question text is held (else read again when quoted)
    total: int = 0  # the gold set's items, every worker's (a worker holds its own only)

    def index_of_question(self, question: str) -> int | None:
        """Return the position of the item with this exact question text; None if there is none.

        Raises LookupError when several items share the text (the caller knows the trace line).
        """
        if self._by_question is None:
            index: dict[str, int | None] = {}
            for position, item in enumerate(self.items):
                if item.question is not None:
                    index[item.question] = None if item.question in index else position
            self._by_question = index
        if question not in self._by_question:
            return None
        found = self._by_question[question]
        if found is None:
            raise LookupError(question)
        return found


class _Fields(ObjectFields):
    """Typed access to one decoded object, raising InputError with the field's position."""

    def aliased(self, name: str, alias: str) -> tuple[str, object]:
        """Return (the key used, its value) for a field that has an alias; reject both given."""
        if name in self.obj and alias in self.obj:
            raise self.fail(alias, f'"{alias}" is an alias of "{name}": give one of them, not both')
        key = alias if alias in self.obj else name
        return key, self.obj.get(key)

    def ident(self, key: str, value: object) -> str:
        """Turn an id (a non-empty string or an integer) into a string."""
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        raise self.fail(key, f'expected "{key}" to be a non-empty string or an integer, got {describe(value)}')

    def strings(self, key: str, value: object) -> list[str]:
        """Return ``value`` when it is a list of strings; raise otherwise."""
        if is_string_list(value):
            return value
        bad = describe(value) if not isinstance(value, list) else f"an array holding {_first_wrong(value, str)}"
        raise self.fail(key, f'expected "{key}" to be a list of strings, got {bad}')

    def ids(self, key: str, value: object) -> tuple[str, ...]:
        """Return a list of ids (strings or integers) as a tuple of strings."""
        if not isinstance(value, list):
            raise self.fail(key, f'expected "{key}" to be a list of ids (strings or integers), got {describe(value)}')
        out = []
        for v in value:
            if isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool)):
                out.append(str(v))
            else:
                raise self.fail(key, f'expected "{key}" to be a list of ids (strings or integers), '
                                     f'got an array holding {describe(v)}')
        return tuple(out)


def _first_wrong(values: list[object], kind: type) -> str:
    return next(describe(v) for v in values if not isinstance(v, kind))


def _norm(text: str) -> str:
    """Normalise, skipping the Unicode work for ASCII text (where NFC is the identity)."""
    return text.lower() if text.isascii() else normalise(text)


def parse_gold_item(
    obj: object, source: str, line: int, column: int, text: str, keep: frozenset[str] = _NO_KEEP
) -> GoldItem:
    """Validate one decoded gold object and build its item.

    A gold set of a million lines is mostly one shape (a qid, one claim substring, citations),
    so that shape is recognised with a few checks; anything else, and every error, goes through
    ``parse_gold_item_checked``, which gives the same item (a test compares the two).
    """
    if type(obj) is dict:
        get = obj.get
        answerable, qid, question = get("answerable"), get("qid"), get("question")
        substr, cites = get("gold_claim_substr"), get("gold_citations")
        if (
            (answerable is True or answerable is False)
            and type(qid) is str
            and qid
            and (question is None or type(question) is str)
            and type(substr) is list
            and len(substr) == 1
            and type(first := substr[0]) is str
            and len(needle := first.lower() if first.isascii() else normalise(first)) >= MIN_NEEDLE
            and (cites is None or is_string_list(cites))
            and "q" not in obj
            and "gold_ids" not in obj
            and "gold_claim" not in obj
            and "forbidden_substr" not in obj
            and "gold_chunks" not in obj
            and "gold_embeddings" not in obj
            and ((spans := get("gold_spans")) is None or (spans := _usual_spans(spans)) is not None)
            and "gold_tool_calls" not in obj
            and "tool_match" not in obj
            and "gold_arguments_match" not in obj
        ):
            relevance, answers = get("gold_relevance"), get("gold_answers")
            if (
                relevance is None
                or (type(relevance) is dict and _INT_ONLY.issuperset(map(type, relevance.values())))
            ) and (answers is None or is_string_list(answers)):
                kept = None if keep <= _ONLY_QUESTION else _kept(keep, obj, relevance, answers, None, None, spans,
                                                                  reference=answers[0] if answers else None)
                return tuple.__new__(GoldItem, (
                    qid, question if KEEP_QUESTION in keep else None, answerable,
                    tuple(cites) if cites else (), Rule.SUBSTR, (needle,), (), (), kept,
                ))
    return parse_gold_item_checked(obj, source, line, column, text, keep)


def parse_gold_item_checked(
    obj: object, source: str, line: int, column: int, text: str, keep: frozenset[str] = _NO_KEEP
) -> GoldItem:
    """Validate one decoded gold object field by field, raising at the first problem."""
    if type(obj) is not dict:
        raise InputError(source, f"expected a JSON object, got {describe(obj)}", line, column)
    f = _Fields(obj, source, line, column, text)
    answerable = obj.get("answerable")
    if answerable is not True and answerable is not False:
        if "answerable" not in obj:
            raise f.fail(None, 'missing required field "answerable" (true or false)')
        raise f.fail("answerable", f'expected "answerable" to be true or false, got {describe(answerable)}')
    q_key, question = f.aliased("question", "q") if "q" in obj else ("question", obj.get("question"))
    if question is not None and type(question) is not str:
        raise f.fail(q_key, f'expected "{q_key}" to be a string, got {describe(question)}')
    qid = obj.get("qid")
    if type(qid) is not str or not qid:
        if qid is not None:
            qid = f.ident("qid", qid)
        elif question:
            qid = question  # an item without a qid is known by its question text
        else:
            raise f.fail(None, 'expected a "qid" or a "question" to identify the item')

    substr = obj.get("gold_claim_substr")
    if substr is not None:
        substr = f.strings("gold_claim_substr", substr)
    claim = obj.get("gold_claim")
    if claim is not None and type(claim) is not str:
        raise f.fail("gold_claim", f'expected "gold_claim" to be a string, got {describe(claim)}')
    c_key, cites = (f.aliased("gold_citations", "gold_ids") if "gold_ids" in obj
                    else ("gold_citations", obj.get("gold_citations")))
    citations = () if cites is None else cites if is_string_list(cites) else f.ids(c_key, cites)
    relevance = obj.get("gold_relevance")
    if relevance is not None:
        relevance = _relevance(f, relevance)
    answers = obj.get("gold_answers")
    if answers is not None:
        answers = f.strings("gold_answers", answers)
    raw_forbidden = obj.get("forbidden_substr")
    forbidden: Collection[str] = ()
    forbidden_norm: tuple[str, ...] = ()
    if raw_forbidden is not None:
        forbidden = f.strings("forbidden_substr", raw_forbidden)
        forbidden_norm = tuple(map(_norm, forbidden))
        if not all(entry.strip() for entry in forbidden_norm):  # "" or " " would match nearly every claim
            raise f.fail("forbidden_substr", 'expected "forbidden_substr" entries to hold more than white space')
    chunks = obj.get("gold_chunks")
    if chunks is not None:
        chunks = f.strings("gold_chunks", chunks)
    embeddings = obj.get("gold_embeddings")
    if embeddings is not None:
        embeddings = _embeddings(f, embeddings)
    spans = obj.get("gold_spans")
    if spans is not None:
        spans = _spans(f, spans)
    tools = None
    if (obj.get("gold_tool_calls") is not None or obj.get("tool_match") is not None
            or obj.get("gold_arguments_match") is not None):  # null is absent, as for every optional field
        tools = _tools(f, obj)
    rule, needles = containment_rule(None if substr is None else tuple(substr), claim)
    return tuple.__new__(GoldItem, (
        qid, question if KEEP_QUESTION in keep else None, answerable, tuple(citations), rule, needles,
        tuple(forbidden), forbidden_norm, _kept(keep, obj, relevance, answers, chunks, embeddings, spans, tools,
                                                answers[0] if answers else claim),
    ))


def _kept(
    keep: frozenset[str], obj: dict[str, object], relevance: object, answers: object, chunks: object,
    embeddings: object, spans: object, tools: object = None, reference: object = None,
) -> dict[str, object] | None:
    """Collect the optional fields asked for that the item has; None when there are none."""
    values = {KEEP_RELEVANCE: relevance, KEEP_ANSWERS: answers, KEEP_CHUNKS: chunks, KEEP_EMBEDDINGS: embeddings,
              KEEP_SPANS: spans, KEEP_TOOLS: tools, KEEP_REFERENCE: reference}
    kept = {name: value for name, value in values.items() if name in keep and value is not None}
    if KEEP_EXTRA in keep and (extra := {k: v for k, v in obj.items() if k not in CONTRACT_FIELDS}):
        kept[KEEP_EXTRA] = extra
    return kept or None


def _embeddings(f: _Fields, value: object) -> list[list[float]]:
    """Check a list of equal-length, non-empty lists of numbers."""
    if type(value) is list and value and all(type(v) is list and v for v in value):
        width = len(value[0])
        if all(len(v) == width and all(type(x) in (int, float) for x in v) for v in value):
            return value
    raise f.fail(
        "gold_embeddings",
        'expected "gold_embeddings" to be a non-empty list of equal-length, non-empty lists of numbers',
    )


def _spans(f: _Fields, value: object) -> tuple[tuple[str, int, int, int], ...]:
    """Check a list of spans of documents: ``{"doc", "start", "end"}`` (character offsets, end exclusive) and an
    optional positive integer ``grade`` (1 when absent)."""
    from ragscore.suggest import did_you_mean

    if type(value) is not list:
        raise f.fail("gold_spans", 'expected "gold_spans" to be a list of spans ({"doc": ID, "start": N, "end": N}), '
                                   f"got {describe(value)}")
    out = []
    for number, span in enumerate(value, 1):
        where = f'"gold_spans" entry {number}'
        if type(span) is not dict:
            raise f.fail("gold_spans", f'expected {where} to be an object ({{"doc": ID, "start": N, "end": N}}), '
                                       f"got {describe(span)}")
        for key in span:
            if key not in SPAN_KEYS:
                raise f.fail("gold_spans", f'unknown key {quote(key)} in {where}'
                                           f'{did_you_mean(key, list(SPAN_KEYS))} (a span has "doc", "start", "end" '
                                           'and an optional "grade")')
        doc = span.get("doc")
        if not (type(doc) is str and doc or type(doc) is int):
            raise f.fail("gold_spans", f'expected {where} to name its document ("doc": a non-empty string or an '
                                       f"integer), got {describe(doc) if 'doc' in span else 'none'}")
        offsets = []
        for key in ("start", "end"):
            offset = span.get(key)
            if type(offset) is not int or offset < 0:
                raise f.fail("gold_spans", f'expected "{key}" of {where} to be a character offset (an integer of 0 or '
                                           f"more), got {describe(offset) if key in span else 'none'}")
            offsets.append(offset)
        start, end = offsets
        if end < start:
            raise f.fail("gold_spans", f"expected {where} to end where it starts or after (end is exclusive), got "
                                       f"start {start:,} and end {end:,}")
        grade = span.get("grade", 1)
        if type(grade) is not int or grade < 1:
            raise f.fail("gold_spans", f'expected "grade" of {where} to be a positive integer, got {describe(grade)}')
        out.append((str(doc), start, end, grade))
    return tuple(out)


def _usual_spans(value: object) -> tuple[tuple[str, int, int, int], ...] | None:
    """``_spans`` of the usual gold spans (each ``{"doc": a string, "start", "end"}`` and perhaps a ``grade``), with a
    few checks; None for anything else, which ``_spans`` reads (or refuses)."""
    if type(value) is not list:
        return None
    out = []
    for span in value:
        if type(span) is not dict:
            return None
        get = span.get
        doc, start, end, grade = get("doc"), get("start"), get("end"), get("grade", 1)
        if not (type(doc) is str and doc and type(start) is int and type(end) is int and 0 <= start <= end
                and type(grade) is int and grade >= 1 and (len(span) == 3 or len(span) == 4 and "grade" in span)):
            return None
        out.append((doc, start, end, grade))
    return tuple(out)


def _tools(f: _Fields, obj: Mapping[str, object]) -> GoldTools:
    """Check an item's expected tool calls (``gold_tool_calls``: ``{"name", "arguments"}`` each, the arguments an
    object or the JSON text of one, ``{}`` when absent) and its two rules."""
    read = gold_tools(obj.get("gold_tool_calls"), obj.get("tool_match"), obj.get("gold_arguments_match"))
    if isinstance(read, GoldTools):
        return read
    key, message = read
    raise f.fail(key, message)


def _relevance(f: _Fields, value: object) -> dict[str, int]:
    if type(value) is dict and _INT_ONLY.issuperset(map(type, value.values())):
        return value
    got = describe(value) if not isinstance(value, dict) else "a grade that is not an integer"
    raise f.fail("gold_relevance", f'expected "gold_relevance" to map ids to integer grades, got {got}')


def _records(
    file: InputFile, part: int, parts: int, skipped: list[int] | None = None
) -> Iterator[tuple[int, int, str, object, bytes | None]]:
    """Yield the gold records worker ``part`` may own, reading JSON Lines or a JSON array.

    Each comes with its quickly read qid (see ``iter_jsonl``, which counts into ``skipped`` the
    lines it skips); a JSON array is parsed whole by every worker, which then keeps its own items.
    """
    document, lines = array_or_lines(file)
    if document is not None:
        return ((*record, None) for record in iter_json_array(document, file.name))
    return iter_jsonl(file, part, parts, lines, skipped)


def load_gold(
    spec: str | InputFile | Records, *, part: int = 0, parts: int = 1,
    keep: frozenset[str] = frozenset({KEEP_QUESTION}), fields: tuple[tuple[str, str], ...] = (),
    trace_format: str = "native",
) -> GoldSet:
    """Read and validate a gold set (the share of worker ``part`` of ``parts``); raise at the first problem.

    ``fields`` maps contract fields to other paths ([gold.fields]); with traces that may be in
    ragas' shape (``trace_format``), a gold set in that shape is read as one.
    """
    file = spec if isinstance(spec, (InputFile, Records)) else InputFile(spec)
    skipped: list[int] = []  # the lines of other workers' items, skipped unread
    others = 0               # ... and their items read to learn their qid
    items: list[GoldItem] = []
    by_qid: dict[str, int] = {}
    places = array("q")
    name = file.name
    extra_keys: dict[str, tuple[str, int]] = {}
    shape = None
    records: Iterator[tuple[int, int, str, object, bytes | None]]
    if isinstance(file, Records):
        from ragscore.loaders.gold_shapes import gold_shape, ragas_gold

        records = ((n, 1, "", obj, None) for n, obj in file)
        head = next(records, None)
        shape = gold_shape(fields, trace_format in ("auto", "ragas") and head is not None and ragas_gold(head[3]))
        records = chain([head] if head is not None else [], records)
    elif fields or trace_format in ("auto", "ragas"):
        from ragscore.loaders.gold_shapes import gold_records

        shape, records = gold_records(file, part, parts, fields, trace_format, *array_or_lines(file), skipped)
    else:
        records = _records(file, part, parts, skipped)
    if shape is not None:  # a question read again would be read raw, not through the shape: keep it
        keep = keep | {KEEP_QUESTION}
    for line, column, text, obj, key in records:
        if shape is not None:
            obj = shape.translate(obj)
            try:
                item = parse_gold_item(obj, name, line, column, "", keep)
            except InputError as exc:
                raise shape.rename(exc) from None
        else:
            item = parse_gold_item(obj, name, line, column, text, keep)
        if parts > 1 and not is_mine(key, item.qid, part, parts):
            others += 1
            continue
        if item.qid in by_qid:
            first = line_of(places[by_qid[item.qid]])
            raise _Fields(obj, file.name, line, column, text).fail(  # type: ignore[arg-type]
                "qid" if "qid" in obj else None,  # type: ignore[operator]
                f"duplicate qid {quote(item.qid)} (first defined on line {first})",
            )
        by_qid[item.qid] = len(items)
        items.append(item)
        places.append(place(line, column))
        if line <= KEY_SAMPLE_LINES and shape is None:
            from ragscore.loaders.near_miss import GOLD_FIELDS, near_misses

            near_misses(obj, line, extra_keys, GOLD_FIELDS)  # type: ignore[arg-type]
    if not items and parts == 1:
        raise InputError(file.name, NO_QUESTIONS)
    return GoldSet(source=file, items=items, by_qid=by_qid, places=places, extra_keys=extra_keys,
                   ragas=shape is not None and shape.ragas, questions_kept=KEEP_QUESTION in keep,
                   total=len(items) + others + sum(skipped))


# A key, followed by its colon: a string "gold_spans" that is a value (a tag, the end of a question) is no key.
# The gold fields that turn something on: a metric family, or sessions (--session session_id).
FAMILY_KEYS: Final = ("gold_spans", "gold_tool_calls", "session_id")
_KEY_TAIL: Final = 256  # bytes of a block kept for a key (and its colon) cut by the next block


def family_keys(spec: str | InputFile | Records, fields: tuple[tuple[str, str], ...] = ()) -> frozenset[str]:
    """Tell which of ``FAMILY_KEYS`` a gold set holds (a mapping of one in ``[gold.fields]`` says so), as far as can
    be told before it is read: a file that can be read again is searched for each key and its colon, byte by byte
    (escaped in a string it does not match, nor as a value), once, until both are found; standard input, a pipe and
    records cannot be, and say none."""
    found = {concept for concept, _ in fields if concept in FAMILY_KEYS}
    file = spec if isinstance(spec, InputFile) else None if isinstance(spec, Records) else InputFile(spec)
    if file is None or not file.rereadable or len(found) == len(FAMILY_KEYS):
        return frozenset(found)
    try:
        stream = InputFile(file.spec, hashed=False)._open()
        try:
            tail = b""
            while block := stream.read(1 << 20):
                for window in (tail + block[:_KEY_TAIL], block):
                    at = 0
                    while len(found) < len(FAMILY_KEYS) and (
                            match := _key_pattern(frozenset(FAMILY_KEYS).difference(found)).search(window, at)):
                        found.add(match.group(1).decode())
                        at = match.end()
                if len(found) == len(FAMILY_KEYS):
                    break
                tail = block[-_KEY_TAIL:]
        finally:
            stream.close()
    except Exception:  # noqa: BLE001 - a file that cannot be read: the gold set's own reading reports it, at its line
        pass
    return frozenset(found)


@cache
def _key_pattern(keys: frozenset[str]) -> re.Pattern[bytes]:
    """Any of the keys, followed by its colon."""
    return re.compile(rb'"(' + b"|".join(sorted(k.encode() for k in keys)) + rb')"[ \t\r\n]*:')


def has_spans(spec: str | InputFile | Records, fields: tuple[tuple[str, str], ...] = ()) -> bool:
    """Tell whether a gold set holds ``gold_spans``, as far as ``family_keys`` can tell before it is read."""
    return "gold_spans" in family_keys(spec, fields)


def span_documents(items: Iterable[GoldItem]) -> frozenset[str]:
    """The documents the gold spans of these items (those that kept them) are spans of."""
    return frozenset(doc for item in items if item.spans for doc, *_ in item.spans)


def check_spans(gold: GoldSet, documents: Mapping[str, str]) -> None:
    """Check every gold span against its document's text (``--corpus``): an error at the gold line of the first
    span whose document the corpus lacks or that ends past its document's end."""
    for position, item in enumerate(gold.items):
        for number, (doc, _start, end, _grade) in enumerate(item.spans or (), 1):
            text = documents.get(doc)
            problem = (f"document {quote(doc)} of \"gold_spans\" entry {number} is not in the corpus" if text is None
                       else f"\"gold_spans\" entry {number} ends at {end:,}, past the end of document {quote(doc)} "
                            f"({len(text):,} characters)" if end > len(text) else None)
            if problem is not None:
                packed = gold.places[position]
                raise SideInputError(gold.source.name, problem, line_of(packed), packed & 0xFFFFFFFF)


def questions_at(spec: str, places: Collection[int]) -> dict[int, str | None]:
    """Read again the question texts of the gold items at these places (see ``place``)."""
    file, wanted = InputFile(spec, hashed=False), set(places)
    out: dict[int, str | None] = {}
    if not wanted:
        return out
    stream = file._open()  # decompressed, when it is compressed
    try:
        start = stream.read(4096).removeprefix(BOM).lstrip(b" \t\r\n")
    finally:
        file._close(stream)
    if start.startswith(b"["):  # a JSON array: parse it whole again
        records: Iterator[tuple[int, int, str, object]] = (
            (line, column, text, obj) for line, column, text, obj, _ in _records(file, 0, 1))
    else:
        records = ((line, 1, "", obj) for line, obj in objects_at(file, {line_of(p) for p in wanted}).items())
    for line, column, text, obj in records:
        if place(line, column) in wanted:
            item = parse_gold_item(obj, file.name, line, column, text, frozenset({KEEP_QUESTION}))
            out[place(line, column)] = item.question
    return out


NO_QUESTIONS: Final = "no questions: a gold set needs at least one (JSON Lines, or a JSON array of objects)"

__all__ = ["GoldItem", "GoldSet", "load_gold", "parse_gold_item"]
