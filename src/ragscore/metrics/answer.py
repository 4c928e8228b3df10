"""Answer metrics (SPEC §2): judge one question, then add the judgements up.

Every answer metric is a mean of per-question values over the questions it is defined on
(precision: the answered ones; over_refusal: the answerable ones; ...). ``question_values``
gives those values for one question, and ``AnswerTally`` sums them, so a per-question result
and a total share one definition, and tallies of separate chunks add up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final

from ragscore.loaders.gold import GoldItem
from ragscore.loaders.trace import Cites, TraceView
from ragscore.metrics.registry import Direction, MetricSpec, register
from ragscore.metrics.text import find_needle, normalise
from ragscore.settings import Settings


class Label(StrEnum):
    """The one label each question gets; the first rule that applies, in this order."""

    MISSING_TRACE = "MISSING_TRACE"
    REFUSAL_OK = "REFUSAL_OK"
    HALLUCINATION = "HALLUCINATION"
    OVER_REFUSAL = "OVER_REFUSAL"
    FORBIDDEN = "FORBIDDEN"
    NO_CITATION_HIT = "NO_CITATION_HIT"
    CLAIM_MISMATCH = "CLAIM_MISMATCH"
    OK = "OK"


PASSING_LABELS: Final = frozenset({Label.OK, Label.REFUSAL_OK})
LABEL_ORDER: Final = (
    Label.OK,
    Label.REFUSAL_OK,
    Label.OVER_REFUSAL,
    Label.HALLUCINATION,
    Label.NO_CITATION_HIT,
    Label.CLAIM_MISMATCH,
    Label.FORBIDDEN,
    Label.MISSING_TRACE,
)


class Miss(StrEnum):
    """Why a citation did not hit."""

    INVALID = "citations are not a list of ids"
    NONE = "cited nothing"
    OUT_OF_SCOPE = "cited an id that is not among the retrieved ids"
    NOT_GOLD = "no cited id is a gold citation"
    UNEXPECTED = "cited ids although the question has no gold citations"


@dataclass(frozen=True, slots=True)
class Outcome:
    """The judgement of one question: compact, and all that reports and totals need."""

    label: Label
    answered: bool
    refused_by: str | None   # "refused", "answer_json.refused", "token" or "missing"; None if answered
    hit: bool
    contained: bool
    forbidden: str | None     # the forbidden substring found in the claim
    compliant: bool | None    # None for a question without a trace
    fabricated: bool
    full_recall: bool
    cite_share: float | None  # share of cited ids that are gold (answered, answerable, citing)
    hit_id: str | None        # the citation that hit
    miss: Miss | None
    miss_id: str | None       # the out-of-scope citation, for Miss.OUT_OF_SCOPE
    matched: str | None       # the substring or phrase found in the claim
    line: int                 # the trace line that counted; 0 when missing


def score_question(gold: GoldItem, trace: TraceView, settings: Settings, refusals: frozenset[str]) -> Outcome:
    """Judge one question from its gold item and the trace that counts for it."""
    claim = normalise(trace.claim)
    if trace.refused is not None:
        refused, refused_by = trace.refused, trace.refused_from
    else:
        refused, refused_by = claim.strip() in refusals, "token"
    compliant = refused or trace.cites is Cites.LIST
    full_recall = gold.answerable and gold.citation_set.issubset(trace.retrieved[: settings.k])
    if refused:
        return Outcome(
            Label.REFUSAL_OK if not gold.answerable else Label.OVER_REFUSAL,
            False, refused_by, False, False, None, compliant, False, full_recall, None, None, None, None, None,
            trace.line,
        )

    cited = trace.citations
    valid = trace.cites is not Cites.INVALID
    retrieved = frozenset(trace.retrieved) if cited and valid else frozenset()
    outside = next((c for c in cited if c not in retrieved), None) if valid else None
    hit_id = miss_id = None
    miss: Miss | None = None
    if not valid:
        miss = Miss.INVALID
    elif settings.scope_citations and outside is not None:
        miss, miss_id = Miss.OUT_OF_SCOPE, outside
    elif gold.citations:
        hit_id = next((c for c in cited if c in gold.citation_set), None)
        if hit_id is None:
            miss = Miss.NOT_GOLD if cited else Miss.NONE
    elif cited:
        miss = Miss.UNEXPECTED
    hit = miss is None

    contained, matched = find_needle(gold.rule, gold.needles, claim)
    forbidden = next((raw for raw, norm in zip(gold.forbidden, gold.forbidden_norm) if norm in claim), None)
    cite_share = None
    if gold.answerable and valid and cited:
        unique = dict.fromkeys(cited)
        cite_share = sum(c in gold.citation_set for c in unique) / len(unique)

    if not gold.answerable:
        label = Label.HALLUCINATION
    elif forbidden is not None:
        label = Label.FORBIDDEN
    elif not hit:
        label = Label.NO_CITATION_HIT
    elif settings.require_claim and not contained:
        label = Label.CLAIM_MISMATCH
    else:
        label = Label.OK
    return Outcome(
        label, True, None, hit, contained, forbidden, compliant, outside is not None, full_recall, cite_share,
        hit_id, miss, miss_id, matched, trace.line,
    )


def missing_outcome(gold: GoldItem) -> Outcome:
    """Judge a question that has no trace: a refusal, labelled MISSING_TRACE."""
    full_recall = gold.answerable and not gold.citations  # nothing retrieved covers only an empty set
    return Outcome(
        Label.MISSING_TRACE, False, "missing", False, False, None, None, False, full_recall, None,
        None, None, None, None, 0,
    )


def _metrics(k: int) -> tuple[str, ...]:
    return (
        "precision",
        "chr",
        "chr_answerable",
        "under_refusal",
        "over_refusal",
        "containment",
        "compliance",
        "citation_precision",
        "fabricated_citation_rate",
        "forbidden_rate",
        f"full_recall@{k}",
    )


def answer_metric_names(settings: Settings) -> tuple[str, ...]:
    """Name the answer metrics in report order."""
    return _metrics(settings.k)


def question_values(o: Outcome, gold: GoldItem, settings: Settings) -> tuple[float | None, ...]:
    """Give one question's value of each answer metric (None where it is not counted)."""
    a, answered = gold.answerable, o.answered
    ok = a and o.hit and (o.contained or not settings.require_claim) and o.forbidden is None
    return (
        float(ok) if answered else None,                          # precision: over S
        float(a and o.hit) if answered else None,                 # chr: over S
        float(answered and o.hit) if a else None,                 # chr_answerable: over A
        None if a else float(answered),                           # under_refusal: over U
        float(not answered) if a else None,                       # over_refusal: over A
        float(answered and o.contained) if a else None,           # containment: over A
        None if o.compliant is None else float(o.compliant),      # compliance: over traced
        o.cite_share,                                             # citation_precision
        float(o.fabricated) if answered else None,                # fabricated_citation_rate: over S
        float(o.forbidden is not None) if answered else None,     # forbidden_rate: over S
        float(o.full_recall) if a else None,                      # full_recall@k: over A
    )


