"""Reading a partial's per-question rows (``ragscore.partial_schema`` reads the rest): every value of every
row checked, in C where there are a million of them, each one's error naming its key as jq reaches it."""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from functools import partial
from operator import le
from typing import Any, Final

from ragscore.external import ScoreTotals
from ragscore.json_paths import Damaged, Node, read_number, shown
from ragscore.labels import LABEL_ORDER
from ragscore.metrics.answer import Miss, Outcome, answer_metric_names
from ragscore.metrics.families import Totals, enabled
from ragscore.metrics.grounding import Finding, Findings
from ragscore.metrics.leaks import PATTERNS
from ragscore.metrics.repeats import QuestionSamples
from ragscore.quoting import quote
from ragscore.results import Wants
from ragscore.rows import QuestionRow, RowFile, RowWriter, SpillFolder
from ragscore.settings import Settings
from ragscore.text import Rule


class RowReader:
    """What reading one row needs to know of the partial; each value is checked inline (a run
    may list a million rows), and a key path written only for an error."""

    def __init__(self, settings: Settings, wants: Wants, rows: Node, columns: Sequence[Totals],
                 scores: dict[str, ScoreTotals]) -> None:
        self.widths = tuple(family.width(settings) for family in enabled(settings.families))
        self.undefined = tuple(family.undefined for family in enabled(settings.families))  # null: NaN, undefined
        # A row's values are among those its family's summary counted: from its least to its greatest.
        self.lows = [[m.low for m in totals.columns] for totals in columns]
        self.highs = [[m.high for m in totals.columns] for totals in columns]
        self.scores = {name: (t.values.low, t.values.high) for name, t in scores.items()}
        self.slices = len(wants.by)
        self.answers = len(answer_metric_names(settings))
        self.repeats = 2 * len(settings.pass_k) + 2 if settings.sampled else 0
        names = [family.name for family in enabled(settings.families)]
        self.grounded = "grounding" in names
        self.grounding_at = names.index("grounding") if self.grounded else -1  # the family's row among them
        self.rows = rows

    def at(self, n: int, *steps: int) -> Node:
        """The node of row ``n``, of one of its values, or of one of its outcome's (for an error)."""
        node = Node(self.rows.value[n], self.rows, n)
        if steps:
            node = Node(None, node, steps[0], f"a row's {_ROW[steps[0]]}")
        if len(steps) > 1:
            node = Node(None, node, steps[1], f"the outcome's {_OUTCOME[steps[1]]}" if steps[0] == 4 else "")
        for step in steps[2:]:
            node = Node(None, node, step)
        return node

    def bad(self, n: int, value: object, what: str, *steps: int) -> Damaged:
        node = self.at(n, *steps)
        node.value = value
        return node.expected(what)

    def read(self, n: int, v: Any) -> QuestionRow:
        size = 12 + bool(self.repeats) + self.grounded
        if type(v) is not list or len(v) != size:
            raise Node(v, self.rows, n).expected(f"a row: a list of {size} values")
        place, qid, question, answerable, outcome, citations, rule, family_rows, slices, scores, claim, cited = v[:12]
        if type(place) is not int or not 0 <= place < _PLACES:
            raise self.bad(n, place, "a place in the gold set (an integer of at least 0)", 0)
        if type(qid) is not str:
            raise self.bad(n, qid, "text", 1)
        if question is not None and type(question) is not str:
            raise self.bad(n, question, "text or null", 2)
        if type(answerable) is not bool:
            raise self.bad(n, answerable, "true or false", 3)
        read = self._outcome(n, outcome)
        if type(citations) is not list or any(type(c) is not str for c in citations):
            raise self.bad(n, citations, "a list of text", 5)
        if type(rule) is not str or rule not in _RULES:
            raise self.bad(n, rule, "the name of a containment rule (" + ", ".join(_RULES) + ")", 6)
        if type(family_rows) is not list or len(family_rows) != len(self.widths):
            raise self.bad(n, family_rows, f"a list of {len(self.widths)} families' values", 7)
        values: list[tuple[float, ...] | None] = []
        for index, (row, width) in enumerate(zip(family_rows, self.widths, strict=True)):
            if row is None:
                values.append(None)
                continue
            if type(row) is not list or len(row) != width:
                raise self.bad(n, row, f"null or a list of {width} numbers", 7, index)
            lows, highs = self.lows[index], self.highs[index]
            if self.undefined[index] and None in row:  # a value the question leaves undefined: NaN, unbounded
                if not all(x is None or type(x) in _NUMBERS and low <= x <= high
                           for x, low, high in zip(row, lows, highs, strict=True)):
                    raise self._out_of_bounds(n, index, row)
                values.append(tuple(math.nan if x is None else float(x) for x in row))
                continue
            # In C, as there are a million rows: numbers (no true or false), each within its column's bounds.
            if not _NUMBERS.issuperset(map(type, row)) or not all(map(le, lows, row)) or not all(map(le, row, highs)):
                raise self._out_of_bounds(n, index, row)
            values.append(tuple(map(float, row)))
        if type(slices) is not list or len(slices) != self.slices:
            raise self.bad(n, slices, f"a list of {self.slices} lists of labels (one for each --by path)", 8)
        for index, labels in enumerate(slices):
            if type(labels) is not list:
                raise self.bad(n, labels, "a list of labels (text)", 8, index)
            for at, label in enumerate(labels):
                if type(label) is not str:
                    raise self.bad(n, label, "a label (text)", 8, index, at)
        if type(scores) is not dict:
            raise self.bad(n, scores, "an object of score: number", 9)
        read_scores = {}
        for name, x in scores.items():
            value, bounds = read_number(x, partial(self.at, n, 9)), self.scores.get(name)
            if bounds is None or not (value != value or bounds[0] <= value <= bounds[1]):  # NaN: a null score
                raise self.bad(n, scores, f'scores that "result.scores" summarises (not {quote(name, 40)}: {x!r})', 9)
            read_scores[name] = value
        if claim is not None and type(claim) is not str:
            raise self.bad(n, claim, "text or null", 10)
        if cited is not None and (type(cited) is not list or any(type(c) is not str for c in cited)):
            raise self.bad(n, cited, "null or a list of text", 11)
        return QuestionRow(place, qid, question, answerable, read, tuple(citations), _RULES[rule], tuple(values),
                           tuple(map(tuple, slices)),
                           read_scores,
                           self._sampled(n, v[12]) if self.repeats else None, claim,
                           None if cited is None else tuple(cited),
                           self._findings(n, v[-1], size - 1, values[self.grounding_at]) if self.grounded else None)

    def _findings(self, n: int, v: Any, at: int, counts: Sequence[float] | None) -> Findings | None:
        """Read a row's grounding findings (null: the question was not answered), each of its kind's verdicts,
        as many quotes and unsupported numbers as the family's counts of the row. With repeated samples the findings
        are the last sample's and the counts every answered sample's: the last may be a refusal, and the counts
        hold more than its findings."""
        if v is None:
            if counts is not None and not self.repeats:
                raise Node(v, self.at(n), at, "a row's grounding findings").expected(
                    "the findings of an answered question (its grounding counts are there)")
            return None
        node = Node(v, self.at(n), at, "a row's grounding findings")
        if counts is None:
            raise node.expected("null: the question was not answered (it has no grounding counts)")
        if type(v) is not list or len(v) != 4:
            raise node.expected("the findings: [evidence, passages, numbers, [[kind, start, end, verdict, detail]]]")
        evidence, passages, numbers, items = v
        if evidence not in ("cited", "retrieved", "none") or any(
                type(x) is not int or x < 0 for x in (passages, numbers)) or type(items) is not list:
            raise node.expected("the findings: [evidence, passages, numbers, [[kind, start, end, verdict, detail]]]")
        found = []
        for item in items:
            if (type(item) is not list or len(item) != 5 or item[0] not in ("quote", "number", "leak")
                    or any(type(x) is not int or x < 0 for x in item[1:3]) or item[1] > item[2]
                    or any(type(x) is not str for x in item[3:])):
                raise node.expected("a finding: [kind (quote, number or leak), start, end, verdict, detail]")
            if item[3] not in _VERDICTS[item[0]] or (item[0] == "leak") != bool(item[4]) or (
                    item[0] == "leak" and item[4] not in PATTERNS):
                raise node.expected(f"a {item[0]} finding with one of its verdicts ({', '.join(_VERDICTS[item[0]])})"
                                    + (" and a kind of leak" if item[0] == "leak" else ""))
            found.append(Finding(*item))
        if counts is not None and not self.repeats:
            quotes = sum(f.kind == "quote" for f in found)
            unsupported = sum(f.kind == "number" for f in found)
            if quotes != round(counts[0] + counts[4]) or unsupported != round(counts[6]) or numbers != round(counts[5]):
                raise node.fail("do not match the row's grounding counts (quotes, numbers, unsupported numbers)")
        return Findings(evidence, passages, numbers, tuple(found))

    def _out_of_bounds(self, n: int, index: int, row: list[Any]) -> Damaged:
        """Say which value of a family's row is not a number, or not among those its family counted."""
        node = self.at(n, 7, index)
        for column, (x, low, high) in enumerate(zip(row, self.lows[index], self.highs[index], strict=True)):
            if x is None and self.undefined[index]:
                continue
            value = read_number(x, Node(x, node, column))
            if not low <= value <= high:
                return Node(x, node, column).fail(f"({shown(x)}) is not among the values its family's summary "
                                                  f"counted ({low!r} to {high!r})")
        return node.fail("is damaged")  # not reached: a value above is wrong

    def _outcome(self, n: int, v: Any) -> Outcome:
        if type(v) is not list or len(v) != len(_OUTCOME):
            raise self.bad(n, v, f"an outcome: a list of {len(_OUTCOME)} values", 4)
        (label, answered, refused_by, hit, contained, forbidden, compliant, fabricated, full_recall, share, hit_id,
         miss, miss_id, matched, line) = v
        if type(label) is not str or label not in LABELS:
            raise self.bad(n, label, "a label (" + ", ".join(LABELS) + ")", 4, 0)
        for index, flag in ((1, answered), (3, hit), (4, contained), (7, fabricated), (8, full_recall)):
            if type(flag) is not bool:
                raise self.bad(n, flag, "true or false", 4, index)
        if compliant is not None and type(compliant) is not bool:
            raise self.bad(n, compliant, "true, false or null", 4, 6)
        if (refused_by is None) != answered or refused_by is not None and refused_by not in _REFUSED_BY:
            raise self.bad(n, refused_by, "null for an answer, else " + ", ".join(map(quote, _REFUSED_BY)), 4, 2)
        for index, text in ((5, forbidden), (10, hit_id), (12, miss_id), (13, matched)):
            if text is not None and type(text) is not str:
                raise self.bad(n, text, "text or null", 4, index)
        if miss is not None and (type(miss) is not str or miss not in _MISSES):
            raise self.bad(n, miss, "null or the name of a miss (" + ", ".join(_MISSES) + ")", 4, 11)
        if type(line) is not int or line < 0:
            raise self.bad(n, line, "a trace line (an integer of at least 0)", 4, 14)
        if share is not None and (type(share) not in (int, float) or not 0 <= share <= 1):
            raise self.bad(n, share, "null or a share from 0 to 1", 4, 9)
        return Outcome(LABELS[label], answered, refused_by, hit, contained, forbidden, compliant, fabricated,
                       full_recall, None if share is None else float(share), hit_id,
                       None if miss is None else _MISSES[miss], miss_id, matched, line)

    def _sampled(self, n: int, v: Any) -> QuestionSamples:
        node = self.at(n, 12)
        node.value = v
        count, correct, labels, answer, repeats = node.record(("n", "correct", "labels", "answer", "repeats"),
                                                              "a question's samples")
        counts = tuple(x.count() for x in labels.items())
        if count.count() < 1 or len(counts) != len(LABEL_ORDER) or sum(counts) != count.value or \
                correct.count() > count.value:
            raise node.fail(f"are samples that do not add up ({count.value} samples, {correct.value} correct, "
                            f"labels {list(counts)})")
        means = [tuple(x.optional(Node.number) for x in values.items())
                 for values, size in ((answer, self.answers), (repeats, self.repeats))]
        for values, size, mean in ((answer, self.answers, means[0]), (repeats, self.repeats, means[1])):
            if len(mean) != size:
                raise values.fail(f"holds {len(mean)} means, for {size} metrics")
            if any(x is not None and not 0 <= x <= 1 for x in mean):  # shares of samples, rates, pass@k
                raise values.fail("holds a mean that is not from 0 to 1")
        return QuestionSamples(count.value, correct.value, counts, means[0], means[1])


