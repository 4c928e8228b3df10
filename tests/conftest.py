"""Shared test helpers: run the command line in-process, in a folder with no settings files."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ragscore.cli import main

try:  # every JSON report a test reads through Run.json() is checked against the schema
    from jsonschema import Draft202012Validator

    from ragscore.schema import load_schema

    VALIDATOR: Any = Draft202012Validator(load_schema())
except ImportError:  # the test extra is not installed
    VALIDATOR = None

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DATA = Path(__file__).resolve().parent / "data"


@dataclass
class Run:
    """What one command-line run returned and printed."""

    status: int
    out: str
    err: str

    def json(self) -> dict[str, Any]:
        """Parse standard output as the JSON report, checking it against the shipped schema."""
        return checked_report(self.out)


def checked_report(text: str) -> dict[str, Any]:
    """Parse a JSON report and check it against the shipped schema (when jsonschema is installed)."""
    return validated(text, VALIDATOR, "the report")


def validated(text: str, validator: Any, what: str) -> dict[str, Any]:
    """Parse JSON and, when a validator is given (jsonschema installed), check it against its schema."""
    doc = json.loads(text)
    if validator is not None:
        errors = sorted(validator.iter_errors(doc), key=str)
        assert not errors, f"{what} breaks its schema: {errors[0].message}"
    return doc


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in an empty folder, so no ./gates.toml or ./pyproject.toml is picked up."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def ragscore(capsys: pytest.CaptureFixture[str]):
    """Call ``main`` in-process and capture what it prints."""

    def run(*args: object) -> Run:
        status = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Run(status, captured.out, captured.err)

    return run


def write(path: Path, lines: list[dict[str, Any]] | str | bytes) -> Path:
    """Write JSON Lines (from objects), text or bytes to ``path``."""
    if isinstance(lines, bytes):
        path.write_bytes(lines)
    elif isinstance(lines, str):
        path.write_text(lines, encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(obj) + "\n" for obj in lines), encoding="utf-8")
    return path
