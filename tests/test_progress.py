"""The progress line: only for slow runs, erased at the end."""

from __future__ import annotations

import io
import time

from ragscore import progress


def test_fast_blocks_show_nothing():
    stream = io.StringIO()
    with progress.progress_line(stream, "scoring", enabled=True):
        pass
    assert stream.getvalue() == ""


def test_slow_blocks_show_the_elapsed_time_then_erase_it(monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.05)
    monkeypatch.setattr(progress, "INTERVAL", 0.05)
    stream = io.StringIO()
    with progress.progress_line(stream, "scoring with 2 processes", enabled=True):
        time.sleep(0.3)
    text = stream.getvalue()
    assert text.startswith("\rragscore: scoring with 2 processes, 0 s") and text.endswith("\r\x1b[K")


def test_disabled_shows_nothing(monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    stream = io.StringIO()
    with progress.progress_line(stream, "scoring", enabled=False):
        time.sleep(0.05)
    assert stream.getvalue() == ""
