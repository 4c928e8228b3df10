"""ragscore's tool metrics compared with ragas' and deepeval's, case by case (issue 36).

tests/data/tool_references/cases.json holds 325 cases (25 hand-picked, 300 seeded random) and what ragas 0.4.3's
ToolCallF1 and ToolCallAccuracy and deepeval 4.3.1's ToolCorrectnessMetric give on each (written by
make_references.py there; NOTES.md explains every definition). Neither library is in the test extra, so their
values are committed; ragscore's are computed here with ``tool_values``.

- Each row of NOTES.md's table "Where ragscore's metrics equal a reference value" is a row of ROWS: the subset of
  cases where the two definitions coincide is computed here in plain Python, from the NOTES' wording, and ragscore
  must equal the reference on every case in it. The subset's size, and how many of all cases agree anyway, must be
  the NOTES' counts (so a predicate that matches nothing, or too much, fails), and NOTES.md's table must say so.
- Each case NOTES.md names for a difference ("The differences, one line each") is a row of DIFFERENCES: the
  reference's value and ragscore's, as NOTES.md states them (docs/metrics.md, "Tool calls compared with ragas and
  deepeval", summarises them).
- The NOTES' other claims on the data: only arguments-not-an-object raises; no ragas ToolCallF1 passes 1.0 (issue
  36 said it did: not in 0.4.3); ToolCallAccuracy is 0.0 on every case of unequal lengths.
- ragscore's own invariants on every case: every value in [0, 1]; exact match => in-order match => any-order match.
- The last test remakes cases.json (about 5 s) when ragas and deepeval are installed: it must be the same bytes.
"""

from __future__ import annotations

import importlib.util
import json
import operator
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from conftest import DATA
from docs import doc_section
from ragscore.loaders.tool_calls import EXACT, SUBSET, Call
from ragscore.metrics.tools import tool_values

HERE = DATA / "tool_references"
NOTES = (HERE / "NOTES.md").read_text("utf-8")
DOCUMENT: dict[str, Any] = json.loads((HERE / "cases.json").read_text("utf-8"))
CASES: dict[str, dict[str, Any]] = {case["id"]: case for case in DOCUMENT["cases"]}
NOT_AN_OBJECT = "arguments-not-an-object"  # the one case both libraries refuse
SCORED = [case for case in DOCUMENT["cases"] if case["id"] != NOT_AN_OBJECT]
NAMES = "names"  # a pseudo rule: ragscore's exact rule on the calls with every argument object replaced by {}
TOLERANCE = 5e-5  # ragas rounds its F1 to 4 places

Calls = list[Call]


def calls(case: dict[str, Any], side: str, rule: str = EXACT) -> Calls:
    return [Call(c["name"], {} if rule == NAMES else c["arguments"]) for c in case[side]]


def ragscore_values(case: dict[str, Any], rule: str) -> dict[str, float | None]:
    return tool_values(calls(case, "predicted", rule), calls(case, "gold", rule), SUBSET if rule == SUBSET else EXACT)


def ragscore(case: dict[str, Any], metric: str, rule: str) -> float | None:
    """ragscore's value; ``call_f1`` is the F1 of tool_call_precision and tool_call_recall (0 if either is None)."""
    values = ragscore_values(case, rule)
    if metric != "call_f1":
        return values[metric]
    p, r = values["tool_call_precision"] or 0.0, values["tool_call_recall"] or 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


# The argument comparisons, restated: JSON equality (ragscore's exact rule: numbers by value, true apart from 1,
# objects whatever their key order), the subset rule (gold's keys present with equal values), Python's == (ragas'
# ToolCallF1, deepeval), and ToolCallAccuracy's per-key str() (exact_match_args == 1.0).
def canonical(v: Any) -> Any:
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int | float):
        return ("number", float(v))
    if isinstance(v, dict):
        return ("object", frozenset((k, canonical(x)) for k, x in v.items()))
    if isinstance(v, list):
        return ("array", tuple(canonical(x) for x in v))
    return v


def json_equal(p: dict, g: dict) -> bool:
    return canonical(p) == canonical(g)


