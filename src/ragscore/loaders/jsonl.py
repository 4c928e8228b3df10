"""Read JSON Lines and JSON arrays strictly, streaming, with a position for every error."""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator
from itertools import chain
from typing import Final, TypeGuard, cast

from ragscore.errors import InputError
from ragscore.loaders import input_file
from ragscore.loaders.input_file import (  # re-exported: the loaders and commands read files through here
    BOM,
    STDIN,
    InputFile,
    Resumed,
    array_or_lines,
    decode_text,
    peek,
)

__all__ = ["BOM", "STDIN", "InputFile", "array_or_lines", "decode_text"]  # the re-exports; the rest by name

# A JSON string, escapes included, matched in constant memory whatever its length: the runs
# between escapes are single repeats and nothing is given back ("*+"), so the engine keeps no
# backtracking state per character ("(?:[^"\\]|\\.)*" kept ~140 bytes per character: 3.7 GB
# for a 30 MB question with an error after it).
_STRING: Final = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
# Strings are skipped so that a "NaN" inside quotes is not taken for the literal.
_CONSTANT_RE: Final = re.compile(_STRING + r"|(-?Infinity|NaN)")
_JSON_WS_RE: Final = re.compile(r"[ \t\n\r]*")
# The pattern matches the empty string, so its match never returns None: typed so, with no check per element.
_skip_ws: Final = cast("Callable[[str, int], re.Match[str]]", _JSON_WS_RE.match)
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


def is_string_list(value: object) -> TypeGuard[list[str]]:
    """Tell whether ``value`` is a list of strings (checked at C speed: ids run into millions)."""
    if type(value) is not list:
        return False
    try:
        "".join(value)
        return True
    except TypeError:
        return False


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


_ESCAPES: Final = 'JSON allows \\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX'


def json_error(exc: json.JSONDecodeError) -> tuple[str, int]:
    """Say what a JSONDecodeError means in a whole sentence; return it and the index it is about.

    Python's messages that end in "at" (a position it reports apart) and the terse ones are
    completed; the others ("Expecting value", "Expecting ',' delimiter", ...) say it already.
    """
    msg, text, pos = exc.msg, exc.doc, exc.pos
    if msg.startswith("Invalid control character"):
        code = ord(text[pos]) if pos < len(text) else 0
        return f"invalid JSON: invalid control character U+{code:04X} in a string (write it as \\u{code:04x})", pos
    if msg.startswith("Unterminated string"):
        return "invalid JSON: unterminated string (no closing quote)", pos
    if msg.startswith("Invalid \\uXXXX escape"):
        if text[pos : pos + 1] != "\\" and text[pos - 1 : pos] == "\\":
            pos -= 1  # point at the backslash, as for other escapes
        return "invalid JSON: invalid \\uXXXX escape in a string (\\u needs 4 hex digits)", pos
    if msg.startswith("Invalid \\escape"):
        if text[pos : pos + 1] != "\\" and text[pos - 1 : pos] == "\\":
            pos -= 1
        char = text[pos + 1 : pos + 2]
        shown = f"\\{char}" if "!" <= char <= "~" else f"\\ followed by U+{ord(char):04X}" if char else "\\"
        return f"invalid JSON: invalid escape {shown} in a string ({_ESCAPES})", pos
    if msg == "Extra data":
        return "invalid JSON: extra data after the value", pos
    return f"invalid JSON: {msg}", pos


def _decode_at(text: str, index: int, source: str, line: int, line_start: int) -> tuple[object, int]:
    """Decode one JSON value starting at ``index``; convert every failure to an InputError."""
    try:
        return _DECODER.raw_decode(text, index)
    except json.JSONDecodeError as exc:
        message, pos = json_error(exc)
        err_line = line + text.count("\n", line_start, pos)
        column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        raise InputError(source, message, err_line, column) from None
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


# The C scanner: an attribute JSONDecoder.__init__ sets, which typeshed does not declare.
_scan_once: Final[Callable[[str, int], tuple[object, int]]] = _DECODER.scan_once  # type: ignore[attr-defined]


def decode_line(raw: bytes, source: str, line: int) -> tuple[str, object]:
    """Decode one JSON Lines line into its text and value; the value is ``...`` for a blank line."""
    try:
        text = raw.decode("utf-8")
        value, end = _scan_once(text, 0)  # the C scanner; every failure takes the slow path below
    except Exception:
        if not raw.strip(b" \t\r\n"):  # a blank line, before the slow path: a file may hold millions
            return text.rstrip("\r\n"), ...
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


