"""What every command shares: exit statuses, output streams, argument types."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from enum import IntEnum
from typing import IO, TYPE_CHECKING, Any, Final, NoReturn, Protocol, TextIO, TypeVar, cast, overload

from ragscore.errors import RagscoreError, UsageError
from ragscore.loaders.shards import expand, paths_of
from ragscore.numbers import decimal
from ragscore.quoting import quote, shorten, show_value, visible
from ragscore.settings import MAX_CUTOFF, cutoff_problem

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

_N = TypeVar("_N")

# Longest line printed on standard error; a longer one keeps its start and end.
MESSAGE_LIMIT: Final = 2000


class Exit(IntEnum):
    """Exit statuses, documented in docs/ci.md ("Exit status")."""

    OK = 0
    GATE_FAILED = 1
    USAGE_ERROR = 2
    INTERNAL_ERROR = 3
    INTERRUPTED = 130
    TERMINATED = 143


@dataclass(frozen=True, slots=True)
class Streams:
    """Where the command writes: the report and explanations to out, notes and errors to err."""

    out: TextIO
    err: TextIO

    def note(self, text: str) -> None:
        """Print one line of commentary on standard error."""
        self.write_err(one_line(f"ragscore: {text}"))

    def write_err(self, line: str) -> None:
        """Print a line on standard error; when that cannot be written (``2>/dev/full``) the exit status still tells."""
        with suppress(OSError):
            print(line, file=self.err, flush=True)


def one_line(message: str) -> str:
    """Make a message exactly one line with no control character, of bounded length, whatever input text it quotes.

    Under GitHub Actions a line that starts with ``::`` is a workflow command: no input text may
    start a line. Each call site quotes its input text already; this is the guarantee at the edge.
    """
    # Escapes first (they lengthen the text); the marker of what was left out fits in the limit.
    return shorten(visible(message), MESSAGE_LIMIT - 40)


# Where a namespace keeps, during one parse, the single-valued options given so far (see _StoreOnce).
_GIVEN: Final = "_ragscore_options_given"


def _shown(value: object) -> str:
    """Show an option's value (as its type read it) in a message: quoted, escaped, bounded."""
    if isinstance(value, (tuple, list)):
        value = ",".join(map(str, value))
    return quote(value)


class _StoreOnce(argparse._StoreAction):
    """argparse's store action, refusing an option given twice (``--trace a --trace b`` would keep only b).

    Only options that take one value: positionals, options with ``nargs``, ``append`` options
    and flags keep argparse's behaviour. Defaults are set without the action, so they never count.
    """

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if self.option_strings and self.nargs is None:
            given = namespace.__dict__.setdefault(_GIVEN, {})
            if self.dest in given:
                name = max(self.option_strings, key=len)  # --jobs, not -j; the full name, not an abbreviation
                what = "one path" if self.metavar == "PATH" else "one value"
                message = f"{name} given twice ({_shown(given[self.dest])}, then {_shown(values)}); it takes {what}"
                if isinstance(parser, Parser):
                    parser.fail(message)
                raise argparse.ArgumentError(self, message)
            given[self.dest] = values
        super().__call__(parser, namespace, values, option_string)


