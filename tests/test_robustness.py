"""Hostile and careless use of the command line: settings that crash parsers, reports over inputs,
devices and FIFOs as report paths, signals while writing, closed and full standard output, absurd --jobs."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT, write

GOLD, TRACE = EXAMPLES / "gold.jsonl", EXAMPLES / "trace.jsonl"
HUGE = "1" * 400  # a number no double holds


def _command(*args: object) -> list[str]:
    return [sys.executable, "-m", "ragscore", *map(str, args)]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


# --- settings files that crash a parser -------------------------------------------------------

@pytest.mark.parametrize(("text", "message"), [
    ("[gates]\nx = " + "[" * 5000 + "]" * 5000 + "\n",
     "g.toml:2: invalid TOML: arrays or inline tables nested too deeply to read"),
    ("[scoring]\nk = 5\n[gates]\nx = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n",
     "g.toml:4: invalid TOML: arrays or inline tables nested too deeply to read"),
    ("# a comment with [[[[ brackets\n[gates]\nprecision = " + "1" * 5000 + "\n",
     "g.toml:3: invalid TOML: an integer with more than 4,300 digits"),
    (f"[gates]\nprecision = {HUGE}\n",
     f'g.toml:2: expected a finite number for "precision", got {HUGE[:26]}…[360 characters]…{HUGE[:14]}'),
    (f"[gates]\nprecision = {{ min = 0.8, warn = {HUGE} }}\n",
     f'g.toml:2: expected a finite number for "precision" warn, got {HUGE[:26]}…[360 characters]…{HUGE[:14]}'),
    (f"[gates]\nprecision = -{HUGE}.0\n",
     'g.toml:2: expected a finite number for "precision", got -inf'),
    (f"[regression]\nprecision = {HUGE}\n",
     '[regression] expected "precision" to be the largest allowed drop, a number >= 0, got '
     f"{HUGE[:26]}…[360 characters]…{HUGE[:14]}"),
    (f"[diagnose.precision]\nwarning = {HUGE}\n",
     '[diagnose.precision] expected "warning" to be a finite number, got '
     f"{HUGE[:26]}…[360 characters]…{HUGE[:14]}"),
    (f'[slice_gates]\nprecision = {HUGE}\n',
     f'g.toml:2: expected a finite number for "precision", got {HUGE[:26]}…[360 characters]…{HUGE[:14]}'),
    (f'[scoring]\nk = {HUGE}\n', '[scoring] expected "k" to be a positive integer'),
])
def test_settings_files_that_crash_parsers_are_input_errors(ragscore, isolated, text, message):
    write(isolated / "g.toml", text)
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--gates-file", "g.toml")
    assert run.status == 2, run.err
    assert run.out == ""
    assert run.err.startswith("ragscore: error: ") and message in run.err and run.err.count("\n") == 1


def test_no_message_line_passes_two_thousand_characters(ragscore, isolated):
    for args in (["--gates", "\x01" * 5000 + "=1"], ["--metrics", "\x01" * 5000], ["--format", "\x01" * 5000]):
        run = ragscore("--gold", GOLD, "--trace", TRACE, *args)
        assert run.status == 2
        last = run.err.splitlines()[-1]
        assert len(last) <= 2000 and "characters]…" in last and "\x01" not in last


def test_a_huge_threshold_on_the_command_line_is_an_input_error(ragscore, isolated):
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--gates", f"precision={HUGE}")
    assert (run.status, run.err) == (2, 'ragscore: error: --gates: expected a finite number for "precision", got '
                                        f'"{HUGE[:26]}…[360 characters]…{HUGE[:14]}"\n')


def test_stage_gates_files_read_the_same_way(ragscore, isolated):
    write(isolated / "g.toml", f"[classify.gates]\naccuracy = {HUGE}\n")
    stages = EXAMPLES / "stages"
    run = ragscore("classify", "--gold", stages / "classify_gold.jsonl", "--pred", stages / "classify_pred.jsonl",
                   "--gates-file", "g.toml")
    assert run.status == 2 and 'expected a finite number for "accuracy"' in run.err


# --- report paths ------------------------------------------------------------------------------

def _inputs(folder: Path) -> tuple[Path, Path, bytes, bytes]:
    gold, trace = folder / "gold.jsonl", folder / "trace.jsonl"
    gold.write_bytes(GOLD.read_bytes())
    trace.write_bytes(TRACE.read_bytes())
    return gold, trace, gold.read_bytes(), trace.read_bytes()


@pytest.mark.parametrize(("option", "target", "message"), [
    ("--json", "gold.jsonl", '--json "gold.jsonl": is the same file as --gold'),
    ("--markdown", "./trace.jsonl", '--markdown "./trace.jsonl": is the same file as --trace'),
    ("--html", "sub/../gold.jsonl", '--html "sub/../gold.jsonl": is the same file as --gold'),
    ("--junit", "hard-link", '--junit "hard-link": is the same file as --gold'),
    ("--json", "sym-link", '--json "sym-link": is the same file as --trace'),
    ("--json", "gates.toml", '--json "gates.toml": is the file gates.toml'),
])
def test_a_report_never_overwrites_an_input(ragscore, isolated, option, target, message):
    gold, trace, gold_bytes, trace_bytes = _inputs(isolated)
    (isolated / "sub").mkdir()
    os.link(gold, isolated / "hard-link")
    os.symlink("trace.jsonl", isolated / "sym-link")
    write(isolated / "gates.toml", "[gates]\nprecision = 0.5\n")
    run = ragscore("--gold", "gold.jsonl", "--trace", "trace.jsonl", option, target)
    assert (run.status, run.out) == (2, "")
    assert run.err == f"ragscore: error: {message}; a report never overwrites an input or another report\n"
    assert (gold.read_bytes(), trace.read_bytes()) == (gold_bytes, trace_bytes)


def test_every_command_guards_its_inputs(ragscore, isolated):
    gold, trace, gold_bytes, trace_bytes = _inputs(isolated)
    stages = EXAMPLES / "stages"
    pred = isolated / "pred.jsonl"
    pred.write_bytes((stages / "ner_pred.jsonl").read_bytes())
    runs = [
        ragscore("compare", "--gold", "gold.jsonl", "--baseline", "trace.jsonl", "--trace", "trace.jsonl",
                 "--markdown", "trace.jsonl"),
        ragscore("ner", "--gold", stages / "ner_gold.jsonl", "--pred", "pred.jsonl", "--json", "pred.jsonl"),
    ]
    write(isolated / "g.toml", "")
    runs.append(ragscore("--gold", "gold.jsonl", "--trace", "trace.jsonl", "--gates-file", "g.toml", "--json", "g.toml"))
    assert [r.status for r in runs] == [2, 2, 2]
    assert [r.err.split(": is ")[1] for r in runs] == [
        "the same file as --trace; a report never overwrites an input or another report\n",
        "the same file as --pred; a report never overwrites an input or another report\n",
        "the same file as --gates-file; a report never overwrites an input or another report\n",
    ]
    assert (isolated / "g.toml").read_text() == ""
    assert (gold.read_bytes(), trace.read_bytes()) == (gold_bytes, trace_bytes)
    assert pred.read_bytes() == (stages / "ner_pred.jsonl").read_bytes()


def test_two_reports_on_one_path_are_refused(ragscore, isolated):
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--json", "r", "--markdown", "./r")
    assert run.err == ('ragscore: error: --markdown "./r": is the same file as --json; a report never overwrites '
                       "an input or another report\n")
    assert not (isolated / "r").exists()


def test_a_device_is_written_in_place_never_replaced(ragscore, isolated):
    # A null device of the test's own (as root), so that a regression cannot replace the machine's /dev/null.
    try:
        os.mknod(isolated / "null", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")
    before = os.stat(isolated / "null")
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--json", "null", "--markdown", "./null", "--format", "none")
    assert run.status == 0, run.err
    after = os.stat(isolated / "null")
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert sorted(p.name for p in isolated.iterdir()) == ["null"]


def test_a_symbolic_link_is_written_through_never_replaced(tmp_path):
    # /dev/stdout is a link to /proc/self/fd/1: renaming over it would replace the link (as root,
    # the machine's /dev/stdout); writing through it sends the report where standard output goes.
    (tmp_path / "out").symlink_to("/proc/self/fd/1")
    (tmp_path / "target.json").write_text("old")
    (tmp_path / "link.json").symlink_to("target.json")
    with open(tmp_path / "r.json", "w") as stdout:
        proc = subprocess.run(_command("--gold", GOLD, "--trace", TRACE, "--format", "none", "-q", "--json", "out",
                                       "--markdown", "link.json"),
                              env=_env(), cwd=tmp_path, stdout=stdout, timeout=60)
    assert proc.returncode == 0
    assert (tmp_path / "out").is_symlink() and (tmp_path / "link.json").is_symlink()
    assert json.loads((tmp_path / "r.json").read_text())["pass"] is True
    assert (tmp_path / "target.json").read_text().startswith("# ragscore")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_report_never_overwrites_standard_input(tmp_path):
    gold = tmp_path / "g.jsonl"
    gold.write_bytes(GOLD.read_bytes())
    with open(gold, "rb") as stdin:
        proc = subprocess.run(_command("--gold", "-", "--trace", TRACE, "--json", "g.jsonl"), env=_env(), cwd=tmp_path,
                              stdin=stdin, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == ('ragscore: error: --json "g.jsonl": is the same file as --gold; a report never overwrites '
                           "an input or another report\n")
    assert gold.read_bytes() == GOLD.read_bytes()


@pytest.mark.parametrize(("args", "message"), [
    (["--json", ""], '--json: expected a file path, got ""'),
    (["--markdown", "trace.jsonl/r.md"], "trace.jsonl/r.md: cannot write report: Not a directory"),
    (["--json", "r" * 250 + ".json"], "r" * 250 + ".json: cannot write report: File name too long"),
])
def test_a_report_that_cannot_be_written_is_one_error(ragscore, isolated, args, message):
    _inputs(isolated)
    # A report that can be written (--html) and one that cannot: neither is written.
    run = ragscore("--gold", "gold.jsonl", "--trace", "trace.jsonl", "--html", "ok.html", *args)
    assert (run.status, run.out) == (2, "")
    assert run.err.splitlines()[-1] == f"ragscore: error: {message}"
    assert sorted(p.name for p in isolated.iterdir()) == ["gold.jsonl", "trace.jsonl"]


def test_a_fifo_report_path_is_written_in_place(tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen(_command("--gold", GOLD, "--trace", TRACE, "--json", fifo, "--format", "none", "-q"),
                            env=_env(), cwd=tmp_path)
    with open(fifo, encoding="utf-8") as reader:  # the report arrives through the pipe
        text = reader.read()
    assert proc.wait(timeout=30) == 0
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert '"pass": true' in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.fifo"]


def test_sigterm_while_writing_reports_leaves_no_temporary_file(tmp_path):
    # The JSON report is staged to a temporary file first; the Markdown report goes to a FIFO that
    # nobody reads, so the run blocks there with the temporary file on disk until SIGTERM arrives.
    fifo = tmp_path / "blocked.fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen(_command("--gold", GOLD, "--trace", TRACE, "--json", "r.json", "--markdown", fifo,
                                     "--format", "none", "-q"),
                            env=_env(), cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]:
        assert time.monotonic() < deadline and proc.poll() is None, "the run never staged its report"
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert (proc.returncode, err) == (143, "ragscore: terminated\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocked.fifo"]


# --- standard output ---------------------------------------------------------------------------

def _closed_pipe_run(tmp_path: Path, *args: object) -> tuple[int, str]:
    """Run with standard output a pipe whose reader is gone before anything is written (``| head -0``)."""
    read, write_end = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run(_command(*args), env=_env(), cwd=tmp_path, stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=60)
    finally:
        os.close(write_end)
    return proc.returncode, proc.stderr


@pytest.mark.parametrize(("args", "status", "err"), [
    (["validate", "--gold", "g.jsonl"], 0, "ragscore: 0 errors, 3 warnings\n"),
    # (the fifth warning: a trace with no claim or refusal field, issue 14)
    (["validate", "--gold", "g.jsonl", "--trace", "t.jsonl"], 2, "ragscore: 1 error, 5 warnings\n"),
    (["schema"], 0, ""),
    (["schema", "stage"], 0, ""),
    (["--gold", GOLD, "--trace", TRACE, "--per-question"], 0, "ragscore: pass: 5 gates checked, none failed\n"),
    (["compare", "--gold", GOLD, "--baseline", TRACE, "--trace", TRACE, "-q"], 0, ""),
])
def test_a_closed_pipe_ends_quietly_with_the_commands_status(tmp_path, args, status, err):
    write(tmp_path / "g.jsonl", [{"qid": f"q{i}", "answerable": True} for i in range(3)])
    write(tmp_path / "t.jsonl", '{"qid": "q0"}\n{"qid": [1]}\n')
    got_status, got_err = _closed_pipe_run(tmp_path, *args)
    assert got_status == status
    assert "Traceback" not in got_err and "BrokenPipe" not in got_err
    if err is not None:
        assert got_err == err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", [
    ["--help"],
    ["compare", "--help"],
    ["--gold", GOLD, "--trace", TRACE],
    ["schema"],
    ["validate", "--gold", EXAMPLES / "product" / "gold.jsonl", "--trace", EXAMPLES / "product" / "trace.jsonl"],
    ["compare", "--gold", GOLD, "--baseline", TRACE, "--trace", TRACE],
    ["ner", "--gold", EXAMPLES / "stages" / "ner_gold.jsonl", "--pred", EXAMPLES / "stages" / "ner_pred.jsonl"],
])
def test_a_full_standard_output_is_one_line_and_exit_2(tmp_path, args):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(_command(*args) if {"schema", "validate", "--help"} & set(args) else _command(*args, "-q"), env=_env(),
                              cwd=tmp_path, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == "ragscore: error: standard output: cannot write: No space left on device"
    assert "Traceback" not in proc.stderr


# --- --jobs ------------------------------------------------------------------------------------

def test_absurd_jobs_are_capped_with_a_note(ragscore, isolated):
    from ragscore.parallel import max_jobs

    run = ragscore("--gold", GOLD, "--trace", TRACE, "--jobs", "10000", "--format", "none")
    assert run.status == 0
    assert run.err.splitlines()[0] == (f"ragscore: --jobs 10000: using {max_jobs()} processes (4 per core; more only "
                                       "add work, since each reads both files)")
    assert ragscore("--gold", GOLD, "--trace", TRACE, "--jobs", "10000", "-q").out == \
        ragscore("--gold", GOLD, "--trace", TRACE, "-q").out


FORK_FAILS_AFTER_ONE = """
import errno, os, sys
real_fork, calls = os.fork, []
def fork():
    calls.append(1)
    if len(calls) > 1:
        raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
    return real_fork()
