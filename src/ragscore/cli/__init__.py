"""The command line: one module per command, a thin dispatcher here; the only code that prints."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Sequence

from ragscore.cli.common import Exit, Streams, check_report_paths, one_line, silence_stdout
from ragscore.cli.compare import compare_parser, run_compare
from ragscore.cli.distributed import merge_parser, partial_parser, run_merge, run_partial
from ragscore.cli.score import run_score, score_parser
from ragscore.cli.stages import classify_parser, link_parser, ner_parser, run_classify, run_link, run_ner
from ragscore.cli.tools import init_parser, run_init, run_schema, run_validate, schema_parser, validate_parser
from ragscore.cli.trec import run_trec, trec_parser
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
    "trec": (trec_parser, run_trec),
    "partial": (partial_parser, run_partial),
    "merge": (merge_parser, run_merge),
}
DEFAULT_COMMAND = "score"


class Terminated(BaseException):
    """SIGTERM arrived: unwind like Ctrl-C, so that half-written reports are removed on the way out."""


_MAIN_PID = os.getpid()


def _terminate(signum: int, frame: object) -> None:
    if os.getpid() != _MAIN_PID:  # a forked worker before its own setup: end as SIGTERM ends any process
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return the exit status."""
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        return _main(argv)
    global _MAIN_PID
    _MAIN_PID = os.getpid()
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return _main(argv)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main(argv: Sequence[str] | None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    # A stream the shell closed (">&-") is None: like a closed pipe, what goes there is dropped. No with:
    # the null device stands in for the stream for as long as the process runs.
    streams = Streams(sys.stdout or open(os.devnull, "w"), sys.stderr or open(os.devnull, "w"))  # noqa: SIM115
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
    except BrokenPipeError:  # --help | head -1
        silence_stdout()
        return Exit.OK
    except OSError as exc:  # --help > /dev/full
        silence_stdout()
        streams.write_err(one_line(f"ragscore: error: standard output: cannot write: {exc.strerror or exc}"))
        return Exit.USAGE_ERROR
    try:
        check_report_paths(namespace)
        return int(run(namespace, streams))
    except RagscoreError as exc:
        streams.write_err(one_line(f"ragscore: error: {exc}"))
        return Exit.USAGE_ERROR
    except KeyboardInterrupt:
        print("ragscore: interrupted", file=streams.err)
        return Exit.INTERRUPTED
    except Terminated:
        print("ragscore: terminated", file=streams.err)
        return Exit.TERMINATED
    except Exception:  # a bug: say so, with the traceback a report needs, and not as a gate failure
        print("ragscore: internal error (a bug in ragscore; please report it with this output):", file=streams.err)
        traceback.print_exc(file=streams.err)
        return Exit.INTERNAL_ERROR
