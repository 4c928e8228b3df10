"""The gates of ``ragscore trec``: ``[trec.gates]`` tables and ``--gates``, by ragscore's or trec_eval's names.

The files are those the other commands read, in the same precedence: ``[tool.ragscore.trec]``
in ``./pyproject.toml``, then ``./gates.toml`` (or ``--gates-file``), then ``--gates``. The syntax
is that of ``[gates]`` (``ragscore.gates`` parses it); a bare number is a minimum, except for
the counts (``missing``, ``unjudged``), where it is a maximum. A gate on a measure the ``-m``
options leave out computes it as well. There are no built-in gates: with none, ``ragscore
trec`` exits 0 as trec_eval does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Final, cast

from ragscore.errors import ConfigError
from ragscore.gates import GATE_RE, Gate, format_threshold, parse_gate_option, parse_gate_table
from ragscore.metrics.registry import Direction
from ragscore.suggest import did_you_mean
from ragscore.tables import SettingsTable, command_tables, keyed_table
from ragscore.trec.names import Named, resolve, spellings

TREC_KEYS: Final = ("gates",)


def _named(name: str, source: str, line: int | None = None) -> Named:
    """Resolve a gate's metric, or raise an error that suggests the nearest name."""
    named = resolve(name)
    if named is None:
        raise ConfigError(source, f'unknown trec metric "{name}"{did_you_mean(name, spellings(name))}', line)
    return named


def _tables(cwd: Path, gates_file: str | None) -> list[SettingsTable]:
    """Return the ``[trec]`` table of each settings file, in increasing precedence."""
    return command_tables("trec", cwd, gates_file, _checked)


def _checked(value: object, source: str, text: str, name: str) -> SettingsTable:
    table = keyed_table(value, source, text, name, TREC_KEYS)
    gates = table.data.get("gates")
    if gates is not None and not isinstance(gates, dict):
        raise table.error("gates", f'expected "gates" to be a table ([{name}.gates])')
    return table


def _canonical(gates: dict[str, Gate | None], named: dict[str, Named],
               line_of: Callable[[str], int | None]) -> dict[str, Gate | None]:
    """Key the gates by the report's name of their metric, checking the bounds of a metric from 0 to 1."""
    out: dict[str, Gate | None] = {}
    for written, gate in gates.items():
        metric = named[written]
        if gate is not None:
            for bound in (gate.threshold, gate.warn):
                if metric.unit and bound is not None and not 0 <= bound <= 1:
                    hint = (f" ({format_threshold(bound / 100)}, not {format_threshold(bound)}?)"
                            if 1 < bound <= 100 else "")
                    raise ConfigError(gate.source, f'"{written}" is from 0 to 1: a bound of '
                                                   f"{format_threshold(bound)} cannot be meant{hint}", line_of(written))
            gate = replace(gate, metric=metric.name)
        out[metric.name] = gate
    return out


def _directions(named: dict[str, Named]) -> dict[str, Direction]:
    return {written: n.direction for written, n in named.items()}


def _table_gates(table: SettingsTable) -> dict[str, Gate | None]:
    gates = SettingsTable(cast("dict[str, object]", table.data["gates"]), table.source, table.text,
                          f"{table.name}.gates")
    named = {key: _named(key, gates.source, gates.line_of(key)) for key in gates.data}
    parsed = parse_gate_table(gates.data, list(named), 0, gates.source, gates.line_of, _directions(named))
    return _canonical(parsed, named, gates.line_of)


def _option_gates(text: str) -> dict[str, Gate | None]:
    named: dict[str, Named] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        match = GATE_RE.match(part)
        if match is not None:
            named[match["metric"]] = _named(match["metric"], "--gates")
    parsed = parse_gate_option(text, list(named), 0, _directions(named))
    return _canonical(parsed, named, lambda _: None)


def load_trec_gates(
    gates: str | None = None, gates_file: str | None = None, cwd: Path | None = None
) -> tuple[Gate, ...]:
    """Merge the ``[trec.gates]`` tables of the settings files and ``--gates``, in that order (a later gate on a
    metric replaces an earlier one; ``false`` or ``METRIC=off`` removes it)."""
    merged: dict[str, Gate | None] = {}
    for table in _tables(cwd or Path.cwd(), gates_file):
        if "gates" in table.data:
            merged.update(_table_gates(table))
    if gates is not None:
        merged.update(_option_gates(gates))
    return tuple(gate for gate in merged.values() if gate is not None)


def gated(gates: Iterable[Gate]) -> list[Named]:
    """Name the metrics the gates read, as the report names them."""
    out = []
    for gate in gates:
        named = resolve(gate.metric)
        assert named is not None, gate.metric  # load_trec_gates resolved every one
        out.append(named)
    return out
