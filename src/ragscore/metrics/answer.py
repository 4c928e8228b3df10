"""Answer metrics (docs/metrics.md): judge one question, then add the judgements up.

Every answer metric is a mean of per-question values over the questions it is defined on
(precision: the answered ones; over_refusal: the answerable ones; ...). ``question_values``
gives those values for one question, and ``AnswerTally`` sums them, so a per-question result
and a total share one definition, and tallies of separate chunks add up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Final, NamedTuple

# Re-exported (the `as` form says so to mypy --strict): the labels began here.
from ragscore.labels import LABEL_ORDER as LABEL_ORDER
from ragscore.labels import PASSING_LABELS as PASSING_LABELS
from ragscore.labels import Label as Label
from ragscore.loaders.gold import GoldItem
from ragscore.loaders.trace import Cites, TraceView
from ragscore.metrics import METRICS
from ragscore.metrics.moments import Moments
from ragscore.metrics.text import Rule, normalise
from ragscore.quoting import quote
from ragscore.settings import QUOTES, Settings, is_refusal_token, refusal_form, refusal_screen


class Miss(StrEnum):
    """Why a citation did not hit."""

    NO_CLAIM = "the trace has no claim"
    INVALID = "citations are not a list of ids"
    NONE = "cited nothing"
    OUT_OF_SCOPE = "cited an id that is not among the retrieved ids"
    NOT_GOLD = "no cited id is a gold citation"
    UNEXPECTED = "cited ids although the question has no gold citations"


class Outcome(NamedTuple):
    """The judgement of one question: compact, and all that reports and totals need."""

    label: Label
    answered: bool
    refused_by: str | None   # "refused", "answer_json.refused", "token", "pattern" or "missing"; None if answered
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
    matched: str | None       # the substring or phrase found in the claim; for "pattern", the refusal pattern
    line: int                 # the trace line that counted; 0 when missing


_new = tuple.__new__
_LIST, _INVALID, _ABSENT = Cites.LIST, Cites.INVALID, Cites.ABSENT
_CHECKS_NOTHING: Final = (Rule.SUBSTR_EMPTY, Rule.NONE)
REFUSAL_LEADING: Final = " \t\n\r" + QUOTES  # what a claim may begin with before its words


def score_question(gold: GoldItem, trace: TraceView, settings: Settings, refusals: frozenset[str]) -> Outcome:
    """Judge one question from its gold item and the trace that counts for it.

    Runs once per trace line, so it favours plain loops over ``in`` on short lists to sets.
    """
    raw = trace.claim
    claim = raw.lower() if raw.isascii() else normalise(raw)
    refused_by: str | None
    if trace.refused is None:
        refused, refused_by = is_refusal_token(claim, refusals), "token"
    else:
        refused, refused_by = trace.refused, trace.refused_from
    answerable = gold.answerable
    full_recall = False
    if answerable:
        top = trace.retrieved[: settings.k]
        full_recall = True
        for c in gold.citations:
            if c not in top:
                full_recall = False
                break
    if refused:
        return _new(Outcome, (
            Label.OVER_REFUSAL if answerable else Label.REFUSAL_OK, False, refused_by, False, False, None,
            True, False, full_recall, None, None, None, None, None, trace.line,
        ))

    cited = trace.citations
    valid = trace.cites is not _INVALID
    outside = None
    if valid:
        retrieved = trace.retrieved
        for c in cited:
            if c not in retrieved:
                outside = c
                break
    gold_cited = gold.citations
    hit_id, miss, miss_id = _citation_hit(trace, gold_cited, valid, outside if settings.scope_citations else None)
    hit = miss is None

    matched = None
    if gold.rule in _CHECKS_NOTHING:
        contained = True
    else:
        contained = False
        for needle in gold.needles:
            if needle in claim:
                contained, matched = True, needle
                break
    forbidden = None
    if gold.forbidden_norm:
        # Once per trace line: no strict= keyword (it costs every call), and forbidden_norm is forbidden normalised.
        forbidden = next((raw for raw, norm in zip(gold.forbidden, gold.forbidden_norm) if norm in claim), None)  # noqa: B905
    cite_share = None
    if answerable and valid and cited:
        if len(cited) == 1:
            cite_share = 1.0 if cited[0] in gold_cited else 0.0
        else:
            unique = dict.fromkeys(cited)
            cite_share = sum(c in gold_cited for c in unique) / len(unique)

    if not answerable:
        label = Label.HALLUCINATION
    elif forbidden is not None:
        label = Label.FORBIDDEN
    elif not hit:
        label = Label.NO_CITATION_HIT
    elif not contained and settings.require_claim:
        label = Label.CLAIM_MISMATCH
    else:
        label = Label.OK
    return _new(Outcome, (
        label, True, None, hit, contained, forbidden, trace.cites is _LIST and trace.claim_from is not None,
        outside is not None, full_recall,
        cite_share, hit_id, miss, miss_id, matched, trace.line,
    ))


def _citation_hit(trace: TraceView, gold_cited: Collection[str], valid: bool, outside: str | None
                  ) -> tuple[str | None, Miss | None, str | None]:
    """Whether an answer's citations hit: (the gold id it cited, None, None), or (None, why not, the id at
    fault). ``outside``: a cited id that was not retrieved, when citations are scoped to the retrieved ids."""
    cited = trace.citations
    if trace.claim_from is None:  # no claim at all: an empty answer, with no hit
        return None, Miss.NO_CLAIM, None
    if not valid:
        return None, Miss.INVALID, None
    if outside is not None:
        return None, Miss.OUT_OF_SCOPE, outside
    if gold_cited:
        for c in cited:
            if c in gold_cited:
                return c, None, None
        return None, Miss.NOT_GOLD if cited else Miss.NONE, None
    return None, Miss.UNEXPECTED if cited else None, None


Judge = Callable[[GoldItem, TraceView, Settings, frozenset[str]], Outcome]


def judge_for(settings: Settings) -> Judge:
    """Return what judges a question under ``settings``: ``score_question`` itself without refusal patterns.

    The patterns are compiled once; a run without them pays nothing for them, per question.
    """
    patterns = settings.refusal_regexes()
    if not patterns:
        return score_question
    screen = refusal_screen(settings.refusal_patterns)  # most claims match none: one search says so

    def judge(gold: GoldItem, trace: TraceView, settings: Settings, refusals: frozenset[str]) -> Outcome:
        if trace.refused is None:  # an explicit "refused" field decides, as without patterns
            raw = trace.claim
            claim = (raw.lower() if raw.isascii() else normalise(raw)).strip()
            if not is_refusal_token(claim, refusals) and (screen is None or screen.search(claim) is not None):
                for pattern in patterns:  # a refusal token is a refusal by its token; else the first pattern
                    if pattern.search(claim) is not None:
                        return _pattern_refusal(gold, trace, settings, claim, pattern)
        return score_question(gold, trace, settings, refusals)

    return judge


# How answers that are refusals begin, broader than the default patterns: an answered claim that
# begins so (after ``LEAD_IN``) is named in a note, as a refusal that no token or pattern caught.
REFUSAL_PREFIXES: Final = (
    "i don't know", "i do not know", "i dont know", "i'm not sure", "i am not sure", "i'm sorry", "i am sorry",
    "sorry", "i apologize", "i apologise", "i'm afraid", "i am afraid", "unfortunately", "i cannot", "i can't",
    "i can not", "i could not", "i couldn't", "i'm unable", "i am unable", "i was unable", "i was not able",
    "i'm not able", "i am not able", "unable to", "i have no", "i don't have", "i do not have", "i did not find",
    "i didn't find", "there is no information", "there's no information", "there is not enough",
    "there isn't enough", "no information", "no relevant", "not enough information", "not enough context",
    "insufficient information", "insufficient context", "the context does not", "the context doesn't",
    "the context is silent", "the context provides no", "the context contains no", "the provided context does not",
    "the provided context doesn't", "the given context does not", "the documents do not", "the documents don't",
    "the document does not", "the document doesn't", "the sources do not", "the passages do not",
    "the text does not", "it is not possible to", "it's not possible to", "cannot be determined",
    "can't be determined", "cannot answer", "can't answer", "no answer",
)
# "Based on the provided context, I cannot find ...": what a refusal often begins with before it says so.
LEAD_IN: Final = re.compile(r"(?:(?:based on|according to|from|given) the (?:provided |given |available )?"
                            r"(?:context|documents?|sources?|passages?|information|text)(?: provided| given)?"
                            r"),? *")
_LEAD_WORDS: Final = ("based on", "according to", "from the", "given the")  # how LEAD_IN begins


def refusal_like(claim: str) -> str | None:
    """Return a refusal pattern for a claim (as written) that begins as a refusal does: the
    ``REFUSAL_PREFIXES`` entry it begins with (``^...``; after quotes or a lead-in such as "Based on the
    context, ": ``\\b...``), an apostrophe read as ``.?``; else None."""
    stripped = (claim.lower() if claim.isascii() else normalise(claim).replace("\u2019", "'")).strip()
    text = stripped.lstrip(REFUSAL_LEADING)  # a pattern's ^ sees the quotes: \b after them
    if text.startswith(REFUSAL_PREFIXES):  # once per answered trace line: most claims end at these two tests
        return ("^" if text == stripped else "\\b") + _prefix(text)
    if not text.startswith(_LEAD_WORDS):
        return None
    lead = LEAD_IN.match(text)
    rest = "" if lead is None else text[lead.end():]
    return "\\b" + _prefix(rest) if rest.startswith(REFUSAL_PREFIXES) else None


def _prefix(text: str) -> str:
    """Return the first of ``REFUSAL_PREFIXES`` that ``text`` begins with, as a pattern."""
    return next(p for p in REFUSAL_PREFIXES if text.startswith(p)).replace("'", ".?")


def refusal_like_note(count: int, examples: list[tuple[int, str, str]], patterns: tuple[str, ...]) -> str:
    """Say how many answered claims read like refusals (``refusal_like``), with the qids of up to
    ``len(examples)`` of them and the pattern that would make the first one a refusal."""
    qids = ", ".join(qid for _, qid, _ in examples)
    listed = qids if count <= len(examples) else "e.g. " + qids
    off = "" if patterns else "; refusal_patterns = [] turned the default patterns off"
    one = count == 1
    return (f"{count} answered {'claim reads like a refusal' if one else 'claims read like refusals'} but "
            f"{'matches' if one else 'match'} no refusal token or pattern (scored as "
            f"{'an answer' if one else 'answers'}{off}): {listed}; "
            f"if {'it is a refusal' if one else 'they are refusals'}, add --refusal-pattern {quote(examples[0][2])} "
            "(or a [scoring] refusal_patterns entry)")


def _pattern_refusal(
    gold: GoldItem, trace: TraceView, settings: Settings, claim: str, pattern: re.Pattern[str]
) -> Outcome:
    """Judge a refusal by ``pattern``: as if the claim were a refusal token, by that pattern."""
    outcome = score_question(gold, trace, settings, frozenset((claim, refusal_form(claim))))
    return outcome._replace(refused_by="pattern", matched=pattern.pattern)


def missing_outcome(gold: GoldItem) -> Outcome:
    """Judge a question that has no trace: a refusal, labelled MISSING_TRACE."""
    full_recall = gold.answerable and not gold.citations  # nothing retrieved covers only an empty set
    return _new(Outcome, (
        Label.MISSING_TRACE, False, "missing", False, False, None, None, False, full_recall, None,
        None, None, None, None, 0,
    ))


def answer_metric_names(settings: Settings) -> tuple[str, ...]:
    """Name the answer metrics in report order (as ``ragscore.metrics`` declares them)."""
    return METRICS.names("answer", (settings.k,))


def question_values(o: Outcome, answerable: bool, settings: Settings) -> tuple[float | None, ...]:
    """Give one question's value of each answer metric (None where it is not counted).

    ``AnswerTally`` adds up the same definitions; a test checks that the two agree.
    """
    a, answered = answerable, o.answered
    return (
        float(o.label is Label.OK) if answered else None,         # precision: over S
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


_LABEL_INDEX: Final = {label: i for i, label in enumerate(LABEL_ORDER)}


def pack(o: Outcome, answerable: bool) -> int:
    """Pack what the totals need of an outcome into 12 bits, so a million of them stay small."""
    return (
        _LABEL_INDEX[o.label]
        | o.answered << 3
        | o.hit << 4
        | o.contained << 5
        | (o.forbidden is not None) << 6
        | (o.compliant is True) << 7
        | (o.compliant is not None) << 8
        | o.fabricated << 9
        | o.full_recall << 10
        | answerable << 11
    )


# Bits beyond pack()'s 12, set by whoever judges a trace (``run_bits``): what a run that cites
# nothing is scored by instead (chr and the citation metrics are undefined then).
# An answered trace that writes citations (a list, even an empty one, or a value that is not a list): a run in
# which none does has no citations to judge; one whose traces write empty lists cites nothing, and scores so.
CITES: Final = 1 << 12
CLAIM_OK: Final = 1 << 13  # an answered trace that would be OK with its citations unchecked


def run_bits(o: Outcome, answerable: bool, trace: TraceView, settings: Settings) -> int:
    """Give the bits of a judged trace that decide, over the whole run, whether it cites anything
    (``CITES``), and how precision counts it if not (``claim_bit``)."""
    if not o.answered:
        return 0
    return (CITES if trace.cites is not _ABSENT else 0) | claim_bit(o, answerable, settings)


def claim_bit(o: Outcome, answerable: bool, settings: Settings) -> int:
    """Give ``CLAIM_OK`` for an answered answerable question with a claim, nothing forbidden in it
    and, unless require_claim is off, the claim contained: OK but for its citations."""
    ok = (o.answered and answerable and o.miss is not Miss.NO_CLAIM and o.forbidden is None
          and (o.contained or not settings.require_claim))
    return CLAIM_OK if ok else 0


def unpack(code: int) -> tuple[Outcome, bool]:
    """Rebuild what ``pack`` kept of an outcome, and whether its question is answerable.

    Enough for ``question_values`` of every answer metric but citation_precision (the share is
    not in the code) and for the label; the texts (forbidden substring, ids) are not kept.
    """
    traced = code >> 8 & 1
    return _new(Outcome, (
        LABEL_ORDER[code & 7], bool(code >> 3 & 1), None, bool(code >> 4 & 1), bool(code >> 5 & 1),
        "" if code >> 6 & 1 else None,  # a forbidden substring was found (which one is not kept)
        bool(code >> 7 & 1) if traced else None, bool(code >> 9 & 1), bool(code >> 10 & 1), None,
        None, None, None, None, 0,
    )), bool(code >> 11 & 1)


def code_values(code: int, settings: Settings, cites: bool = True) -> tuple[float | None, ...]:
    """Give ``question_values`` of a packed code (with ``run_bits``); in a run that cites nothing
    (``cites`` false), precision by the claims alone and None for the metrics that need citations."""
    values = question_values(*unpack(code), settings)
    if cites:
        return values
    answered = code >> 3 & 1
    return tuple(
        (float(code >> 13 & 1) if answered else None) if name == "precision" else None if name in CITING else value
        for name, value in zip(answer_metric_names(settings), values, strict=True)
    )


def outcome_values(o: Outcome, answerable: bool, settings: Settings, cites: bool = True) -> tuple[float | None, ...]:
    """Give ``question_values`` of an outcome in a run that cites anything (``cites``), else
    ``code_values``' (precision by the claims alone, None for the metrics that need citations)."""
    if cites:
        return question_values(o, answerable, settings)
    return code_values(pack(o, answerable) | claim_bit(o, answerable, settings), settings, cites)


def code_passes(code: int) -> bool:
    """Say whether a packed outcome's label is a passing one (OK or REFUSAL_OK)."""
    return LABEL_ORDER[code & 7] in PASSING_LABELS


def _ratio(numerator: float, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@dataclass(slots=True)
class AnswerTally:
    """Counts behind every answer metric; tallies of separate parts add up to the whole.

    Counts are integers and the one non-binary value (citation share) is summarised exactly
    (``metrics.moments``): a run split across processes gives the same bytes as a run in one.
    """

    answered: int = 0
    refused: int = 0
    answerable: int = 0
    unanswerable: int = 0
    missing: int = 0
    hit: int = 0                     # answered answerable items whose citations hit
    contained: int = 0               # answered answerable items that contain the claim
    answered_unanswerable: int = 0
    refused_answerable: int = 0
    traced: int = 0
    compliant: int = 0
    fabricated: int = 0
    forbidden: int = 0
    full_recall: int = 0
    citing: int = 0                  # answered traces that write citations (``CITES``): none, no citation metric
    claim_ok: int = 0                # answered traces OK with their citations unchecked (``CLAIM_OK``)
    shares: Moments = Moments()  # the citation shares (set by whoever counts the questions)
    labels: dict[Label, int] = field(default_factory=lambda: dict.fromkeys(LABEL_ORDER, 0))

    def add_packed(self, code: int, times: int = 1) -> None:
        """Count ``times`` questions judged alike (``pack``'s code; citation shares are added apart)."""
        answerable, answered = code >> 11 & 1, code >> 3 & 1
        if answerable:
            self.answerable += times
            self.full_recall += (code >> 10 & 1) * times
        else:
            self.unanswerable += times
        if answered:
            self.answered += times
            if answerable:
                self.hit += (code >> 4 & 1) * times
                self.contained += (code >> 5 & 1) * times
            else:
                self.answered_unanswerable += times
            self.fabricated += (code >> 9 & 1) * times
            self.forbidden += (code >> 6 & 1) * times
            self.citing += (code >> 12 & 1) * times
            self.claim_ok += (code >> 13 & 1) * times
        else:
            self.refused += times
            self.refused_answerable += answerable * times
        if code >> 8 & 1:  # the question has a trace
            self.traced += times
            self.compliant += (code >> 7 & 1) * times
        label = LABEL_ORDER[code & 7]
        self.labels[label] += times
        self.missing += times if label is Label.MISSING_TRACE else 0

    @classmethod
    def total(cls, tallies: Iterable[AnswerTally]) -> AnswerTally:
        """Add many tallies up at once."""
        total = cls()
        for tally in tallies:
            for name in _COUNTS:
                setattr(total, name, getattr(total, name) + getattr(tally, name))
            total.shares += tally.shares
            for label in LABEL_ORDER:
                total.labels[label] += tally.labels[label]
        return total

    def __add__(self, other: AnswerTally) -> AnswerTally:
        total = AnswerTally()
        for name in _COUNTS:
            setattr(total, name, getattr(self, name) + getattr(other, name))
        total.shares = self.shares + other.shares
        total.labels = {label: self.labels[label] + other.labels[label] for label in LABEL_ORDER}
        return total

    @property
    def cites_nothing(self) -> bool:
        """Tell whether traces were answered and none of them cites anything: the citation metrics
        are undefined then and precision counts the claims alone (decided over the whole run)."""
        return self.answered > 0 and self.citing == 0

    def rates(self, settings: Settings, cites: bool | None = None) -> dict[str, tuple[int, int]]:
        """Return every answer metric that is a count over a count as (count, denominator).

        ``cites`` says whether the run cites anything (None: these counts decide); if not, the
        metrics that need citations are left out and precision counts ``claim_ok``.
        """
        if cites is None:
            cites = not self.cites_nothing
        pairs = (
            (self.labels[Label.OK] if cites else self.claim_ok, self.answered),
            (self.hit, self.answered),
            (self.hit, self.answerable),
            (self.answered_unanswerable, self.unanswerable),
            (self.refused_answerable, self.answerable),
            (self.contained, self.answerable),
            (self.compliant, self.traced),
            None,  # citation_precision is a mean of per-question shares
            (self.fabricated, self.answered),
            (self.forbidden, self.answered),
            (self.full_recall, self.answerable),
        )
        return {name: pair for name, pair in zip(answer_metric_names(settings), pairs, strict=True)
                if pair is not None and (cites or name not in CITING)}

    def metrics(self, settings: Settings, cites: bool | None = None) -> dict[str, float | None]:
        """Return each answer metric; None where its denominator is 0, or where it needs citations
        and the run cites nothing (``cites``: see ``rates``)."""
        if cites is None:
            cites = not self.cites_nothing
        rates = self.rates(settings, cites)
        return {
            name: _ratio(*rates[name]) if name in rates else
            _ratio(self.shares.fsum, self.shares.n) if cites or name not in CITING else None
            for name in answer_metric_names(settings)
        }


# The metrics undefined in a run where no answered trace cites anything.
CITING: Final = METRICS.citing()


_COUNTS: Final = tuple(name for name in AnswerTally.__dataclass_fields__ if name not in ("shares", "labels"))
