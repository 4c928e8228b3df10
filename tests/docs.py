"""The documentation as the tests read it: README.md and every page under docs/.

Tests that check an example or a sentence of the documentation find it here, wherever it lives:
``doc_text()`` is every page, ``doc_section(heading)`` the text under one heading, and
``doc_block(text)`` the one fenced block that holds ``text``. Headings and fences inside fenced
blocks are not headings.

Run ``python -m tests.docs`` from the repository root after changing the metric registry or a
command's options: it rewrites the parts of the pages written from the code (the metrics table of
docs/metrics.md, the help that opens each docs/commands/<command>.md), which tests/test_docs.py
checks. This module imports nothing from the tests, so that it runs on its own.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
COMMAND_PAGES = DOCS / "commands"
METRICS_PAGE = DOCS / "metrics.md"

# The help blocks hold argparse's layout at 80 columns, as the Python below formats it: argparse
# words and wraps help differently from one Python version to another (3.13 writes "-j, --jobs N"
# where 3.11 writes "-j N, --jobs N").
HELP_COLUMNS = "80"
HELP_PYTHON = (3, 11)

METRICS_BEGIN = "<!-- metrics table: written by `python -m tests.docs` from src/ragscore/metrics/__init__.py -->"
METRICS_END = "<!-- end of the metrics table -->"
HELP_BEGIN = "<!-- help: written by `python -m tests.docs` from `ragscore {command} --help` -->"
HELP_END = "<!-- end of the help -->"

_FENCE = re.compile(r"^(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6}) +(.*?)\s*#*\s*$")


def doc_files() -> list[Path]:
    """The pages: README.md first, then docs/**/*.md in path order."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def page_name(path: Path) -> str:
    """A page's path from the repository root, with forward slashes (for messages and test ids)."""
    return path.relative_to(ROOT).as_posix()


def doc_text(*paths: Path) -> str:
    """The text of the pages given, or of every page, one after the other."""
    return "\n".join(path.read_text(encoding="utf-8") for path in (paths or doc_files()))


def lines_outside_fences(text: str) -> Iterator[tuple[int, str, str]]:
    """Each line of ``text`` with its index and what it is: "prose", "open" (a fence that opens a
    block), "inside" (a line of a fenced block) or "close" (the fence that closes it)."""
    fence = ""
    for number, line in enumerate(text.split("\n")):
        match = _FENCE.match(line)
        if fence:
            closing = match is not None and set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence)
            yield number, line, "close" if closing else "inside"
            if closing:
                fence = ""
        elif match:
            fence = match.group(1)
            yield number, line, "open"
        else:
            yield number, line, "prose"


def headings(text: str) -> list[tuple[int, int, str]]:
    """The headings of a page: (line index, level, title), fenced blocks left out."""
    found = []
    for number, line, kind in lines_outside_fences(text):
        match = _HEADING.match(line) if kind == "prose" else None
        if match:
            found.append((number, len(match.group(1)), match.group(2)))
    return found


def doc_section(heading: str) -> str:
    """The text under the one heading titled ``heading`` (in any page, at any level), up to the
    next heading of the same or a higher level: its subsections are part of it."""
    found = []
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        marks = headings(text)
        for i, (number, level, title) in enumerate(marks):
            if title == heading:
                end = next((n for n, lvl, _ in marks[i + 1:] if lvl <= level), len(lines))
                found.append((path, "\n".join(lines[number + 1:end])))
    if len(found) != 1:
        where = ", ".join(page_name(path) for path, _ in found) or "no page"
        raise LookupError(f"the heading {heading!r} is in {where}; the docs need it once")
    return found[0][1]


def fenced_blocks(path: Path) -> Iterator[tuple[int, str, str]]:
    """The fenced blocks of a page: (line number of the opening fence, from 1; info string; content)."""
    start, info, body = 0, "", []
    for number, line, kind in lines_outside_fences(path.read_text(encoding="utf-8")):
        if kind == "open":
            start, info, body = number + 1, _FENCE.sub("", line).strip(), []
        elif kind == "inside":
            body.append(line + "\n")
        elif kind == "close":
            yield start, info, "".join(body)


def doc_block(containing: str) -> str:
    """The content of the one fenced block, in any page, that holds ``containing``."""
    found = [(path, content) for path in doc_files() for _, _, content in fenced_blocks(path) if containing in content]
    if len(found) != 1:
        where = ", ".join(page_name(path) for path, _ in found) or "no page"
        raise LookupError(f"a block holding {containing!r} is in {where}; the docs need one")
    return found[0][1]


# --- the pages written from the code ---------------------------------------------------------


def metrics_table() -> str:
    """The table of every metric the registry declares (src/ragscore/metrics/__init__.py), in its order."""
    from ragscore.metrics import ALIASES, METRICS

    aliases: dict[str, list[str]] = {}
    for alias, target in ALIASES.items():
        aliases.setdefault(target, []).append(alias)
    rows = ["| metric | family | kind | better | meaning |", "|---|---|---|---|---|"]
    for spec in METRICS:
        name = f"`{spec.name}`" + "".join(f" (alias `{alias}`)" for alias in aliases.get(spec.name, ()))
        meaning = spec.description.replace("|", "\\|")
        rows.append(f"| {name} | {spec.family} | {spec.kind} | {spec.direction.value} | {meaning} |")
    return "\n".join(rows) + "\n"


def commands() -> list[str]:
    """Every command of ``ragscore --help``, as the command line dispatches them."""
    from ragscore.cli import COMMANDS

    return list(COMMANDS)


def help_text(command: str) -> str:
    """What ``ragscore COMMAND --help`` prints at HELP_COLUMNS columns."""
    from ragscore.cli import main

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            status = main([command, "--help"])
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    if status != 0:
        raise RuntimeError(f"ragscore {command} --help exited {status}")
    return out.getvalue()


def help_block(command: str) -> str:
    """The generated part of docs/commands/COMMAND.md: the command's help in a fenced block."""
    return f"{HELP_BEGIN.format(command=command)}\n```text\n{help_text(command)}```\n{HELP_END}\n"


def generated(text: str, begin: str, end: str) -> str:
    """The part of a page between its two markers, the markers included."""
    start = text.index(begin)
    stop = text.index(end, start) + len(end) + 1
    return text[start:stop]


def rewrite(path: Path, begin: str, end: str, part: str) -> bool:
    """Put ``part`` (markers included) in place of a page's generated part; say whether it changed."""
    text = path.read_text(encoding="utf-8")
    new = text.replace(generated(text, begin, end), part, 1)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def main() -> int:
    """Rewrite every generated part of the pages from the code; print the pages that changed."""
    if sys.version_info[:2] != HELP_PYTHON:
        print(f"tests/docs.py: run me with Python {'.'.join(map(str, HELP_PYTHON))}: the help blocks hold its "
              "argparse layout", file=sys.stderr)
        return 2
    changed = []
    if rewrite(METRICS_PAGE, METRICS_BEGIN, METRICS_END, f"{METRICS_BEGIN}\n{metrics_table()}{METRICS_END}\n"):
        changed.append(METRICS_PAGE)
    for command in commands():
        page = COMMAND_PAGES / f"{command}.md"
        if not page.exists():  # a new command: its page, for its guide to be written below the help
            page.write_text(f"# ragscore {command}\n\n{help_block(command)}", encoding="utf-8")
            changed.append(page)
        elif rewrite(page, HELP_BEGIN.format(command=command), HELP_END, help_block(command)):
            changed.append(page)
    for path in changed:
        print(page_name(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