def decode_document(text: str, source: str) -> object:
    """Decode a whole JSON document (a report) strictly: NaN, Infinity, numbers beyond a double's
    range, lone surrogates, too deep nesting and extra data are errors at their position."""
    start = _JSON_WS_RE.match(text)
    index = start.end() if start else 0
    line = 1 + text.count("\n", 0, index)
    value, end = _decode_at(text, index, source, line, index)
    space = _JSON_WS_RE.match(text, end)
    rest = space.end() if space else end
    if rest < len(text):
        line = 1 + text.count("\n", 0, rest)
        raise InputError(source, "invalid JSON: extra data after the value", line, rest - text.rfind("\n", 0, rest))
    if "\\u" in text and ("\\ud" in text or "\\uD" in text):
        _check_surrogates(value, source, 1)
    return value


def iter_jsonl(
    file: InputFile, part: int = 0, parts: int = 1, first: Iterator[bytes] | None = None,
    skipped: list[int] | None = None, values: bool = False,
) -> Iterator[tuple[int, int, str, object, bytes | None]]:
    """Yield ``(line, column, text, value, key)`` for the non-blank lines worker ``part`` may own.

    With one part every line is yielded (``key`` None). With several, a line that starts with its
    qid is skipped unparsed when another worker owns it (line numbers still count it), and is
    yielded with that qid's bytes as ``key``; a line whose qid cannot be read without parsing
    comes with ``key`` None. The caller settles both with ``is_mine`` once the line is parsed.
    Once the lines are read, how many were skipped is appended to ``skipped``.

    With ``values``, a file whose first record starts a JSON array, and the rest of a file from a
    line whose value goes on past the line's end (a pretty-printed object) or is followed by
    another value, are read as a stream of JSON values (see ``iter_values``): the array's elements,
    or the values one after another, each at its own line and column. Such a file cannot be split
    between workers (NeedsOneProcess). Ordinary JSON Lines pay nothing for it: the stream is only
    tried once a line has failed.
    """
    lines = file.raw_lines() if first is None else first
    name = file.name
    start = 1
    if values:
        head, lines = peek(lines)
        if head.removeprefix(BOM).lstrip(b" \t\r\n")[:1] == b"[":  # one JSON array of records
            if parts > 1:
                raise NeedsOneProcess
            if isinstance(lines, Resumed):
                start, lines = lines.blanks + 1, lines.rest
            for number, column, text, value in iter_values(lines, name, start):
                yield number, column, text, value, None
            return
    if isinstance(lines, Resumed):  # the blank lines before the first record: counted, not read again
        start = lines.blanks + 1
        lines = lines.rest
    if parts == 1:
        seen = False  # a record read as JSON Lines
        for number, raw in enumerate(lines, start):
            if number == 1 and raw.startswith(BOM):
                raw = raw[len(BOM) :]
            try:
                text, value = decode_line(raw, name, number)
            except InputError as exc:  # (a try costs nothing until it catches)
                if not values or not goes_on(raw, exc):
                    raise
                yield from _rest_as_values(chain((raw,), lines), name, number, exc if seen else None)
                return
            if value is not ...:
                seen = True
                yield number, 1, text, value, None
        return
    quick, crc = _FIRST_QID_RE.match, zlib.crc32
    others = 0
    for number, raw in enumerate(lines, start):
        # The owner of a line that starts with its qid, without parsing it: the same hash as
        # owner() gives the parsed qid. This runs for every line of both files in every worker.
        match = quick(raw)
        key = None
        if match is not None:
            key = match[1] if match[1] is not None else str(int(match[2])).encode()
            if crc(key) % parts != part:
                others += 1
                continue
        if number == 1 and raw.startswith(BOM):
            raw = raw[len(BOM) :]
        try:
            text, value = decode_line(raw, name, number)
        except InputError as exc:
            if values and goes_on(raw, exc):  # a stream of values: read in one process
                raise NeedsOneProcess from None
            raise
        if value is not ...:
            yield number, 1, text, value, key
    if skipped is not None:
        skipped.append(others)


