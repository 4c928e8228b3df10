"""The command line: argument parsing, exit statuses and the only place that prints."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import TextIO

from ragscore import __version__
from ragscore.config import Overrides, load_config, parse_families
from ragscore.errors import RagscoreError, UsageError
from ragscore.evaluate import Wants, metric_names
from ragscore.gates import evaluate_gates, gates_pass
from ragscore.intervals import compute_intervals
from ragscore.slices import build_slices
from ragscore.loaders.gold import load_gold
from ragscore.parallel import choose_jobs, score
from ragscore.progress import progress_line
from ragscore.metrics.registry import did_you_mean
from ragscore.reports.console import accounting_notes, gate_lines, slice_notes
from ragscore.reports.document import build_document
from ragscore.reports.explain import render_explanation
from ragscore.reports.files import write_reports
from ragscore.reports.json_report import render_json
from ragscore.reports.markdown import render_markdown
from ragscore.reports.text import render_text
from ragscore.reports.document import display_path
from ragscore.reports.markdown import fmt
from ragscore.loaders.jsonl import InputFile, decode_text
from ragscore.errors import InputError


class Exit(IntEnum):
    """Exit statuses, documented in the README."""

    OK = 0
    GATE_FAILED = 1
    USAGE_ERROR = 2
    INTERNAL_ERROR = 3
    INTERRUPTED = 130


EXAMPLES = """\
examples:
  ragscore --gold examples/gold.jsonl --trace examples/trace.jsonl
  ragscore --gold gold.jsonl --trace trace.jsonl | jq -e '.pass == true'
  ragscore --gold gold.jsonl --trace - --gates "precision=0.8,under=0.05,ndcg@10>=0.6" \\
           --markdown report.md --per-question --no-fail < traces.jsonl
  ragscore --gold gold.jsonl --trace trace.jsonl --explain Q017

commands:
  score      score traces against a gold set and check gates (the default command)
  validate   check a gold set and traces against the data contracts, listing every problem
  init       write a commented starter gates.toml
  schema     print the JSON Schema of the JSON report
  compare    compare a candidate run with a baseline: deltas, significance, regression gates

exit status: 0 every gate passed, 1 a gate failed, 2 usage or input error, 3 internal error.
settings and gates: built-in defaults < [tool.ragscore] in ./pyproject.toml
  < ./gates.toml (or --gates-file) < command-line options.
