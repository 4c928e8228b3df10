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
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import add
from typing import Final, Literal

from .counting import Tally, count, overlap, tally

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


Grams = list[tuple[Tally, int]]  # per order: the n-grams (counted, or a set when each occurs once), how many


def _word_ngrams(words: list[str]) -> Grams:
    """Count the word n-grams of each order 1-4 (unigrams as strings, longer ones as tuples): a set of
    them for an order where each occurs once (as it then does at every higher order), else their counts."""
    out: Grams = [(tally(words), len(words))]
    unique = isinstance(out[0][0], set)
    # The words from each offset, sliced once for every order: an n-gram zips the first n
    # (not strict: each copy is one shorter, and the n-grams end with the shortest).
    shifted = [words[i:] for i in range(MAX_ORDER)]
    for n in range(2, MAX_ORDER + 1):
        total = max(len(words) - n + 1, 0)
        grams = set(zip(*shifted[:n]))  # noqa: B905
        if not unique and len(grams) < total:
            out.append((count(zip(*shifted[:n])), total))  # noqa: B905
            continue
        unique = True
        out.append((grams, total))
    return out


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
    sys_len, ref_len, correct, total = bleu_counts(hypothesis, references, lowercase)
    return BleuStats(sys_len, ref_len, tuple(correct), tuple(total))


def bleu_counts(hypothesis: str, references: Sequence[str], lowercase: bool = False) -> tuple[int, int, list[int],
                                                                                                list[int]]:
    """A segment's BLEU statistics as plain numbers: its length, the closest reference's, the clipped
    matches and the n-gram totals per order (``BleuStats`` without building one)."""
    words = _words(hypothesis, lowercase)
    hyp_len = len(words)
    best: Grams = []
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
        for order, ((kept, _), (found, _)) in enumerate(zip(best, grams, strict=True)):
            merged = dict.fromkeys(kept, 1) if isinstance(kept, set) else kept
            for gram, n in (found.items() if isinstance(found, dict) else zip(found, repeat(1))):
                if n > merged.get(gram, 0):  # the highest count of each n-gram in any reference
                    merged[gram] = n
            best[order] = (merged, sum(merged.values()))
    correct = [overlap(hyp, hyp_total, ref, ref_total)
               for (hyp, hyp_total), (ref, ref_total) in zip(_word_ngrams(words), best, strict=True)]
    total = [max(hyp_len - n, 0) for n in range(MAX_ORDER)]
    return hyp_len, ref_len, correct, total


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
    score, bp, percents = _bleu(sys_len, ref_len, correct, total, smooth_method, smooth_value, effective_order)
    return BleuScore(score / 100, tuple(correct), tuple(total), tuple(p / 100 for p in percents), bp, sys_len,
                     ref_len)


def sentence_bleu_value(sys_len: int, ref_len: int, correct: list[int], total: list[int]) -> float:
    """``sentence_bleu``'s score (0-1) from one segment's statistics: exp smoothing, effective order."""
    return _bleu(sys_len, ref_len, list(correct), list(total), "exp", None, True)[0] / 100


def _bleu(sys_len: int, ref_len: int, correct: list[float], total: list[float], smooth_method: Smoothing,
          smooth_value: float | None, effective_order: bool) -> tuple[float, float, list[float]]:
    """sacrebleu's ``compute_bleu`` in percent: the score, the brevity penalty and the precisions
    (``correct`` and ``total`` take add-k smoothing in place)."""
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    # sacrebleu works in percent; the same operations, divided by 100 at the end, agree to the bit.
    percents = [0.0] * MAX_ORDER
    if not any(correct):
        return 0.0, bp, percents
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
    return bp * math.exp(log_sum / order), bp, percents


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


def _char_ngrams(text: str) -> list[tuple[dict[str, int] | list[str], int]]:
    """The character n-grams of orders 1-6 of ``text`` (white space removed already), and how many there
    are: counted, until an order where each occurs once; from there on (each occurs once at every
    higher order too) the list of them."""
    out: list[tuple[dict[str, int] | list[str], int]] = []
    grams: list[str] | str = text
    unique = False
    for n in range(1, CHAR_ORDER + 1):
        if n > 1:  # each (n-1)-gram and the character after it (map stops at the last (n-1)-gram that has one)
            grams = list(map(add, grams, text[n - 1 :]))
        if unique:
            out.append((grams if isinstance(grams, list) else list(grams), len(grams)))
            continue
        counts = count(grams)
        unique = len(counts) == len(grams)
        out.append((counts, len(grams)))
    return out


def _char_counts(text: str, n: int) -> dict[str, int]:
    """Count the character n-grams of one order of ``text`` (white space removed already)."""
    if n == 1:
        return count(text)
    return count([text[i : i + n] for i in range(len(text) - n + 1)])


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
    return ChrfStats(tuple(chrf_counts(hypothesis, references, beta, eps_smoothing)[0]))


def chrf_counts(hypothesis: str, references: Sequence[str], beta: float = BETA,
                eps_smoothing: bool = False) -> tuple[list[int], float]:
    """A segment's chrF statistics as plain numbers (``ChrfStats``' counts), and its chrF on sacrebleu's
    0-100 scale, which those statistics give."""
    hyp_grams = _char_ngrams("".join(hypothesis.split()))
    best: list[int] = []
    best_score = -1.0
    for reference in references:
        text = "".join(reference.split())
        counts: list[int] = []
        for n, (hyp, hyp_total) in enumerate(hyp_grams, 1):
            ref_total = max(len(text) - n + 1, 0)
            if len(hyp) == hyp_total:
                # Each hypothesis n-gram once: it matches once if the reference has it anywhere, and a
                # character n-gram is in the reference exactly when it is a substring of its text.
                matches = sum(map(text.__contains__, hyp))
            else:  # the reference's count matters: count its n-grams of this order
                assert isinstance(hyp, dict)  # a list holds each n-gram once
                matches = overlap(hyp, hyp_total, _char_counts(text, n), ref_total)
            # sacrebleu counts no hypothesis n-grams for an order the reference lacks.
            counts += (hyp_total if ref_total else 0, ref_total, matches)
        score = _chrf_percent(counts, beta, eps_smoothing)
        if score > best_score:
            best, best_score = counts, score
    return best, best_score


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
