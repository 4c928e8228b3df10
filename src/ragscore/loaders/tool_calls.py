"""A trace's tool calls (issue 36), in the shapes the SDKs write them, as ``Call``s (``metrics.tools`` judges them).

A trace's ``tool_calls`` list may hold, in any mix: OpenAI chat completions' calls (``{"type": "function",
"function": {"name", "arguments"}}``, the arguments a JSON string), the plain ``{"name", "arguments"}`` (a JSON
string or the object itself), Anthropic's ``tool_use`` content blocks (``{"type": "tool_use", "name",
"input"}``) and OpenAI Responses' ``function_call`` items (``{"type": "function_call", "name", "arguments"}``).
Without that list, the calls of the provider response the trace keeps (``response``, ``raw_response``: a chat
completion's first choice, an Anthropic message's content, a Responses object's output) are read. Arguments
that are not valid JSON make an ``INVALID`` call, counted under its name; an entry of no known shape is not a
call and is counted apart, never guessed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final, NamedTuple

from ragscore.loaders.jsonl import describe
from ragscore.quoting import quote
from ragscore.suggest import did_you_mean

RESPONSE_KEYS: Final = ("response", "raw_response")
EXACT: Final = "exact"
SUBSET: Final = "subset"
ARGUMENT_RULES: Final = (EXACT, SUBSET)  # gold_arguments_match
IN_ORDER: Final = "in_order"
ANY_ORDER: Final = "any_order"
TRAJECTORY_RULES: Final = (EXACT, IN_ORDER, ANY_ORDER)  # tool_match
GOLD_CALL_KEYS: Final = ("name", "arguments")


class _Invalid:
    """The arguments of a call that were not valid JSON."""

    def __repr__(self) -> str:
        return "INVALID"


INVALID: Final = _Invalid()


class Call(NamedTuple):
    """One tool call: its name and its arguments as parsed JSON (``INVALID``: they were not valid JSON)."""

    name: str
    arguments: object


class ReadCalls(NamedTuple):
    """What a trace says of its tool calls."""

    calls: tuple[Call, ...]
    unreadable: int   # entries of its list that are no call in any known shape
    found: bool       # whether the trace says anything of tool calls (a list, or a response that can hold them)


NO_CALLS: Final = ReadCalls((), 0, False)


class GoldTools(NamedTuple):
    """A gold item's expected tool calls, in order, and the rules it is judged by."""

    calls: tuple[Call, ...]
    match: str = EXACT      # tool_match: the trajectory metric that says whether its tool use is correct
    arguments: str = EXACT  # gold_arguments_match: how a call's arguments are compared with the gold ones


def gold_tools(calls: object, match: object, arguments: object) -> GoldTools | tuple[str, str]:
    """Read a gold item's ``gold_tool_calls``, ``tool_match`` and ``gold_arguments_match``: the ``GoldTools``, or
    the field at fault and what was wrong with it."""
    if calls is None:  # absent, or null
        key = "tool_match" if match is not None else "gold_arguments_match"
        return key, f'"{key}" says how to judge the item\'s tool calls, but it has no "gold_tool_calls"'
    if type(calls) is not list:
        return "gold_tool_calls", ('expected "gold_tool_calls" to be a list of calls ({"name": N, "arguments": '
                                   f'{{...}}}}), got {describe(calls)}')
    out = []
    for number, entry in enumerate(calls, 1):
        where = f'"gold_tool_calls" entry {number}'
        if type(entry) is not dict:
            return "gold_tool_calls", f'expected {where} to be an object {{"name": N, "arguments": {{...}}}}, got ' \
                                      f'{describe(entry)}'
        for key in entry:
            if key not in GOLD_CALL_KEYS:
                return "gold_tool_calls", (f"unknown key {quote(key)} in {where} (a call has \"name\" and "
                                           f"\"arguments\"){did_you_mean(key, list(GOLD_CALL_KEYS))}")
        name = entry.get("name")
        if type(name) is not str or not name:
            return "gold_tool_calls", f'expected "name" of {where} to be a non-empty string, got {describe(name)}'
        value = entry.get("arguments", {})
        parsed = _arguments(value)
        if type(parsed) is not dict:
            got = (describe(parsed) if parsed is not INVALID else "text that is not JSON" if type(value) is str
                   else f"arguments nested more than {MAX_DEPTH} deep")
            return "gold_tool_calls", (f'expected "arguments" of {where} to be an object (or the JSON text of one), '
                                       f"got {got}")
        out.append(Call(name, parsed))
    rules = []
    for key, value, allowed in (("tool_match", match, TRAJECTORY_RULES),
                                ("gold_arguments_match", arguments, ARGUMENT_RULES)):
        if value is None:
            rules.append(EXACT)
        elif type(value) is str and value in allowed:
            rules.append(value)
        else:
            hint = did_you_mean(value, list(allowed)) if type(value) is str else ""
            choices = ", ".join(f'"{rule}"' for rule in allowed)
            return key, f'expected "{key}" to be one of {choices}, got {describe(value)}{hint}'
    return GoldTools(tuple(out), rules[0], rules[1])


