"""Load a gold set (JSON Lines or a JSON array) into validated, immutable items."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain

from ragscore.errors import InputError
from ragscore.loaders.jsonl import BOM, InputFile, decode_text, describe, iter_json_array, iter_jsonl
from ragscore.metrics.text import Rule, containment_rule, normalise

# Fields the contract defines; anything else is kept in ``GoldItem.extra`` for slicing.
_KNOWN = frozenset(
    {
        "qid",
        "question",
        "q",
        "answerable",
        "gold_claim_substr",
        "gold_claim",
        "gold_citations",
        "gold_ids",
        "gold_relevance",
        "gold_answers",
        "forbidden_substr",
    }
)


@dataclass(frozen=True, slots=True)
class GoldItem:
    """One question of the gold set, with its containment rule prepared once."""

    qid: str
    question: str | None
    answerable: bool
    line: int
    claim_substr: tuple[str, ...] | None = None
    claim: str | None = None
    citations: tuple[str, ...] = ()
    relevance: Mapping[str, int] | None = None
    answers: tuple[str, ...] | None = None
    forbidden: tuple[str, ...] = ()
    extra: Mapping[str, object] | None = None
    rule: Rule = Rule.NONE
    needles: tuple[str, ...] = ()
    citation_set: frozenset[str] = field(default=frozenset())
    forbidden_norm: tuple[str, ...] = ()


@dataclass(slots=True)
class GoldSet:
    """The gold items in file order, indexed by qid (and lazily by question text)."""

    source: InputFile
    items: list[GoldItem]
    by_qid: dict[str, int]
    _by_question: dict[str, int | None] | None = None

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
        position = self._by_question[question]
        if position is None:
            raise LookupError(question)
        return position


class _Fields:
    """Typed access to one decoded object, raising InputError with the field's position."""

    def __init__(self, obj: dict[str, object], source: str, line: int, column: int, text: str) -> None:
        self.obj, self.source, self.line, self.column, self.text = obj, source, line, column, text

    def fail(self, key: str | None, message: str) -> InputError:
        """Build an error pointing at ``key``'s value (or at the object when it is absent)."""
        line, column = self.line, self.column
        if key is not None:
            match = re.search(r'"' + re.escape(key) + r'"\s*:\s*', self.text)
            if match:
                before = self.text[: match.end()]
                newlines = before.count("\n")
                line += newlines
                column = match.end() - before.rfind("\n") if newlines else column + match.end()
        return InputError(self.source, message, line, column)

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

    def strings(self, key: str, value: object) -> tuple[str, ...]:
        """Return a list of strings as a tuple."""
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)  # type: ignore[arg-type]
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
                raise self.fail(key, f'expected "{key}" to be a list of ids (strings or integers), got an array holding {describe(v)}')
        return tuple(out)


def _first_wrong(values: list[object], kind: type) -> str:
    return next(describe(v) for v in values if not isinstance(v, kind))


def parse_gold_item(obj: object, source: str, line: int, column: int, text: str) -> GoldItem:
    """Validate one decoded gold object and build its item."""
    if not isinstance(obj, dict):
        raise InputError(source, f"expected a JSON object, got {describe(obj)}", line, column)
    f = _Fields(obj, source, line, column, text)
    if "answerable" not in obj:
        raise f.fail(None, 'missing required field "answerable" (true or false)')
    answerable = obj["answerable"]
    if not isinstance(answerable, bool):
        raise f.fail("answerable", f'expected "answerable" to be true or false, got {describe(answerable)}')
    q_key, question = f.aliased("question", "q")
    if question is not None and not isinstance(question, str):
        raise f.fail(q_key, f'expected "{q_key}" to be a string, got {describe(question)}')
    if obj.get("qid") is not None:
        qid = f.ident("qid", obj["qid"])
    elif question:
        qid = question  # an item without a qid is known by its question text
    else:
        raise f.fail(None, 'expected a "qid" or a "question" to identify the item')

    substr = f.strings("gold_claim_substr", obj["gold_claim_substr"]) if "gold_claim_substr" in obj else None
    claim = obj.get("gold_claim")
    if claim is not None and not isinstance(claim, str):
        raise f.fail("gold_claim", f'expected "gold_claim" to be a string, got {describe(claim)}')
    c_key, cites = f.aliased("gold_citations", "gold_ids")
    citations = f.ids(c_key, cites) if cites is not None else ()
    relevance = _relevance(f, obj.get("gold_relevance"))
    answers = f.strings("gold_answers", obj["gold_answers"]) if obj.get("gold_answers") is not None else None
    forbidden = f.strings("forbidden_substr", obj["forbidden_substr"]) if obj.get("forbidden_substr") is not None else ()
    if any(not normalise(s) for s in forbidden):
        raise f.fail("forbidden_substr", 'expected "forbidden_substr" entries to be non-empty strings')
    extra = {k: v for k, v in obj.items() if k not in _KNOWN} or None
    rule, needles = containment_rule(substr, claim)
    return GoldItem(
        qid=qid,
        question=question,
        answerable=answerable,
        line=line,
        claim_substr=substr,
        claim=claim,
        citations=citations,
        relevance=relevance,
        answers=answers,
        forbidden=forbidden,
        extra=extra,
        rule=rule,
        needles=needles,
        citation_set=frozenset(citations),
        forbidden_norm=tuple(normalise(s) for s in forbidden),
    )


def _relevance(f: _Fields, value: object) -> dict[str, int] | None:
    if value is None:
        return None
    if isinstance(value, dict) and all(isinstance(g, int) and not isinstance(g, bool) for g in value.values()):
        return dict(value)  # type: ignore[arg-type]
    got = describe(value) if not isinstance(value, dict) else "a grade that is not an integer"
    raise f.fail("gold_relevance", f'expected "gold_relevance" to map ids to integer grades, got {got}')


def _records(file: InputFile) -> Iterator[tuple[int, int, str, object]]:
    """Yield the gold file's records, choosing JSON Lines or a JSON array by its first character."""
    lines = file.raw_lines()
    head: list[bytes] = []
    for raw in lines:
        head.append(raw)
        stripped = raw.lstrip(b" \t\r\n")
        if len(head) == 1 and stripped.startswith(BOM):
            stripped = stripped[len(BOM) :].lstrip(b" \t\r\n")
        if stripped:
            break
    document = b"".join(head)
    if document.lstrip(b" \t\r\n").removeprefix(BOM).lstrip(b" \t\r\n").startswith(b"["):
        document = (document + b"".join(lines)).removeprefix(BOM)
        return iter_json_array(decode_text(document, file.name, 1), file.name)
    return iter_jsonl(file, chain(head, lines))


def load_gold(spec: str) -> GoldSet:
    """Read and validate a gold set; raise InputError at the first problem."""
    file = InputFile(spec)
    items: list[GoldItem] = []
    by_qid: dict[str, int] = {}
    for line, column, text, obj in _records(file):
        item = parse_gold_item(obj, file.name, line, column, text)
        if item.qid in by_qid:
            first = items[by_qid[item.qid]].line
            raise _Fields(obj, file.name, line, column, text).fail(  # type: ignore[arg-type]
                "qid" if "qid" in obj else None,  # type: ignore[operator]
                f'duplicate qid "{item.qid}" (first defined on line {first})',
            )
        by_qid[item.qid] = len(items)
        items.append(item)
    if not items:
        raise InputError(file.name, "no questions: a gold set needs at least one (JSON Lines, or a JSON array of objects)")
    return GoldSet(source=file, items=items, by_qid=by_qid)


__all__ = ["GoldItem", "GoldSet", "load_gold", "parse_gold_item"]
