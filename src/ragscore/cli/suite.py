"""The run and dashboard commands: every task of a suite from one file, a history, its dashboard."""

from __future__ import annotations

import argparse
import os

from ragscore.cli.common import (
    INPUT_PATH,
    OUTPUT,
    REPORT_RULE,
    Exit,
    Parser,
    PathArg,
    Streams,
    add_pull_request_options,
    add_quiet_option,
    add_report_options,
    report_and_exit,
    standard_output,
    with_pull_request,
    write_requested_reports,
)
from ragscore.errors import UsageError
from ragscore.quoting import quote
from ragscore.suite.config import Suite
from ragscore.version import __version__

RUN_EPILOG = """\
examples:
  ragscore run                                   ./ragscore.toml (or [tool.ragscore.suite] in ./pyproject.toml)
  ragscore run examples/suite/ragscore.toml --html suite.html --junit suite.xml
  ragscore run --history history.jsonl --label v1.4 --time 2026-11-24T09:00:00Z
  ragscore run --task qa --task ner              only these tasks

A suite names its tasks, each a command (score, compare, trec, ner, classify, link) with the
options that command takes, as TOML keys ([tasks.qa] command = "score", gold = ..., trace = ...).
Every task runs, from the suite file's folder, even when another fails.

exit status: 0 every task passed, 1 a task failed a gate, 2 a task could not run (its input or
options were bad; after the others ran) or the suite file is wrong, 3 internal error.
"""


# run's --history: appended to, never over what the suite reads or a report.
HISTORY_PATH = PathArg(OUTPUT, "a history never overwrites an input or a report")


def run_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="Run every task of a suite (score, compare, trec, ner, classify, link) "
                                           "and report them together; append the run to a history.",
                    epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ragscore {__version__}")
    parser.add_argument("suite", nargs="?", type=INPUT_PATH, metavar="SUITE",
                        help="the suite file (default: ./ragscore.toml, else [tool.ragscore.suite] of "
                             "./pyproject.toml); a pyproject.toml is read at [tool.ragscore.suite]")
    parser.add_argument("--task", action="append", default=[], metavar="NAME",
                        help="run only this task (repeatable)")
    reports = parser.add_argument_group("reports")
    add_report_options(reports, ("text", "json", "markdown", "pr-comment", "none"),
                       files=("json", "markdown", "html", "junit"),
                       format_help="what standard output shows (default: text, the summary table)", helps={
                           "json": "also write one JSON report to PATH: every task's report under its name",
                           "markdown": "also write the Markdown report to PATH: a section per task",
                           "html": "also write one self-contained HTML page to PATH: a section per task",
                           "junit": "also write JUnit XML to PATH: a test suite per task"})
    parser.set_defaults(format="text")
    add_pull_request_options(reports, "the suite's name, else its file's", "a task's metric's (TASK:METRIC)")
    add_quiet_option(reports, "print no notes on standard error (a task's error still is)")
    history = parser.add_argument_group("history")
    history.add_argument("--history", type=HISTORY_PATH, metavar="PATH",
                         help="append this run to a history (JSON Lines; created if missing) for ragscore dashboard")
    history.add_argument("--label", metavar="TEXT",
                         help="the version label of the run (default: GITHUB_SHA, else `git describe` of the suite's "
                              "folder)")
    history.add_argument("--time", metavar="TIME",
                         help="the time of the run: ISO 8601 with an offset, or seconds since 1970 (default: "
                              "SOURCE_DATE_EPOCH, else none; never the clock)")
    parser.add_argument("--no-fail", action="store_true", help="exit 0 even when a task fails a gate (not when one "
                                                               "cannot run)")
    return parser


def run_run(args: argparse.Namespace, streams: Streams) -> Exit:
    """Run the suite, write its reports and its history line, print the summary."""
    from pathlib import Path

    from ragscore.suite import history
    from ragscore.suite.config import load_suite
    from ragscore.suite.run import run_tasks

    suite = load_suite(args.suite)  # read and checked once, before anything runs or is written
    if args.history is not None and args.task:
        raise UsageError("--task runs part of a suite, and a history records whole runs: give --task or --history")
    history_notes = _check_outputs(args, suite)
    label, when = "", None
    if args.history is not None:
        label = history.version_label(args.label, suite.folder if str(suite.folder) else Path("."))
        when = history.run_time(args.time)
    elif args.label is not None or args.time is not None:
        raise UsageError("--label and --time name the run in a history: give --history PATH too")
    run = run_tasks(suite, args.task)
    render = with_pull_request(args, run, run.render)
    write_requested_reports(args, render)
    if args.history is not None:
        history.append(args.history, history.entry(run, label, when))
    if os.environ.get("GITHUB_ACTIONS") == "true":  # annotations on the run, the summary table on its page
        from ragscore.reports.github import append_step_summary
        from ragscore.suite.report import annotation_lines, render_suite_summary

        for line in annotation_lines(run):
            streams.write_err(line)
        if os.environ.get("GITHUB_STEP_SUMMARY"):
            append_step_summary(render_suite_summary(run), os.environ["GITHUB_STEP_SUMMARY"])
    for line in [*history_notes, *run.notes()]:
        if not args.quiet or ": error: " in line:
            streams.note(line)
    with standard_output(streams) as out:
        if args.format != "none":
            out.writelines(render(args.format))
    if run.errored:
        return Exit.USAGE_ERROR
    return Exit.OK if run.passed or args.no_fail else Exit.GATE_FAILED


def _check_outputs(args: argparse.Namespace, suite: Suite) -> list[str]:
    """Before any task runs: refuse a report or a history that is a file the suite's tasks read
    (the command line checked its own paths; these are known once the suite is read), compared by
    device and inode as every command compares them; and a history that is not one."""
    from ragscore.cli.common import _files_named
    from ragscore.reports.files import first_overwrite

    inputs = [(name, file) for name, path in suite.inputs() for file in _files_named(str(path))]
    outputs = [(f"--{option.replace('_', '-')}", getattr(args, option))
               for option in ("json", "markdown", "html", "junit", "pr_comment", "badge", "history")
               if getattr(args, option) not in (None, "-")]
    clash = first_overwrite(inputs, outputs)
    if clash is not None:
        option, path, other = clash
        rule = HISTORY_PATH.rule if option == "--history" else REPORT_RULE
        raise UsageError(f"{option} {quote(path)}: is {other}; {rule}")
    if args.history is None:
        return []
    from ragscore.suite.history import check_appendable

    return [f"--history {line}" for line in check_appendable(args.history)]


def dashboard_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="Show a suite's history (ragscore run --history) over its versions: a "
                                           "trend chart per task and key metric, and the latest run's breakdown.",
                    epilog="example:\n  ragscore dashboard examples/suite/history.jsonl --html dashboard.html\n",
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"ragscore {__version__}")
    parser.add_argument("history", type=INPUT_PATH, metavar="HISTORY",
                        help="the history file (JSON Lines) ragscore run --history wrote")
    add_report_options(parser, ("markdown", "json", "none"), files=("json", "markdown", "html"),
                       format_help="what standard output shows (default: markdown)",
                       helps={"html": "also write the dashboard as one self-contained HTML page to PATH"})
    parser.set_defaults(format="markdown")
    add_quiet_option(parser)
    parser.set_defaults(no_fail=False)
    return parser


def run_dashboard(args: argparse.Namespace, streams: Streams) -> Exit:
    """Read the history and write the dashboard."""
    from ragscore.suite.dashboard import dashboard

    return report_and_exit(args, streams, dashboard(args.history))
