"""A judge's rubric: a TOML file of sampling parameters (``[judge]``) and criteria (``[criteria.NAME]``).

    [judge]
    model = "gpt-4o-mini"        # optional: --model gives or overrides it
    endpoint = "https://api.openai.com/v1"   # optional: --endpoint gives or overrides it
    temperature = 0              # default 0
    max_tokens = 200             # optional
    seed = 7                     # optional
    samples = 1                  # judgments per question and criterion, averaged (default 1)

    [criteria.faithfulness]
    template = "... {question} ... {answer} ... {contexts} ... {reference} ..."
    scale = "0-1"                # "0-1", "1-5" or "pass/fail"
    json_field = "score"         # optional: the reply is a JSON object, the score its field; else the reply's
                                 # last number (pass/fail: its last "pass" or "fail", else number)

Every mistake is an error at its line: an unknown key (with the nearest known one), a template field
other than the four, a scale other than the three, a criterion name that cannot be a metric name.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ragscore.errors import ConfigError
from ragscore.external import name_problem
from ragscore.loaders.scores import SCALES
from ragscore.quoting import quote
from ragscore.score_names import spelling_fault
from ragscore.suggest import did_you_mean
from ragscore.tables import SettingsTable, read_toml

FIELDS: Final = ("question", "answer", "contexts", "reference")  # what a template may name
_TOP: Final = ("judge", "criteria")
_JUDGE_KEYS: Final = ("model", "endpoint", "temperature", "max_tokens", "seed", "samples")
_CRITERION_KEYS: Final = ("template", "scale", "json_field")
MAX_SAMPLES: Final = 100
MAX_CRITERIA: Final = 64


@dataclass(frozen=True, slots=True)
class Criterion:
    """One criterion: its score's name, the prompt's template, the scale and where the reply holds the score."""

    name: str
    template: str
    scale: str
    json_field: str | None = None

    @property
    def fields(self) -> frozenset[str]:
        """The fields its template names."""
        return frozenset(field for _, field, _, _ in string.Formatter().parse(self.template) if field)

    def render(self, inputs: Mapping[str, str]) -> str:
        """The prompt for one question's inputs (its four fields' texts)."""
        return self.template.format_map(inputs)

    def signed(self) -> dict[str, object]:
        """What of the criterion a judgment's key holds: the text and how the reply is read (not the name, so
        that renaming a criterion keeps its judgments)."""
        return {"template": self.template, "scale": self.scale, "json_field": self.json_field}


@dataclass(frozen=True, slots=True)
class Rubric:
    """A rubric read: its file's sha256, the sampling parameters and the criteria in file order."""

    source: str
    sha256: str
    criteria: tuple[Criterion, ...]
    temperature: float = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    samples: int = 1
    model: str | None = None
    endpoint: str | None = None

    def parameters(self) -> dict[str, object]:
        """The sampling parameters a request carries (those given), in a fixed order."""
        out: dict[str, object] = {"temperature": self.temperature}
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        if self.seed is not None:
            out["seed"] = self.seed
        return out


def load_rubric(path: str) -> Rubric:
    """Read and check a rubric file; raise ConfigError at the first problem, at its line."""
    data, text = read_toml(Path(path), path)
    top = SettingsTable(data, path, text, "")
    for key in data:
        if key not in _TOP:
            raise ConfigError(path, f"unknown table {quote(key)}{did_you_mean(key, list(_TOP))} (a rubric holds "
                                    "[judge] and [criteria.NAME] tables)", top.line_of(key) or _header_line(text, key))
    judge = _table(data.get("judge", {}), path, text, "judge", _JUDGE_KEYS)
    criteria_table = data.get("criteria")
    if not isinstance(criteria_table, dict) or not criteria_table:
        raise ConfigError(path, "expected at least one criterion: a [criteria.NAME] table with a template and a scale")
    if len(criteria_table) > MAX_CRITERIA:
        raise ConfigError(path, f"at most {MAX_CRITERIA} criteria, got {len(criteria_table):,}")
    criteria = tuple(_criterion(name, value, path, text) for name, value in criteria_table.items())
    return Rubric(
        path, hashlib.sha256(text.encode()).hexdigest(), criteria,
        temperature=_number(judge, "temperature", 0.0, 0.0, 2.0),
        max_tokens=_integer(judge, "max_tokens", 1, 1_000_000),
        seed=_integer(judge, "seed", -(2 ** 63), 2 ** 63 - 1),
        samples=_integer(judge, "samples", 1, MAX_SAMPLES) or 1,
        model=_text(judge, "model"),
        endpoint=_text(judge, "endpoint"),
    )


