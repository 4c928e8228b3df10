"""The classify stage against scikit-learn: fixed vectors (committed), random labels (when installed)."""

from __future__ import annotations

import json
import random

import pytest

from conftest import DATA
from ragscore.stages.classify import score_classify

VECTORS = json.loads((DATA / "stages" / "classify_vectors.json").read_text(encoding="utf-8"))["cases"]
TOL = 1e-9
# scikit-learn warns when a random case holds a single label; the labels are passed explicitly.
pytestmark = pytest.mark.filterwarnings("ignore:A single label was found:UserWarning")


def _check(result_pairs: list[tuple[str, str | None]], exp: dict[str, object]) -> None:
    result = score_classify(result_pairs)
    metrics = result.metrics()
    assert list(result.labels) == exp["labels"]
    assert metrics["accuracy"] == pytest.approx(exp["accuracy"], abs=TOL)
    per_class = result.per_class()
    for n, label in enumerate(exp["labels"]):
        row = per_class[label]
        for name in ("precision", "recall", "f1"):
            assert row[name] == pytest.approx(exp[name][n], abs=TOL), (label, name)
        assert row["support"] == exp["support"][n]
    for name in ("macro_precision", "macro_recall", "macro_f1", "weighted_precision", "weighted_recall", "weighted_f1"):
        assert metrics[name] == pytest.approx(exp[name], abs=TOL), name
    assert [list(row) for row in result.matrix] == exp["confusion"]


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_fixed_vectors_equal_scikit_learn(name):
    case = VECTORS[name]
    _check(list(zip(case["gold"], case["pred"], strict=True)), case["expected"])


def _sklearn_expected(gold: list[str], pred: list[str], labels: list[str]) -> dict[str, object]:
    metrics = pytest.importorskip("sklearn.metrics")
    p, r, f, s = metrics.precision_recall_fscore_support(gold, pred, labels=labels, zero_division=0)
    out: dict[str, object] = {
        "labels": labels, "accuracy": metrics.accuracy_score(gold, pred),
        "precision": p.tolist(), "recall": r.tolist(), "f1": f.tolist(), "support": s.tolist(),
        "confusion": metrics.confusion_matrix(gold, pred, labels=labels).tolist(),
    }
    for average in ("macro", "weighted"):
        ap, ar, af, _ = metrics.precision_recall_fscore_support(gold, pred, labels=labels, average=average, zero_division=0)
        out[f"{average}_precision"], out[f"{average}_recall"], out[f"{average}_f1"] = ap, ar, af
    return out


@pytest.mark.parametrize("seed", range(40))
def test_random_labels_equal_scikit_learn(seed):
    rng = random.Random(seed)
    k = rng.randint(1, 15)
    labels = [f"T{i}" for i in range(k)] + ["ünï", "a|b"]
    n = rng.randint(1, 300)
    gold = [rng.choice(labels[: rng.randint(1, len(labels))]) for _ in range(n)]
    pred = [rng.choice(labels) if rng.random() < 0.5 else g for g in gold]
    _check(list(zip(gold, pred, strict=True)), _sklearn_expected(gold, pred, sorted(set(gold) | set(pred))))


@pytest.mark.parametrize("seed", range(15))
def test_missing_predictions_equal_scikit_learn_with_a_sentinel_outside_the_labels(seed):
    """A missing prediction is wrong, lowers its class's recall, and is no class of its own."""
    rng = random.Random(1000 + seed)
    labels = [f"C{i}" for i in range(rng.randint(1, 8))]
    gold = [rng.choice(labels) for _ in range(rng.randint(1, 120))]
    pred: list[str | None] = [None if rng.random() < 0.2 else rng.choice(labels) for _ in gold]
    present = sorted(set(gold) | {p for p in pred if p is not None})
    sentinel = "\x00missing"
    exp = _sklearn_expected(gold, [sentinel if p is None else p for p in pred], present)
    result = score_classify(list(zip(gold, pred, strict=True)))
    metrics = result.metrics()
    assert metrics["accuracy"] == pytest.approx(exp["accuracy"], abs=TOL)
    for name in ("macro_precision", "macro_recall", "macro_f1", "weighted_precision", "weighted_recall", "weighted_f1"):
        assert metrics[name] == pytest.approx(exp[name], abs=TOL), name
    assert [list(row) for row in result.matrix] == exp["confusion"]
    per_class = result.per_class()
    assert [per_class[label]["missing"] for label in present] == [
        sum(1 for g, p in zip(gold, pred, strict=True) if g == label and p is None) for label in present]


