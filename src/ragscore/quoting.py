"""Show text from the input safely: one line per message, no character that drives a terminal.

Input text (a qid, a question, a file name) can hold a newline followed by ``::error::`` (a
GitHub workflow command once it starts a log line) or an ANSI escape sequence (which moves the
cursor of whoever ``cat``\\s a report). Every piece of input text that ragscore prints or writes
passes through ``quote`` (messages: quoted, escaped, bounded in length) or ``visible`` (report
bodies: escaped where a control character would be, otherwise unchanged).
"""

from __future__ import annotations

import re
from typing import Final

# Longest piece of input text quoted whole in a message; longer text keeps its start and end.
QUOTE_LIMIT: Final = 120

# C0 and C1 controls and DEL, the line and paragraph separators (a line end to some readers),
# the bidirectional marks, overrides and isolates (they reorder what a reader sees), and lone
# surrogates (from a file name that is not UTF-8: no UTF-8 report or terminal can carry them).
_OTHER_UNSAFE: Final = "\x7f-\x9f\u061c\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
# GitHub's runner also reads the older form "##[error]..." anywhere in a line: the second "#"
# of "##[" is escaped too (as \x23, or \u0023 in JSON, which reads back the same).
_LEGACY_COMMAND: Final = r"|(?<=#)#(?=\[)"
_UNSAFE_RE: Final = re.compile(f"[\x00-\x1f{_OTHER_UNSAFE}]{_LEGACY_COMMAND}")
_UNSAFE_BUT_LINES_RE: Final = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHER_UNSAFE}]{_LEGACY_COMMAND}")  # tab, newline kept
# A relative path may start a line of output (validate's "file:line: error: ..."): one that
# starts with anything but these is shown as "./path", the same file.
_PLAIN_START_RE: Final = re.compile(r"[A-Za-z0-9_./~<]")
_SHORT_ESCAPES: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    short = _SHORT_ESCAPES.get(char)
    if short is not None:
        return short
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _escape_match(match: re.Match[str]) -> str:
    return _escape(match.group())


def unicode_escape(match: re.Match[str]) -> str:
    """Write a matched character as ``\\uXXXX`` (for ``re.sub``): JSON's escape, and a visible one in XML."""
    return f"\\u{ord(match.group()):04x}"


def has_unsafe(text: str) -> bool:
    """Tell whether ``text`` holds a character ``visible`` would escape (tab and newline included)."""
    return _UNSAFE_RE.search(text) is not None


def visible(text: str, *, keep_lines: bool = False) -> str:
    """Show every control character of ``text`` as an escape (``\\x1b``, ``\\n``), the rest as it is.

    With ``keep_lines``, tab and newline stay (for formats whose text may span lines).
    """
    pattern = _UNSAFE_BUT_LINES_RE if keep_lines else _UNSAFE_RE
    return pattern.sub(_escape_match, text)


def json_safe(text: str) -> str:
    """Write each control character that JSON text holds raw (DEL, C1, U+2028, ...) as a ``\\uXXXX`` escape.

    ``json.dumps(..., ensure_ascii=False)`` escapes the C0 controls of a string but not these;
    outside strings JSON text holds none but its own line ends, so the value read back is the same.
    """
    # The common case, kept fast: a report can list a million questions.
    if text.isascii() and "\x7f" not in text and "##[" not in text:
        return text
    return _UNSAFE_BUT_LINES_RE.sub(unicode_escape, text)


def shorten(text: str, limit: int = QUOTE_LIMIT) -> str:
    """Keep the start and the end of a long text, saying how much was left out."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}…[{len(text) - head - tail:,} characters]…{text[-tail:]}"


def quote(text: object, limit: int = QUOTE_LIMIT) -> str:
    """Quote a piece of input text for a one-line message: ``"a\\nb"``, long text shortened."""
    text = shorten(str(text), limit)
    return '"' + _UNSAFE_RE.sub(_escape_match, text.replace("\\", "\\\\").replace('"', '\\"')) + '"'


def show_value(value: object, limit: int = 40) -> str:
    """Show a value from a settings file or the command line in a message: text quoted, the rest as Python writes it."""
    if isinstance(value, str):
        return quote(value, limit)
    return shorten(repr(value), limit)


def path_at_line_start(path: str) -> str:
    """Show a file name that starts a line of output: ``./::error::x.jsonl`` for ``::error::x.jsonl``."""
    return path if not path or _PLAIN_START_RE.match(path) else "./" + path
