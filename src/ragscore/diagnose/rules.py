"""Diagnosis rules: thresholds, likely causes and suggested actions per metric, read as data.

The built-in table is ``rules.toml`` next to this module; ``[diagnose.METRIC]`` tables in
gates.toml change any of its keys or add rules for other metrics (scores from other tools too).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from ragscore.errors import ConfigError
from ragscore.gates import finite_number
from ragscore.metrics.names import direction_of
from ragscore.metrics.registry import Direction, split_cutoff
from ragscore.quoting import show_value

SEVERITIES: Final = ("critical", "warning")
DEFAULT_SAMPLES: Final = 5  # the worst questions quoted in each diagnosis
_KEYS: Final = ("direction", "warning", "critical", "causes", "actions", "cases")
_CONDITION_RE: Final = re.compile(r"^\s*(?P<metric>[^<>=\s]+)\s*(?P<op><=|>=|<|>)\s*(?P<value>\S+)\s*$")


@dataclass(frozen=True, slots=True)
class Condition:
    """One clause of a case: ``metric op threshold`` must hold on the run's value."""

    metric: str
    op: str
    threshold: float

    def holds(self, metrics: Mapping[str, float | None], k: int) -> bool:
        """Tell whether the run's value satisfies the clause (an undefined value never does)."""
        value = metrics.get(self.metric.replace("@K", f"@{k}"))
        if value is None:
            return False
        return {"<": value < self.threshold, "<=": value <= self.threshold,
                ">": value > self.threshold, ">=": value >= self.threshold}[self.op]

    def __str__(self) -> str:
        return f"{self.metric} {self.op} {self.threshold:g}"


@dataclass(frozen=True, slots=True)
class Case:
    """A variant of a rule's explanation, chosen when all its conditions hold."""

    when: tuple[Condition, ...]
    causes: tuple[str, ...]
    actions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Rule:
    """When a metric is worth a diagnosis, and what to say about it."""

    metric: str                       # a metric name; "@K" matches every cutoff
    direction: Direction | None       # None: the metric's registered direction (higher if unknown)
    warning: float | None
    critical: float | None
    causes: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()
    cases: tuple[Case, ...] = ()
    source: str = "built-in"

    def better(self, metric: str) -> Direction:
        """Say which way ``metric`` (a concrete name this rule covers) improves."""
        if self.direction is not None:
            return self.direction
        return direction_of(metric)


# What a diagnosis of precision says first in a run where no answered trace cites anything (precision
# then counts the claims alone, and chr, which the built-in cases test, is undefined).
NO_CITATIONS: Final = Case(
    (),
    ("no trace cites anything: chr and the citation metrics are n/a, and precision counts the claims alone "
     "(answerable, the claim contained, nothing forbidden)",),
    ("write the cited ids in answer_json.citations, or --map citations=PATH to where the traces hold them",),
)


# What a diagnosis of a retrieval metric says first in a run where no trace retrieved anything readable (its
# recall is 0 because the traces log no ids ragscore reads, not because retrieval failed).
NOTHING_RETRIEVED: Final = Case(
    (),
    ("no trace retrieved anything readable: the traces log no retrieved ids ragscore reads, so recall is 0 "
     "whatever the retriever did",),
    ("write the ranked ids in retrieved_ids, or --map retrieved_ids=PATH (and --map document_id=PATH inside "
     "objects) to where the traces hold them",),
)


def past(value: float, threshold: float, direction: Direction) -> bool:
    """Tell whether a value is on the bad side of a threshold (never when equal to it)."""
    return value < threshold if direction is Direction.HIGHER else value > threshold


def rule_for(metric: str, rules: Mapping[str, Rule]) -> Rule | None:
    """Find the rule of a concrete metric name: its own, or its "@K" template's."""
    rule = rules.get(metric)
    if rule is None:
        template, k = split_cutoff(metric)
        rule = rules.get(template) if k is not None else None
    return rule