def _rest_as_values(lines: Iterator[bytes], name: str, start: int,
                    line_error: InputError | None) -> Iterator[tuple[int, int, str, object, bytes | None]]:
    """Read the rest of a file from line ``start`` as a stream of JSON values. ``line_error``: that
    line's own error as JSON Lines, when records were read as JSON Lines before it; if its value
    cannot be read as one spanning lines either, that error is the one to show (a line cut short
    in a JSON Lines file is wrong at its own line, not where the next record starts)."""
    streamed = False
    try:
        for line, column, text, value in iter_values(lines, name, start, False):
            streamed = True
            yield line, column, text, value, None
    except InputError:
        if line_error is not None and not streamed:
            raise line_error from None
        raise


def goes_on(raw: bytes, exc: InputError) -> bool:
    """Tell whether a line failed as JSON Lines only because its value goes on past the line's end
    (a pretty-printed object's first line: ``{``) or another value follows it on the line (``}{``)."""
    if exc.column is None:
        return False
    text = raw.decode("utf-8", "replace").rstrip(" \t\r\n")
    if exc.column > len(text):
        return True
    return exc.message.startswith("invalid JSON: extra data") and text[exc.column - 1 : exc.column] in ("{", "[")


# The tokens that open or close a value, and strings (skipped whole: a bracket inside one is text).
_SCAN_RE: Final = re.compile(_STRING + r"|[{}\[\]]")
_BRACKET_RE: Final = re.compile(r"[{}\[\]]")


def _closing(text: str, pos: int, depth: int, base: int) -> tuple[int, int]:
    """Scan ``text`` from ``pos`` inside a value ``depth`` brackets deep: return the depth and the index
    after the bracket that brings it back to ``base`` (-1 when the line ends first)."""
    if _BRACKET_RE.search(text, pos) is None:  # most lines of an indented value: nothing opens or closes
        return depth, -1
    for match in _SCAN_RE.finditer(text, pos):
        char = text[match.start()]
        if char == '"':
            continue
        if char == "{" or char == "[":
            depth += 1
        else:
            depth -= 1
            if depth == base:
                return depth, match.end()
    return depth, -1


def _ends_inside(held: list[str], start: int, source: str, first: int, number: int, open_brackets: int) -> InputError:
    """The error of an input that ends inside a value: a fault the decoder finds before the end comes first."""
    try:
        _decode_at("".join(held), start, source, first, 0)
    except InputError as exc:
        # Past the last character but one: the decoder ran out of input. At the line end
        # itself: a line break inside a string, which no more input would mend.
        last = len(held[-1].rstrip(" \t\r\n")) + 1
        if exc.line is not None and (exc.line < number or exc.line == number and (exc.column or 0) <= last):
            return exc
    missing = f"{open_brackets} closing bracket{'s' if open_brackets > 1 else ''}"
    return InputError(source, f"invalid JSON: the input ends inside the value that starts here ({missing} missing)",
                      first, start + 1)


def iter_values(
    lines: Iterable[bytes], source: str, line: int = 1, array: bool | None = None
) -> Iterator[tuple[int, int, str, object]]:
    """Yield ``(line, column, text, value)`` for each JSON value of a stream of them: values one
    after another, on as many lines as each takes (``span.to_json()`` written for each span), or,
    when the stream starts with ``[`` (``array`` None) or ``array`` is True, the elements of that
    one array. ``lines`` start at ``line``.

    Memory holds one value's lines at a time; a value longer than ``MAX_LINE_BYTES`` is refused at
    its first line, as a longer line of JSON Lines is. Each value is decoded once, when the
    bracket that closes it is found (brackets inside strings are skipped), so an error is at its
    own line and column, as the decoder finds it.
    """
    limit = input_file.MAX_LINE_BYTES  # read at each call, so that a test can lower it
    depth = base = 0
    after = ""  # in the array: "[" (nothing yet), "value" (an element read) or "," (a comma read)
    closed = False  # the array has ended: only white space may follow
    held: list[str] = []  # the lines of the value being read, from its first
    size = start = first = 0
    number = line - 1
    for raw in lines:
        number += 1
        if number == 1 and raw.startswith(BOM):
            raw = raw[len(BOM) :]
        text = decode_text(raw, source, number)
        pos = 0
        if depth > base:
            held.append(text)
            size += len(raw)
            if size > limit:
                raise InputError(source, f"a value longer than {limit:,} bytes (the longest record ragscore reads)",
                                 first, start + 1)
        while True:
            if depth > base:  # inside a value: find the bracket that closes it
                depth, end = _closing(text, pos, depth, base)
                if end < 0:
                    break
                document = "".join(held)
                offset = len(document) - len(text)  # where this line starts in the value's lines
                value, stop = _decode_at(document, start, source, first, 0)
                if "\\u" in document:
                    _check_surrogates(value, source, first)
                yield first, start + 1, document[start:stop], value
                held, pos, after = [], max(stop - offset, 0), "value"
                continue
            pos = _skip_ws(text, pos).end()
            if pos == len(text):
                break
            char = text[pos]
            if array is None:
                array = char == "["
                if array:
                    depth = base = 1
                    pos, after = pos + 1, "["
                    continue
            if closed:
                raise InputError(source, "invalid JSON: extra data after the array", number, pos + 1)
            if array:
                if after == "value":
                    if char == ",":
                        pos, after = pos + 1, ","
                        continue
                    if char != "]":
                        raise InputError(source, f"invalid JSON: expected ',' or ']' in the array, got {char!r}",
                                         number, pos + 1)
                if char == "]":
                    if after == ",":
                        raise InputError(source, "invalid JSON: expected a value after ',' in the array, got ']'",
                                         number, pos + 1)
                    depth = base = 0
                    pos, closed = pos + 1, True
                    continue
            if char == "{" or char == "[":
                held, size, start, first = [text], len(raw), pos, number
                depth, pos = base + 1, pos + 1
                continue
            value, stop = _decode_at(text, pos, source, number, 0)  # a number, a string, ...: on its line
            if "\\u" in text:
                _check_surrogates(value, source, number)
            yield number, pos + 1, text[pos:stop], value
            pos, after = stop, "value"
    if depth > base:
        raise _ends_inside(held, start, source, first, number, depth - base)
    if array and not closed:
        raise InputError(source, "invalid JSON: expected ',' or ']' in the array, got the end of the file",
                         max(number, line))


