"""Optional metric families beside the answer metrics: each one is an entry here, not edits all over.

A family says which metrics it reports, which gold fields it needs kept, and how to score one
question into a row of floats (``None`` when the question is not counted). ``Columns`` stores
those rows compactly while the traces are read and lets a later duplicate trace replace a
question's row; ``Totals`` is what is left of them once a part is scored: each column summarised
exactly (``metrics.moments``), so that parts add up to the bits of the whole.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from itertools import compress
from operator import eq
from typing import TYPE_CHECKING, Final, Protocol

from ragscore.loaders.chunks import ChunkIndex, trace_spans
from ragscore.loaders.tool_calls import NO_CALLS, trace_calls
from ragscore.metrics import METRICS
from ragscore.metrics.moments import Moments, exact_mean, summarise
from ragscore.metrics.names import lookup
from ragscore.metrics.retrieval import (
    retrieval_metric_names,
    retrieval_values,
    similarity_metric_names,
    similarity_values,
    text_relevance,
)
from ragscore.metrics.spans import evidence_row, relevant_chunks
from ragscore.metrics.tools import ROW as TOOLS_ROW
from ragscore.metrics.tools import tools_row

if TYPE_CHECKING:
    from ragscore.loaders.gold import GoldItem
    from ragscore.loaders.trace import TraceView
    from ragscore.settings import Settings


class Family(Protocol):
    """A group of metrics computed together for each question (read-only: the families are frozen)."""

    @property
    def name(self) -> str:
        """Name the family, as settings and reports spell it."""

    @property
    def keep(self) -> frozenset[str]:
        """Name the gold fields the loader must keep (see loaders.gold)."""

    def names(self, settings: Settings) -> tuple[str, ...]:
        """Name the metrics, in report order."""

    @property
    def undefined(self) -> bool:
        """Tell whether a row may leave some of its values undefined (NaN): each metric is then a mean over the
        questions that define it."""

    def width(self, settings: Settings) -> int:
        """Count the floats ``values`` stores per question."""

    def values(
        self, item: GoldItem, trace: TraceView | None, obj: Mapping[str, object] | None, answered: bool,
        settings: Settings,
    ) -> tuple[float, ...] | None:
        """Score one question (``trace`` None: no trace); None when the family does not count it."""

    def summarise(self, columns: Totals, settings: Settings) -> dict[str, float | None]:
        """Turn the summarised rows of every counted question into the reported metrics."""

    def question_metrics(self, row: Sequence[float] | None, settings: Settings) -> dict[str, float | None]:
        """Give one question's values by name (None where it is not counted)."""


class _MeanFamily:
    """A family whose stored row is its metrics, each reported as a mean over counted questions."""

    undefined = False

    def names(self, settings: Settings) -> tuple[str, ...]:
        raise NotImplementedError

    def width(self, settings: Settings) -> int:
        """Store one float per metric."""
        return len(self.names(settings))

    def summarise(self, columns: Totals, settings: Settings) -> dict[str, float | None]:
        """Average each metric over the counted questions."""
        return dict(zip(self.names(settings), columns.means(), strict=True))

    def question_metrics(self, row: Sequence[float] | None, settings: Settings) -> dict[str, float | None]:
        """Pair the names with the row."""
        names = self.names(settings)
        return dict(zip(names, row or (None,) * len(names), strict=True))


def _relevance(item: GoldItem, chunks: ChunkIndex | None) -> dict[str, int]:
    """Grade every judged id: ``gold_relevance`` when given, else 1 for each gold citation, else (with a chunking)
    the chunks that hold the gold spans (``metrics.spans.relevant_chunks``)."""
    if item.relevance is not None:
        return dict(item.relevance)
    if not item.citations and chunks is not None and item.spans:
        return relevant_chunks(item.spans, chunks)
    return dict.fromkeys(item.citations, 1)


def _strings(value: object) -> list[str]:
    """Read a trace's list of texts; anything malformed reads as nothing retrieved."""
    if type(value) is list and all(type(v) is str for v in value):
        return value
    return []


