"""Tool calls judged against the gold calls (issue 36): names as multisets, calls under an arguments rule, and
trajectories as Vertex AI defines them.

Pure functions over ``Call``s: a name and the arguments as parsed JSON, or ``INVALID`` when the call's
arguments were not valid JSON (such a call still counts under its name, and never matches a gold call on its
arguments). Two calls match when their names are equal and the predicted arguments satisfy the gold ones under
the item's rule: ``exact`` (equal as JSON values: ``1`` equals ``1.0``, ``true`` is not ``1``, objects ignore key
order) or ``subset`` (every gold key present with an equal value). Every count pairs calls one to one: a
duplicated gold call needs a distinct predicted call, and a duplicated predicted call matches at most one gold
call, so no value passes 1.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from typing import Final

from ragscore.loaders.tool_calls import ANY_ORDER, EXACT, IN_ORDER, INVALID, SUBSET, Call, GoldTools

__all__ = ["ANY_ORDER", "EXACT", "IN_ORDER", "SUBSET", "in_order", "json_equal", "matched_calls", "matched_names",
           "matches", "tool_values", "tools_row"]


def json_equal(a: object, b: object) -> bool:
    """Tell whether two parsed JSON values are the same JSON value: numbers by value (``1`` is ``1.0``), ``true``
    and ``false`` apart from numbers, objects whatever their keys' order, arrays in order."""
    if type(a) is bool or type(b) is bool:
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(json_equal(value, b[key]) for key, value in a.items())
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def matches(predicted: Call, gold: Call, rule: str = EXACT) -> bool:
    """Tell whether a predicted call is the gold call under an arguments rule."""
    if predicted.name != gold.name or predicted.arguments is INVALID:
        return False
    if rule == SUBSET and type(gold.arguments) is dict:
        arguments = predicted.arguments
        return type(arguments) is dict and all(
            key in arguments and json_equal(arguments[key], value) for key, value in gold.arguments.items())
    return json_equal(predicted.arguments, gold.arguments)


def matched_names(predicted: Sequence[Call], gold: Sequence[Call]) -> int:
    """How many calls the two multisets of names share (each call paired once)."""
    return sum((Counter(c.name for c in predicted) & Counter(c.name for c in gold)).values())


def matched_calls(predicted: Sequence[Call], gold: Sequence[Call], rule: str = EXACT) -> int:
    """The most predicted calls that can each be paired with a distinct gold call they match (a maximum bipartite
    matching, ``pairing``: under ``subset`` one call may match several). Under ``exact`` matching is equality of
    canonical forms, so the count is a multiset intersection."""
    if rule == EXACT:
        made = Counter(_canonical(c) for c in predicted if c.arguments is not INVALID)
        return sum((made & Counter(_canonical(c) for c in gold)).values())
    return sum(1 for i in pairing(predicted, gold, rule) if i >= 0)


def _canonical(call: Call) -> object:
    """A call as a hashable value that two calls share exactly when ``matches`` pairs them under ``exact``."""
    return call.name, _form(call.arguments)


def _form(value: object) -> object:
    """A parsed JSON value made hashable with ``json_equal``'s equality: numbers by value (``1`` is ``1.0``),
    ``true`` and ``false`` apart from numbers, objects whatever their keys' order, arrays in order."""
    if type(value) is bool:
        return "bool", value
    if isinstance(value, (int, float)):
        return ("number", Fraction(value)) if math.isfinite(value) else ("number", repr(value))
    if type(value) is dict:
        return "object", frozenset((key, _form(item)) for key, item in value.items())
    if type(value) is list:
        return "array", tuple(_form(item) for item in value)
    return type(value).__name__, value


def in_order(predicted: Sequence[Call], gold: Sequence[Call], rule: str = EXACT) -> bool:
    """Tell whether the gold calls appear among the predicted ones in their order (others may come between): each
    gold call paired with the earliest predicted call after the last one paired, which finds a pairing whenever
    one exists."""
    position = 0
    for g in gold:
        while position < len(predicted) and not matches(predicted[position], g, rule):
            position += 1
        if position == len(predicted):
            return False
        position += 1
    return True


