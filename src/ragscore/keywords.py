"""The settings the Python API takes as keywords (``score(..., k=10, gates={...})``): each checked as the
command line checks its option, then laid over the settings files as the command line's overrides."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

from ragscore.config import Config, Overrides, parse_families
from ragscore.config import load_config as _load_config
from ragscore.errors import UsageError

# Keyword settings and what they set (see Overrides).
SETTINGS: Final = ("k", "cutoffs", "refusal_tokens", "refusal_patterns", "require_claim", "scope_citations", "strict",
                   "gates", "metrics", "confidence", "bootstrap", "seed", "trace_format", "fields", "repeats",
                   "pass_k", "test", "correction", "corpus", "chunks", "session")


def load_config(path: str | os.PathLike[str] | None = None, *, cwd: str | os.PathLike[str] | None = None,
                **settings: Any) -> Config:
    """Read the settings and gates: defaults < ``[tool.ragscore]`` in ``cwd/pyproject.toml`` <
    ``path`` (else ``cwd/gates.toml``) < keyword ``settings`` (as ``score`` takes them)."""
    overrides = keyword_overrides(settings)
    folder = Path(cwd) if cwd is not None else None
    config = _load_config(overrides, None if path is None else os.fspath(path), folder)
    return config.with_origin(None if path is None else os.fspath(path), folder, overrides)


NO_OVERRIDES: Final = Overrides()


def keyword_overrides(settings: Mapping[str, Any], base: Overrides = NO_OVERRIDES) -> Overrides:
    """Turn keyword settings into command-line overrides, checking each as the command line does."""
    unknown = [name for name in settings if name not in SETTINGS]
    if unknown:
        from ragscore.suggest import did_you_mean

        raise UsageError(f"unknown setting {unknown[0]!r}{did_you_mean(unknown[0], list(SETTINGS))} "
                         f"(settings: {', '.join(SETTINGS)})")
    changes: dict[str, Any] = {}
    for name, value in settings.items():
        if value is None:
            continue
        if name == "metrics":
            names = [value] if isinstance(value, str) else list(value)
            changes["families"] = parse_families([n.strip() for part in names for n in part.split(",") if n.strip()],
                                                 "metrics")
        elif name == "gates":
            changes["gates"] = gate_spec(value)
        elif name == "fields":
            from ragscore.input_config import map_options

            if not isinstance(value, Mapping):
                raise UsageError(f"fields: expected a mapping of concept to path, got {type(value).__name__}")
            changes["trace_fields"] = map_options([f"{concept}={path}" for concept, path in value.items()])
        elif name in ("refusal_tokens", "refusal_patterns"):
            values = (value,) if isinstance(value, str) else tuple(value)
            changes[name] = checked(name, values)
        else:
            changes[name] = checked(name, value)
    return replace(base, **changes)


def checked(name: str, value: Any) -> Any:
    """Check one keyword setting as the command line checks its option; return it as Overrides keeps it."""
    from ragscore.loaders.shapes import CHOICES
    from ragscore.settings import MAX_CUTOFF, REPEATS, cutoff_problem, refusal_pattern_problem

    def positive(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_CUTOFF

    problem = None
    if name in ("k", "bootstrap"):
        problem = None if positive(value) else f"a positive integer of at most {MAX_CUTOFF:,}"
    elif name in ("cutoffs", "pass_k"):
        values = [value] if isinstance(value, int) else list(value)
        if not values or not all(positive(v) for v in values):
            problem = f"positive integers of at most {MAX_CUTOFF:,}"
        else:
            value = tuple(sorted(set(values)))
            problem = cutoff_problem(value)
    elif name in ("require_claim", "scope_citations", "strict"):
        problem = None if isinstance(value, bool) else "true or false"
    elif name == "confidence":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < 1
        problem = None if ok else "a number strictly between 0 and 1"
    elif name == "seed":
        problem = None if isinstance(value, (str, int)) and not isinstance(value, bool) else "a string or an integer"
        value = str(value)
    elif name == "trace_format":
        problem = None if value in CHOICES else f"one of {', '.join(CHOICES)}"
    elif name == "repeats":
        problem = None if value in REPEATS else f"one of {', '.join(REPEATS)}"
    elif name in ("test", "correction"):
        from ragscore.config import PAIRED_TESTS
        from ragscore.metrics.stats import CORRECTIONS

        choices = PAIRED_TESTS if name == "test" else tuple(CORRECTIONS)
        problem = None if value in choices else f"one of {', '.join(choices)}"
    elif name == "session":
        from ragscore.settings import session_problem

        problem = session_problem(value)
    elif name in ("corpus", "chunks"):
        problem = None if isinstance(value, (str, os.PathLike)) and os.fspath(value) else "a path"
        value = os.fspath(value) if problem is None else value
    elif name == "refusal_tokens":
        if not all(isinstance(v, str) for v in value):
            problem = "strings"
        value = tuple(v for v in value if isinstance(v, str) and v.strip())
    elif name == "refusal_patterns":
        if not value:  # they add to the settings files' patterns: an empty list would turn nothing off
            raise UsageError("refusal_patterns: expected patterns to add to those of the settings files (the default "
                             "ones unless a file lists its own), got an empty list: to use none, write "
                             "refusal_patterns = [] under [scoring] in a settings file (config=load_config(path))")
        if not all(isinstance(v, str) for v in value):
            problem = "strings (regular expressions)"
        else:
            for pattern in value:
                found = refusal_pattern_problem(pattern)
                if found is not None:
                    raise UsageError(f"refusal_patterns: {pattern!r}: {found}")
    if problem is not None:
        raise UsageError(f"{name}: expected {problem}, got {value!r}")
    return value


def gate_spec(gates: str | Mapping[str, Any]) -> str:
    """Write ``{"precision": 0.8, "ndcg@10": ">= 0.6", "missing": None}`` as a --gates option."""
    if isinstance(gates, str):
        return gates
    parts = []
    for metric, rule in gates.items():
        # Each key is one metric and each value one rule: a comma or a comparison in them would be
        # read as more gates than were given, or as another rule.
        if not isinstance(metric, str) or not metric.strip() or any(c in metric for c in ",=<>"):
            raise UsageError(f"gates: {metric!r} is not a metric name")
        if isinstance(rule, bool) or not (rule is None or isinstance(rule, (str, int, float))):
            raise UsageError(f"gates: {metric}: expected a number, a rule such as \">= 0.6\", \"off\" or None, "
                             f"got {rule!r}")
        if isinstance(rule, str) and "," in rule:
            raise UsageError(f"gates: {metric}: {rule!r} holds a comma: one rule per metric (give each metric its "
                             "own key)")
        if rule is None or rule == "off":
            parts.append(f"{metric}=off")
        elif isinstance(rule, str):
            parts.append(f"{metric}{rule.strip()}" if rule.strip()[:1] in "<>=" else f"{metric}={rule.strip()}")
        else:
            parts.append(f"{metric}={rule!r}")
    return ",".join(parts)


def check_jobs(jobs: object) -> None:
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise UsageError(f"jobs: expected a positive integer (or None: all cores for large inputs), got {jobs!r}")


def configured(config: Config | None, settings: Mapping[str, Any]) -> Config:
    """The run's configuration: ``config`` (else the folder's files), with keyword settings over it."""
    if config is None:
        return load_config(**settings)
    if not settings:
        return config
    overrides = keyword_overrides(settings, config.overrides)
    return _load_config(overrides, config.gates_file, config.cwd).with_origin(
        config.gates_file, config.cwd, overrides)


def slice_paths(by: str | Sequence[str]) -> tuple[str, ...]:
    """The gold fields to slice by, checked (fields outside the data contract, or "answerable")."""
    from ragscore.loaders.fields import CONTRACT_FIELDS

    paths = tuple(dict.fromkeys([by] if isinstance(by, str) else by))
    for path in paths:
        if path.split(".")[0] in CONTRACT_FIELDS and path != "answerable":
            raise UsageError(f'--by {path}: slices come from fields outside the data contract (such as "category" '
                             'or "tags.lang"), or "answerable"')
    return paths
