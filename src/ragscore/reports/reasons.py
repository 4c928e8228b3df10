"""Say in words why a question got its label."""

from __future__ import annotations

import json
from typing import Protocol

from ragscore.metrics.answer import Label, Miss, Outcome
from ragscore.settings import DEFAULT_REFUSAL_NAMES
from ragscore.text import Rule


class Checked(Protocol):
    """What the wording needs of a question besides its outcome: a gold item, or a question's row."""

    @property
    def citations(self) -> tuple[str, ...]: ...

    @property
    def rule(self) -> Rule: ...


def quote(text: str) -> str:
    """Quote a piece of input for a message, escaping what JSON escapes."""
    return json.dumps(text, ensure_ascii=False)


def refusal_reason(o: Outcome) -> str:
    """Say which rule made the answer a refusal."""
    if o.refused_by == "missing":
        return "no trace for this question (scored as a refusal)"
    if o.refused_by == "token":
        return "the claim is a refusal token"
    if o.refused_by == "pattern" and o.matched is not None:
        named = DEFAULT_REFUSAL_NAMES.get(o.matched)
        if named is not None:
            return f"the claim matches the default refusal pattern {quote(named)}"
        return f"the claim matches the refusal pattern {quote(o.matched)}"
    return f'the "{o.refused_by}" field is true'


def citation_reason(o: Outcome, gold: Checked) -> str:
    """Say why the citations hit or missed."""
    if o.hit_id is not None:
        return f"cited gold id {quote(o.hit_id)}"
    if o.miss is None:
        return "no gold citations and none cited"
    if o.miss is Miss.OUT_OF_SCOPE:
        return f"cited {quote(o.miss_id or '')}, which is not among the retrieved ids"
    if o.miss is Miss.NOT_GOLD:
        return f"no cited id is a gold citation ({', '.join(gold.citations)})"
    return o.miss.value


def containment_reason(o: Outcome, gold: Checked) -> str:
    """Say how the claim was checked against the gold claim."""
    if o.matched is not None:
        return f"the claim contains {quote(o.matched)}"
    if gold.rule is Rule.SUBSTR:
        return "the claim contains none of the gold substrings"
    if gold.rule is Rule.PHRASES:
        return "the claim contains none of the gold claim's phrases"
    if gold.rule in (Rule.SUBSTR_SHORT, Rule.NO_PHRASES):
        return f"nothing to match: {gold.rule.value}"
    return "no claim check"


def reason(o: Outcome, gold: Checked) -> str:
    """Explain a label in one line."""
    label = o.label
    if label is Label.MISSING_TRACE:
        return refusal_reason(o)
    if label is Label.REFUSAL_OK:
        return f"unanswerable and refused: {refusal_reason(o)}"
    if label is Label.OVER_REFUSAL:
        return f"answerable but refused: {refusal_reason(o)}"
    if label is Label.HALLUCINATION:
        return "unanswerable but answered"
    if label is Label.FORBIDDEN:
        return f"the claim contains the forbidden substring {quote(o.forbidden or '')}"
    if label is Label.NO_CITATION_HIT:
        return citation_reason(o, gold)
    if label is Label.CLAIM_MISMATCH:
        return f"{citation_reason(o, gold)}, but {containment_reason(o, gold)}"
    return f"{citation_reason(o, gold)}; {containment_reason(o, gold)}"

