"""Read a suite file: its tasks, each a command with the options that command takes.

A suite is ``./ragscore.toml`` (or the file given), or the ``[tool.ragscore.suite]`` table of a
``pyproject.toml``::

    name = "support bot"            # optional: the reports' title

    [tasks.qa]                      # a task named qa: `ragscore score` with these options
    command = "score"
    gold = "gold.jsonl"
    trace = "trace.jsonl"
    metrics = ["retrieval"]

    [tasks.ner]                     # named after its command: `command` may be left out
    gold = "ner_gold.jsonl"
    pred = "ner_pred.jsonl"

A task's keys are its command's long options without the dashes, ``_`` for ``-``
(``--per-question`` is ``per_question = true``); a repeatable option takes a list; a ``--no-X``
flag is ``X = false``; trec_eval's letters are named as ``ragscore trec --help`` names them
(``measures``, ``per_query``, ``complete``, ``max_docs``, ``level``), its inputs ``qrels`` and
``runs``. Every task may also say ``no_fail = true`` (its gates do not fail the suite) and
``key_metrics = [...]`` (the figures the summary and the dashboard show). Paths are read from the
suite file's folder, where every task runs as its command would run there. Report options are
the suite's own (``ragscore run --json ...``), never a task's.

The file is checked whole before any task runs: an unknown key (with the nearest known one) or a
value of the wrong kind is an error at its line, and nothing runs. An input a task cannot read
fails that task alone, after the others ran.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from ragscore.config import PAIRED_TESTS
from ragscore.errors import ConfigError, RagscoreError, UsageError
from ragscore.loaders.shapes import CHOICES as TRACE_FORMATS
from ragscore.metrics.stats import CORRECTIONS
from ragscore.quoting import quote
from ragscore.settings import MAX_CUTOFF, REPEATS, cutoff_problem, refusal_pattern_problem
from ragscore.stages.api import SCHEME_CHOICES, STAGE_FORMATS
from ragscore.suggest import did_you_mean
from ragscore.tables import SettingsTable, read_toml

DEFAULT_FILE: Final = "ragscore.toml"
COMMANDS: Final = ("score", "compare", "trec", "ner", "classify", "link")
NAME_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
# A gate's rule in a task's gates table: "off", a number, or an operator and a number.
_RULE_RE: Final = re.compile(r"off|(?:>=|<=|>|<|=)?\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# Options that write reports or shape standard output: in a suite they are the suite's.
_REPORT_KEYS: Final = frozenset({"format", "json", "markdown", "html", "junit", "openmetrics", "quiet", "explain",
                                 "output"})

Kind = Callable[[SettingsTable, str, object], object]


def _fail(table: SettingsTable, key: str, expected: str, value: object) -> ConfigError:
    shown = quote(value) if isinstance(value, str) else f"a {type(value).__name__}"
    if isinstance(value, bool):
        shown = "true" if value else "false"
    elif isinstance(value, (int, float)):
        shown = repr(value)
    return table.error(key, f"{key}: expected {expected}, got {shown}")


def _text(table: SettingsTable, key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(table, key, "a non-empty string", value)
    return value


def _path(table: SettingsTable, key: str, value: object) -> str:
    path = _text(table, key, value)
    if path == "-":
        raise table.error(key, f"{key}: standard input ('-') cannot feed a task of a suite; name a file")
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise table.error(key, f"{key}: a path with a control character, {quote(path)}")
    return path


def _choice(choices: tuple[str, ...]) -> Kind:
    """One of a few words (--repeats, --test, ...)."""
    def check(table: SettingsTable, key: str, value: object) -> str:
        if value not in choices:
            raise _fail(table, key, f"one of {', '.join(choices)}", value)
        return str(value)

    return check


def _confidence(table: SettingsTable, key: str, value: object) -> float:
    number = _number(table, key, value)
    if not 0 < number < 1:
        raise _fail(table, key, "a number strictly between 0 and 1", value)
    return number


def _bounded(table: SettingsTable, key: str, value: object) -> int:
    """A count the command line bounds (--bootstrap, --k): at most MAX_CUTOFF."""
    count = _count(table, key, value)
    if count > MAX_CUTOFF:
        raise _fail(table, key, f"a positive integer of at most {MAX_CUTOFF:,}", value)
    return count


def _patterns(table: SettingsTable, key: str, value: object) -> list[str]:
    patterns = _texts(table, key, value)
    for pattern in patterns:
        problem = refusal_pattern_problem(pattern)
        if problem is not None:
            raise table.error(key, f"{key}: {quote(pattern)}: {problem}")
    return patterns


def _listed(kind: Kind, what: str) -> Callable[[SettingsTable, str, object], list[Any]]:
    """A repeatable option: one value, or a non-empty list of them."""
    def check(table: SettingsTable, key: str, value: object) -> list[Any]:
        values: list[object] = value if isinstance(value, list) else [value]
        if not values:
            raise _fail(table, key, f"{what} or a non-empty list of them", value)
        return [kind(table, key, v) for v in values]

    return check


_paths: Final = _listed(_path, "a path")
_texts: Final = _listed(_text, "a string")


def _flag(table: SettingsTable, key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _fail(table, key, "true or false", value)
    return value


def _count(table: SettingsTable, key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _fail(table, key, "a positive integer", value)
    return value


def _integer(table: SettingsTable, key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(table, key, "an integer", value)
    return value


def _number(table: SettingsTable, key: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(table, key, "a number", value)
    return float(value)


def _seed(table: SettingsTable, key: str, value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise _fail(table, key, "a string or an integer", value)
    return str(value)


def _ints(table: SettingsTable, key: str, value: object) -> list[int]:
    """Cutoffs: a list of positive integers, one integer, or "1,3,5" as the option takes them."""
    if isinstance(value, str):
        try:
            value = [int(part) for part in value.split(",") if part.strip()]
        except ValueError:
            raise _fail(table, key, "positive integers (a list, or \"1,3,5\")", value) from None
    values = value if isinstance(value, list) else [value]
    if not values:
        raise _fail(table, key, "positive integers (a list, or \"1,3,5\")", value)
    counts = [_count(table, key, v) for v in values]
    problem = cutoff_problem(set(counts))
    if problem is not None:
        raise _fail(table, key, problem, value)
    return counts


def _checked_by(kind: Kind, check: Callable[[Any], object]) -> Kind:
    """A kind whose value the command's own reader checks too (at load, so the error is at its line)."""
    def read(table: SettingsTable, key: str, value: object) -> object:
        converted = kind(table, key, value)
        try:
            check(converted)
        except RagscoreError as exc:
            message = exc.message if isinstance(exc, ConfigError) else str(exc)
            raise table.error(key, message if message.startswith(f"{key}:") else f"{key}: {message}") from None
        return converted

    return read


