"""The command line: one module per command, a thin dispatcher here; the only code that prints."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Sequence

from ragscore.cli.common import Exit, Streams
from ragscore.cli.compare import compare_parser, run_compare
from ragscore.cli.score import run_score, score_parser
from ragscore.cli.stages import classify_parser, link_parser, ner_parser, run_classify, run_link, run_ner
from ragscore.cli.tools import init_parser, run_init, run_schema, run_validate, schema_parser, validate_parser
from ragscore.errors import RagscoreError

__all__ = ["Exit", "main"]

# Subcommands by name: how to build each one's parser and how to run it. Scoring is the default.
COMMANDS: dict[str, tuple[Callable[[str], argparse.ArgumentParser], Callable[[argparse.Namespace, Streams], Exit]]] = {
    "score": (score_parser, run_score),
    "validate": (validate_parser, run_validate),
    "init": (init_parser, run_init),
    "schema": (schema_parser, run_schema),
    "compare": (compare_parser, run_compare),
    "ner": (ner_parser, run_ner),
    "classify": (classify_parser, run_classify),
    "link": (link_parser, run_link),
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
