"""Precision, recall and F1 from counts, shared by the stage scorers."""

from __future__ import annotations


def prf(tp: int, predicted: int, gold: int) -> tuple[float, float, float]:
    """Return precision, recall and F1, each 0 when its denominator is 0 (scikit-learn's ``zero_division=0``)."""
    precision = tp / predicted if predicted else 0.0
    recall = tp / gold if gold else 0.0
    f1 = 2 * tp / (predicted + gold) if tp else 0.0  # = 2PR / (P + R), without its rounding
    return precision, recall, f1
