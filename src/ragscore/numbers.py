"""Numbers written as text in options and settings: plain decimals, as a person writes them; and a
gate's test of a value against its threshold (``holds``)."""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from typing import Final

# ASCII digits, a sign, a point, an exponent: what JSON, CSV and C's strtod read alike. Python's
# float() reads more: "1_0" (10), other scripts' digits ("٠.٥"), "inf", "nan" and " 1 ".
_DECIMAL_RE: Final = re.compile(r"\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*")


def decimal(text: str) -> float | None:
    """Read a plain, finite decimal number (``0.8``, ``-1e-3``); None for anything else."""
    if len(text) > 400 or _DECIMAL_RE.fullmatch(text) is None:
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def number_problem(text: str) -> str:
    """Say what ``decimal`` expected of text it refused: "a number", "a finite number", or a plain one."""
    try:
        value = float(text)
    except (ValueError, OverflowError):
        return "a number"
    if not math.isfinite(value):
        return "a finite number"
    return "a number in ASCII digits (such as 0.8; no _)"


_COMPARE: Final[dict[str, Callable[[float, float], bool]]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}


def holds(value: float, op: str, threshold: float) -> bool:
    """Tell whether ``value op threshold`` holds (``op``: one of >=, >, <=, <): a gate's test."""
    return _COMPARE[op](value, threshold)
