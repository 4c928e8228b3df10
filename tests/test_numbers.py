"""Numbers in options and settings are plain decimals: what Python's float() reads besides is refused."""

from __future__ import annotations

import math

import pytest

from conftest import EXAMPLES
from ragscore.numbers import decimal, number_problem

GOLD, TRACE = EXAMPLES / "gold.jsonl", EXAMPLES / "trace.jsonl"


@pytest.mark.parametrize(("text", "value"), [
    ("0.8", 0.8), ("-1e-3", -0.001), (".5", 0.5), ("5.", 5.0), ("+2", 2.0), (" 0.25 ", 0.25), ("1E2", 100.0),
    ("1_0", None), ("\u0660.\u0665", None), ("inf", None), ("nan", None), ("1e400", None), ("0x10", None),
    ("", None), ("1" * 401, None), ("--1", None),
])
def test_decimal_reads_what_json_and_strtod_read_alike(text, value):
    assert decimal(text) == value
    if value is not None:
        assert decimal(text) == float(text)  # the same bits as float() where both read it


def test_the_problem_says_which_rule_a_number_broke():
    assert [number_problem(t) for t in ("high", "inf", "1e400", "1_0", "\u0660.\u0665")] == [
        "a number", "a finite number", "a finite number", "a number in ASCII digits (such as 0.8; no _)",
        "a number in ASCII digits (such as 0.8; no _)"]
    assert math.isinf(float("1e400"))  # what float() alone would have let through


@pytest.mark.parametrize(("args", "message"), [
    (["power", "--gold", GOLD, "--trace", TRACE, "--detect", "1_0"],
     'ragscore: error: --detect: expected a number in ASCII digits (such as 0.8; no _), got "1_0"\n'),
    (["power", "--gold", GOLD, "--trace", TRACE, "--detect", "inf"],
     'ragscore: error: --detect: expected a finite number, got "inf"\n'),
    (["power", "--gold", GOLD, "--trace", TRACE, "--power", "0.8_0"],
     'ragscore: error: --power: expected a number in ASCII digits (such as 0.8; no _), got "0.8_0"\n'),
    (["--gold", GOLD, "--trace", TRACE, "--gates", "precision=0.8_0"],
     'ragscore: error: --gates: expected a number in ASCII digits (such as 0.8; no _) for "precision", got "0.8_0"\n'),
    (["--gold", GOLD, "--trace", TRACE, "--confidence", "0.9_5"],
     "ragscore: see 'ragscore --help'\nragscore: error: argument --confidence: expected a number strictly between 0 "
     'and 1, got "0.9_5"\n'),
    (["trec", "q", "r", "--confidence", "\u0660.\u0669"],
     "ragscore trec: see 'ragscore trec --help'\nragscore trec: error: argument --confidence: expected a number "
     'strictly between 0 and 1, got "\u0660.\u0669"\n'),
])
def test_an_option_written_as_only_python_reads_it_is_refused(ragscore, isolated, args, message):
    run = ragscore(*args)
    assert (run.status, run.out, run.err) == (2, "", message)
