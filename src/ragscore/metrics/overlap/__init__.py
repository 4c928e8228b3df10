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

from .bleu import BleuStats, ChrfStats, bleu_from_statistics, bleu_statistics, chrf_from_statistics, chrf_statistics
from .rouge import ROUGE_TYPES, rouge_multi
from .squad import squad_scores
from .unicode_tokens import TOKENIZERS, check_tokenizer

__all__ = [
    "TOKENIZERS",
    "TextStats",
    "corpus_metric_names",
    "corpus_values",
    "text_metric_names",
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


def text_scores(
    claim: str, references: Sequence[str], *, stemmer: bool = False, tokenizer: str = "reference"
) -> tuple[tuple[float, ...], TextStats]:
    """Score ``claim`` against ``references``; return :func:`text_values`'s tuple and the corpus statistics."""
    _check(references)
    check_tokenizer(tokenizer)
    em, f1 = squad_scores(claim, references, tokenizer=tokenizer)
    rouge = rouge_multi(references, claim, stemmer=stemmer, tokenizer=tokenizer)
    stats = text_stats(claim, references)
    values = (
        em,
        f1,
        *(value for kind in ROUGE_TYPES for value in rouge[kind]),
        _unit(bleu_from_statistics(stats.bleu).score),  # sentence_bleu defaults: exp smoothing, effective order
        _unit(chrf_from_statistics(stats.chrf)),
    )
    return values, stats


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
