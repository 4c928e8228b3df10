"""Tool-call metrics (metrics/tools.py, issue 36) against plain restatements on random call sequences:
duplicates, empty lists, extra and reordered calls, invalid arguments; exact => in order => any order; every
value in [0, 1]."""

from __future__ import annotations

from itertools import combinations, permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragscore.metrics.tools import ANY_ORDER, EXACT, IN_ORDER, INVALID, SUBSET, Call, json_equal, matches, tool_values

ARGUMENTS = st.sampled_from([{}, {"q": "paris"}, {"q": "paris", "k": 3}, {"q": "berlin"}, {"k": 3.0}, {"k": True},
                             [1, 2], INVALID])
CALLS = st.lists(st.builds(Call, st.sampled_from(["search", "fetch", "calc"]), ARGUMENTS), max_size=5)


def _matching_by_brute_force(predicted, gold, rule):
    """The largest set of disjoint (predicted, gold) pairs that match: every injection tried."""
    best = 0
    small, large, flip = (predicted, gold, False) if len(predicted) <= len(gold) else (gold, predicted, True)
    for chosen in permutations(range(len(large)), len(small)):
        pairs = [(large[j], small[i]) if flip else (small[i], large[j]) for i, j in enumerate(chosen)]
        best = max(best, sum(matches(p, g, rule) for p, g in pairs))
    return best


def _in_order_by_brute_force(predicted, gold, rule):
    return any(all(matches(predicted[i], g, rule) for i, g in zip(positions, gold, strict=True))
               for positions in combinations(range(len(predicted)), len(gold)))


def _names(calls):
    return sorted(c.name for c in calls)


def _shared_names(predicted, gold):
    rest, shared = _names(gold), 0
    for name in _names(predicted):
        if name in rest:
            rest.remove(name)
            shared += 1
    return shared


@given(CALLS, CALLS, st.sampled_from([EXACT, SUBSET]))
@settings(max_examples=3000, deadline=None)
def test_every_metric_is_its_plain_restatement(predicted, gold, rule):
    got = tool_values(predicted, gold, rule)
    names, calls = _shared_names(predicted, gold), _matching_by_brute_force(predicted, gold, rule)
    p, g = len(predicted), len(gold)
    want = {
        "tool_name_precision": names / p if p else None,
        "tool_name_recall": names / g if g else None,
        "tool_name_f1": (2 * names / (p + g)) if p + g else None,
        "tool_call_precision": calls / p if p else None,
        "tool_call_recall": calls / g if g else None,
        "trajectory_exact_match": float(p == g and all(matches(x, y, rule) for x, y in zip(predicted, gold,
                                                                                          strict=True))
                                        if g else not p),
        "trajectory_in_order_match": float(_in_order_by_brute_force(predicted, gold, rule) if g else not p),
        "trajectory_any_order_match": float(calls == g if g else not p),
        "tool_args_invalid_rate": sum(c.arguments is INVALID for c in predicted) / p if p else None,
    }
    assert got == pytest.approx(want)
    assert all(v is None or 0 <= v <= 1 for v in got.values())
    assert got["trajectory_exact_match"] <= got["trajectory_in_order_match"] <= got["trajectory_any_order_match"]
    if got["tool_name_precision"] is not None and got["tool_name_recall"] is not None and names:
        harmonic = 2 * got["tool_name_precision"] * got["tool_name_recall"] / (
            got["tool_name_precision"] + got["tool_name_recall"])
        assert got["tool_name_f1"] == pytest.approx(harmonic)


def test_a_duplicated_predicted_call_matches_one_gold_call():
    search = Call("search", {"q": "paris"})
    values = tool_values([search, search, search], [search])
    assert values["tool_name_precision"] == values["tool_call_precision"] == pytest.approx(1 / 3)
    assert values["tool_name_recall"] == values["tool_call_recall"] == 1.0
    assert values["tool_name_f1"] == 0.5  # ragas 0.4.3's ToolCallF1 (sets) gives 1.0; its 0.3.0 accuracy 3.0
    assert values["trajectory_exact_match"] == 0.0 and values["trajectory_any_order_match"] == 1.0