def first_value(lines: Iterator[bytes]) -> tuple[object, Iterator[bytes]]:
    """Read the first value of a stream of JSON values (see ``iter_values``: the first element of an
    array) to tell its format, keeping the lines read: return it (None when it cannot be read: the
    real pass says why) and every line again, from the first."""
    blanks, rest = (lines.blanks, lines.rest) if isinstance(lines, Resumed) else (0, lines)
    kept: list[bytes] = []

    def recorded() -> Iterator[bytes]:
        for raw in rest:
            kept.append(raw)
            yield raw

    try:
        head = next(iter_values(recorded(), "", blanks + 1), None)
    except InputError:
        head = None
    again = chain(kept, rest)
    return (None if head is None else head[3]), (Resumed(blanks, kept[0], again) if blanks and kept else again)


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
    skip = _skip_ws
    index = skip(text, 0).end()
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
    wanted = set(lines)
    found: dict[int, object] = {}
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
        start = None if key is None else value_index(self.text, key)
        if start is not None:
            before = self.text[:start]
            newlines = before.count("\n")
            line += newlines
            column = start - before.rfind("\n") if newlines else column + start
        return InputError(self.source, message, line, column)


# The tokens that matter for finding a key: strings (escapes included), brackets, colons.
_TOKEN_RE: Final = re.compile(_STRING + r"|[{}\[\]:]")


def value_index(text: str, key: str) -> int | None:
    """Return where the value of ``key`` starts in the text of one JSON object; None if it has none.

    Only the object's own keys count (not a nested object's, nor text inside a string), and of a
    key given twice the last one, whose value JSON keeps. A key may be written with escapes.
    """
    found = _key_and_value(text, key)
    return None if found is None else found[1]


def key_index(text: str, key: str) -> int | None:
    """Return where ``key`` itself (its opening quote) starts in one JSON object's text, as ``value_index`` finds it."""
    found = _key_and_value(text, key)
    return None if found is None else found[0]


def _key_and_value(text: str, key: str) -> tuple[int, int] | None:
    found, depth, previous, start = None, 0, None, 0
    for match in _TOKEN_RE.finditer(text):
        token = match.group()
        if token == "{" or token == "[":
            depth += 1
        elif token == "}" or token == "]":
            depth -= 1
        elif token == ":":
            if depth == 1 and previous == key:  # a string before a colon is a key
                space = _JSON_WS_RE.match(text, match.end())
                found = (start, space.end() if space else match.end())
        elif depth == 1:
            previous, start = _key_text(token), match.start()
            continue
        previous = None
    return found


def _key_text(token: str) -> str | None:
    """Decode a string token (None when it is not valid JSON: it cannot be a key then)."""
    if "\\" not in token:
        return token[1:-1]
    try:
        key: str = json.loads(token)  # a string token decodes to a str
    except ValueError:
        return None
    return key