def subset_equal(p: dict, g: dict) -> bool:
    return all(k in p and canonical(p[k]) == canonical(v) for k, v in g.items())


def str_equal(p: dict, g: dict) -> bool:
    """ragas' exact_match_args(p, g) == 1.0: both empty; gold empty and the prediction not scores 0."""
    return not p if not g else all(k in p and str(p[k]) == str(v) for k, v in g.items())


def shares_an_equal_key(p: dict, g: dict) -> bool:
    """deepeval's _compare_dicts(g, p) > 0 when p != g: a shared key with == values (nested objects recursively)."""
    return any(k in p and (p[k] == v or isinstance(p[k], dict) and isinstance(v, dict) and shares_an_equal_key(p[k], v))
               for k, v in g.items())


Predicate = Callable[[Calls, Calls], bool]


def alike(reference: Callable[[dict, dict], bool], ours: Callable[[dict, dict], bool]) -> Predicate:
    """Pairs compare alike: every predicted and gold call of the same name are equal to the reference exactly
    where they are to ragscore's rule."""
    return lambda pred, gold: all(reference(p.arguments, g.arguments) == ours(p.arguments, g.arguments)
                                  for p in pred for g in gold if p.name == g.name)


def twice(calls_: Calls, key: Callable[[Call], Any] = lambda c: c) -> bool:
    """Some call (or its key) repeated: Python ==, as ragas' sets and deepeval's ToolCall.__eq__ compare."""
    return any(key(a) == key(b) for i, a in enumerate(calls_) for b in calls_[i + 1:])


def no_partial_credit(pred: Calls, gold: Calls) -> bool:
    """deepeval scores each same-name pair 1 (==) or 0 (no shared equal key), as ragscore's exact rule does."""
    return all(p.arguments == g.arguments or not shares_an_equal_key(p.arguments, g.arguments)
               for p in pred for g in gold if p.name == g.name)


# The conditions NOTES.md's table states, in its words; a row's subset is the cases that meet all of its.
CONDITIONS: dict[str, Predicate] = {
    "all": lambda pred, gold: True,
    "no name twice": lambda pred, gold: not twice(pred, lambda c: c.name) and not twice(gold, lambda c: c.name),
    "no call twice": lambda pred, gold: not twice(pred) and not twice(gold),
    "no predicted call twice": lambda pred, gold: not twice(pred),
    "not both empty": lambda pred, gold: bool(pred or gold),
    "gold not empty": lambda pred, gold: bool(gold),
    "equal lengths": lambda pred, gold: len(pred) == len(gold),
    "pairs alike (==, exact)": alike(operator.eq, json_equal),
    "pairs alike (str, exact)": alike(str_equal, json_equal),
    "pairs alike (str, subset)": alike(str_equal, subset_equal),
    "no partial credit": no_partial_credit,
}


class Row(NamedTuple):
    metric: str              # ragscore's (call_f1: the F1 of tool_call_precision and tool_call_recall)
    rule: str                # exact, subset, or names (the exact rule on names only)
    reference: str           # a configuration of cases.json
    is_one: bool             # compared with [reference == 1]
    subset: tuple[str, ...]  # the CONDITIONS under which the definitions coincide
    size: int                # the subset's size, as NOTES.md counts it
    anyway: int              # cases of all 324 that agree, as NOTES.md counts them
    exceptions: tuple[str, ...] = ()  # cases of the subset that differ, as NOTES.md explains them


