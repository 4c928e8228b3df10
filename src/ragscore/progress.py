"""A progress line on a terminal, for runs that take more than a second."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final, TextIO

DELAY: Final = 1.0      # runs shorter than this show nothing
INTERVAL: Final = 0.5


@contextmanager
def progress_line(stream: TextIO, label: str, *, enabled: bool) -> Iterator[None]:
    """Show ``label`` and the elapsed time on ``stream``, rewritten in place, until the block ends.

    A thread does it, so the work itself carries no progress bookkeeping; the line is erased at
    the end, so nothing of it stays in a log.
    """
    if not enabled:
        yield
        return
    done = threading.Event()
    start = time.monotonic()
    shown = False

    def show() -> None:
        nonlocal shown
        if done.wait(DELAY):
            return
        while not done.is_set():
            stream.write(f"\rragscore: {label}, {time.monotonic() - start:.0f} s")
            stream.flush()
            shown = True
            done.wait(INTERVAL)

    thread = threading.Thread(target=show, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if shown:
            stream.write("\r\x1b[K")
            stream.flush()