def _arguments(value: object) -> object:
    """Parse arguments written as JSON text; any other JSON value is taken as it is (an object, usually). Text that
    is not valid JSON, or a value nested deeper than ``MAX_DEPTH``, is invalid."""
    if type(value) is str:
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return INVALID
    return value if _depth_within(value) else INVALID


MAX_DEPTH: Final = 64  # arguments nested deeper are invalid: comparing them would recurse past any sense


def _depth_within(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether a parsed JSON value nests at most ``limit`` arrays and objects deep (walked without recursion)."""
    level: list[object] = [value]
    for _ in range(limit + 1):
        inner: list[object] = []
        for node in level:
            if type(node) is dict:
                inner.extend(node.values())
            elif type(node) is list:
                inner.extend(node)
        if not inner:
            return True
        level = inner
    return False


# The keys a call may have beside its name and arguments (ids, kinds, status); any other key in a call whose
# arguments ragscore does not find (``args``, ``parameters``, a misspelt ``argument``) makes it no call, counted,
# rather than a call read with no arguments.
_CALL_KEYS: Final = frozenset({"name", "type", "id", "call_id", "status", "index"})


def read_call(entry: object) -> Call | None:
    """One tool call, in any of the shapes the module names; None when the entry is no call."""
    if type(entry) is not dict:
        return None
    kind = entry.get("type")
    function = entry.get("function")
    if type(function) is dict and type(function.get("name")) is str:  # OpenAI chat completions (and legacy)
        if "arguments" not in function and not _CALL_KEYS.issuperset(function):
            return None
        return Call(function["name"], _arguments(function.get("arguments", "{}")))
    name = entry.get("name")
    if type(name) is not str or not name:
        return None
    if kind == "tool_use":  # Anthropic
        if "input" not in entry and not _CALL_KEYS.issuperset(entry):
            return None
        return Call(name, _arguments(entry.get("input", {})))
    if "arguments" in entry:  # OpenAI Responses' function_call, or the plain shape
        return Call(name, _arguments(entry["arguments"]))
    if kind == "tool_call" and "args" in entry:  # LangChain's ToolCall
        return Call(name, _arguments(entry["args"]))
    if kind in (None, "function_call", "function") and _CALL_KEYS.issuperset(entry):
        return Call(name, {})  # a call with no arguments
    return None


def trace_calls(obj: Mapping[str, object]) -> ReadCalls:
    """A trace's tool calls: its ``tool_calls`` list, else those of the provider response it keeps."""
    listed = obj.get("tool_calls")
    if type(listed) is list:
        calls = [read_call(entry) for entry in listed]
        return ReadCalls(tuple(c for c in calls if c is not None), sum(c is None for c in calls), True)
    for key in RESPONSE_KEYS:
        response = obj.get(key)
        if type(response) is str and response.lstrip()[:1] == "{":
            try:
                response = json.loads(response)
            except (ValueError, RecursionError):
                continue
        if type(response) is dict:
            entries = _response_entries(response)
            if entries is not None:
                calls = [read_call(entry) for entry in entries]
                return ReadCalls(tuple(c for c in calls if c is not None), sum(c is None for c in calls), True)
    return NO_CALLS


def _response_entries(response: dict[str, object]) -> list[object] | None:
    """The entries of a provider response that may be tool calls (None: no response shape that holds them)."""
    content, output, choices = response.get("content"), response.get("output"), response.get("choices")
    if response.get("type") == "message" and type(content) is list:  # Anthropic
        return [b for b in content if type(b) is dict and b.get("type") == "tool_use"]
    if response.get("object") == "response" and type(output) is list:  # OpenAI Responses
        return [i for i in output if type(i) is dict and i.get("type") == "function_call"]
    if response.get("object") == "chat.completion" and type(choices) is list:  # OpenAI chat completions
        message = choices[0].get("message") if choices and type(choices[0]) is dict else None
        calls = message.get("tool_calls") if type(message) is dict else None
        if type(calls) is list:
            return calls
        legacy = message.get("function_call") if type(message) is dict else None  # the API's function calling
        return [{"function": legacy}] if type(legacy) is dict else []
    return None
