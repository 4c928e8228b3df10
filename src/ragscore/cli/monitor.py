"""The monitor command: production traces without gold, per time window, with gates and drift."""

from __future__ import annotations

import argparse

from ragscore.cli.common import (
    INPUT_PATH,
    Exit,
    Parser,
    Streams,
    add_corpus_option,
    add_pull_request_options,
    add_quiet_option,
    add_report_options,
    add_trace_options,
    confidence_level,
    positive_int,
    report_and_exit,
)
from ragscore.cli.score import check_refusal_patterns
from ragscore.config import Overrides, load_config, parse_families
from ragscore.errors import UsageError
from ragscore.input_config import map_options
from ragscore.loaders.shards import expand
from ragscore.monitoring.api import monitor


def monitor_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(
        prog=prog,
        description="Watch production traces without gold: refusal rate, compliance, fabricated citations, empty "
        "retrieval, citations per answer, answer length, latency, tokens and cost, per time window and for the "
        "whole period; gates on each ([monitor.gates], --gates); with --baseline, each rate's drift from an "
        "earlier period (two-proportion z-tests, Holm-corrected; [monitor.drift] bounds fail).",
    )
    parser.add_argument("--trace", required=True, action="append", type=INPUT_PATH, metavar="PATH",
                        help="the traces to watch (repeatable, a quoted glob or a folder: read as one)")
    parser.add_argument("--baseline", action="append", type=INPUT_PATH, metavar="PATH",
                        help="traces of an earlier period to compare each rate with (repeatable)")
    parser.add_argument("--window", metavar="WIDTH",
                        help="the window width: a count and a unit of s, m, h, d or w (default 1h; windows start "
                             "at multiples of it since 1970 in UTC)")
    parser.add_argument("--min-n", type=positive_int, metavar="N",
                        help="gate only windows of at least N traces (default 30)")
    parser.add_argument("--gates", metavar="SPEC",
                        help='gates on each window and the whole period, e.g. "refusal_rate<=0.2,latency_p95=2000"')
    parser.add_argument("--gates-file", type=INPUT_PATH, metavar="PATH",
                        help="read [monitor] (and [scoring] refusals) from PATH instead of ./gates.toml")
    parser.add_argument("--strict", action="store_true", default=None,
                        help="fail gates on undefined metrics instead of skipping them")
    parser.add_argument("--confidence", type=confidence_level, metavar="C",
                        help="confidence of the drift tests; 1 - C is their significance level (default 0.95)")
    parser.add_argument("--metrics", metavar="FAMILIES",
                        help="grounding: also each answer's quotes, numbers and leaks against its passages' texts, "
                             "per window (the rates drift is tested on too); a gate on one turns it on")
    add_corpus_option(parser)
    parser.add_argument("--scores", type=INPUT_PATH, metavar="PATH",
                        help="per-question scores from other evaluators (ragscore judge writes one), joined to the "
                             "traces by qid: each score's mean per window and for the period, gated as a metric")
    parser.add_argument("--refusal-token", action="append", default=[], metavar="TEXT",
                        help="another claim that counts as a refusal (repeatable)")
    parser.add_argument("--refusal-pattern", action="append", default=[], metavar="REGEX",
                        help="a regular expression: a claim it matches counts as a refusal (repeatable; added to "
                             "[scoring] refusal_patterns, by default seven English phrasings)")
    add_trace_options(parser, "how the traces are written",
                      "read a trace concept from another path of each record (repeatable; see score --help)")
    add_report_options(parser, ("json", "markdown", "openmetrics", "pr-comment", "none"),
                       files=("json", "markdown", "html", "openmetrics"),
                       format_help="report on standard output (default: json; openmetrics: the Prometheus text "
                                   "exposition format)")
    add_pull_request_options(parser, "the trace file's name without its extensions")
    parser.add_argument("--no-fail", action="store_true", help="exit 0 even when a gate fails or a rate drifts")
    add_quiet_option(parser)
    return parser


def run_monitor(args: argparse.Namespace, streams: Streams) -> Exit:
    """Watch the traces, check the gates and the drift, report."""
    check_refusal_patterns(args.refusal_pattern)
    families = (parse_families([n.strip() for n in args.metrics.split(",") if n.strip()], "--metrics")
                if args.metrics else ())
    if any(family != "grounding" for family in families):
        raise UsageError("--metrics: monitor reads no gold set: grounding is the one family it takes")
    overrides = Overrides(confidence=args.confidence, trace_format=args.trace_format, families=families,
                          corpus=args.corpus,
                          trace_fields=map_options(args.map),
                          refusal_tokens=tuple(t for t in args.refusal_token if t.strip()),
                          refusal_patterns=tuple(args.refusal_pattern))
    config = load_config(overrides, args.gates_file).with_origin(args.gates_file, None, overrides)
    baseline = expand(args.baseline, "--baseline") if args.baseline else None
    run = monitor(expand(args.trace), baseline, window=args.window, min_n=args.min_n, gates=args.gates,
                  strict=args.strict, config=config, scores=args.scores)
    return report_and_exit(args, streams, run)
