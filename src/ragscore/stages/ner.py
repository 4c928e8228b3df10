"""Named-entity extraction: entity-level strict and partial matching, token-level scores, type counts.

Definitions (docs/commands/ner.md says the same in prose):

- An entity is a half-open character span ``[start, end)`` of the gold text with a type.
- **Strict** match: same start, end and type. **Partial** match: spans that share at least one
  character (``max(starts) < min(ends)``; adjacent spans do not overlap) and the same type.
- Matching is one-to-one within a document: a gold entity is in at most one pair of a kind, a
  predicted one too. The strict pairs pair equal entities (a repeated entity pairs once per
  copy on the other side, in file order), so their number is the size of the multiset
  intersection of gold and predicted entities.
- The partial pairs are a **maximum** matching: no one-to-one pairing of same-type overlapping
  entities has more pairs. It is built per type in three deterministic steps:

  1. start from the strict pairs;
  2. pair the remaining entities greedily by the largest overlap in characters, ties broken by
     the earliest gold span (start, then end), then the earliest predicted span, then file order;
  3. augmenting paths (Kuhn's algorithm): each gold entity still unpaired, in span order (start,
     end, file order), looks for a chain of reassignments that frees a prediction for it; a gold
     entity tries its candidate predictions by the largest overlap, then the earliest predicted
     span, then file order, depth first. A reassignment never unpairs an entity, it only moves
     a paired gold entity to another prediction it overlaps, so step 3 changes a pair of the
     first two steps only when that gains a pair.

  Since the strict pairs alone are a partial matching and the partial matching is maximum,
  strict counts never exceed partial counts.
- Precision = matched / predicted, recall = matched / gold, F1 their harmonic mean; an empty
  denominator gives 0 (scikit-learn's ``zero_division=0``). Micro averages sum the counts over
  types; macro averages are the mean over the types present in the gold or the predictions,
  summed in type-name order with ``math.fsum`` (the result does not depend on hash seeds).
  When neither file holds any entity, every entity metric is undefined (null).
- Token level: the gold text is split on white space; a token carries type T (gold or predicted)
  when it shares a character with an entity of type T. Per type, a token counts as a true
  positive when it carries T on both sides.
- Predictions carry no text of their own: offsets refer to the gold text, so a predicted span
  must end within it; a prediction that does carry a ``text`` must carry the gold text.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from heapq import heappop, heappush
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
    """Read a prediction line: ``{"id", "entities"}``, and ``text`` (a string) when present.

    Spans are checked against the gold text by ``check_pred`` once the line's gold item is known.
    """
    if "text" in f.obj:
        f.string("text", f.obj["text"])
    return parse_entities(f, None)


def check_pred(f: Fields, gold: Document, pred: tuple[Entity, ...]) -> None:
    """Reject a prediction whose spans end beyond the gold text, or whose own ``text`` is not the gold text."""
    if "text" in f.obj and f.obj["text"] != gold.text:
        raise f.fail("text", "the prediction's text differs from the gold text: offsets would not refer to the same "
                             "characters")
    length = len(gold.text)
    for n, e in enumerate(pred):
        if e.end > length:
            raise f.fail(
                "entities", f"expected entities[{n}].end ({e.end}) to be at most the gold text's length ({length})"
            )


def _overlap(a: Entity, b: Entity) -> int:
    return min(a.end, b.end) - max(a.start, b.start)


@dataclass(frozen=True, slots=True)
class Matching:
    """The one-to-one (gold index, predicted index) pairs of one document, each tuple sorted."""

    strict: tuple[tuple[int, int], ...]
    partial: tuple[tuple[int, int], ...]  # a maximum matching of same-type overlapping entities


def _strict_pairs(gold: Sequence[Entity], pred: Sequence[Entity]) -> list[tuple[int, int]]:
    """Pair equal entities, each copy once, in file order."""
    free_gold: dict[Entity, deque[int]] = {}
    for i, g in enumerate(gold):
        free_gold.setdefault(g, deque()).append(i)
    pairs = []
    for j, p in enumerate(pred):
        waiting = free_gold.get(p)
        if waiting:
            pairs.append((waiting.popleft(), j))
    return pairs


_SCAN: Final = 16  # up to this many predictions of a type, a scan finds the overlapping ones faster than a tree


class _SpanIndex:
    """Predicted entities of each type, sorted by start, under trees of their smallest and largest ends.

    Finding the predictions that overlap a span costs O(k + log n) for k of them when they form
    a few runs, and O((k + 1) log n) at worst, however long or nested the spans are: the work
    follows the overlaps there are, never all pairs.
    """

    def __init__(self, pred: Sequence[Entity]) -> None:
        by_type: dict[str, list[tuple[int, int, int]]] = {}
        for j, p in enumerate(pred):
            by_type.setdefault(p.type, []).append((p.start, p.end, j))
        # type -> (spans (start, end, index) by start, leaf count, min-end tree, max-end tree);
        # node n of a tree has the children 2n and 2n + 1, leaf i is node size + i.
        self.trees: dict[str, tuple[list[tuple[int, int, int]], list[int], int, list[int], list[int]]] = {}
        for kind, spans in by_type.items():
            spans.sort()
            if len(spans) <= _SCAN:
                self.trees[kind] = (spans, [], 0, [], [])
                continue
            size = 1 << (len(spans) - 1).bit_length()
            ends = [end for _, end, _ in spans]
            low = [0] * size + ends + [max(ends) + 1] * (size - len(spans))
            high = [0] * size + ends + [0] * (size - len(spans))
            for node in range(size - 1, 0, -1):
                low[node] = min(low[2 * node], low[2 * node + 1])
                high[node] = max(high[2 * node], high[2 * node + 1])
            self.trees[kind] = (spans, [start for start, _, _ in spans], size, low, high)

    def overlapping(self, g: Entity) -> list[tuple[int, int, int]]:
        """Return the (start, end, index) of the predictions of g's type that share a character with g."""
        found = self.trees.get(g.type)
        if found is None:
            return []
        spans, starts, size, low, high = found
        if not size:
            return [span for span in spans if span[0] < g.end and span[1] > g.start]
        inside = bisect_left(starts, g.start)
        out = spans[inside:bisect_left(starts, g.end)]  # starting within g: they overlap it
        # Those starting before g overlap it when they end after its start: search the tree.
        stack = [(1, 0, size)]  # (node, first leaf, leaves under it)
        while stack:
            node, first, width = stack.pop()
            if first >= inside or high[node] <= g.start:
                continue  # no leaf under the node starts before g and ends inside or after it
            if low[node] > g.start and first + width <= inside:
                out += spans[first:first + width]  # every leaf under the node does
                continue
            half = width >> 1
            stack.append((2 * node + 1, first + half, half))
            stack.append((2 * node, first, half))
        return out


