"""Grounding: what an answer's text says checked against the passages it was given (issue 34).

Pure functions, no gold set needed:

- ``quotes`` finds the spans of a claim inside double quotes (``"..."`` or ``“...”``) and
  ``judge_quote`` says whether one is ``verified`` (in its evidence), ``misattributed`` (not in its
  evidence but in another retrieved passage) or ``unverified``; a quote shorter than
  ``MIN_QUOTE`` characters once folded (``ragscore.text.fold_text``) is ``short`` and not judged;
- the claim's numbers are checked against its evidence's (``metrics.figures``), and its leaks placed
  (``metrics.leaks``);
- ``grounding_row`` counts what a trace's claim holds of each (the family's row), and
  ``grounding_findings`` lists each at its characters (``--explain`` and the per-question rows).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Final, NamedTuple

from ragscore.loaders.corpus import passage_texts
from ragscore.metrics.figures import Number, numbers, unsupported
from ragscore.metrics.leaks import ECHOED, FROM_CONTEXT, leaks, placed
from ragscore.metrics.provider_citations import NO_CITATIONS, provider_counts
from ragscore.text import fold_text, spaced_singly

if TYPE_CHECKING:
    from ragscore.loaders.trace import TraceView

MIN_QUOTE: Final = 12  # characters, once folded: a shorter quote is a phrase, not a quotation to check

# --- quotes ---------------------------------------------------------------------------------------

class Quote(NamedTuple):
    """A quoted span of a claim: its text and its offsets in the claim (the quotation marks excluded)."""

    text: str
    start: int
    end: int


VERIFIED: Final = "verified"
MISATTRIBUTED: Final = "misattributed"
UNVERIFIED: Final = "unverified"
SHORT: Final = "short"


def quotes(claim: str) -> list[Quote]:
    """Every span of the claim inside straight or typographic double quotes, in order: from a mark, the
    characters up to the next closing mark, one or more, none of them a line break (nor, inside typographic
    marks, another opening one).

    Found by searches in C (a regular expression would try every character), each character looked at a few
    times at most: where a typographic quote fails for what its text holds, every opening mark before that
    fails too, and the next one tried is the last one there (or the first after the line break)."""
    out: list[Quote] = []
    straight, opening = claim.find('"'), claim.find("\u201c")
    while straight >= 0 or opening >= 0:
        if straight < 0 or 0 <= opening < straight:
            start = opening + 1
            end = claim.find("\u201d", start)
            if end < 0:  # no closing mark after it: no typographic quote from here on
                opening = -1
                continue
            blocked = max(claim.rfind("\u201c", start, end), claim.rfind("\n", start, end))
            if end == start or blocked >= 0:
                opening = claim.find("\u201c", max(blocked, start))
                continue
        else:
            start = straight + 1
            end = claim.find('"', start)
            if end < 0:  # no closing mark after it: no straight quote from here on
                straight = -1
                continue
            if end == start or claim.find("\n", start, end) >= 0:
                straight = end  # the closing mark may open the next one
                continue
        out.append(_new_quote(Quote, (claim[start:end], start, end)))
        if 0 <= straight <= end:
            straight = claim.find('"', end + 1)
        if 0 <= opening <= end:
            opening = claim.find("\u201c", end + 1)
    return out


_new_quote: Final = tuple.__new__  # a Quote without its __new__'s call in Python


def judge_quote(quote: str, evidence: Sequence[str], others: Sequence[str] = ()) -> str:
    """``verified`` when the folded quote is in a folded evidence passage, ``misattributed`` when it is
    only in one of ``others`` (passages retrieved but not its evidence), else ``unverified``; ``short``
    when it is shorter than ``MIN_QUOTE`` characters once folded."""
    needle = fold_text(quote).strip(" .,;:!?'\"-")  # quotes are seldom repeated: not kept
    if len(needle) < MIN_QUOTE:
        return SHORT
    if _copied(quote, evidence) or _any_holds(evidence, needle):
        return VERIFIED
    if _copied(quote, others) or _any_holds(others, needle):
        return MISATTRIBUTED
    return UNVERIFIED


def _copied(quote: str, passages: Sequence[str]) -> bool:
    """Whether an ASCII quote is in an ASCII passage as it is (most quotes that verify are copied so): then
    its folded needle is in the folded passage, folding ASCII being lower-casing each character and
    collapsing white space, and the quote's white space inside it being the passage's there."""
    if quote.isascii():
        for passage in passages:
            if quote in passage and passage.isascii():
                return True
    return False


def _any_holds(passages: Sequence[str], needle: str) -> bool:
    """Whether any of the passages folded holds a folded needle (which has no white space but single spaces
    inside it).

    An ASCII passage is first looked in as it is, lower-cased: the needle's single spaces, between characters
    that are no white space, are kept by folding, so where it is found it is found folded. Only where it is
    in none are the passages folded, but for an ASCII one whose only white space is single spaces: folding
    it changes nothing more."""
    lows = []
    for passage in passages:
        low = passage.lower() if passage.isascii() else ""
        if needle in low:
            return True
        lows.append(low)
    for passage, low in zip(passages, lows, strict=True):
        if not (low and spaced_singly(low)) and needle in _folded_passage(passage):
            return True
    return False


@lru_cache(maxsize=4096)
def _folded_passage(passage: str) -> str:
    """A passage folded, kept once per distinct text: passages recur across traces, and normalising one costs
    many times what looking it up does (an ASCII one spaced singly is not folded at all)."""
    return fold_text(passage)


def evidence_of(ids: Sequence[str], cited: Iterable[str], passages: Sequence[str]
                ) -> tuple[list[str], list[str], bool]:
    """An answer's evidence, the other passages it retrieved, and whether the evidence is its citations: the
    passages it cites, when they are one text per retrieved id and it cites one of them; else all of them."""
    wanted = set(cited)
    if wanted and len(ids) == len(passages):
        evidence: list[str] = []
        others: list[str] = []
        for i, text in zip(ids, passages, strict=True):
            (evidence if i in wanted else others).append(text)
        if evidence:
            return evidence, others, True
    return list(passages), [], False


def grounding_counts(claim: str, evidence: Sequence[str], others: Sequence[str],
                     leaked: Sequence[tuple[int, int]] = ()) -> tuple[float, ...]:
    """A claim's counts against its evidence: judged, verified, misattributed and unverified quotes, short
    quotes, numbers, unsupported numbers (a number inside a leak's span, ``leaked``, is the leak's, not one)."""
    judged = [judge_quote(q.text, evidence, others) for q in quotes(claim)]
    short = judged.count(SHORT)
    claimed = claim_numbers(claim, leaked)
    return (float(len(judged) - short), float(judged.count(VERIFIED)), float(judged.count(MISATTRIBUTED)),
            float(judged.count(UNVERIFIED)), float(short), float(len(claimed)),
            float(len(unsupported(claim, evidence, claimed)) if claimed else 0))


def check(trace: TraceView, obj: Mapping[str, object], question: str | None) -> tuple[float, ...]:
    """``grounding_row`` of an answered trace with the passage texts its record ``obj`` carries."""
    return grounding_row(trace, passage_texts(obj), question, obj)  # type: ignore[arg-type]  # a dict


def grounding_row(trace: TraceView, texts: Sequence[str], question: str | None,
                  obj: Mapping[str, object] | None = None) -> tuple[float, ...]:
    """An answered trace's grounding counts (``metrics.families.GroundingFamily``): its claim against its
    passage ``texts`` (one per retrieved id, or none), for leaks the question it was asked, and its provider's
    citations (the response ``obj`` keeps): judged, verified, misattributed, unverified and short quotes,
    numbers, unsupported numbers, answered, leaked, leaked from the context, provider citations, valid,
    misplaced, invalid and retrieved ones."""
    found = leaks(trace.claim)
    counts: tuple[float, ...] = _NO_TEXT_COUNTS
    if texts:
        evidence, others, _ = evidence_of(trace.retrieved, trace.citations, texts)
        counts = grounding_counts(trace.claim, evidence, others, [(leak.start, leak.end) for leak in found])
    leaked = from_context = 0.0
    if found:
        where = [placed(leak, texts, question) for leak in found]
        leaked, from_context = float(any(w != ECHOED for w in where)), float(FROM_CONTEXT in where)
    cited = (provider_counts(obj, trace.retrieved, texts)
             if obj is not None and ("response" in obj or "raw_response" in obj) else NO_CITATIONS)
    return (*counts, 1.0, leaked, from_context, *cited)


_NO_TEXT_COUNTS: Final = (0.0,) * 7


class Finding(NamedTuple):
    """One thing --metrics grounding found in a claim, at its characters: a quote (its verdict), an unsupported
    number, or a leak (its kind in ``detail``, and where its value came from as its verdict)."""

    kind: str     # "quote", "number" or "leak"
    start: int
    end: int
    verdict: str  # a quote's verdict; "unsupported"; a leak's from_context, echoed or invented
    detail: str = ""


class Findings(NamedTuple):
    """What --metrics grounding found in one answered claim, and which evidence it was judged against."""

    evidence: str            # "cited" (the passages it cites), "retrieved" (every one) or "none" (no texts)
    passages: int            # how many passages that evidence is
    numbers: int             # the claim's numbers (those supported are not listed)
    items: tuple[Finding, ...]


def claim_numbers(claim: str, leaked: Sequence[tuple[int, int]] = ()) -> list[Number]:
    """A claim's numbers, but those inside a leak's span (a card's digits, a phone number): they are the leak."""
    found = numbers(claim)
    if leaked:
        found = [n for n in found if not any(start < n.end and n.start < end for start, end in leaked)]
    return found


def grounding_findings(claim: str, ids: Sequence[str], cited: Iterable[str], passages: Sequence[str],
                       question: str | None) -> Findings:
    """Each quote, each unsupported number and each leak of a claim, in order of their characters: what
    ``--explain`` and the per-question rows list (``grounding_counts`` counts the same)."""
    items: list[Finding] = []
    claimed: list[Number] = []
    evidence: list[str] = []
    kind = "none"
    found = leaks(claim)
    if passages:
        evidence, others, from_citations = evidence_of(ids, cited, passages)
        kind = "cited" if from_citations else "retrieved"
        items += [Finding("quote", q.start, q.end, judge_quote(q.text, evidence, others)) for q in quotes(claim)]
        claimed = claim_numbers(claim, [(leak.start, leak.end) for leak in found])
        items += [Finding("number", n.start, n.end, "unsupported") for n in unsupported(claim, evidence, claimed)]
    items += [Finding("leak", leak.start, leak.end, placed(leak, passages, question), leak.kind) for leak in found]
    return Findings(kind, len(evidence), len(claimed), tuple(sorted(items, key=lambda f: (f.start, f.end))))


# --- numbers --------------------------------------------------------------------------------------
