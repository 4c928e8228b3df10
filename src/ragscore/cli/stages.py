"""The stage commands: ner, classify, link. Score one pipeline stage, gate, report."""

from __future__ import annotations

import argparse
from functools import partial

from ragscore.cli.common import (
    INPUT_PATH,
    Exit,
    Parser,
    Streams,
    add_quiet_option,
    add_report_options,
    cutoff_list,
    report_and_exit,
)
from ragscore.errors import UsageError
from ragscore.stages.api import STAGE_FORMATS
from ragscore.stages.conll import SCHEME_CHOICES
from ragscore.version import __version__

_SHAPES = {
    "ner": ('gold and predictions: {"id", "text", "entities": [{"start", "end", "type"}]} per line '
            "(character offsets into the gold text, end exclusive)"),
    "classify": 'gold and predictions: {"id", "label"} per line',
    "link": ('gold: {"id", "mention", "kb_id"} (kb_id null for NIL); predictions: '
             '{"id", "candidates": [{"kb_id", "score"}], "nil": true|false}'),
}
_FORMATS = {
    "ner": "how both files are written: auto (default: by extension: .conll .bio .iob .iob2 .iobes .bioes for CoNLL, "
           ".ann or a folder for BRAT, else JSON Lines), jsonl, conll, iob2, iobes, bioes or brat",
    "classify": "how both files are written: auto (default: .tsv, .csv with a header id,label, else JSON Lines), "
                "jsonl, tsv or csv",
    "link": "how both files are written: auto (default: .tsv, .csv with a header: gold id,mention,kb_id; predictions "
            "id,kb_id,score, a row per candidate; else JSON Lines), jsonl, tsv or csv",
}
_TITLES = {
    "ner": "Score named-entity extraction: strict and partial entity matching, token-level scores, type distribution.",
    "classify": "Score type classification: accuracy, per-class precision/recall/F1, confusion matrix.",
    "link": "Score entity linking: hits@K and MRR over ranked candidates, NIL detection.",
}
_EPILOG = """\
{shape}.
Lines are joined by "id"; a gold item without a prediction is scored as an empty prediction
and counted in "missing" (gated "missing <= 0" by default); unknown and repeated prediction ids
are counted and reported (the last line for an id counts).

example:
  ragscore {stage} --gold examples/stages/{stage}_gold.jsonl --pred examples/stages/{stage}_pred.jsonl \\
      --gates-file examples/stages/gates.toml --format text

gates: [{stage}.gates] in ./gates.toml (or --gates-file), [tool.ragscore.{stage}.gates] in
./pyproject.toml, then --gates. exit status: 0 every gate passed, 1 a gate failed,
2 usage or input error, 3 internal error.
"""


def stage_parser(stage: str, prog: str) -> argparse.ArgumentParser:
    """Build the parser of one stage command; the options mirror those of ``ragscore score``."""
    parser = Parser(
        prog=prog, description=_TITLES[stage], epilog=_EPILOG.format(stage=stage, shape=_SHAPES[stage]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"ragscore {__version__}")
    inputs = parser.add_argument_group("inputs")
    inputs.add_argument("--gold", required=True, type=INPUT_PATH, metavar="PATH",
                        help="gold file: JSON Lines, or a JSON array of objects ('-' for standard input)")
    inputs.add_argument("--pred", required=True, type=INPUT_PATH, metavar="PATH",
                        help="predictions, same forms ('-' for standard input)")
    inputs.add_argument("--input-format", choices=STAGE_FORMATS, default="auto", metavar="FORMAT",
                        help=_FORMATS[stage])
    if stage == "ner":
        inputs.add_argument("--scheme", choices=SCHEME_CHOICES, default="auto", metavar="SCHEME",
                            help="the tags' scheme in CoNLL files: auto (default: told from the tags, the report "
                                 "records which), iob1 (CoNLL-2003's: I- starts an entity unless it follows its "
                                 "own type), iob2, iobes or bilou")
    out = parser.add_argument_group("reports")
    add_report_options(out, ("json", "markdown", "text", "none"))
    add_quiet_option(out)
    gates = parser.add_argument_group("gates and settings")
    gates.add_argument("--gates", metavar="SPEC", help=f'gates, e.g. "{_example_gate(stage)}"; METRIC=off removes one')
    gates.add_argument("--gates-file", type=INPUT_PATH, metavar="PATH",
                       help=f"read [{stage}] and [{stage}.gates] from PATH instead of ./gates.toml")
    gates.add_argument("--no-fail", action="store_true", help="exit 0 even when a gate fails (report only)")
    gates.add_argument("--strict", action="store_true", default=None,
                       help="fail gates on undefined metrics instead of skipping them")
    if stage == "link":
        gates.add_argument("--cutoffs", type=cutoff_list, metavar="K,K,...", help="the K of hits@K (default 1,3,5,10)")
    return parser


def _example_gate(stage: str) -> str:
    return {"ner": "strict_f1=0.8,partial_f1>=0.9", "classify": "accuracy=0.9,macro_f1=0.8",
            "link": "hits@1=0.7,mrr=0.8,nil_f1=0.5"}[stage]


def run_stage(stage: str, args: argparse.Namespace, streams: Streams) -> Exit:
    """Score one stage, gate and report; raise RagscoreError on bad input before anything is written."""
    from ragscore.stages.api import STAGES

    if args.gold == "-" and args.pred == "-":
        raise UsageError("only one of --gold and --pred can be '-' (standard input)")
    options = {"cutoffs": args.cutoffs} if stage == "link" else {"scheme": args.scheme} if stage == "ner" else {}
    run = STAGES[stage](args.gold, args.pred, gates=args.gates, gates_file=args.gates_file, strict=args.strict,
                       input_format=args.input_format, **options)
    return report_and_exit(args, streams, run)


ner_parser = partial(stage_parser, "ner")
classify_parser = partial(stage_parser, "classify")
link_parser = partial(stage_parser, "link")
run_ner = partial(run_stage, "ner")
run_classify = partial(run_stage, "classify")
run_link = partial(run_stage, "link")
