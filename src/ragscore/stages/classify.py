"""Type classification: accuracy, per-class precision/recall/F1, averages, confusion matrix.

Definitions, equal to scikit-learn's ``accuracy_score``, ``precision_recall_fscore_support``
(``zero_division=0``) and ``confusion_matrix`` on the same labels:

- The labels are those present in the gold or the predictions, sorted by code point.
- Per class: precision = correct / predicted as the class, recall = correct / support (gold count),
  F1 their harmonic mean; an empty denominator gives 0.
- Macro averages are the unweighted mean over the labels; weighted averages weight each label by
  its support.
- A gold item without a prediction counts as wrong: it lowers accuracy and its class's recall,
  but adds no label (it is not a prediction of any class) and no false positive to any class.
  In the confusion matrix it is not a cell; each class reports its ``missing`` count instead.
- With a hierarchy (label -> category; a label not listed is its own category), category
  accuracy counts a prediction correct when its category equals the gold label's, and the gap
  is category accuracy minus accuracy: how much of the error stays within a category.
  Categories and unlisted labels are separate namespaces: an unlisted label never equals a
  category, even one of the same name (with CITY = "place", a prediction "place" for gold CITY
  is a category error, unless "place" is itself listed under the category "place").
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragscore.stages.rates import prf
from ragscore.stages.records import Fields, Joined

TOP_CONFUSIONS = 10


def parse_label(f: Fields) -> str:
    """Read a line's ``label`` (a non-empty string, or an integer read as its decimal string)."""
    return f.ident("label", f.require("label", "a non-empty string or an integer"))


@dataclass(frozen=True, slots=True)
class ClassifyResult:
    """The confusion counts of a run: everything the metrics and reports need."""

    labels: tuple[str, ...]
    matrix: tuple[tuple[int, ...], ...]  # rows: gold label, columns: predicted label
    missing: tuple[int, ...]  # per gold label: items without a prediction
    category_correct: int | None  # with a hierarchy: items whose predicted category is the gold one

    @property
    def total(self) -> int:
        """Return the number of gold items."""
        return sum(map(sum, self.matrix)) + sum(self.missing)

    def support(self, n: int) -> int:
        """Return the gold count of label ``n`` (its missing items included)."""
        return sum(self.matrix[n]) + self.missing[n]

    def predicted(self, n: int) -> int:
        """Return how many items were predicted as label ``n``."""
        return sum(row[n] for row in self.matrix)

    def per_class(self) -> dict[str, dict[str, float | int]]:
        """Return precision, recall, F1, support, predicted and missing counts per label."""
        out: dict[str, dict[str, float | int]] = {}
        for n, label in enumerate(self.labels):
            precision, recall, f1 = prf(self.matrix[n][n], self.predicted(n), self.support(n))
            out[label] = {"precision": precision, "recall": recall, "f1": f1, "support": self.support(n),
                          "predicted": self.predicted(n), "missing": self.missing[n]}
        return out

    def metrics(self) -> dict[str, float | None]:
        """Return accuracy, the macro and weighted averages, and with a hierarchy the category scores."""
        rows = list(self.per_class().values())
        total = self.total
        correct = sum(self.matrix[n][n] for n in range(len(self.labels)))
        accuracy = correct / total if total else None
        out: dict[str, float | None] = {"accuracy": accuracy}
        for name in ("precision", "recall", "f1"):
            out[f"macro_{name}"] = math.fsum(float(r[name]) for r in rows) / len(rows) if rows else None
        for name in ("precision", "recall", "f1"):
            weight = sum(int(r["support"]) for r in rows)
            out[f"weighted_{name}"] = (math.fsum(float(r[name]) * int(r["support"]) for r in rows) / weight
                                       if weight else None)
        if self.category_correct is not None:
            category = self.category_correct / total if total else None
            out["category_accuracy"] = category
            out["category_gap"] = None if category is None or accuracy is None else category - accuracy
        return out

    def top_confusions(self, limit: int = TOP_CONFUSIONS) -> list[dict[str, object]]:
        """Return the most frequent off-diagonal cells: by count, then gold label, then predicted label."""
        cells = [
            (-count, self.labels[g], self.labels[p])
            for g, row in enumerate(self.matrix) for p, count in enumerate(row) if g != p and count
        ]
        return [{"gold": gold, "predicted": pred, "count": -neg} for neg, gold, pred in sorted(cells)[:limit]]


def category_of(label: str, hierarchy: Mapping[str, str]) -> tuple[str, str]:
    """Return a label's category: ("category", c) when listed, ("label", label) when not (its own category)."""
    category = hierarchy.get(label)
    return ("label", label) if category is None else ("category", category)


def score_classify(pairs: Sequence[tuple[str, str | None]], hierarchy: Mapping[str, str] | None = None) -> ClassifyResult:
    """Count (gold label, predicted label or None for a missing prediction) pairs into a result."""
    labels = tuple(sorted({g for g, _ in pairs} | {p for _, p in pairs if p is not None}))
    cells = Counter((g, p) for g, p in pairs if p is not None)
    matrix = tuple(tuple(cells[(g, p)] for p in labels) for g in labels)
    missing_by = Counter(g for g, p in pairs if p is None)
    missing = tuple(missing_by[label] for label in labels)
    category_correct = None
    if hierarchy is not None:
        category_correct = sum(
            1 for g, p in pairs if p is not None and category_of(g, hierarchy) == category_of(p, hierarchy)
        )
    return ClassifyResult(labels, matrix, missing, category_correct)


def joined_pairs(joined: Joined[str, str]) -> list[tuple[str, str | None]]:
    """Return (gold label, predicted label or None) per gold item, in gold file order."""
    return [(gold, pred) for _, gold, pred in joined.pairs]
