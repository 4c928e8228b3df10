"""The command line: one module per command, a thin dispatcher here; the only code that prints."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Final

from ragscore.cli.common import Exit, Streams, check_paths, one_line, silence_stdout
from ragscore.errors import RagscoreError
from ragscore.quoting import quote

__all__ = ["Exit", "main"]

Command = tuple[Callable[[str], argparse.ArgumentParser], Callable[[argparse.Namespace, Streams], Exit]]

# Subcommands by name: the function that imports each one's parser builder and runner. Scoring is the
# default. A command's module is imported when it runs, so that `ragscore trec` or `ragscore validate`
# does not import what scoring needs.

def _score() -> Command:
    from ragscore.cli.score import run_score, score_parser

    return score_parser, run_score


def _validate() -> Command:
    from ragscore.cli.tools import run_validate, validate_parser

    return validate_parser, run_validate


def _init() -> Command:
    from ragscore.cli.tools import init_parser, run_init

    return init_parser, run_init


def _schema() -> Command:
    from ragscore.cli.tools import run_schema, schema_parser

    return schema_parser, run_schema


def _compare() -> Command:
    from ragscore.cli.compare import compare_parser, run_compare

    return compare_parser, run_compare


def _ner() -> Command:
    from ragscore.cli.stages import ner_parser, run_ner

    return ner_parser, run_ner


def _classify() -> Command:
    from ragscore.cli.stages import classify_parser, run_classify

    return classify_parser, run_classify


def _link() -> Command:
    from ragscore.cli.stages import link_parser, run_link

    return link_parser, run_link


def _trec() -> Command:
    from ragscore.cli.trec import run_trec, trec_parser

    return trec_parser, run_trec


def _qrels() -> Command:
    from ragscore.cli.trec import qrels_parser, run_qrels

    return qrels_parser, run_qrels


def _partial() -> Command:
    from ragscore.cli.distributed import partial_parser, run_partial

    return partial_parser, run_partial


def _merge() -> Command:
    from ragscore.cli.distributed import merge_parser, run_merge

    return merge_parser, run_merge


def _monitor() -> Command:
    from ragscore.cli.monitor import monitor_parser, run_monitor

    return monitor_parser, run_monitor


def _agree() -> Command:
    from ragscore.cli.gold import agree_parser, run_agree

    return agree_parser, run_agree


def _judge() -> Command:
    from ragscore.cli.judge import judge_parser, run_judge

    return judge_parser, run_judge


def _split() -> Command:
    from ragscore.cli.gold import run_split, split_parser

    return split_parser, run_split


def _power() -> Command:
    from ragscore.cli.power import power_parser, run_power

    return power_parser, run_power


def _run() -> Command:
    from ragscore.cli.suite import run_parser, run_run

    return run_parser, run_run


def _dashboard() -> Command:
    from ragscore.cli.suite import dashboard_parser, run_dashboard

    return dashboard_parser, run_dashboard


_HOMES: Final[dict[str, Callable[[], Command]]] = {
    "score": _score,
    "validate": _validate,
    "init": _init,
    "schema": _schema,
    "compare": _compare,
    "ner": _ner,
    "classify": _classify,
    "link": _link,
    "trec": _trec,
    "qrels": _qrels,
    "partial": _partial,
    "merge": _merge,
    "monitor": _monitor,
    "judge": _judge,
    "agree": _agree,
    "split": _split,
    "power": _power,
    "run": _run,
    "dashboard": _dashboard,
}


class _Commands(Mapping[str, Command]):
    """The subcommands by name, each imported on first use."""

    def __getitem__(self, name: str) -> Command:
        return _HOMES[name]()

    def __iter__(self) -> Iterator[str]:
        return iter(_HOMES)

    def __len__(self) -> int:
        return len(_HOMES)


COMMANDS: Final = _Commands()
DEFAULT_COMMAND = "score"


def unknown_command(word: str) -> str:
    """Say that a first argument is no command, naming the nearest one (or, with none near, them all)."""
    import difflib

    near = difflib.get_close_matches(word, list(COMMANDS), n=1)
    if near:
        return f"unknown command {quote(word)}; did you mean {quote(near[0])}?"
    return f"unknown command {quote(word)}; the commands are {', '.join(COMMANDS)} (ragscore --help: what each does)"


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
    elif args and not args[0].startswith("-"):  # score takes no positional: a first word is a command's name
        streams.write_err(one_line(f"ragscore: error: {unknown_command(args[0])}"))
        return Exit.USAGE_ERROR
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
        check_paths(parser, namespace)
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
        import traceback  # only a bug pays for importing it

        traceback.print_exc(file=streams.err)
        return Exit.INTERNAL_ERROR