def test_the_arguments_rules():
    gold = Call("search", {"q": "paris", "k": 3})
    assert matches(Call("search", {"k": 3.0, "q": "paris"}), gold)
    assert not matches(Call("search", {"q": "paris", "k": True}), Call("search", {"q": "paris", "k": 1}))
    assert not matches(Call("search", {"q": "paris", "k": 3, "lang": "fr"}), gold)
    assert matches(Call("search", {"q": "paris", "k": 3, "lang": "fr"}), gold, SUBSET)
    assert not matches(Call("search", {"q": "paris"}), gold, SUBSET)
    assert not matches(Call("search", INVALID), Call("search", {}), SUBSET)
    assert json_equal([1, {"a": None}], [1.0, {"a": None}]) and not json_equal([1, 2], [2, 1])


def test_nothing_expected_is_right_exactly_when_nothing_was_called():
    assert tool_values([], []) == {
        "tool_name_precision": None, "tool_name_recall": None, "tool_name_f1": None, "tool_call_precision": None,
        "tool_call_recall": None, "trajectory_exact_match": 1.0, "trajectory_in_order_match": 1.0,
        "trajectory_any_order_match": 1.0, "tool_args_invalid_rate": None}
    values = tool_values([Call("calc", INVALID)], [])
    assert values["trajectory_any_order_match"] == 0.0 and values["tool_args_invalid_rate"] == 1.0
    assert {IN_ORDER, ANY_ORDER, EXACT} == {"in_order", "any_order", "exact"}


@given(CALLS, CALLS, st.sampled_from([EXACT, SUBSET]))
@settings(max_examples=2000, deadline=None)
def test_the_pairing_explain_shows_is_a_maximum_matching(predicted, gold, rule):
    from ragscore.metrics.tools import pairing

    owner = pairing(predicted, gold, rule)
    used = [i for i in owner if i >= 0]
    assert len(used) == len(set(used)) == _matching_by_brute_force(predicted, gold, rule)
    assert all(matches(predicted[i], gold[j], rule) for j, i in enumerate(owner) if i >= 0)


def test_thousands_of_equal_calls_and_deep_arguments_neither_recurse_nor_crawl():
    from ragscore.loaders.tool_calls import MAX_DEPTH, read_call
    from ragscore.metrics.tools import matched_calls, pairing

    many = [Call("f", {})] * 1500
    assert matched_calls(many, many) == matched_calls(many, many, SUBSET) == 1500
    assert sum(i >= 0 for i in pairing(many, many, SUBSET)) == 1500
    deep: object = 1
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    assert read_call({"name": "f", "arguments": {"x": deep}}).arguments is INVALID
    shallower = deep[0][0]  # type: ignore[index]  # MAX_DEPTH deep with the object around it
    assert read_call({"name": "f", "arguments": {"x": shallower}}).arguments == {"x": shallower}


@pytest.mark.parametrize(("entry", "call"), [
    ({"name": "f", "args": {"x": 1}, "id": "c1", "type": "tool_call"}, Call("f", {"x": 1})),  # LangChain's ToolCall
    ({"name": "f", "args": {"x": 1}, "id": "c1"}, None),  # no type: no call (counted), never a call with {}
    ({"name": "f", "argument": '{"x": 1}'}, None),
    ({"type": "tool_use", "name": "f", "arguments": {"x": 1}}, None),  # Anthropic's block holds "input"
    ({"type": "tool_use", "name": "f", "parameters": {"x": 1}}, None),
    ({"name": "f", "parameters": {"x": 1}}, None),
    ({"type": "function", "function": {"name": "f", "argumnets": "{}"}}, None),
    ({"name": "f", "id": "c1", "type": "function"}, Call("f", {})),  # a call with no arguments at all
    ({"name": "f", "arguments": None}, Call("f", None)),  # null is JSON: no object, but not invalid
])
def test_a_call_whose_arguments_are_not_found_is_no_call(entry, call):
    from ragscore.loaders.tool_calls import read_call

    assert read_call(entry) == call


def test_a_provider_response_s_unreadable_calls_are_counted_and_legacy_function_calls_read():
    from ragscore.loaders.tool_calls import trace_calls

    completion = {"object": "chat.completion", "choices": [{"message": {"tool_calls": [
        {"type": "custom", "custom": {"name": "grep", "input": "x"}},
        {"type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]}
    read = trace_calls({"response": completion})
    assert read.calls == (Call("f", {}),) and read.unreadable == 1
    legacy = {"object": "chat.completion", "choices": [{"message": {"function_call": {"name": "f",
                                                                                       "arguments": '{"a": 1}'}}}]}
    assert trace_calls({"response": legacy}).calls == (Call("f", {"a": 1}),)