def _header_line(text: str, key: str) -> int | None:
    match = re.search(r"^[ \t]*\[+[ \t]*\"?" + re.escape(key), text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _criterion_line(text: str, name: str) -> int | None:
    """The line of the ``[criteria.NAME]`` header (else of the first ``[criteria...]``)."""
    match = re.search(r"^[ \t]*\[[ \t]*criteria[ \t]*\.[ \t]*(?:" + re.escape(name) + r"|\"" + re.escape(name)
                      + r"\"|'" + re.escape(name) + r"')[ \t]*\]", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else _header_line(text, "criteria")


def _table(value: object, source: str, text: str, name: str, keys: tuple[str, ...]) -> SettingsTable:
    if not isinstance(value, dict):
        raise ConfigError(source, f'expected "{name}" to be a table ([{name}])', _header_line(text, name))
    table = SettingsTable(value, source, text, name)
    for key in value:
        if key not in keys:
            raise table.error(key, f"unknown key {quote(key)}{did_you_mean(key, list(keys))} (known: "
                                   f"{', '.join(keys)})")
    return table


def _number(table: SettingsTable, key: str, default: float, low: float, high: float) -> float:
    value = table.data.get(key)
    if value is None:
        return default
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) or not (
            low <= value <= high):
        raise table.error(key, f"expected {key} to be a number from {low:g} to {high:g}, got {_shown(value)}")
    return float(value)


def _integer(table: SettingsTable, key: str, low: int, high: int) -> int | None:
    value = table.data.get(key)
    if value is None:
        return None
    if type(value) is not int or not low <= value <= high:
        raise table.error(key, f"expected {key} to be a whole number from {low:,} to {high:,}, got {_shown(value)}")
    return value


def _text(table: SettingsTable, key: str) -> str | None:
    value = table.data.get(key)
    if value is None:
        return None
    if type(value) is not str or not value.strip():
        raise table.error(key, f"expected {key} to be non-empty text, got {_shown(value)}")
    return value.strip()


def _shown(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _criterion(name: str, value: object, source: str, text: str) -> Criterion:
    """Read one ``[criteria.NAME]`` table."""
    table = _table(value, source, text, f"criteria.{name}", _CRITERION_KEYS)
    if spelling_fault(name) is not None:
        raise ConfigError(source, f"the criterion {quote(name)} cannot be a score name: use letters, digits and "
                                  "_ . - (starting with a letter)", _criterion_line(text, name))
    taken = name_problem(name, sampled=True, monitored=True)
    if taken is not None:  # else score would refuse the scores file, after every judgment was paid for
        raise ConfigError(source, f"the criterion {quote(name)} names its scores: {taken}", _criterion_line(text, name))
    template = table.data.get("template")
    if type(template) is not str or not template.strip():
        raise table.error("template" if "template" in table.data else "scale",
                          "expected a template: the prompt's text, naming " + ", ".join(f"{{{f}}}" for f in FIELDS))
    problem = template_problem(template)
    if problem is not None:
        raise table.error("template", problem)
    scale = table.data.get("scale")
    if scale not in SCALES:
        key = "scale" if "scale" in table.data else "template"
        raise table.error(key, f"expected scale to be one of {', '.join(map(quote, SCALES))}, got "
                               f"{_shown(scale) if scale is not None else 'none'}")
    field = table.data.get("json_field")
    if field is not None and (type(field) is not str or not field):
        raise table.error("json_field", f"expected json_field to be a key of the reply's JSON object, got "
                                        f"{_shown(field)}")
    return Criterion(name, template, str(scale), field)


def template_problem(template: str) -> str | None:
    """Say what is wrong with a template (a field it may not name, a format spec, a stray brace), or None."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        return f"the template cannot be read: {exc} (write a literal brace as {{{{ or }}}})"
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if field not in FIELDS:
            shown = field or "{}"
            return (f"the template names {{{shown}}}: a template may name only "
                    + ", ".join(f"{{{f}}}" for f in FIELDS) + did_you_mean(field, list(FIELDS))
                    + " (write a literal brace as {{ or }})")
        if spec or conversion:
            return f"the template's {{{field}}} has a format: write the field alone"
    return None
