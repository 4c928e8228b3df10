"""The judge command: LLM-judge scores, recorded in a committed ledger and replayed from it in CI."""

from __future__ import annotations

import argparse
import sys

from ragscore.cli.common import (
    INPUT_PATH,
    OUTPUT,
    Exit,
    Parser,
    PathArg,
    Streams,
    add_corpus_option,
    add_quiet_option,
    add_trace_options,
    positive_int,
    standard_output,
)
from ragscore.errors import UsageError
from ragscore.input_config import map_options
from ragscore.loaders.shards import expand

LEDGER_PATH = PathArg(OUTPUT, "the ledger is never an input or the scores file")
SCORES_PATH = PathArg(OUTPUT, "the scores file never overwrites an input or the ledger")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"expected seconds from 0 to 3600, got {text!r}")
    return value


def _retries(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 <= value <= 20:
        raise argparse.ArgumentTypeError(f"expected 0 to 20 retries, got {text!r}")
    return value


def judge_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(
        prog=prog,
        description="Score each traced question with an LLM judge on the rubric's criteria, through an OpenAI-"
        "compatible chat completions endpoint, keeping every judgment in an append-only ledger; replayed (--replay, "
        "or in CI: CI or GITHUB_ACTIONS set) every score comes from the ledger and no connection is opened. Writes "
        "a --scores file (qid and one column per criterion) that score takes. The key comes from "
        "RAGSCORE_JUDGE_API_KEY, else OPENAI_API_KEY.",
    )
    parser.add_argument("--gold", type=INPUT_PATH, metavar="PATH", help="the gold set (for each question's text "
                        "and reference answer); without it, every qid of the traces is judged (production traces, "
                        "for monitor --scores)")
    parser.add_argument("--trace", action="append", type=INPUT_PATH, metavar="PATH",
                        help="the traces to judge (repeatable, a quoted glob or a folder: read as one)")
    parser.add_argument("--rubric", type=INPUT_PATH, metavar="PATH",
                        help="the rubric (TOML): [judge] sampling parameters and [criteria.NAME] tables of template, "
                             "scale and json_field")
    parser.add_argument("--ledger", type=LEDGER_PATH, metavar="PATH",
                        help="the judgments, JSON Lines appended as each comes back (made when missing; commit it)")
    parser.add_argument("--endpoint", metavar="URL", help="the OpenAI-compatible API's base URL (default: the "
                        "rubric's endpoint, else https://api.openai.com/v1)")
    parser.add_argument("--model", metavar="NAME", help="the judge's model (default: the rubric's model)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--record", action="store_const", const="record", dest="mode",
                      help="ask the endpoint for every judgment the ledger lacks, in CI too")
    mode.add_argument("--replay", action="store_const", const="replay", dest="mode",
                      help="take every score from the ledger and open no connection (the default in CI)")
    mode.add_argument("--compact", action="store_true",
                      help="rewrite the ledger in canonical bytes (the last judgment of each key, in key order) "
                           "and stop")
    parser.add_argument("-o", "--output", type=SCORES_PATH, metavar="PATH",
                        help="write the scores to PATH (default: standard output)")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a score is missing (unjudged or failed)")
    parser.add_argument("-j", "--jobs", type=positive_int, metavar="N", help="calls at once (default 4)")
    parser.add_argument("--timeout", type=_seconds, metavar="SECONDS", help="of each call (default 60)")
    parser.add_argument("--retries", type=_retries, metavar="N",
                        help="tries again after a 429, a 5xx or a timeout (default 4; Retry-After is honoured)")
    add_corpus_option(parser)
    add_trace_options(parser, "how the traces are written",
                      "read a trace concept from another path of each record (repeatable; see score --help)")
    add_quiet_option(parser)
    return parser


def run_judge(args: argparse.Namespace, streams: Streams) -> Exit:
    """Judge (or replay), write the scores, print the counts."""
    from ragscore.judging.api import compact, judge

    if not args.ledger:
        raise UsageError("judge: give --ledger (the judgments' file: made when missing)")
    if args.compact:
        given = [name for name in ("gold", "trace", "rubric", "output", "endpoint", "model") if getattr(args, name)]
        if given:
            raise UsageError("judge --compact takes --ledger alone, not --" + ", --".join(given))
        before, after = compact(args.ledger)
        if not args.quiet:
            streams.note(f"{args.ledger}: {before:,} records compacted to {after:,}, one per judgment, in key order")
        return Exit.OK
    missing = [name for name in ("trace", "rubric") if not getattr(args, name)]
    if missing:
        raise UsageError("judge: give --" + ", --".join(missing))
    if [args.gold, *args.trace].count("-") > 1:
        raise UsageError("only one input can be '-' (standard input)")
    settings = {"trace_format": args.trace_format, "fields": dict(map_options(args.map)) or None, "corpus": args.corpus}
    terminal = not args.quiet and sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        streams.err.write(f"\rragscore: judged {done:,} of {total:,}")
        streams.err.flush()

    try:
        judged = judge(args.gold, expand(args.trace), rubric=args.rubric, ledger=args.ledger, endpoint=args.endpoint,
                       model=args.model, mode=args.mode, jobs=args.jobs or 4,
                       timeout=args.timeout if args.timeout is not None else 60.0,
                       retries=args.retries if args.retries is not None else 4, strict=args.strict,
                       progress=progress if terminal else None,
                       **{k: v for k, v in settings.items() if v is not None})
    finally:
        if terminal:
            streams.err.write("\r\x1b[K")
    if args.output and args.output != "-":
        from ragscore.reports.files import write_reports

        write_reports({args.output: judged.lines()})
    else:
        with standard_output(streams) as out:
            out.writelines(judged.lines())
    if not args.quiet:
        for line in judged.notes():
            streams.note(line)
    return Exit.OK if judged.passed else Exit.GATE_FAILED