def _names(table: SettingsTable, key: str, value: object) -> list[str]:
    """Comma-separated names (``--metrics retrieval,text``), or a list of them."""
    values = value if isinstance(value, list) else [value]
    names = [name.strip() for v in values for name in _text(table, key, v).split(",") if name.strip()]
    if not names:
        raise _fail(table, key, "names (a list, or \"a,b\")", value)
    return names


def _gates(table: SettingsTable, key: str, value: object) -> str | dict[str, Any]:
    """Gates as --gates takes them ("precision=0.8,chr=0.75"), or a table {metric = rule}: a number, a
    rule such as ">= 0.6", or "off"."""
    if isinstance(value, dict):
        for metric, rule in value.items():
            if isinstance(rule, dict):
                raise table.error(key, f"{key}: {metric}: a rule with a warn level ({{min = ..., warn = ...}}) goes "
                                       "in gates.toml; here give a number or a rule such as \">= 0.6\"")
            if isinstance(rule, bool) or not isinstance(rule, (int, float, str)) or (
                    isinstance(rule, str) and not _RULE_RE.fullmatch(rule.strip())):
                raise _fail(table, key, f"{metric}: a number, a rule such as \">= 0.6\" or \"off\"", rule)
        return dict(value)
    return _text(table, key, value)


