"""The compare command: a candidate run against a baseline, with regression gates."""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from ragscore.cli.common import (
    Exit,
    Parser,
    Streams,
    confidence_level,
    count,
    note_capped_jobs,
    positive_int,
    standard_output,
    write_requested_reports,
)
from ragscore.config import Config, Overrides, load_config, parse_families
from ragscore.errors import InputError, UsageError
from ragscore.evaluate import Wants, metric_names
from ragscore.gates import unknown_gate_metric
from ragscore.input_config import map_options
from ragscore.loaders.jsonl import InputFile
from ragscore.loaders.report import load_report
from ragscore.loaders.shapes import CHOICES
from ragscore.parallel import choose_jobs, score
from ragscore.quoting import shorten, visible
from ragscore.reports.document import display_path
from ragscore.reports.json_report import render_json
from ragscore.reports.markdown import fmt

def compare_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(
        prog=prog,
        description="Compare a candidate run with a baseline on the same gold set: every metric's change with a "
        "paired-bootstrap interval and p-value (Holm-corrected), an exact McNemar test on per-question "
        "correctness, and the [regression] gates of gates.toml.",
    )
    parser.add_argument("--gold", required=True, metavar="PATH", help="the gold set both runs answered")
    parser.add_argument("--trace", required=True, metavar="PATH", help="the candidate run's traces")
    baseline = parser.add_mutually_exclusive_group(required=True)
    baseline.add_argument("--baseline", metavar="PATH", help="the baseline run's traces")
    baseline.add_argument("--baseline-report", metavar="PATH", help="a committed JSON report of the baseline, made with --per-question")
    parser.add_argument("--trace-format", choices=CHOICES, metavar="NAME", help="how both runs' traces are written: auto (default), native, ragas, openinference, otel-genai or langchain")
    parser.add_argument("--map", action="append", default=[], metavar="CONCEPT=PATH", help="read a trace concept from another path of each record, in both runs (repeatable; see score --help)")
    parser.add_argument("--format", choices=("json", "markdown", "none"), default="json", help="report on standard output (default: json)")
    parser.add_argument("--json", metavar="PATH", help="also write the JSON comparison to PATH")
    parser.add_argument("--markdown", metavar="PATH", help="also write the Markdown comparison (for a pull-request comment) to PATH")
    parser.add_argument("--gates-file", metavar="PATH", help="read [scoring] and [regression] from PATH instead of ./gates.toml")
    parser.add_argument("--metrics", metavar="FAMILIES", help="optional metric families to compare as well (retrieval, similarity, text, all)")
    parser.add_argument("--bootstrap", type=count, metavar="N", help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", metavar="TEXT", help="seed of the bootstrap (default 0)")
    parser.add_argument("--confidence", type=confidence_level, metavar="C", help="confidence of the intervals; 1 - C is the significance level (default 0.95)")
    parser.add_argument("-j", "--jobs", type=positive_int, metavar="N", help="processes to score with (default: all cores for inputs over 16 MB, else 1)")
    parser.add_argument("--no-fail", action="store_true", help="exit 0 even when a regression gate fails")
    parser.add_argument("-q", "--quiet", action="store_true", help="print no notes on standard error")
    return parser


def run_compare(args: argparse.Namespace, streams: Streams) -> Exit:
    """Score both runs (or read the baseline's report), compare them, check the regression gates."""
    from ragscore.compare import check_regressions, compare_runs, mcnemar, pair_runs, run_from_evaluation, run_from_report
    from ragscore.paired import score_pair
    from ragscore.reports.compare_report import build_compare_document, render_compare_markdown

    specs = [args.gold, args.trace, args.baseline or args.baseline_report]
    if specs.count("-") > 1:
        raise UsageError("only one input can be '-' (standard input)")
    families = parse_families([n.strip() for n in args.metrics.split(",") if n.strip()], "--metrics") if args.metrics else ()
    overrides = Overrides(families=families, confidence=args.confidence, bootstrap=args.bootstrap, seed=args.seed,
                          trace_format=args.trace_format, trace_fields=map_options(args.map))
    config = load_config(overrides, metric_names, args.gates_file)
    settings = config.settings
    note_capped_jobs(args, streams)
    if args.baseline:
        # Both runs in one pass over the gold set, question by question, without per-question rows.
        baseline_ev, candidate_ev, paired = score_pair(
            args.gold, args.baseline, args.trace, settings, choose_jobs(args.jobs, args.gold, args.baseline, args.trace)
        )
        _check_regression_names(config, candidate_ev.metrics())
        baseline_metrics, baseline_input = baseline_ev.metrics(), _input(baseline_ev.traces, baseline_ev.digests[1])
        if baseline_ev.settings.trace_format != candidate_ev.settings.trace_format and not args.quiet:
            streams.note(f"the baseline's traces were read as {baseline_ev.settings.trace_format}, the candidate's as "
                         f"{candidate_ev.settings.trace_format} (--trace-format auto)")
    else:
        candidate_ev = score(args.gold, args.trace, settings, Wants(rows=True), choose_jobs(args.jobs, args.gold, args.trace))
        _check_regression_names(config, candidate_ev.metrics())
        candidate = run_from_evaluation(candidate_ev)
        report, doc = load_report(args.baseline_report)  # checked: the parts read below are there
        if doc["inputs"]["gold"]["sha256"] != candidate_ev.digests[0]:
            raise InputError(report.name, "the baseline report was not made with this gold set (its gold sha256 differs)")
        _check_same_scoring(doc["signature"], candidate_ev.settings.signature(), report.name)
        baseline = run_from_report(doc, report.name)
        baseline_metrics, baseline_input = baseline.metrics, _input(report, report.sha256)
        lacking = [metric for metric in config.regression if metric not in baseline.metrics]
        if lacking:
            raise InputError(report.name, f"the baseline report lacks {', '.join(lacking)}, which [regression] gates: "
                                          "remake it with the same --metrics")
        paired = pair_runs(baseline, candidate, [row.qid for row in candidate_ev.rows or ()], settings)
    deltas = compare_runs(baseline_metrics, candidate_ev.metrics(), paired, settings)
    test = mcnemar(paired)
    regressions = check_regressions(deltas, config.regression, config.require_significance, settings.confidence,
                                    config.directions)
    inputs = {
        "gold": _input(candidate_ev.gold, candidate_ev.digests[0]),
        "baseline": baseline_input,
        "trace": _input(candidate_ev.traces, candidate_ev.digests[1]),
    }
    doc = build_compare_document(inputs, settings, deltas, test, regressions)
    alpha = 1 - settings.confidence
    write_requested_reports(args, {"json": lambda: render_json(doc), "markdown": lambda: render_compare_markdown(doc, alpha)})
    if not args.quiet:
        for r in regressions:
            if r.status == "fail":
                streams.note(f"REGRESSION {r.metric}: worse by {fmt(r.worse_by)} (allowed {r.allowed:g})")
        streams.note(f"{'pass' if doc['pass'] else 'FAIL'}: {len(test.fixed)} questions fixed, {len(test.broken)} broken")
    with standard_output(streams) as out:
        if args.format == "json":
            out.writelines(render_json(doc))
        elif args.format == "markdown":
            out.writelines(render_compare_markdown(doc, alpha))
    return Exit.OK if doc["pass"] or args.no_fail else Exit.GATE_FAILED


def _check_regression_names(config: Config, metrics: Iterable[str]) -> None:
    """Refuse a regression bound on a name the run never produced that looks like a typo of a known one."""
    bounds = [(metric, *config.regression_at.get(metric, ("gates.toml", None))) for metric in config.regression]
    typo = unknown_gate_metric(bounds, metrics, config.known_names)
    if typo is not None:
        raise typo


# Signature parts that do not change a score (or that differ legitimately between two reports).
_NOT_SCORING = ("ragscore", "metrics", "ci")
# How the inputs were read, as a signature leaves it out when they were read as the contract: a
# report read another way (a format, a mapping, refusal patterns) differs in these.
_READ_AS_CONTRACT = {"trace": "native", "trace_fields": "{}", "gold_fields": "{}", "refusal_patterns": "[]"}


def _check_same_scoring(baseline: str, candidate: str, source: str) -> None:
    """Refuse a baseline report scored with other settings (k, refusal tokens, cutoffs, ...)."""
    def parts(signature: str) -> dict[str, str]:
        pairs = (part.partition(":") for part in signature.split("|"))
        return {**_READ_AS_CONTRACT, **{key: value for key, _, value in pairs if key not in _NOT_SCORING}}

    before, after = parts(baseline), parts(candidate)
    differing = sorted(key for key in before.keys() & after.keys() if before[key] != after[key])
    if differing:
        raise InputError(source, "the baseline report was scored with other settings ("
                                 + ", ".join(f"{key}: {visible(shorten(before[key]))} vs {visible(shorten(after[key]))}"
                                             for key in differing) + ")")


def _input(file: InputFile, digest: str) -> dict[str, str]:
    return {"path": display_path(file), "sha256": digest}