@dataclass(frozen=True, slots=True)
class RetrievalFamily(_MeanFamily):
    """trec_eval's ranked-retrieval metrics over the retrieved ids (or chunk texts); with a chunking (``--chunks``)
    a question that has only gold spans judges the chunk ids by them."""

    name: str = "retrieval"
    keep: frozenset[str] = frozenset({"relevance", "chunks", "spans"})
    chunks: ChunkIndex | None = None

    def names(self, settings: Settings) -> tuple[str, ...]:
        """Name the metrics for the configured cutoffs."""
        return retrieval_metric_names(settings.cutoffs)

    def values(
        self, item: GoldItem, trace: TraceView | None, obj: Mapping[str, object] | None, answered: bool,
        settings: Settings,
    ) -> tuple[float, ...] | None:
        """Score the ranked list of an answerable question that has a relevant id."""
        if not item.answerable:
            return None
        ranked: Sequence[str]
        if item.chunks is not None:
            retrieved = _strings(obj.get("retrieved_chunks")) if obj is not None else []
            ranked, relevance = text_relevance(item.chunks, retrieved)
        else:
            ranked, relevance = (trace.retrieved if trace is not None else ()), _relevance(item, self.chunks)
        if not any(grade >= 1 for grade in relevance.values()):
            return None
        return retrieval_values(ranked, relevance, settings.cutoffs, settings.hybrid_alpha, settings.hybrid_gamma)


@dataclass(frozen=True, slots=True)
class EvidenceFamily(_MeanFamily):
    """Gold evidence as spans of documents (``gold_spans``) against the spans the trace retrieved and cited, counted
    in characters (metrics/spans.py); a chunk id is a span through the chunking (``--chunks``)."""

    name: str = "evidence"
    keep: frozenset[str] = frozenset({"spans"})
    chunks: ChunkIndex | None = None

    def names(self, settings: Settings) -> tuple[str, ...]:
        """Name the metrics for the configured cutoffs."""
        return METRICS.names("evidence", settings.cutoffs)

    def values(
        self, item: GoldItem, trace: TraceView | None, obj: Mapping[str, object] | None, answered: bool,
        settings: Settings,
    ) -> tuple[float, ...] | None:
        """Score an answerable question that has gold spans (no trace: nothing retrieved, nothing cited)."""
        spans = item.spans
        if not item.answerable or not spans:
            return None
        gold = [(doc, start, end) for doc, start, end, _ in spans]
        if trace is None or obj is None:
            return evidence_row(gold, (), (), settings.cutoffs)
        # A retrieved list with an entry that gives no id reads as nothing retrieved (loaders.trace._retrieved):
        # here too, or its spans would count what every other metric and the note say was not retrieved.
        entries = None if trace.retrieved_bad else obj.get("retrieved_ids") if "retrieved_ids" in obj else obj.get(
            "chunks")
        ranked, cited = trace_spans(entries, trace.retrieved, trace.citations if answered else (), self.chunks,
                                    max(settings.cutoffs, default=0))  # no span below the deepest cutoff counts
        return evidence_row(gold, ranked, cited, settings.cutoffs)


@dataclass(frozen=True, slots=True)
class ToolsFamily:
    """The tool calls a trace made against the item's ``gold_tool_calls`` (metrics/tools.py), for every question that
    has them (an empty list too). A row holds the metrics, NaN where a question leaves one undefined (a precision
    when nothing was called, a recall when nothing was expected), then what the notes and the report's ``tools``
    counts say: the calls read, whether the trace said nothing of tool calls and its line, and the entries of its
    ``tool_calls`` list that are no call and its line (NaN: none)."""

    name: str = "tools"
    keep: frozenset[str] = frozenset({"tools"})
    undefined = True

    def names(self, settings: Settings) -> tuple[str, ...]:
        """Name the tool metrics."""
        return METRICS.names("tools")

    def width(self, settings: Settings) -> int:
        """Store the metrics and the five counts of the notes."""
        return len(TOOLS_ROW) + len(TOOLS_COUNTS)

    def values(
        self, item: GoldItem, trace: TraceView | None, obj: Mapping[str, object] | None, answered: bool,
        settings: Settings,
    ) -> tuple[float, ...] | None:
        """Judge the calls of a question that has gold tool calls (no trace: nothing called)."""
        gold = item.tools
        if gold is None:
            return None
        read = trace_calls(obj) if trace is not None and obj is not None else NO_CALLS
        unsaid = trace is not None and not read.found
        line = float(trace.line) if trace is not None else math.nan
        return (*tools_row(read.calls, gold), float(len(read.calls)), float(unsaid), line if unsaid else math.nan,
                float(read.unreadable), line if read.unreadable else math.nan)

    def summarise(self, columns: Totals, settings: Settings) -> dict[str, float | None]:
        """Average each metric over the questions that define it; count the invalid calls."""
        means = columns.means()
        out = dict(zip(TOOLS_ROW, means[: len(TOOLS_ROW)], strict=True))
        out["tool_args_invalid"] = round(columns.columns[TOOLS_ROW.index("tool_args_invalid")].fsum)
        return out

    def question_metrics(self, row: Sequence[float] | None, settings: Settings) -> dict[str, float | None]:
        """Give one question's values (None where it leaves one undefined, or has no gold tool calls)."""
        if row is None:
            return dict.fromkeys(TOOLS_ROW)
        return {name: value if value == value else None for name, value in zip(TOOLS_ROW, row)}  # noqa: B905


