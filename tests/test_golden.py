"""Golden files: the JSON and Markdown report of every shipped example, byte for byte.

Regenerate after an intended change with:  REGENERATE_GOLDEN=1 pytest tests/test_golden.py
(then review the diff like any other code change).
"""

from __future__ import annotations

import os

import pytest

from conftest import DATA, ROOT

GOLDEN = DATA / "golden"
REGENERATE = os.environ.get("REGENERATE_GOLDEN") == "1"

EXAMPLES = {
    "reference": ("examples/gold.jsonl", "examples/trace.jsonl"),
    "alt-shape": ("examples/alt-shape/gold.json", "examples/alt-shape/trace.jsonl"),
    "product": ("examples/product/gold.jsonl", "examples/product/trace.jsonl"),
}
FORMATS = {
    "json": ["--per-question", "--format", "json"],
    "md": ["--format", "markdown"],
    "all.md": ["--format", "markdown", "--metrics", "all"],
    "txt": ["--format", "text"],
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_report_matches_golden_file(example, fmt, ragscore, monkeypatch):
    monkeypatch.chdir(ROOT)  # as the README runs it: relative paths, the project's own gates.toml
    gold, trace = EXAMPLES[example]
    run = ragscore("--gold", gold, "--trace", trace, "--no-fail", *FORMATS[fmt])
    path = GOLDEN / f"{example}.{fmt}"
    if REGENERATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(run.out, encoding="utf-8")
    assert run.out == path.read_text(encoding="utf-8"), f"regenerate with REGENERATE_GOLDEN=1 if intended: {path}"


def test_reports_are_deterministic_across_runs(ragscore, monkeypatch):
    monkeypatch.chdir(ROOT)
    args = ("--gold", "examples/product/gold.jsonl", "--trace", "examples/product/trace.jsonl", "--per-question", "--no-fail")
    assert ragscore(*args).out == ragscore(*args).out
