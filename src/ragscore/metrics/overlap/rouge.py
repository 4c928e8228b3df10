"""ROUGE-1, ROUGE-2, ROUGE-L and ROUGE-Lsum as Google's rouge-score package computes them.

Tokenizer (rouge-score's default): lower-case, every run of characters other than
``[a-z0-9]`` is a separator, so non-ASCII letters split or vanish ("café" -> "caf",
"東京" -> nothing). With stemming, only tokens longer than three characters go through
the Porter stemmer. ``tokenizer="unicode"`` swaps in
:func:`~ragscore.metrics.overlap.unicode_tokens.unicode_tokens` and stems only the
ASCII tokens longer than three characters (Porter's rules are for English).

ROUGE-N clips n-gram counts; ROUGE-L uses the longest common subsequence of the
whole texts; ROUGE-Lsum splits both texts into sentences at newlines, takes for each
reference sentence the union of its LCS positions with every predicted sentence, and
counts a hit only while both texts still have an unused copy of the token (ROUGE
1.5.5's rule against double counting). With several references the score of each
type is the whole score (P, R, F) of the reference with the highest F, the first on
ties (``RougeScorer.score_multi``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Final, NamedTuple

from .counting import Tally, overlap, tally
from .porter import stem
from .unicode_tokens import check_tokenizer, unicode_tokens

__all__ = [
    "ROUGE_TYPES",
    "Score",
    "lcs_length",
    "rouge_multi",
    "rouge_scores",
    "rouge_tokens",
]

ROUGE_TYPES: Final = ("rouge1", "rouge2", "rougeL", "rougeLsum")

# rouge-score replaces runs of [^a-z0-9] by a space and splits on white space: the same
# tokens as finding the runs of [a-z0-9] directly.
_WORD_RE: Final = re.compile(r"[a-z0-9]+")


class Score(NamedTuple):
    """Precision, recall and F1 of one ROUGE type, each in [0, 1]."""

    precision: float
    recall: float
    fmeasure: float


_ZERO: Final = Score(0.0, 0.0, 0.0)

Tokenize = Callable[[str], list[str]]


def _tokenizer(stemmer: bool, tokenizer: str) -> Tokenize:
    """Build the tokenize function for the options, with a stem memo private to the caller."""
    check_tokenizer(tokenizer)
    reference = tokenizer == "reference"
    if not stemmer:
        if reference:
            return lambda text: _WORD_RE.findall(text.lower())
        return unicode_tokens
    stems: dict[str, str] = {}  # one scoring call stems each distinct word once

    def stemmed(token: str) -> str:
        """Stem one token, remembering the answer for this scoring call."""
        result = stems.get(token)
        if result is None:
            result = stems[token] = stem(token)
        return result

    if reference:
        # rouge-score stems only tokens longer than three characters.
        return lambda text: [stemmed(t) if len(t) > 3 else t for t in _WORD_RE.findall(text.lower())]
    return lambda text: [stemmed(t) if len(t) > 3 and t.isascii() else t for t in unicode_tokens(text)]


def rouge_tokens(text: str, *, stemmer: bool = False, tokenizer: str = "reference") -> list[str]:
    """Tokenize ``text`` as ROUGE compares it (rouge-score's default tokenizer unless "unicode")."""
    return _tokenizer(stemmer, tokenizer)(text)


def _fmeasure(precision: float, recall: float) -> float:
    """Return the harmonic mean, 0 when both are 0 (rouge-score's operation order)."""
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _ngrams(tokens: list[str], n: int) -> Tally:
    """Count the n-grams of ``tokens``."""
    if n == 1:
        return tally(tokens)
    return tally(list(zip(*(tokens[i:] for i in range(n)), strict=False)))  # shifted copies end early: not strict


def _ngram_score(target: list[str], prediction: list[str], n: int) -> Score:
    """Score clipped n-gram overlap (ROUGE-N)."""
    shared = overlap(_ngrams(target, n), max(len(target) - n + 1, 0), _ngrams(prediction, n),
                     max(len(prediction) - n + 1, 0))
    precision = shared / max(len(prediction) - n + 1, 1)
    recall = shared / max(len(target) - n + 1, 1)
    return Score(precision, recall, _fmeasure(precision, recall))


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Return the length of the longest common subsequence of ``a`` and ``b``."""
    if len(a) < len(b):
        a, b = b, a  # bits over the longer, one step per token of the shorter
    if not b:
        return 0
    # Bit-parallel LCS (Allison-Dix, Hyyro): bit i of v is cleared once a[i] ends a
    # longer common subsequence; O(len(a) * len(b) / machine word) instead of a DP table.
    positions: dict[str, int] = {}
    for i, token in enumerate(a):
        positions[token] = positions.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for token in b:
        matches = positions.get(token)
        if matches:
            u = v & matches
            v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def _lcs_score(target: list[str], prediction: list[str]) -> Score:
    """Score the longest common subsequence of the whole texts (ROUGE-L)."""
    if not target or not prediction:
        return _ZERO
    common = lcs_length(target, prediction)
    precision = common / len(prediction)
    recall = common / len(target)
    return Score(precision, recall, _fmeasure(precision, recall))


def _lcs_positions(reference: list[str], candidate: list[str]) -> list[int]:
    """Return the positions in ``reference`` of one LCS with ``candidate``, traced as rouge-score does."""
    if not reference or not candidate:
        return []
    # The union of positions depends on which LCS is traced, so this keeps the
    # reference's full table and its tie-breaking (prefer dropping a reference token).
    table = [[0] * (len(candidate) + 1)]
    for token in reference:
        above = table[-1]
        row = [0]
        for j, other in enumerate(candidate):
            row.append(above[j] + 1 if token == other else max(above[j + 1], row[j]))
        table.append(row)
    i, j = len(reference), len(candidate)
    positions: list[int] = []
    while i > 0 and j > 0:
        if reference[i - 1] == candidate[j - 1]:
            positions.append(i - 1)
            i -= 1
            j -= 1
        elif table[i][j - 1] > table[i - 1][j]:
            j -= 1
        else:
            i -= 1
    return positions


def _summary_lcs_score(references: list[list[str]], candidates: list[list[str]]) -> Score:
    """Score union-LCS over sentences without double counting (ROUGE-Lsum)."""
    if not references or not candidates:
        return _ZERO
    m = sum(map(len, references))
    n = sum(map(len, candidates))
    if not m or not n:
        return _ZERO
    left_reference = Counter(chain.from_iterable(references))
    left_candidate = Counter(chain.from_iterable(candidates))
    hits = 0
    for reference in references:
        union: set[int] = set()
        for candidate in candidates:
            union.update(_lcs_positions(reference, candidate))
        # Order does not matter: the budget is per token value.
        for position in union:
            token = reference[position]
            if left_candidate[token] > 0 and left_reference[token] > 0:
                hits += 1
                left_candidate[token] -= 1
                left_reference[token] -= 1
    recall = hits / m
    precision = hits / n
    return Score(precision, recall, _fmeasure(precision, recall))


class _Prepared(NamedTuple):
    """A text's tokens, and its tokenized newline-separated sentences when it has several lines."""

    text: str
    tokens: list[str]
    lines: list[list[str]] | None


def _prepare(text: str, tokenize: Tokenize) -> _Prepared:
    """Tokenize ``text`` once for every ROUGE type."""
    lines = [tokenize(line) for line in text.split("\n") if line] if "\n" in text else None
    return _Prepared(text, tokenize(text), lines)


def _sentences(prepared: _Prepared) -> list[list[str]]:
    """Return the tokenized sentences ROUGE-Lsum compares (empty lines dropped)."""
    if prepared.lines is not None:
        return prepared.lines
    return [prepared.tokens] if prepared.text else []


def _score_prepared(target: _Prepared, prediction: _Prepared) -> tuple[Score, Score, Score, Score]:
    """Score one reference against the prediction for the four ROUGE types."""
    rouge_l = _lcs_score(target.tokens, prediction.tokens)
    if target.lines is None and prediction.lines is None:
        # One sentence each: the union LCS is the LCS and no hit can be double counted.
        rouge_lsum = rouge_l
    else:
        rouge_lsum = _summary_lcs_score(_sentences(target), _sentences(prediction))
    return (
        _ngram_score(target.tokens, prediction.tokens, 1),
        _ngram_score(target.tokens, prediction.tokens, 2),
        rouge_l,
        rouge_lsum,
    )


def rouge_scores(
    target: str, prediction: str, *, stemmer: bool = False, tokenizer: str = "reference"
) -> dict[str, Score]:
    """Score ``prediction`` against one ``target`` (``RougeScorer.score``), keyed by ROUGE type."""
    tokenize = _tokenizer(stemmer, tokenizer)
    scores = _score_prepared(_prepare(target, tokenize), _prepare(prediction, tokenize))
    return dict(zip(ROUGE_TYPES, scores, strict=True))


def rouge_multi(
    targets: Sequence[str], prediction: str, *, stemmer: bool = False, tokenizer: str = "reference"
) -> dict[str, Score]:
    """Score ``prediction`` against several targets: per type, the score with the best F (first on ties)."""
    if not targets:
        raise ValueError("ROUGE needs at least one reference")
    tokenize = _tokenizer(stemmer, tokenizer)
    predicted = _prepare(prediction, tokenize)
    best: list[Score] | None = None
    for target in targets:
        scores = _score_prepared(_prepare(target, tokenize), predicted)
        if best is None:
            best = list(scores)
            continue
        for k, score in enumerate(scores):
            if score.fmeasure > best[k].fmeasure:  # strictly greater: numpy.argmax keeps the first
                best[k] = score
    assert best is not None
    return dict(zip(ROUGE_TYPES, best, strict=True))
