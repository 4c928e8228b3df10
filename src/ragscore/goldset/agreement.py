"""Gold-set quality: how far annotators agree (``ragscore agree``), and stratified splits (``ragscore split``).

Agreement, over the qids every file has (a qid in some files only is counted and named):

- Cohen's kappa between two annotators (``sklearn.metrics.cohen_kappa_score``): observed agreement
  against the agreement their label frequencies give by chance; with more than two, the mean of
  every pair's (Light's kappa).
- Krippendorff's alpha, nominal (the ``krippendorff`` package): 1 − observed / expected
  disagreement over every pair of values a question has, any number of annotators, a missing
  value skipped.
- For a judge's scores against human labels (``ragscore.goldset.calibration``): Cohen's kappa with
  quadratic weights (``cohen_kappa_score(a, b, weights="quadratic")``), and Krippendorff's alpha of
  numbers, ordinal or interval (the package's ``level_of_measurement``).
- On ``gold_citations``: the mean Jaccard similarity of two annotators' sets (1 when both are
  empty) and the share of questions whose sets are equal, over every pair of annotators.

A split puts every stratum's items (the items sharing the values of the ``--by`` fields) in the
splits in the given ratios, to within one item: each stratum is ordered by a hash of the seed and
the qid, and cut where the largest-remainder rounding of its size puts the boundaries.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import Counter
from collections.abc import Hashable, Sequence
from itertools import combinations
from typing import Final

from ragscore.errors import UsageError
from ragscore.quoting import quote

MISSING: Final = None  # an annotator without a value for a question


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two annotators' labels of the same items (None when chance agreement is 1)."""
    n = len(a)
    if not n:
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    left, right = Counter(a), Counter(b)
    expected = sum(left[label] * right[label] for label in left) / (n * n)
    if expected == 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def krippendorff_alpha(units: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Krippendorff's alpha for nominal data: ``units[i]`` holds item i's value from each annotator
    (None: missing). Items with fewer than two values are left out. None without disagreement possible."""
    pairable = [[v for v in unit if v is not None] for unit in units]
    pairable = [values for values in pairable if len(values) >= 2]
    totals: Counter[Hashable] = Counter()
    observed = 0.0
    for values in pairable:
        counts = Counter(values)
        m = len(values)
        totals.update(counts)
        # Disagreeing ordered pairs within the unit, each weighted 1 / (m - 1).
        observed += (m * m - sum(c * c for c in counts.values())) / (m - 1)
    n = sum(totals.values())
    if n < 2:
        return None
    expected = (n * n - sum(c * c for c in totals.values())) / (n - 1)
    if expected == 0:
        return None
    return 1.0 - observed / expected


def quadratic_kappa(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Cohen's kappa with quadratic weights of two raters' ordered labels of the same items, as
    ``sklearn.metrics.cohen_kappa_score(a, b, weights="quadratic")``: the categories are the labels
    either rater gives, in order, and a pair of labels costs the square of how many categories apart
    they are. As in scikit-learn, a category neither rater gives is no step: with 1, 2, 4 and 5 given
    (and no 3), 2 and 4 are one category apart. None when no disagreement is expected by chance (one
    label in all), as scikit-learn's NaN."""
    rank = {label: index for index, label in enumerate(sorted(set(a) | set(b)))}
    x, y = [rank[label] for label in a], [rank[label] for label in b]
    n = len(x)
    # Observed over expected weighted disagreement, both times n: integers, so exact until the one division.
    observed = n * sum((p - q) ** 2 for p, q in zip(x, y, strict=True))
    expected = n * (sum(p * p for p in x) + sum(q * q for q in y)) - 2 * sum(x) * sum(y)
    return 1.0 - observed / expected if expected else None


LEVELS: Final = ("nominal", "ordinal", "interval")  # the levels of measurement alpha_at takes


def alpha_at(units: Sequence[Sequence[float | None]], level: str) -> float | None:
    """Krippendorff's alpha of numbers at a level of measurement, as the ``krippendorff`` package's
    ``alpha(reliability_data, level_of_measurement=level)``: ``units[i]`` holds item i's value from each
    rater (None: missing); an item with fewer than two values is left out. Two values differ (nominal),
    or are as far apart as the square of the pairable values between them, each end counted half
    (ordinal: the distance of their mid-ranks), or of their difference (interval). None when undefined:
    fewer than two distinct pairable values."""
    if level == "nominal":
        return krippendorff_alpha(units)
    pairable = [values for values in ([v for v in unit if v is not None] for unit in units) if len(values) >= 2]
    totals: Counter[float] = Counter(v for values in pairable for v in values)
    if len(totals) < 2:
        return None
    place = {value: value for value in totals}  # interval: the value itself
    if level == "ordinal":  # n_c / 2 past every value below c: the ordinal distance is the square of the gap
        below = 0
        for value in sorted(totals):
            place[value], below = below + totals[value] / 2, below + totals[value]
    n = sum(totals.values())
    mean = math.fsum(place[value] * count for value, count in totals.items()) / n
    # Expected disagreement times n - 1: every ordered pair of pairable values, 2n Σ n_c (place_c - mean)².
    expected = 2 * n * math.fsum(count * (place[value] - mean) ** 2 for value, count in totals.items())
    # Observed: within each item, every ordered pair, 2m Σ (place - the item's mean)², over m - 1.
    observed = 0.0
    for values in pairable:
        m, at = len(values), [place[v] for v in values]
        centre = math.fsum(at) / m
        observed += 2 * m * math.fsum((p - centre) ** 2 for p in at) / (m - 1)
    return 1.0 - (n - 1) * observed / expected if expected else None


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """The Jaccard similarity of two sets; 1 when both are empty."""
    union = a | b
    return len(a & b) / len(union) if union else 1.0


def citation_agreement(sets: Sequence[Sequence[frozenset[str]]]) -> tuple[float | None, float | None]:
    """Mean Jaccard similarity and share of equal sets of ``gold_citations``, over every question and
    every pair of annotators (``sets[i]``: each annotator's set for question i)."""
    similarities = [jaccard(x, y) for per in sets for x, y in combinations(per, 2)]
    equal = [x == y for per in sets for x, y in combinations(per, 2)]
    if not similarities:
        return None, None
    return sum(similarities) / len(similarities), sum(equal) / len(equal)


def mean_pairwise_kappa(columns: Sequence[Sequence[Hashable]]) -> float | None:
    """Cohen's kappa of two annotators, or the mean over every pair of more (Light's kappa)."""
    kappas = [cohen_kappa(x, y) for x, y in combinations(columns, 2)]
    defined = [k for k in kappas if k is not None]
    return sum(defined) / len(defined) if defined and len(defined) == len(kappas) else None


def label_of(value: object) -> str:
    """A field's value as a label: JSON text, so that 1, "1" and true stay three labels."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# --- splits ---------------------------------------------------------------------------------------


def split_sizes(n: int, ratios: Sequence[int]) -> list[int]:
    """Split n items in the ratios, each size within one item of its share (largest remainders)."""
    total = sum(ratios)
    exact = [n * r for r in ratios]  # shares times ``total``, kept in integers
    sizes = [e // total for e in exact]
    remainders = sorted(range(len(ratios)), key=lambda i: (-(exact[i] % total), i))
    for i in remainders[: n - sum(sizes)]:
        sizes[i] += 1
    return sizes


def split_names(ratios: Sequence[int], names: Sequence[str] | None) -> list[str]:
    """The names of a split's files (default train, dev, test; train, test; else split1, ...), after
    checking the ratios: 2 to 10 positive whole numbers, and as many distinct names of letters, digits, - and _."""
    if not 2 <= len(ratios) <= 10 or any(isinstance(r, bool) or not isinstance(r, int) or r < 1 for r in ratios):
        raise UsageError(f"split: expected 2 to 10 positive whole ratios (such as 70,15,15), got {list(ratios)}")
    default = {2: ("train", "test"), 3: ("train", "dev", "test")}
    chosen = list(names) if names is not None else list(default.get(len(ratios), ()))
    chosen = chosen or [f"split{i + 1}" for i in range(len(ratios))]
    if len(chosen) != len(ratios) or len(set(chosen)) != len(chosen) or not all(
            n and n.replace("-", "").replace("_", "").isalnum() for n in chosen):
        raise UsageError(f"split: expected {len(ratios)} distinct names of letters, digits, - and _, got {chosen}")
    return chosen


def split_paths(out: str, names: Sequence[str], what: str = "split: out") -> list[str]:
    """The files a split writes: NAME.jsonl in the folder ``out`` (made when missing). A path that is
    not a folder (a file, ``/dev/null``) is a usage error: ``out`` names a folder, never a file."""
    if os.path.exists(out) and not os.path.isdir(out):
        raise UsageError(f"{what} {quote(out)}: not a folder; split writes NAME.jsonl files in the folder it names "
                         "(made when missing)")
    return [os.path.join(out, f"{name}.jsonl") for name in names]


def check_split_paths(gold: str, paths: Sequence[str]) -> None:
    """Refuse a split file that is the gold set (by device and inode: a link or another spelling too)."""
    from ragscore.reports.files import first_overwrite

    clash = first_overwrite([("gold", gold)], [("out", path) for path in paths])
    if clash is not None:
        raise UsageError(f"split: {quote(clash[1])}: is the gold set {quote(gold)}; a split never overwrites its "
                         "input")


def distinct_files(paths: Sequence[str]) -> None:
    """Refuse a file given twice (by device and inode: a link or another spelling too): each annotator's once."""
    from ragscore.reports.files import file_identity

    seen: dict[object, str] = {}
    for path in paths:
        identity = file_identity(path)[0]
        first = seen.get(identity)
        if first == path:
            raise UsageError(f"agree: {quote(path)} is named twice; give each annotator's gold file once")
        if first is not None:
            raise UsageError(f"agree: {quote(first)} and {quote(path)} are the same file (a link?); give each "
                             "annotator's gold file once")
        seen[identity] = path


def order_key(seed: str, qid: str) -> bytes:
    """Where an item falls in its stratum: a hash of the seed and its qid (the same seed, the same order)."""
    return hashlib.sha256(f"ragscore-split:{len(seed)}:{seed}:{qid}".encode()).digest()


# --- ragscore agree -------------------------------------------------------------------------------

EXAMPLES: Final = 20  # disagreeing qids listed per field (all are counted)


def agreement_metrics(files: Sequence[dict[str, tuple[bool, frozenset[str], tuple[str, ...]]]],
                      fields: Sequence[str]) -> tuple[dict[str, float | None], dict[str, list[str]], list[str]]:
    """Agreement of annotators' gold sets (``files[j]``: qid -> (answerable, gold citations, the
    labels of each field)) over the qids every file has; also the disagreeing qids by field, and
    the qids only some files have."""
    shared = [qid for qid in files[0] if all(qid in f for f in files[1:])]
    partial = sorted({qid for f in files for qid in f} - set(shared))
    metrics: dict[str, float | None] = {}
    disagreeing: dict[str, list[str]] = {}
    for index, name in enumerate(("answerable", *fields)):
        columns = [[(f[qid][0] if index == 0 else f[qid][2][index - 1]) for qid in shared] for f in files]
        suffix = "" if index == 0 else f"_{name}"
        metrics[f"kappa{suffix}"] = mean_pairwise_kappa(columns)
        metrics[f"alpha{suffix}"] = krippendorff_alpha(list(zip(*columns, strict=True)))
        disagreeing[name] = [qid for qid, values in zip(shared, zip(*columns, strict=True), strict=True)
                             if len(set(values)) > 1]
    sets = [[f[qid][1] for f in files] for qid in shared]
    metrics["citation_jaccard"], metrics["citation_exact"] = citation_agreement(sets)
    disagreeing["gold_citations"] = [qid for qid, per in zip(shared, sets, strict=True) if len(set(per)) > 1]
    return metrics, disagreeing, partial