def _map(table: SettingsTable, key: str, value: object) -> dict[str, str]:
    """Trace concepts read from other paths: {claim = "result"} or ["claim=result", ...] as --map takes them."""
    if isinstance(value, dict):
        return {concept: _text(table, key, path) for concept, path in value.items()}
    out = {}
    for item in _texts(table, key, value):
        concept, sep, path = item.partition("=")
        if not sep or not concept.strip() or not path.strip():
            raise _fail(table, key, "CONCEPT=PATH entries (or a table {concept = \"path\"})", item)
        out[concept.strip()] = path.strip()
    return out


def _families(names: list[str]) -> None:
    from ragscore.config import parse_families

    parse_families(names, "metrics")


def _mapped(mapping: dict[str, str]) -> None:
    from ragscore.input_config import map_options

    map_options([f"{concept}={path}" for concept, path in mapping.items()])


def _measures(specs: list[str]) -> None:
    from ragscore.trec.api import parse_measures

    parse_measures(specs)


def _gate_rules(gates: object) -> None:
    from ragscore.gates import gate_option_parts
    from ragscore.keywords import gate_spec

    if isinstance(gates, (dict, str)):  # each gate as --gates reads it: a name that is no metric's fails here
        gate_option_parts(gate_spec(gates))


_GATES: Final = _checked_by(_gates, _gate_rules)
_MEASURES: Final = _checked_by(_texts, _measures)
_SCORED: Final[dict[str, Kind]] = {"trace_format": _choice(TRACE_FORMATS), "map": _checked_by(_map, _mapped),
                                   "metrics": _checked_by(_names, _families),
                                   "repeats": _choice(REPEATS), "confidence": _confidence, "bootstrap": _bounded,
                                   "seed": _seed, "jobs": _count, "gates_file": _path}
_STAGE: Final[dict[str, Kind]] = {"gold": _path, "pred": _path, "input_format": _choice(STAGE_FORMATS),
                                  "gates": _GATES, "gates_file": _path, "strict": _flag}
COMMAND_OPTIONS: Final[dict[str, dict[str, Kind]]] = {  # each command's task options
    "score": {"gold": _path, "trace": _paths, "scores": _path, "per_question": _flag, "by": _texts,
              "only_failures": _flag, "gates": _GATES, "strict": _flag, "cutoffs": _ints, "k": _bounded,
              "pass_k": _ints, "refusal_token": _texts, "refusal_pattern": _patterns, "require_claim": _flag,
              "scope_citations": _flag, **_SCORED},
    "compare": {"gold": _path, "trace": _paths, "baseline": _paths, "baseline_report": _path, "runs": _paths,
                "names": _names, "columns": _names, "test": _choice(PAIRED_TESTS), "scores": _path,
                "baseline_scores": _path, "allow_judge_change": _flag,
                "correction": _choice(tuple(CORRECTIONS)), **_SCORED},
    "trec": {"qrels": _path, "runs": _paths, "measures": _MEASURES, "per_query": _flag, "complete": _flag,
             "max_docs": _count, "level": _integer, "gates": _GATES, "gates_file": _path, "confidence": _confidence,
             "bootstrap": _bounded, "seed": _seed},
    "ner": {**_STAGE, "scheme": _choice(SCHEME_CHOICES)},
    "classify": _STAGE,
    "link": {**_STAGE, "cutoffs": _ints},
}
# The keys that name files a task reads.
INPUT_KEYS: Final = ("gold", "trace", "baseline", "baseline_report", "runs", "pred", "qrels", "scores",
                     "baseline_scores", "gates_file")
# Keys every task takes besides its command's options.
TASK_KEYS: Final[dict[str, Kind]] = {"command": _text, "no_fail": _flag, "key_metrics": _names}
REQUIRED: Final = {"score": ("gold", "trace"), "compare": ("gold",), "trec": ("qrels", "runs"),
                   "ner": ("gold", "pred"), "classify": ("gold", "pred"), "link": ("gold", "pred")}


