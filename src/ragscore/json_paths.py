"""JSON read value by value, each checked, with the key path that reaches it for the error.

A ``Node`` is a value of a parsed document and where it sits; its readers (``fields``, ``items``,
``count``, ``text``, ``flag``, ...) return the value when it is of the type and range asked for,
and otherwise raise ``Damaged`` naming the key as ``jq`` reaches it, quoted and shortened
(``"result.rows[3][4][1]"``), with what a positional value holds (``(the outcome's answered)``).
The path is written only for an error: reading a million values costs a small object each. A
partial (``partial_schema.py``) is read with it; its numbers are written as ragscore's JSON
writes floats (``read_number``: null for NaN, "inf" and "-inf") and exact integers in hexadecimal.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, TypeVar

from ragscore.quoting import quote, shorten

T = TypeVar("T")

_HEX: Final = re.compile(r"-?0x[0-9a-f]+")
_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # written .key in a path; another key as ["key"]
_BIG: Final = 2**1023  # an integer a double holds (float(10**400) overflows)


class Damaged(ValueError):
    """A value that its document's schema does not allow: the message names the key (the reader adds the file)."""


def shown(value: object) -> str:
    """Show a JSON value in a message as JSON writes it (text quoted and shortened; a list or an object named)."""
    if isinstance(value, str):
        return quote(value, 40)
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else "Infinity" if value == math.inf else "-Infinity" if value == -math.inf \
            else repr(value)
    if isinstance(value, int):
        return shorten(str(value), 40)
    return "a list" if isinstance(value, list) else "an object"


def _step(key: str | int) -> str:
    if isinstance(key, int):
        return f"[{key}]"
    return f".{key}" if _KEY.fullmatch(key) else f'["{shorten(key, 40)}"]'  # the path is quoted whole


class Node:
    """A JSON value of a document and the key path that reaches it (written only for an error)."""

    __slots__ = ("value", "_parent", "_key", "_what")

    def __init__(self, value: Any, parent: Node | None = None, key: str | int = "", what: str = "") -> None:
        self.value, self._parent, self._key, self._what = value, parent, key, what

    @property
    def path(self) -> str:
        steps: list[str] = []
        node: Node | None = self
        while node is not None and node._parent is not None:
            steps.append(_step(node._key))
            node = node._parent
        return "".join(reversed(steps)).removeprefix(".")

    def named(self) -> str:
        """The key path, quoted, with what a positional value holds: ``"result.rows[3][1]" (a row's qid)``."""
        what = next((n._what for n in self._lineage() if n._what), "")
        return quote(self.path) + (f" ({what})" if what else "")

    def _lineage(self) -> Iterator[Node]:
        node: Node | None = self
        while node is not None:
            yield node
            node = node._parent

    def fail(self, message: str) -> Damaged:
        return Damaged(f"{self.named()} {message}")

    def expected(self, what: str) -> Damaged:
        return Damaged(f"{self.named()}: expected {what}, got {shown(self.value)}")

    # --- containers -------------------------------------------------------------------------

    def fields(self, required: Sequence[str], optional: Sequence[str] = ()) -> dict[str, Node]:
        """Read an object of known keys: each required one present, no other than these."""
        value = self.value
        if type(value) is not dict:
            raise self.expected("an object")
        for key in required:
            if key not in value:
                raise Node(None, self, key).fail("is missing")
        for key in value:
            if key not in required and key not in optional:
                raise Node(value[key], self, key).fail("is an unknown key")
        return {key: Node(item, self, key) for key, item in value.items()}

    def mapping(self) -> Iterator[tuple[str, Node]]:
        """Read an object of any keys."""
        if type(self.value) is not dict:
            raise self.expected("an object")
        return ((key, Node(item, self, key)) for key, item in self.value.items())

    def items(self, most: int | None = None) -> list[Node]:
        """Read a list (of at most ``most`` entries)."""
        value = self.value
        if type(value) is not list:
            raise self.expected("a list")
        if most is not None and len(value) > most:
            raise self.fail(f"holds {len(value):,} entries, at most {most:,} in a partial")
        return [Node(item, self, n) for n, item in enumerate(value)]

    def record(self, names: Sequence[str], what: str) -> list[Node]:
        """Read a list of ``len(names)`` positional values."""
        value = self.value
        if type(value) is not list or len(value) != len(names):
            raise self.expected(f"{what}: a list of {len(names)} values")
        return [Node(item, self, n, f"{what}'s {name}") for n, (name, item) in enumerate(zip(names, value,
                                                                                             strict=True))]

    # --- values -------------------------------------------------------------------------------

    def count(self, most: int | None = None) -> int:
        """Read an integer of at least 0 (and at most ``most``)."""
        value = self.value
        if type(value) is not int or value < 0:
            raise self.expected("a count (an integer of at least 0)")
        if most is not None and value > most:
            raise self.expected(f"a count of at most {most:,}")
        return value

    def text(self) -> str:
        if type(self.value) is not str:
            raise self.expected("text")
        return self.value

    def optional_text(self) -> str | None:
        if self.value is not None and type(self.value) is not str:
            raise self.expected("text or null")
        return self.value

    def flag(self) -> bool:
        if type(self.value) is not bool:
            raise self.expected("true or false")
        return self.value

    def number(self) -> float:
        """Read a float as partials write it: a JSON number, null for NaN, "inf" and "-inf"."""
        return read_number(self.value, self)

    def hexadecimal(self) -> int:
        """Read an integer written in hexadecimal ("0x1f", "-0x2")."""
        value = self.value
        if type(value) is not str or not _HEX.fullmatch(value):
            raise self.expected('an integer written in hexadecimal ("0x1f")')
        return int(value, 16)

    def choice(self, choices: dict[str, T], what: str) -> T:
        found = choices.get(self.value) if type(self.value) is str else None
        if found is None:
            raise self.expected(what)
        return found

    def optional(self, read: Callable[[Node], T]) -> T | None:
        return None if self.value is None else read(self)


def read_number(value: Any, where: Node | Callable[[], Node] | None = None) -> float:
    """Read a float as partials write it (``where``: the node, or what makes it, for the error)."""
    if value is None:
        return math.nan
    kind = type(value)
    if kind is float and math.isfinite(value) or kind is int and -_BIG < value < _BIG:
        return float(value)
    if value == "inf" or value == "-inf":
        return float(value)
    node = where() if callable(where) else where or Node(value)
    node.value = value
    raise node.expected('a number (null for NaN, "inf" or "-inf")')
