"""The small commands: validate, init, schema."""

from __future__ import annotations

import argparse

from ragscore.cli.common import (
    INPUT_PATH,
    OUTPUT,
    REPORT_PATH,
    Exit,
    Parser,
    PathArg,
    Streams,
    add_trace_options,
    one_line,
    standard_output,
)
from ragscore.config import Overrides, load_config
from ragscore.errors import UsageError
from ragscore.input_config import map_options
from ragscore.loaders.shards import expand, input_notes

# init's file: created, never replaced (the check still refuses it when it is the job summary).
INIT_PATH = PathArg(OUTPUT, "ragscore init never overwrites a file")


def validate_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(
        prog=prog,
        description="Check a gold set (and traces) against the data contracts without scoring: every problem, "
        "not just the first. Errors exit 2 (a key that is a near miss of a contract field, such as "
        '"gold_citation", is one; so is a trace file none of whose traces joins a gold question); '
        "warnings flag data that can never score well.",
    )
    parser.add_argument("--gold", required=True, type=INPUT_PATH, metavar="PATH",
                        help="gold set to check ('-' for standard input)")
    parser.add_argument("--trace", action="append", type=INPUT_PATH, metavar="PATH",
                        help="traces to check against it (repeatable, a quoted glob or a folder: read as one)")
    parser.add_argument("--gates-file", type=INPUT_PATH, metavar="PATH",
                        help="read [scoring] (the refusal tokens) from PATH instead of ./gates.toml")
    add_trace_options(parser, "how the traces are written",
                      "read a trace concept from another path of each record (repeatable; see score --help)")
    parser.add_argument("--lenient", action="store_true",
                        help='a key one edit or a plural away from a contract field ("gold_citation") is a warning, '
                             'not an error')
    parser.add_argument("--sarif", type=REPORT_PATH, metavar="PATH",
                        help="also write every problem as SARIF 2.1.0 to PATH (GitHub code scanning), at its file, "
                             "line and column")
    parser.add_argument("-q", "--quiet", action="store_true", help="print errors only, no warnings or summary")
    return parser


def run_validate(args: argparse.Namespace, streams: Streams) -> Exit:
    """List every problem of the inputs; exit 2 when any is an error."""
    from ragscore.validate import ERROR, validate

    if args.gold == "-" and "-" in (args.trace or ()):
        raise UsageError("only one of --gold and --trace can be '-' (standard input)")
    traces = expand(args.trace) if args.trace else None
    overrides = Overrides(trace_format=args.trace_format, trace_fields=map_options(args.map))
    settings = load_config(overrides, args.gates_file).settings
    problems = validate(args.gold, traces, settings, lenient=args.lenient)
    if args.sarif:
        from ragscore.reports.files import write_reports
        from ragscore.reports.sarif import validate_sarif

        write_reports({args.sarif: validate_sarif(problems)})
    errors = sum(p.severity == ERROR for p in problems)
    with standard_output(streams) as out:
        for problem in problems:
            if problem.severity == ERROR or not args.quiet:
                out.write(one_line(str(problem)) + "\n")
    if not args.quiet:
        for line in input_notes(traces):  # what a folder or glob of traces left out
            streams.note(line)
        warnings = len(problems) - errors
        streams.note(f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}")
    return Exit.USAGE_ERROR if errors else Exit.OK


def init_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="Write a commented starter gates.toml (never over an existing file).")
    parser.add_argument("path", nargs="?", default="gates.toml", type=INIT_PATH, metavar="PATH",
                        help="where to write it (default: ./gates.toml; '-': standard output)")
    return parser


def run_init(args: argparse.Namespace, streams: Streams) -> Exit:
    """Write the starter gates file and say what to run next."""
    from ragscore.starter import STARTER_GATES

    if args.path == "-":  # as every other path option reads it: standard output
        with standard_output(streams) as out:
            out.write(STARTER_GATES)
        return Exit.OK
    try:
        with open(args.path, "x", encoding="utf-8") as out:
            out.write(STARTER_GATES)
    except FileExistsError:
        raise UsageError(f"{args.path}: already exists; ragscore init never overwrites a file") from None
    except OSError as exc:
        raise UsageError(f"{args.path}: cannot write: {exc.strerror}") from None
    streams.note(f"wrote {args.path}; next: ragscore --gold gold.jsonl --trace trace.jsonl --format text")
    return Exit.OK


def schema_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="Print the JSON Schema of a JSON report.")
    parser.add_argument("report", nargs="?", choices=("score", "stage", "trec", "monitor"), default="score",
                        help="score: the score command's report (default); stage: the report of ner, classify and "
                             "link; trec: the report of ragscore trec --format json; monitor: ragscore monitor's")
    return parser


def run_schema(args: argparse.Namespace, streams: Streams) -> Exit:
    """Print a JSON report's schema, as shipped in the package."""
    if args.report in ("stage", "trec"):
        from importlib.resources import files

        from ragscore.stages.document import SCHEMA_FILE as STAGE_SCHEMA
        from ragscore.trec.document import SCHEMA_FILE as TREC_SCHEMA

        package, name = ("ragscore.stages", STAGE_SCHEMA) if args.report == "stage" else ("ragscore.trec", TREC_SCHEMA)
        text = files(package).joinpath(name).read_text(encoding="utf-8")
    else:
        from ragscore.schema import MONITOR_SCHEMA_FILE, SCHEMA_FILE, schema_text

        text = schema_text(MONITOR_SCHEMA_FILE if args.report == "monitor" else SCHEMA_FILE)
    with standard_output(streams) as out:
        out.write(text)
    return Exit.OK
