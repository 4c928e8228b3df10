"""BLEU and chrF as sacrebleu 2.x computes them, from sufficient statistics that add up.

BLEU: the text is right-stripped and tokenized by the mteval-v13a rules; a segment's
statistics are its length, the length of the closest reference (the shorter on ties),
and per order 1-4 the clipped n-gram matches and the n-gram total, where a
hypothesis n-gram may match up to the highest count it has in any one reference (all
references at once, as ``sentence_bleu`` does). Summing statistics over segments and
scoring the sums is corpus BLEU. Defaults are ``sentence_bleu``'s: exponential
smoothing (each order with no match gets 1/(2^k * total)) and effective order (orders
with no n-gram at all are left out of the geometric mean).

chrF: white space is removed, then character n-grams of order 1-6 are counted; a
segment keeps the statistics of its best reference by chrF; the score averages
precision and recall over the orders that both sides have and combines them with
beta=2. Corpus chrF scores the summed statistics.

Every score and precision here is on a 0-1 scale: sacrebleu's number divided by 100.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "BETA",
    "CHAR_ORDER",
    "MAX_ORDER",
    "BleuScore",
    "BleuStats",
    "ChrfStats",
    "bleu_from_statistics",
    "bleu_statistics",
    "chrf_from_statistics",
    "chrf_statistics",
    "corpus_bleu",
    "corpus_chrf",
    "sentence_bleu",
    "sentence_chrf",
    "tokenize_13a",
]

MAX_ORDER: Final = 4
CHAR_ORDER: Final = 6
BETA: Final = 2

Smoothing = Literal["exp", "floor", "add-k", "none"]
# sacrebleu's defaults for the smoothing value: floor 0.1, add-k 1 (Chen and Cherry, 2014).
_SMOOTH_DEFAULTS: Final[dict[str, float | None]] = {"exp": None, "floor": 0.1, "add-k": 1, "none": None}
_LOG_ZERO: Final = -9999999999  # sacrebleu's floor for log(0)

# mteval-v13a, in order: split off the symbols {|}~[\]^_`!"#$%&()*+:;<=>?@/, split '.'
# and ',' unless after a digit, then unless before a digit, and split '-' after a digit.
# (sacrebleu's symbol class also pads every space; that cannot change a token, and
# leaving it out makes the pass ten times faster.)
_SYMBOLS_RE: Final = re.compile(r"([{|}~\[\\\]^_`!\"#$%&()*+:;<=>?@/])")
_PERIOD_AFTER_RE: Final = re.compile(r"([^0-9])([.,])")
_PERIOD_BEFORE_RE: Final = re.compile(r"([.,])([^0-9])")
_DASH_RE: Final = re.compile(r"([0-9])(-)")


def tokenize_13a(line: str) -> str:
    """Tokenize ``line`` by sacrebleu's "13a" rules (mteval-v13a), tokens joined by single spaces."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        # Order matters: "&amp;lt;" becomes "<".
        line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    line = _SYMBOLS_RE.sub(r" \1 ", f" {line} ")  # the padding lets a first or last '.' split
    if "." in line or "," in line:  # skipping a pass that cannot match saves most of the time
        line = _PERIOD_AFTER_RE.sub(r"\1 \2 ", line)
        line = _PERIOD_BEFORE_RE.sub(r" \1 \2", line)
    if "-" in line:
        line = _DASH_RE.sub(r"\1 \2 ", line)
    return " ".join(line.split())


def _words(text: str, lowercase: bool) -> list[str]:
    """Pre-process a segment as sacrebleu's BLEU does (lower-case, right-strip, 13a) and split it."""
    if lowercase:
        text = text.lower()
    return tokenize_13a(text.rstrip()).split()


def _word_ngrams(words: list[str]) -> list[Counter[Any]]:
    """Count the word n-grams of each order 1-4 (unigrams as strings, longer ones as tuples)."""
    # Not strict: each shifted copy is one shorter, and the n-grams end with the shortest.
    return [Counter(words)] + [
        Counter(zip(*(words[i:] for i in range(n)), strict=False)) for n in range(2, MAX_ORDER + 1)
    ]


def _clipped_matches(hypothesis: Counter[Any], reference: Counter[Any]) -> int:
    """Count hypothesis n-grams, each up to its count in the reference."""
    small, large = (hypothesis, reference) if len(hypothesis) <= len(reference) else (reference, hypothesis)
    return sum(min(count, large[gram]) for gram, count in small.items() if gram in large)


@dataclass(frozen=True, slots=True)
class BleuStats:
    """BLEU's sufficient statistics: lengths, and matches and totals for n-gram orders 1-4."""

    sys_len: int = 0
    ref_len: int = 0
    correct: tuple[int, ...] = (0,) * MAX_ORDER
    total: tuple[int, ...] = (0,) * MAX_ORDER

    def __add__(self, other: BleuStats) -> BleuStats:
        """Add two segments' (or corpora's) statistics."""
        return BleuStats(
            self.sys_len + other.sys_len,
            self.ref_len + other.ref_len,
            tuple(a + b for a, b in zip(self.correct, other.correct, strict=True)),
            tuple(a + b for a, b in zip(self.total, other.total, strict=True)),
        )


