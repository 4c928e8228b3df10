"""Structure-aware mutation of input files, and one bounded in-process run of the command line.

``mutated(seed, shape)`` draws a file that is mostly the valid ``seed`` with a few mutations: at the
level of bytes (a flipped byte, a cut, a hostile token put in, a BOM, line ends changed, a line
repeated thousands of times, a run of blank lines) and at the level of the file's own structure
(``shape``): a JSON value replaced by a hostile or wrongly-typed one, a key dropped, duplicated or
added; a table's field replaced, dropped or doubled; a TOML value replaced, a key or a table
repeated, a known key added. Now and then the whole file is random bytes instead.

``bounded_run`` runs ``ragscore.cli.main`` in-process, in a folder, with standard output and
standard error captured, under two bounds: the address space may grow by ``MEMORY_BOUND`` at most
(``RLIMIT_AS``, lowered for the run and restored after it; a run that needs more gets MemoryError,
which ragscore reports as an internal error, so the test fails and says so), and a run that takes
longer than ``HANG_SECONDS`` is stopped by SIGALRM (a ``Hung`` exception, which ragscore does not
catch). Hypothesis's own deadline bounds each example's time more tightly; the alarm is there for
a run that would never end.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import json
import lzma
import re
import resource
import signal
import sys
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from ragscore.cli import main

MEMORY_BOUND = 1 << 29  # the growth of the address space one run may cause: 512 MiB
HANG_SECONDS = 60
REPEAT_BYTES = 1 << 20  # a line repeated makes a megabyte at most: the bounds are for a parser's work, not the file's size

# Hostile bytes for anywhere in a file: numbers no reader should take whole, nesting no recursion
# survives, encodings' marks in the wrong place, line ends of every kind, control characters.
DEEP = 100_000
TOKENS: tuple[bytes, ...] = (
    b"NaN", b"-Infinity", b"Infinity", b"nan", b"inf", b"-inf", b"1e400", b"-1e400", b"1e-400", b"1e308",
    b"4.9e-324", b"9" * 5000, b"-" + b"9" * 400, b"1" + b"0" * 300, b"1000000000000", b"99999999999", b"-1",
    b"0", b"-0", b"1_0", b"0x10", b"1.5", b"", b"[" * DEEP, b"{\"a\":" * DEEP, b"[" * DEEP + b"]" * DEEP,
    b"\"\\ud800\"", b"\\udc00", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\r", b"\r\n",
    b"\x00", b"\xff", b"\x80", b"\xc3", b"\x1b[31m", b"\xe2\x80\xa8", b"\xc2\x85", b"null", b"true", b"false",
    b"{}", b"[]", b"\"\"", b"\"x\"", b"[\"x\"]", b"{\"x\": 1}", b"\t", b",", b";", b" ", b"#", b"=", b"\"",
    b"\\", b"'", b"\n", b"\n\n", b"##[error]pwned", b"::error::x", b"<script>", b"*", b"**", b"../", b"a" * 70_000,
)
# JSON values to put in place of another: hostile numbers and nesting, and every type.
JSON_VALUES: tuple[str, ...] = (
    "NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e-400", "1e308", "-1e308", "4.9e-324", "9" * 5000,
    "1" + "0" * 300, "-" + "9" * 400, "1000000000000", "99999999999", "-1", "-5", "0", "-0", "1", "2", "0.5",
    "1.5", "1e3", "null", "true", "false", '""', '" "', '"x"', '"1_0"', '"nan"', '"1e400"', '"-1"', '"true"',
    '"\\ud800"', '"\\udfff\\ud800"', '"\\u0000"', '"##[error]pwned"', '"<script>"', '"\\u001b[2J"', '"a\\nb"',
    '"' + "x" * 10_000 + '"', "[]", "{}", '["x"]', "[1]", "[null]", "[[]]", '[{"x": 1}]', '{"x": 1}',
    "[" * DEEP + "]" * DEEP, '{"a":' * 5000 + "1" + "}" * 5000, '"2026-11-24T09:00:00Z"', '"1970-01-01"',
    "[" + ",".join(["1"] * 20_000) + "]", '"' + "\\u00e9" * 1000 + '"', '"' + "9" * 400 + '"', '"' + "9" * 5000 + '"',
    '"-9223372036854775809"', '"18446744073709551616"', '"0x10"', '" 1 "', '"1e-400"', '"-0"',
)
# The same, by the type of the value they replace: a number by hostile numbers, a number written as
# a string by hostile numeric strings, and so on (a reader's checks are by type: this reaches them).
NUMBERS = ("NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e-400", "1e308", "4.9e-324", "9" * 5000,
           "1" + "0" * 300, "-" + "9" * 400, "1000000000000", "99999999999", "-1", "-5", "0", "-0", "0.5", "1.5",
           "2", "1e3", "9007199254740993", "-9223372036854775809")
NUMERIC_STRINGS = tuple(f'"{n}"' for n in NUMBERS) + ('"1_0"', '" 1"', '"0x10"', '""', '"x"')
STRINGS = ('""', '" "', '"\\ud800"', '"\\udfff\\ud800"', '"\\u0000"', '"##[error]pwned"', '"<script>"',
           '"\\u001b[2J"', '"a\\nb"', '"' + "x" * 10_000 + '"', '"1_0"', '"nan"', '"\\u202e"', '"\\u2028"',
           '"' + "\\u00e9" * 1000 + '"', '"."', '"*"', '"../x"', '"/dev/zero"')
LISTS = ("[]", "[null]", "[[]]", '["x"]', "[1]", '[{"x": 1}]', "[" * DEEP + "]" * DEEP,
         "[" + ",".join(["1"] * 20_000) + "]", '["", ""]', '["x", "x"]', "[NaN]", "[1e400]")
OBJECTS = ("{}", '{"x": 1}', '{"": null}', '{"a":' * 5000 + "1" + "}" * 5000, '{"x": NaN}')
BOOLEANS = ("0", "1", '"true"', '"false"', "null", "[]")


def typed_values(value: Any) -> tuple[str, ...]:
    """Hostile JSON values of the kind of ``value``."""
    if isinstance(value, bool):
        return BOOLEANS
    if isinstance(value, (int, float)):
        return NUMBERS
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return STRINGS
        return NUMERIC_STRINGS
    if isinstance(value, list):
        return LISTS
    if isinstance(value, dict):
        return OBJECTS
    return JSON_VALUES


# TOML values: the same, as TOML writes them, and its own kinds (dates, inline tables).
TOML_VALUES: tuple[str, ...] = (
    "nan", "+nan", "-nan", "inf", "-inf", "1e400", "-1e400", "1e-400", "1e308", "9" * 5000, "1" + "0" * 300,
    "1000000000000", "99999999999", "-1", "-5", "0", "1", "0.5", "1.5", "1_0", "0x10", "0o7", "0b1", "true",
    "false", '""', '"x"', "'x'", '"##[error]pwned"', '"<script>"', '"\\u0000"', '"a\\nb"', '"\\u001b[2J"',
    '"^(a+)+$"', '"(a|a)*b"', '"(x)\\\\1"', '"["', '"1_0"', '"nan"', '"' + "x" * 10_000 + '"', "[]", "{}",
    '["x"]', "[1, 2]", '[1, "a"]', "[[]]", "[nan]", "{ min = nan }", "{ min = 0.5, warn = 0.1 }", "{ x = 1 }",
    "1979-05-27T07:32:00Z", "1979-05-27", "07:32:00", "[" * 1000 + "]" * 1000, "{ a = " * 500 + "1" + " }" * 500,
    '["^(a+)+$"]', '["(a|a)*b", "x"]', '["(x)\\\\1"]', '["[", "("]', '"."', '".."', '"/dev/zero"', '"*"',
    '"**/*.jsonl"', '"gold.jsonl"', '["gold.jsonl", "gold.jsonl"]', '"suite.toml"', '"out.html"', "[[1]]",
)
BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\xff\xfe\x00\x00")


class Hung(BaseException):
    """A run went on past HANG_SECONDS (a BaseException: ragscore's handler of bugs must not catch it)."""


@dataclass(frozen=True)
class Outcome:
    """What one run returned and printed."""

    status: int
    out: str
    err: str


def _address_space() -> int | None:
    """The process's current address space in bytes (Linux), else None."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii")
    except OSError:
        return None
    found = re.search(r"^VmSize:\s+(\d+) kB$", status, re.MULTILINE)
    return int(found.group(1)) * 1024 if found else None


@contextlib.contextmanager
def memory_bound(extra: int = MEMORY_BOUND) -> Iterator[None]:
    """Let the address space grow by ``extra`` bytes at most inside the block (Linux only: elsewhere
    RLIMIT_AS is not enforced, and the block is not bounded)."""
    used = _address_space()
    if used is None or not sys.platform.startswith("linux"):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = used + extra
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft != resource.RLIM_INFINITY:
        limit = min(limit, soft)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _hang(signum: int, frame: object) -> None:
    raise Hung(f"the run took more than {HANG_SECONDS} s")


def bounded_run(folder: Path, argv: Sequence[str]) -> Outcome:
    """Run ``ragscore argv`` in-process in ``folder``, bounded in memory and in time."""
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _hang)
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        with (contextlib.chdir(folder), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err),
              memory_bound()):
            status = main(list(argv))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return Outcome(status, out.getvalue(), err.getvalue())


FINDINGS_RE = re.compile(r"ragscore: \d+ errors?, \d+ warnings?")


def check_outcome(outcome: Outcome, where: str, task_errors: bool = False, findings: bool = False) -> None:
    """Exit 0, 1 or 2, never 3; on an error (2), one line on standard error, ``ragscore: error: ...``,
    and nothing on standard output. With ``task_errors`` (ragscore run), a task that cannot run is
    reported among the other tasks' output as ``ragscore: TASK: error: ...`` lines instead; with
    ``findings`` (ragscore validate), the findings are standard output and the one line on standard
    error may be their count (``ragscore: 2 errors, 1 warning``)."""
    status, err = outcome.status, outcome.err
    context = f"{where}: exit {status}\n{err[:3000]}"
    if "MemoryError" in err:
        context = f"{where}: beyond the memory bound ({MEMORY_BOUND >> 20} MiB)\n{err[-3000:]}"
    assert status in (0, 1, 2), context
    assert "Traceback" not in err, context
    assert err == "" or err.endswith("\n"), context
    lines = err.splitlines()
    assert all(line.startswith("ragscore") for line in lines), context
    if status == 2 and findings:
        assert len(lines) == 1 and (lines[0].startswith("ragscore: error: ") or FINDINGS_RE.fullmatch(lines[0])), context
    elif status == 2 and not (task_errors and outcome.out):
        assert len(lines) == 1 and lines[0].startswith("ragscore: error: "), context
        assert outcome.out == "", context
    elif status == 2:
        assert any(": error: " in line for line in lines), context


# ---- mutations -----------------------------------------------------------------------------------

Draw = Callable[[st.SearchStrategy[Any]], Any]


def _index(draw: Draw, size: int) -> int:
    return int(draw(st.integers(0, max(size - 1, 0))))


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def flip_byte(draw: Draw, data: bytes) -> bytes:
    if not data:
        return data
    at = _index(draw, len(data))
    return data[:at] + bytes([data[at] ^ draw(st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 255]))]) + data[at + 1:]


def cut(draw: Draw, data: bytes) -> bytes:
    return data[:_index(draw, len(data) + 1)]


def insert_token(draw: Draw, data: bytes) -> bytes:
    at, token = _index(draw, len(data) + 1), bytes(draw(st.sampled_from(TOKENS)))
    return data[:at] + token + data[at:]


def replace_span(draw: Draw, data: bytes) -> bytes:
    at = _index(draw, len(data) + 1)
    end, token = min(len(data), at + draw(st.integers(1, 12))), bytes(draw(st.sampled_from(TOKENS)))
    return data[:at] + token + data[end:]


def delete_span(draw: Draw, data: bytes) -> bytes:
    at = _index(draw, len(data) + 1)
    return data[:at] + data[at + draw(st.integers(1, 64)):]


def add_bom(draw: Draw, data: bytes) -> bytes:
    bom = bytes(draw(st.sampled_from(BOMS)))
    return bom + data if draw(st.booleans()) else bom + bom + data


def line_ends(draw: Draw, data: bytes) -> bytes:
    return data.replace(b"\n", draw(st.sampled_from([b"\r", b"\r\n", b"\n\r", b"\r\r\n", b"\x0b", b"\xc2\x85"])))


def repeat_line(draw: Draw, data: bytes) -> bytes:
    lines = _lines(data)
    at = _index(draw, len(lines))
    count = min(draw(st.sampled_from([2, 3, 100, 5000])), max(2, REPEAT_BYTES // (len(lines[at]) + 1)))
    return b"\n".join(lines[:at] + [lines[at]] * count + lines[at + 1:])


def blank_lines(draw: Draw, data: bytes) -> bytes:
    lines = _lines(data)
    at = _index(draw, len(lines) + 1)
    blank = draw(st.sampled_from([b"", b" ", b"\r", b"\t", b"\x00"])) * draw(st.sampled_from([1, 2, 20_000]))
    return b"\n".join(lines[:at] + [blank] + lines[at:])


def blank_run(draw: Draw, data: bytes) -> bytes:
    lines = _lines(data)
    at = _index(draw, len(lines) + 1)
    run = bytes(draw(st.sampled_from([b"\n", b"\r\n", b" \n"]))) * int(draw(st.sampled_from([3, 50_000, 200_000])))
    return b"\n".join(lines[:at]) + (b"\n" if at else b"") + run + b"\n".join(lines[at:])


def edit_lines(draw: Draw, data: bytes) -> bytes:
    lines = _lines(data)
    at, other = _index(draw, len(lines)), _index(draw, len(lines))
    action = draw(st.sampled_from(["drop", "duplicate", "swap", "move-first", "tear"]))
    if action == "drop":
        del lines[at]
    elif action == "duplicate":
        lines.insert(other, lines[at])
    elif action == "swap":
        lines[at], lines[other] = lines[other], lines[at]
    elif action == "move-first":
        lines.insert(0, lines.pop(at))
    else:  # a torn line: its first part only, at the end of the file
        lines = [*lines[:at], lines[at][:_index(draw, len(lines[at]) + 1)]]
    return b"\n".join(lines)


BYTE_OPS = (flip_byte, cut, insert_token, replace_span, delete_span, add_bom, line_ends, repeat_line, blank_lines,
            blank_run, edit_lines)


# JSON: parse, change one node, write it back (keys may repeat; raw values are written as they are).

@dataclass
class Raw:
    """A JSON value written as this text, as it is."""

    text: str


@dataclass
class Pairs:
    """A JSON object whose keys may repeat."""

    items: list[tuple[str, Any]]


def dump(value: Any) -> str:
    """Write ``value`` as JSON text (non-ASCII characters raw), ``Raw`` and ``Pairs`` as they say."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        value = Pairs(list(value.items()))
    if isinstance(value, Pairs):
        return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {dump(v)}" for k, v in value.items) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dump(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _nodes(value: Any, out: list[tuple[Any, Any]]) -> None:
    """Every (container, key or index) of ``value``, depth first."""
    if isinstance(value, dict):
        for key in value:
            out.append((value, key))
            _nodes(value[key], out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.append((value, index))
            _nodes(item, out)


def _json_keys(value: Any, out: set[str]) -> None:
    if isinstance(value, dict):
        out.update(value)
        for item in value.values():
            _json_keys(item, out)
    elif isinstance(value, list):
        for item in value:
            _json_keys(item, out)


def _leaves(value: Any) -> list[Any]:
    found: list[tuple[Any, Any]] = []
    _nodes(value, found)
    return [container[key] for container, key in found]


def mutate_json_value(draw: Draw, doc: Any) -> str:
    """Change one node of a parsed JSON document and write it back."""
    nodes: list[tuple[Any, Any]] = []
    _nodes(doc, nodes)
    if not nodes:
        return dump(Raw(draw(st.sampled_from(JSON_VALUES))))
    container, key = nodes[_index(draw, len(nodes))]
    action = draw(st.sampled_from(["typed", "typed", "typed", "typed", "hostile", "hostile", "other", "drop",
                                   "repeat-key", "add-key", "rename-key", "wrap", "empty"]))
    if action == "typed":
        container[key] = Raw(draw(st.sampled_from(typed_values(container[key]))))
    elif action == "hostile":
        container[key] = Raw(draw(st.sampled_from(JSON_VALUES)))
    elif action == "other":  # a value of another key, often of another type
        leaves = _leaves(doc)
        container[key] = leaves[_index(draw, len(leaves))]
    elif action == "drop":
        del container[key]
    elif action == "wrap":
        container[key] = draw(st.sampled_from([lambda v: [v], lambda v: {"x": v}, lambda v: [v, v]]))(container[key])
    elif action == "empty":
        container[key] = type(container[key])() if isinstance(container[key], (list, dict, str)) else None
    elif isinstance(container, dict):  # a key twice, or a key from elsewhere in the document
        known: set[str] = set()
        _json_keys(doc, known)
        items = list(container.items())
        if action == "repeat-key":
            items.insert(_index(draw, len(items) + 1), (key, Raw(draw(st.sampled_from(JSON_VALUES)))))
        elif action == "rename-key":  # flattened keys ("a.0.b") with an index far out, or an empty part
            index = next(i for i, (name, _) in enumerate(items) if name == key)
            items[index] = (draw(st.sampled_from(RENAMES))(key), items[index][1])
        else:
            name = draw(st.sampled_from(sorted(known)))
            items.insert(_index(draw, len(items) + 1), (name, Raw(draw(st.sampled_from(JSON_VALUES)))))
        pairs = Pairs(items)
        _replace(doc, container, pairs)
        if doc is container:
            return dump(pairs)
    else:
        container.insert(_index(draw, len(container) + 1), Raw(draw(st.sampled_from(JSON_VALUES))))
    return dump(doc)


RENAMES: tuple[Callable[[str], str], ...] = (
    lambda key: re.sub(r"\d+", "999999", key), lambda key: key + ".999999", lambda key: key + ".0.999999.x",
    lambda key: key + ".", lambda key: "." + key, lambda key: key.replace(".", ".."), lambda key: key + "[0]",
    lambda key: key.upper(), lambda key: key + "\x00", lambda key: "",
)


def _replace(value: Any, old: Any, new: Any) -> None:
    """Put ``new`` where the container ``old`` is inside ``value`` (by identity)."""
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in list(children):
        if item is old:
            value[key] = new
            return
        _replace(item, old, new)


def json_op(draw: Draw, data: bytes) -> bytes:
    """Change one value of a JSON document, or of one line of JSON Lines."""
    try:  # (a document nested too deeply for the mutation to walk is left as it is)
        return mutate_json_value(draw, json.loads(data)).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        pass
    lines = _lines(data)
    candidates = [i for i, line in enumerate(lines) if line.strip()]
    if not candidates:
        return data
    at = candidates[_index(draw, len(candidates))]
    try:
        lines[at] = mutate_json_value(draw, json.loads(lines[at])).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        return data
    return b"\n".join(lines)


# Tables (TSV, CSV, qrels, runs, CoNLL): a field of a line replaced, dropped, doubled or added.

def table_op(separator: bytes) -> Callable[[Draw, bytes], bytes]:
    def op(draw: Draw, data: bytes) -> bytes:
        lines = _lines(data)
        at = _index(draw, len(lines))
        fields = lines[at].split(separator) if separator != b" " else lines[at].split()
        field = _index(draw, len(fields))
        action = draw(st.sampled_from(["hostile", "hostile", "drop", "double", "add", "other"]))
        if action == "hostile":
            fields[field:field + 1] = [draw(st.sampled_from(TOKENS + tuple(v.encode() for v in JSON_VALUES[:24])))]
        elif action == "drop" and fields:
            del fields[field]
        elif action == "double" and fields:
            fields.insert(field, fields[field])
        elif action == "add":
            fields.append(draw(st.sampled_from([b"", b"x", b"1", b"NIL", b"label", b"id"])))
        else:  # a field of another line
            other = lines[_index(draw, len(lines))].split(separator)
            if fields and other:
                fields[field] = other[_index(draw, len(other))]
        lines[at] = separator.join(fields)
        return b"\n".join(lines)

    return op


# TOML: a value replaced, a line or a table repeated, a key of the settings added.

TOML_KEY = re.compile(rb"^(\s*)([A-Za-z0-9_\-\"'@.]+)(\s*=\s*)(.*)$")


def toml_keys(seeds: Sequence[bytes]) -> list[bytes]:
    """Every key the seeds' TOML uses (at any depth), to add elsewhere."""
    keys: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            keys.update(value)
            for item in value.values():
                walk(item)

    for seed in seeds:
        with contextlib.suppress(tomllib.TOMLDecodeError, UnicodeDecodeError):
            walk(tomllib.loads(seed.decode("utf-8")))
    return sorted(k.encode() if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k).encode() for k in keys)


def toml_op(keys: Sequence[bytes]) -> Callable[[Draw, bytes], bytes]:
    def op(draw: Draw, data: bytes) -> bytes:
        lines = _lines(data)
        assignments = [i for i, line in enumerate(lines) if TOML_KEY.match(line) and not line.lstrip().startswith(b"#")]
        tables = [i for i, line in enumerate(lines) if line.lstrip().startswith(b"[")]
        action = draw(st.sampled_from(["value", "value", "value", "add", "add", "repeat", "table", "rename"]))
        if action in ("value", "rename") and assignments:
            at = assignments[_index(draw, len(assignments))]
            found = TOML_KEY.match(lines[at])
            assert found is not None
            indent, key, equals, value = found.groups()
            if action == "value":
                value = draw(st.sampled_from(TOML_VALUES)).encode()
            elif keys:
                key = draw(st.sampled_from(keys))
            lines[at] = indent + key + equals + value
        elif action == "add" and keys:
            at = _index(draw, len(lines) + 1)
            lines.insert(at, draw(st.sampled_from(keys)) + b" = " + draw(st.sampled_from(TOML_VALUES)).encode())
        elif action == "repeat" and lines:
            at = _index(draw, len(lines))
            lines.insert(_index(draw, len(lines) + 1), lines[at])
        elif action == "table" and tables:  # a table again, or a table header turned into an array of tables
            at = tables[_index(draw, len(tables))]
            header = lines[at].strip()
            lines.append(draw(st.sampled_from([header, b"[" + header + b"]", header[1:-1] + b" = 1"])))
        return b"\n".join(lines)

    return op


# Encodings a file may come in, applied to the mutated text (or mutated after).

def gzip_bytes(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {".gz": gzip_bytes, ".bz2": bz2.compress, ".xz": lzma.compress}


def utf16(data: bytes) -> bytes:
    """The text of ``data`` (bytes that are no UTF-8 kept as lone surrogates) in UTF-16 with a BOM."""
    return data.decode("utf-8", "surrogateescape").encode("utf-16", "surrogatepass")


@st.composite
def mutated(draw: Draw, seed: bytes, ops: Sequence[Callable[[Draw, bytes], bytes]] = (),
            encode: Callable[[bytes], bytes] | None = None) -> bytes:
    """``seed`` with one to three mutations (structure-aware ones from ``ops`` twice as often as
    byte-level ones), sometimes random bytes instead; ``encode`` (a compressor, UTF-16) applied
    before or after."""
    if draw(st.integers(0, 15)) == 0:
        return bytes(draw(st.binary(max_size=2000)))
    data = seed
    encode_first = encode is not None and draw(st.integers(0, 3)) == 0
    if encode is not None and encode_first:
        data = encode(data)
    for _ in range(draw(st.integers(1, 3))):
        if ops and not encode_first and draw(st.integers(0, 2)) > 0:  # two in three: the structure reaches further
            op = draw(st.sampled_from(ops))
        else:
            op = draw(st.sampled_from(BYTE_OPS))
        data = op(draw, data)
    if encode is not None and not encode_first:
        data = encode(data)
    return data


__all__ = ["COMPRESSORS", "MEMORY_BOUND", "Draw", "Hung", "Outcome", "Raw", "bounded_run", "check_outcome", "dump", "json_op",
           "memory_bound", "mutated", "table_op", "toml_keys", "toml_op", "utf16"]