"""


@dataclass(frozen=True, slots=True)
class Streams:
    """Where the command writes: the report and explanations to out, notes and errors to err."""

    out: TextIO
    err: TextIO

    def note(self, text: str) -> None:
        """Print one line of commentary on standard error."""
        print(f"ragscore: {text}", file=self.err)


def _score_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Score RAG pipeline traces against a gold set, check quality gates, write reports.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ragscore {__version__}")
    inputs = parser.add_argument_group("inputs")
    inputs.add_argument("--gold", required=True, metavar="PATH", help="gold set: JSON Lines, or a JSON array of objects ('-' for standard input)")
    inputs.add_argument("--trace", required=True, metavar="PATH", help="pipeline traces, JSON Lines ('-' for standard input)")
    inputs.add_argument("-j", "--jobs", type=_positive_int, metavar="N", help="processes to score with (default: all cores for inputs over 16 MB, else 1)")
    out = parser.add_argument_group("reports")
    out.add_argument("--format", choices=("json", "markdown", "text", "none"), default="json", help="report printed on standard output (default: json; text: a compact summary, coloured on a terminal unless NO_COLOR is set)")
    out.add_argument("--json", metavar="PATH", help="also write the JSON report to PATH")
    out.add_argument("--markdown", metavar="PATH", help="also write the Markdown report to PATH")
    out.add_argument("--html", metavar="PATH", help="also write a self-contained HTML report to PATH (charts, filterable question table)")
    out.add_argument("--junit", metavar="PATH", help="also write JUnit XML to PATH: a test case per gate (and per question with --per-question)")
    out.add_argument("--per-question", action="store_true", help="add a 'questions' list to the JSON report")
    out.add_argument("--by", action="append", metavar="FIELD", help="also report every metric per value of a gold field (a dotted path such as tags.lang; repeatable); [slice_gates] apply to each slice")
    out.add_argument("--only-failures", action="store_true", help="list only questions not labelled OK or REFUSAL_OK (implies --per-question)")
    out.add_argument("--explain", action="append", metavar="QID", help="print why question QID got its label, instead of the report (repeatable)")
    out.add_argument("-q", "--quiet", action="store_true", help="print no notes on standard error (errors still are)")
    gates = parser.add_argument_group("gates and settings")
    gates.add_argument("--gates", metavar="SPEC", help='gates, e.g. "precision=0.80,chr=0.75,under=0.05,over=0.10" or "ndcg@10>=0.6"; METRIC=off removes one')
    gates.add_argument("--gates-file", metavar="PATH", help="read [scoring] and [gates] from PATH instead of ./gates.toml")
    gates.add_argument("--no-fail", action="store_true", help="exit 0 even when a gate fails (report only)")
    gates.add_argument("--strict", action="store_true", default=None, help="fail gates on undefined metrics instead of skipping them")
    gates.add_argument("--metrics", metavar="FAMILIES", help="optional metric families to compute as well: retrieval, similarity, text, or all (comma-separated)")
    gates.add_argument("--cutoffs", type=_cutoff_list, metavar="K,K,...", help="cutoffs of the retrieval metrics (default 1,3,5,10)")
    gates.add_argument("--k", type=_positive_int, metavar="N", help="the k of recall@k (default 5)")
    gates.add_argument("--confidence", type=_confidence, metavar="C", help="confidence of the intervals (default 0.95)")
    gates.add_argument("--bootstrap", type=_positive_int, metavar="N", help="bootstrap resamples for intervals of means (default 1000)")
    gates.add_argument("--seed", metavar="TEXT", help="seed of the bootstrap (default 0): same seed, same report")
    gates.add_argument("--refusal-token", action="append", default=[], metavar="TEXT", help="another claim that counts as a refusal (repeatable)")
    gates.add_argument("--no-require-claim", dest="require_claim", action="store_false", default=None, help="do not require claim containment for precision")
    gates.add_argument("--no-scope-citations", dest="scope_citations", action="store_false", default=None, help="do not require citations to be among the retrieved ids")
    return parser


def _suggest(qid: str, gold_spec: str) -> str:
    """Suggest the nearest qid of the gold set (read again: this only runs on a typo)."""
    if gold_spec == "-":
        return ""
    return did_you_mean(qid, list(load_gold(gold_spec).by_qid))


def _cutoff_list(text: str) -> tuple[int, ...]:
    cutoffs = tuple(sorted({_positive_int(part) for part in text.split(",") if part.strip()}))
    if not cutoffs:
        raise argparse.ArgumentTypeError("expected positive integers separated by commas, such as 1,3,5,10")
    return cutoffs


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def run_score(args: argparse.Namespace, streams: Streams) -> Exit:
    """Score, gate and report; raise RagscoreError on bad input before anything is written."""
    if args.gold == "-" and args.trace == "-":
        raise UsageError("only one of --gold and --trace can be '-' (standard input)")
    overrides = Overrides(
        k=args.k,
        refusal_tokens=tuple(t for t in args.refusal_token if t.strip()),
        require_claim=args.require_claim,
        scope_citations=args.scope_citations,
        strict=args.strict,
        gates=args.gates,
        families=parse_families([n.strip() for n in args.metrics.split(",") if n.strip()], "--metrics") if args.metrics else (),
        cutoffs=args.cutoffs,
        confidence=args.confidence,
        bootstrap=args.bootstrap,
        seed=args.seed,
    )
    config = load_config(overrides, metric_names, args.gates_file)
    explain = list(dict.fromkeys(args.explain or ()))
    per_question = args.per_question or args.only_failures
    by = tuple(dict.fromkeys(args.by or ()))
    wants = Wants(rows=per_question or bool(args.markdown or args.html or by) or args.format == "markdown",
                  explain=frozenset(explain), by=by)
    jobs = choose_jobs(args.jobs, args.gold, args.trace)
    label = f"scoring with {jobs} processes" if jobs > 1 else "scoring"
    with progress_line(streams.err, label, enabled=not args.quiet and streams.err.isatty()):
        ev = score(args.gold, args.trace, config.settings, wants, jobs)
    for qid in explain:
        if qid not in ev.explained:
            raise UsageError(f'--explain: no gold question has qid "{qid}"' + _suggest(qid, args.gold))
    results = evaluate_gates(config.gates, ev.metrics(), config.settings.strict)
    slices = build_slices(ev, by, config.slice_gates, config.slice_min_n) if by else {}
    slice_results = [r for groups in slices.values() for s in groups.values() for r in s.gates]
    passed = gates_pass(results) and gates_pass(slice_results)

    doc = build_document(ev, results, passed, compute_intervals(ev), slices, questions=wants.rows,
                         only_failures=args.only_failures)
    summary = doc if per_question else {key: value for key, value in doc.items() if key != "questions"}
    files: dict[str, Iterable[str]] = {}
    if args.json:
        files[args.json] = render_json(doc, questions=per_question)
    if args.markdown:
        files[args.markdown] = render_markdown(doc)
    if args.html:
        from ragscore.reports.html import render_html  # formats load when asked for: startup stays short

        files[args.html] = render_html(doc)
    if args.junit:
        from ragscore.reports.junit import render_junit

        files[args.junit] = render_junit(summary)
    write_reports(files)
    if os.environ.get("GITHUB_ACTIONS") == "true":  # annotations on the run, the summary on its page
        from ragscore.reports.github import annotations, append_step_summary

        for line in annotations(summary):
            print(line, file=streams.err)
        if os.environ.get("GITHUB_STEP_SUMMARY"):
            append_step_summary(render_markdown(summary), os.environ["GITHUB_STEP_SUMMARY"])

    if not args.quiet:
        for line in accounting_notes(ev) + slice_notes(slices, config.slice_min_n) + gate_lines(results, passed):
            streams.note(line)
    try:
        if explain:
            for n, qid in enumerate(explain):
                streams.out.write("\n" if n else "")
                streams.out.write(render_explanation(ev.explained[qid], ev.settings, ev.traces.name))
        elif args.format == "json":
            streams.out.writelines(render_json(doc, questions=per_question))
        elif args.format == "markdown":
            streams.out.writelines(render_markdown(doc))
        elif args.format == "text":
            colour = streams.out.isatty() and not os.environ.get("NO_COLOR")
            streams.out.writelines(render_text(doc, colour=colour))
        streams.out.flush()
    except BrokenPipeError:
        _silence_stdout()
    return Exit.OK if passed or args.no_fail else Exit.GATE_FAILED


def _silence_stdout() -> None:
    """Point standard output at the null device after its reader went away (``| head``).

    Python flushes standard output once more at exit; without this it would raise again there.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # not a real file (for example under a test's capture)
        pass