class Parser(argparse.ArgumentParser):
    """argparse, with its usage errors held to one line like every other message (they quote arguments), and a
    line pointing at ``--help`` in place of the usage block.

    A single-valued option given twice is a usage error (``_StoreOnce``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    # The overloads of argparse's own (typeshed's): a namespace given is the one returned.
    @overload
    def parse_known_args(
        self, args: Iterable[str] | None = None, namespace: None = None
    ) -> tuple[argparse.Namespace, list[str]]: ...
    @overload
    def parse_known_args(self, args: Iterable[str] | None, namespace: _N) -> tuple[_N, list[str]]: ...
    @overload
    def parse_known_args(self, *, namespace: _N) -> tuple[_N, list[str]]: ...
    def parse_known_args(self, args: Iterable[str] | None = None, namespace: object = None) -> tuple[object, list[str]]:
        parsed, rest = super().parse_known_args(args, namespace)
        parsed.__dict__.pop(_GIVEN, None)
        return parsed, rest

    def error(self, message: str) -> NoReturn:
        """Exit with argparse's usage error: where the usage is told, in place of the usage block, then the error,
        which stays the last line."""
        self.exit(Exit.USAGE_ERROR, one_line(f"{self.prog}: see '{self.prog} --help'") + "\n"
                  + one_line(f"{self.prog}: error: {message}") + "\n")

    def fail(self, message: str) -> NoReturn:
        """Exit with a usage error of one line, without the usage (for errors the usage does not explain)."""
        self.exit(Exit.USAGE_ERROR, one_line(f"{self.prog}: error: {message}") + "\n")

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        # argparse ignores a failed write: --help > /dev/full would exit 0 having printed nothing.
        # A failed write on standard output is raised (main makes it one error); on standard error
        # it is dropped, so that a usage error still exits 2. A closed stream (None) takes nothing.
        if not message or file is None:
            return
        try:
            file.write(message)
            cast("IO[str]", file).flush()  # argparse prints on sys.stdout or sys.stderr
        except OSError:
            if file is not sys.stderr:
                raise


def cutoff_list(text: str) -> tuple[int, ...]:
    """Read ``--cutoffs 1,3,5,10``: positive integers, sorted, each once."""
    cutoffs = tuple(sorted({positive_int(part) for part in text.split(",") if part.strip()}))
    if not cutoffs:
        raise argparse.ArgumentTypeError("expected positive integers separated by commas, such as 1,3,5,10")
    problem = cutoff_problem(cutoffs)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"expected {problem}")
    return cutoffs


def session_field(text: str) -> str:
    """Read ``--session FIELD``: a field name, keys joined by dots."""
    from ragscore.settings import session_problem

    problem = session_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"expected {problem}, got {show_value(text)}")
    return text


def count(text: str) -> int:
    """Read a count option (``--k``, ``--bootstrap``): a positive integer up to MAX_CUTOFF, as in [scoring]."""
    value = positive_int(text)
    if value > MAX_CUTOFF:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer of at most {MAX_CUTOFF:,}, got {show_value(text)}")
    return value


def confidence_level(text: str) -> float:
    """Read a confidence strictly between 0 and 1."""
    value = decimal(text)
    if value is None or not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, got {show_value(text)}")
    return value


# An integer as written on a command line: ASCII digits, perhaps a sign. Python's int() also takes
# "1_0" (10, where C's atol, and so trec_eval, reads 1) and other scripts' digits.
_INTEGER_RE: Final = re.compile(r"\s*[+-]?[0-9]{1,4000}\s*")


def integer(text: str) -> int:
    """Read an integer option (``-l``), written in ASCII digits."""
    if _INTEGER_RE.fullmatch(text) is None:
        raise argparse.ArgumentTypeError(f"expected an integer, got {show_value(text)}")
    return int(text)


def positive_int(text: str) -> int:
    """Read a positive integer option, written in ASCII digits."""
    if _INTEGER_RE.fullmatch(text) is None or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {show_value(text)}")
    return int(text)


def silence_stdout() -> None:
    """Point standard output at the null device after its reader went away (``| head``).

    Python flushes standard output once more at exit; without this it would raise again there.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # not a real file (for example under a test's capture)
        pass


@contextmanager
def standard_output(streams: Streams) -> Iterator[TextIO]:
    """Write the report on standard output: a closed pipe (``| head``) ends it quietly, a failed write
    (``> /dev/full``) is one line of error, never a traceback."""
    try:
        yield streams.out
        streams.out.flush()
    except BrokenPipeError:
        silence_stdout()
    except OSError as exc:
        silence_stdout()  # what is still buffered goes nowhere, instead of failing again at exit
        raise RagscoreError(f"standard output: cannot write: {exc.strerror or exc}") from None


