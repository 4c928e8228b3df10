"""The docs are true: their examples print what the commands print, their generated parts are what
the code writes, and their links lead somewhere.

- Every ``console`` block of README.md and docs/ is run in-process from the repository root: its
  ``$ ragscore ...`` commands, ``$ cd DIR`` and ``$ echo $?``. The output shown is standard error,
  then standard output; a line ``...`` stands for any number of lines left out.
- The metrics table of docs/metrics.md is the metric registry's, and each page of docs/commands/
  opens with its command's ``--help`` (``python -m tests.docs`` rewrites both).
- Every relative link, and every ``#anchor``, leads to a file and a heading that exist.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from docs import (
    COMMAND_PAGES,
    DOCS,
    HELP_BEGIN,
    HELP_END,
    HELP_PYTHON,
    METRICS_BEGIN,
    METRICS_END,
    METRICS_PAGE,
    ROOT,
    commands,
    doc_files,
    doc_section,
    fenced_blocks,
    generated,
    headings,
    help_block,
    lines_outside_fences,
    metrics_table,
    page_name,
)

# --- console blocks ------------------------------------------------------------------------------

CONSOLE_BLOCKS = [pytest.param(path, content, id=f"{page_name(path)}:{line}")
                  for path in doc_files() for line, info, content in fenced_blocks(path) if info == "console"]


def session(content: str) -> list[tuple[str, list[str]]]:
    """A console block's commands (continued lines joined) and the lines shown after each."""
    steps: list[tuple[str, list[str]]] = []
    lines = content.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        assert line.startswith("$ "), f"output before any command: {line!r}"
        command = line[2:]
        while command.endswith("\\"):
            i += 1
            command = command[:-1].rstrip() + " " + lines[i].strip()
        i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        steps.append((command, shown))
    return steps


def shown_pattern(shown: list[str]) -> re.Pattern[str]:
    """The output a block shows as a pattern: each line as is, a line ``...`` any lines (or none)."""
    parts = ["(?:[^\n]*\n)*?" if line == "..." else re.escape(line + "\n") for line in shown]
    return re.compile("".join(parts))


def test_a_shortened_output_is_marked_and_matched():
    assert shown_pattern(["a", "...", "d"]).fullmatch("a\nb\nc\nd\n")
    assert shown_pattern(["a", "...", "d"]).fullmatch("a\nd\n")
    assert not shown_pattern(["a", "d"]).fullmatch("a\nb\nd\n")
    assert shown_pattern(["...", "c"]).fullmatch("a\nb\nc\n") and not shown_pattern(["...", "c"]).fullmatch("c\nd\n")
    assert session("$ ragscore a \\\n    b\nout\n$ echo $?\n1\n") == [("ragscore a b", ["out"]), ("echo $?", ["1"])]


@pytest.mark.parametrize(("path", "content"), CONSOLE_BLOCKS)
def test_every_console_block_shows_what_its_commands_print(ragscore, monkeypatch, path, content):
    monkeypatch.chdir(ROOT)
    for name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "NO_COLOR"):  # annotations and colour are not shown
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    steps = session(content)
    assert any(command.startswith("ragscore ") for command, _ in steps), "a console block shows a ragscore command"
    status = None
    for command, shown in steps:
        if command == "echo $?":
            assert shown == [str(status)], f"{command} after the command before"
            continue
        args = shlex.split(command)
        if args[0] == "cd" and len(args) == 2:
            monkeypatch.chdir(Path.cwd() / args[1])
            assert shown == []
            continue
        assert args[0] == "ragscore", f"a console block runs ragscore, cd and echo $? only (use sh for {command!r})"
        run = ragscore(*args[1:])
        status = run.status
        printed = run.err + run.out
        assert shown_pattern(shown).fullmatch(printed), f"$ {command}\nprints:\n{printed}"


# --- pages written from the code -----------------------------------------------------------------


def test_the_metrics_table_is_the_registry():
    page = METRICS_PAGE.read_text(encoding="utf-8")
    assert generated(page, METRICS_BEGIN, METRICS_END) == f"{METRICS_BEGIN}\n{metrics_table()}{METRICS_END}\n", (
        "docs/metrics.md's table differs from the registry: run python -m tests.docs")