def _validate_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Check a gold set (and traces) against the data contracts without scoring: every problem, "
        "not just the first. Errors exit 2; warnings flag data that can never score well.",
    )
    parser.add_argument("--gold", required=True, metavar="PATH", help="gold set to check ('-' for standard input)")
    parser.add_argument("--trace", metavar="PATH", help="traces to check against it")
    parser.add_argument("--gates-file", metavar="PATH", help="read [scoring] (the refusal tokens) from PATH instead of ./gates.toml")
    parser.add_argument("-q", "--quiet", action="store_true", help="print errors only, no warnings or summary")
    return parser


def run_validate(args: argparse.Namespace, streams: Streams) -> Exit:
    """List every problem of the inputs; exit 2 when any is an error."""
    from ragscore.validate import ERROR, validate

    if args.gold == "-" and args.trace == "-":
        raise UsageError("only one of --gold and --trace can be '-' (standard input)")
    settings = load_config(Overrides(), metric_names, args.gates_file).settings
    problems = validate(args.gold, args.trace, settings)
    errors = sum(p.severity == ERROR for p in problems)
    for problem in problems:
        if problem.severity == ERROR or not args.quiet:
            print(problem, file=streams.out)
    if not args.quiet:
        warnings = len(problems) - errors
        streams.note(f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}")
    return Exit.USAGE_ERROR if errors else Exit.OK