def _maximum_size(gold: Sequence[Entity], pred: Sequence[Entity]) -> int:
    """Return the size of a maximum matching of overlapping spans (one type), in O(n log n).

    The span that ends first, on either side, is paired with the other side's unpaired span that
    overlaps it and ends first (when there is one): exchanging pairs shows no larger matching is
    lost that way. Overlap with a span ending first only needs the other span to start before
    that end, so each side's candidates are a heap by end, filled in order of start.
    """
    sides = (sorted((e.start, e.end, n) for n, e in enumerate(gold)),
             sorted((e.start, e.end, n) for n, e in enumerate(pred)))
    events = sorted([(e.end, 0, n) for n, e in enumerate(gold)] + [(e.end, 1, n) for n, e in enumerate(pred)])
    done: tuple[set[int], set[int]] = (set(), set())  # paired, or passed over with no partner
    waiting: tuple[list[tuple[int, int]], list[tuple[int, int]]] = ([], [])  # (end, n) of started spans
    added = [0, 0]
    size = 0
    for end, side, n in events:
        if n in done[side]:
            continue
        done[side].add(n)
        other = 1 - side
        spans, heap, gone = sides[other], waiting[other], done[other]
        while added[other] < len(spans) and spans[added[other]][0] < end:
            _, other_end, m = spans[added[other]]
            heappush(heap, (other_end, m))
            added[other] += 1
        while heap and heap[0][1] in gone:
            heappop(heap)
        if heap:
            gone.add(heappop(heap)[1])
            size += 1
    return size


def _gold_order(gold: Sequence[Entity], i: int) -> tuple[int, int, int]:
    return gold[i].start, gold[i].end, i


def match_entities(gold: Sequence[Entity], pred: Sequence[Entity]) -> Matching:
    """Pair gold and predicted entities (by index): strict pairs, and a maximum partial matching (see the module doc).

    The work follows the overlaps there are: each gold entity's candidates are found through an
    index and only when needed, the greedy step takes each gold entity's best free candidate from
    a heap instead of sorting every overlapping pair, and step 3 stops once a type's matching has
    the size of a maximum matching (computed directly: no augmenting path is left to find).
    """
    strict = _strict_pairs(gold, pred)
    matcher = _Matcher(gold, pred, strict)
    matcher.greedy()
    matcher.maximise()
    return Matching(tuple(sorted(strict)), tuple(sorted(matcher.pred_of.items())))