@dataclass(frozen=True, slots=True)
class BleuScore:
    """A BLEU score with its parts, as sacrebleu's ``BLEUScore`` but on a 0-1 scale."""

    score: float
    counts: tuple[float, ...]  # after add-k smoothing, as sacrebleu reports them
    totals: tuple[float, ...]
    precisions: tuple[float, ...]
    bp: float
    sys_len: int
    ref_len: int


def bleu_statistics(hypothesis: str, references: Sequence[str], *, lowercase: bool = False) -> BleuStats:
    """Collect one segment's BLEU statistics against all its references at once."""
    if not references:
        raise ValueError("BLEU needs at least one reference")
    words = _words(hypothesis, lowercase)
    hyp_len = len(words)
    best: list[Counter[Any]] = []
    ref_len = -1
    for reference in references:
        ref_words = _words(reference, lowercase)
        # Closest reference length; the shorter one on ties.
        if ref_len < 0 or (abs(hyp_len - len(ref_words)), len(ref_words)) < (abs(hyp_len - ref_len), ref_len):
            ref_len = len(ref_words)
        grams = _word_ngrams(ref_words)
        if not best:
            best = grams
            continue
        for merged, counts in zip(best, grams, strict=True):
            for gram, count in counts.items():  # the highest count of each n-gram in any reference
                if count > merged[gram]:
                    merged[gram] = count
    correct = [_clipped_matches(hyp, ref) for hyp, ref in zip(_word_ngrams(words), best, strict=True)]
    total = [max(hyp_len - n, 0) for n in range(MAX_ORDER)]
    return BleuStats(hyp_len, ref_len, tuple(correct), tuple(total))


def bleu_from_statistics(
    stats: BleuStats,
    *,
    smooth_method: Smoothing = "exp",
    smooth_value: float | None = None,
    effective_order: bool = True,
) -> BleuScore:
    """Turn (summed) statistics into BLEU, as sacrebleu's ``BLEU.compute_bleu``, on a 0-1 scale."""
    if smooth_method not in _SMOOTH_DEFAULTS:
        raise ValueError(f"unknown smoothing {smooth_method!r}")
    if smooth_value is None:
        smooth_value = _SMOOTH_DEFAULTS[smooth_method]
    sys_len, ref_len = stats.sys_len, stats.ref_len
    correct: list[float] = list(stats.correct)
    total: list[float] = list(stats.total)
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    # sacrebleu works in percent; the same operations, divided by 100 at the end, agree to the bit.
    percents = [0.0] * MAX_ORDER
    if not any(correct):
        return BleuScore(0.0, tuple(correct), tuple(total), tuple(percents), bp, sys_len, ref_len)
    halvings = 1.0
    order = MAX_ORDER
    for n in range(MAX_ORDER):
        if smooth_method == "add-k" and n > 0:
            assert smooth_value is not None
            correct[n] += smooth_value
            total[n] += smooth_value
        if total[n] == 0:
            break  # no n-gram of this order (or above): later precisions stay 0
        if effective_order:
            order = n + 1
        if correct[n] == 0:
            if smooth_method == "exp":
                halvings *= 2
                percents[n] = 100.0 / (halvings * total[n])
            elif smooth_method == "floor":
                assert smooth_value is not None
                percents[n] = 100.0 * smooth_value / total[n]
        else:
            percents[n] = 100.0 * correct[n] / total[n]
    log_sum = sum(math.log(p) if p != 0.0 else _LOG_ZERO for p in percents[:order])
    score = bp * math.exp(log_sum / order)
    return BleuScore(
        score / 100, tuple(correct), tuple(total), tuple(p / 100 for p in percents), bp, sys_len, ref_len
    )


def sentence_bleu(
    hypothesis: str,
    references: Sequence[str],
    *,
    smooth_method: Smoothing = "exp",
    smooth_value: float | None = None,
    lowercase: bool = False,
    effective_order: bool = True,
) -> BleuScore:
    """Score one hypothesis against all its references, as ``sacrebleu.sentence_bleu`` (0-1 scale)."""
    stats = bleu_statistics(hypothesis, references, lowercase=lowercase)
    return bleu_from_statistics(
        stats, smooth_method=smooth_method, smooth_value=smooth_value, effective_order=effective_order
    )


def corpus_bleu(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    smooth_method: Smoothing = "exp",
    smooth_value: float | None = None,
    lowercase: bool = False,
    effective_order: bool = True,
) -> BleuScore:
    """Score hypotheses with their own reference lists from summed statistics (``corpus_bleu``, 0-1).

    ``references[i]`` lists the references of ``hypotheses[i]``. sacrebleu's own
    ``corpus_bleu`` defaults to ``use_effective_order=False``; the two differ only when
    some n-gram order has no n-gram in the whole corpus, where False gives 0.
    """
    if len(hypotheses) != len(references):
        raise ValueError("corpus BLEU needs one reference list per hypothesis")
    stats = sum(
        (bleu_statistics(h, r, lowercase=lowercase) for h, r in zip(hypotheses, references, strict=True)), BleuStats()
    )
    return bleu_from_statistics(
        stats, smooth_method=smooth_method, smooth_value=smooth_value, effective_order=effective_order
    )