os.fork = fork
from ragscore.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_fork_failure_is_one_clear_error(tmp_path):
    # The second worker cannot be started; the first is stopped and the run says why, in one line.
    proc = subprocess.run([sys.executable, "-c", FORK_FAILS_AFTER_ONE, "--gold", GOLD, "--trace", TRACE, "--jobs", "3",
                           "--format", "none"], env=_env(), cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (2, "ragscore: error: cannot start 3 worker processes: Resource "
                                                 "temporarily unavailable; try fewer --jobs\n")


# --- input text in messages --------------------------------------------------------------------

FORGED = "a\n::error::forged\x1b[2J"
QUOTED = '"a\\n::error::forged\\x1b[2J"'


def test_a_blank_forbidden_substring_is_an_input_error(ragscore, isolated):
    write(isolated / "g.jsonl", '{"qid": "a", "answerable": true, "forbidden_substr": ["ok text", " \\t"]}\n')
    run = ragscore("--gold", "g.jsonl", "--trace", TRACE)
    assert run.err == ('ragscore: error: g.jsonl:1:54: expected "forbidden_substr" entries to hold more than '
                       "white space\n")


@pytest.mark.parametrize(("gold", "trace", "args", "message"), [
    ([{"qid": FORGED, "answerable": False}, {"qid": FORGED, "answerable": False}], [], [],
     f"g.jsonl:2:9: duplicate qid {QUOTED} (first defined on line 1)"),
    ([{"qid": "x", "question": FORGED, "answerable": False}, {"qid": "y", "question": FORGED, "answerable": False}],
     [{"question": FORGED}], [],
     't.jsonl:1: the question text matches 2 gold items ("x", "y"); give the trace a "qid"'),
    ([{"qid": FORGED, "answerable": False}], [], ["--explain", "a\n::error::forgex"],
     '--explain: no gold question has qid "a\\n::error::forgex"; did you mean ' + QUOTED + "?"),
    ([{"qid": "a", "answerable": False}], [], ["--explain", "x" * 10_000_000],
     f'--explain: no gold question has qid "{"x" * 80}…[9,999,880 characters]…{"x" * 40}"'),
])
def test_input_text_in_an_error_is_quoted_on_one_line(ragscore, isolated, gold, trace, args, message):
    write(isolated / "g.jsonl", gold)
    write(isolated / "t.jsonl", trace)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", *args)
    assert (run.status, run.err) == (2, f"ragscore: error: {message}\n")


def test_a_file_name_in_an_error_is_one_line(ragscore, isolated):
    run = ragscore("--gold", "no\n::error::such.jsonl", "--trace", TRACE)
    assert run.err == "ragscore: error: no\\n::error::such.jsonl: no such file\n"


def test_stage_duplicate_ids_are_quoted(ragscore, isolated):
    write(isolated / "g.jsonl", [{"id": FORGED, "label": "A"}, {"id": FORGED, "label": "B"}])
    run = ragscore("classify", "--gold", "g.jsonl", "--pred", "g.jsonl")
    assert run.err == f"ragscore: error: g.jsonl:2:8: duplicate id {QUOTED} (first defined on line 1)\n"


def test_validate_never_starts_a_line_with_a_file_name_that_is_a_command(ragscore, isolated):
    name = "::error title=x::f.jsonl"
    write(isolated / name, '{"qid": "a", "answerable": "yes"}\n')
    run = ragscore("validate", "--gold", name)
    assert run.out == './::error title=x::f.jsonl:1:28: error: expected "answerable" to be true or false, got "yes"\n'


def test_the_older_workflow_command_form_is_escaped_wherever_it_stands(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": "##[error]forged", "answerable": False},
                                 {"qid": "##[error]forged", "answerable": False}])
    run = ragscore("--gold", "g.jsonl", "--trace", TRACE)
    assert run.err == 'ragscore: error: g.jsonl:2:9: duplicate qid "#\\x23[error]forged" (first defined on line 1)\n'
    write(isolated / "g.jsonl", [{"qid": "##[add-mask]x", "answerable": False}])
    write(isolated / "t.jsonl", [{"qid": "##[add-mask]x", "refused": True}])
    for fmt in ("json", "markdown", "text"):
        run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--per-question", "--format", fmt, "--no-fail")
        assert "##[" not in run.out + run.err and ("#\\" in run.out or fmt == "text"), fmt
    doc = json.loads(ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--per-question", "--no-fail").out)
    assert doc["questions"][0]["qid"] == "##[add-mask]x"  # JSON's own escape: the value reads back the same


def test_a_gates_file_may_be_a_pipe_and_is_read_within_a_bound(tmp_path):
    read, write_end = os.pipe()
    os.write(write_end, b'[gates]\nprecision = "> 1"\n')  # a bound no run meets: the pipe was read
    os.close(write_end)
    proc = subprocess.run(_command("--gold", GOLD, "--trace", TRACE, "--format", "none", "--gates-file",
                                   f"/dev/fd/{read}"), env=_env(), cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, pass_fds=(read,))
    os.close(read)
    assert proc.returncode == 1 and "FAIL    precision = 1.0000 (gate > 1)" in proc.stderr
    proc = subprocess.run(_command("--gold", GOLD, "--trace", TRACE, "--gates-file", "/dev/zero"), env=_env(),
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (2, "ragscore: error: /dev/zero: longer than 16,777,216 bytes: no "
                                                 "settings file is that long\n")


@pytest.mark.parametrize("command", [[], ["compare", "--baseline", TRACE]])
def test_bootstrap_on_the_command_line_is_bounded_as_in_settings(ragscore, isolated, command):
    run = ragscore(*command, "--gold", GOLD, "--trace", TRACE, "--bootstrap", HUGE)
    assert run.status == 2
    assert run.err.splitlines()[-1].endswith(f'error: argument --bootstrap: expected a positive integer of at most '
                                             f'1,000,000, got "{HUGE[:26]}…[360 characters]…{HUGE[:14]}"')


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize(("args", "status"), [
    (["--gold", GOLD, "--trace", TRACE], 0),
    (["--gold", GOLD, "--trace", TRACE, "--gates", "precision>1"], 1),
    (["--gold", "no-such.jsonl", "--trace", TRACE], 2),
    (["--gold", GOLD, "--bogus"], 2),
    (["validate", "--bogus"], 2),
    (["--help"], 0),
])
def test_unwritable_or_closed_streams_keep_the_status(tmp_path, args, status):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(_command(*args), env=_env(), cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=full,
                              timeout=60)
    assert proc.returncode == status
    for closed in ("stdout", "stderr"):  # the shell's ">&-" and "2>&-"
        proc = subprocess.run(["sh", "-c", f'"$@" {">&-" if closed == "stdout" else "2>&-"}', "sh", *_command(*args)],
                              env=_env(), cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert proc.returncode == status, (closed, proc.stderr)
        assert "Traceback" not in proc.stderr
        if closed == "stderr" and status == 2:
            assert proc.stdout == ""  # the usage never goes to standard output instead
        if closed == "stdout" and "--help" in args:
            assert proc.stderr == ""  # nor the help to standard error


@pytest.mark.parametrize(("where", "message"), [
    (["--gates", "under=5"], '--gates: "under" is from 0 to 1: a bound of 5 cannot be meant (0.05, not 5?)'),
    (["--gates", "ndcg@10>=-0.5"], '--gates: "ndcg@10" is from 0 to 1: a bound of -0.5 cannot be meant'),
    ("[gates]\nunder_refusal = 5\n", 'g.toml:2: "under_refusal" is from 0 to 1: a bound of 5 cannot be meant (0.05, not 5?)'),
    ("[gates]\nprecision = { min = 0.8, warn = 90 }\n",
     'g.toml:2: "precision" is from 0 to 1: a bound of 90 cannot be meant (0.9, not 90?)'),
    ("[slice_gates]\nchr = 75\n", 'g.toml:2: "chr" is from 0 to 1: a bound of 75 cannot be meant (0.75, not 75?)'),
])
def test_a_rate_bound_outside_zero_to_one_is_an_input_error(ragscore, isolated, where, message):
    if not isinstance(where, list):
        write(isolated / "g.toml", where)
    args = where if isinstance(where, list) else ["--gates-file", "g.toml"]
    run = ragscore("--gold", GOLD, "--trace", TRACE, *args)
    assert (run.status, run.err) == (2, f"ragscore: error: {message}\n")


def test_counts_and_scores_of_other_evaluators_take_any_bound(ragscore, isolated):
    run = ragscore("--gold", GOLD, "--trace", TRACE, "--gates", "missing<=3,latency_ms<=1500", "--format", "none")
    assert run.status == 0, run.err
