"""What the renderers share (reports/common.py) and the report options the commands share (cli/common.py)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from conftest import EXAMPLES, write
from ragscore.cli.compare import compare_parser
from ragscore.cli.score import score_parser
from ragscore.cli.stages import stage_parser
from ragscore.reports.common import code, fmt, gate_finding, gate_rule, gates_verdict, verdict

STAGES = EXAMPLES / "stages"


def _gate(status: str, value: float | int | None = 0.5, warn: float | None = None) -> dict[str, object]:
    return {"op": ">=", "threshold": 0.8, "warn": warn, "value": value, "status": status, "source": "test"}


@pytest.mark.parametrize("statuses, expected", [
    ((), "no gates"),
    (("pass", "pass"), "all 2 gates passed"),
    (("pass", "skipped", "warn", "pass"), "no gate failed (2 passed, 1 warned, 1 skipped)"),
    (("pass", "fail", "warn", "fail"), "2 of 4 gates failed: `m1`, `m3`"),
])
def test_the_verdict_has_one_wording(statuses, expected):
    gates = {f"m{n}": _gate(status) for n, status in enumerate(statuses)}
    assert gates_verdict(gates, code) == expected


def test_numbers_rules_and_findings():
    assert (fmt(None), fmt(3), fmt(0.5), verdict(True), verdict(False)) == ("n/a", "3", "0.5000", "PASS", "FAIL")
    assert gate_rule(_gate("pass")) == ">= 0.8"
    assert gate_rule(_gate("warn", warn=0.95)) == ">= 0.8 (warn >= 0.95)"
    assert gate_finding("precision", _gate("fail", 0.7)) == "precision = 0.7000, expected >= 0.8"
    assert gate_finding("precision", _gate("warn", 0.9, 0.95)) == (
        "precision = 0.9000, expected >= 0.95 to pass without a warning (the gate requires >= 0.8)")
    assert gate_finding("a\x1b", _gate("fail", 1), lambda text: text.replace("\x1b", "?")) == "a? = 1, expected >= 0.8"


def _details(run, *args: object) -> set[str]:
    """Run a command writing Markdown and HTML; return the verdict line of each, markup removed."""
    out = run(*args, "--format", "markdown", "--html", "page.html").out
    markdown = re.search(r"^\*\*(PASS|FAIL)\*\*: (.*)\.$", out, re.M)
    html = re.search(r'id="verdict">(PASS|FAIL)</p>\n<p id="verdict-detail">(.*)\.</p>', Path("page.html").read_text(encoding="utf-8"))
    assert markdown and html
    return {f"{m.group(1)}: {m.group(2).replace('`', '').replace('<code>', '').replace('</code>', '')}"
            for m in (markdown, html)}


@pytest.mark.parametrize("gates, expected", [
    ("precision=0.1", "PASS: all 6 gates passed"),
    ("precision@5=0.9", "FAIL: 1 of 7 gates failed: precision@5"),
    ("em>=0.5,precision@5=0.1", "PASS: no gate failed (7 passed, 1 skipped)"),
])
def test_markdown_and_html_say_the_same_verdict(ragscore, isolated, gates, expected):
    write(isolated / "gates.toml", "[gates]\ncompliance = { min = 0.9, warn = 0.95 }\n")
    assert _details(ragscore, "--gold", EXAMPLES / "gold.jsonl", "--trace", EXAMPLES / "trace.jsonl",
                    "--gates", gates) == {expected}


@pytest.mark.parametrize("gates, expected", [
    ("strict_f1>=0.1,partial_f1>=0.1", "PASS: all 3 gates passed"),
    ("strict_f1>=0.1,partial_f1>=0.999", "FAIL: 1 of 3 gates failed: partial_f1"),
    ("missing=off", "PASS: no gates"),
])
def test_the_stage_reports_say_it_as_the_score_report_does(ragscore, isolated, gates, expected):
    assert _details(ragscore, "ner", "--gold", STAGES / "ner_gold.jsonl", "--pred", STAGES / "ner_pred.jsonl",
                    "--gates", gates) == {expected}


def test_a_warned_stage_gate_is_counted_as_the_score_report_counts_it(ragscore, isolated):
    details = _details(ragscore, "ner", "--gold", STAGES / "ner_gold.jsonl", "--pred", STAGES / "ner_pred.jsonl",
                       "--gates-file", STAGES / "gates.toml")
    assert details == {"PASS: no gate failed (2 passed, 1 warned)"}


def _report_options(parser: argparse.ArgumentParser) -> dict[str, tuple[object, object, str | None]]:
    return {action.option_strings[-1]: (action.choices, action.default, action.help) for action in parser._actions
            if set(action.option_strings) & {"--format", "--json", "--markdown", "--html", "--junit", "--quiet"}}


def test_the_commands_share_their_report_options():
    score, stage, compare = score_parser("ragscore"), stage_parser("ner", "ragscore ner"), compare_parser("ragscore compare")
    options = [_report_options(parser) for parser in (score, stage, compare)]
    assert [list(o) for o in options] == [["--format", "--json", "--markdown", "--html", "--junit", "--quiet"]] * 2 + [
        ["--format", "--json", "--markdown", "--html", "--quiet"]]  # compare's --html: the table of several runs
    assert options[0]["--format"][0] == ("json", "markdown", "text", "pr-comment", "none")  # a pull request's
    assert options[1]["--format"][0] == ("json", "markdown", "text", "none")
    assert options[2]["--format"][0] == ("json", "markdown", "pr-comment", "none")
    assert {o["--format"][1] for o in options} == {"json"}
    assert options[0]["--json"] == options[1]["--json"] and options[0]["--markdown"] == options[1]["--markdown"]
    assert "comparison" in str(options[2]["--json"][2]) and "--per-question" in str(options[0]["--junit"][2])


def test_the_pull_request_options_are_the_same_wherever_they_are():
    from ragscore.cli import COMMANDS

    def options(command: str) -> dict[str, tuple[object, str]]:
        parser = COMMANDS[command][0](f"ragscore {command}")
        return {a.option_strings[-1]: (a.metavar, a.dest) for a in parser._actions
                if set(a.option_strings) & {"--pr-comment", "--comment-key", "--badge", "--badge-metric"}}

    having = {command: options(command) for command in COMMANDS if options(command)}
    assert sorted(having) == ["compare", "merge", "monitor", "run", "score"]
    assert len({tuple(sorted(o.items())) for o in having.values()}) == 1


def test_a_change_is_marked_better_or_worse_and_last_bits_are_no_change():
    from ragscore.metrics.registry import Direction
    from ragscore.reports.common import change_mark

    assert change_mark(0.25, Direction.HIGHER) == "▲ better"
    assert change_mark(-0.25, Direction.HIGHER) == "▼ worse"
    assert change_mark(0.25, Direction.LOWER) == "▲ worse"
    assert change_mark(-0.25, Direction.LOWER) == "▼ better"
    assert change_mark(2, None) == "▲"
    # 0.3 as a mean of two values against one of three differs in the last bits: no change shown
    assert change_mark(1e-15, Direction.HIGHER) == change_mark(-1e-15, Direction.LOWER) == "="
    assert change_mark(1e-9, Direction.HIGHER) == "▲ better"
    assert change_mark(0.0, Direction.HIGHER) == "="
    assert change_mark(None, Direction.HIGHER) == ""
