"""Generate classify_vectors.json: scikit-learn's classification scores on fixed label vectors.

Run once from the project root with the test extra installed (scikit-learn), and commit the
output:  .venv/bin/python tests/data/stages/make_classify_vectors.py
The tests read the JSON, so they check ragscore against scikit-learn without importing it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import sklearn
from sklearn.metrics import accuracy_score, confusion_matrix, precision_recall_fscore_support

CASES = {
    "perfect": (["PER", "LOC", "ORG", "PER"], ["PER", "LOC", "ORG", "PER"]),
    "all_wrong": (["PER", "PER", "LOC"], ["LOC", "LOC", "PER"]),
    "label_only_predicted": (["a", "a", "b", "b"], ["a", "c", "b", "c"]),
    "label_never_predicted": (["a", "b", "c", "c", "c"], ["a", "a", "a", "a", "b"]),
    "single_class": (["x", "x", "x"], ["x", "x", "x"]),
    "imbalanced": (["big"] * 9 + ["small"], ["big"] * 8 + ["small", "big"]),
    "unicode_labels": (["Stadt", "Straße", "城市", "Stadt"], ["Straße", "Straße", "城市", "城市"]),
}


def _random_case(seed: int, n: int, k: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    labels = [f"L{i}" for i in range(k)]
    return [rng.choice(labels) for _ in range(n)], [rng.choice(labels) for _ in range(n)]


def expected(y_true: list[str], y_pred: list[str]) -> dict[str, object]:
    """Return scikit-learn's scores, labels sorted as scikit-learn sorts them."""
    labels = sorted(set(y_true) | set(y_pred))
    p, r, f, s = precision_recall_fscore_support(y_true, y_pred, labels=labels, zero_division=0)
    out: dict[str, object] = {
        "labels": labels,
        "accuracy": accuracy_score(y_true, y_pred),
        "precision": p.tolist(), "recall": r.tolist(), "f1": f.tolist(), "support": s.tolist(),
        "confusion": confusion_matrix(y_true, y_pred, labels=labels).tolist(),
    }
    for average in ("macro", "weighted"):
        ap, ar, af, _ = precision_recall_fscore_support(y_true, y_pred, average=average, zero_division=0)
        out[f"{average}_precision"], out[f"{average}_recall"], out[f"{average}_f1"] = float(ap), float(ar), float(af)
    return out


def main() -> None:
    cases = dict(CASES)
    for seed, (n, k) in enumerate([(20, 3), (50, 5), (200, 12), (7, 9)]):
        cases[f"random_{seed}"] = _random_case(seed, n, k)
    data = {
        "generator": f"tests/data/stages/make_classify_vectors.py with scikit-learn {sklearn.__version__}",
        "cases": {name: {"gold": gold, "pred": pred, "expected": expected(gold, pred)} for name, (gold, pred) in cases.items()},
    }
    path = Path(__file__).with_name("classify_vectors.json")
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