TOOLS_COUNTS: Final = ("calls", "unsaid", "unsaid_line", "unreadable", "unreadable_line")  # after the metrics


def tools_counts(columns: Totals) -> dict[str, int]:
    """The tools family's counts over a run: questions with gold tool calls, the calls read, the traces that said
    nothing of tool calls and the entries that were no call (each with its first trace line, 0: none)."""
    at = dict(zip(TOOLS_COUNTS, columns.columns[len(TOOLS_ROW):], strict=True))
    return {"questions": columns.counted, "calls": round(at["calls"].fsum), "unsaid": round(at["unsaid"].fsum),
            "unsaid_line": round(at["unsaid_line"].low) if at["unsaid_line"].n else 0,
            "unreadable": round(at["unreadable"].fsum),
            "unreadable_line": round(at["unreadable_line"].low) if at["unreadable_line"].n else 0}


def _vectors(value: object) -> list[list[float]] | None:
    """Read a list of equal-length number lists; None when it is anything else."""
    if type(value) is not list:
        return None
    width = None
    for vector in value:
        if type(vector) is not list or any(type(x) not in (int, float) for x in vector):
            return None
        if width is None:
            width = len(vector)
        elif len(vector) != width:
            return None
    return value


@dataclass(frozen=True, slots=True)
class SimilarityFamily(_MeanFamily):
    """Retrieval metrics where relevance is cosine similarity between embeddings."""

    name: str = "similarity"
    keep: frozenset[str] = frozenset({"embeddings"})

    def names(self, settings: Settings) -> tuple[str, ...]:
        """Name the metrics for the configured cutoffs."""
        return similarity_metric_names(settings.cutoffs)

    def values(
        self, item: GoldItem, trace: TraceView | None, obj: Mapping[str, object] | None, answered: bool,
        settings: Settings,
    ) -> tuple[float, ...] | None:
        """Score an answerable question that has gold embeddings; bad trace vectors score 0."""
        if not item.answerable or not item.embeddings:
            return None
        retrieved = _vectors(obj.get("retrieved_embeddings")) if obj is not None else None
        dimension = len(item.embeddings[0])
        if not retrieved or len(retrieved[0]) != dimension:
            retrieved = []  # missing, malformed or of another dimension: nothing usable retrieved
        return similarity_values(
            item.embeddings, retrieved, settings.cutoffs, settings.similarity_threshold,
            settings.hybrid_alpha, settings.hybrid_gamma,
        )


def _text_layout() -> tuple[int, int, int]:
    """Count a text row's values, BLEU statistics and chrF statistics.

    The text metrics load only when the family is on: they take a while to import.
    """
    from ragscore.metrics.overlap import text_metric_names
    from ragscore.metrics.overlap.bleu import CHAR_ORDER, MAX_ORDER

    return len(text_metric_names()), 2 + 2 * MAX_ORDER, 3 * CHAR_ORDER