def note_capped_jobs(args: argparse.Namespace, streams: Streams) -> None:
    """Say so when --jobs asks for more processes than a run uses (parallel.max_jobs)."""
    from ragscore.parallel import JOBS_PER_CORE, max_jobs

    if args.jobs is not None and args.jobs > max_jobs() and not args.quiet:
        streams.note(f"--jobs {args.jobs}: using {max_jobs()} processes ({JOBS_PER_CORE} per core; "
                     "more only add work, since each reads both files)")


INPUT: Final = "input"
OUTPUT: Final = "output"
REPORT_RULE: Final = "a report never overwrites an input or another report"


@dataclass(frozen=True, slots=True)
class PathArg:
    """The argparse ``type`` of every option and positional that names a file: it keeps the text as
    given, and says what the command does with the file, so that ``check_paths`` knows every input
    and every output of every command from its parser alone.

    ``role``: INPUT (read; a folder or a glob: its files) or OUTPUT (written or appended to).
    ``rule``: what the message of a refused output says it never does. ``files``: an output folder's
    files, from the parsed arguments (``split --out``), each checked as an output of its own.
    """

    role: str
    rule: str = REPORT_RULE
    files: Callable[[argparse.Namespace], list[str]] | None = None

    def __call__(self, text: str) -> str:
        return text


INPUT_PATH: Final = PathArg(INPUT)
REPORT_PATH: Final = PathArg(OUTPUT)

# The options that name the reports a command writes.
REPORT_OPTIONS: Final = ("json", "markdown", "html", "junit", "openmetrics", "sarif")
# The files add_pull_request_options adds, by dest, and their formats.
PULL_REQUEST_FILES: Final = {"pr_comment": "pr-comment", "badge": "badge"}
# The report files a command writes unless it names its own (only monitor writes OpenMetrics).
REPORT_FILES: Final = ("json", "markdown", "html", "junit")
# Each report option's help, unless a command words it for what it writes.
REPORT_HELP: Final = {
    "json": "also write the JSON report to PATH",
    "markdown": "also write the Markdown report to PATH",
    "html": "also write a self-contained HTML report to PATH",
    "junit": "also write JUnit XML to PATH: a test case per gate",
    "openmetrics": "also write the metrics in the OpenMetrics (Prometheus) text format to PATH",
}
FORMAT_HELP: Final = "report printed on standard output (default: json)"
QUIET_HELP: Final = "print no notes on standard error (errors still are)"


def add_report_options(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, formats: tuple[str, ...], *,
    files: tuple[str, ...] = REPORT_FILES, format_help: str = FORMAT_HELP, helps: Mapping[str, str] | None = None,
) -> None:
    """Add the report options the commands share: ``--format`` (of ``formats``, default json, what standard
    output shows) and ``--json PATH``, ``--markdown PATH``, ... for each of ``files`` (of ``REPORT_OPTIONS``).

    ``helps`` words an option's help for this command (a comparison, not a report).
    """
    parser.add_argument("--format", choices=formats, default="json", help=format_help)
    for option in files:
        parser.add_argument(f"--{option}", type=REPORT_PATH, metavar="PATH",
                            help=(helps or {}).get(option, REPORT_HELP[option]))


def lists_questions(args: argparse.Namespace) -> bool:
    """Whether a score or merge report lists the questions (and so needs their rows)."""
    return bool(args.per_question or args.only_failures or args.markdown or args.html or args.pr_comment
                or args.format in ("markdown", "pr-comment"))


def add_pull_request_options(group: Any, what: str = "the gold file's name without its extensions",
                             metric: str = "this metric's") -> None:
    """Add --pr-comment, --comment-key, --badge and --badge-metric (score, merge, compare, run, monitor)."""
    group.add_argument("--pr-comment", type=REPORT_PATH, metavar="PATH",
                       help="also write a pull-request comment to PATH: Markdown whose last line is a hidden marker "
                            "the GitHub Action updates the one comment by (--format pr-comment prints it)")
    group.add_argument("--comment-key", metavar="KEY", help=f"the comment's marker (default: {what})")
    group.add_argument("--badge", type=REPORT_PATH, metavar="PATH",
                       help="also write a shields.io endpoint badge (JSON) of the verdict to PATH")
    group.add_argument("--badge-metric", metavar="METRIC",
                       help=f"the badge shows {metric} value instead, coloured by its gate")


