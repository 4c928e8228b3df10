"""The compare command: a candidate run against a baseline, with regression gates."""

from __future__ import annotations

import argparse

from ragscore.cli.common import (
    INPUT_PATH,
    Exit,
    Parser,
    Streams,
    add_chunks_option,
    add_corpus_option,
    add_pull_request_options,
    add_quiet_option,
    add_report_options,
    add_trace_options,
    confidence_level,
    count,
    note_capped_jobs,
    positive_int,
    report_and_exit,
    session_field,
)
from ragscore.comparing.api import compare, compare_several
from ragscore.config import PAIRED_TESTS, Config, Overrides, load_config, parse_families
from ragscore.errors import UsageError
from ragscore.input_config import map_options
from ragscore.loaders.shards import expand
from ragscore.metrics.stats import CORRECTIONS
from ragscore.parallel import choose_jobs
from ragscore.settings import REPEATS


def compare_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(
        prog=prog,
        description="Compare a candidate run with a baseline on the same gold set: every metric's change with a "
        "paired-bootstrap interval and p-value (or --test's; Holm-corrected, or --correction's), an exact McNemar "
        "test on per-question "
        "correctness, and the [regression] gates of gates.toml. With several RUNs instead (trace files), a "
        "table of every run's metrics marked with the runs each is significantly better than.",
    )
    parser.add_argument("--gold", required=True, type=INPUT_PATH, metavar="PATH",
                        help="the gold set both runs answered")
    parser.add_argument("runs", nargs="*", type=INPUT_PATH, metavar="RUN",
                        help="several runs' trace files to compare pair by pair (instead of --trace and --baseline)")
    parser.add_argument("--trace", action="append", type=INPUT_PATH, metavar="PATH",
                        help="the candidate run's traces (repeatable, a quoted glob or a folder: read as one)")
    parser.add_argument("--names", metavar="NAME,NAME,...",
                        help="with several RUNs: their names in the table (default: their file names)")
    parser.add_argument("--columns", metavar="METRIC,METRIC,...",
                        help="with several RUNs: the table's metrics (default precision,chr,under_refusal,"
                             "over_refusal)")
    baseline = parser.add_mutually_exclusive_group()
    baseline.add_argument("--baseline", action="append", type=INPUT_PATH, metavar="PATH",
                          help="the baseline run's traces (repeatable, a quoted glob or a folder: read as one)")
    baseline.add_argument("--baseline-report", type=INPUT_PATH, metavar="PATH",
                          help="a committed JSON report of the baseline, made with --per-question")
    parser.add_argument("--scores", type=INPUT_PATH, metavar="PATH",
                        help="the candidate's per-question scores from other evaluators (as score --scores takes "
                             "them; ragscore judge writes one)")
    parser.add_argument("--baseline-scores", type=INPUT_PATH, metavar="PATH",
                        help="the baseline's, with --baseline (a baseline report holds its own)")
    parser.add_argument("--allow-judge-change", action="store_true",
                        help="compare runs whose scores two different LLM judges gave (endpoint, model or rubric), "
                             "with a note, instead of refusing")
    add_trace_options(parser, "how both runs' traces are written",
                      "read a trace concept from another path of each record, in both runs (repeatable; see "
                      "score --help)")
    add_corpus_option(parser)
    add_chunks_option(parser)
    add_report_options(parser, ("json", "markdown", "pr-comment", "none"), files=("json", "markdown", "html"),
                       format_help="report on standard output (default: json)", helps={
                           "json": "also write the JSON comparison to PATH",
                           "markdown": "also write the Markdown comparison to PATH",
                           "html": "with several RUNs: also write the table as a self-contained HTML page"})
    add_pull_request_options(parser)
    parser.add_argument("--gates-file", type=INPUT_PATH, metavar="PATH",
                        help="read [scoring] and [regression] from PATH instead of ./gates.toml")
    parser.add_argument("--metrics", metavar="FAMILIES",
                        help="optional metric families to compare as well (retrieval, similarity, text, grounding, "
                             "evidence, tools, all; evidence and tools are on by themselves for gold_spans and "
                             "gold_tool_calls)")
    parser.add_argument("--session", type=session_field, metavar="FIELD",
                        help="the gold field (else the trace's) that names each question's session (session_id when "
                             "the gold file has it)")
    parser.add_argument("--repeats", choices=REPEATS,
                        help="what several trace lines of one question are: the last counts (last, the default), or "
                             "each is a sample (samples: pass@k and pass^k compared question by question)")
    parser.add_argument("--test", choices=PAIRED_TESTS,
                        help="the paired test of each metric: bootstrap (default), t, wilcoxon, permutation or sign "
                             "([regression] test)")
    parser.add_argument("--correction", choices=tuple(CORRECTIONS),
                        help="the correction of the p-values across metrics: holm (default), bonferroni or none")
    parser.add_argument("--bootstrap", type=count, metavar="N", help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", metavar="TEXT", help="seed of the bootstrap (default 0)")
    parser.add_argument("--confidence", type=confidence_level, metavar="C",
                        help="confidence of the intervals; 1 - C is the significance level (default 0.95)")
    parser.add_argument("-j", "--jobs", type=positive_int, metavar="N",
                        help="processes to score with (default: all cores for inputs over 16 MB, else 1)")
    parser.add_argument("--no-fail", action="store_true", help="exit 0 even when a regression gate fails")
    add_quiet_option(parser, "print no notes on standard error")
    return parser


def _several(args: argparse.Namespace, streams: Streams, config: Config) -> Exit:
    """Compare several runs pair by pair, in a table."""
    if args.trace or args.baseline or args.baseline_report:
        raise UsageError("compare: give several RUNs, or --trace and --baseline, not both")
    names = [n.strip() for n in args.names.split(",")] if args.names else None
    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None
    runs = [expand([run], "RUN") for run in args.runs]
    table = compare_several(args.gold, runs, names=names, columns=columns, config=config, jobs=args.jobs)
    return report_and_exit(args, streams, table)


def run_compare(args: argparse.Namespace, streams: Streams) -> Exit:
    """Score both runs (or read the baseline's report), compare them, check the regression gates."""
    specs = [args.gold, *(args.trace or ()), *args.runs, *(args.baseline or [args.baseline_report])]
    if specs.count("-") > 1:
        raise UsageError("only one input can be '-' (standard input)")
    families = (parse_families([n.strip() for n in args.metrics.split(",") if n.strip()], "--metrics")
                if args.metrics else ())
    overrides = Overrides(families=families, confidence=args.confidence, bootstrap=args.bootstrap, seed=args.seed,
                          trace_format=args.trace_format, trace_fields=map_options(args.map), repeats=args.repeats,
                          test=args.test, correction=args.correction, corpus=args.corpus,
                          chunks=args.chunks, session=args.session)
    config = load_config(overrides, args.gates_file).with_origin(args.gates_file, None, overrides)
    note_capped_jobs(args, streams)
    if args.runs:
        if args.pr_comment or args.badge or args.format == "pr-comment":
            raise UsageError("compare: --pr-comment, --format pr-comment and --badge are for --trace and --baseline, "
                             "not several RUNs")
        if args.scores or args.baseline_scores:
            raise UsageError("compare: --scores and --baseline-scores go with --trace and --baseline, not several RUNs")
        return _several(args, streams, config)
    if not args.trace or not (args.baseline or args.baseline_report):
        raise UsageError("compare: give --trace and --baseline (or --baseline-report), or several RUNs")
    if args.html or args.names or args.columns:
        raise UsageError("compare: --html, --names and --columns are for several RUNs")
    traces = expand(args.trace)
    baseline = expand(args.baseline, "--baseline") if args.baseline else None
    inputs = (args.gold, traces) if baseline is None else (args.gold, baseline, traces)
    if args.baseline_scores and not args.baseline:
        raise UsageError("compare: --baseline-scores goes with --baseline (a baseline report holds its own scores)")
    comparison = compare(args.gold, baseline, traces, baseline_report=args.baseline_report, config=config,
                         jobs=choose_jobs(args.jobs, *inputs), scores=args.scores, baseline_scores=args.baseline_scores,
                         allow_judge_change=args.allow_judge_change)
    return report_and_exit(args, streams, comparison)
