"""The gold-set commands: agree (annotators' agreement) and split (stratified splits)."""

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
    positive_int,
    report_and_exit,
)
from ragscore.errors import UsageError


def agree_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="Compare two or more annotators' gold files (the same questions, by "
                    "qid): Cohen's kappa and Krippendorff's alpha on answerable and on each --field, Jaccard and "
                    "exact agreement on gold_citations, and the questions they disagree on. Or calibrate an LLM "
                    "judge: --judge SCORES --human LABELS, kappa and alpha on each criterion both files have, as its "
                    "scale says.")
    parser.add_argument("annotations", nargs="*", type=INPUT_PATH, metavar="GOLD",
                        help="each annotator's gold file (each file once; two or more, or none with --judge)")
    parser.add_argument("--field", action="append", default=[], metavar="FIELD",
                        help="another gold field to measure agreement on (a dotted path, as --by; repeatable)")
    judge = parser.add_argument_group("a judge against human labels")
    judge.add_argument("--judge", type=INPUT_PATH, metavar="SCORES",
                       help="the judge's scores file (ragscore judge's JSON Lines, or CSV or JSON Lines: qid and a "
                            "score per criterion)")
    judge.add_argument("--human", type=INPUT_PATH, metavar="LABELS",
                       help="the human labels of the same questions, a scores file on the same scales")
    judge.add_argument("--scale", action="append", default=[], metavar="NAME=SCALE",
                       help="a criterion's scale, 0-1, 1-5 or pass/fail (default: the judge file's header; "
                            "repeatable)")
    parser.add_argument("--gates", metavar="SPEC", help='gates on the measures, e.g. "kappa=0.85,citation_jaccard=0.8" '
                        'or "kappa_faithfulness=0.6"')
    parser.add_argument("--strict", action="store_true", help="fail gates on undefined measures")
    add_report_options(parser, ("json", "markdown", "none"), files=("json", "markdown"))
    parser.add_argument("--no-fail", action="store_true", help="exit 0 even when a gate fails")
    add_quiet_option(parser)
    return parser


def run_agree(args: argparse.Namespace, streams: Streams) -> Exit:
    """Measure the agreement (of gold files, or of a judge and human labels), check the gates, report."""
    from ragscore.goldset.api import agree, agree_judge
    from ragscore.goldset.calibration import parse_scales

    judged = args.judge is not None or args.human is not None
    if judged and args.annotations:
        raise UsageError("agree: give either GOLD files or --judge and --human, not both")
    if not judged:
        if args.scale:
            raise UsageError("agree: --scale is for --judge SCORES --human LABELS")
        if not args.annotations:
            raise UsageError("agree: give two or more annotators' GOLD files, or --judge SCORES and --human LABELS")
        return report_and_exit(args, streams, agree(args.annotations, fields=args.field, gates=args.gates,
                                                    strict=args.strict))
    if args.judge is None or args.human is None:
        given, missing = ("--judge", "--human") if args.human is None else ("--human", "--judge")
        raise UsageError(f"agree: {given} needs {missing}: the judge's scores and the human labels")
    if args.field:
        raise UsageError("agree: --field is for GOLD files; with --judge the criteria are the score names both "
                         "files have")
    return report_and_exit(args, streams, agree_judge(args.judge, args.human, scales=parse_scales(args.scale),
                                                      gates=args.gates, strict=args.strict))


def _ratios(args: argparse.Namespace) -> list[int]:
    try:
        return [positive_int(part) for part in args.ratios.split(",")]
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--ratios: {exc}") from None


def _names(args: argparse.Namespace) -> list[str] | None:
    return [n.strip() for n in args.names.split(",")] if args.names else None


def _split_files(args: argparse.Namespace) -> list[str]:
    """The files split writes: each NAME.jsonl in the folder --out names."""
    from ragscore.goldset.agreement import split_names, split_paths

    return split_paths(args.out, split_names(_ratios(args), _names(args)), "--out")


# split's --out: a folder, whose files the overwrite check compares with the gold set.
SPLIT_FOLDER = PathArg(OUTPUT, "a split never overwrites an input", files=_split_files)


def split_parser(prog: str) -> argparse.ArgumentParser:
    parser = Parser(prog=prog, description="Split a JSON Lines gold set into stratified files: every stratum of "
                    "the --by fields in the ratios, to within one item; the same seed, the same files.")
    parser.add_argument("--gold", required=True, type=INPUT_PATH, metavar="PATH", help="the gold set (JSON Lines)")
    parser.add_argument("--by", action="append", default=[], metavar="FIELD",
                        help="a gold field to stratify by (a dotted path; repeatable)")
    parser.add_argument("--ratios", default="70,15,15", metavar="R,R,...",
                        help="the files' shares, whole numbers (default 70,15,15: train, dev, test)")
    parser.add_argument("--names", metavar="NAME,NAME,...", help="the files' names (default train,dev,test or "
                        "train,test)")
    parser.add_argument("--seed", default="0", metavar="TEXT", help="the seed of the order within each stratum")
    parser.add_argument("--out", required=True, type=SPLIT_FOLDER, metavar="DIR",
                        help="the folder to write NAME.jsonl files in (made when missing; a file there is replaced, "
                             "never the gold set)")
    add_quiet_option(parser)
    return parser


def run_split(args: argparse.Namespace, streams: Streams) -> Exit:
    """Write the splits and say how many items each got."""
    from ragscore.goldset.api import split

    counts = split(args.gold, args.out, by=args.by, ratios=_ratios(args), seed=args.seed, names=_names(args))
    if not args.quiet:
        for name, count in counts.items():
            streams.note(f"{name}: {count} items -> {args.out.rstrip('/')}/{name}.jsonl")
    return Exit.OK
