"""Score large inputs on every core: one worker per share of the questions, merged exactly."""

from __future__ import annotations

import os
import signal
import stat
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Final, TypeVar

from ragscore.errors import InputError, RagscoreError
from ragscore.evaluate import evaluate, score_part
from ragscore.finish import merge
from ragscore.loaders.jsonl import STDIN, InputFile
from ragscore.loaders.records import Records
from ragscore.loaders.shapes import resolve, splittable
from ragscore.loaders.shards import Shards, paths_of
from ragscore.results import Evaluation, Spec, Wants
from ragscore.rows import RowFile, SpillError, SpillFolder
from ragscore.settings import Settings

# Below this many input bytes, starting processes costs more than it saves.
PARALLEL_MIN_BYTES: Final = 16 << 20
# More workers than this per core only add work (each one reads both files): --jobs is capped there.
JOBS_PER_CORE: Final = 4

T = TypeVar("T")


def available_cores() -> int:
    """Count the cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def max_jobs() -> int:
    """Return the most processes a run uses, whatever --jobs asks for."""
    return JOBS_PER_CORE * available_cores()


def choose_jobs(requested: int | None, *specs: str | Shards) -> int:
    """Decide how many processes to use: 1 for standard input, pipes or small files, else all cores."""
    paths = [path for spec in specs for path in paths_of(spec)]
    if STDIN in paths:
        return 1
    try:
        stats = [os.stat(path) for path in paths]
    except (OSError, ValueError):
        return 1  # a missing file: the loader reports it
    if not all(stat.S_ISREG(s.st_mode) for s in stats):
        return 1  # a pipe or a device can be read once only, by one process
    if requested is not None:
        return min(requested, max_jobs())
    return available_cores() if sum(s.st_size for s in stats) >= PARALLEL_MIN_BYTES else 1


def _ignore_interrupt() -> None:
    # Ctrl-C reaches the whole process group; only the parent handles it (and stops the pool).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The pool stops its workers with SIGTERM: they end at once, not through the parent's handler.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def run_parts(
    task: Callable[[int], T], jobs: int, specs: Sequence[str | Shards]
) -> tuple[list[T], tuple[InputFile, ...] | None]:
    """Run ``task`` for parts 0..jobs-1 in worker processes, hashing the input files meanwhile.

    Returns the parts' results in order and each of ``specs`` read whole and hashed (None when
    one of them cannot be read: a worker reports that).
    """
    import multiprocessing  # only a run in several processes pays for importing it

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    # Workers are born with SIGTERM's default action: a handler inherited from the parent (the
    # command line's) could swallow the SIGTERM that stops them while the pool starts.
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL) if in_main else None
    try:
        pool = context.Pool(jobs, initializer=_ignore_interrupt)
    except OSError as exc:  # fork failed: too many processes for this user, or too little memory
        raise RagscoreError(f"cannot start {jobs} worker processes: {exc.strerror or exc}; try fewer --jobs") from None
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
    with pool:
        pending = pool.map_async(task, range(jobs), chunksize=1)
        files: tuple[InputFile, ...] | None = tuple(InputFile(spec) for spec in specs)
        try:  # the parent hashes the inputs while the workers score them
            for file in files or ():
                file.digest_whole()
        except (OSError, InputError):
            files = None
        parts = pending.get()
    return parts, files


def score(gold_spec: Spec, trace_spec: Spec, settings: Settings, wants: Wants, jobs: int) -> Evaluation:
    """Score with ``jobs`` processes; the result is identical to one process's, byte for byte.

    Records given to the Python API are scored in one process, whatever ``jobs`` says: workers
    split files.
    """
    if isinstance(gold_spec, Records) or isinstance(trace_spec, Records):
        return evaluate(gold_spec, trace_spec, settings, wants)
    asked = settings  # errors say how "auto" read the traces, as one process's do
    if jobs > 1:  # every worker reads the traces in the same format: the first record's
        settings = replace(settings, trace_format=resolve(settings.trace_format, trace_spec))
    if jobs <= 1 or not splittable(settings.trace_format, settings.trace_fields, trace_spec):
        return evaluate(gold_spec, trace_spec, asked, wants)
    folder = SpillFolder() if wants.rows else None  # the workers write their rows there
    try:
        spill = None if folder is None else folder.path
    except SpillError:  # no usable temporary folder: the rows stay in memory, as they always could
        folder = spill = None
    task = partial(score_part, gold_spec, trace_spec, settings, wants, parts=jobs, asked=asked.trace_format,
                   spill=spill)
    parts, files = run_parts(task, jobs, (gold_spec, trace_spec))
    for p in parts:  # the rows hold the folder until the last pass over them
        if isinstance(p.rows, RowFile):
            p.rows.owner = folder
    if any(p.one_process for p in parts):
        # A trace joins by question text: only a process that holds every gold item can do that.
        return evaluate(gold_spec, trace_spec, asked, wants)
    if files is None:  # an input could not be read whole: a worker's error says why
        return merge(parts, InputFile(gold_spec), InputFile(trace_spec), settings, wants)
    gold, traces = files
    return merge(parts, gold, traces, settings, wants, (gold.sha256, traces.sha256))