@dataclass(frozen=True, slots=True)
class TextFamily:
    """Text overlap of the claim with the reference answers (SQuAD, ROUGE, BLEU, chrF).

    A row holds the per-question values, then the question's corpus BLEU and chrF statistics
    (integer counts, exact as floats), which add up to the corpus scores.
    """

    undefined = False
    name: str = "text"
    keep: frozenset[str] = frozenset({"answers"})

    def names(self, settings: Settings) -> tuple[str, ...]:
        """Name the per-question metrics, then the corpus ones."""
        return METRICS.names("text")

    def width(self, settings: Settings) -> int:
        """Store the values and the corpus statistics."""
        return sum(_text_layout())

    def values(
        self, item: GoldItem, trace: TraceView | None, obj: Mapping[str, object] | None, answered: bool,
        settings: Settings,
    ) -> tuple[float, ...] | None:
        """Score an answered, answerable question that has reference answers."""
        if trace is None or not answered or not item.answerable or not item.answers:
            return None
        from ragscore.metrics.overlap import text_row

        return text_row(trace.claim, item.answers, stemmer=settings.stemmer, tokenizer=settings.text_tokenizer)

    def summarise(self, columns: Totals, settings: Settings) -> dict[str, float | None]:
        """Average the per-question values; add up the statistics for the corpus scores."""
        from ragscore.metrics.overlap import TextStats, corpus_metric_names, corpus_values, text_metric_names
        from ragscore.metrics.overlap.bleu import MAX_ORDER, BleuStats, ChrfStats

        n_values, n_bleu, _ = _text_layout()
        means = columns.means()
        out = dict(zip(text_metric_names(), means[:n_values], strict=True))
        if not columns.counted:
            return out | dict.fromkeys(corpus_metric_names())
        # Integer sums, exactly.
        totals = [round(m.fsum) for m in columns.columns[n_values:]]
        b = totals[:n_bleu]
        stats = TextStats(
            BleuStats(b[0], b[1], tuple(b[2 : 2 + MAX_ORDER]), tuple(b[2 + MAX_ORDER :])),
            ChrfStats(tuple(totals[n_bleu:])),
        )
        return out | dict(zip(corpus_metric_names(), corpus_values(stats), strict=True))

    def question_metrics(self, row: Sequence[float] | None, settings: Settings) -> dict[str, float | None]:
        """Give the per-question values; corpus scores have none."""
        names = METRICS.names("text")
        n_values = len(names) - 2
        values = row[:n_values] if row else (None,) * n_values
        return dict(zip(names[:n_values], values, strict=True)) | dict.fromkeys(names[n_values:])


class GroundingFamily:
    """The claim's text checked against the text of its evidence (metrics/grounding.py, metrics/leaks.py): the
    passages it cites, else every passage it retrieved. A row holds the question's counts: judged,
    verified, misattributed and unverified quotes, short ones, numbers and unsupported numbers (counted
    when the trace has passage texts), then whether it was answered, leaked, and leaked from its context,
    then its provider citations (metrics/provider_citations.py): all, valid, misplaced, invalid and
    retrieved; the counts add up to the run's rates."""

    undefined = False
    name: str = "grounding"
    keep: frozenset[str] = frozenset({"question"})

    def names(self, settings: Settings) -> tuple[str, ...]:
        """Name the run's rates."""
        return METRICS.names("grounding")

    def width(self, settings: Settings) -> int:
        """Store the counts of ``grounding_row``."""
        return GROUNDING_WIDTH

    def values(
        self, item: GoldItem, trace: TraceView | None, obj: Mapping[str, object] | None, answered: bool,
        settings: Settings,
    ) -> tuple[float, ...] | None:
        """Count an answered claim's quotes, numbers and leaks against its evidence (None: no answer)."""
        if trace is None or not answered or obj is None:
            return None
        return grounding_check()(trace, obj, trace.question if trace.question is not None else item.question)

    def summarise(self, columns: Totals, settings: Settings) -> dict[str, float | None]:
        """Each rate as the run's count over the run's count (None when nothing was judged)."""
        return grounding_rates([round(m.fsum) for m in columns.columns])

    def question_metrics(self, row: Sequence[float] | None, settings: Settings) -> dict[str, float | None]:
        """Give one question's rates."""
        if row is None:
            return dict.fromkeys(METRICS.names("grounding"))
        return grounding_rates([round(v) for v in row])


GROUNDING_WIDTH: Final = 15  # the counts of metrics.grounding.grounding_row


@cache
def grounding_check() -> Callable[[TraceView, Mapping[str, object], str | None], tuple[float, ...]]:
    """The grounding family's check of one answered trace (``metrics.grounding.check``), imported when first
    used: its regular expressions take some 20 ms to compile, which a run without the family never pays."""
    from ragscore.metrics.grounding import check

    return check


