"""The score command (the default): score, gate, report."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable
from typing import Any

from ragscore.api import Run, score
from ragscore.cli.common import (
    INPUT_PATH,
    REPORT_PATH,
    Exit,
    Parser,
    Streams,
    add_chunks_option,
    add_corpus_option,
    add_html_rows_option,
    add_pull_request_options,
    add_quiet_option,
    add_report_options,
    add_trace_options,
    confidence_level,
    count,
    cutoff_list,
    lists_questions,
    note_capped_jobs,
    positive_int,
    session_field,
    standard_output,
    with_pull_request,
    write_requested_reports,
)
from ragscore.config import Overrides, load_config, parse_families
from ragscore.errors import UsageError
from ragscore.input_config import map_options
from ragscore.loaders.shards import expand
from ragscore.parallel import choose_jobs
from ragscore.progress import progress_line
from ragscore.quoting import quote
from ragscore.settings import REPEATS, refusal_pattern_problem
from ragscore.version import __version__

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
  schema     print the JSON Schema of the JSON report (schema stage: of the stage commands' report)
  compare    compare a candidate run with a baseline: deltas, significance, regression gates
  ner        score named-entity extraction (strict and partial matching)
  classify   score entity type classification (accuracy, per-class and macro/weighted F1)
  link       score entity linking (hits@K, MRR, NIL detection)
  trec       score a TREC run against qrels as trec_eval does (reports and gates with --format)
  qrels      write TREC qrels for one chunking: the chunks that hold each question's gold spans
  partial    score one part of a run (ragscore.owner(qid, N)) and write a partial result
  merge      merge every part's partial result into the run's reports, as score writes them
  monitor    production traces per time window: gates, drift from a baseline, OpenMetrics
  judge      LLM-judge scores recorded in a committed ledger, replayed offline in CI
  agree      agreement between annotators of a gold set, or an LLM judge and human labels (kappa, alpha)
  split      split a gold set into stratified parts (train/dev/test) with a seed
  power      how many questions a comparison needs, or what change it can detect
  run        run every task of a suite (ragscore.toml) and report them together; append to a history
  dashboard  show a suite's history over its versions: trend charts, the latest run's breakdown

exit status: 0 every gate passed, 1 a gate failed, 2 usage or input error, 3 internal error.
settings and gates: built-in defaults < [tool.ragscore] in ./pyproject.toml
  < ./gates.toml (or --gates-file) < command-line options.
"""


FORMAT_HELP = ("report printed on standard output (default: json; text: a compact summary, coloured on a terminal "
               "unless NO_COLOR is set)")
REPORT_HELP = {
    "html": "also write a self-contained HTML report to PATH (charts, filterable question table)",
    "junit": "also write JUnit XML to PATH: a test case per gate (and per question with --per-question)",
}


def score_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(
        prog=prog,
        description="Score RAG pipeline traces against a gold set, check quality gates, write reports.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ragscore {__version__}")
    inputs = parser.add_argument_group("inputs")
    add_scoring_inputs(inputs)
    inputs.add_argument("-j", "--jobs", type=positive_int, metavar="N",
                        help="processes to score with (default: all cores for inputs over 16 MB, else 1)")
    out = parser.add_argument_group("reports")
    add_report_options(out, ("json", "markdown", "text", "pr-comment", "none"), format_help=FORMAT_HELP,
                       helps=REPORT_HELP)
    add_pull_request_options(out)
    out.add_argument("--sarif", type=REPORT_PATH, metavar="PATH",
                     help="also write SARIF 2.1.0 to PATH (GitHub code scanning): each failed gate, and with --metrics "
                          "grounding each question's findings at its trace line")
    out.add_argument("--per-question", action="store_true", help="add a 'questions' list to the JSON report")
    add_html_rows_option(out)
    add_by_option(out)
    out.add_argument("--only-failures", action="store_true",
                     help="list only questions not labelled OK or REFUSAL_OK (with --repeats samples: with a sample "
                          "that is not; implies --per-question)")
    out.add_argument("--explain", action="append", metavar="QID",
                     help="print why question QID got its label, instead of the report (repeatable)")
    add_quiet_option(out)
    add_setting_options(parser.add_argument_group("gates and settings"))
    return parser


