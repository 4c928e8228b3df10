"""Retrieval metrics for one question, computed exactly as trec_eval (pytrec_eval) computes them.

Pure functions: no I/O, no state. The id-based metrics follow trec_eval 9.0.x semantics:

* the ranked list is de-duplicated first (trec_eval rejects duplicate docnos; a later copy of an
  id takes no rank here), then ranks are 1-based positions in that list;
* an id is relevant when its grade is >= 1; grades 0 and below are not relevant, negative grades
  are trec_eval's "judged but unjudged" (not counted in R, zero gain), and ids missing from
  ``relevance`` are unjudged non-relevant;
* an id graded 0 is judged non-relevant (trec_eval's judged grade below the relevance level, not
  negative): only ``bpref`` tells it from a negative grade or an id missing from ``relevance``;
* ``ndcg@K`` is trec_eval ``ndcg_cut_K``: linear gain = grade (only grades > 0 count, so a
  negative grade is never a penalty), discount log2(rank + 1), ideal DCG from every positive
  grade in ``relevance`` (retrieved or not) sorted descending and truncated at K; ``ndcg`` is
  trec_eval ``ndcg``, the same over the whole list with the whole ideal ranking.

Callers order a scored run before calling; trec_eval's order is score descending, ties by
docno descending (byte-wise ``strcmp``), never the rank column.
"""

from __future__ import annotations

import math
import operator
from bisect import bisect_right
from collections.abc import Mapping, Sequence

from ragscore.metrics import METRICS
from ragscore.metrics.text import normalise


def retrieval_metric_names(cutoffs: Sequence[int]) -> tuple[str, ...]:
    """Return the names of ``retrieval_values`` in report order (as ``ragscore.metrics`` declares them)."""
    return METRICS.names("retrieval", cutoffs)


def similarity_metric_names(cutoffs: Sequence[int]) -> tuple[str, ...]:
    """Return the names of ``similarity_values`` in report order (as ``ragscore.metrics`` declares them)."""
    return METRICS.names("similarity", cutoffs)


def _logrank_sum(ranks: Sequence[int], n: int, gamma: float) -> float:
    """Sum logrank(rank, n) = 1 - ln(1 + gamma(rank - 1)) / ln(1 + gamma(n - 1)) over ranks."""
    # Summed in the same order and form as retrieval_values, so the two modes agree to the bit.
    log_sum = 0.0
    for rank in ranks:
        log_sum += math.log1p(gamma * (rank - 1))
    # logrank is 0/0 for a one-item list; its only rank is the best one, worth 1.
    return len(ranks) if n == 1 else len(ranks) - log_sum / math.log1p(gamma * (n - 1))