class Commented(Protocol):
    """A result that gives a pull-request comment and a badge (score, merge, compare, run, monitor)."""

    def comment(self, key: str | None = None) -> Iterable[str]: ...

    def badge(self, metric: str | None = None) -> Iterable[str]: ...


def with_pull_request(args: argparse.Namespace, result: object, render: Callable[[str], Iterable[str]]
                      ) -> Callable[[str], Iterable[str]]:
    """``render``, but a pull-request comment and a badge as ``--comment-key`` and ``--badge-metric`` say (a command
    without those options renders as it did)."""
    if not hasattr(args, "comment_key"):
        return render
    commented = cast(Commented, result)

    def rendered(fmt: str) -> Iterable[str]:
        if fmt == "pr-comment":
            return commented.comment(args.comment_key)
        if fmt == "badge":
            return commented.badge(args.badge_metric)
        return render(fmt)

    return rendered


def add_html_rows_option(group: Any) -> None:
    """Add --html-rows N: the questions of each label the HTML report's question table lists."""
    group.add_argument("--html-rows", type=positive_int, default=1000, metavar="N",
                       help="list at most N questions of each label in the HTML report's question table (default "
                            "1,000; a note says how many it leaves out; the JSON report lists every one)")


def add_quiet_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, help: str = QUIET_HELP) -> None:
    """Add ``-q``/``--quiet``: no notes on standard error."""
    parser.add_argument("-q", "--quiet", action="store_true", help=help)


def _files_named(path: str) -> list[str]:
    """The files an input option names: a folder's or a glob's (as --trace reads them), else the path."""
    try:
        return [path, *paths_of(expand([path]))]
    except RagscoreError:  # nothing matches, or an empty folder: the input's own error says so, later
        return [path]


# The settings files a command with --gates-file reads from the folder it runs in, unless --gates-file names one.
_SETTINGS_FILES: Final = ("gates.toml", "pyproject.toml")


def path_actions(parser: argparse.ArgumentParser) -> list[tuple[argparse.Action, PathArg]]:
    """Every option and positional of a command that names a file, with what the command does with it."""
    return [(action, action.type) for action in parser._actions if isinstance(action.type, PathArg)]


def path_label(action: argparse.Action, path: str) -> str:
    """How a message names a path's option: ``--gold``; a positional by its metavar and path: ``GOLD "a.jsonl"``."""
    if action.option_strings:
        return max(action.option_strings, key=len)
    return f"{action.metavar or action.dest.upper()} {quote(path)}"


def _given(args: argparse.Namespace, action: argparse.Action) -> list[str]:
    value = getattr(args, action.dest, None)
    return [path for path in (value if isinstance(value, list) else [value]) if isinstance(path, str)]