PY, STR_EXACT, STR_SUBSET = "pairs alike (==, exact)", "pairs alike (str, exact)", "pairs alike (str, subset)"
TWICE = "no predicted call twice"
# NOTES.md's table, row by row, in its order.
ROWS = [
    Row("tool_name_f1", EXACT, "ragas.ToolCallF1.names", False, ("no name twice", "not both empty"), 142, 202),
    Row("call_f1", EXACT, "ragas.ToolCallF1", False, ("no call twice", PY, "not both empty"), 236, 268),
    Row("trajectory_exact_match", SUBSET, "ragas.ToolCallAccuracy", True, (STR_SUBSET,), 267, 314),
    Row("trajectory_exact_match", EXACT, "ragas.ToolCallAccuracy", True, (STR_EXACT,), 294, 319),
    Row("trajectory_any_order_match", EXACT, "ragas.ToolCallAccuracy.any_order", True,
        ("equal lengths", STR_EXACT), 132, 254),
    Row("trajectory_any_order_match", SUBSET, "ragas.ToolCallAccuracy.any_order", True,
        ("equal lengths", STR_SUBSET), 120, 246, ("any-order-sort-pairs-wrongly",)),
    Row("tool_name_recall", EXACT, "deepeval.names", False, ("gold not empty", TWICE), 220, 270),
    Row("tool_call_recall", EXACT, "deepeval.input", False,
        ("gold not empty", TWICE, PY, "no partial credit"), 205, 267),
    Row("trajectory_any_order_match", EXACT, "deepeval.input", True, (TWICE, PY), 256, 317),
    Row("trajectory_in_order_match", EXACT, "deepeval.input.ordering", True, (PY,), 323, 323),
    Row("trajectory_exact_match", EXACT, "deepeval.input.exact", False, (PY,), 323, 323),
    Row("trajectory_exact_match", NAMES, "deepeval.names.exact", False, ("all",), 324, 324),
    Row("trajectory_in_order_match", NAMES, "deepeval.names.ordering", True, ("all",), 324, 324),
    Row("trajectory_any_order_match", NAMES, "deepeval.names", True, (TWICE,), 257, 313),
]


def row_id(row: Row) -> str:
    reference = f"[{row.reference}==1]" if row.is_one else row.reference
    return f"{row.metric}({row.rule})={reference}"


def agrees(row: Row, case: dict[str, Any]) -> bool:
    ours, theirs = ragscore(case, row.metric, row.rule), case[row.reference]
    if row.is_one:
        theirs = float(theirs == 1.0)
    return ours is not None and abs(ours - theirs) <= TOLERANCE


@pytest.mark.parametrize("row", ROWS, ids=[row_id(row) for row in ROWS])
def test_ragscore_equals_the_reference_where_the_definitions_coincide(row: Row):
    subset = [c for c in SCORED if all(CONDITIONS[name](calls(c, "predicted"), calls(c, "gold")) for name in
                                       row.subset)]
    differ = [c["id"] for c in subset if not agrees(row, c)]
    assert differ == list(row.exceptions)
    assert len(subset) == row.size
    assert sum(agrees(row, c) for c in SCORED) == row.anyway


def test_the_notes_table_counts_what_the_rows_count():
    section = NOTES.split("## Where ragscore's metrics equal a reference value")[1].split("\n## ")[0]
    table = [line for line in section.splitlines() if re.match(r"\| `?\S", line) and "---" not in line][1:]
    stated = []
    for line in table:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        reference = re.fullmatch(r"`(\[)?([\w.]+)(?: == 1\])?`.*", cells[1])
        agree, size = re.fullmatch(r"(\d+) / (\d+).*", cells[3]).groups()
        stated.append((reference[2], bool(reference[1]), int(agree), int(size), int(cells[4])))
    assert stated == [(r.reference, r.is_one, r.size - len(r.exceptions), r.size, r.anyway) for r in ROWS]


