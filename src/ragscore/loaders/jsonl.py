"""Read JSON Lines and JSON arrays strictly, streaming, with a position for every error."""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
import zlib
from collections.abc import Collection, Iterator
from typing import IO, Final

from ragscore.errors import InputError

STDIN: Final = "-"
BOM: Final = b"\xef\xbb\xbf"

# Strings are skipped so that a "NaN" inside quotes is not taken for the literal.
_CONSTANT_RE: Final = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')
_JSON_WS_RE: Final = re.compile(r"[ \t\n\r]*")
_SURROGATE_RE: Final = re.compile("[\ud800-\udfff]")


# The qid of a line that starts {"qid": "..."} (no escapes) or {"qid": 123}, read without
# parsing, so that a worker can skip the lines another worker owns.
_FIRST_QID_RE: Final = re.compile(rb'\{\s*"qid"\s*:\s*(?:"([^"\\]*)"|(-?(?:0|[1-9][0-9]{0,17}))\s*[,}])')


class NeedsOneProcess(Exception):
    """The input cannot be split between workers (a trace joined by question text, a repeated qid key)."""


class _NonFinite(ValueError):
    """Raised from inside the decoder when it meets NaN or Infinity."""


class _TooLarge(ValueError):
    """Raised from inside the decoder for a number beyond the range of a double (1e400)."""


def _reject_constant(name: str) -> object:
    raise _NonFinite(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):
        raise _TooLarge(text)
    return value


# One decoder for the whole run: json.loads(s, **kw) would build a new one per line.
_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def json_type(value: object) -> str:
    """Name the JSON type of a decoded value, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def describe(value: object) -> str:
    """Show a decoded value briefly: scalars as JSON text, containers by their type."""
    if isinstance(value, (list, dict)):
        return f"an {json_type(value)}"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def is_string_list(value: object) -> bool:
    """Tell whether ``value`` is a list of strings (checked at C speed: ids run into millions)."""
    if type(value) is not list:
        return False
    try:
        "".join(value)
        return True
    except TypeError:
        return False


class InputFile:
    """An input file (or standard input) read once, as raw lines, hashing what is read."""

    def __init__(self, spec: str, *, hashed: bool = True) -> None:
        self.spec = spec
        self.name = "<stdin>" if spec == STDIN else spec
        self._hash = hashlib.sha256() if hashed else None

    @property
    def sha256(self) -> str:
        """Return the digest of every byte read so far."""
        assert self._hash is not None, "opened without hashing"
        return self._hash.hexdigest()

    def _open(self) -> IO[bytes]:
        if self.spec == STDIN:
            return sys.stdin.buffer
        try:
            return open(self.spec, "rb")
        except FileNotFoundError:
            raise InputError(self.name, "no such file") from None
        except IsADirectoryError:
            raise InputError(self.name, "is a folder, expected a file") from None
        except OSError as exc:
            raise InputError(self.name, f"cannot read: {exc.strerror}") from None

    def digest_whole(self, block: int = 1 << 20) -> str:
        """Read the whole file in large blocks and return its sha256 (a named file only)."""
        digest = hashlib.sha256()
        with open(self.spec, "rb") as stream:
            while chunk := stream.read(block):
                digest.update(chunk)
        return digest.hexdigest()

    def raw_lines(self) -> Iterator[bytes]:
        """Yield the file's lines as bytes, line ends included, updating the hash."""
        stream = self._open()
        try:
            if self._hash is None:
                yield from stream
            else:
                update = self._hash.update
                for raw in stream:
                    update(raw)
                    yield raw
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()


def decode_text(raw: bytes, source: str, line: int) -> str:
    """Decode one line (or a whole document) as UTF-8, naming the first bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line += before.count(b"\n")
        column = len(before[before.rfind(b"\n") + 1 :].decode("utf-8")) + 1
        raise InputError(
            source, f"expected UTF-8 text, got byte 0x{raw[exc.start]:02x}", line, column
        ) from None


def _constant_column(text: str, start: int = 0) -> int:
    for match in _CONSTANT_RE.finditer(text, start):
        if match.group(1):
            return match.start(1)
    return start


def _check_surrogates(value: object, source: str, line: int) -> None:
    """Reject strings holding half of a UTF-16 surrogate pair (no text can be encoded from them)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE_RE.search(item):
                raise InputError(source, "invalid string: a lone UTF-16 surrogate escape (\\ud800-\\udfff)", line)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())


