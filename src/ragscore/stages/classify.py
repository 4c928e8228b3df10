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
- The confusion matrix is kept as its nonzero cells (at most one per gold item); the JSON report
  shows it dense up to ``MAX_DENSE_LABELS`` labels, and as its nonzero cells past that.
- With a hierarchy (label -> category; a label not listed is its own category), category
  accuracy counts a prediction correct when its category equals the gold label's, and the gap
  is category accuracy minus accuracy: how much of the error stays within a category.
  Categories and unlisted labels are separate namespaces: an unlisted label never equals a
  category, even one of the same name (with CITY = "place", a prediction "place" for gold CITY
  is a category error, unless "place" is itself listed under the category "place").
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ragscore.stages.rates import prf
from ragscore.stages.records import Fields, Joined

TOP_CONFUSIONS = 10
# Up to this many labels the JSON report's confusion matrix is dense (a row per gold label); past
# it, it lists the nonzero cells: 20,000 labels would make a dense matrix of 400 million counts.
MAX_DENSE_LABELS: Final = 100


def parse_label(f: Fields) -> str:
    """Read a line's ``label`` (a non-empty string, or an integer read as its decimal string)."""
    return f.ident("label", f.require("label", "a non-empty string or an integer"))


@dataclass(frozen=True, slots=True)
class ClassifyResult:
    """The confusion counts of a run: everything the metrics and reports need.

    The matrix is kept sparse, as its nonzero cells: a run has at most one cell per gold item,
    whatever the number of labels.
    """

    labels: tuple[str, ...]
    cells: tuple[tuple[int, int, int], ...]  # (gold label index, predicted label index, count > 0), sorted
    missing: tuple[int, ...]  # per gold label: items without a prediction
    category_correct: int | None  # with a hierarchy: items whose predicted category is the gold one

    @property
    def total(self) -> int:
        """Return the number of gold items."""
        return sum(count for _, _, count in self.cells) + sum(self.missing)

    @property
    def matrix(self) -> tuple[tuple[int, ...], ...]:
        """Return the dense matrix (rows: gold label, columns: predicted label); for few labels only."""
        rows = [[0] * len(self.labels) for _ in self.labels]
        for g, p, count in self.cells:
            rows[g][p] = count
        return tuple(map(tuple, rows))

    def per_class(self) -> dict[str, dict[str, float | int]]:
        """Return precision, recall, F1, support, predicted and missing counts per label."""
        n = len(self.labels)
        support, predicted, correct = list(self.missing), [0] * n, [0] * n
        for g, p, count in self.cells:
            support[g] += count
            predicted[p] += count
            if g == p:
                correct[g] = count
        out: dict[str, dict[str, float | int]] = {}
        for k, label in enumerate(self.labels):
            precision, recall, f1 = prf(correct[k], predicted[k], support[k])
            out[label] = {"precision": precision, "recall": recall, "f1": f1, "support": support[k],
                          "predicted": predicted[k], "missing": self.missing[k]}
        return out

    def metrics(self) -> dict[str, float | None]:
        """Return accuracy, the macro and weighted averages, and with a hierarchy the category scores."""
        rows = list(self.per_class().values())
        total = self.total
        correct = sum(count for g, p, count in self.cells if g == p)
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
        cells = ((-count, self.labels[g], self.labels[p]) for g, p, count in self.cells if g != p)
        return [{"gold": gold, "predicted": pred, "count": -neg} for neg, gold, pred in heapq.nsmallest(limit, cells)]

    def confusion(self) -> dict[str, list[object]]:
        """Return the JSON report's ``confusion``: the labels, and the dense ``matrix`` up to
        MAX_DENSE_LABELS labels, else the nonzero ``cells`` as [gold index, predicted index, count]."""
        if len(self.labels) <= MAX_DENSE_LABELS:
            return {"labels": list(self.labels), "matrix": [list(row) for row in self.matrix]}
        return {"labels": list(self.labels), "cells": [list(cell) for cell in self.cells]}


def category_of(label: str, hierarchy: Mapping[str, str]) -> tuple[str, str]:
    """Return a label's category: ("category", c) when listed, ("label", label) when not (its own category)."""
    category = hierarchy.get(label)
    return ("label", label) if category is None else ("category", category)


def score_classify(
    pairs: Sequence[tuple[str, str | None]], hierarchy: Mapping[str, str] | None = None
) -> ClassifyResult:
    """Count (gold label, predicted label or None for a missing prediction) pairs into a result."""
    labels = tuple(sorted({g for g, _ in pairs} | {p for _, p in pairs if p is not None}))
    index = {label: n for n, label in enumerate(labels)}
    counted = Counter((index[g], index[p]) for g, p in pairs if p is not None)
    cells = tuple(sorted((g, p, count) for (g, p), count in counted.items()))
    missing_by = Counter(g for g, p in pairs if p is None)
    missing = tuple(missing_by[label] for label in labels)
    category_correct = None
    if hierarchy is not None:
        category_correct = sum(
            1 for g, p in pairs if p is not None and category_of(g, hierarchy) == category_of(p, hierarchy)
        )
    return ClassifyResult(labels, cells, missing, category_correct)


def joined_pairs(joined: Joined[str, str]) -> list[tuple[str, str | None]]:
    """Return (gold label, predicted label or None) per gold item, in gold file order."""
    return [(gold, pred) for _, gold, pred in joined.pairs]
