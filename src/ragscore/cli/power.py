"""The power command: how many questions a run's comparisons need."""

from __future__ import annotations

import argparse

from ragscore.cli.common import (
    INPUT_PATH,
    Exit,
    Parser,
    Streams,
    add_quiet_option,
    add_report_options,
    add_trace_options,
    confidence_level,
    report_and_exit,
)
from ragscore.config import Overrides, load_config, parse_families
from ragscore.errors import UsageError
from ragscore.input_config import map_options
from ragscore.loaders.shards import expand
from ragscore.numbers import decimal, number_problem
from ragscore.quoting import quote


def power_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="For each metric of a run, the smallest change a paired comparison "
                    "of a run like it detects at its size, and the questions needed to detect a given change.")
    parser.add_argument("--gold", required=True, type=INPUT_PATH, metavar="PATH", help="the gold set")
    parser.add_argument("--trace", required=True, action="append", type=INPUT_PATH, metavar="PATH",
                        help="the run's traces")
    parser.add_argument("--detect", metavar="CHANGE", help="the change to detect (default: each metric's "
                        "[regression] bound, else 0.05)")
    parser.add_argument("--power", default="0.8", metavar="P", help="the power wanted (default 0.8)")
    parser.add_argument("--columns", metavar="METRIC,METRIC,...",
                        help="the metrics (default: the gated ones, else precision, chr, under_refusal, over_refusal)")
    parser.add_argument("--metrics", metavar="FAMILIES", help="optional metric families to compute as well")
    parser.add_argument("--confidence", type=confidence_level, metavar="C",
                        help="1 - C is the test's significance level (default 0.95)")
    parser.add_argument("--gates-file", type=INPUT_PATH, metavar="PATH",
                        help="read [scoring], [gates] and [regression] from PATH")
    add_trace_options(parser, "how the traces are written", "read a trace concept from another "
                                                                             "path (repeatable)")
    add_report_options(parser, ("json", "markdown", "none"), files=("json", "markdown"))
    add_quiet_option(parser)
    return parser


def _number(option: str, text: str | None) -> float | None:
    if text is None:
        return None
    value = decimal(text)
    if value is None:
        raise UsageError(f"{option}: expected {number_problem(text)}, got {quote(text)}")
    return value


def run_power(args: argparse.Namespace, streams: Streams) -> Exit:
    """Score the run and say what its size detects."""
    from ragscore.comparing.api import power

    families = (parse_families([n.strip() for n in args.metrics.split(",") if n.strip()], "--metrics")
                if args.metrics else ())
    overrides = Overrides(families=families, confidence=args.confidence, trace_format=args.trace_format,
                          trace_fields=map_options(args.map))
    config = load_config(overrides, args.gates_file).with_origin(args.gates_file, None, overrides)
    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None
    target = _number("--power", args.power)
    assert target is not None
    args.no_fail = True
    report = power(args.gold, expand(args.trace), detect=_number("--detect", args.detect), target=target,
                   columns=columns, config=config)
    return report_and_exit(args, streams, report)
