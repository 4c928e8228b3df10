"""What every command shares: exit statuses, output streams, argument types."""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TextIO


class Exit(IntEnum):
    """Exit statuses, documented in the README."""

    OK = 0
    GATE_FAILED = 1
    USAGE_ERROR = 2
    INTERNAL_ERROR = 3
    INTERRUPTED = 130


@dataclass(frozen=True, slots=True)
class Streams:
    """Where the command writes: the report and explanations to out, notes and errors to err."""

    out: TextIO
    err: TextIO

    def note(self, text: str) -> None:
        """Print one line of commentary on standard error."""
        print(f"ragscore: {text}", file=self.err)


def cutoff_list(text: str) -> tuple[int, ...]:
    """Read ``--cutoffs 1,3,5,10``: positive integers, sorted, each once."""
    cutoffs = tuple(sorted({positive_int(part) for part in text.split(",") if part.strip()}))
    if not cutoffs:
        raise argparse.ArgumentTypeError("expected positive integers separated by commas, such as 1,3,5,10")
    return cutoffs


def confidence_level(text: str) -> float:
    """Read a confidence strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """Read a positive integer option."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def silence_stdout() -> None:
    """Point standard output at the null device after its reader went away (``| head``).

    Python flushes standard output once more at exit; without this it would raise again there.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # not a real file (for example under a test's capture)
        pass


def lazy(module: str, name: str) -> Callable[..., Any]:
    """Name a function whose module is imported only when it is called (startup stays short)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    return call


def write_requested_reports(args: argparse.Namespace, renderers: Mapping[str, Callable[[], Iterable[str]]]) -> None:
    """Write the report of each option given (``--json PATH``, ``--markdown PATH``, ...): all of them, or none."""
    from ragscore.reports.files import write_reports

    write_reports({getattr(args, option): render() for option, render in renderers.items() if getattr(args, option, None)})
