"""The settings files: TOML read with errors at their line and column (bounded in size and nesting), and
their tables, each able to point at a key's line; a command's table from pyproject.toml and the gates file."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ragscore.errors import ConfigError
from ragscore.quoting import quote
from ragscore.suggest import did_you_mean

_TOML_POSITION_RE: Final = re.compile(r"^(?P<msg>.*) \(at line (?P<line>\d+), column (?P<col>\d+)\)$")


# What a settings file may not hold, though TOML allows it: nesting past what tomllib can recurse
# through (reported at the line where it passes this depth) and integers Python will not convert.
_TOML_MAX_DEPTH: Final = 100


MAX_SETTINGS_BYTES: Final = 16 << 20


# Strings are matched in constant memory (runs between escapes, nothing given back: "*+"); a
# repeated alternation, "(?:[^\\]|\\.)*?", kept ~140 bytes per character of a string.
_TOML_NESTING_RE: Final = re.compile(
    r'"""[^"\\]*+(?:(?:\\.|"(?!""))[^"\\]*+)*+"""|\'\'\'.*?\'\'\'|"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]',
    re.DOTALL)


_LONG_INTEGER_RE: Final = re.compile(r"[0-9][0-9_]{4300,}")


@dataclass(frozen=True, slots=True)
class SettingsTable:
    """One settings table read from a TOML file, with what is needed to point at a key's line."""

    data: Mapping[str, object]
    source: str
    text: str
    name: str  # as written in its header: "scoring" or "tool.ragscore.scoring"

    def line_of(self, key: str) -> int | None:
        """Find the line of ``key`` inside this table (best effort: None when not found)."""
        start, end = 0, len(self.text)
        header = re.search(r"^[ \t]*\[[ \t]*" + re.escape(self.name).replace(r"\.", r"[ \t]*\.[ \t]*") + r"[ \t]*\]",
                           self.text, re.MULTILINE)
        if header:
            start = header.end()
            following = re.compile(r"^[ \t]*\[", re.MULTILINE).search(self.text, start)
            end = following.start() if following else end
        pattern = r'^[ \t]*(?:"' + re.escape(key) + r'"|' + re.escape(key) + r")[ \t]*="
        match = re.compile(pattern, re.MULTILINE).search(self.text, start, end)
        if match is None:  # a table of its own: [name.key]
            match = re.search(r"^[ \t]*\[[ \t]*" + re.escape(self.name).replace(r"\.", r"[ \t]*\.[ \t]*")
                              + r'[ \t]*\.[ \t]*"?' + re.escape(key) + r'"?[ \t]*\]', self.text, re.MULTILINE)
        if match is None:  # a key written with escapes ("a\nb", "\u0061"), or quoted: read each key as TOML reads it
            return _escaped_key_line(self.text, start, end, key, self.name)
        return self.text.count("\n", 0, match.start()) + 1 if match else None

    def error(self, key: str, message: str) -> ConfigError:
        """Build an error about ``key`` of this table, at its line."""
        return ConfigError(self.source, f"[{self.name}] {message}", self.line_of(key))


