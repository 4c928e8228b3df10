"""The trec command: a drop-in for trec_eval on TREC (or BEIR) qrels and TREC runs; ragscore's reports and gates."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from ragscore.cli.common import (
    REPORT_OPTIONS,
    Exit,
    Parser,
    Streams,
    add_report_options,
    confidence_level,
    count,
    positive_int,
    standard_output,
    write_requested_reports,
)
from ragscore.errors import UsageError
from ragscore.quoting import quote

if TYPE_CHECKING:
    from ragscore.gates import GateResult
    from ragscore.trec.files import Qrels, Run
    from ragscore.trec.scoring import Scored, TrecSettings

EPILOG = """\
examples:
  ragscore trec qrels.txt run.txt                     trec_eval's default measures
  ragscore trec -q -m ndcg_cut.10 -m P.5,10 qrels.txt run.txt
  ragscore trec -c -M 100 -m all_trec qrels.tsv run.txt
  ragscore trec -m ndcg_cut.10 --gates "ndcg@10>=0.6" --format markdown qrels.txt run.txt
  ragscore trec -m map -m P.10 qrels.txt baseline.txt new.txt --format markdown

measures (-m, repeatable; parameters after a dot, as in trec_eval): num_ret, num_rel, num_rel_ret,
map, gm_map, Rprec, bpref, recip_rank, iprec_at_recall, P, recall, ndcg, ndcg_cut, map_cut,
success, set_P, set_recall, set_F, infAP; "official" (the default set) and "all_trec" (all of these).
iprec_at_recall turns a recall level into a number of relevant documents as trec_eval 9 and
pytrec_eval do; iprec_at_recall_nearest rounds as trec_eval 10 does.

reports (--format json|markdown|html, --json, --markdown, --html, --junit): the measures under
score's names where score has them (P_10 is precision@10, recall_10 recall@10, success_10 hit@10,
ndcg_cut_10 ndcg@10, map_cut_10 map@10, recip_rank mrr, Rprec rprec; map, bpref, ndcg), trec_eval's
names otherwise, and the counts missing and unjudged. Several runs: the first is the baseline, and
each other one gets paired tests per metric over the queries (Holm-corrected), as compare does;
the text output then has one value column per run.

gates: [trec.gates] in ./gates.toml (or --gates-file), [tool.ragscore.trec.gates] in ./pyproject.toml,
then --gates, by either name; a gate on a measure -m leaves out computes it. exit status: 0 every
gate passed (or none is set), 1 a gate failed, 2 usage or input error, 3 internal error.
"""
FORMATS = ("text", "json", "markdown", "html", "none")


def trec_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="Score TREC runs against TREC qrels (or BEIR qrels TSV) and print what "
                                           "trec_eval prints, or ragscore's reports with gates.", epilog=EPILOG,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("qrels", metavar="QRELS", help="judgments: TREC qrels (qid iter docno rel) or BEIR qrels TSV")
    parser.add_argument("runs", metavar="RUN", nargs="+",
                        help="a TREC run (qid iter docno rank score run_tag); several: compared with the first")
    parser.add_argument("-q", dest="per_query", action="store_true",
                        help="also print each topic's values (in the JSON report: a queries list)")
    parser.add_argument("-c", dest="complete", action="store_true",
                        help="average over every judged topic (a topic the run lacks scores 0)")
    parser.add_argument("-M", dest="max_docs", type=positive_int, metavar="N",
                        help="keep the first N documents of each ranking")
    parser.add_argument("-l", dest="level", type=int, default=1, metavar="N",
                        help="the relevance level of the binary measures (default 1)")
    parser.add_argument("-m", dest="measures", action="append", default=[], metavar="NAME",
                        help="a measure, with parameters (P.5,10; ndcg_cut.10; all_trec); repeatable")
    reports = parser.add_argument_group("reports")
    add_report_options(reports, FORMATS,
                       format_help="what standard output shows (default: text, trec_eval's output; json, markdown "
                                   "and html: ragscore's report)")
    parser.set_defaults(format="text")
    reports.add_argument("--quiet", action="store_true", help="print no notes on standard error (errors still are)")
    gates = parser.add_argument_group("gates")
    gates.add_argument("--gates", metavar="SPEC",
                       help='gates, e.g. "ndcg@10>=0.6,P_5=0.4" (score\'s or trec_eval\'s names); METRIC=off '
                            "removes one")
    gates.add_argument("--gates-file", metavar="PATH", help="read [trec.gates] from PATH instead of ./gates.toml")
    gates.add_argument("--no-fail", action="store_true", help="exit 0 even when a gate fails (report only)")
    tests = parser.add_argument_group("paired tests (several runs)")
    tests.add_argument("--bootstrap", type=count, default=1000, metavar="N", help="bootstrap resamples (default 1000)")
    tests.add_argument("--seed", default="0", metavar="TEXT", help="seed of the bootstrap (default 0)")
    tests.add_argument("--confidence", type=confidence_level, default=0.95, metavar="C",
                       help="confidence of the intervals; 1 - C is the significance level (default 0.95)")
    return parser


def _check_inputs(args: argparse.Namespace) -> None:
    """Refuse two inputs on standard input, and a report path that is one of the input files."""
    inputs = [("QRELS", args.qrels)] + [("RUN", spec) for spec in args.runs]
    if [spec for _, spec in inputs].count("-") > 1:
        raise UsageError("only one of QRELS and RUN can be '-' (standard input)")
    for option in REPORT_OPTIONS:
        path: str | None = getattr(args, option, None)
        if path is None:
            continue
        for what, spec in inputs:
            try:
                same = spec != "-" and os.path.samefile(path, spec)
            except (OSError, ValueError):
                same = False
            if same:
                raise UsageError(f"--{option} {quote(path)}: is the same file as {what} {quote(spec)}; a report "
                                 "never overwrites an input")


def _listed(ids: list[str], limit: int = 5) -> str:
    return ", ".join(ids) if len(ids) <= limit else "e.g. " + ", ".join(ids[:limit])


def _document(args: argparse.Namespace, settings: TrecSettings, qrels: Qrels, scored: list[Scored],
              results: list[list[GateResult]]) -> dict[str, Any]:
    from ragscore.trec.document import build_comparison_document, build_trec_document

    if len(scored) == 1:
        return build_trec_document(settings, (args.qrels, qrels.sha256), scored[0], results[0], args.per_query)
    return build_comparison_document(settings, (args.qrels, qrels.sha256), qrels, scored, results, args.per_query)


def _notes(qrels: Qrels, runs: list[Run], scored: list[Scored], results: list[list[GateResult]],
           accounting: bool) -> list[str]:
    """Say which judged queries a run ranks nothing for, and which ranked ones no judgment names (with a report),
    then how each run's gates ended (when there are gates); a note names its run when there are several."""
    from ragscore.gates import gates_pass
    from ragscore.reports.common import clean
    from ragscore.reports.console import gate_lines
    from ragscore.trec.document import input_of, labels

    names = labels([s.run_id for s in scored], [input_of(s.spec, s.sha256)["path"] for s in scored])
    notes = []
    for label, run in zip(names, runs, strict=True) if accounting else ():
        missing = [qid for qid in qrels.topics if qid not in run.topics]
        unjudged = [qid for qid in run.topics if qid not in qrels.topics]
        if missing:
            notes.append(f"{label}: {len(missing)} judged {'query has' if len(missing) == 1 else 'queries have'} no "
                         f"ranking (missing: left out of the means as trec_eval leaves them; -c scores them 0): "
                         f"{_listed(missing)}")
        if unjudged:
            notes.append(f"{label}: {len(unjudged)} ranked {'query has' if len(unjudged) == 1 else 'queries have'} no "
                         f"judgments (unjudged: ignored, as trec_eval ignores them): {_listed(unjudged)}")
    for label, gate_results in zip(names, results, strict=True) if any(results) else ():
        lines = gate_lines(gate_results, gates_pass(gate_results))
        notes += lines if len(scored) == 1 else [f"{label}: {line}" for line in lines]
    return [clean(note) for note in notes]