@dataclass(frozen=True, slots=True)
class ChrfStats:
    """chrF's sufficient statistics: (hypothesis, reference, match) n-gram counts for each order."""

    counts: tuple[int, ...] = (0,) * (3 * CHAR_ORDER)

    def __add__(self, other: ChrfStats) -> ChrfStats:
        """Add two segments' (or corpora's) statistics."""
        return ChrfStats(tuple(a + b for a, b in zip(self.counts, other.counts, strict=True)))


def _char_ngrams(text: str) -> list[Counter[str]]:
    """Count the character n-grams of orders 1-6 of ``text`` with its white space removed."""
    text = "".join(text.split())
    return [Counter(text)] + [
        Counter([text[i : i + n] for i in range(len(text) - n + 1)]) for n in range(2, CHAR_ORDER + 1)
    ]


def _chrf_percent(counts: Sequence[int], beta: float, eps_smoothing: bool) -> float:
    """Compute chrF on sacrebleu's 0-100 scale from flattened (hyp, ref, match) counts."""
    eps = 1e-16
    factor = beta**2
    orders = len(counts) // 3
    smoothed = 0.0
    precision_sum = recall_sum = 0.0
    effective = 0
    for i in range(orders):
        n_hyp, n_ref, n_match = counts[3 * i : 3 * i + 3]
        precision = n_match / n_hyp if n_hyp > 0 else eps
        recall = n_match / n_ref if n_ref > 0 else eps
        denominator = factor * precision + recall
        smoothed += (1 + factor) * precision * recall / denominator if denominator > 0 else eps
        if n_hyp > 0 and n_ref > 0:  # sacrebleu's default: average over orders both sides have
            precision_sum += precision
            recall_sum += recall
            effective += 1
    if eps_smoothing:
        return 100 * smoothed / orders
    if effective:
        precision_sum /= effective
        recall_sum /= effective
    else:
        precision_sum = recall_sum = 0.0
    if precision_sum + recall_sum:
        score = (1 + factor) * precision_sum * recall_sum
        score /= (factor * precision_sum) + recall_sum  # sacrebleu's operation order
        return 100 * score
    return 0.0


def chrf_statistics(
    hypothesis: str,
    references: Sequence[str],
    *,
    beta: float = BETA,
    eps_smoothing: bool = False,
) -> ChrfStats:
    """Collect one segment's chrF statistics: those of the reference with the best chrF (first on ties)."""
    if not references:
        raise ValueError("chrF needs at least one reference")
    hyp_grams = _char_ngrams(hypothesis)
    hyp_totals = [sum(c.values()) for c in hyp_grams]
    best: list[int] = []
    best_score = -1.0
    for reference in references:
        counts: list[int] = []
        for hyp, ref, hyp_total in zip(hyp_grams, _char_ngrams(reference), hyp_totals, strict=True):
            small, large = (hyp, ref) if len(hyp) <= len(ref) else (ref, hyp)  # loop over fewer keys
            matches = sum(min(count, large[gram]) for gram, count in small.items() if gram in large)
            # sacrebleu counts no hypothesis n-grams for an order the reference lacks.
            counts += (hyp_total if ref else 0, sum(ref.values()), matches)
        score = _chrf_percent(counts, beta, eps_smoothing)
        if score > best_score:
            best, best_score = counts, score
    return ChrfStats(tuple(best))


def chrf_from_statistics(stats: ChrfStats, *, beta: float = BETA, eps_smoothing: bool = False) -> float:
    """Turn (summed) chrF statistics into chrF on a 0-1 scale."""
    return _chrf_percent(stats.counts, beta, eps_smoothing) / 100


def sentence_chrf(
    hypothesis: str, references: Sequence[str], *, beta: float = BETA, eps_smoothing: bool = False
) -> float:
    """Score one hypothesis against its references, as ``sacrebleu.sentence_chrf`` (0-1 scale)."""
    stats = chrf_statistics(hypothesis, references, beta=beta, eps_smoothing=eps_smoothing)
    return chrf_from_statistics(stats, beta=beta, eps_smoothing=eps_smoothing)


def corpus_chrf(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], *, beta: float = BETA, eps_smoothing: bool = False
) -> float:
    """Score hypotheses with their own reference lists from summed statistics (``corpus_chrf``, 0-1)."""
    if len(hypotheses) != len(references):
        raise ValueError("corpus chrF needs one reference list per hypothesis")
    stats = sum(
        (chrf_statistics(h, r, beta=beta, eps_smoothing=eps_smoothing)
         for h, r in zip(hypotheses, references, strict=True)),
        ChrfStats(),
    )
    return chrf_from_statistics(stats, beta=beta, eps_smoothing=eps_smoothing)
