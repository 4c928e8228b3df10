"""Text-overlap metrics of a claim against reference answers: SQuAD EM/F1, ROUGE, BLEU, chrF.

Each reproduces its reference implementation to the last few bits, in the standard
library: the official SQuAD v2.0 script, Google's rouge-score (``score_multi``),
sacrebleu's ``sentence_bleu``/``corpus_bleu`` and ``sentence_chrf``/``corpus_chrf``.
All values are on a 0-1 scale.

Per question, call :func:`text_values` (values in the order of :func:`text_metric_names`);
for corpus BLEU and chrF, add up :func:`text_stats` (or the statistics
:func:`text_scores` returns) over the questions and pass the sum to
:func:`corpus_values`.

``tokenizer="unicode"`` changes the words of EM, token F1 and ROUGE (see
:mod:`.unicode_tokens`); BLEU and chrF always use sacrebleu's own processing, which
keeps non-ASCII text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ragscore.metrics import METRICS

from .bleu import (
    MAX_ORDER,
    BleuStats,
    ChrfStats,
    bleu_counts,
    bleu_from_statistics,
    bleu_statistics,
    chrf_counts,
    chrf_from_statistics,
    chrf_statistics,
    sentence_bleu_value,
)
from .rouge import ROUGE_TYPES, rouge_multi
from .squad import squad_scores
from .unicode_tokens import TOKENIZERS, check_tokenizer

__all__ = [
    "TOKENIZERS",
    "TextStats",
    "corpus_metric_names",
    "corpus_values",
    "text_metric_names",
    "text_row",
    "text_scores",
    "text_stats",
    "text_values",
]

# The names, as ragscore.metrics declares them: the per-question values (SQuAD, ROUGE in
# ROUGE_TYPES order, BLEU, chrF), then the corpus scores.
_TEXT_METRICS: Final = tuple(spec.name for spec in METRICS.specs("text") if spec.kind != "corpus")
_CORPUS_METRICS: Final = tuple(spec.name for spec in METRICS.specs("text") if spec.kind == "corpus")


def text_metric_names() -> tuple[str, ...]:
    """Name the per-question values :func:`text_values` returns, in order."""
    return _TEXT_METRICS


def corpus_metric_names() -> tuple[str, ...]:
    """Name the corpus values :func:`corpus_values` returns, in order."""
    return _CORPUS_METRICS


@dataclass(frozen=True, slots=True)
class TextStats:
    """Sufficient statistics of corpus BLEU and corpus chrF; ``+`` adds questions (``TextStats()`` is zero)."""

    bleu: BleuStats = BleuStats()
    chrf: ChrfStats = ChrfStats()

    def __add__(self, other: TextStats) -> TextStats:
        """Add the statistics of two questions or sets of questions."""
        return TextStats(self.bleu + other.bleu, self.chrf + other.chrf)

    def __radd__(self, other: int) -> TextStats:
        """Let ``sum()`` start from 0."""
        if other != 0:
            return NotImplemented
        return self


def _unit(value: float) -> float:
    """Cap a score at 1: sacrebleu's exp(mean log) of a perfect match is 100.00000000000004."""
    return min(value, 1.0)


def _check(references: Sequence[str]) -> None:
    """Reject an empty reference list (``ValueError``) and a lone string passed as one (``TypeError``)."""
    if isinstance(references, str):
        raise TypeError("references must be a sequence of strings, not one string")
    if not references:
        raise ValueError("text-overlap metrics need at least one reference answer")


def text_stats(claim: str, references: Sequence[str]) -> TextStats:
    """Collect one question's corpus BLEU and chrF statistics."""
    _check(references)
    return TextStats(bleu_statistics(claim, references), chrf_statistics(claim, references))


def text_row(claim: str, references: Sequence[str], *, stemmer: bool = False,
             tokenizer: str = "reference") -> tuple[float, ...]:
    """:func:`text_values`, then the corpus statistics flattened (BLEU's lengths, matches and totals,
    chrF's counts): a question's row, built without the objects :func:`text_scores` returns."""
    _check(references)
    check_tokenizer(tokenizer)
    em, f1 = squad_scores(claim, references, tokenizer=tokenizer)
    rouge = rouge_multi(references, claim, stemmer=stemmer, tokenizer=tokenizer)
    sys_len, ref_len, correct, total = bleu_counts(claim, references)
    chrf, chrf_percent = chrf_counts(claim, references)
    return (em, f1, *(value for kind in ROUGE_TYPES for value in rouge[kind]),
            _unit(sentence_bleu_value(sys_len, ref_len, correct, total)), _unit(chrf_percent / 100),
            sys_len, ref_len, *correct, *total, *chrf)


def text_scores(
    claim: str, references: Sequence[str], *, stemmer: bool = False, tokenizer: str = "reference"
) -> tuple[tuple[float, ...], TextStats]:
    """Score ``claim`` against ``references``; return :func:`text_values`'s tuple and the corpus statistics."""
    row = text_row(claim, references, stemmer=stemmer, tokenizer=tokenizer)
    n = len(_TEXT_METRICS)
    sys_len, ref_len = row[n], row[n + 1]
    counts = [int(x) for x in row[n + 2:]]
    stats = TextStats(BleuStats(int(sys_len), int(ref_len), tuple(counts[:MAX_ORDER]),
                                tuple(counts[MAX_ORDER:2 * MAX_ORDER])), ChrfStats(tuple(counts[2 * MAX_ORDER:])))
    return row[:n], stats


def text_values(
    claim: str, references: Sequence[str], *, stemmer: bool = False, tokenizer: str = "reference"
) -> tuple[float, ...]:
    """Score ``claim`` against ``references``, in the order of :func:`text_metric_names`, each 0-1."""
    return text_scores(claim, references, stemmer=stemmer, tokenizer=tokenizer)[0]


def corpus_values(stats: TextStats, *, effective_order: bool = True) -> tuple[float, float]:
    """Turn summed statistics into (corpus BLEU, corpus chrF), each 0-1.

    Corpus BLEU uses exp smoothing and, by default, effective order: it equals
    sacrebleu's ``corpus_bleu`` default whenever some answer has four or more tokens,
    and stays meaningful when none has (sacrebleu's default then gives 0).
    """
    bleu = bleu_from_statistics(stats.bleu, effective_order=effective_order).score
    return _unit(bleu), _unit(chrf_from_statistics(stats.chrf))