def read_rows(node: Node, spill: SpillFolder | None, reader: RowReader) -> RowFile:
    """Read a partial's rows (in gold order: each place after the one before), letting go of each
    one's JSON as it is read; with ``spill``, every row goes to a file there."""
    if type(node.value) is not list:
        raise node.expected("a list of rows")
    encoded = node.value
    writer = RowWriter(None, "") if spill is None else spill.writer("partial")
    last, before = -1, ""
    places = array("q")
    try:
        for n, v in enumerate(encoded):
            row = reader.read(n, v)
            if row.place <= last:
                raise Node(v, node, n).fail(f"(question {quote(row.qid)}) is out of gold order: it comes after "
                                            f"question {quote(before)}")
            last, before = row.place, row.qid
            writer.append(row)
            places.append(row.place)
            encoded[n] = None
        file = writer.finish(spill_rest=True)
    finally:
        writer.close()
    file.places = places
    return file


LABELS: Final = {label.value: label for label in LABEL_ORDER}


_MISSES: Final = {miss.name: miss for miss in Miss}


_RULES: Final = {rule.name: rule for rule in Rule}


_REFUSED_BY: Final = ("refused", "answer_json.refused", "token", "pattern", "missing")


_OUTCOME: Final = ("label", "answered", "refused_by", "hit", "contained", "forbidden", "compliant", "fabricated",
                   "full_recall", "cite_share", "hit_id", "miss", "miss_id", "matched", "line")


# What each kind of finding may say (metrics.grounding, metrics.leaks).
_VERDICTS: Final = {"quote": ("verified", "misattributed", "unverified", "short"), "number": ("unsupported",),
                    "leak": ("from_context", "echoed", "invented")}
_ROW: Final = ("place", "qid", "question", "answerable", "outcome", "citations", "rule", "family_rows", "slices",
               "scores", "claim", "cited", "sampled")


_NUMBERS: Final = frozenset({int, float})  # a row's values, as JSON reads them


_PLACES: Final = 1 << 63  # a place is a line and a column in 64 bits (loaders.gold.place)
