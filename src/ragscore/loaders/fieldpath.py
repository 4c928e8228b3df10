"""Paths into a decoded record: where a trace or gold record keeps a concept of the contract.

A path is keys joined by dots, with ``[N]`` for a list index (``[-1]`` the last), ``[*]`` for
every element of a list, and keys that hold dots, brackets or spaces quoted::

    source_documents[*].metadata.id
    attributes."retrieval.documents"[0].document.id
    output.messages[-1].content

Reading is forgiving where exporters differ and strict where a guess could mislead:

- a key missing from an object is also looked up with the dots kept, so that
  ``gen_ai.usage.input_tokens`` finds both ``{"gen_ai": {"usage": ...}}`` and the flattened
  ``{"gen_ai.usage.input_tokens": ...}`` that OpenTelemetry exporters write;
- a string that holds a JSON list or object is decoded when the path goes on into it, and at the
  end of the path when the concept is a list or an object (exporters write lists that way);
- ``[*]`` keeps one element per list element, ``None`` where the rest of the path is missing, so
  that a list with a hole is seen as one (never shortened, which would shift ranks).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from typing import Any, Final, NamedTuple

KEY: Final = 0
INDEX: Final = 1
ALL: Final = 2


class PathError(ValueError):
    """A malformed path; ``column`` (from 1) points at the fault."""

    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.message, self.column = message, column


class Step(NamedTuple):
    kind: int
    key: str = ""
    position: int = 0  # of an INDEX step (not "index": a tuple has an index method)


class FieldPath(NamedTuple):
    """A parsed path, with the text it was written as."""

    text: str
    steps: tuple[Step, ...]

    @property
    def collects(self) -> bool:
        """Tell whether the path gathers a list with ``[*]``."""
        return any(step.kind == ALL for step in self.steps)


MISSING: Final = object()  # what a path finds in a record that does not have it

_BARE_RE: Final = re.compile(r'[^.\[\]"\s]+')
_QUOTED_RE: Final = re.compile(r'"((?:[^"\\]|\\.)*)"')
_INDEX_RE: Final = re.compile(r"\[(?:(\*)|(-?[0-9]{1,9}))\]")


@functools.lru_cache(maxsize=512)
def parse_path(text: str) -> FieldPath:
    """Parse a path; raise PathError with the column of the first fault."""
    if not text.strip():
        raise PathError("empty path: expected a key such as answer or metadata.id", 1)
    steps: list[Step] = []
    pos, expect_key = 0, True
    while pos < len(text):
        char = text[pos]
        if expect_key:
            quoted = _QUOTED_RE.match(text, pos)
            if char == '"':
                if quoted is None:
                    raise PathError("unterminated quoted key (no closing \")", pos + 1)
                key = re.sub(r"\\(.)", r"\1", quoted.group(1))
                if not key:
                    raise PathError("empty quoted key", pos + 1)
                steps.append(Step(KEY, key))
                pos = quoted.end()
            else:
                bare = _BARE_RE.match(text, pos)
                if bare is None:
                    what = "the end of the path" if char == "." and pos == len(text) - 1 else repr(char)
                    raise PathError(f"expected a key, got {what} (quote keys that hold dots, brackets or spaces: "
                                    f'"a.b")', pos + 1)
                steps.append(Step(KEY, bare.group()))
                pos = bare.end()
            expect_key = False
            continue
        if char == ".":
            if pos == len(text) - 1:
                raise PathError("expected a key after the last '.'", pos + 2)
            expect_key = True
            pos += 1
            continue
        if char == "[":
            index = _INDEX_RE.match(text, pos)
            if index is None:
                raise PathError("expected [N] (a list index) or [*] (every element)", pos + 1)
            steps.append(Step(ALL) if index.group(1) else Step(INDEX, position=int(index.group(2))))
            pos = index.end()
            continue
        raise PathError(f"expected '.', '[' or the end of the path, got {char!r}", pos + 1)
    return FieldPath(text, tuple(steps))


def _decoded(value: str) -> object:
    """Decode a string that holds a JSON list or object; anything else comes back unchanged."""
    start = value.lstrip()[:1]
    if start != "[" and start != "{":
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value


def lookup(record: object, path: FieldPath, container: bool = False) -> object:
    """Read ``path`` in ``record``: the value, or MISSING. ``container``: the concept is a list or
    an object, so a JSON string found at the end is decoded."""
    return _walk(record, path.steps, 0, container)


def _walk(value: object, steps: Sequence[Step], start: int, container: bool) -> object:
    i, n = start, len(steps)
    while i < n:
        step = steps[i]
        if type(value) is str:
            value = _decoded(value)
        if step.kind == KEY:
            if type(value) is not dict:
                return MISSING
            if step.key in value:
                value = value[step.key]
            else:  # a flattened key: "a.b.c" for the steps a, b, c
                name, j = step.key, i + 1
                while j < n and steps[j].kind == KEY:
                    name += "." + steps[j].key
                    j += 1
                    if name in value:
                        break
                else:
                    return MISSING
                value, i = value[name], j - 1
        elif step.kind == INDEX:
            if type(value) is not list or not -len(value) <= step.position < len(value):
                return MISSING
            value = value[step.position]
        else:
            if type(value) is not list:  # not a list to collect from: passed on, to be seen as broken
                return MISSING if value is None else value
            found = [_walk(element, steps, i + 1, container) for element in value]
            return [None if v is MISSING else v for v in found]
        i += 1
    if container and type(value) is str:
        return _decoded(value)
    return value


class _Indexed(dict[int, object]):
    """A list being assembled from flattened keys: its entries by index, made a list once every key is placed."""


def unflatten(attributes: dict[str, object]) -> dict[str, object]:
    """Nest flattened attribute keys (``retrieval.documents.0.document.id``) into objects and lists.

    A numeric part makes a list (indices may come in any order; a hole is None). A key that
    clashes with another (``a`` and ``a.b`` both given) is kept flat, as written. The lists'
    holes, all together, are at most as many as the keys: a list that would need more (one key
    ``k.999999`` would make a million holes) is an object keyed by the index's digits instead,
    so ``k.999999`` still finds its value, ``k[999999]`` does not, and memory stays in proportion
    to the line.
    """
    if not any("." in key for key in attributes):
        return attributes
    root: dict[str, object] = {}
    clashes: dict[str, object] = {}
    for key, value in attributes.items():
        parts = key.split(".")
        if not all(parts) or not _place(root, parts, value):
            clashes[key] = value
    _lists(root, len(attributes))
    root.update((key, value) for key, value in clashes.items() if key not in root)
    return root


def _index(part: str) -> bool:
    return part.isascii() and part.isdigit()  # "²".isdigit() too, which int() refuses


def _place(root: dict[str, object], parts: list[str], value: object) -> bool:
    """Put ``value`` at the path ``parts`` inside ``root``; False when something else is there."""
    node: dict[Any, object] = root  # keyed by text, or by int where it is an _Indexed
    for n, part in enumerate(parts):
        index: int | str = part
        if type(node) is _Indexed:
            if not _index(part) or len(part) > 6:  # a list's index, as the first key made it (7 digits: an object)
                return False
            index = int(part)
        current = node.get(index)
        if n == len(parts) - 1:
            if current is not None:
                return False
            node[index] = value
            return True
        following = parts[n + 1]
        fresh: dict[Any, object] = _Indexed() if _index(following) and len(following) <= 6 else {}
        if current is None:
            node[index] = current = fresh
        elif type(current) is not type(fresh):
            return False
        node = current  # a dict of either kind: type(current) is type(fresh)
    return True


def _lists(root: dict[str, object], holes: int) -> None:
    """Make each _Indexed inside ``root`` a list, innermost first, while their holes (None entries) stay
    within ``holes`` all together; past it, an object keyed by the indices' digits. Walked without
    recursion: a key of a hundred thousand parts nests as deep."""
    found: list[tuple[dict[Any, object], Any, _Indexed]] = []
    stack: list[dict[Any, object]] = [root]
    while stack:
        node = stack.pop()
        for key, child in node.items():
            if type(child) is _Indexed or type(child) is dict and child:
                if type(child) is _Indexed:
                    found.append((node, key, child))
                stack.append(child)
    for parent, key, indexed in reversed(found):  # a list's lists before it
        size = max(indexed, default=-1) + 1
        if size - len(indexed) <= holes:
            holes -= size - len(indexed)
            entries: list[object] = [None] * size
            for index, value in indexed.items():
                entries[index] = value
            parent[key] = entries
        else:
            parent[key] = {str(index): value for index, value in indexed.items()}