_KEY_LINE_RE: Final = re.compile(r"""^[ \t]*((?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
                                 r"""(?:[ \t]*\.[ \t]*(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'))*)[ \t]*=""",
                                 re.MULTILINE)


_HEADER_LINE_RE: Final = re.compile(r"^[ \t]*\[([^\[\]\n]+)\][ \t]*(?:#.*)?$", re.MULTILINE)


def _escaped_key_line(text: str, start: int, end: int, key: str, table: str) -> int | None:
    """Find the line of ``key`` written in any of TOML's ways (escaped, quoted): ``key = ...`` between
    ``start`` and ``end``, else a header ``[table.key]`` anywhere; each key is read by tomllib itself."""
    for found in _KEY_LINE_RE.finditer(text, start, end):
        if _toml_path(found.group(1)) == [key]:
            return text.count("\n", 0, found.start()) + 1
    wanted = [*table.split("."), key]
    for found in _HEADER_LINE_RE.finditer(text):
        if _toml_path(found.group(1)) == wanted:
            return text.count("\n", 0, found.start()) + 1
    return None


def _toml_path(written: str) -> list[str] | None:
    """The keys of a dotted key as TOML reads it (``a."b\\nc"`` -> [a, "b\\nc"]), or None if it is no key."""
    try:
        value: object = tomllib.loads(f"{written} = 0")
    except tomllib.TOMLDecodeError:
        return None
    path = []
    while isinstance(value, dict) and len(value) == 1:
        name, value = next(iter(value.items()))
        path.append(name)
    return path


def read_toml(path: Path, display: str) -> tuple[dict[str, object], str]:
    """Read a settings file (a regular file or a pipe such as ``--gates-file <(…)``), at most MAX_SETTINGS_BYTES."""
    try:
        with open(path, "rb") as stream:
            raw = stream.read(MAX_SETTINGS_BYTES + 1)  # /dev/zero never ends
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(display, "expected UTF-8 text") from None
    except IsADirectoryError:
        raise ConfigError(display, "is a folder, expected a file") from None
    except OSError as exc:
        raise ConfigError(display, f"cannot read: {exc.strerror}") from None
    if len(raw) > MAX_SETTINGS_BYTES:
        raise ConfigError(display, f"longer than {MAX_SETTINGS_BYTES:,} bytes: no settings file is that long")
    try:
        return tomllib.loads(text), text
    except RecursionError:  # tomllib recurses once per nested array or inline table
        raise ConfigError(display, "invalid TOML: arrays or inline tables nested too deeply to read",
                          _deep_line(text)) from None
    except ValueError as exc:
        if isinstance(exc, tomllib.TOMLDecodeError):
            raise _toml_error(exc, display) from None
        # Python refuses to convert an integer of more than 4,300 digits (sys.get_int_max_str_digits).
        match = _LONG_INTEGER_RE.search(text)
        line = text.count("\n", 0, match.start()) + 1 if match else None
        raise ConfigError(display, "invalid TOML: an integer with more than 4,300 digits", line) from None


def _toml_error(exc: tomllib.TOMLDecodeError, display: str) -> ConfigError:
    match = _TOML_POSITION_RE.match(str(exc))
    if match is None:
        return ConfigError(display, f"invalid TOML: {exc}")
    return ConfigError(display, f"invalid TOML: {match['msg']}", int(match["line"]), int(match["col"]))


def _deep_line(text: str) -> int | None:
    """Find the line where arrays and inline tables first nest past ``_TOML_MAX_DEPTH``.

    Strings and comments are skipped.
    """
    depth = 0
    for match in _TOML_NESTING_RE.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > _TOML_MAX_DEPTH:
                return text.count("\n", 0, match.start()) + 1
        elif token in "]}":
            depth = max(depth - 1, 0)
    return None


def command_tables(
    command: str, cwd: Path, gates_file: str | None, checked: Callable[[object, str, str, str], SettingsTable],
) -> list[SettingsTable]:
    """Return a command's table (``[ner]``, ``[monitor]``, ``[trec]``) from each settings file, in increasing
    precedence: ``[tool.ragscore.<command>]`` of ./pyproject.toml, then ``[<command>]`` of the gates file, each
    checked by ``checked`` (value, source, text, name)."""
    check = checked
    found: list[SettingsTable] = []
    pyproject = cwd / "pyproject.toml"
    if pyproject.is_file():
        data, text = read_toml(pyproject, "pyproject.toml")
        tool = data.get("tool")
        section = tool.get("ragscore") if isinstance(tool, dict) else None
        if isinstance(section, dict) and command in section:
            found.append(check(section[command], "pyproject.toml", text, f"tool.ragscore.{command}"))
    if gates_file is not None:
        path, display = Path(gates_file), gates_file
        if not path.exists():
            raise ConfigError(gates_file, "no such file (from --gates-file)")
    else:
        path, display = cwd / "gates.toml", "gates.toml"
    if path.exists():
        data, text = read_toml(path, display)
        if command in data:
            found.append(check(data[command], display, text, command))
    return found


def keyed_table(value: object, source: str, text: str, name: str, keys: tuple[str, ...]) -> SettingsTable:
    """Read a command's table (``[ner]``, ``[monitor]``, ...), refusing a key it does not take."""
    if not isinstance(value, dict):
        raise ConfigError(source, f'expected "[{name}]" to be a table')
    table = SettingsTable(value, source, text, name)
    for key in value:
        if key not in keys:
            raise table.error(key, f'unknown key {quote(key)}{did_you_mean(key, list(keys))} '
                                   f'(known: {", ".join(keys)})')
    return table


def subtable(table: SettingsTable, key: str) -> SettingsTable:
    value = table.data[key]
    if not isinstance(value, dict):
        raise table.error(key, f'expected "{key}" to be a table ([{table.name}.{key}])')
    return SettingsTable(value, table.source, table.text, f"{table.name}.{key}")