@dataclass(frozen=True)
class Task:
    """One task of a suite: a command and its options, checked and converted."""

    name: str
    command: str
    options: dict[str, Any] = field(repr=False)
    no_fail: bool = False
    key_metrics: tuple[str, ...] | None = None
    table: SettingsTable | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Suite:
    """A suite file read: its name, its tasks in file order, and where it is."""

    name: str | None
    tasks: tuple[Task, ...]
    source: str           # the file as given, for messages and reports
    folder: Path          # where its tasks run
    sha256: str           # of the file's bytes
    file: Path | None = None  # the file itself

    def inputs(self) -> list[tuple[str, Path]]:
        """Every file the suite reads, named for a message: the suite file, the settings files of its
        folder, and each task's inputs (globs and folders as named)."""
        found = [("the suite file", self.file)] if self.file is not None else []
        found += [(name, self.folder / name) for name in ("gates.toml", "pyproject.toml")
                  if (self.folder / name).is_file()]
        for task in self.tasks:
            for key in INPUT_KEYS:
                value = task.options.get(key)
                for spec in value if isinstance(value, list) else [value] if value is not None else []:
                    found.append((f"{task.name}'s {key}", self.folder / spec))
        return found

    def task(self, name: str) -> Task:
        for task in self.tasks:
            if task.name == name:
                return task
        raise UsageError(f"no task {quote(name)} in {self.source}" + did_you_mean(name, [t.name for t in self.tasks])
                         + f" (tasks: {', '.join(t.name for t in self.tasks)})")