def add_scoring_inputs(inputs: Any) -> None:
    """Add the inputs of a scored run: --gold, --trace (repeatable), how traces are read, --scores."""
    inputs.add_argument("--gold", required=True, type=INPUT_PATH, metavar="PATH",
                        help="gold set: JSON Lines, or a JSON array of objects ('-' for standard input)")
    inputs.add_argument("--trace", required=True, action="append", type=INPUT_PATH, metavar="PATH",
                        help="pipeline traces, JSON Lines ('-' for standard input); repeatable, or a quoted glob "
                             "('logs/*.jsonl.gz') or a folder: the files are read in sorted order as one stream")
    add_trace_options(inputs, "how the traces are written",
                      "read a trace concept (qid, question, claim, citations, retrieved_ids, refused, "
                      "retrieved_chunks, scores, document_id) from a path such as result or "
                      "source_documents[*].metadata.id (repeatable)")
    inputs.add_argument("--scores", type=INPUT_PATH, metavar="PATH",
                        help="per-question scores from other evaluators: CSV (a qid, question or user_input column "
                             "and numeric columns) or JSON Lines (qid plus numbers); each becomes a metric")
    add_corpus_option(inputs)
    add_chunks_option(inputs)


def add_by_option(group: Any) -> None:
    """Add --by (slices by a gold field)."""
    group.add_argument("--by", action="append", metavar="FIELD",
                       help="also report every metric per value of a gold field (a dotted path such as tags.lang; "
                            "repeatable); [slice_gates] apply to each slice")


def add_setting_options(gates: Any, *, no_fail: bool = True, scoring: bool = True) -> None:
    """Add the gates (--gates, --gates-file, --no-fail, --strict) and, with ``scoring``, the settings
    that change a score (--metrics, --cutoffs, --k, intervals, refusals, containment and scope)."""
    gates.add_argument("--gates", metavar="SPEC",
                       help='gates, e.g. "precision=0.80,chr=0.75,under=0.05,over=0.10" or "ndcg@10>=0.6"; METRIC=off '
                            'removes one')
    gates.add_argument("--gates-file", type=INPUT_PATH, metavar="PATH",
                       help="read [scoring] and [gates] from PATH instead of ./gates.toml")
    if no_fail:
        gates.add_argument("--no-fail", action="store_true", help="exit 0 even when a gate fails (report only)")
    gates.add_argument("--strict", action="store_true", default=None,
                       help="fail gates on undefined metrics instead of skipping them")
    if not scoring:
        return
    gates.add_argument("--metrics", metavar="FAMILIES",
                       help="optional metric families to compute as well: retrieval, similarity, text, grounding, "
                            "evidence (on by itself for gold_spans), tools (on by itself for gold_tool_calls), or all "
                            "(comma-separated)")
    gates.add_argument("--cutoffs", type=cutoff_list, metavar="K,K,...",
                       help="cutoffs of the retrieval metrics (default 1,3,5,10)")
    gates.add_argument("--k", type=count, metavar="N", help="the k of recall@k (default 5)")
    gates.add_argument("--repeats", choices=REPEATS,
                       help="what several trace lines of one question are: the last one counts (last, the default), "
                            "or each is a sample (samples: pass@k, pass^k, consistency)")
    gates.add_argument("--pass-k", type=cutoff_list, metavar="K,K,...",
                       help="the k of pass@k and pass^k with --repeats samples (default 1,3,5)")
    gates.add_argument("--session", type=session_field, metavar="FIELD",
                       help="the gold field (else the trace's) that names each question's session: its questions "
                            "are turns, judged whole (session_pass_rate, turns_to_first_error); session_id when the "
                            "gold file has it")
    gates.add_argument("--confidence", type=confidence_level, metavar="C",
                       help="confidence of the intervals (default 0.95)")
    gates.add_argument("--bootstrap", type=count, metavar="N",
                       help="bootstrap resamples for intervals of means (default 1000)")
    gates.add_argument("--seed", metavar="TEXT", help="seed of the bootstrap (default 0): same seed, same report")
    gates.add_argument("--refusal-token", action="append", default=[], metavar="TEXT",
                       help="another claim that counts as a refusal (repeatable)")
    gates.add_argument("--refusal-pattern", action="append", default=[], metavar="REGEX",
                       help="a regular expression: a claim it matches (re.search, any case) counts as a refusal "
                            "(repeatable; added to [scoring] refusal_patterns, by default seven English phrasings)")
    gates.add_argument("--no-require-claim", dest="require_claim", action="store_false", default=None,
                       help="do not require claim containment for precision")
    gates.add_argument("--no-scope-citations", dest="scope_citations", action="store_false", default=None,
                       help="do not require citations to be among the retrieved ids")