def test_the_metrics_table_names_every_metric_once():
    from ragscore.metrics import METRICS

    rows = metrics_table().splitlines()[2:]
    assert [row.split("`")[1] for row in rows] == [spec.name for spec in METRICS]


def test_every_command_has_a_page_that_opens_with_its_help():
    pages = sorted(path.stem for path in COMMAND_PAGES.glob("*.md"))
    assert pages == sorted(commands()), "a page per command of ragscore --help, and no other (python -m tests.docs)"
    for command in commands():
        page = (COMMAND_PAGES / f"{command}.md").read_text(encoding="utf-8")
        assert page.startswith(f"# ragscore {command}"), command
        first_block = next(fenced_blocks(COMMAND_PAGES / f"{command}.md"))
        assert first_block[1] == "text" and first_block[2].startswith(f"usage: ragscore {command} "), command
        assert HELP_BEGIN.format(command=command) in page and HELP_END in page, command


@pytest.mark.skipif(sys.version_info[:2] != HELP_PYTHON,
                    reason=f"the help blocks hold argparse's layout on Python {HELP_PYTHON[0]}.{HELP_PYTHON[1]}")
@pytest.mark.parametrize("command", commands())
def test_each_command_page_holds_its_help(command):
    page = (COMMAND_PAGES / f"{command}.md").read_text(encoding="utf-8")
    assert generated(page, HELP_BEGIN.format(command=command), HELP_END) == help_block(command), (
        f"docs/commands/{command}.md's help differs from ragscore {command} --help: run python -m tests.docs")


# --- links ---------------------------------------------------------------------------------------

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a page's headings (a repeated one gets -1, -2, ... as on GitHub)."""
    seen: dict[str, int] = {}
    found = set()
    for _, _, title in headings(path.read_text(encoding="utf-8")):
        base = slug(title)
        found.add(base if base not in seen else f"{base}-{seen[base]}")
        seen[base] = seen.get(base, 0) + 1
    return found


def links(path: Path) -> list[str]:
    """The targets of a page's links and images, code spans and fenced blocks left out."""
    prose = "\n".join(line for _, line, kind in lines_outside_fences(path.read_text(encoding="utf-8"))
                      if kind == "prose")
    return LINK.findall(re.sub(r"`[^`]*`", "", prose))


def test_slugs_are_githubs():
    assert slug("Repeated samples: pass@k, pass^k and consistency") == "repeated-samples-passk-passk-and-consistency"
    assert slug("Your traces: formats and mapping") == "your-traces-formats-and-mapping"
    assert slug("`ragscore trec`") == "ragscore-trec"


@pytest.mark.parametrize("path", doc_files(), ids=page_name)
def test_every_link_leads_to_a_file_and_a_heading(path):
    for target in links(path):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        where = (path.parent / file).resolve() if file else path
        assert where.exists(), f"{page_name(path)} links to {target}, which does not exist"
        assert where.is_relative_to(ROOT), f"{page_name(path)} links out of the repository: {target}"
        if anchor:
            assert where.suffix == ".md" and anchor in anchors(where), f"{page_name(path)}: no heading for {target}"


# --- the README ----------------------------------------------------------------------------------


def test_the_readme_is_short_and_links_every_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in links(ROOT / "README.md")}
    for page in sorted(DOCS.rglob("*.md")):
        assert page.resolve() in linked, f"the README links no {page_name(page)}"


def test_the_readme_gives_the_two_commands():
    block = doc_section("Two commands").split("```sh\n", 1)[1].split("```", 1)[0]
    commands_ = [line for line in block.splitlines() if line and not line.startswith("#")]
    assert commands_ == ["pip install -e . && ragscore --gold examples/gold.jsonl --trace examples/trace.jsonl",
                         "pip install -e '.[test]' && pytest"]
    assert "pip install -e '.[test]'" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_readme_example_quotes_the_example_files():
    block = doc_section("An example").split("```json\n", 1)[1].split("```", 1)[0]
    lines = {line for name in ("gold.jsonl", "trace.jsonl")
             for line in (ROOT / "examples" / "product" / name).read_text(encoding="utf-8").splitlines()}
    assert block.splitlines() and all(line in lines for line in block.splitlines())