def builtin_rules() -> dict[str, Rule]:
    """Read the shipped table (rules.toml)."""
    # Beside this module (importlib.resources would cost more to import than the read).
    text = Path(__file__).with_name("rules.toml").read_text(encoding="utf-8")
    return parse_rules(tomllib.loads(text), "rules.toml", lambda _key: None, {})


def parse_rules(
    table: Mapping[str, object], source: str, line_of: Callable[[str], int | None], base: Mapping[str, Rule]
) -> dict[str, Rule]:
    """Read ``[diagnose.METRIC]`` tables over ``base``: keys given replace the base rule's."""
    rules = dict(base)
    for metric, spec in table.items():
        line = line_of(metric)

        def fail(message: str) -> ConfigError:
            return ConfigError(source, f"[diagnose.{metric}] {message}", line)  # noqa: B023  (used at once)

        if not isinstance(spec, dict):
            raise fail("expected a table with warning, critical, direction, causes, actions or cases")
        unknown = sorted(set(spec) - set(_KEYS))
        if unknown:
            raise fail(f'unknown key "{unknown[0]}" (known: {", ".join(_KEYS)})')
        rule = rules.get(metric) or Rule(metric, None, None, None, source=source)
        changes: dict[str, object] = {"source": source}
        if "direction" in spec:
            if spec["direction"] not in ("higher", "lower"):
                raise fail(f'expected "direction" to be "higher" or "lower", got {spec["direction"]!r}')
            changes["direction"] = Direction(spec["direction"])
        for key in ("warning", "critical"):
            if key in spec:
                changes[key] = _threshold(spec[key], key, fail)
        for key in ("causes", "actions"):
            if key in spec:
                changes[key] = _texts(spec[key], key, fail)
        if "cases" in spec:
            changes["cases"] = _cases(spec["cases"], fail)
        rule = replace(rule, **changes)  # type: ignore[arg-type]  # each value checked above
        if rule.warning is None and rule.critical is None:
            raise fail('expected a "warning" or a "critical" threshold')
        direction = rule.better(metric)
        if rule.warning is not None and rule.critical is not None and past(rule.warning, rule.critical, direction):
            side = "above" if direction is Direction.HIGHER else "below"
            raise fail(f"the warning threshold {rule.warning:g} must not be past the critical one "
                       f"({rule.critical:g}): for a {direction.value}-is-better metric it lies {side} it")
        rules[metric] = rule
    return rules


def _threshold(value: object, key: str, fail: Callable[[str], ConfigError]) -> float:
    number = finite_number(value)
    if number is None:
        raise fail(f'expected "{key}" to be a finite number, got {show_value(value)}')
    return number


def _texts(value: object, key: str, fail: Callable[[str], ConfigError]) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise fail(f'expected "{key}" to be a list of non-empty strings')
    return tuple(value)


def _cases(value: object, fail: Callable[[str], ConfigError]) -> tuple[Case, ...]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise fail('expected "cases" to be an array of tables ([[diagnose.METRIC.cases]])')
    cases = []
    for case in value:
        unknown = sorted(set(case) - {"when", "causes", "actions"})
        if unknown or "when" not in case:
            raise fail('expected each case to have "when" (conditions such as "chr < 0.75"), causes and actions')
        when = case["when"]
        when = [when] if isinstance(when, str) else when
        if not isinstance(when, list) or not when:
            raise fail('expected "when" to be a list of conditions such as "chr < 0.75"')
        conditions = []
        for text in when:
            match = _CONDITION_RE.match(text) if isinstance(text, str) else None
            if match is None:
                raise fail(f'expected a condition such as "chr < 0.75" (<, <=, >, >=), got {text!r}')
            threshold = _threshold(_number(match["value"]), "when", fail)
            conditions.append(Condition(match["metric"], match["op"], threshold))
        causes = _texts(case.get("causes", []), "causes", fail) if case.get("causes") else ()
        actions = _texts(case.get("actions", []), "actions", fail) if case.get("actions") else ()
        cases.append(Case(tuple(conditions), causes, actions))
    return tuple(cases)


def _number(text: str) -> object:
    try:
        return float(text)
    except ValueError:
        return text