def _decode_at(text: str, index: int, source: str, line: int, line_start: int) -> tuple[object, int]:
    """Decode one JSON value starting at ``index``; convert every failure to an InputError."""
    try:
        return _DECODER.raw_decode(text, index)
    except json.JSONDecodeError as exc:
        err_line = line + text.count("\n", line_start, exc.pos)
        column = exc.pos - (text.rfind("\n", 0, exc.pos) + 1) + 1
        raise InputError(source, f"invalid JSON: {exc.msg}", err_line, column) from None
    except _NonFinite as exc:
        pos = _constant_column(text, index)
        err_line = line + text.count("\n", line_start, pos)
        column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        raise InputError(
            source, f"invalid JSON: {exc.args[0]} is not a number JSON allows (use null)", err_line, column
        ) from None
    except _TooLarge as exc:
        number = exc.args[0] if len(exc.args[0]) <= 20 else exc.args[0][:17] + "..."
        raise InputError(source, f"invalid JSON: the number {number} is too large (beyond 1.8e308)", line) from None
    except RecursionError:
        raise InputError(source, "invalid JSON: nested too deeply to read", line) from None
    except ValueError as exc:  # an integer with more digits than Python converts
        detail = "a number has too many digits" if "digits" in str(exc) else str(exc)
        raise InputError(source, f"invalid JSON: {detail}", line) from None


_scan_once: Final = _DECODER.scan_once


def decode_line(raw: bytes, source: str, line: int) -> tuple[str, object]:
    """Decode one JSON Lines line into its text and value; the value is ``...`` for a blank line."""
    try:
        text = raw.decode("utf-8")
        value, end = _scan_once(text, 0)  # the C scanner; every failure takes the slow path below
    except Exception:
        return _decode_line_slowly(raw, source, line)
    if end != len(text) and text[end:].strip(" \t\r\n"):
        return _decode_line_slowly(raw, source, line)  # raises: extra data after the value
    if "\\u" in text and ("\\ud" in text or "\\uD" in text):
        _check_surrogates(value, source, line)
    return text, value


def _decode_line_slowly(raw: bytes, source: str, line: int) -> tuple[str, object]:
    """Decode a line that the fast path could not: blank, indented, or wrong (then raise)."""
    text = decode_text(raw, source, line).rstrip("\r\n")  # an error at the end is on this line
    start = len(text) - len(text.lstrip(" \t\r\n"))
    if start == len(text):
        return text, ...
    value, end = _decode_at(text, start, source, line, 0)
    rest = text[end:]
    if rest.strip(" \t\r\n"):
        column = end + len(rest) - len(rest.lstrip(" \t\r\n")) + 1
        raise InputError(source, "invalid JSON: extra data after the value (one value per line)", line, column)
    if "\\u" in text and ("\\ud" in text or "\\uD" in text):
        _check_surrogates(value, source, line)
    return text, value


def iter_jsonl(
    file: InputFile, part: int = 0, parts: int = 1, first: Iterator[bytes] | None = None
) -> Iterator[tuple[int, int, str, object, bytes | None]]:
    """Yield ``(line, column, text, value, key)`` for the non-blank lines worker ``part`` may own.

    With one part every line is yielded (``key`` None). With several, a line that starts with its
    qid is skipped unparsed when another worker owns it (line numbers still count it), and is
    yielded with that qid's bytes as ``key``; a line whose qid cannot be read without parsing
    comes with ``key`` None. The caller settles both with ``is_mine`` once the line is parsed.
    """
    lines = file.raw_lines() if first is None else first
    name = file.name
    if parts == 1:
        for number, raw in enumerate(lines, 1):
            if number == 1 and raw.startswith(BOM):
                raw = raw[len(BOM) :]
            text, value = decode_line(raw, name, number)
            if value is not ...:
                yield number, 1, text, value, None
        return
    quick, crc = _FIRST_QID_RE.match, zlib.crc32
    for number, raw in enumerate(lines, 1):
        # The owner of a line that starts with its qid, without parsing it: the same hash as
        # owner() gives the parsed qid. This runs for every line of both files in every worker.
        match = quick(raw)
        key = None
        if match is not None:
            key = match[1] if match[1] is not None else str(int(match[2])).encode()
            if crc(key) % parts != part:
                continue
        if number == 1 and raw.startswith(BOM):
            raw = raw[len(BOM) :]
        text, value = decode_line(raw, name, number)
        if value is not ...:
            yield number, 1, text, value, key