def run_trec(args: argparse.Namespace, streams: Streams) -> Exit:
    """Print trec_eval's output for the runs (or a report), check the gates, write the report files."""
    import dataclasses

    from ragscore.gates import evaluate_gates, gates_pass
    from ragscore.trec.config import gated, load_trec_gates
    from ragscore.trec.files import read_qrels, read_run
    from ragscore.trec.measures import headed, parse_measures, render
    from ragscore.trec.scoring import OFFICIAL, TrecSettings, columns, printed, score_run, with_gated
    from ragscore.trec.text import render_runs

    _check_inputs(args)
    settings = TrecSettings(tuple(args.measures) or OFFICIAL, args.level, args.complete, args.max_docs,
                            args.confidence, args.bootstrap, args.seed)
    asked = parse_measures(args.measures)
    gates = load_trec_gates(args.gates, args.gates_file)
    chosen = with_gated(asked, gated(gates))
    qrels = read_qrels(args.qrels)
    runs = [read_run(spec, args.max_docs) for spec in args.runs]
    scored = [score_run(spec, qrels, run, chosen, settings) for spec, run in zip(args.runs, runs, strict=True)]
    results = [evaluate_gates(gates, s.metrics, False) for s in scored]
    wanted = args.format not in ("text", "none") or any(getattr(args, option) for option in REPORT_OPTIONS)
    doc = _document(args, settings, qrels, scored, results) if wanted else None
    if doc is not None:
        from ragscore.reports.trec_report import render_trec

        report = doc
        write_requested_reports(args, lambda option: render_trec(report, option))
    if not args.quiet and (gates or args.format != "text"):
        for note in _notes(qrels, runs, scored, results, args.format != "text"):
            streams.note(note)
    with standard_output(streams) as out:
        if args.format == "text":
            named = columns(asked, args.level)
            shown = [dataclasses.replace(printed(s.evaluated, s.columns, named), headed=headed(args.measures))
                     for s in scored]
            out.write(render(shown[0], args.per_query) if len(shown) == 1
                      else render_runs(shown, args.per_query, [n.trec or n.name for n in named]))
        elif args.format != "none" and doc is not None:
            from ragscore.reports.trec_report import render_trec

            out.writelines(render_trec(doc, args.format))
    return Exit.OK if all(gates_pass(r) for r in results) or args.no_fail else Exit.GATE_FAILED