@dataclass(slots=True)
class AnswerTally:
    """Sums and counts of every answer metric, plus the question counts; tallies add up."""

    width: int = 11
    sums: list[float] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    answered: int = 0
    refused: int = 0
    answerable: int = 0
    unanswerable: int = 0
    missing: int = 0
    labels: dict[Label, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sums = self.sums or [0.0] * self.width
        self.counts = self.counts or [0] * self.width
        self.labels = self.labels or dict.fromkeys(LABEL_ORDER, 0)

    def add(self, o: Outcome, gold: GoldItem, settings: Settings) -> None:
        """Count one judged question."""
        sums, counts = self.sums, self.counts
        for i, value in enumerate(question_values(o, gold, settings)):
            if value is not None:
                sums[i] += value
                counts[i] += 1
        self.answered += o.answered
        self.refused += not o.answered
        self.answerable += gold.answerable
        self.unanswerable += not gold.answerable
        self.missing += o.label is Label.MISSING_TRACE
        self.labels[o.label] += 1

    def __add__(self, other: AnswerTally) -> AnswerTally:
        return AnswerTally(
            self.width,
            [a + b for a, b in zip(self.sums, other.sums)],
            [a + b for a, b in zip(self.counts, other.counts)],
            self.answered + other.answered,
            self.refused + other.refused,
            self.answerable + other.answerable,
            self.unanswerable + other.unanswerable,
            self.missing + other.missing,
            {label: self.labels[label] + other.labels[label] for label in LABEL_ORDER},
        )

    def metrics(self, settings: Settings) -> dict[str, float | None]:
        """Return each answer metric: its mean over the questions counted, None when none were."""
        return {
            name: (s / n if n else None)
            for name, s, n in zip(answer_metric_names(settings), self.sums, self.counts)
        }


register(
    MetricSpec("precision", Direction.HIGHER, "answer",
               "answered answerable items that hit a gold citation, contain the claim and nothing forbidden, over answered items"),
    MetricSpec("chr", Direction.HIGHER, "answer",
               "citation hit rate: answered answerable items whose citations hit, over answered items"),
    MetricSpec("chr_answerable", Direction.HIGHER, "answer",
               "answered answerable items whose citations hit, over answerable items"),
    MetricSpec("under_refusal", Direction.LOWER, "answer",
               "unanswerable items that were answered (hallucination rate), over unanswerable items"),
    MetricSpec("over_refusal", Direction.LOWER, "answer",
               "answerable items that were refused (or have no trace), over answerable items"),
    MetricSpec("containment", Direction.HIGHER, "answer",
               "answered answerable items whose claim contains a gold substring or phrase, over answerable items"),
    MetricSpec("compliance", Direction.HIGHER, "answer",
               "traces that refuse or carry a citations list, over questions that have a trace"),
    MetricSpec("citation_precision", Direction.HIGHER, "answer",
               "mean share of cited ids that are gold citations, over answered answerable items that cite"),
    MetricSpec("fabricated_citation_rate", Direction.LOWER, "answer",
               "answered items citing an id they did not retrieve, over answered items"),
    MetricSpec("forbidden_rate", Direction.LOWER, "answer",
               "answered items whose claim contains a forbidden substring, over answered items"),
    MetricSpec("full_recall@K", Direction.HIGHER, "answer",
               "answerable items whose gold citations are all in the top K retrieved, over answerable items"),
)
