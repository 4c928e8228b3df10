"""Regular expressions that can take exponential time to search, found before they run.

re backtracks: a pattern that can match the same text in many ways tries every way before it
gives up, and "^(a+)+$" on a claim of 33 "a"s and a "!" runs for minutes. A refusal pattern comes
from a settings file that a pull request can change, so such a pattern is refused when it is read.
The rule (docs/settings.md states it) is read off re's own parse of the pattern:

1. no back-reference (\\1, (?P=name));
2. a repeat that can match more than once (*, +, {m,n} with n > 1) holds no repeat of varying
   count (?, *, +, {m,n} with m < n);
3. nor an alternation two of whose branches can start with the same character (., \\w, \\d, \\s,
   a negated class: any character) or one of which can match empty text;
4. nor, anywhere, so many such alternations and optional pieces (x?) one after another that it
   can try more than 256 ways at one place in the claim ((?:a|a) written 30 times tries 2**30).

Inside an atomic group, a possessive repeat or a lookaround nothing is tried again once it has
matched: rules 2 and 3 apply there afresh. What is left is at worst polynomial in the claim's
length (as ".*.*" is).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from re import _casefix, _parser  # type: ignore[attr-defined]
from typing import Any, Final

_RE_PARSER: Final[Any] = _parser  # re's parser: no public module gives its tree
_CASES: Final[Any] = _casefix._EXTRA_CASES  # "s" and "ſ", "i" and "ı" (IGNORECASE)
_REPEATS: Final = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})
_LARGE_CLASS: Final = 4096  # a character class larger than this counts as any character
_POSITIONS_UP_TO: Final = 1000  # longest pattern whose fault is placed (each place tried is one parse)
# The most ways a pattern may try at one place (``_ways``): 2**8, eight optional pieces or
# alternations of two branches in a row. (?:a|a) written 30 times tries 2**30.
MAX_WAYS: Final = 256
_EXPONENTIAL: Final = "matching it can take time exponential in the claim's length"

_Chars = frozenset[int] | None  # the characters a piece can start with (None: any character)


def backtracking_problem(pattern: str) -> str | None:
    """Say why a pattern (one that compiles) can take exponential time to search, with its position, or return None."""
    try:
        fault = _fault(_parsed(pattern), False)
    except RecursionError:
        return "not a valid regular expression: groups nested too deeply"
    if fault is None:
        ways = _ways(_parsed(pattern))
        if ways > MAX_WAYS:
            return (f"it can try more than {MAX_WAYS} ways at each place in the claim (alternatives that can start "
                    f"alike, optional pieces x?, one after another): {_EXPONENTIAL}")
        return None
    at = _position(pattern, fault) if len(pattern) <= _POSITIONS_UP_TO else None
    where = "" if at is None else f" at position {at}"
    if fault == "GROUPREF":
        return f"a back-reference (\\1 or (?P=name)){where}: {_EXPONENTIAL}"
    if fault == "REPEAT":
        return f"a repeated group{where} holds a repeat of varying count (?, *, +, {{m,n}}): {_EXPONENTIAL}"
    return f"a repeated group{where} holds alternatives that can start alike or match nothing: {_EXPONENTIAL}"


def _fault(items: Sequence[tuple[Any, Any]], repeated: bool) -> str | None:
    """Name the first construct (GROUPREF, REPEAT, BRANCH) that breaks the rule in parsed ``items``;
    ``repeated``: they are inside a repeat that can match more than once."""
    for op, av in items:
        name: str = op.name
        if name == "GROUPREF":
            return name
        if name in _REPEATS:
            low, high, body = av
            if repeated and low != high and name != "POSSESSIVE_REPEAT":
                return "REPEAT"
            # A possessive repeat is an atomic group: the rule starts again inside it.
            fault = _fault(body, (repeated and name != "POSSESSIVE_REPEAT") or high > 1)
        elif name == "BRANCH":
            if repeated and _overlap(av[1]):
                return name
            fault = next((f for f in (_fault(branch, repeated) for branch in av[1]) if f is not None), None)
        elif name == "SUBPATTERN":
            fault = _fault(av[3], repeated)
        elif name == "GROUPREF_EXISTS":  # (?(1)yes|no): the group decides, not the text
            fault = _fault(av[1], repeated) or (_fault(av[2], repeated) if av[2] is not None else None)
        elif name == "ATOMIC_GROUP":
            fault = _fault(av, False)
        elif name in ("ASSERT", "ASSERT_NOT"):
            fault = _fault(av[1], False)
        else:
            fault = None
        if fault is not None:
            return fault
    return None


def _ways(items: Sequence[tuple[Any, Any]]) -> int:
    """Bound the ways a search can try ``items`` at one place in the claim before it gives up there:
    the product of each alternation's branches (where two can start alike or one matches nothing)
    and of 2 for each optional piece, through every group (repeats inside repeats are refused by
    ``_fault``; a repeat's own count adds a power of the claim's length, not a product)."""
    ways = 1
    for op, av in items:
        name: str = op.name
        if name == "BRANCH":
            ways *= (len(av[1]) if _overlap(av[1]) else 1) * max(_ways(branch) for branch in av[1])
        elif name in _REPEATS:
            low, high, body = av
            ways *= (2 if (low, high) == (0, 1) else 1) * _ways(body)
        elif name == "SUBPATTERN":
            ways *= _ways(av[3])
        elif name == "GROUPREF_EXISTS":
            ways *= max(_ways(av[1]), _ways(av[2]) if av[2] is not None else 1)
        elif name == "ATOMIC_GROUP":
            ways *= _ways(av)
        elif name in ("ASSERT", "ASSERT_NOT"):
            ways *= _ways(av[1])
        if ways > MAX_WAYS:  # enough to refuse it: no need to count on
            return ways
    return ways


def _overlap(branches: Sequence[Sequence[tuple[Any, Any]]]) -> bool:
    """Tell whether two branches can start with the same character, or one can match empty text."""
    seen: set[int] = set()
    for branch in branches:
        chars, empty = _first(branch)
        if empty or chars is None or not seen.isdisjoint(chars):
            return True
        seen |= chars
    return False


def _first(items: Sequence[tuple[Any, Any]]) -> tuple[_Chars, bool]:
    """The characters ``items`` can start with (as IGNORECASE compares them), and whether they can match empty text."""
    chars: set[int] = set()
    for op, av in items:
        name = op.name
        if name == "LITERAL":
            return frozenset(chars | _folded(av)), False
        if name == "IN":
            found = _class(av)
            return (None if found is None else frozenset(chars | found)), False
        if name in ("AT", "ASSERT", "ASSERT_NOT"):  # zero width: the next piece starts the text
            continue
        parts = _parts(name, av)
        if parts is None:
            return None, False  # any character (., [^a], a category), or a piece not read here: any, to be safe
        empty = name in _REPEATS and av[0] == 0
        for part in parts:
            found, part_empty = _first(part)
            if found is None:
                return None, False
            chars |= found
            empty = empty or part_empty
        if not empty:
            return frozenset(chars), False
    return frozenset(chars), True


def _parts(name: str, av: Any) -> list[Sequence[tuple[Any, Any]]] | None:
    """The sequences a group, a repeat or an alternation is made of (None for any other piece)."""
    if name == "SUBPATTERN":
        return [av[3]]
    if name == "ATOMIC_GROUP":
        return [av]
    if name == "BRANCH":
        return list(av[1])
    if name == "GROUPREF_EXISTS":
        return [av[1], av[2] or []]
    if name in _REPEATS:
        return [av[2]]
    return None


def _folded(code: int) -> set[int]:
    """A character as IGNORECASE compares it: its lower case and the characters re takes for the same."""
    lower = ord(chr(code).lower()) if len(chr(code).lower()) == 1 else code
    return {lower, *_CASES.get(lower, ())}


def _class(items: Sequence[tuple[Any, Any]]) -> frozenset[int] | None:
    """The characters of a class ([a-c], [xy]) as IGNORECASE compares them; None for any (negated, \\w, wide)."""
    chars: set[int] = set()
    for op, av in items:
        if op.name == "LITERAL":
            chars |= _folded(av)
        elif op.name == "RANGE" and len(chars) + av[1] - av[0] < _LARGE_CLASS:  # the class's size bounds the work
            for code in range(av[0], av[1] + 1):
                chars |= _folded(code)
        else:
            return None
    return frozenset(chars)


def _position(pattern: str, fault: str) -> int | None:
    """Where the fault is: the start of the group (or of the back-reference) that the shortest faulty
    start of the pattern ends with; None when no start of it parses alone."""
    # The shortest faulty start ends with what completes the fault: a repeat's sign or a group's end,
    # or a reference.
    ends = "0123456789)" if fault == "GROUPREF" else "*+?})"
    end = next((i for i in range(1, len(pattern) + 1) if pattern[i - 1] in ends and _faulty(pattern[:i])), None)
    if end is None:
        return None
    if fault == "GROUPREF":
        return max(pattern.rfind("\\", 0, end), pattern.rfind("(?P=", 0, end))
    return next((j for j in range(end - 1, -1, -1) if pattern[j] == "(" and _faulty(pattern[j:end])), None)


def _parsed(pattern: str) -> Sequence[tuple[Any, Any]]:
    """re's parse of a pattern: (opcode, argument) pairs, each opcode named by its ``name``."""
    data: Sequence[tuple[Any, Any]] = _RE_PARSER.parse(pattern, re.IGNORECASE).data
    return data


def _faulty(piece: str) -> bool:
    try:
        return _fault(_parsed(piece), False) is not None
    except (re.error, OverflowError, RecursionError):
        return False
