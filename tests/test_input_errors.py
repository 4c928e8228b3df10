"""Every bad input of SPEC §5: exit 2, one exact line on standard error, no report written."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import DATA, EXAMPLES, write

INVALID = DATA / "invalid"
CASES = json.loads((INVALID / "cases.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_invalid_input_is_reported_at_its_position(name, ragscore, tmp_path, monkeypatch):
    case = CASES[name]
    for key in ("gold", "trace"):
        shutil.copy(INVALID / case[key], tmp_path / case[key])
    monkeypatch.chdir(tmp_path)
    run = ragscore("--gold", case["gold"], "--trace", case["trace"], "--json", "report.json", "--markdown", "report.md")
    assert run.status == 2
    assert run.err == f"ragscore: error: {case['error']}\n"
    assert run.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({case["gold"], case["trace"]})


def test_very_deep_nesting_is_an_input_error(ragscore, isolated):
    write(isolated / "g.jsonl", '{"qid": "a", "answerable": true, "x": ' + "[" * 200_000 + "]" * 200_000 + "}\n")
    run = ragscore("--gold", "g.jsonl", "--trace", EXAMPLES / "trace.jsonl")
    assert (run.status, run.err) == (2, "ragscore: error: g.jsonl:1: invalid JSON: nested too deeply to read\n")


def test_very_long_line_is_read(ragscore, isolated):
    claim = "section 4.2 " + "x" * 5_000_000
    write(isolated / "t.jsonl", [{"qid": "A0001", "retrieved_ids": ["p1#2"], "answer_json": {"claim": claim, "citations": ["p1#2"]}}])
    run = ragscore("--gold", EXAMPLES / "gold.jsonl", "--trace", "t.jsonl", "--no-fail")
    assert run.status == 0
    assert run.json()["labels"]["OK"] == 1


def test_bom_crlf_and_blank_lines_are_accepted(ragscore, isolated):
    gold = (EXAMPLES / "gold.jsonl").read_bytes().replace(b"\n", b"\r\n\r\n")
    write(isolated / "g.jsonl", b"\xef\xbb\xbf" + gold + b"   \n")
    run = ragscore("--gold", "g.jsonl", "--trace", EXAMPLES / "trace.jsonl")
    assert run.status == 0
    doc = run.json()
    assert (doc["answered"], doc["refused"], doc["precision"]) == (2, 1, 1.0)


def test_bom_on_json_array_gold_is_accepted(ragscore, isolated):
    items = [json.loads(line) for line in (EXAMPLES / "gold.jsonl").read_text().splitlines()]
    write(isolated / "g.json", b"\xef\xbb\xbf  \n" + json.dumps(items, indent=1).encode())
    run = ragscore("--gold", "g.json", "--trace", EXAMPLES / "trace.jsonl")
    assert run.status == 0 and run.json()["precision"] == 1.0


def test_empty_trace_file_is_an_input_error_not_a_run_with_every_question_missing(ragscore, isolated):
    write(isolated / "t.jsonl", "")
    run = ragscore("--gold", EXAMPLES / "gold.jsonl", "--trace", "t.jsonl")
    assert (run.status, run.out, run.err) == (2, "", "ragscore: error: t.jsonl: no trace records: a trace input needs "
                                                     "at least one (an empty or blank file is no run)\n")


def test_missing_file(ragscore, isolated):
    run = ragscore("--gold", "nope.jsonl", "--trace", EXAMPLES / "trace.jsonl")
    assert (run.status, run.err) == (2, "ragscore: error: nope.jsonl: no such file\n")


def test_both_inputs_from_stdin_is_a_usage_error(ragscore, isolated):
    run = ragscore("--gold", "-", "--trace", "-")
    assert (run.status, run.err) == (2, "ragscore: error: only one of --gold, --trace and --scores can be '-' (standard input)\n")


def test_error_in_trace_leaves_an_existing_report_untouched(ragscore, isolated):
    (isolated / "report.json").write_text("previous\n")
    write(isolated / "t.jsonl", '{"qid": "A0001"}\n{oops\n')
    run = ragscore("--gold", EXAMPLES / "gold.jsonl", "--trace", "t.jsonl", "--json", "report.json")
    assert run.status == 2
    assert (isolated / "report.json").read_text() == "previous\n"
    assert sorted(p.name for p in isolated.iterdir()) == ["report.json", "t.jsonl"]


def test_unwritable_report_path_is_an_error_without_leftovers(ragscore, isolated):
    run = ragscore("--gold", EXAMPLES / "gold.jsonl", "--trace", EXAMPLES / "trace.jsonl",
                   "--json", "ok.json", "--markdown", "no/such/folder/r.md")
    assert run.status == 2
    assert run.err == "ragscore: error: no/such/folder/r.md: cannot write report: No such file or directory\n"
    assert list(isolated.iterdir()) == []
