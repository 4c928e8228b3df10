"""Gather settings and gates from defaults, pyproject.toml, gates.toml and the command line."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ragscore.diagnose.rules import DEFAULT_SAMPLES, Rule, builtin_rules, parse_rules
from ragscore.errors import ConfigError, InputError
from ragscore.external import KNOWN as KNOWN_SCORES
from ragscore.gates import (
    ALIASES,
    TYPO_CUTOFF,
    Gate,
    finite_number,
    parse_gate_option,
    parse_gate_table,
    resolve_metric,
)
from ragscore.metrics import METRICS
from ragscore.metrics.families import ANSWER, FAMILIES
from ragscore.metrics.names import lookup
from ragscore.metrics.registry import Direction, split_cutoff
from ragscore.metrics.stats import CORRECTIONS
from ragscore.quoting import quote, show_value
from ragscore.results import metric_names
from ragscore.settings import MAX_CUTOFF, REPEATS, Settings, cutoff_problem, refusal_pattern_problem
from ragscore.suggest import closest, did_you_mean

if TYPE_CHECKING:
    from ragscore.loaders.scores import ScoreFile

from ragscore.tables import (
    SettingsTable,
    read_toml,
)

DEFAULT_GATES: Final = (
    Gate("precision", ">=", 0.80),
    Gate("chr", ">=", 0.75),
    Gate("under_refusal", "<=", 0.05),
    Gate("over_refusal", "<=", 0.10),
    Gate("missing", "<=", 0.0),
)
# "ner", "classify" and "link" belong to the stage commands (ragscore.stages.config), "trec" to ragscore trec
# (ragscore.trec.config); score ignores them.
PAIRED_TESTS: Final = ("bootstrap", "t", "wilcoxon", "permutation", "sign")  # compare's tests (metrics.significance)
SECTIONS: Final = (
    "scoring", "gates", "regression", "slice_gates", "diagnose", "trace", "gold", "inputs", "ner", "classify", "link",
    "trec", "monitor",
)
DEFAULT_MIN_N: Final = 20  # a slice smaller than this is reported, but its gates are skipped
TEXT_TOKENIZERS: Final = ("reference", "unicode")  # metrics.overlap.TOKENIZERS, without importing it


@dataclass(frozen=True, slots=True)
class Overrides:
    """Settings given on the command line; None means not given."""

    k: int | None = None
    refusal_tokens: tuple[str, ...] = ()
    refusal_patterns: tuple[str, ...] = ()  # checked already (cli: refusal_pattern_problem)
    require_claim: bool | None = None
    scope_citations: bool | None = None
    strict: bool | None = None
    gates: str | None = None
    families: tuple[str, ...] = ()
    cutoffs: tuple[int, ...] | None = None
    confidence: float | None = None
    bootstrap: int | None = None
    seed: str | None = None
    trace_format: str | None = None
    trace_fields: tuple[tuple[str, str], ...] = ()  # --map, over [trace.fields] concept by concept
    repeats: str | None = None
    pass_k: tuple[int, ...] | None = None
    test: str | None = None        # compare's paired test (--test)
    correction: str | None = None  # ... and correction (--correction)
    corpus: str | None = None      # --corpus, over [inputs] corpus
    chunks: str | None = None      # --chunks, over [inputs] chunks
    session: str | None = None     # --session, over [scoring] session


def scored_with(s: Settings) -> Overrides:
    """Give the overrides that score as ``s`` does (a merge reads its gates over its partials' settings)."""
    return Overrides(k=s.k, cutoffs=s.cutoffs, families=s.families, confidence=s.confidence, bootstrap=s.bootstrap,
                     seed=s.seed, strict=s.strict, trace_format=s.trace_format, trace_fields=s.trace_fields,
                     repeats=s.repeats, pass_k=s.pass_k if s.sampled else None, session=s.session)


@dataclass(frozen=True, slots=True)
class Config:
    """The settings and the gates of one run."""

    settings: Settings
    gates: tuple[Gate, ...]
    regression: dict[str, float] = field(default_factory=dict)  # metric -> largest allowed worsening
    require_significance: bool = False
    test: str = "bootstrap"     # compare's paired test ([regression] test, --test)
    correction: str = "holm"    # ... and its correction across metrics ([regression] correction, --correction)
    slice_gates: tuple[Gate, ...] = ()
    slice_min_n: int = DEFAULT_MIN_N
    rules: dict[str, Rule] = field(default_factory=builtin_rules)  # diagnosis rules by metric
    samples: int = DEFAULT_SAMPLES                                 # worst questions quoted per diagnosis
    directions: dict[str, Direction] = field(default_factory=dict)  # set by rules, for metrics not registered
    regression_at: dict[str, tuple[str, int | None]] = field(default_factory=dict)  # metric -> (file, line)
    known_names: tuple[str, ...] = ()  # every metric of every family, the common score names, rules' names
    # Where it came from, so that the Python API can read it again with other settings over it.
    gates_file: str | None = None
    cwd: Path | None = None
    overrides: Overrides = field(default_factory=Overrides)

    def with_origin(self, gates_file: str | None, cwd: Path | None, overrides: Overrides) -> Config:
        """Return this configuration, noting the files and overrides it was read with."""
        return replace(self, gates_file=gates_file, cwd=cwd, overrides=overrides)


def _sections(data: Mapping[str, object], source: str, text: str, prefix: str = "") -> dict[str, SettingsTable]:
    tables = {}
    for name, value in data.items():
        if name == "suite" and prefix == "tool.ragscore.":  # ragscore run's suite: not a setting
            continue
        if name not in SECTIONS:
            if not isinstance(value, dict):
                raise ConfigError(source, f'"{prefix}{name}" is not a table: settings go in "[{prefix}scoring]", '
                                          f'gates in "[{prefix}gates]"')
            suggestion = did_you_mean(name, list(SECTIONS), f"[{prefix}{{}}]")
            raise ConfigError(source, f'unknown section "[{prefix}{name}]"{suggestion}')
        if not isinstance(value, dict):
            raise ConfigError(source, f'expected "[{prefix}{name}]" to be a table')
        tables[name] = SettingsTable(value, source, text, prefix + name)
    return tables


def _bool(table: SettingsTable, key: str) -> bool:
    value = table.data[key]
    if not isinstance(value, bool):
        raise table.error(key, f'expected "{key}" to be true or false, got {value!r}')
    return value


def _positive_int(table: SettingsTable, key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CUTOFF:
        raise table.error(key, f'expected "{key}" to be a positive integer of at most {MAX_CUTOFF:,}, '
                               f'got {show_value(value)}')
    return value


def apply_scoring(settings: Settings, table: SettingsTable) -> Settings:
    changes: dict[str, object] = {}
    readers: dict[str, Callable[[str], object]] = {
        "k": lambda key: _positive_int(table, key, table.data[key]),
        "cutoffs": lambda key: _cutoffs(table, key),
        "refusal_tokens": lambda key: _tokens(table, key),
        "refusal_patterns": lambda key: _patterns(table, key),
        "require_claim": lambda key: _bool(table, key),
        "scope_citations": lambda key: _bool(table, key),
        "strict": lambda key: _bool(table, key),
        "metrics": lambda key: _families(table, key),
        "hybrid_alpha": lambda key: _number(table, key, 0.0, 1.0),
        "hybrid_gamma": lambda key: _number(table, key, 0.0, 1e6, low_open=True),
        "similarity_threshold": lambda key: _number(table, key, -1.0, 1.0),
        "stemmer": lambda key: _bool(table, key),
        "text_tokenizer": lambda key: _choice(table, key, TEXT_TOKENIZERS),
        "repeats": lambda key: _choice(table, key, REPEATS),
        "session": lambda key: _session(table, key),
        "pass_k": lambda key: _cutoffs(table, key),
        "confidence": lambda key: _number(table, key, 0.0, 1.0, low_open=True, high_open=True),
        "bootstrap": lambda key: _positive_int(table, key, table.data[key]),
        "seed": lambda key: str(table.data[key]) if isinstance(table.data[key], (int, str)) and not isinstance(
            table.data[key], bool) else _bad_seed(table, key),
    }
    for key in table.data:
        if key not in readers:
            raise table.error(key, f'unknown setting "{key}"{did_you_mean(key, list(readers))}')
        changes["families" if key == "metrics" else key] = readers[key](key)
    return replace(settings, **changes)  # type: ignore[arg-type]  # each reader checked its setting's type


def _apply_inputs(settings: Settings, tables: dict[str, SettingsTable]) -> Settings:
    """Read ``[trace]`` (format, ``[trace.fields]``) and ``[gold]`` (``[gold.fields]``); a later file's
    mapping of a concept replaces an earlier one's."""
    from ragscore.input_config import GOLD_CONCEPTS, fields_table, trace_format
    from ragscore.loaders.shapes import TRACE_CONCEPTS

    changes: dict[str, object] = {}
    if "inputs" in tables:
        changes.update(_input_paths(tables["inputs"]))
    for section, allowed in (("trace", ("format", "fields")), ("gold", ("fields",))):
        if section not in tables:
            continue
        table = tables[section]
        for key in table.data:
            if key not in allowed:
                raise table.error(key, f'unknown setting "{key}"{did_you_mean(key, list(allowed))}'
                                       + (f' (map a field in [{table.name}.fields])' if key in TRACE_CONCEPTS
                                          or key in GOLD_CONCEPTS else ""))
        if "format" in table.data:
            changes["trace_format"] = trace_format(table.data["format"], partial(table.error, "format"))
        if "fields" in table.data:
            fields = table.data["fields"]
            inner = SettingsTable(fields if isinstance(fields, dict) else {}, table.source, table.text,
                                  f"{table.name}.fields")
            if not isinstance(fields, dict):
                raise table.error("fields", f'expected "[{table.name}.fields]" to be a table of concept = "path"')
            concepts = tuple(TRACE_CONCEPTS) if section == "trace" else GOLD_CONCEPTS
            name = f"{section}_fields"
            mapped = fields_table(fields, concepts, inner.error)
            changes[name] = tuple({**dict(getattr(settings, name)), **dict(mapped)}.items())
    return replace(settings, **changes) if changes else settings  # type: ignore[arg-type]  # values checked above


def _choice(table: SettingsTable, key: str, choices: tuple[str, ...]) -> str:
    value = table.data[key]
    if value not in choices:
        raise table.error(key, f'expected "{key}" to be one of {", ".join(map(repr, choices))}, got {value!r}')
    return value


def _session(table: SettingsTable, key: str) -> str:
    from ragscore.settings import session_problem

    value = table.data[key]
    problem = session_problem(value)
    if problem is not None:
        raise table.error(key, f'expected "{key}" to be {problem}, got {show_value(value)}')
    return value  # type: ignore[return-value]  # checked: a field path


def _bad_seed(table: SettingsTable, key: str) -> str:
    raise table.error(key, f'expected "{key}" to be a string or an integer, got {table.data[key]!r}')


def _number(
    table: SettingsTable, key: str, low: float, high: float, low_open: bool = False, high_open: bool = False
) -> float:
    value = table.data[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
        (low < value if low_open else low <= value) and (value < high if high_open else value <= high)
    ):
        if low_open and high_open:
            bound = f"strictly between {low:g} and {high:g}"
        else:
            bound = f"above {low:g} and at most {high:g}" if low_open else f"from {low:g} to {high:g}"
        raise table.error(key, f'expected "{key}" to be a number {bound}, got {show_value(value)}')
    return float(value)


def parse_families(names: list[str], where: str, line: int | None = None) -> tuple[str, ...]:
    """Check metric family names ("all" for every one); return the optional ones, in a fixed order."""
    known = [ANSWER, *FAMILIES, "all"]
    for name in names:
        if name not in known:
            suggestion = did_you_mean(name, known)
            raise ConfigError(where, f'unknown metric family "{name}" (known: {", ".join(known)}){suggestion}', line)
    return tuple(f for f in FAMILIES if f in names or "all" in names)


def _families(table: SettingsTable, key: str) -> tuple[str, ...]:
    value = table.data[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise table.error(key, f'expected "{key}" to be a list of metric family names')
    return parse_families(value, table.source, table.line_of(key))


def _cutoffs(table: SettingsTable, key: str) -> tuple[int, ...]:
    value = table.data[key]
    if not isinstance(value, list) or not value:
        raise table.error(key, f'expected "{key}" to be a non-empty list of positive integers')
    cutoffs = tuple(sorted({_positive_int(table, key, v) for v in value}))
    problem = cutoff_problem(cutoffs)
    if problem is not None:
        raise table.error(key, f'expected "{key}" to hold {problem}')
    return cutoffs


def _tokens(table: SettingsTable, key: str) -> tuple[str, ...]:
    value = table.data[key]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise table.error(key, f'expected "{key}" to be a list of non-empty strings')
    return tuple(value)


def _patterns(table: SettingsTable, key: str) -> tuple[str, ...]:
    patterns = _tokens(table, key)
    for pattern in patterns:
        problem = refusal_pattern_problem(pattern)
        if problem is not None:
            raise ConfigError(table.source, f'[{table.name}] "{key}" entry {quote(pattern)}: {problem}',
                              _entry_line(table, key, pattern))
    return patterns


_KEY_PART: Final = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
_NEXT_KEY_RE: Final = re.compile(rf"[ \t]*(?:\[|{_KEY_PART}(?:[ \t]*\.[ \t]*{_KEY_PART})*[ \t]*=)")


def _entry_line(table: SettingsTable, key: str, entry: str) -> int | None:
    """Find the line of a string in the list ``key`` (best effort: else the key's line)."""
    first = table.line_of(key)
    if first is None:
        return None
    # As TOML writes the string: literal ('...'), or basic ("...", escaped as JSON escapes it).
    written = ("'" + entry + "'", json.dumps(entry, ensure_ascii=False), json.dumps(entry))
    lines = table.text.split("\n")  # as line_of counts them
    for number in range(first - 1, len(lines)):
        text = lines[number]
        if number >= first and _NEXT_KEY_RE.match(text):
            break  # the next table or key: the list ended
        if any(w in text for w in written):
            return number + 1
    return first


_INPUT_PATHS: Final = ("corpus", "chunks")


def _input_paths(table: SettingsTable) -> dict[str, str]:
    """Read ``[inputs]``: ``corpus`` and ``chunks``, paths relative to the settings file's folder."""
    out = {}
    for key in table.data:
        if key not in _INPUT_PATHS:
            raise table.error(key, f'unknown setting "{key}"{did_you_mean(key, list(_INPUT_PATHS))} (the gold set '
                                   "and the traces are named on the command line)")
        value = table.data[key]
        if not isinstance(value, str) or not value:
            raise table.error(key, f'expected "{key}" to be a path such as "{key}.jsonl.gz", got {show_value(value)}')
        folder = Path(table.source).parent
        out[key] = value if Path(value).is_absolute() or folder == Path() else os.path.normpath(folder / value)
    return out


def _files(cwd: Path, gates_file: str | None) -> list[dict[str, SettingsTable]]:
    """Read the settings files in increasing precedence: pyproject.toml, then the gates file."""
    found = []
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file():
        data, text = read_toml(pyproject, "pyproject.toml")
        tool = data.get("tool", {})
        section = tool.get("ragscore") if isinstance(tool, dict) else None
        if isinstance(section, dict):
            found.append(_sections(section, "pyproject.toml", text, prefix="tool.ragscore."))
    if gates_file is not None:
        path = Path(gates_file)
        if not path.exists():
            raise ConfigError(gates_file, "no such file (from --gates-file)")
        data, text = read_toml(path, gates_file)
        found.append(_sections(data, gates_file, text))
    elif (cwd / "gates.toml").is_file():
        data, text = read_toml(cwd / "gates.toml", "gates.toml")
        found.append(_sections(data, "gates.toml", text))
    return found


def load_config(overrides: Overrides, gates_file: str | None = None, cwd: Path | None = None) -> Config:
    """Merge defaults, ``[tool.ragscore]``, the gates file and the command line, in that order."""
    files = _files(cwd or Path.cwd(), gates_file)
    settings = _scoring_settings(files, overrides)
    diagnosis_rules, samples = builtin_rules(), DEFAULT_SAMPLES
    # Every family's, and the session metrics (sessions may turn on only when the gold set is looked into).
    every_metric = metric_names(replace(settings, families=tuple(FAMILIES), session=settings.session or "session_id"))
    for tables in files:
        if "diagnose" in tables:
            diagnosis_rules, samples = _diagnose(tables["diagnose"], diagnosis_rules, samples, every_metric, settings.k)
    directions = {name: rule.direction for name, rule in diagnosis_rules.items() if rule.direction is not None}

    # A gate may name a metric of any family; naming one turns its family on. Other names (not
    # close to a known one) are scores from other evaluators, found in the traces or --scores.
    names = (*every_metric, *METRICS.names("operations"), *sorted(KNOWN_SCORES),
             *(name for name in diagnosis_rules if not name.endswith("@K") and lookup(name) is None))
    gates: dict[str, Gate | None] = {gate.metric: gate for gate in DEFAULT_GATES}
    for tables in files:
        if "gates" in tables:
            table = tables["gates"]
            gates.update(parse_gate_table(table.data, names, settings.k, table.source, table.line_of, directions,
                                          external=True))
    if overrides.gates is not None:
        gates.update(parse_gate_option(overrides.gates, names, settings.k, directions, external=True))
    regression = _regression(files, names, settings.k)
    slice_gates, min_n = _slice_gates(files, names, settings.k, directions)
    gated = tuple(spec.family for metric in [*(m for m, g in gates.items() if g), *regression.drops, *slice_gates]
                  if (spec := lookup(metric)) is not None)
    return Config(
        settings=replace(settings, families=_in_order(settings.families + gated)),
        gates=tuple(g for g in gates.values() if g is not None),
        regression=regression.drops, require_significance=regression.require_significance,
        test=overrides.test or regression.test, correction=overrides.correction or regression.correction,
        slice_gates=tuple(g for g in slice_gates.values() if g is not None), slice_min_n=min_n,
        rules=diagnosis_rules, samples=samples, directions=directions, regression_at=regression.at,
        known_names=names,
    )


def _scoring_settings(files: list[dict[str, SettingsTable]], overrides: Overrides) -> Settings:
    """The scoring settings: each file's [scoring] and input tables in turn, then the command line's."""
    settings = Settings()
    for tables in files:
        if "scoring" in tables:
            settings = apply_scoring(settings, tables["scoring"])
        settings = _apply_inputs(settings, tables)
    settings = replace(
        settings,
        k=overrides.k if overrides.k is not None else settings.k,
        refusal_tokens=tuple(dict.fromkeys(settings.refusal_tokens + overrides.refusal_tokens)),
        refusal_patterns=tuple(dict.fromkeys(settings.refusal_patterns + overrides.refusal_patterns)),
        require_claim=settings.require_claim if overrides.require_claim is None else overrides.require_claim,
        scope_citations=settings.scope_citations if overrides.scope_citations is None else overrides.scope_citations,
        strict=settings.strict if overrides.strict is None else overrides.strict,
        cutoffs=overrides.cutoffs or settings.cutoffs,
        confidence=settings.confidence if overrides.confidence is None else overrides.confidence,
        bootstrap=settings.bootstrap if overrides.bootstrap is None else overrides.bootstrap,
        seed=settings.seed if overrides.seed is None else overrides.seed,
        families=_in_order(settings.families + overrides.families),
        trace_format=overrides.trace_format or settings.trace_format,
        trace_fields=tuple({**dict(settings.trace_fields), **dict(overrides.trace_fields)}.items()),
        repeats=overrides.repeats or settings.repeats,
        pass_k=overrides.pass_k or settings.pass_k,
        corpus=overrides.corpus or settings.corpus,
        chunks=overrides.chunks or settings.chunks,
        session=overrides.session or settings.session,
    )
    if overrides.pass_k and not settings.sampled:  # [scoring] pass_k may wait for a run with samples
        raise ConfigError("--pass-k", 'pass@k and pass^k need repeated samples: add --repeats samples (or '
                                      '[scoring] repeats = "samples")')
    return settings


@dataclass(frozen=True, slots=True)
class _Regression:
    """The [regression] tables: each metric's largest allowed drop (and where it was written), the test."""

    drops: dict[str, float]
    at: dict[str, tuple[str, int | None]]
    require_significance: bool = False
    test: str = "bootstrap"
    correction: str = "holm"


def _regression(files: list[dict[str, SettingsTable]], names: tuple[str, ...], k: int) -> _Regression:
    drops: dict[str, float] = {}
    at: dict[str, tuple[str, int | None]] = {}
    require_significance = False
    chosen = {"test": "bootstrap", "correction": "holm"}  # [regression] test and correction (the options win)
    for tables in files:
        if "regression" in tables:
            table = tables["regression"]
            for key, value in table.data.items():
                if key == "require_significance":
                    require_significance = _bool(table, key)
                    continue
                if key in ("test", "correction"):
                    chosen[key] = _choice(table, key, PAIRED_TESTS if key == "test" else tuple(CORRECTIONS))
                    continue
                metric = resolve_metric(key, names, k, table.source, table.line_of(key), external=True)
                drop = finite_number(value)
                if drop is None or drop < 0:
                    raise table.error(key, f'expected "{key}" to be the largest allowed drop, a number >= 0, '
                                           f'got {show_value(value)}')
                drops[metric] = drop
                at[metric] = (table.source, table.line_of(key))
    return _Regression(drops, at, require_significance, chosen["test"], chosen["correction"])


def _slice_gates(files: list[dict[str, SettingsTable]], names: tuple[str, ...], k: int,
                 directions: Mapping[str, Direction]) -> tuple[dict[str, Gate | None], int]:
    """The [slice_gates] tables: the gates each slice must pass, and the smallest slice they apply to."""
    slice_gates: dict[str, Gate | None] = {}
    min_n = DEFAULT_MIN_N
    for tables in files:
        if "slice_gates" in tables:
            table = tables["slice_gates"]
            rules = {key: value for key, value in table.data.items() if key != "min_n"}
            if "min_n" in table.data:
                min_n = _positive_int(table, "min_n", table.data["min_n"])
            parsed = parse_gate_table(rules, names, k, table.source, table.line_of, directions, external=True)
            for metric in parsed:
                if metric in ("unknown_traces", "duplicate_traces"):  # trace lines belong to no slice
                    raise table.error(
                        metric, f'"{metric}" counts trace lines, which belong to no slice: gate it in [gates]'
                    )
                if (spec := lookup(metric)) is not None and spec.family == "operations":
                    raise table.error(metric, f'"{metric}" is not computed per slice (latency, tokens and cost are '
                                              "the run's): gate it in [gates]")
            slice_gates.update(parsed)
    return slice_gates, min_n


def _diagnose(
    table: SettingsTable, rules: dict[str, Rule], samples: int, metrics: tuple[str, ...], k: int
) -> tuple[dict[str, Rule], int]:
    """Read ``[diagnose]``: ``samples`` (worst questions per diagnosis) and ``[diagnose.METRIC]`` rules.

    A rule's name may be any metric (``@K`` for every cutoff), an alias (``recall@k``), or the
    name of a score from another evaluator; a name very close to a known metric is a typo.
    """
    data = dict(table.data)
    if "samples" in data:
        value = data.pop("samples")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise table.error("samples", f'expected "samples" to be a whole number >= 0, got {value!r}')
        samples = value
    for name, value in data.items():
        if not isinstance(value, dict):
            raise table.error(name, f'expected "{name}" to be a table [{table.name}.{name}] of warning, critical, '
                                    'direction, causes, actions and cases (or "samples = N")')

    def line_of(metric: str) -> int | None:
        header = re.search(r"^[ \t]*\[[ \t]*" + re.escape(table.name).replace(r"\.", r"[ \t]*\.[ \t]*")
                           + r'[ \t]*\.[ \t]*"?' + re.escape(metric) + r'"?[ \t]*\]', table.text, re.MULTILINE)
        return table.text.count("\n", 0, header.start()) + 1 if header else table.line_of(metric)

    known = [*metrics, *sorted(KNOWN_SCORES), *(name for name in rules if name.endswith("@K"))]
    renamed: dict[str, object] = {}
    for name, value in data.items():
        canonical = ALIASES.get(name, name)
        if canonical not in known and canonical not in rules and lookup(canonical) is None:
            hint = closest(canonical, known + list(ALIASES), TYPO_CUTOFF)
            if hint is not None:
                raise ConfigError(table.source, f'[{table.name}.{name}] unknown metric "{name}"; '
                                                f'did you mean "{hint}"?', line_of(name))
        template, cutoff = split_cutoff(canonical)
        if cutoff is not None and canonical not in rules and template in rules:
            # One cutoff of a template rule: start from the template's causes, actions and thresholds.
            rules = {**rules, canonical: replace(rules[template], metric=canonical)}
        renamed[canonical] = value
    parsed = parse_rules(renamed, table.source, lambda metric: line_of(_written(metric, data)), rules)
    for rule in parsed.values():
        for case in rule.cases:
            for condition in case.when:
                metric = condition.metric.replace("@K", f"@{k}")
                if metric not in known and lookup(metric) is None and metric not in parsed:
                    hint = closest(metric, known, TYPO_CUTOFF)
                    if hint is not None:
                        raise ConfigError(table.source, f'[{table.name}.{rule.metric}] a case names an unknown metric '
                                                        f'"{condition.metric}"; did you mean "{hint}"?',
                                          line_of(rule.metric))
    return parsed, samples


def _written(metric: str, data: Mapping[str, object]) -> str:
    """Find how a rule's metric was written in the file (an alias, or its own name)."""
    return next((name for name in data if ALIASES.get(name, name) == metric), metric)


def for_gold(config: Config, gold: object) -> Config:
    """The configuration a gold set is scored with: the evidence family on when it holds ``gold_spans``, the tools
    family when it holds ``gold_tool_calls``, sessions read from ``session_id`` when it holds that and no other
    field is named (as far as ``loaders.gold.family_keys`` can tell before reading it; else ``--metrics evidence``,
    ``--metrics tools`` or ``--session session_id`` does)."""
    from ragscore.loaders.gold import family_keys

    settings = config.settings
    if settings.session == NO_SESSION:  # sessions turned off: session_id is a field like any other
        settings = replace(settings, session=None)
        config = replace(config, settings=settings)
        if all(family in settings.families for family in BY_GOLD_KEY.values()):
            return config
        automatic = False
    else:
        automatic = settings.session is None
    if all(family in settings.families for family in BY_GOLD_KEY.values()) and not automatic:
        return config
    keys = family_keys(gold, settings.gold_fields)  # type: ignore[arg-type]
    wanted = [BY_GOLD_KEY[key] for key in keys if key in BY_GOLD_KEY]
    session = "session_id" if automatic and "session_id" in keys else settings.session
    if all(family in settings.families for family in wanted) and session == settings.session:
        return config
    return replace(config, settings=replace(settings, families=_in_order((*settings.families, *wanted)),
                                            session=session))


EVIDENCE: Final = "evidence"  # the family gold spans turn on
BY_GOLD_KEY: Final = {"gold_spans": EVIDENCE, "gold_tool_calls": "tools"}  # the family each gold key turns on
NO_SESSION: Final = "none"  # --session none: no sessions, even when the gold file holds session_id


def _in_order(names: tuple[str, ...]) -> tuple[str, ...]:
    """Keep the optional families named, once each, in their fixed order."""
    return tuple(f for f in FAMILIES if f in names)


def load_run_scores(path: str | os.PathLike[str], config: Config, monitored: bool = False) -> ScoreFile:
    """Load a run's --scores file; names gated or given a rule must hold numbers (``monitored``: ragscore monitor's
    run, whose metric names a score may not take either)."""
    from ragscore.external import name_problem
    from ragscore.loaders.scores import load_scores

    named = KNOWN_SCORES | frozenset(config.rules) | {g.metric for g in (*config.gates, *config.slice_gates)}
    scores_file = load_scores(os.fspath(path), frozenset(named))  # at most MAX_NAMES columns: the loader refuses more
    for name in scores_file.names:
        problem = name_problem(name, config.settings.sampled, monitored)
        if problem is not None:
            raise InputError(scores_file.source, problem)
    return scores_file


def judged(config: Config, scores_file: ScoreFile | None) -> Config:
    """The run's configuration, its settings naming the LLM judge whose scores the --scores file holds (when
    ragscore judge wrote it), so that the signature tells runs judged differently apart."""
    if scores_file is None or scores_file.judge is None:
        return config
    return replace(config, settings=replace(config.settings, judge=tuple(scores_file.judge.signed().items())))
