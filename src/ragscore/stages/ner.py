"""Named-entity extraction: entity-level strict and partial matching, token-level scores, type counts.

Definitions (the README's "Pipeline stages" section says the same in prose):

- An entity is a half-open character span ``[start, end)`` of the gold text with a type.
- **Strict** match: same start, end and type. **Partial** match: spans that share at least one
  character (``max(starts) < min(ends)``; adjacent spans do not overlap) and the same type.
- Matching is one-to-one within a document: a gold entity is matched at most once, a predicted
  one at most once. Exact (strict) pairs are made first; then the remaining entities of the same
  type are paired greedily by the largest overlap in characters, ties broken by the earliest gold
  span, then the earliest predicted span, then file order. Every strict pair is also a partial
  pair, so strict counts never exceed partial counts.
- Precision = matched / predicted, recall = matched / gold, F1 their harmonic mean; an empty
  denominator gives 0 (scikit-learn's ``zero_division=0``). Micro averages sum the counts over
  types; macro averages are the mean over the types present in the gold or the predictions.
  When neither file holds any entity, every entity metric is undefined (null).
- Token level: the gold text is split on white space; a token carries type T (gold or predicted)
  when it shares a character with an entity of type T. Per type, a token counts as a true
  positive when it carries T on both sides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import Final

from ragscore.loaders.jsonl import describe
from ragscore.stages.rates import prf
from ragscore.stages.records import Fields, Joined

_TOKEN_RE: Final = re.compile(r"\S+")


@dataclass(frozen=True, slots=True, order=True)
class Entity:
    """A typed, half-open character span."""

    start: int
    end: int
    type: str


@dataclass(frozen=True, slots=True)
class Document:
    """A gold text with its entities (a prediction has no text of its own: offsets refer to the gold's)."""

    text: str
    entities: tuple[Entity, ...]


def _offset(f: Fields, value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise f.fail("entities", f"expected {where} to be an integer >= 0, got {describe(value)}")
    return value


def parse_entities(f: Fields, text_length: int | None) -> tuple[Entity, ...]:
    """Read the ``entities`` list: each ``{"start", "end", "type"}``, 0 <= start < end (<= the text's length)."""
    entities = []
    for n, item in enumerate(f.items("entities", f.require("entities", "a list of {start, end, type}"))):
        where = f"entities[{n}]"
        for key in ("start", "end", "type"):
            if key not in item:
                raise f.fail("entities", f'missing "{key}" in {where} (each entity is {{"start", "end", "type"}})')
        start = _offset(f, item["start"], f"{where}.start")
        end = _offset(f, item["end"], f"{where}.end")
        kind = item["type"]
        if not isinstance(kind, str) or not kind:
            raise f.fail("entities", f"expected {where}.type to be a non-empty string, got {describe(kind)}")
        if end <= start:
            raise f.fail("entities", f"expected {where}.end ({end}) to be greater than its start ({start})")
        if text_length is not None and end > text_length:
            raise f.fail("entities", f"expected {where}.end ({end}) to be at most the text's length ({text_length})")
        entities.append(Entity(start, end, kind))
    return tuple(entities)


def parse_gold(f: Fields) -> Document:
    """Read a gold line: ``{"id", "text", "entities"}``; spans must lie inside the text."""
    text = f.string("text", f.require("text", "a string"))
    return Document(text, parse_entities(f, len(text)))


def parse_pred(f: Fields) -> tuple[Entity, ...]:
    """Read a prediction line: ``{"id", "entities"}`` (a ``text`` field, if any, is not read)."""
    return parse_entities(f, None)


def _overlap(a: Entity, b: Entity) -> int:
    return min(a.end, b.end) - max(a.start, b.start)


@dataclass(frozen=True, slots=True)
class Matching:
    """The one-to-one pairs of one document: strict pairs, then further (overlapping) partial pairs."""

    strict: tuple[tuple[int, int], ...]
    partial_only: tuple[tuple[int, int], ...]

    @property
    def partial(self) -> tuple[tuple[int, int], ...]:
        """Return every partial pair (the strict ones included)."""
        return self.strict + self.partial_only


def match_entities(gold: Sequence[Entity], pred: Sequence[Entity]) -> Matching:
    """Pair gold and predicted entities (by index) one-to-one, strict pairs first (see the module doc)."""
    free_gold: dict[Entity, list[int]] = {}
    for i, g in enumerate(gold):
        free_gold.setdefault(g, []).append(i)
    strict: list[tuple[int, int]] = []
    used_gold: set[int] = set()
    used_pred: set[int] = set()
    for j, p in enumerate(pred):
        waiting = free_gold.get(p)
        if waiting:
            i = waiting.pop(0)
            strict.append((i, j))
            used_gold.add(i)
            used_pred.add(j)
    candidates = [
        (-_overlap(g, p), g.start, g.end, p.start, p.end, i, j)
        for i, g in enumerate(gold) if i not in used_gold
        for j, p in enumerate(pred) if j not in used_pred and g.type == p.type and _overlap(g, p) > 0
    ]
    partial: list[tuple[int, int]] = []
    for *_, i, j in sorted(candidates):
        if i not in used_gold and j not in used_pred:
            partial.append((i, j))
            used_gold.add(i)
            used_pred.add(j)
    return Matching(tuple(sorted(strict)), tuple(sorted(partial)))


def entity_tokens(text: str, entities: Iterable[Entity]) -> set[tuple[int, str]]:
    """Return the (token index, type) pairs: white-space tokens that share a character with an entity."""
    spans = [m.span() for m in _TOKEN_RE.finditer(text)]
    out = set()
    for e in entities:
        for n, (start, end) in enumerate(spans):
            if start < e.end and e.start < end:
                out.add((n, e.type))
    return out


@dataclass(slots=True)
class TypeCounts:
    """Sufficient statistics of one entity type (or of all types), which add up across documents."""

    gold: int = 0
    predicted: int = 0
    strict_tp: int = 0
    partial_tp: int = 0
    token_gold: int = 0
    token_predicted: int = 0
    token_tp: int = 0

    def __iadd__(self, other: TypeCounts) -> TypeCounts:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        return self


def type_scores(c: TypeCounts) -> dict[str, float | int]:
    """Return one type's scores and counts, in the order the reports show them."""
    sp, sr, sf = prf(c.strict_tp, c.predicted, c.gold)
    pp, pr, pf = prf(c.partial_tp, c.predicted, c.gold)
    tp, tr, tf = prf(c.token_tp, c.token_predicted, c.token_gold)
    return {
        "strict_precision": sp, "strict_recall": sr, "strict_f1": sf,
        "partial_precision": pp, "partial_recall": pr, "partial_f1": pf,
        "token_precision": tp, "token_recall": tr, "token_f1": tf,
        "gold": c.gold, "predicted": c.predicted, "strict_matched": c.strict_tp, "partial_matched": c.partial_tp,
    }


@dataclass(slots=True)
class NerResult:
    """Counts per entity type, summed over the documents."""

    per_type: dict[str, TypeCounts] = field(default_factory=dict)

    def add_document(self, text: str, gold: Sequence[Entity], pred: Sequence[Entity]) -> None:
        """Match one document's entities and add its counts."""
        matching = match_entities(gold, pred)
        for kind in {e.type for e in gold} | {e.type for e in pred}:
            self.per_type.setdefault(kind, TypeCounts())
        for e in gold:
            self.per_type[e.type].gold += 1
        for e in pred:
            self.per_type[e.type].predicted += 1
        for i, _ in matching.strict:
            self.per_type[gold[i].type].strict_tp += 1
        for i, _ in matching.partial:
            self.per_type[gold[i].type].partial_tp += 1
        gold_tokens, pred_tokens = entity_tokens(text, gold), entity_tokens(text, pred)
        for _, kind in gold_tokens:
            self.per_type[kind].token_gold += 1
        for _, kind in pred_tokens:
            self.per_type[kind].token_predicted += 1
        for _, kind in gold_tokens & pred_tokens:
            self.per_type[kind].token_tp += 1

    def total(self) -> TypeCounts:
        """Sum the counts over every type (the micro-average's statistics)."""
        total = TypeCounts()
        for counts in self.per_type.values():
            total += counts
        return total

    def metrics(self) -> dict[str, float | None]:
        """Return the micro and macro averages by metric name (null when there is no entity at all)."""
        names = ("strict_precision", "strict_recall", "strict_f1", "partial_precision", "partial_recall", "partial_f1",
                 "token_precision", "token_recall", "token_f1")
        macro = ("strict_precision", "strict_recall", "strict_f1", "partial_precision", "partial_recall", "partial_f1")
        if not self.per_type:
            return {**dict.fromkeys(names), **dict.fromkeys(f"macro_{n}" for n in macro)}
        micro = type_scores(self.total())
        rows = [type_scores(c) for c in self.per_type.values()]
        out: dict[str, float | None] = {name: float(micro[name]) for name in names}
        out.update({f"macro_{n}": sum(float(r[n]) for r in rows) / len(rows) for n in macro})
        return out

    def per_type_table(self) -> dict[str, dict[str, float | int]]:
        """Return each type's scores and counts, types sorted by name."""
        return {kind: type_scores(self.per_type[kind]) for kind in sorted(self.per_type)}

    def distribution(self) -> dict[str, dict[str, int]]:
        """Return predicted versus gold counts per type; ``over_prediction`` = predicted - gold."""
        return {
            kind: {"gold": c.gold, "predicted": c.predicted, "over_prediction": c.predicted - c.gold}
            for kind, c in sorted(self.per_type.items())
        }


def score_ner(joined: Joined[Document, tuple[Entity, ...]]) -> NerResult:
    """Score every gold document; a missing prediction predicts no entity."""
    result = NerResult()
    for _, doc, pred in joined.pairs:
        result.add_document(doc.text, doc.entities, pred or ())
    return result

