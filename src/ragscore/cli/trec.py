"""The trec command: a drop-in for trec_eval on TREC (or BEIR) qrels and TREC runs; ragscore's reports and gates.
The qrels command: the TREC qrels of one chunking, from a gold set's spans."""

from __future__ import annotations

import argparse

from ragscore.cli.common import (
    INPUT_PATH,
    OUTPUT,
    Exit,
    Parser,
    PathArg,
    Streams,
    add_quiet_option,
    add_report_options,
    confidence_level,
    count,
    integer,
    positive_int,
    standard_output,
    write_requested_reports,
)
from ragscore.errors import UsageError

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
    parser.add_argument("qrels", type=INPUT_PATH, metavar="QRELS",
                        help="judgments: TREC qrels (qid iter docno rel) or BEIR qrels TSV")
    parser.add_argument("runs", type=INPUT_PATH, metavar="RUN", nargs="+",
                        help="a TREC run (qid iter docno rank score run_tag); several: compared with the first")
    parser.add_argument("-q", dest="per_query", action="store_true",
                        help="also print each topic's values (in the JSON report: a queries list)")
    parser.add_argument("-c", dest="complete", action="store_true",
                        help="average over every judged topic (a topic the run lacks scores 0)")
    parser.add_argument("-M", dest="max_docs", type=positive_int, metavar="N",
                        help="keep the first N documents of each ranking")
    parser.add_argument("-l", dest="level", type=integer, default=1, metavar="N",
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
    gates.add_argument("--gates-file", type=INPUT_PATH, metavar="PATH",
                       help="read [trec.gates] from PATH instead of ./gates.toml")
    gates.add_argument("--no-fail", action="store_true", help="exit 0 even when a gate fails (report only)")
    tests = parser.add_argument_group("paired tests (several runs)")
    tests.add_argument("--bootstrap", type=count, default=1000, metavar="N", help="bootstrap resamples (default 1000)")
    tests.add_argument("--seed", default="0", metavar="TEXT", help="seed of the bootstrap (default 0)")
    tests.add_argument("--confidence", type=confidence_level, default=0.95, metavar="C",
                       help="confidence of the intervals; 1 - C is the significance level (default 0.95)")
    return parser


def _check_inputs(args: argparse.Namespace) -> None:
    """Refuse two inputs on standard input (a report that would overwrite an input: the one check, cli.common)."""
    if [args.qrels, *args.runs].count("-") > 1:
        raise UsageError("only one of QRELS and RUN can be '-' (standard input)")


def run_trec(args: argparse.Namespace, streams: Streams) -> Exit:
    """Print trec_eval's output for the runs (or a report), check the gates, write the report files."""
    from ragscore.trec.api import score_trec

    _check_inputs(args)
    result = score_trec(args.qrels, args.runs, measures=args.measures, per_query=args.per_query,
                        complete=args.complete, max_docs=args.max_docs, level=args.level, gates=args.gates,
                        gates_file=args.gates_file, confidence=args.confidence, bootstrap=args.bootstrap,
                        seed=args.seed)
    write_requested_reports(args, result.render)
    if not args.quiet and (result.gate_results[0] or args.format != "text"):
        for note in result.notes(accounting=args.format != "text"):
            streams.note(note)
    with standard_output(streams) as out:
        if args.format != "none":
            out.writelines(result.render(args.format))
    return Exit.OK if result.passed or args.no_fail else Exit.GATE_FAILED


QRELS_EPILOG = """\
examples:
  ragscore qrels --gold gold.jsonl --chunks chunks.jsonl -o qrels.txt
  ragscore qrels --gold gold.jsonl --chunks chunks-512.jsonl --min-overlap 40 -o qrels-512.txt
  ragscore trec -m ndcg_cut.10 -m recall.10 qrels-512.txt run-512.txt

a chunk is relevant to a question when it holds a whole gold span it overlaps, or when at least
half of its own characters are gold characters (the rule score judges chunk ids by, with --chunks);
with --min-overlap C, when at least C of its characters are gold characters. Its grade is that of
the gold span it shares most characters with (of equal shares, the higher grade).

lines: qid 0 chunk_id grade, trec_eval's qrels; the questions in the gold set's order, each one's
chunks by document id, then start, end and chunk id. Only answerable questions with gold_spans get
lines: a note on standard error counts the others, and names the questions no chunk qualifies for.

exit status: 0 written, 2 usage or input error (nothing written), 3 internal error.
"""

# qrels' -o: a file written whole (or '-', standard output), never one of the inputs.
QRELS_PATH = PathArg(OUTPUT, "the qrels never overwrite an input")


def qrels_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="Write the TREC qrels of one chunking: for each answerable question with "
                                           "gold_spans, the chunks that hold its gold evidence, graded.",
                    epilog=QRELS_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", required=True, type=INPUT_PATH, metavar="PATH",
                        help="the gold set, with gold_spans: JSON Lines or a JSON array ('-' for standard input)")
    parser.add_argument("--chunks", required=True, type=INPUT_PATH, metavar="PATH",
                        help='the chunking: JSON Lines of {"id", "doc", "start", "end"} (character offsets into '
                             "the documents, end exclusive)")
    parser.add_argument("--min-overlap", type=positive_int, metavar="C",
                        help="a chunk is relevant when at least C of its characters are gold characters (default: "
                             "when it holds a whole gold span, or half its characters are gold)")
    parser.add_argument("-o", "--output", required=True, type=QRELS_PATH, metavar="PATH",
                        help="where to write the qrels ('-' for standard output); written whole or not at all")
    add_quiet_option(parser)
    return parser


def run_qrels(args: argparse.Namespace, streams: Streams) -> Exit:
    """Judge the chunks, write the qrels (atomically: all of them, or nothing), say what got no line."""
    from ragscore.reports.files import write_reports
    from ragscore.trec.api import qrels

    result = qrels(args.gold, args.chunks, min_overlap=args.min_overlap)
    if args.output == "-":
        with standard_output(streams) as out:
            out.writelines(result.lines())
    else:
        write_reports({args.output: result.lines()})
    if not args.quiet:
        for note in result.notes():
            streams.note(note)
    return Exit.OK