def retrieval_values(
    ranked: Sequence[str],
    relevance: Mapping[str, int],
    cutoffs: Sequence[int],
    alpha: float = 0.5,
    gamma: float = 1.0,
) -> tuple[float, ...]:
    """Score one ranked list against graded judgments, in ``retrieval_metric_names`` order.

    ``cutoffs`` are positive integers. With R the number of relevant ids (grade >= 1) and h_K the
    relevant ids in the top K of the de-duplicated list: ``precision@K`` = h_K / K (K even when
    fewer are retrieved), ``recall@K`` = h_K / R, ``f1@K`` = 2 h_K / (K + R) (their harmonic
    mean; 0 when h_K = 0), ``hit@K`` = 1 if h_K > 0, ``ndcg@K`` = trec_eval ``ndcg_cut_K``,
    ``map@K`` = sum of precision at each relevant rank <= K / R (trec_eval ``map_cut_K``),
    ``mrr`` = 1 / rank of the first relevant id, ``map`` = sum of precision at each relevant
    retrieved rank / R, ``rprec`` = h_R / R, ``ndcg`` = trec_eval ``ndcg`` (no cutoff).

    ``bpref`` is trec_eval's: with N_J the ids graded 0 (judged non-relevant), each relevant
    retrieved id r adds 1 - min(n_r, R) / min(R, N_J), n_r the ids graded 0 ranked above it (1
    when n_r = 0), and the sum is divided by R. Negative grades and ids missing from
    ``relevance`` are skipped; with no id graded 0, bpref = relevant ids retrieved / R.

    ``hybrid_log_rank`` = alpha * recall + (1 - alpha) * sum(logrank(rank_r, N)) / R over the
    relevant retrieved ids r, where recall is over the WHOLE de-duplicated list (all N retrieved,
    not a cutoff) and logrank(rank, N) = 1 - ln(1 + gamma(rank - 1)) / ln(1 + gamma(N - 1)),
    1 when N = 1; gamma must be > 0. An empty list, or no relevant id at all, scores 0 everywhere.
    """
    if gamma <= 0.0:
        raise ValueError(f"gamma must be > 0, got {gamma!r}")
    # dict.fromkeys keeps the first occurrence of each id in rank order, in C; later copies of an
    # id take no rank, as in a trec_eval run (which cannot hold a docno twice per topic).
    docs = dict.fromkeys(ranked)
    n = len(docs)
    # Only grades >= 0 matter anywhere: relevance is grade >= 1, grade 0 is judged non-relevant
    # (bpref), and trec_eval's nDCG gives grades <= 0 zero gain and leaves them out of the ideal
    # ranking, while bpref skips negative grades as it skips unjudged ids.
    judged = {doc: grade for doc, grade in relevance.items() if grade >= 0}
    ideal = sorted((grade for grade in judged.values() if grade), reverse=True)
    n_rel = len(ideal)
    if n == 0 or n_rel == 0:
        return (0.0,) * len(retrieval_metric_names(cutoffs))
    n_nonrel = len(judged) - n_rel

    # The one pass over the ranked list, in C: every metric depends only on where the judged ids
    # sit, and there are few of them, so all that follows works on this short list.
    found = [(rank, doc) for rank, doc in enumerate(docs, 1) if doc in judged]
    log2 = math.log2
    log1p = math.log1p
    ranks: list[int] = []  # ranks of the relevant retrieved ids, ascending
    dcg_prefix = [0.0]  # dcg_prefix[j]: DCG of the first j relevant retrieved ids
    ap_prefix = [0.0]  # ap_prefix[j]: sum of precision at the ranks of the first j
    dcg = 0.0
    ap_sum = 0.0
    log_sum = 0.0  # sum of ln(1 + gamma(rank - 1)), the numerators of the log-rank terms
    nonrel = 0  # ids graded 0 ranked so far (bpref)
    bound = min(n_rel, n_nonrel)
    bpref_sum = 0.0
    for rank, doc in found:
        grade = judged[doc]
        if not grade:
            nonrel += 1
            continue
        ranks.append(rank)
        # Same summation order as trec_eval (rank by rank), so the values agree to the ulp.
        dcg += grade / log2(rank + 1)
        dcg_prefix.append(dcg)
        ap_sum += len(ranks) / rank
        ap_prefix.append(ap_sum)
        log_sum += log1p(gamma * (rank - 1))
        bpref_sum += 1.0 - min(nonrel, n_rel) / bound if nonrel else 1.0
    n_hit = len(ranks)

    idcg_prefix = _ideal_prefix(ideal)
    mrr = 1.0 / ranks[0] if ranks else 0.0
    rprec = bisect_right(ranks, n_rel) / n_rel
    # logrank is 0/0 for a one-item list; its only rank is the best one, worth 1.
    logrank_sum = n_hit if n == 1 else n_hit - log_sum / log1p(gamma * (n - 1))
    hybrid = alpha * (n_hit / n_rel) + (1.0 - alpha) * logrank_sum / n_rel
    return (*_at_cutoffs(cutoffs, ranks, n_rel, dcg_prefix, idcg_prefix, ap_prefix),
            mrr, ap_sum / n_rel, rprec, dcg / idcg_prefix[-1], bpref_sum / n_rel, hybrid)