def _header_line(text: str, header: str, name: str) -> int | None:
    """Find the line of a task's header, ``[tasks.NAME]`` (best effort: None when it is written otherwise)."""
    parts = [re.escape(part) for part in header.split(".")[:-1]] + ['"?' + re.escape(name) + '"?']
    match = re.search(r"^[ \t]*\[[ \t]*" + r"[ \t]*\.[ \t]*".join(parts) + r"[ \t]*\]", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _task(name: str, value: object, source: str, text: str, prefix: str) -> Task:
    header = f"{prefix}tasks.{name}"
    at = _header_line(text, f"{prefix}tasks.x", name)
    if not NAME_RE.fullmatch(name):
        raise ConfigError(source, f"[{prefix}tasks.{quote(name)}]: a task's name is letters, digits, '_', '-' and "
                                  "'.' (at most 64, starting with a letter or a digit)", at)
    if not isinstance(value, dict):
        raise ConfigError(source, f'expected "[{header}]" to be a table of options')
    table = SettingsTable(value, source, text, header)
    command = value.get("command", name if name in COMMANDS else None)
    if command is None:
        raise ConfigError(source, f"[{header}] names no command: add command = \"score\" (or one of "
                                  f"{', '.join(COMMANDS)})", at)
    if command not in COMMANDS:
        raise table.error("command", f"command: expected one of {', '.join(COMMANDS)}, got {quote(command)}"
                          + did_you_mean(str(command), list(COMMANDS)))
    keys = COMMAND_OPTIONS[command]
    options: dict[str, Any] = {}
    for key, raw in value.items():
        if key.replace("-", "_") in options:
            raise table.error(key, f"{key}: given twice (as {key.replace('-', '_')} and with '-')")
        kind = TASK_KEYS.get(key) or keys.get(key.replace("-", "_"))
        if kind is None:
            if key.replace("-", "_") in _REPORT_KEYS:
                raise table.error(key, f'{key}: a task writes no report of its own; the suite writes every task\'s '
                                       "(ragscore run --json/--markdown/--html/--junit PATH)")
            known = sorted(keys) + sorted(TASK_KEYS)
            raise table.error(key, f"unknown option {quote(key)} for {command}"
                                   + did_you_mean(key, known) + f" (options: {', '.join(known)})")
        options[key.replace("-", "_")] = kind(table, key, raw)
    missing = [key for key in REQUIRED[command] if key not in options]
    if missing:
        raise ConfigError(source, f"[{header}] ({command}) needs {' and '.join(missing)}", at)
    if command == "compare":
        _check_compare(table, header, options, at)
    no_fail = options.pop("no_fail", False)
    key_metrics = options.pop("key_metrics", None)
    options.pop("command", None)
    return Task(name, command, options, no_fail, None if key_metrics is None else tuple(key_metrics), table)


def _check_compare(table: SettingsTable, header: str, options: Mapping[str, Any], at: int | None) -> None:
    """A comparison names two runs (trace, and baseline or baseline_report) or several (runs), not both."""
    pair = [key for key in ("trace", "baseline", "baseline_report") if key in options]
    if "runs" in options:
        if pair:
            raise table.error(pair[0], f"{pair[0]}: give runs (several runs), or trace and baseline, not both")
        return
    for key in ("names", "columns"):
        if key in options:
            raise table.error(key, f"{key}: is for several runs (runs = [...])")
    if "baseline" in options and "baseline_report" in options:
        raise table.error("baseline_report", "baseline_report: give baseline or baseline_report, not both")
    if "trace" not in options or len(pair) < 2:
        raise ConfigError(table.source, f"[{header}] (compare) needs trace and baseline (or baseline_report), or "
                                        "runs", at)


def _suite_table(data: Mapping[str, object], source: str, text: str, prefix: str, folder: Path,
                 digest: str) -> Suite:
    allowed = ("name", "tasks")
    for key in data:
        if key not in allowed:
            line = (SettingsTable(data, source, text, prefix.rstrip(".")).line_of(key) if prefix
                    else _top_line(text, key))
            raise ConfigError(source, f"unknown key {quote(key)}" + did_you_mean(key, list(allowed))
                              + " (a suite holds name and [tasks.NAME] tables)", line)
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise ConfigError(source, "name: expected a string", _top_line(text, "name"))
    tasks = data.get("tasks")
    if tasks is not None and not isinstance(tasks, dict):
        raise ConfigError(source, f"tasks: expected [{prefix}tasks.NAME] tables", _top_line(text, "tasks"))
    if not isinstance(tasks, dict) or not tasks:
        raise ConfigError(source, f"no tasks: add a [{prefix}tasks.NAME] table per task (see the README's "
                                  '"Suites" section)')
    return Suite(name, tuple(_task(n, v, source, text, prefix) for n, v in tasks.items()), source, folder, digest)


def _at(suite: Suite | None, file: Path) -> Suite | None:
    return None if suite is None else replace(suite, file=file)


def _top_line(text: str, key: str) -> int | None:
    match = re.search(r'^[ \t]*"?' + re.escape(key) + r'"?[ \t]*=', text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else None


def load_suite(path: str | None = None, cwd: Path | None = None) -> Suite:
    """Read the suite file ``path`` (a pyproject.toml: its [tool.ragscore.suite]); by default
    ./ragscore.toml, else [tool.ragscore.suite] of ./pyproject.toml."""
    folder = cwd or Path.cwd()
    if path is None:
        if (folder / DEFAULT_FILE).is_file():
            return _required(_read(folder / DEFAULT_FILE, DEFAULT_FILE))
        if (folder / "pyproject.toml").is_file():
            suite = _read(folder / "pyproject.toml", "pyproject.toml", required=False)
            if suite is not None:
                return suite
        raise UsageError(f"no suite: give a suite file (ragscore run SUITE.toml), or write ./{DEFAULT_FILE} or "
                         "[tool.ragscore.suite] in ./pyproject.toml (see the README's \"Suites\" section)")
    file = Path(path)
    if cwd is not None and not file.is_absolute():
        file = folder / file
    if not file.exists():
        raise ConfigError(path, "no such file")
    return _required(_read(file, path))


def _required(suite: Suite | None) -> Suite:
    assert suite is not None  # _read returns None only when not required
    return suite


def _read(file: Path, display: str, required: bool = True) -> Suite | None:
    return _at(_parse(file, display, required), file)


def _parse(file: Path, display: str, required: bool) -> Suite | None:
    data, text = read_toml(file, display)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    folder = file.parent
    if file.name != "pyproject.toml":
        return _suite_table(data, display, text, "", folder, digest)
    tool = data.get("tool")
    section = tool.get("ragscore") if isinstance(tool, dict) else None
    suite = section.get("suite") if isinstance(section, dict) else None
    if suite is None:
        if not required:
            return None
        raise ConfigError(display, "has no [tool.ragscore.suite] table")
    if not isinstance(suite, dict):
        raise ConfigError(display, 'expected "[tool.ragscore.suite]" to be a table')
    return _suite_table(suite, display, text, "tool.ragscore.suite.", folder, digest)