def overrides_of(args: argparse.Namespace) -> Overrides:
    """The settings the options of a scored run give (see ``add_setting_options``)."""
    return Overrides(
        k=args.k,
        refusal_tokens=tuple(t for t in args.refusal_token if t.strip()),
        refusal_patterns=tuple(args.refusal_pattern),
        require_claim=args.require_claim,
        scope_citations=args.scope_citations,
        strict=args.strict,
        gates=args.gates,
        families=(parse_families([n.strip() for n in args.metrics.split(",") if n.strip()], "--metrics")
                  if args.metrics else ()),
        cutoffs=args.cutoffs,
        confidence=args.confidence,
        bootstrap=args.bootstrap,
        seed=args.seed,
        trace_format=args.trace_format,
        trace_fields=map_options(args.map),
        repeats=args.repeats,
        pass_k=args.pass_k,
        corpus=args.corpus,
        chunks=args.chunks,
        session=args.session,
    )


def check_refusal_patterns(patterns: list[str]) -> None:
    """Refuse a --refusal-pattern that cannot be used, naming it."""
    for pattern in patterns:
        problem = refusal_pattern_problem(pattern)
        if problem is not None:
            raise UsageError(f"--refusal-pattern {quote(pattern)}: {problem}")


def run_score(args: argparse.Namespace, streams: Streams) -> Exit:
    """Score, gate and report; raise RagscoreError on bad input before anything is written."""
    if [args.gold, *args.trace, args.scores].count("-") > 1:
        raise UsageError("only one of --gold, --trace and --scores can be '-' (standard input)")
    check_refusal_patterns(args.refusal_pattern)
    overrides = overrides_of(args)
    config = load_config(overrides, args.gates_file).with_origin(args.gates_file, None, overrides)
    note_capped_jobs(args, streams)
    traces = expand(args.trace)
    jobs = choose_jobs(args.jobs, args.gold, traces)
    label = f"scoring with {jobs} processes" if jobs > 1 else "scoring"
    # Under GitHub Actions a failed grounding gate's annotation names its questions: their rows are kept
    # (and for the SARIF report, which lists each question's findings).
    annotated = ((os.environ.get("GITHUB_ACTIONS") == "true" or bool(args.sarif))
                 and "grounding" in config.settings.families)
    keep_rows = lists_questions(args) or bool(args.by) or annotated
    with progress_line(streams.err, label, enabled=not args.quiet and streams.err.isatty()):
        run = score(args.gold, traces, config=config, scores=args.scores, per_question=args.per_question,
                    only_failures=args.only_failures, by=args.by or (), explain=args.explain or (),
                    keep_rows=keep_rows, jobs=jobs)
    return report_run(args, streams, run)


def report_run(args: argparse.Namespace, streams: Streams, run: Run) -> Exit:
    """Report a run as score does (merge too): the report files, then under GitHub Actions the
    annotations and the job summary, then the notes and standard output (an explanation or the report)."""
    def sarif_or_report(fmt: str) -> Iterable[str]:
        if fmt == "sarif":  # score's alone (merge has no --sarif)
            from ragscore.reports.sarif import score_sarif

            return score_sarif(run.evaluation, run.gate_results)
        return run.render(fmt, html_rows=args.html_rows)

    render = with_pull_request(args, run, sarif_or_report)
    write_requested_reports(args, render)
    if os.environ.get("GITHUB_ACTIONS") == "true":  # annotations on the run, the summary on its page
        from ragscore.reports.document import Questions
        from ragscore.reports.github import report_on_github

        # Every question's findings (not only the failures a report may list) name a grounding gate's questions.
        questions = Questions(run.evaluation, only_failures=False) if run.evaluation.rows is not None else None
        report_on_github(run.summary(), streams.write_err, os.environ.get("GITHUB_STEP_SUMMARY"), questions)
    if not args.quiet:
        for line in run.notes():
            streams.note(line)
    explain = getattr(args, "explain", None)  # merge explains nothing
    with standard_output(streams) as out:
        if explain:
            for n, qid in enumerate(dict.fromkeys(explain)):
                out.write("\n" if n else "")
                out.write(run.explain(qid))
        elif args.format != "none":
            colour = args.format == "text" and out.isatty() and not os.environ.get("NO_COLOR")
            out.writelines(run.render(args.format, colour=colour, html_rows=args.html_rows)
                           if args.format in ("text", "html") else render(args.format))
    return Exit.OK if run.passed or args.no_fail else Exit.GATE_FAILED