def _ideal_prefix(ideal: Sequence[int]) -> list[float]:
    """Ideal DCG prefixes over the whole ideal ranking (trec_eval's ndcg; ndcg_cut_K truncates at K)."""
    log2 = math.log2
    idcg_prefix = [0.0]
    idcg = 0.0
    for i, grade in enumerate(ideal):
        idcg += grade / log2(i + 2)
        idcg_prefix.append(idcg)
    return idcg_prefix


def _at_cutoffs(cutoffs: Sequence[int], ranks: list[int], n_rel: int, dcg_prefix: list[float],
                idcg_prefix: list[float], ap_prefix: list[float]) -> list[float]:
    """precision, recall, f1, hit, ndcg and map at each cutoff, each metric's values in cutoff order."""
    precision: list[float] = []
    recall: list[float] = []
    f1: list[float] = []
    hit: list[float] = []
    ndcg: list[float] = []
    map_cut: list[float] = []
    for k in cutoffs:
        h = bisect_right(ranks, k)  # relevant ids in the top k
        precision.append(h / k)
        recall.append(h / n_rel)
        # 2PR/(P+R) with P = h/k, R = h/n_rel is 2h/(k + n_rel): one rounding instead of four.
        f1.append(2 * h / (k + n_rel))
        hit.append(1.0 if h else 0.0)
        ndcg.append(dcg_prefix[h] / idcg_prefix[min(k, n_rel)])
        map_cut.append(ap_prefix[h] / n_rel)
    return precision + recall + f1 + hit + ndcg + map_cut


def text_relevance(
    gold_chunks: Sequence[str], retrieved_chunks: Sequence[str]
) -> tuple[list[str], dict[str, int]]:
    """Turn chunk texts into ids and grades so ``retrieval_values`` scores them by exact text.

    Texts are compared after Unicode NFC normalisation then ``str.casefold()`` (nothing else: no
    white-space trimming). Each distinct gold text is one relevant item with id ``g<i>`` (i the
    index of its first occurrence in ``gold_chunks``), grade 1. A retrieved chunk takes the id of
    the gold text it equals, else ``r<j>`` with j the index of the first retrieved chunk with the
    same text; so repeated texts share an id and ``retrieval_values`` counts them once, like
    repeated ids.
    """
    gold_ids: dict[str, str] = {}
    for i, text in enumerate(gold_chunks):
        gold_ids.setdefault(normalise(text), f"g{i}")
    ids: dict[str, str] = {}
    ranked: list[str] = []
    for j, text in enumerate(retrieved_chunks):
        key = normalise(text)
        chunk_id = gold_ids.get(key)
        if chunk_id is None:
            chunk_id = ids.setdefault(key, f"r{j}")
        ranked.append(chunk_id)
    return ranked, dict.fromkeys(gold_ids.values(), 1)


def _scaled(u: Sequence[float]) -> tuple[Sequence[float], float]:
    """Return the vector scaled by a power of two to components below 1 in magnitude, and its norm.

    Squares and products of components such as 1e200 or 1e-200 overflow or underflow; scaled,
    they cannot. A power of two scales exactly, so the cosine of two scaled vectors is bit-equal
    to that of the vectors themselves whenever the latter does not overflow or underflow.
    """
    largest = max(map(abs, u), default=0.0)
    # An integer (JSON has them) may be beyond a float's range, where frexp and ldexp fail.
    exponent = largest.bit_length() if type(largest) is int else math.frexp(largest)[1]
    if largest == 0 or -64 <= exponent <= 64:  # ordinary vectors are used as they are
        return u, math.hypot(*u)
    power = 1 << exponent if exponent > 0 else 0
    scaled = [x / power if type(x) is int and power else math.ldexp(x, -exponent) for x in u]
    return scaled, math.hypot(*scaled)


def _dot(u: Sequence[float], v: Sequence[float]) -> float:
    """Return the correctly rounded dot product of two vectors of the same length."""
    if len(u) != len(v):
        raise ValueError(f"vectors of different lengths: {len(u)} and {len(v)}")
    # fsum rounds once, so the value does not depend on summation order or platform.
    return math.fsum(map(operator.mul, u, v))