def test_missing_prediction_hand_checked():
    result = score_classify([("A", "A"), ("A", None), ("B", "B"), ("B", "A")])
    m = result.metrics()
    assert m["accuracy"] == 0.5
    per_class = result.per_class()
    assert per_class["A"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2, "predicted": 2, "missing": 1}
    assert per_class["B"] == {"precision": 1.0, "recall": 0.5, "f1": pytest.approx(2 / 3), "support": 2, "predicted": 1,
                              "missing": 0}
    assert result.matrix == ((1, 0), (1, 1))


def test_top_confusions_by_count_then_gold_then_predicted_label():
    pairs = [("b", "a")] * 2 + [("a", "b")] * 2 + [("a", "c")] * 3 + [("c", "a")] + [("a", "a")] * 5
    assert score_classify(pairs).top_confusions() == [
        {"gold": "a", "predicted": "c", "count": 3},
        {"gold": "a", "predicted": "b", "count": 2},
        {"gold": "b", "predicted": "a", "count": 2},
        {"gold": "c", "predicted": "a", "count": 1},
    ]
    assert score_classify(pairs).top_confusions(limit=1) == [{"gold": "a", "predicted": "c", "count": 3}]


def test_hierarchy_category_accuracy_and_gap():
    hierarchy = {"CITY": "place", "COUNTRY": "place", "PERSON": "agent"}
    pairs = [("CITY", "CITY"), ("CITY", "COUNTRY"), ("COUNTRY", "PERSON"), ("PERSON", "PERSON"), ("ROBOT", "ROBOT"),
             ("ROBOT", "PERSON"), ("PERSON", None)]
    m = score_classify(pairs, hierarchy).metrics()
    assert m["accuracy"] == pytest.approx(3 / 7)
    # CITY/CITY, CITY/COUNTRY (both places), PERSON/PERSON, ROBOT/ROBOT (unlisted: its own category).
    assert m["category_accuracy"] == pytest.approx(4 / 7)
    assert m["category_gap"] == pytest.approx(1 / 7)
    assert "category_accuracy" not in score_classify(pairs).metrics()


def test_an_unlisted_label_never_equals_a_category_of_the_same_name():
    hierarchy = {"CITY": "place", "COUNTRY": "place"}
    # gold CITY predicted "place": "place" is an unlisted label (its own category), not the category "place".
    m = score_classify([("CITY", "place"), ("CITY", "COUNTRY"), ("place", "place")], hierarchy).metrics()
    assert m["accuracy"] == pytest.approx(1 / 3)
    assert m["category_accuracy"] == pytest.approx(2 / 3)  # CITY/COUNTRY (both places) and place/place
    # Listed under the category "place", the label "place" joins it.
    m = score_classify([("CITY", "place")], {**hierarchy, "place": "place"}).metrics()
    assert m["category_accuracy"] == 1.0


@pytest.mark.parametrize("seed", range(10))
def test_the_sparse_cells_hold_exactly_the_nonzero_entries_of_the_dense_matrix(seed):
    rng = random.Random(2000 + seed)
    labels = [f"L{i}" for i in range(rng.randint(1, 30))]
    pairs: list[tuple[str, str | None]] = [(rng.choice(labels), rng.choice(labels + [None])) for _ in range(rng.randint(1, 200))]
    result = score_classify(pairs)
    index = {label: n for n, label in enumerate(result.labels)}
    dense = [[0] * len(result.labels) for _ in result.labels]
    for g, p in pairs:
        if p is not None:
            dense[index[g]][index[p]] += 1
    assert [list(row) for row in result.matrix] == dense
    assert list(result.cells) == [(g, p, c) for g, row in enumerate(dense) for p, c in enumerate(row) if c]
    cells = sorted((-c, result.labels[g], result.labels[p]) for g, row in enumerate(dense) for p, c in enumerate(row)
                   if c and g != p)
    assert result.top_confusions() == [{"gold": g, "predicted": p, "count": -c} for c, g, p in cells[:10]]


def test_the_json_confusion_is_dense_up_to_the_limit_then_its_nonzero_cells():
    from ragscore.stages.classify import MAX_DENSE_LABELS

    dense = score_classify([(f"L{i:03}", f"L{i:03}") for i in range(MAX_DENSE_LABELS - 1)] + [("L000", "L999")])
    assert list(dense.confusion()) == ["labels", "matrix"] and len(dense.confusion()["matrix"]) == MAX_DENSE_LABELS
    pairs = [(f"L{i:03}", f"L{i:03}") for i in range(MAX_DENSE_LABELS)] + [("L000", "L999"), ("L000", "L999")]
    sparse = score_classify(pairs).confusion()
    assert list(sparse) == ["labels", "cells"] and len(sparse["labels"]) == MAX_DENSE_LABELS + 1
    assert sparse["cells"][:2] == [[0, 0, 1], [0, MAX_DENSE_LABELS, 2]]  # [gold index, predicted index, count]
    assert len(sparse["cells"]) == MAX_DENSE_LABELS + 1