def check_paths(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse an output that is an input (or another output), before anything is read or written.

    The paths are the command's own, each classified where it is declared (``INPUT_PATH``,
    ``REPORT_PATH``, ``PathArg``): an option added without saying what it is fails the contract
    test, so no output escapes the check. Files are compared by device and inode, so another
    spelling of the same path, a hard link or a symbolic link is caught too. A character device
    (``/dev/null``) may be named more than once; ``-`` (standard output) is no file, and no report option's.
    """
    from ragscore.reports.files import first_overwrite

    inputs: list[tuple[str, str]] = []
    outputs: list[tuple[str, str]] = []
    rules: dict[str, str] = {}
    for action, kind in path_actions(parser):
        for path in _given(args, action):
            if kind.role == INPUT:
                if path:
                    inputs += [(path_label(action, path), file) for file in _files_named(path)]
                continue
            label = max(action.option_strings, key=len) if action.option_strings else str(action.metavar)
            if path == "-":
                if action.dest in (*REPORT_OPTIONS, *PULL_REQUEST_FILES):  # else a file named "-", and two collide
                    raise UsageError(f"{label} \"-\": a report option names a file; --format prints a report on "
                                     "standard output (or name /dev/stdout)")
                continue
            if not path.strip():
                raise UsageError(f"{label}: expected a {'folder' if kind.files else 'file'} path, got {quote(path)}")
            rules[label] = kind.rule
            outputs += [(label, file) for file in (kind.files(args) if kind.files else [path])]
    reads_settings = any(action.dest == "gates_file" for action in parser._actions)
    if reads_settings and getattr(args, "gates_file", None) is None:  # read from the folder ragscore runs in
        inputs += [(name, name) for name in _SETTINGS_FILES if os.path.exists(name)]
    if os.environ.get("GITHUB_ACTIONS") == "true" and os.environ.get("GITHUB_STEP_SUMMARY"):
        outputs.append(("GITHUB_STEP_SUMMARY", os.environ["GITHUB_STEP_SUMMARY"]))
        rules["GITHUB_STEP_SUMMARY"] = REPORT_RULE
    clash = first_overwrite(inputs, outputs)
    if clash is not None:
        label, path, other = clash
        what = f"the file {other}" if other in _SETTINGS_FILES else f"the same file as {other}"
        raise UsageError(f"{label} {quote(path)}: is {what}; {rules[label]}")


def write_requested_reports(args: argparse.Namespace, render: Callable[[str], Iterable[str]]) -> None:
    """Write the report of each report option given (``--json PATH``, ``--markdown PATH``, ...): all of them, or none.

    ``render(option)`` renders the report in that option's format.
    """
    from ragscore.reports.files import write_reports

    files = {path: render(option) for option in REPORT_OPTIONS if (path := getattr(args, option, None))}
    for option, fmt in PULL_REQUEST_FILES.items():
        if path := getattr(args, option, None):
            files[path] = render(fmt)
    write_reports(files)


class Reported(Protocol):
    """What a command's result gives the command line: its reports, its notes, its verdict."""

    @property
    def passed(self) -> bool: ...

    def render(self, format: str = "json") -> Iterable[str]: ...

    def notes(self) -> list[str]: ...


def report_and_exit(args: argparse.Namespace, streams: Streams, result: Reported) -> Exit:
    """Write the report files asked for, print the notes (unless --quiet) and the report on standard
    output (unless --format none); exit 0 when the result passed (or --no-fail), else 1."""
    render = with_pull_request(args, result, result.render)
    write_requested_reports(args, render)
    if not args.quiet:
        for line in result.notes():
            streams.note(line)
    with standard_output(streams) as out:
        if args.format != "none":
            out.writelines(render(args.format))
    return Exit.OK if result.passed or args.no_fail else Exit.GATE_FAILED


def add_trace_options(group: Any, format_help: str, map_help: str) -> None:
    """Add --trace-format and --map (how trace records are read) to a parser or one of its groups;
    ``format_help`` ("how the traces are written") is followed by the formats."""
    from ragscore.loaders.shapes import CHOICES, FORMATS

    formats = f"{', '.join(FORMATS[:-1])} or {FORMATS[-1]}"
    group.add_argument("--trace-format", choices=CHOICES, metavar="NAME",
                       help=f"{format_help}: auto (default: from the first record), {formats}")
    group.add_argument("--map", action="append", default=[], metavar="CONCEPT=PATH", help=map_help)


def add_corpus_option(group: Any) -> None:
    """Add --corpus (passage texts by id)."""
    group.add_argument("--corpus", type=INPUT_PATH, metavar="PATH",
                       help="passage texts by id, for --metrics grounding and traces that log texts without ids: "
                            "BEIR's corpus.jsonl (_id, title, text) or JSON Lines with id and text ([inputs] corpus)")


def add_chunks_option(group: Any) -> None:
    """Add --chunks (one chunking of the documents: chunk ids as spans)."""
    group.add_argument("--chunks", type=INPUT_PATH, metavar="PATH",
                       help='one chunking of the documents, JSON Lines of {"id", "doc", "start", "end"}: the spans '
                            "the traces' chunk ids hold, for gold_spans ([inputs] chunks)")