# case: [(reference configuration, its value, ragscore's metric, rule, ragscore's value)], as NOTES.md states them
DIFFERENCES: dict[str, list[tuple[str, float, str, str, float | None]]] = {
    "duplicate-predicted-of-one-gold": [("ragas.ToolCallF1", 1.0, "tool_name_f1", EXACT, 0.5),
                                        ("deepeval.names", 1.0, "tool_name_f1", EXACT, 0.5),
                                        ("deepeval.names", 1.0, "tool_name_recall", EXACT, 1.0)],
    "duplicate-gold-one-predicted": [("ragas.ToolCallF1", 1.0, "tool_name_f1", EXACT, 2 / 3)],
    "same-name-other-arguments-twice": [("ragas.ToolCallF1", 0.0, "tool_call_precision", EXACT, 0.0),
                                        ("ragas.ToolCallF1", 0.0, "tool_call_recall", EXACT, 0.0),
                                        ("ragas.ToolCallF1.names", 1.0, "tool_name_f1", EXACT, 1.0),
                                        ("deepeval.names", 1.0, "tool_name_recall", EXACT, 1.0)],
    "both-empty": [("ragas.ToolCallF1", 0.0, "tool_name_f1", EXACT, None),
                   ("deepeval.names", 1.0, "tool_name_recall", EXACT, None)],
    "random-002": [("ragas.ToolCallF1", 0.6667, "call_f1", EXACT, 2 / 3)],  # in row 2's subset: only the rounding
    "retry-then-next": [("ragas.ToolCallAccuracy", 0.0, "trajectory_in_order_match", EXACT, 1.0),
                        ("ragas.ToolCallAccuracy.any_order", 0.0, "tool_call_recall", EXACT, 1.0)],
    "one-argument-of-two-wrong": [("ragas.ToolCallAccuracy", 0.5, "trajectory_exact_match", SUBSET, 0.0),
                                  ("deepeval.input", 0.5, "tool_call_recall", EXACT, 0.0)],
    "int-and-float": [("ragas.ToolCallAccuracy", 0.0, "trajectory_exact_match", SUBSET, 1.0)],
    "string-and-number": [("ragas.ToolCallAccuracy", 1.0, "trajectory_exact_match", SUBSET, 0.0)],
    "nested-key-order": [("ragas.ToolCallAccuracy", 0.0, "trajectory_exact_match", SUBSET, 1.0)],
    "gold-without-arguments": [("ragas.ToolCallAccuracy", 0.0, "trajectory_exact_match", SUBSET, 1.0),
                               ("ragas.ToolCallAccuracy", 0.0, "trajectory_exact_match", EXACT, 0.0)],
    "any-order-sort-pairs-wrongly": [("ragas.ToolCallAccuracy", 1.0, "trajectory_exact_match", SUBSET, 1.0),
                                     ("ragas.ToolCallAccuracy.any_order", 0.0, "trajectory_any_order_match", SUBSET,
                                      1.0)],
    "extra-call-between": [("ragas.ToolCallAccuracy.any_order", 0.0, "trajectory_any_order_match", EXACT, 1.0)],
    "true-and-1": [("ragas.ToolCallF1", 1.0, "call_f1", EXACT, 0.0)] + [
        (f"deepeval.{which}", 1.0, metric, EXACT, 0.0) for which, metric in [
            ("input", "tool_call_recall"), ("input.ordering", "trajectory_in_order_match"),
            ("input.exact", "trajectory_exact_match")]] + [
        (f"deepeval.names{mode}", 1.0, "tool_name_recall", EXACT, 1.0) for mode in ["", ".ordering", ".exact"]],
    "duplicates-on-both-sides": [("deepeval.names", 0.5, "tool_name_recall", EXACT, 1.0),
                                 ("deepeval.input", 0.5, "tool_call_recall", EXACT, 1.0)],
    "same-name-same-arguments-twice": [("deepeval.names", 0.5, "tool_name_recall", EXACT, 1.0)],
    "lcs-is-not-subsequence": [("deepeval.names.ordering", 2 / 3, "trajectory_in_order_match", EXACT, 0.0)],
    "reordered": [("deepeval.names.ordering", 0.5, "trajectory_in_order_match", EXACT, 0.0)],
    "extra-argument-key": [("deepeval.input", 0.5, "tool_call_recall", EXACT, 0.0),
                           ("deepeval.input", 0.5, "tool_call_recall", SUBSET, 1.0)],
    "gold-empty": [("deepeval.names", 0.0, "tool_name_recall", EXACT, None)],
}
DIFFERENCE_ROWS = [(case, *row) for case, rows in DIFFERENCES.items() for row in rows]


@pytest.mark.parametrize(("case", "reference", "theirs", "metric", "rule", "ours"), DIFFERENCE_ROWS,
                         ids=[f"{case}:{reference}:{metric}({rule})" for case, reference, _, metric, rule, _ in
                              DIFFERENCE_ROWS])