def grounding_fractions(counts: Sequence[int]) -> dict[str, tuple[int, int]]:
    """Each grounding rate as (count, denominator) from the summed counts of ``grounding_row``."""
    (judged, verified, misattributed, unverified, _short, numbers, unsupported, answered, leaked, from_context,
     cited, valid, misplaced, invalid, retrieved) = counts
    return {"quote_verified_rate": (verified, judged),
            "quote_misattributed_rate": (misattributed, judged),
            "quote_unverified_rate": (unverified, judged),
            "number_unsupported_rate": (unsupported, numbers),
            "leak_rate": (leaked, answered),
            "leak_from_context_rate": (from_context, answered),
            # over the provider citations whose texts could be checked
            "provider_citation_valid_rate": (valid, valid + misplaced + invalid),
            "provider_citation_retrieved_rate": (retrieved, cited)}


def grounding_rates(counts: Sequence[int]) -> dict[str, float | None]:
    """Each grounding rate (None where its denominator is 0)."""
    return {name: count / total if total else None for name, (count, total) in grounding_fractions(counts).items()}


FAMILIES: Final[dict[str, Family]] = {
    f.name: f for f in (RetrievalFamily(), SimilarityFamily(), TextFamily(), GroundingFamily(), EvidenceFamily(),
                       ToolsFamily())}
ANSWER: Final = "answer"  # the core family, always on (metrics/answer.py)


