"""The trec command: a drop-in for trec_eval on TREC (or BEIR) qrels and a TREC run."""

from __future__ import annotations

import argparse

from ragscore.cli.common import Exit, Parser, Streams, positive_int, standard_output

EPILOG = """\
examples:
  ragscore trec qrels.txt run.txt                     trec_eval's default measures
  ragscore trec -q -m ndcg_cut.10 -m P.5,10 qrels.txt run.txt
  ragscore trec -c -M 100 -m all_trec qrels.tsv run.txt

measures (-m, repeatable; parameters after a dot, as in trec_eval): num_ret, num_rel, num_rel_ret,
map, gm_map, Rprec, bpref, recip_rank, iprec_at_recall, P, recall, ndcg, ndcg_cut, map_cut,
success, set_P, set_recall, set_F, infAP; "official" (the default set) and "all_trec" (all of these).
iprec_at_recall turns a recall level into a number of relevant documents as trec_eval 9 and
pytrec_eval do; iprec_at_recall_nearest rounds as trec_eval 10 does.
"""


def trec_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="Score a TREC run against TREC qrels (or BEIR qrels TSV) and print what "
                                           "trec_eval prints.", epilog=EPILOG,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("qrels", metavar="QRELS", help="judgments: TREC qrels (qid iter docno rel) or BEIR qrels TSV")
    parser.add_argument("run", metavar="RUN", help="a TREC run (qid iter docno rank score run_tag)")
    parser.add_argument("-q", dest="per_query", action="store_true", help="also print each topic's values")
    parser.add_argument("-c", dest="complete", action="store_true",
                        help="average over every judged topic (a topic the run lacks scores 0)")
    parser.add_argument("-M", dest="max_docs", type=positive_int, metavar="N",
                        help="keep the first N documents of each ranking")
    parser.add_argument("-l", dest="level", type=int, default=1, metavar="N",
                        help="the relevance level of the binary measures (default 1)")
    parser.add_argument("-m", dest="measures", action="append", default=[], metavar="NAME",
                        help="a measure, with parameters (P.5,10; ndcg_cut.10; all_trec); repeatable")
    return parser


def run_trec(args: argparse.Namespace, streams: Streams) -> Exit:
    """Print trec_eval's output for the run."""
    import dataclasses

    from ragscore.trec.files import read_qrels, read_run
    from ragscore.trec.measures import evaluate, headed, parse_measures, render

    measures = parse_measures(args.measures)
    qrels, run = read_qrels(args.qrels), read_run(args.run, args.max_docs)
    evaluated = evaluate(qrels.topics, run.topics, run.name, measures, args.level, args.complete)
    with standard_output(streams) as out:
        out.write(render(dataclasses.replace(evaluated, headed=headed(args.measures)), args.per_query))
    return Exit.OK
