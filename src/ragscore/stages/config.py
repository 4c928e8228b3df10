"""Read a stage's settings and gates: ``[ner]``, ``[classify]``, ``[link]`` tables and ``--gates``.

The files are those ``ragscore score`` reads, in the same precedence: ``[tool.ragscore.<stage>]``
in ``./pyproject.toml``, then ``./gates.toml`` (or ``--gates-file``), then the command line.
Each stage table may hold ``gates`` (a gate table, parsed by ``ragscore.gates``), ``strict``,
``cutoffs`` (link) and ``hierarchy`` (classify: label = "category").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ragscore.errors import ConfigError
from ragscore.gates import GATE_RE, OFF, Gate, parse_gate_option, parse_gate_table
from ragscore.metrics.registry import Direction, split_cutoff
from ragscore.quoting import quote, show_value
from ragscore.settings import cutoff_problem
from ragscore.stages.link import DEFAULT_CUTOFFS
from ragscore.stages.names import find_spec, stage_specs
from ragscore.suggest import did_you_mean
from ragscore.tables import SettingsTable, command_tables, keyed_table, subtable

DEFAULT_GATES: Final = (Gate("missing", "<=", 0.0),)
STAGE_KEYS: Final = {
    "ner": ("gates", "strict"),
    "classify": ("gates", "strict", "hierarchy"),
    "link": ("gates", "strict", "cutoffs"),
}


@dataclass(frozen=True, slots=True)
class StageConfig:
    """The settings and gates of one stage run."""

    stage: str
    gates: tuple[Gate, ...]
    strict: bool = False
    cutoffs: tuple[int, ...] = DEFAULT_CUTOFFS
    hierarchy: dict[str, str] | None = None

    def settings(self) -> dict[str, object]:
        """Return every setting that changes a score or a verdict, as plain JSON data."""
        out: dict[str, object] = {"stage": self.stage, "strict": self.strict}
        if self.stage == "link":
            out["cutoffs"] = list(self.cutoffs)
        if self.stage == "classify":
            out["hierarchy"] = self.hierarchy
        return out


def _checked_stage(value: object, source: str, text: str, name: str) -> SettingsTable:
    return keyed_table(value, source, text, name, STAGE_KEYS[name.rsplit(".", 1)[-1]])


def _hierarchy(table: SettingsTable) -> dict[str, str]:
    hierarchy: dict[str, str] = {}
    for label, category in table.data.items():
        if not isinstance(category, str) or not category:
            raise table.error(label, f'expected the category of "{label}" to be a non-empty string, got {category!r}')
        hierarchy[label] = category
    return hierarchy


def check_metric(stage: str, name: str, names: list[str], source: str, line: int | None = None) -> None:
    """Raise a ConfigError unless the stage run computes ``name``; say why, or suggest a name."""
    if name in names:
        return
    spec = find_spec(stage, name)
    if spec is not None and spec.parametric:
        k = split_cutoff(name)[1]
        raise ConfigError(
            source, f'metric "{name}" is not computed with these settings: add {k} to the cutoffs (--cutoffs)', line
        )
    if spec is not None:
        raise ConfigError(source, f'metric "{name}" needs a [classify.hierarchy] table (label = "category")', line)
    raise ConfigError(source, f'unknown {stage} metric {quote(name)}{did_you_mean(name, names)}', line)


def _lower(stage: str, metric: str) -> bool:
    spec = find_spec(stage, metric)
    return spec is not None and spec.direction is Direction.LOWER


def _gate_table(stage: str, table: SettingsTable, names: list[str]) -> dict[str, Gate | None]:
    """Parse a ``[<stage>.gates]`` table; a bare number is a minimum or a maximum by the stage metric's direction."""
    rules: dict[str, object] = {}
    for name, spec in table.data.items():
        check_metric(stage, name, names, table.source, table.line_of(name))
        bare = not isinstance(spec, (dict, bool)) and not (isinstance(spec, str) and (
            spec.strip().lower() in OFF or spec.strip()[:1] in "<>"))
        rules[name] = {"max" if _lower(stage, name) else "min": spec} if bare else spec
    return parse_gate_table(rules, names, 0, table.source, table.line_of)


def _gate_option(stage: str, text: str, names: list[str]) -> dict[str, Gate | None]:
    """Parse ``--gates`` for a stage, with the same direction rule as the table."""
    parts = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        match = GATE_RE.match(part)
        if match is not None:
            check_metric(stage, match["metric"], names, "--gates")
            if match["op"] == "=" and match["value"].lower() not in OFF and _lower(stage, match["metric"]):
                part = f"{match['metric']}<={match['value']}"
        parts.append(part)
    return parse_gate_option(",".join(parts), names, 0)


def load_stage_config(
    stage: str,
    *,
    gates: str | None = None,
    gates_file: str | None = None,
    strict: bool | None = None,
    cutoffs: tuple[int, ...] | None = None,
    cwd: Path | None = None,
) -> StageConfig:
    """Merge the defaults, the stage tables of the settings files and the command line, in that order."""
    tables = command_tables(stage, cwd or Path.cwd(), gates_file, _checked_stage)
    file_strict, file_cutoffs, hierarchy = False, DEFAULT_CUTOFFS, None
    for table in tables:
        if "strict" in table.data:
            if not isinstance(table.data["strict"], bool):
                raise table.error("strict", f'expected "strict" to be true or false, got {table.data["strict"]!r}')
            file_strict = table.data["strict"]
        if "cutoffs" in table.data:
            value = table.data["cutoffs"]
            if not isinstance(value, list) or not value or not all(
                    isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value):
                raise table.error("cutoffs", f'expected "cutoffs" to be a non-empty list of positive integers, '
                                             f'got {show_value(value)}')
            file_cutoffs = tuple(sorted(set(value)))
            problem = cutoff_problem(file_cutoffs)
            if problem is not None:
                raise table.error("cutoffs", f'expected "cutoffs" to hold {problem}')
        if "hierarchy" in table.data:
            hierarchy = {**(hierarchy or {}), **_hierarchy(subtable(table, "hierarchy"))}
    final_cutoffs = cutoffs or file_cutoffs
    names = list(stage_specs(stage, final_cutoffs, hierarchy is not None))
    merged: dict[str, Gate | None] = {gate.metric: gate for gate in DEFAULT_GATES}
    for table in tables:
        if "gates" in table.data:
            merged.update(_gate_table(stage, subtable(table, "gates"), names))
    if gates is not None:
        merged.update(_gate_option(stage, gates, names))
    return StageConfig(
        stage=stage,
        gates=tuple(g for g in merged.values() if g is not None),
        strict=file_strict if strict is None else strict,
        cutoffs=final_cutoffs if stage == "link" else DEFAULT_CUTOFFS,
        hierarchy=hierarchy,
    )


def describe_hierarchy(hierarchy: Mapping[str, str] | None) -> str:
    """Show a hierarchy briefly for the settings signature."""
    return "none" if not hierarchy else f"{len(hierarchy)} labels in {len(set(hierarchy.values()))} categories"
