"""Lay out a stage document as titled tables of raw values, which the Markdown and HTML reports render.

Reporters format and escape; this module only chooses what goes in which row and column, so
that both formats show the same content.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from ragscore.stages.names import find_spec

MAX_MATRIX_LABELS: Final = 25  # a larger confusion matrix is left to the JSON report
MAX_IDS: Final = 50  # ids listed per accounting row; the JSON report has them all


@dataclass(frozen=True, slots=True)
class Table:
    """A titled table: a header and rows of raw values (strings from the input, numbers, None)."""

    title: str
    header: tuple[str, ...]
    rows: list[tuple[object, ...]] = field(default_factory=list)
    note: str = ""


def summary_table(doc: dict[str, Any]) -> Table:
    """Count the gold items, predictions and the accounting."""
    c = doc["counts"]
    header = ("gold items", "predicted", "missing", "prediction lines", "unknown predictions", "duplicate predictions")
    return Table("Summary", header, [(c["gold"], c["predicted"], c["missing"], c["prediction_lines"],
                                      c["unknown_predictions"], c["duplicate_predictions"])])


def metric_table(doc: dict[str, Any]) -> Table:
    """List every metric with its direction and meaning."""
    rows: list[tuple[object, ...]] = []
    for name, value in doc["metrics"].items():
        spec = find_spec(doc["stage"], name)
        rows.append((name, value, spec.direction.value if spec else "", spec.description if spec else ""))
    return Table("Metrics", ("metric", "value", "better", "meaning"), rows)


def _ner_tables(doc: dict[str, Any]) -> list[Table]:
    per_type = Table("Per type", ("type", "gold", "predicted", "strict P", "strict R", "strict F1",
                                  "partial P", "partial R", "partial F1", "token P", "token R", "token F1"))
    for kind, s in doc["per_type"].items():
        per_type.rows.append((kind, s["gold"], s["predicted"],
                              s["strict_precision"], s["strict_recall"], s["strict_f1"],
                              s["partial_precision"], s["partial_recall"], s["partial_f1"],
                              s["token_precision"], s["token_recall"], s["token_f1"]))
    dist = Table("Type distribution", ("type", "gold", "predicted", "over-prediction"),
                 [(kind, d["gold"], d["predicted"], d["over_prediction"])
                  for kind, d in doc["type_distribution"].items()],
                 "over-prediction = predicted - gold: above 0 the type is predicted too often, below 0 too rarely.")
    return [per_type, dist]


def _classify_tables(doc: dict[str, Any]) -> list[Table]:
    per_class = Table("Per class", ("label", "precision", "recall", "f1", "support", "predicted", "missing"),
                      [(label, s["precision"], s["recall"], s["f1"], s["support"], s["predicted"], s["missing"])
                       for label, s in doc["per_class"].items()])
    tables = [per_class]
    confusion = doc["confusion"]
    labels = confusion["labels"]
    if len(labels) <= MAX_MATRIX_LABELS and "matrix" in confusion:
        tables.append(Table("Confusion matrix", ("gold \\ predicted", *labels),
                            [(label, *row) for label, row in zip(labels, confusion["matrix"], strict=True)],
                            "Rows are gold labels, columns predicted labels; missing predictions are not cells "
                            "(see the missing column above)."))
    else:  # never a table of labels x labels: the JSON report has the matrix, or its nonzero cells
        held = "the matrix is" if "matrix" in confusion else f"its {len(confusion['cells']):,} nonzero cells are"
        tables.append(Table("Confusion matrix", (), [], f"{len(labels):,} labels: {held} in the JSON report."))
    tables.append(Table("Top confusions", ("gold", "predicted", "count"),
                        [(c["gold"], c["predicted"], c["count"]) for c in doc["top_confusions"]],
                        "" if doc["top_confusions"] else "No confusions."))
    return tables


def _link_tables(doc: dict[str, Any]) -> list[Table]:
    n = doc["nil"]
    columns = ("NIL mentions (gold)", "NIL flags (predicted)", "correct NIL flags", "mentions with a kb id")
    return [Table("NIL detection", columns, [(n["gold"], n["predicted"], n["correct"], n["linked_mentions"])])]


def detail_tables(doc: dict[str, Any]) -> list[Table]:
    """Return the stage's own tables."""
    build = {"ner": _ner_tables, "classify": _classify_tables, "link": _link_tables}[doc["stage"]]
    return build(doc)


def accounting_table(doc: dict[str, Any]) -> Table | None:
    """List the ids behind the missing, unknown and duplicate counts (None when there are none)."""
    acc = doc["accounting"]
    what = (("missing_ids", "gold ids without a prediction (scored as an empty prediction)"),
            ("unknown_ids", "prediction ids not in the gold file (ignored)"),
            ("duplicate_ids", "prediction ids given again (the last line counts)"))
    rows: list[tuple[object, ...]] = []
    for key, meaning in what:
        ids = acc[key]
        if ids:
            shown = ", ".join(ids[:MAX_IDS]) + (f", … ({len(ids) - MAX_IDS} more)" if len(ids) > MAX_IDS else "")
            rows.append((meaning, len(ids), shown))
    return Table("Accounting", ("what", "lines", "ids"), rows) if rows else None