def _init_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Write a commented starter gates.toml (never over an existing file).")
    parser.add_argument("path", nargs="?", default="gates.toml", help="where to write it (default: ./gates.toml)")
    return parser


def run_init(args: argparse.Namespace, streams: Streams) -> Exit:
    """Write the starter gates file and say what to run next."""
    from ragscore.starter import STARTER_GATES

    try:
        with open(args.path, "x", encoding="utf-8") as out:
            out.write(STARTER_GATES)
    except FileExistsError:
        raise UsageError(f"{args.path}: already exists; ragscore init never overwrites a file") from None
    except OSError as exc:
        raise UsageError(f"{args.path}: cannot write: {exc.strerror}") from None
    streams.note(f"wrote {args.path}; next: ragscore --gold gold.jsonl --trace trace.jsonl --format text")
    return Exit.OK


def _compare_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    parser.add_argument("--format", choices=("json", "markdown", "none"), default="json", help="report on standard output (default: json)")
    parser.add_argument("--json", metavar="PATH", help="also write the JSON comparison to PATH")
    parser.add_argument("--markdown", metavar="PATH", help="also write the Markdown comparison (for a pull-request comment) to PATH")
    parser.add_argument("--gates-file", metavar="PATH", help="read [scoring] and [regression] from PATH instead of ./gates.toml")
    parser.add_argument("--metrics", metavar="FAMILIES", help="optional metric families to compare as well (retrieval, similarity, text, all)")
    parser.add_argument("--bootstrap", type=_positive_int, metavar="N", help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", metavar="TEXT", help="seed of the bootstrap (default 0)")
    parser.add_argument("--confidence", type=_confidence, metavar="C", help="confidence of the intervals; 1 - C is the significance level (default 0.95)")
    parser.add_argument("--no-fail", action="store_true", help="exit 0 even when a regression gate fails")
    parser.add_argument("-q", "--quiet", action="store_true", help="print no notes on standard error")
    return parser


def run_compare(args: argparse.Namespace, streams: Streams) -> Exit:
    """Score both runs (or read the baseline's report), compare them, check the regression gates."""
    from ragscore.compare import check_regressions, compare_runs, mcnemar, run_from_evaluation, run_from_report
    from ragscore.reports.compare_report import build_compare_document, render_compare_markdown

    specs = [args.gold, args.trace, args.baseline or args.baseline_report]
    if specs.count("-") > 1:
        raise UsageError("only one input can be '-' (standard input)")
    families = parse_families([n.strip() for n in args.metrics.split(",") if n.strip()], "--metrics") if args.metrics else ()
    overrides = Overrides(families=families, confidence=args.confidence, bootstrap=args.bootstrap, seed=args.seed)
    config = load_config(overrides, metric_names, args.gates_file)
    settings, wants = config.settings, Wants(rows=True)
    candidate_ev = score(args.gold, args.trace, settings, wants, choose_jobs(None, args.gold, args.trace))
    candidate = run_from_evaluation(candidate_ev)
    if args.baseline:
        baseline_ev = score(args.gold, args.baseline, settings, wants, choose_jobs(None, args.gold, args.baseline))
        baseline, baseline_input = run_from_evaluation(baseline_ev), _input(baseline_ev.traces, baseline_ev.digests[1])
    else:
        report = InputFile(args.baseline_report)
        text = decode_text(b"".join(report.raw_lines()), report.name, 1)
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(report.name, f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
        if not isinstance(doc, dict) or doc.get("inputs", {}).get("gold", {}).get("sha256") != candidate_ev.digests[0]:
            raise InputError(report.name, "the baseline report was not made with this gold set (its gold sha256 differs)")
        baseline, baseline_input = run_from_report(doc, report.name), _input(report, report.sha256)
    qids = [row.qid for row in candidate_ev.rows or ()]
    deltas = compare_runs(baseline, candidate, qids, settings)
    test = mcnemar(baseline, candidate, qids)
    regressions = check_regressions(deltas, config.regression, config.require_significance, settings.confidence)
    inputs = {
        "gold": _input(candidate_ev.gold, candidate_ev.digests[0]),
        "baseline": baseline_input,
        "trace": _input(candidate_ev.traces, candidate_ev.digests[1]),
    }
    doc = build_compare_document(inputs, settings, deltas, test, regressions)
    alpha = 1 - settings.confidence
    files: dict[str, Iterable[str]] = {}
    if args.json:
        files[args.json] = render_json(doc)
    if args.markdown:
        files[args.markdown] = render_compare_markdown(doc, alpha)
    write_reports(files)
    if not args.quiet:
        for r in regressions:
            if r.status == "fail":
                streams.note(f"REGRESSION {r.metric}: worse by {fmt(r.worse_by)} (allowed {r.allowed:g})")
        streams.note(f"{'pass' if doc['pass'] else 'FAIL'}: {len(test.fixed)} questions fixed, {len(test.broken)} broken")
    try:
        if args.format == "json":
            streams.out.writelines(render_json(doc))
        elif args.format == "markdown":
            streams.out.writelines(render_compare_markdown(doc, alpha))
        streams.out.flush()
    except BrokenPipeError:
        _silence_stdout()
    return Exit.OK if doc["pass"] or args.no_fail else Exit.GATE_FAILED


def _input(file: InputFile, digest: str) -> dict[str, str]:
    return {"path": display_path(file), "sha256": digest}


def _schema_parser(prog: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog=prog, description="Print the JSON Schema of the JSON report.")


def run_schema(args: argparse.Namespace, streams: Streams) -> Exit:
    """Print the JSON report's schema, as shipped in the package."""
    from ragscore.schema import schema_text

    streams.out.write(schema_text())
    return Exit.OK


# Subcommands by name: how to build each one's parser and how to run it. Scoring is the default.
COMMANDS: dict[str, tuple[Callable[[str], argparse.ArgumentParser], Callable[[argparse.Namespace, Streams], Exit]]] = {
    "score": (_score_parser, run_score),
    "validate": (_validate_parser, run_validate),
    "init": (_init_parser, run_init),
    "schema": (_schema_parser, run_schema),
    "compare": (_compare_parser, run_compare),
}
DEFAULT_COMMAND = "score"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    streams = Streams(sys.stdout, sys.stderr)
    if args and args[0] in COMMANDS:
        name, prog = args.pop(0), None
    else:
        name, prog = DEFAULT_COMMAND, "ragscore"
    build, run = COMMANDS[name]
    parser = build(prog or f"ragscore {name}")
    try:
        namespace = parser.parse_args(args)
    except SystemExit as exc:  # --help, --version, or argparse's own usage error (status 2)
        return int(exc.code or 0)
    try:
        return int(run(namespace, streams))
    except RagscoreError as exc:
        print(f"ragscore: error: {exc}", file=streams.err)
        return Exit.USAGE_ERROR
    except KeyboardInterrupt:
        print("ragscore: interrupted", file=streams.err)
        return Exit.INTERRUPTED
    except Exception:  # a bug: say so, with the traceback a report needs, and not as a gate failure
        print("ragscore: internal error (a bug in ragscore; please report it with this output):", file=streams.err)
        traceback.print_exc(file=streams.err)
        return Exit.INTERNAL_ERROR
