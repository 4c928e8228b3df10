"""The partial and merge commands: a run scored part by part (on several machines), then merged."""

from __future__ import annotations

import argparse
import re
from dataclasses import replace

from ragscore.cli.common import (
    INPUT_PATH,
    REPORT_PATH,
    Exit,
    Parser,
    Streams,
    add_html_rows_option,
    add_pull_request_options,
    add_quiet_option,
    add_report_options,
    lists_questions,
    standard_output,
)
from ragscore.cli.score import (
    FORMAT_HELP,
    REPORT_HELP,
    add_by_option,
    add_scoring_inputs,
    add_setting_options,
    overrides_of,
    report_run,
)
from ragscore.config import load_config, scored_with
from ragscore.errors import UsageError
from ragscore.loaders.shards import expand, input_notes
from ragscore.quoting import quote

PARTIAL_EPILOG = """\
examples:
  ragscore partial --gold gold.jsonl --trace 'logs/*.jsonl.gz' --part 3/8 -o part-3.json
  ragscore partial --gold gold.jsonl --trace 'logs/*.jsonl.gz' --part 3/8 -o part-3.json --rows
  ragscore merge part-*.json --markdown report.md     (a Markdown report needs the partials' --rows)

Part I of N scores the questions whose ragscore.owner(qid, N) is I - 1 (the CRC-32 of the qid,
modulo N): each part reads the files whole and skips the other parts' trace lines.
"""

MERGE_EPILOG = """\
examples:
  ragscore merge part-1.json part-2.json part-3.json
  ragscore merge parts/*.json --format text --gates "precision=0.8"

The merged report is the one ragscore score gives in one process on the same inputs, byte for byte
(but for latency quantiles, which partials carry as a sketch within 1%, and say so).
"""


def _part(text: str) -> tuple[int, int]:
    """Read --part I/N (1 <= I <= N)."""
    from ragscore.partial_schema import MAX_PARTS  # owner() never gives a question a part past it

    match = re.fullmatch(r"\s*([0-9]{1,20})\s*/\s*([0-9]{1,20})\s*", text)
    if match is None or not 1 <= int(match[1]) <= int(match[2]):
        raise argparse.ArgumentTypeError(f"expected I/N with 1 <= I <= N (part I of N), got {quote(text)}")
    if int(match[2]) > MAX_PARTS:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_PARTS:,} parts, got {quote(text)}")
    return int(match[1]) - 1, int(match[2])


def partial_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="Score one part of a run (the questions ragscore.owner gives it) and write "
                                           "a partial result, to merge with the other parts' by ragscore merge.",
                    epilog=PARTIAL_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    inputs = parser.add_argument_group("inputs")
    add_scoring_inputs(inputs)
    part = parser.add_argument_group("the part")
    part.add_argument("--part", required=True, type=_part, metavar="I/N",
                      help="part I of N (1 <= I <= N): the questions whose ragscore.owner(qid, N) is I - 1")
    part.add_argument("-o", "--output", required=True, type=REPORT_PATH, metavar="PATH",
                      help="where to write the partial (JSON; '-' for standard output)")
    part.add_argument("--per-question", action="store_true",
                      help="keep each question's row, for a merged report with --per-question")
    part.add_argument("--rows", action="store_true",
                      help="keep each question's row, for a merged Markdown or HTML report (which lists them)")
    add_by_option(part)
    add_quiet_option(part)
    add_setting_options(parser.add_argument_group("gates and settings (as for score; the merge must agree)"),
                        no_fail=False)
    return parser


def run_partial(args: argparse.Namespace, streams: Streams) -> Exit:
    """Score one part and write its partial result (atomically: all of it, or nothing)."""
    from ragscore.api import partial
    from ragscore.reports.files import write_reports

    if [args.gold, *args.trace, args.scores].count("-") > 1:
        raise UsageError("only one of --gold, --trace and --scores can be '-' (standard input)")
    overrides = overrides_of(args)
    config = load_config(overrides, args.gates_file).with_origin(args.gates_file, None, overrides)
    traces = expand(args.trace)
    result = partial(args.gold, traces, args.part, config=config, scores=args.scores,
                     per_question=args.per_question, by=args.by or (), keep_rows=args.rows)
    text = result.to_json()
    if args.output == "-":
        with standard_output(streams) as out:
            out.write(text)
    else:
        write_reports({args.output: [text]})
    if not args.quiet:
        for line in input_notes(traces):  # what a folder or glob of traces left out
            streams.note(line)
        index, parts = args.part
        questions, lines = result.result.questions, result.result.accounting.lines
        streams.note(f"part {index + 1}/{parts}: {questions:,} question{'s' * (questions != 1)}, "
                     f"{lines:,} trace line{'s' * (lines != 1)}")
    return Exit.OK


def merge_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="Merge the partial results of every part of a run (ragscore partial), "
                                           "check the gates and write the reports, as ragscore score does.",
                    epilog=MERGE_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("partials", nargs="+", type=INPUT_PATH, metavar="PARTIAL",
                        help="the partial results, one per part (any order)")
    parser.add_argument("--scores", type=INPUT_PATH, metavar="PATH",
                        help="the --scores file the partials were made with (read again: it must be the same)")
    out = parser.add_argument_group("reports")
    add_report_options(out, ("json", "markdown", "text", "pr-comment", "none"), format_help=FORMAT_HELP,
                       helps=REPORT_HELP)
    add_pull_request_options(out)
    add_html_rows_option(out)
    out.add_argument("--per-question", action="store_true",
                     help="add a 'questions' list to the JSON report (the partials must keep rows)")
    out.add_argument("--only-failures", action="store_true",
                     help="list only questions not labelled OK or REFUSAL_OK (implies --per-question)")
    add_quiet_option(out)
    add_setting_options(parser.add_argument_group("gates (the settings are the partials')"), scoring=False)
    return parser


def run_merge(args: argparse.Namespace, streams: Streams) -> Exit:
    """Merge the partials, gate and report; exit as score does."""
    from ragscore.api import finalize
    from ragscore.loaders.jsonl import InputFile
    from ragscore.partials import Partial, merge_partials
    from ragscore.rows import SpillFolder

    partials = []
    # The rows of a report that lists the questions wait on disk, so that one partial is held at a
    # time; rows no report lists are not read at all (unless slices need them).
    listed = lists_questions(args)
    spill = SpillFolder() if listed else None
    for path in args.partials:
        text = InputFile(path).read_document("a partial")
        partials.append(Partial.from_json(text, path, spill, rows=listed))
        del text
    merged = merge_partials(partials, args.partials)
    if (args.markdown or args.html or args.format == "markdown") and not merged.wants.rows:
        raise UsageError("merge: a Markdown or HTML report lists the questions, and the partials keep no rows: make "
                         "them with --rows (or --per-question)")
    # The gates are read as score reads them, over the settings the partials were scored with.
    s = merged.settings
    overrides = replace(scored_with(s), strict=s.strict if args.strict is None else args.strict, gates=args.gates)
    config = load_config(overrides, args.gates_file).with_origin(args.gates_file, None, overrides)
    run = finalize(merged, config=config, scores=args.scores, per_question=args.per_question,
                   only_failures=args.only_failures)
    return report_run(args, streams, run)  # as score reports, in score's order