def tool_values(predicted: Sequence[Call], gold: Sequence[Call], rule: str = EXACT
                ) -> dict[str, float | None]:
    """One question's tool metrics (None where undefined: the precisions and the invalid rate with no predicted
    call, the recalls with no gold call, the F1 with neither)."""
    n_pred, n_gold = len(predicted), len(gold)
    names = matched_names(predicted, gold)
    calls = matched_calls(predicted, gold, rule)
    if n_gold:
        exact = n_pred == n_gold and all(matches(p, g, rule) for p, g in zip(predicted, gold, strict=True))
        ordered = in_order(predicted, gold, rule)
        anywhere = calls == n_gold
    else:
        exact = ordered = anywhere = not n_pred  # nothing expected: right exactly when nothing was called
    invalid = sum(1 for c in predicted if c.arguments is INVALID)
    return {
        "tool_name_precision": names / n_pred if n_pred else None,
        "tool_name_recall": names / n_gold if n_gold else None,
        "tool_name_f1": 2 * names / (n_pred + n_gold) if n_pred + n_gold else None,
        "tool_call_precision": calls / n_pred if n_pred else None,
        "tool_call_recall": calls / n_gold if n_gold else None,
        "trajectory_exact_match": float(exact),
        "trajectory_in_order_match": float(ordered),
        "trajectory_any_order_match": float(anywhere),
        "tool_args_invalid_rate": invalid / n_pred if n_pred else None,
    }


def tools_row(predicted: Sequence[Call], gold: GoldTools) -> tuple[float, ...]:
    """One question's tool metrics in the order of ``METRICS.names("tools")`` (NaN where undefined): those of
    ``tool_values`` under the item's arguments rule, with ``tool_use_accuracy`` (the trajectory metric its
    ``tool_match`` names) before the invalid rate, then the count of calls with invalid arguments."""
    values = tool_values(predicted, gold.calls, gold.arguments)
    values["tool_use_accuracy"] = values[_DECIDES[gold.match]]
    values["tool_args_invalid"] = float(sum(1 for call in predicted if call.arguments is INVALID))
    return tuple(math.nan if (value := values[name]) is None else value for name in ROW)


_DECIDES: Final = {EXACT: "trajectory_exact_match", IN_ORDER: "trajectory_in_order_match",
                   ANY_ORDER: "trajectory_any_order_match"}
ROW: Final = ("tool_name_precision", "tool_name_recall", "tool_name_f1", "tool_call_precision", "tool_call_recall",
              "trajectory_exact_match", "trajectory_in_order_match", "trajectory_any_order_match",
              "tool_use_accuracy", "tool_args_invalid_rate", "tool_args_invalid")


def pairing(predicted: Sequence[Call], gold: Sequence[Call], rule: str = EXACT) -> list[int]:
    """For each gold call, the index of the predicted call a maximum bipartite matching pairs it with (-1: none):
    each predicted call first takes the first free gold call it matches, then each one left out looks for an
    augmenting path (a depth-first search with a stack of its own, however many calls there are)."""
    edges = [[j for j, g in enumerate(gold) if matches(p, g, rule)] for p in predicted]
    owner = [-1] * len(gold)      # the predicted call each gold call is paired with
    paired = [-1] * len(predicted)  # the gold call each predicted call is paired with
    for i, reach in enumerate(edges):
        free = next((j for j in reach if owner[j] < 0), -1)
        if free >= 0:
            owner[free], paired[i] = i, free
    for i, reach in enumerate(edges):
        if paired[i] >= 0 or not reach:
            continue
        seen = [False] * len(gold)
        came: dict[int, int] = {}  # gold call -> the predicted call the search reached it from
        stack, end = [(i, 0)], -1
        while stack and end < 0:
            at, k = stack[-1]
            if k == len(edges[at]):
                stack.pop()
                continue
            stack[-1] = (at, k + 1)
            j = edges[at][k]
            if seen[j]:
                continue
            seen[j], came[j] = True, at
            if owner[j] < 0:
                end = j
            else:
                stack.append((owner[j], 0))
        while end >= 0:  # turn the path: each gold call on it to the call that reached it
            at = came[end]
            previous = paired[at]
            owner[end], paired[at] = at, end
            end = previous
    return owner


def describe_calls(predicted: Sequence[Call], gold: Sequence[Call], rule: str = EXACT) -> list[str]:
    """One line per gold call (the predicted call paired with it, or missed) and per predicted call left unpaired
    (extra, or with arguments that are not JSON), for ``--explain``."""
    owner = pairing(predicted, gold, rule)
    out = []
    for j, (g, i) in enumerate(zip(gold, owner, strict=True), 1):
        found = f"matched by call {i + 1}" if i >= 0 else "missed"
        out.append(f"gold call {j}: {show_call(g)}: {found}")
    paired = set(owner)
    for i, p in enumerate(predicted):
        if i not in paired:
            why = "its arguments are not valid JSON" if p.arguments is INVALID else (
                "a gold call of that name is paired with another call or wants other arguments"
                if any(g.name == p.name for g in gold) else "no gold call has that name")
            out.append(f"call {i + 1}: {show_call(p)}: extra ({why})")
    return out


def show_call(call: Call) -> str:
    """A call as the explanation shows it: its name and its arguments as compact JSON."""
    from ragscore.quoting import quote

    arguments = "(arguments not valid JSON)" if call.arguments is INVALID else json.dumps(
        call.arguments, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return f"{quote(call.name)} {arguments}"
