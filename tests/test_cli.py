"""The command line end to end: the reference example, output routing, exit statuses, signals."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import EXAMPLES, ROOT, checked_report, write
from ragscore import __version__

GOLD, TRACE = EXAMPLES / "gold.jsonl", EXAMPLES / "trace.jsonl"


def test_reference_example_gives_the_spec_values(ragscore, isolated):
    run = ragscore("--gold", GOLD, "--trace", TRACE)
    assert run.status == 0
    doc = run.json()
    expected = {
        "answered": 2, "refused": 1, "answerable": 2, "unanswerable": 1, "precision": 1.0, "chr": 1.0,
        "under_refusal": 0.0, "over_refusal": 0.0, "recall@k": 1.0, "k": 5, "pass": True,
    }
    assert {key: doc[key] for key in expected} == expected
    assert list(doc)[:11] == list(expected)  # the reference scorer's keys come first, in its order


def test_explicit_score_command_is_the_default_command(ragscore, isolated):
    assert ragscore("score", "--gold", GOLD, "--trace", TRACE).out == ragscore("--gold", GOLD, "--trace", TRACE).out


def test_version_and_help(ragscore):
    assert ragscore("--version") == type(ragscore("--version"))(0, f"ragscore {__version__}\n", "")
    run = ragscore("--help")
    assert run.status == 0
    assert "ragscore --gold examples/gold.jsonl --trace examples/trace.jsonl" in run.out
    assert "jq -e '.pass == true'" in run.out
    assert "score      score traces against a gold set" in run.out
    assert ragscore("score", "--help").out.startswith("usage: ragscore score ")


def test_argparse_usage_errors_exit_2(ragscore):
    run = ragscore("--gold", GOLD)
    assert run.status == 2 and "the following arguments are required: --trace" in run.err
    assert ragscore("--gold", GOLD, "--trace", TRACE, "--k", "0").status == 2


def test_python_dash_m_matches_in_process_run(ragscore):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run(
        [sys.executable, "-m", "ragscore", "--gold", "examples/gold.jsonl", "--trace", "examples/trace.jsonl"],
        cwd=ROOT, capture_output=True, text=True, env=env, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    os.chdir(ROOT)
    try:
        assert proc.stdout == ragscore("--gold", "examples/gold.jsonl", "--trace", "examples/trace.jsonl").out
    finally:
        os.chdir(Path(__file__).parent)


def test_failed_gate_exits_1_and_no_fail_exits_0(ragscore, isolated):
    failing = ragscore("--gold", GOLD, "--trace", TRACE, "--gates", "precision>1")
    assert failing.status == 1 and failing.json()["pass"] is False
    assert "ragscore: FAIL    precision = 1.0000 (gate > 1)\n" in failing.err
    assert failing.err.endswith("ragscore: FAIL: 1 of 5 gates failed: precision\n")
    report_only = ragscore("--gold", GOLD, "--trace", TRACE, "--gates", "precision>1", "--no-fail")
    assert report_only.status == 0 and report_only.out == failing.out


def test_trace_from_standard_input(ragscore, isolated, monkeypatch):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TRACE.read_bytes())))
    doc = ragscore("--gold", GOLD, "--trace", "-").json()
    assert doc["precision"] == 1.0
    assert doc["inputs"]["trace"] == {"path": "-", "sha256": _sha256(TRACE)}


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_inputs_are_hashed_and_paths_never_absolute(ragscore, isolated):
    doc = ragscore("--gold", GOLD, "--trace", TRACE).json()
    assert doc["inputs"] == {
        "gold": {"path": "gold.jsonl", "sha256": _sha256(GOLD)},
        "trace": {"path": "trace.jsonl", "sha256": _sha256(TRACE)},
    }


def test_report_files_and_format_routing(ragscore, isolated):
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--json", "r.json", "--markdown", "r.md", "--format", "none")
    assert run.out == ""
    doc = checked_report((isolated / "r.json").read_text())
    assert "questions" not in doc
    assert (isolated / "r.md").read_text().startswith("# ragscore report\n")
    assert ragscore("--gold", GOLD, "--trace", TRACE, "--format", "markdown").out == (isolated / "r.md").read_text()


def test_only_failures_lists_only_failing_questions(ragscore, isolated):
    doc = ragscore("--gold", EXAMPLES / "product" / "gold.jsonl", "--trace", EXAMPLES / "product" / "trace.jsonl",
                   "--only-failures", "--no-fail").json()
    labels = [q["label"] for q in doc["questions"]]
    assert labels and not {"OK", "REFUSAL_OK"} & set(labels)
    assert len(labels) == sum(n for label, n in doc["labels"].items() if label not in ("OK", "REFUSAL_OK"))


def test_accounting_is_summarised_one_line_each(ragscore, isolated):
    run = ragscore("--gold", EXAMPLES / "product" / "gold.jsonl", "--trace", EXAMPLES / "product" / "trace.jsonl")
    doc = run.json()
    counts = doc["counts"]
    assert counts["trace_lines"] == counts["traced"] + counts["unknown_traces"] + counts["duplicate_traces"]
    assert counts["total"] == counts["traced"] + counts["missing"]
    notes = [line for line in run.err.splitlines() if "trace" in line]
    assert notes == [
        "ragscore: 1 gold question has no trace (MISSING_TRACE, scored as refusals): Q026",
        "ragscore: 1 trace line matches no gold question (ignored): Q041",
        "ragscore: 1 trace line was replaced by a later line for the same question (the last counts): Q029",
    ]


def test_quiet_prints_nothing_on_stderr(ragscore, isolated):
    run = ragscore("--gold", EXAMPLES / "product" / "gold.jsonl", "--trace", EXAMPLES / "product" / "trace.jsonl", "-q")
    assert run.status == 1 and run.err == ""


def test_explain_walks_through_the_rules(ragscore, isolated):
    run = ragscore("--gold", EXAMPLES / "product" / "gold.jsonl", "--trace", EXAMPLES / "product" / "trace.jsonl",
                   "--explain", "Q029", "--no-fail", "-q")
    lines = run.out.splitlines()
    assert lines[0] == "qid: Q029"
    assert any(line.startswith("trace: ") and "(the last of 2 lines for this question)" in line for line in lines)
    assert any(line.startswith("claim (normalised): ") for line in lines)
    assert any(line.startswith("gold citations: ") and "rank " in line for line in lines)
    assert not run.out.lstrip().startswith("{")


def test_explain_missing_and_unknown_qids(ragscore, isolated, monkeypatch):
    write(isolated / "t.jsonl", [{"qid": "A0001", "answer": "x"}])  # none for A0002 (an empty file is an error)
    run = ragscore("--gold", GOLD, "--trace", "t.jsonl", "--explain", "A0002", "--no-fail", "-q")
    assert run.out.splitlines()[-1] == "trace: none in t.jsonl; scored as a refusal"
    bad = ragscore("--gold", GOLD, "--trace", TRACE, "--explain", "A0001x")
    assert (bad.status, bad.err) == (2, 'ragscore: error: --explain: no gold question has qid "A0001x"; did you mean "A0001"?\n')
    write(isolated / "broken.jsonl", "{\n")  # the typo is reported before the traces are read
    bad = ragscore("--gold", GOLD, "--trace", "broken.jsonl", "--explain", "A0001x")
    assert (bad.status, bad.err) == (2, 'ragscore: error: --explain: no gold question has qid "A0001x"; did you mean "A0001"?\n')
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(Path(GOLD).read_bytes())))
    bad = ragscore("--gold", "-", "--trace", TRACE, "--explain", "A0001x")
    assert (bad.status, bad.err) == (2, 'ragscore: error: --explain: no gold question has qid "A0001x"\n')


def _big_gold(folder: Path, n: int) -> Path:
    return write(folder / "big.jsonl", [{"qid": f"Q{i:05d}", "answerable": True, "gold_citations": ["d"]} for i in range(n)])


def test_closed_output_pipe_ends_quietly(tmp_path):
    gold = _big_gold(tmp_path, 3000)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragscore", "--gold", str(gold), "--trace", str(TRACE), "--per-question", "--no-fail"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(100)
    proc.stdout.close()  # like `| head -c 100`
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0
    assert "Traceback" not in err and "BrokenPipeError" not in err


def _wait_until_reading_a_pipe(pid: int, seconds: float = 30.0) -> None:
    """Wait until process ``pid`` waits on a pipe (Linux says so in /proc/PID/wchan), or a second
    where /proc cannot tell: a slow start (a loaded CI machine, no bytecode cache) takes longer."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/wchan") as f:
                if "pipe_read" in f.read():
                    return
        except OSError:
            time.sleep(1.0)
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} never waited for standard input")


def _default_interrupt() -> None:
    # A shell starts background jobs with SIGINT ignored, and Python keeps an inherited
    # ignore (as nohup means it to): give ragscore the disposition a terminal gives it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_interrupt_ends_quietly(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragscore", "--gold", str(GOLD), "--trace", "-"],
        cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        preexec_fn=_default_interrupt,
    )
    assert proc.stdin is not None
    proc.stdin.write(TRACE.read_bytes()[:50])  # half a line: ragscore waits for the rest
    proc.stdin.flush()
    _wait_until_reading_a_pipe(proc.pid)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, err.decode(), out) == (130, "ragscore: interrupted\n", b"")