@dataclass(slots=True)
class Columns:
    """One family's rows for the counted questions, packed in an array of doubles.

    ``offsets[position]`` is where a question's row starts (-1: none) and ``owners`` says whose
    each row is, so a later duplicate trace can replace a row or, when it no longer counts (a
    refusal, for the text family), remove it. After merging parts only the values matter.
    """

    width: int
    values: array[float] = field(default_factory=lambda: array("d"))
    offsets: array[int] = field(default_factory=lambda: array("q"))
    owners: array[int] = field(default_factory=lambda: array("q"))

    def reserve(self, questions: int) -> None:
        """Prepare for ``questions`` positions."""
        self.offsets = array("q", [-1]) * questions

    def put(self, position: int, row: tuple[float, ...] | None) -> None:
        """Store, replace or (with None) remove the row of a question."""
        start = self.offsets[position]
        if row is None:
            if start >= 0:
                self._remove(position, start)
        elif start < 0:
            self.offsets[position] = len(self.values)
            self.owners.append(position)
            self.values.extend(row)
        else:
            self.values[start : start + self.width] = array("d", row)

    def _remove(self, position: int, start: int) -> None:
        """Move the last row into the hole, so the rows stay packed."""
        last = len(self.values) - self.width
        moved = self.owners.pop()
        if start != last:
            self.values[start : start + self.width] = self.values[last:]
            self.owners[start // self.width] = moved
            self.offsets[moved] = start
        del self.values[last:]
        self.offsets[position] = -1

    def row(self, position: int) -> Sequence[float] | None:
        """Return a question's row (a packed array: a report may hold a million), or None."""
        start = self.offsets[position]
        return None if start < 0 else self.values[start : start + self.width]

    @property
    def counted(self) -> int:
        """Count the questions with a row."""
        return len(self.values) // self.width

    def totals(self, spread: Sequence[bool], keys: Sequence[str] | None, seed: str, resamples: int,
               undefined: bool = False) -> Totals:
        """Summarise every column (``metrics.moments.summarise``; ``keys``: the qids of the rows, in order).

        ``undefined``: the family leaves some of a row's values undefined (NaN): each column is summarised over
        the rows that define it, so its mean, interval and count are over those questions alone."""
        w = self.width
        columns = [self.values[i::w] for i in range(w)]
        if not undefined:
            return Totals(w, self.counted, tuple(summarise(columns, spread, keys, seed, resamples)))
        out = []
        for column, wide in zip(columns, spread, strict=True):
            defined = list(map(eq, column, column))  # NaN is not equal to itself
            chosen = keys
            if not all(defined):
                column = array("d", compress(column, defined))
                chosen = None if keys is None else list(compress(keys, defined))
            out.extend(summarise([column], [wide], chosen, seed, resamples))
        return Totals(w, self.counted, tuple(out))


@dataclass(slots=True)
class SampleColumns:
    """One family's rows while every trace line of a question is a sample of it (repeats = "samples"):
    each counted sample's row, kept until the part is done (memory grows with the samples).

    ``finish`` gives each question's row as ``Columns`` holds it: the mean over its counted samples
    of each per-question metric, from their exact sum (``moments.exact_mean``: the same whatever
    the order of the samples), and the sum of the rest (the corpus statistics of the text family,
    which so pool every sample's).
    """

    width: int
    values: array[float] = field(default_factory=lambda: array("d"))
    owners: array[int] = field(default_factory=lambda: array("q"))  # the question of each row

    def reserve(self, questions: int) -> None:
        """Nothing to prepare: rows are added as samples come."""

    def put(self, position: int, row: tuple[float, ...] | None) -> None:
        """Add a sample's row (None: the family does not count that sample)."""
        if row is not None:
            self.values.extend(row)
            self.owners.append(position)

    def finish(self, averaged: Sequence[bool], questions: int, firsts: Sequence[int] = ()) -> Columns:
        """Give each counted question's row: the mean of the ``averaged`` columns, the least defined value of the
        ``firsts`` (a trace line: the first sample's that has one), the sum of the others."""
        rows: dict[int, list[int]] = {}
        for index, position in enumerate(self.owners):
            rows.setdefault(position, []).append(index)
        out = Columns(self.width)
        out.reserve(questions)
        w, values = self.width, self.values
        for position, indices in rows.items():
            samples = [values[i * w : (i + 1) * w] for i in indices]
            out.put(position, tuple(_defined_mean(column) if mean else _least(column) if j in firsts else
                                    math.fsum(column) for j, (column, mean) in enumerate(
                                        zip(zip(*samples, strict=True), averaged, strict=True))))
        return out


def _least(values: Sequence[float]) -> float:
    """The least of the defined values (NaN when none is)."""
    defined = [v for v in values if v == v]
    return min(defined) if defined else math.nan


def first_lines(family: Family) -> tuple[int, ...]:
    """The columns of a family's row that hold a trace line (the tools family's notes), least over samples."""
    if family.name != "tools":
        return ()
    return tuple(len(TOOLS_ROW) + i for i, name in enumerate(TOOLS_COUNTS) if name.endswith("_line"))


def _defined_mean(values: Sequence[float]) -> float:
    """The exact mean of the samples' values that are defined (NaN when none is)."""
    if all(map(eq, values, values)):
        return exact_mean(values)
    defined = list(compress(values, map(eq, values, values)))
    return exact_mean(defined) if defined else math.nan


def averaged(family: Family, settings: Settings) -> tuple[bool, ...]:
    """Say which of a family's stored columns are per-question metrics (averaged over a question's
    samples); the others (corpus statistics) add up."""
    names = family.names(settings)
    out = [False] * family.width(settings)
    for i, name in enumerate(names[: len(out)]):
        spec = lookup(name)
        out[i] = (spec.kind if spec else "mean") in ("mean", "rate")
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Totals:
    """One family's columns over the counted questions, each summarised exactly (``metrics.moments``)."""

    width: int
    counted: int
    columns: tuple[Moments, ...]

    def means(self) -> list[float | None]:
        """Average each column over the questions that define it (every counted one, but in a family that leaves
        some values undefined), as ``math.fsum(column) / n``; None when none does."""
        return [m.fsum / m.n if m.n else None for m in self.columns]

    @classmethod
    def total(cls, parts: Sequence[Totals]) -> Totals:
        """Add up the totals of disjoint sets of questions."""
        return cls(parts[0].width, sum(p.counted for p in parts),
                   tuple(map(Moments.total_of, zip(*(p.columns for p in parts), strict=True))))


def spread(family: Family, settings: Settings) -> tuple[bool, ...]:
    """Say which of a family's stored columns are means with an interval (the others need only
    their sum); with repeated samples a rate's per-question values are shares, so it is one, and with sessions a
    rate's interval resamples sessions as a mean's does (a Wilson interval takes the turns as independent)."""
    kinds = ("mean", "rate") if settings.sampled or settings.session is not None else ("mean",)
    names = family.names(settings)
    out = [False] * family.width(settings)
    for i, name in enumerate(names):
        spec = lookup(name)
        if (spec.kind if spec else "mean") in kinds:
            out[i] = True
    return tuple(out)


def with_chunks(families: Iterable[Family], chunks: ChunkIndex | None) -> list[Family]:
    """The families, those that read chunk ids as spans given the chunking (``--chunks``)."""
    return [replace(f, chunks=chunks) if chunks is not None and isinstance(f, (RetrievalFamily, EvidenceFamily))
            else f for f in families]


def enabled(names: Sequence[str]) -> Iterator[Family]:
    """Yield the optional families named, in a fixed order."""
    for name, family in FAMILIES.items():
        if name in names:
            yield family
