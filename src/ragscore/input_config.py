"""How inputs are read: ``[trace]`` (format and ``[trace.fields]``), ``[gold.fields]``, ``--map``, ``--trace-format``.

Every path is parsed when the settings are read, so that a malformed one is an error at its line
(or on the command line) before any input is opened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Final

from ragscore.errors import ConfigError, UsageError
from ragscore.loaders.fieldpath import PathError, parse_path
from ragscore.loaders.fields import CONTRACT_FIELDS
from ragscore.loaders.shapes import CHOICES, TRACE_CONCEPTS
from ragscore.quoting import quote, show_value
from ragscore.suggest import did_you_mean

# Gold fields a [gold.fields] table may map: the contract's, without the aliases (q, gold_ids).
GOLD_CONCEPTS: Final = tuple(sorted(CONTRACT_FIELDS - {"q", "gold_ids"}))


def _check(concept: str, path: str, concepts: tuple[str, ...], fail: Callable[[str], Exception]) -> tuple[str, str]:
    if concept not in concepts:
        known = ", ".join(concepts)
        raise fail(f"unknown concept {quote(concept)} (known: {known}){did_you_mean(concept, list(concepts))}")
    try:
        parse_path(path)
    except PathError as exc:
        raise fail(f"{exc.message}, at character {exc.column} of the path {quote(path)}") from None
    return concept, path


def fields_table(
    data: Mapping[str, object], concepts: tuple[str, ...], error: Callable[[str, str], ConfigError]
) -> tuple[tuple[str, str], ...]:
    """Read a ``[trace.fields]`` or ``[gold.fields]`` table: concept -> path string."""
    out = []
    for concept, path in data.items():
        if not isinstance(path, str):
            raise error(
                concept, f'expected "{concept}" to be a path string such as "metadata.id", got {show_value(path)}'
            )
        out.append(_check(concept, path, concepts, partial(error, concept)))
    return tuple(out)


def trace_format(value: object, fail: Callable[[str], Exception]) -> str:
    """Check a format name."""
    if value not in CHOICES:
        raise fail(f"expected one of {', '.join(CHOICES)}, got {show_value(value)}"
                   + (did_you_mean(value, list(CHOICES)) if isinstance(value, str) else ""))
    return value


def _map_error(option: str, message: str) -> UsageError:
    return UsageError(f"--map {quote(option)}: {message}")


def map_options(values: list[str]) -> tuple[tuple[str, str], ...]:
    """Read ``--map CONCEPT=PATH`` options (each concept once)."""
    concepts = tuple(TRACE_CONCEPTS)
    seen: dict[str, str] = {}
    for value in values:
        concept, equals, path = value.partition("=")
        concept = concept.strip()
        if not equals or not concept:
            raise UsageError(f"--map {quote(value)}: expected CONCEPT=PATH, such as claim=result or "
                             f"retrieved_ids=source_documents[*].metadata.id")
        _check(concept, path, concepts, partial(_map_error, value))
        if concept in seen:
            raise UsageError(f"--map: {concept} is mapped twice ({quote(seen[concept])}, then {quote(path)}); "
                             "give each concept one path")
        seen[concept] = path
    return tuple(seen.items())