def is_mine(key: bytes | None, qid: str, part: int, parts: int) -> bool:
    """Decide, once a line is parsed, whether worker ``part`` owns it (see ``iter_jsonl``)."""
    if key is None:
        return owner(qid, parts) == part
    if key != qid.encode("utf-8", "surrogatepass"):
        # A repeated "qid" key: JSON keeps the last, the split went by the first. Another worker
        # may have skipped a line it owned, so this input cannot be split.
        raise NeedsOneProcess
    return True


def iter_json_array(text: str, source: str) -> Iterator[tuple[int, int, str, object]]:
    """Yield ``(line, column, element text, value)`` for each element of a top-level JSON array."""
    skip = _JSON_WS_RE.match
    index = skip(text).end()
    line = 1 + text.count("\n", 0, index)
    if text[index : index + 1] != "[":
        raise InputError(source, "expected a JSON array of objects", line)
    index = skip(text, index + 1).end()
    last, line = index, 1 + text.count("\n", 0, index)
    if text[index : index + 1] == "]":
        index += 1
    else:
        while True:
            line += text.count("\n", last, index)
            last = index
            value, end = _decode_at(text, index, source, line, index)
            if "\\u" in text[index:end]:
                _check_surrogates(value, source, line)
            yield line, index - text.rfind("\n", 0, index), text[index:end], value
            index = skip(text, end).end()
            char = text[index : index + 1]
            if char == "]":
                index += 1
                break
            if char != ",":
                line += text.count("\n", last, index)
                column = index - (text.rfind("\n", 0, index) + 1) + 1
                found = "the end of the file" if not char else repr(char)
                raise InputError(source, f"invalid JSON: expected ',' or ']' in the array, got {found}", line, column)
            index = skip(text, index + 1).end()
    rest = skip(text, index).end()
    if rest < len(text):
        line = 1 + text.count("\n", 0, rest)
        raise InputError(source, "invalid JSON: extra data after the array", line)


def owner(key: str, parts: int) -> int:
    """Return which of ``parts`` workers owns the question with this qid (stable across runs)."""
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % parts


def objects_at(file: InputFile, lines: Collection[int]) -> dict[int, object]:
    """Read the JSON values on these lines of a JSON Lines file again, decoding no other line.

    For the few records a report quotes after a streaming pass that did not keep them.
    """
    wanted, found = set(lines), {}
    if not wanted:
        return found
    last = max(wanted)
    for number, raw in enumerate(file.raw_lines(), 1):
        if number in wanted:
            if number == 1 and raw.startswith(BOM):
                raw = raw[len(BOM) :]
            found[number] = decode_line(raw, file.name, number)[1]
        if number >= last:
            break
    return found


class ObjectFields:
    """Typed access to one decoded object, raising InputError at the offending field's position."""

    def __init__(self, obj: dict[str, object], source: str, line: int, column: int, text: str) -> None:
        self.obj, self.source, self.line, self.column, self.text = obj, source, line, column, text

    def fail(self, key: str | None, message: str) -> InputError:
        """Build an error pointing at ``key``'s value (or at the object when the key is absent)."""
        line, column = self.line, self.column
        if key is not None:
            match = re.search(r'"' + re.escape(key) + r'"\s*:\s*', self.text)
            if match:
                before = self.text[: match.end()]
                newlines = before.count("\n")
                line += newlines
                column = match.end() - before.rfind("\n") if newlines else column + match.end()
        return InputError(self.source, message, line, column)