def test_each_documented_difference_is_in_the_data(case, reference, theirs, metric, rule, ours):
    assert CASES[case][reference] == pytest.approx(theirs, abs=TOLERANCE)
    assert ragscore(CASES[case], metric, rule) == (None if ours is None else pytest.approx(ours, abs=1e-12))


def test_every_case_the_notes_name_for_a_difference_is_checked():
    section = NOTES.split("## The differences, one line each")[1]
    named = {name for line in section.splitlines() if line.startswith("| ")
             for name in re.findall(r"`([a-z0-9-]+)`", line.rsplit("|", 2)[1])}
    named_in_prose_only = {"duplicate-gold-one-predicted", "extra-call-between", "reordered"}
    assert named | named_in_prose_only == set(DIFFERENCES) | {NOT_AN_OBJECT}


def test_the_docs_name_the_versions_compared_and_this_test():
    section = doc_section("Tool calls compared with ragas and deepeval")
    assert "tests/data/tool_references/" in section and "tests/test_tool_references.py" in section
    versions = re.findall(r"\b(ragas|deepeval) ([\d.]+)", DOCUMENT["generator"])
    assert len(versions) == 2 and all(f"{package} {version}" in section for package, version in versions)


def test_arguments_must_be_an_object_for_both_references_not_for_ragscore():
    case = CASES[NOT_AN_OBJECT]
    refused = [key for key in DOCUMENT["configurations"] if key != "ragas.ToolCallF1.names"]  # that one has no args
    errors = [(c["id"], key) for c in DOCUMENT["cases"] for key in DOCUMENT["configurations"]
              if isinstance(c[key], dict)]
    assert errors == [(NOT_AN_OBJECT, key) for key in refused]
    assert {case[key]["error"] for key in refused} == {"ValidationError"} and case["ragas.ToolCallF1.names"] == 1.0
    assert ragscore(case, "tool_call_recall", EXACT) == ragscore(case, "trajectory_exact_match", EXACT) == 1.0


def test_ragas_f1_never_passes_one():
    """Issue 36 said ragas' ToolCallF1 exceeds 1.0 with duplicates: in 0.4.3 it is set-based (NOTES.md)."""
    values = [c[key] for c in SCORED for key in ("ragas.ToolCallF1", "ragas.ToolCallF1.names")]
    assert all(0.0 <= v <= 1.0 for v in values) and max(values) == 1.0
    assert CASES["duplicate-predicted-of-one-gold"]["ragas.ToolCallF1"] == 1.0


def test_ragas_accuracy_is_all_or_nothing_on_the_sequence_partial_on_the_arguments():
    """NOTES.md: the 174 cases of unequal lengths score 0.0 in both modes; 13 score a fraction in each mode."""
    modes = ("ragas.ToolCallAccuracy", "ragas.ToolCallAccuracy.any_order")
    unequal = [c for c in DOCUMENT["cases"] if len(c["predicted"]) != len(c["gold"])]
    assert len(unequal) == 174 and {c[mode] for c in unequal for mode in modes} == {0.0}
    assert [sum(c[mode] not in (0.0, 1.0) for c in SCORED) for mode in modes] == [13, 13]


@pytest.mark.parametrize("rule", [EXACT, SUBSET, NAMES])
def test_ragscore_s_own_invariants_on_every_case(rule: str):
    for case in DOCUMENT["cases"]:
        values = ragscore_values(case, rule)
        assert all(v is None or 0.0 <= v <= 1.0 for v in values.values()), case["id"]
        exact, ordered, anywhere = (values[f"trajectory_{m}_match"] for m in ("exact", "in_order", "any_order"))
        assert exact <= ordered <= anywhere, case["id"]


def test_the_references_still_give_the_committed_cases(tmp_path: Path):
    missing = [name for name in ("ragas", "deepeval") if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (pip install -e '.[ragas]'): "
                    "cases.json not regenerated")
    subprocess.run([sys.executable, str(HERE / "make_references.py"), str(tmp_path)], check=True, timeout=600,
                   cwd=tmp_path)  # about 5 s
    assert (tmp_path / "cases.json").read_bytes() == (HERE / "cases.json").read_bytes()
