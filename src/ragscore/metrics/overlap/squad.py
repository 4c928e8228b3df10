"""Exact match and token F1 by the official SQuAD evaluation rules (v2.0 by default, v1.1 on request).

Normalisation (both versions): lower-case, delete ASCII punctuation, replace the
articles a/an/the by a space, collapse white space. SQuAD v2.0 adds the no-answer
rules: a reference that normalises to nothing is dropped (an item left with none is
scored against the empty answer), and token F1 is 1 when prediction and reference
both have no tokens, 0 when only one has none. v1.1 has neither rule. Either way the
score of a question is the maximum over its references, taken separately for EM and F1.

With ``tokenizer="unicode"`` the words are those of
:func:`~ragscore.metrics.overlap.unicode_tokens.unicode_tokens` less the articles, so
non-ASCII punctuation is removed too and CJK answers get partial credit per character.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from typing import Final, Literal

from .counting import overlap, tally
from .unicode_tokens import check_tokenizer, unicode_tokens

__all__ = ["answer_tokens", "exact_match", "normalize_answer", "squad_scores", "token_f1"]

Rules = Literal["v2", "v1"]

_PUNCTUATION: Final = str.maketrans("", "", string.punctuation)
# A str pattern is Unicode-aware, as the official script's re.UNICODE flag asks:
# "the" inside "théâtre" has no word boundary after it.
_ARTICLES_RE: Final = re.compile(r"\b(a|an|the)\b")
_ARTICLES: Final = frozenset(("a", "an", "the"))


def normalize_answer(text: str, *, tokenizer: str = "reference") -> str:
    """Normalise ``text`` the way SQuAD compares answers (lower-case, no punctuation or articles)."""
    return " ".join(answer_tokens(text, tokenizer=tokenizer))


def answer_tokens(text: str, *, tokenizer: str = "reference") -> list[str]:
    """Split ``text`` into the normalised words SQuAD's token F1 counts."""
    if tokenizer == "reference":
        return _ARTICLES_RE.sub(" ", text.lower().translate(_PUNCTUATION)).split()
    check_tokenizer(tokenizer)
    return [token for token in unicode_tokens(text) if token not in _ARTICLES]


def _f1(prediction: list[str], reference: list[str], rules: Rules) -> float:
    """Score token lists by SQuAD's F1 (v2 gives 1 when both are empty)."""
    if rules == "v2" and (not prediction or not reference):
        return float(prediction == reference)
    same = overlap(tally(prediction), len(prediction), tally(reference), len(reference))
    if same == 0:
        return 0.0
    # The official scripts' operation order, so results agree to the last bit.
    precision = 1.0 * same / len(prediction)
    recall = 1.0 * same / len(reference)
    return (2 * precision * recall) / (precision + recall)


def _check_rules(rules: str) -> None:
    """Raise ``ValueError`` unless ``rules`` is "v2" or "v1"."""
    if rules not in ("v2", "v1"):
        raise ValueError(f"unknown SQuAD rules {rules!r}: expected 'v2' or 'v1'")


def exact_match(prediction: str, reference: str, *, tokenizer: str = "reference") -> float:
    """Return 1.0 if the normalised prediction equals the normalised reference, else 0.0."""
    same = answer_tokens(prediction, tokenizer=tokenizer) == answer_tokens(reference, tokenizer=tokenizer)
    return float(same)


def token_f1(prediction: str, reference: str, *, tokenizer: str = "reference", rules: Rules = "v2") -> float:
    """Return SQuAD's token F1 of ``prediction`` against one ``reference``."""
    _check_rules(rules)
    return _f1(answer_tokens(prediction, tokenizer=tokenizer), answer_tokens(reference, tokenizer=tokenizer), rules)


def squad_scores(
    prediction: str, references: Sequence[str], *, tokenizer: str = "reference", rules: Rules = "v2"
) -> tuple[float, float]:
    """Return (EM, F1) of ``prediction``: each the maximum over ``references`` under ``rules``."""
    _check_rules(rules)
    predicted = answer_tokens(prediction, tokenizer=tokenizer)
    golds = [answer_tokens(reference, tokenizer=tokenizer) for reference in references]
    if rules == "v2":
        golds = [gold for gold in golds if gold] or [[]]  # no-answer rule of the v2.0 script
    if not golds:
        raise ValueError("SQuAD v1.1 needs at least one reference")
    em = max(float(predicted == gold) for gold in golds)
    f1 = max(_f1(predicted, gold, rules) for gold in golds)
    return em, f1