def cosine(u: Sequence[float], v: Sequence[float]) -> float:
    """Return the cosine similarity of two vectors; 0 when either has norm 0 (huge or tiny
    components, such as 1e200 or 1e-200, are scaled first: see ``_scaled``)."""
    (u, u_norm), (v, v_norm) = _scaled(u), _scaled(v)
    norms = u_norm * v_norm
    return _dot(u, v) / norms if norms else 0.0


def similarity_values(
    gold_embeddings: Sequence[Sequence[float]],
    retrieved_embeddings: Sequence[Sequence[float]],
    cutoffs: Sequence[int],
    threshold: float = 0.8,
    alpha: float = 0.5,
    gamma: float = 1.0,
) -> tuple[float, ...]:
    """Score retrieved embeddings against gold ones by cosine, in ``similarity_metric_names`` order.

    Gold item g is matched by retrieved item r when cosine(g, r) >= threshold (the same value
    ``cosine`` returns); r is relevant when it matches any gold item. Retrieved items are taken as
    given, at ranks 1..N (the caller drops duplicate ids first, as ``retrieval_values`` would).
    With G gold items: ``sim_precision@K`` = relevant items in the top K / K (K even when fewer
    are retrieved), ``sim_recall@K`` = gold items matched by at least one of the top K / G,
    ``sim_f1@K`` their harmonic mean (0 when both are 0).

    ``sim_hybrid_log_rank`` is the id-based hybrid with "relevant item retrieved" read as "gold
    item matched": alpha * (gold items matched by any of the N retrieved / G) + (1 - alpha) *
    sum over matched gold items g of logrank(rank of the first retrieved item matching g, N) / G.
    With one-hot embeddings (a match exactly when ids are equal) every value equals its
    ``retrieval_values`` counterpart. No gold or no retrieved item scores 0 everywhere.
    """
    if gamma <= 0.0:
        raise ValueError(f"gamma must be > 0, got {gamma!r}")
    n_gold = len(gold_embeddings)
    n = len(retrieved_embeddings)
    if n_gold == 0 or n == 0:
        return (0.0,) * len(similarity_metric_names(cutoffs))

    # Norms once per vector rather than once per pair; the quotient is then bit-equal to cosine().
    gold = [_scaled(g) for g in gold_embeddings]
    relevant_ranks: list[int] = []  # ranks of retrieved items matching any gold item
    first_match: dict[int, int] = {}  # gold index -> rank of the first retrieved item matching it
    for rank, r in enumerate(retrieved_embeddings, 1):
        r, r_norm = _scaled(r)
        relevant = False
        for i, (g, g_norm) in enumerate(gold):
            norms = g_norm * r_norm
            if (_dot(g, r) / norms if norms else 0.0) >= threshold:
                relevant = True
                first_match.setdefault(i, rank)
        if relevant:
            relevant_ranks.append(rank)
    # Filled in rank order, so already sorted: gold items matched by the top K is a bisect.
    matched_ranks = list(first_match.values())

    relevant_top = [bisect_right(relevant_ranks, k) for k in cutoffs]  # relevant items in top K
    matched_top = [bisect_right(matched_ranks, k) for k in cutoffs]  # gold items matched by top K
    values = [a / k for a, k in zip(relevant_top, cutoffs, strict=True)]
    values += [b / n_gold for b in matched_top]
    # 2PR/(P+R) with P = a/K, R = b/G is 2ab/(aG + bK): exact integers, one rounding, and equal to
    # the id-based 2h/(K + R) when a = b = h. a and b are 0 together (a match is both).
    values += [
        2 * a * b / (a * n_gold + b * k) if a else 0.0
        for a, b, k in zip(relevant_top, matched_top, cutoffs, strict=True)
    ]
    hybrid = (
        alpha * (len(matched_ranks) / n_gold)
        + (1.0 - alpha) * _logrank_sum(matched_ranks, n, gamma) / n_gold
    )
    values.append(hybrid)
    return tuple(values)