class _Matcher:
    """The partial matching of ``match_entities``, built in its steps 2 and 3 over the strict pairs."""

    def __init__(self, gold: Sequence[Entity], pred: Sequence[Entity], strict: Iterable[tuple[int, int]]) -> None:
        self.gold, self.pred = gold, pred
        self.gold_of: dict[int, int] = {j: i for i, j in strict}  # predicted index -> gold index
        self.pred_of: dict[int, int] = {i: j for i, j in strict}
        self.index: _SpanIndex | None = None  # built on first use: not at all when every gold entity pairs strictly
        self.found: dict[int, list[int]] = {}

    def candidates(self, i: int) -> list[int]:
        """The order gold i tries its predictions in: largest overlap, earliest span, file order."""
        js = self.found.get(i)
        if js is None:
            if self.index is None:
                self.index = _SpanIndex(self.pred)
            start, end = self.gold[i].start, self.gold[i].end
            # minus the overlap, then the span and the index: the sort key (conditionals: faster than min/max)
            keyed = sorted([((s if s > start else start) - (e if e < end else end), s, e, j)
                            for s, e, j in self.index.overlapping(self.gold[i])])
            js = self.found[i] = [key[3] for key in keyed]
        return js

    def greedy(self) -> None:
        """Step 2: overlapping pairs by largest overlap, then earliest gold span, earliest predicted span, file
        order. A heap holds each unpaired gold entity's best free candidate: its smallest key is the next pair
        the sorted list of every pair would take."""
        gold, pred, gold_of, pred_of = self.gold, self.pred, self.gold_of, self.pred_of
        heap: list[tuple[int, int, int, int, int, int, int]] = []
        position: dict[int, int] = {}

        def offer(i: int, k: int) -> None:
            js = self.candidates(i)
            while k < len(js) and js[k] in gold_of:
                k += 1
            if k < len(js):
                g, p = gold[i], pred[js[k]]
                position[i] = k
                heappush(heap, (-_overlap(g, p), g.start, g.end, p.start, p.end, i, js[k]))

        for i in range(len(gold)):
            if i not in pred_of:
                offer(i, 0)
        while heap:
            *_, i, j = heappop(heap)
            if j in gold_of:
                offer(i, position[i] + 1)  # taken meanwhile: the next free candidate
            else:
                pred_of[i], gold_of[j] = j, i

    def augment(self, i: int, seen: set[int], dead: set[int]) -> bool:
        """Iterative depth-first search for an augmenting path from gold i (no recursion limit to hit)."""
        gold_of, pred_of = self.gold_of, self.pred_of
        stack: list[tuple[int, int]] = [(i, 0)]  # (gold index, next candidate position)
        path: list[tuple[int, int]] = []  # (gold index, predicted index) edges taken so far
        while stack:
            g, k = stack.pop()
            js = self.candidates(g)
            while k < len(js) and (js[k] in seen or js[k] in dead):
                k += 1
            if k == len(js):
                if path:
                    path.pop()
                continue
            j = js[k]
            seen.add(j)
            stack.append((g, k + 1))
            path.append((g, j))
            if j not in gold_of:
                for pg, pj in path:
                    pred_of[pg], gold_of[pj] = pj, pg
                return True
            stack.append((gold_of[j], 0))
        return False

    def maximise(self) -> None:
        """Step 3. A search that fails leaves the matching as it was, and no prediction it reached can lead to a
        free one: later searches skip those ("dead") until a search succeeds. Skipping them changes no search's
        result, only its cost."""
        gold, pred, pred_of = self.gold, self.pred, self.pred_of
        roots = sorted((i for i in range(len(gold)) if i not in pred_of and self.found.get(i)),
                       key=lambda i: _gold_order(gold, i))
        room: dict[str, int] = {}  # per type: pairs a maximum matching has beyond the current ones
        if roots:
            kinds = {gold[i].type for i in roots}
            by_type: dict[str, tuple[list[Entity], list[Entity]]] = {kind: ([], []) for kind in kinds}
            for side, entities in enumerate((gold, pred)):
                for e in entities:
                    if e.type in by_type:
                        by_type[e.type][side].append(e)
            room = {kind: _maximum_size(*by_type[kind]) for kind in kinds}
            for i in pred_of:
                if gold[i].type in room:
                    room[gold[i].type] -= 1
        dead: set[int] = set()
        for i in roots:
            if not room[gold[i].type]:
                continue  # the type's matching is already maximum: no search can succeed
            seen: set[int] = set()
            if self.augment(i, seen, dead):
                room[gold[i].type] -= 1
                dead.clear()
            else:
                dead |= seen


def entity_tokens(text: str, entities: Iterable[Entity]) -> set[tuple[int, str]]:
    """Return the (token index, type) pairs: white-space tokens that share a character with an entity."""
    starts, ends = [], []
    for m in _TOKEN_RE.finditer(text):
        starts.append(m.start())
        ends.append(m.end())
    out = set()
    for e in entities:
        # Tokens are disjoint and in order: those with end > e.start and start < e.end form a run.
        for n in range(bisect_right(ends, e.start), bisect_left(starts, e.end)):
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
        for kind in sorted({e.type for e in gold} | {e.type for e in pred}):
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
        for _, counts in sorted(self.per_type.items()):
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
        rows = [type_scores(self.per_type[kind]) for kind in sorted(self.per_type)]
        out: dict[str, float | None] = {name: float(micro[name]) for name in names}
        out.update({f"macro_{n}": math.fsum(float(r[n]) for r in rows) / len(rows) for n in macro})
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

