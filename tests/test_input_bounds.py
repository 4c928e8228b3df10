"""Bounded work on hostile input: blank lines, windows, folder loops, special files, empty traces, UTF-16."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragscore
from conftest import write

GOLD = {"qid": "q1", "question": "x", "answerable": True, "gold_claim_substr": ["a"], "gold_citations": ["d1"]}
TRACE = {"qid": "q1", "answer": "a", "retrieved_ids": ["d1"], "citations": ["d1"]}

# A child process runs the command line and prints its status and its peak memory: what ragscore
# holds shows there, not hidden in the test process's own peak.
# Its peak is the kernel's VmHWM, which starts afresh at exec (ru_maxrss keeps the forking test
# process's own peak across it).
_PEAK = textwrap.dedent("""
    import contextlib, io, json, re, sys
    from ragscore.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(sys.argv[1:])
    with open("/proc/self/status") as proc:
        peak = int(re.search(r"VmHWM:\\s*(\\d+) kB", proc.read())[1]) // 1024
    print(json.dumps([status, peak, out.getvalue(), err.getvalue()]))
""")


def peak(*args: object) -> tuple[int, int, str, str]:
    """Run ragscore in a child process: its status, its peak memory in MB, what it printed on stdout and stderr."""
    if not os.path.exists("/proc/self/status"):
        pytest.skip("the peak memory of a process is read from Linux's /proc")
    done = subprocess.run([sys.executable, "-c", _PEAK, *map(str, args)], capture_output=True, text=True, check=True)
    status, megabytes, out, err = json.loads(done.stdout)
    return status, megabytes, out, err


# 2 million CRLF lines: held as lines, ~90 MB (the gold set read them twice: ~250 MB); a child
# process of ragscore itself holds ~25 MB.
_BLANKS = b"\r\n" * 2_000_000
_BOUND_MB = 60


def test_blank_lines_before_the_first_gold_record_cost_no_memory(tmp_path):
    gold = write(tmp_path / "g.jsonl.gz", gzip.compress(_BLANKS + json.dumps(GOLD).encode() + b"\n", 1))
    trace = write(tmp_path / "t.jsonl", [TRACE])
    status, megabytes, out, _ = peak("--gold", gold, "--trace", trace)
    assert (status, json.loads(out)["answered"], json.loads(out)["recall@k"]) == (1, 1, 1.0)  # precision fails: "a" is too short to match
    assert megabytes < _BOUND_MB


def test_an_all_blank_gold_set_costs_no_memory_and_is_refused_as_empty(tmp_path):
    gold = write(tmp_path / "g.jsonl.gz", gzip.compress(_BLANKS, 1))
    trace = write(tmp_path / "t.jsonl", [TRACE])
    status, megabytes, _, err = peak("--gold", gold, "--trace", trace)
    assert (status, err) == (2, f"ragscore: error: {gold}: no questions: a gold set needs at least one (JSON Lines, "
                                "or a JSON array of objects)\n")
    assert megabytes < _BOUND_MB


def test_blank_lines_before_the_first_trace_record_cost_no_memory(tmp_path):
    gold = write(tmp_path / "g.jsonl", [GOLD])
    trace = write(tmp_path / "t.jsonl.gz", gzip.compress(_BLANKS + json.dumps(TRACE).encode() + b"\n", 1))
    status, megabytes, out, _ = peak("--gold", gold, "--trace", trace)
    assert (status, json.loads(out)["answered"], json.loads(out)["recall@k"]) == (1, 1, 1.0)  # precision fails: "a" is too short to match
    assert megabytes < _BOUND_MB


def test_validate_holds_the_traces_bytes_not_a_list_of_their_lines(tmp_path):
    gold = write(tmp_path / "g.jsonl", [GOLD])
    trace = write(tmp_path / "t.jsonl.gz", gzip.compress(_BLANKS + json.dumps(TRACE).encode() + b"\n", 1))
    status, megabytes, out, err = peak("validate", "--gold", gold, "--trace", trace)
    assert (status, err) == (0, "ragscore: 0 errors, 1 warning\n")  # gold_claim_substr "a" is too short to match
    assert "t.jsonl.gz" not in out
    assert megabytes < _BOUND_MB


def test_a_scores_file_is_held_as_its_bytes_not_a_list_of_its_lines(tmp_path):
    gold = write(tmp_path / "g.jsonl", [GOLD])
    trace = write(tmp_path / "t.jsonl", [TRACE])
    scores = write(tmp_path / "s.jsonl.gz", gzip.compress(_BLANKS + b'{"qid": "q1", "judge": 0.5}\n', 1))
    status, megabytes, out, _ = peak("--gold", gold, "--trace", trace, "--scores", scores)
    assert (status, json.loads(out)["metrics"]["judge"]) == (1, 0.5)
    assert megabytes < _BOUND_MB


def test_blank_lines_keep_the_line_numbers_of_errors_after_them(ragscore, isolated):
    write(isolated / "g.jsonl", b"\r\n \t\n\n" + json.dumps(GOLD).encode() + b"\n{oops}\n")
    write(isolated / "t.jsonl", b"\n\r\n  \n{oops}\n")
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl")
    assert (run.status, run.err) == (2, "ragscore: error: g.jsonl:5:2: invalid JSON: Expecting property name "
                                        "enclosed in double quotes\n")
    write(isolated / "g.jsonl", [GOLD])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl")
    assert (run.status, run.err) == (2, "ragscore: error: t.jsonl:4:2: invalid JSON: Expecting property name "
                                        "enclosed in double quotes\n")


def test_a_json_array_after_blank_lines_is_read_with_its_line_numbers(ragscore, isolated):
    write(isolated / "g.jsonl", b"\xef\xbb\xbf\r\n\n  [" + json.dumps(GOLD).encode() + b",\n 7]\n")
    write(isolated / "t.jsonl", [TRACE])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl")
    assert (run.status, run.err) == (2, "ragscore: error: g.jsonl:4:2: expected a JSON object, got 7\n")


# --- monitor: every window from the first to the last counts ------------------------------------------------------


def test_monitor_refuses_traces_far_apart_before_making_their_windows(ragscore, isolated):
    write(isolated / "t.jsonl", [{"qid": "a", "answer": "x", "ts": 0}, {"qid": "b", "answer": "x", "ts": 99_999_999_999}])
    run = ragscore("monitor", "--trace", "t.jsonl")
    assert (run.status, run.out, run.err) == (2, "", (
        "ragscore: error: --window: the traces of t.jsonl span 27,777,778 windows of 3,600 seconds (from "
        "1970-01-01T00:00:00Z to 5138-11-16T10:00:00Z), more than the 20,000 a report holds: choose a wider window\n"))


def test_monitor_counts_the_empty_windows_between_two_traces(ragscore, isolated):
    write(isolated / "t.jsonl", [{"qid": "a", "answer": "x", "ts": 0}, {"qid": "b", "answer": "x", "ts": 86_400}])
    run = ragscore("monitor", "--trace", "t.jsonl", "--window", "1s")
    assert (run.status, run.err) == (2, (
        "ragscore: error: --window: the traces of t.jsonl span 86,401 windows of 1 second (from 1970-01-01T00:00:00Z "
        "to 1970-01-02T00:00:01Z), more than the 20,000 a report holds: choose a wider window\n"))


def test_monitor_reads_as_many_windows_as_the_limit_and_no_more(ragscore, isolated, monkeypatch):
    monkeypatch.setattr("ragscore.monitoring.windows.MAX_WINDOWS", 3)
    write(isolated / "t.jsonl", [{"qid": "a", "answer": "x", "ts": 7_200}, {"qid": "b", "answer": "x", "ts": 0}])
    run = ragscore("monitor", "--trace", "t.jsonl", "-q")
    assert (run.status, len(json.loads(run.out)["windows"])) == (0, 3)
    write(isolated / "t.jsonl", [{"qid": "a", "answer": "x", "ts": 7_200}, {"qid": "b", "answer": "x", "ts": 0},
                                 {"qid": "c", "answer": "x", "ts": 10_800}])
    run = ragscore("monitor", "--trace", "t.jsonl")
    assert (run.status, run.err) == (2, (
        "ragscore: error: --window: the traces of t.jsonl span 4 windows of 3,600 seconds (from 1970-01-01T00:00:00Z "
        "to 1970-01-01T04:00:00Z), more than the 3 a report holds: choose a wider window\n"))


# --- an empty trace input is an input error, whatever reads it ---------------------------------------------------

NO_TRACES = "no trace records: a trace input needs at least one (an empty or blank file is no run)"
NO_RECORDS = ("<trace records>: no trace records: the iterable yielded none (an iterator read already, such as "
              "iter(list) or map(...), yields none): pass a list")


@pytest.mark.parametrize("content", [b"", b"\n \r\n\t\n"], ids=["empty", "blank"])
@pytest.mark.parametrize("command", [
    ["--gold", "g.jsonl", "--trace", "t.jsonl"],
    ["--gold", "g.jsonl", "--trace", "t.jsonl", "-j", "2"],
    ["--gold", "g.jsonl", "--trace", "t.jsonl", "--trace", "u.jsonl"],
    ["partial", "--gold", "g.jsonl", "--trace", "t.jsonl", "--part", "1/1", "--out", "p.json"],
    ["partial", "--gold", "g.jsonl", "--trace", "t.jsonl", "--part", "2/3", "--out", "p.json"],
    ["power", "--gold", "g.jsonl", "--trace", "t.jsonl"],
    ["compare", "--gold", "g.jsonl", "--baseline", "ok.jsonl", "--trace", "t.jsonl"],
    ["compare", "--gold", "g.jsonl", "--baseline", "t.jsonl", "--trace", "ok.jsonl"],
    ["compare", "--gold", "g.jsonl", "ok.jsonl", "t.jsonl"],
], ids=" ".join)
def test_an_empty_trace_input_is_an_input_error(ragscore, isolated, command, content):
    write(isolated / "g.jsonl", [GOLD])
    write(isolated / "ok.jsonl", [TRACE])
    write(isolated / "t.jsonl", content)
    write(isolated / "u.jsonl", content)
    run = ragscore(*command)
    name = "t.jsonl, u.jsonl" if "u.jsonl" in command else "t.jsonl"
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {name}: {NO_TRACES}\n")
    assert not (isolated / "p.json").exists()


def test_monitor_says_which_input_holds_no_trace_record(ragscore, isolated):
    write(isolated / "t.jsonl", b"\r\n\r\n")
    run = ragscore("monitor", "--trace", "t.jsonl")
    assert (run.status, run.err) == (2, "ragscore: error: t.jsonl: no trace records (--trace): a trace input needs "
                                        "at least one (an empty or blank file is no run)\n")


@pytest.mark.parametrize("spent", [lambda: _read(iter([TRACE])), lambda: _read(map(dict, [TRACE])), lambda: iter(())],
                         ids=["iter(list) read", "map read", "empty iterator"])
def test_the_api_refuses_traces_that_yield_nothing(isolated, spent):
    write(isolated / "g.jsonl", [GOLD])
    for call in (lambda: ragscore.score("g.jsonl", spent()), lambda: ragscore.power("g.jsonl", spent()),
                 lambda: ragscore.monitor(spent()), lambda: ragscore.partial("g.jsonl", spent())):
        with pytest.raises(ragscore.InputError) as caught:
            call()
        assert str(caught.value) in (NO_RECORDS, NO_RECORDS.replace("records:", "records (--trace):", 1))


def test_a_part_of_records_may_be_empty_but_not_the_merged_run(isolated):
    write(isolated / "g.jsonl", [GOLD, {**GOLD, "qid": "q2"}])
    parts = [ragscore.partial("g.jsonl", [], (index, 2)) for index in range(2)]
    with pytest.raises(ragscore.InputError) as caught:
        ragscore.finalize(parts[0].merge(parts[1]))
    assert str(caught.value) == NO_RECORDS


def _read(iterator):
    list(iterator)
    return iterator


# --- folders and globs: no loop, no special file ------------------------------------------------------------------


def _tree(root):
    """A tree with hidden names, underscores, nested folders and one file of traces per folder."""
    for folder in ("d", "d/a", "d/a/b", "d/.hidden", "d/_spark", "d/c"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        write(root / folder / "t.jsonl", [TRACE])
        write(root / folder / ".x.jsonl", [TRACE])
        write(root / folder / "n.txt", "x")


@pytest.mark.parametrize("pattern", ["d/**/*.jsonl", "d/**", "d/*/*.jsonl", "**/t.jsonl", "d/**/.*.jsonl",
                                     "d/*/**/*.jsonl", "d/**/b/*", "d/[ab]*/t.jsonl", "d/a/**/", "*", "d/.*/*"])
def test_the_glob_finds_what_pythons_glob_finds_in_a_tree_without_links(isolated, pattern):
    import glob

    from ragscore.loaders.shards import _glob

    _tree(isolated)
    notes: list[str] = []
    assert sorted(_glob(pattern, notes)) == sorted(glob.glob(pattern, recursive=True)) != []
    assert notes == []


def test_a_glob_follows_no_folder_link_twice_and_says_so(ragscore, isolated):
    (isolated / "d/a").mkdir(parents=True)
    (isolated / "d/b").mkdir()
    write(isolated / "g.json", [GOLD])  # not matched through d/b/up
    write(isolated / "d/a/t.jsonl", [TRACE])
    (isolated / "d/a/loop").symlink_to("..")
    (isolated / "d/b/up").symlink_to("../..")  # out of d: searched, but not d again
    (isolated / "d/c").symlink_to("a")  # a second way into d/a: its files would be read twice
    run = ragscore("--gold", "g.json", "--trace", "d/**/*.jsonl", "--format", "json")
    assert run.status == 1 and run.json()["counts"]["trace_lines"] == 1
    assert run.err.splitlines()[0] == ("ragscore: d/**/*.jsonl: 3 paths not followed, each a folder ** had searched "
                                       "already, reached again by a link (a loop?): d/a/loop, d/b/up/d, d/c")


@pytest.mark.parametrize("kind", ["fifo", "socket"])
@pytest.mark.parametrize("spec", ["d", "d/*.jsonl", "d/**/*.jsonl"])
def test_a_folder_or_glob_leaves_out_what_is_not_a_regular_file_with_a_note(ragscore, isolated, spec, kind):
    import socket

    (isolated / "d").mkdir()
    write(isolated / "g.jsonl", [GOLD])
    write(isolated / "d/t.jsonl", [TRACE])
    (isolated / "d/dead.jsonl").symlink_to("nowhere.jsonl")
    if kind == "fifo":
        os.mkfifo(isolated / "d/x.jsonl")
    else:
        server = socket.socket(socket.AF_UNIX)
        server.bind("d/x.jsonl")
    what = "a named pipe" if kind == "fifo" else "a socket"
    run = ragscore("--gold", "g.jsonl", "--trace", spec, "-q", "--json", "r.json")
    assert (run.status, run.err) == (1, "")
    run = ragscore("--gold", "g.jsonl", "--trace", spec, "--format", "none")
    assert run.err.splitlines()[0] == (f"ragscore: {spec}: left out 2 entries that are not regular files (reading one "
                                       f"could wait for ever): d/dead.jsonl (a link that leads nowhere), d/x.jsonl "
                                       f"({what})")
    os.remove(isolated / "d/t.jsonl")
    run = ragscore("--gold", "g.jsonl", "--trace", spec)
    start = ("the folder holds no file to read (hidden files and names starting with _ are left out)" if spec == "d"
             else "no file matches this pattern")
    assert (run.status, run.err) == (2, f"ragscore: error: {spec}: {start}; left out 2 entries that are not regular "
                                        f"files (reading one could wait for ever): d/dead.jsonl (a link that leads "
                                        f"nowhere), d/x.jsonl ({what})\n")


@pytest.mark.parametrize("command", [["partial", "--part", "1/1", "-o", "p.json"], ["validate"]])
def test_partial_and_validate_say_what_a_folder_left_out(ragscore, isolated, command):
    (isolated / "d").mkdir()
    write(isolated / "g.jsonl", [GOLD])
    write(isolated / "d/t.jsonl", [TRACE])
    os.mkfifo(isolated / "d/x.jsonl")
    run = ragscore(command[0], "--gold", "g.jsonl", "--trace", "d", *command[1:])
    assert run.status == 0
    assert run.err.splitlines()[0] == ("ragscore: d: left out 1 entry that is not a regular file (reading it could "
                                       "wait for ever): d/x.jsonl (a named pipe)")
    assert "left out" not in ragscore(command[0], "--gold", "g.jsonl", "--trace", "d", "-q", *command[1:]).err


def test_a_named_pipe_named_on_its_own_is_read(ragscore, isolated):
    import threading

    write(isolated / "g.jsonl", [GOLD])
    write(isolated / "u.jsonl", [{**TRACE, "qid": "other"}])
    os.mkfifo(isolated / "p.jsonl")

    def feed():
        with open(isolated / "p.jsonl", "wb") as pipe:
            pipe.write(json.dumps(TRACE).encode() + b"\n")

    writer = threading.Thread(target=feed)
    writer.start()
    run = ragscore("--gold", "g.jsonl", "--trace", "u.jsonl", "--trace", "p.jsonl", "--format", "json", "-q")
    writer.join()
    assert (run.status, run.json()["counts"]["trace_lines"]) == (1, 2)


def test_monitor_compare_and_power_say_what_a_folder_left_out(ragscore, isolated):
    (isolated / "d").mkdir()
    write(isolated / "g.jsonl", [GOLD])
    write(isolated / "d/t.jsonl", [{**TRACE, "ts": 0}])
    os.mkfifo(isolated / "d/x.jsonl")
    note = ("ragscore: d: left out 1 entry that is not a regular file (reading it could wait for ever): d/x.jsonl "
            "(a named pipe)")
    for command in (["monitor", "--trace", "d"], ["power", "--gold", "g.jsonl", "--trace", "d"],
                    ["compare", "--gold", "g.jsonl", "--baseline", "d", "--trace", "d/t.jsonl"],
                    ["compare", "--gold", "g.jsonl", "d", "d/t.jsonl"]):
        run = ragscore(*command, "--format", "none")
        assert run.err.splitlines()[0] == note, command


# --- UTF-16: read as the same text in UTF-8 is, its faults placed ------------------------------------------------

_LINE = json.dumps(GOLD)


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be"])
@pytest.mark.parametrize(("command", "text"), [
    (["--gold", "g", "--trace", "t.jsonl"], f"{_LINE}\r{_LINE}\r"),
    (["--gold", "g", "--trace", "t.jsonl"], f"\n{_LINE}\r\n{_LINE}\r\n{{oops}}\n"),
    (["classify", "--gold", "g", "--pred", "g", "--input-format", "tsv"], "id\tlabel\rd1\tA\rd2\tB\r"),
    (["classify", "--gold", "g", "--pred", "g", "--input-format", "tsv"], "id\tlabel\r\nd1\tA\r\nd2\tB\n\n"),
], ids=["jsonl, CR", "jsonl, CRLF", "tsv, CR", "tsv, CRLF"])
def test_utf16_text_reads_as_the_same_text_in_utf8(ragscore, isolated, command, text, codec):
    write(isolated / "t.jsonl", [TRACE])
    write(isolated / "g", text.encode("utf-8"))
    as_utf8 = ragscore(*command, "--format", "json")
    mark = b"" if codec == "utf-16" else b"\xff\xfe" if codec.endswith("le") else b"\xfe\xff"
    write(isolated / "g", mark + text.encode(codec))
    as_utf16 = ragscore(*command, "--format", "json")
    assert (as_utf16.status, as_utf16.err) == (as_utf8.status, as_utf8.err)
    assert as_utf8.status == 2 if "\r" in text.replace("\r\n", "") or "oops" in text else as_utf8.status in (0, 1)


def _utf16_le(text: str, tail: bytes = b"") -> bytes:
    return b"\xff\xfe" + text.encode("utf-16-le") + tail


# Far enough in that the fault is several 1 MB chunks into the file, and past the line a chunk ends on.
_MANY = "".join(json.dumps({**GOLD, "qid": f"q{n}", "question": "é" * (n % 97)}) + "\n" for n in range(30_000))


@pytest.mark.parametrize(("data", "error"), [
    (_utf16_le('{"qid": "a', b"\x00\xd8" + '"}\n'.encode("utf-16-le")),
     "g:1:11: expected UTF-16 text after its byte-order mark, got a lone surrogate U+D800"),
    (_utf16_le(_LINE + '\n\n{"qid": "\U0001f600', b"\x00\xdc"),
     "g:3:11: expected UTF-16 text after its byte-order mark, got a lone surrogate U+DC00"),
    (b"\xfe\xff" + f"{_LINE}\n{{\"q".encode("utf-16-be") + b"\x00",
     "g:2:4: expected UTF-16 text after its byte-order mark, got the end of the file in the middle of a character"),
    (_utf16_le(_MANY + '{"qid": "x",', b"\x3d\xd8\x00\x00"),
     "g:30001:13: expected UTF-16 text after its byte-order mark, got a lone surrogate U+D83D"),
    (_utf16_le(_MANY + "{oops}\n" + "x" * 5000 + "\n", b"\x00\xdc"),  # an earlier line's error comes first
     "g:30001:2: invalid JSON: Expecting property name enclosed in double quotes"),
], ids=["high surrogate", "low surrogate after a pair", "odd last byte", "chunks in", "an earlier error first"])
def test_a_fault_in_utf16_is_placed_at_its_line_and_column(ragscore, isolated, data, error):
    write(isolated / "t.jsonl", [TRACE])
    write(isolated / "g", data)
    run = ragscore("--gold", "g", "--trace", "t.jsonl")
    assert (run.status, run.err) == (2, f"ragscore: error: {error}\n")


def test_a_fault_in_one_of_several_utf16_trace_files_is_at_its_own_line(ragscore, isolated):
    write(isolated / "g.jsonl", [GOLD])
    write(isolated / "a.jsonl", _utf16_le(json.dumps(TRACE) + "\n"))
    write(isolated / "b.jsonl", _utf16_le(json.dumps(TRACE) + "\n" + '{"qid": ', b"\x00\xdc"))
    run = ragscore("--gold", "g.jsonl", "--trace", "a.jsonl", "--trace", "b.jsonl")
    assert (run.status, run.err) == (2, "ragscore: error: b.jsonl:2:9: expected UTF-16 text after its byte-order "
                                        "mark, got a lone surrogate U+DC00\n")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=300), small=st.booleans(),
       codec=st.sampled_from(["utf-16-le", "utf-16-be"]), limit=st.integers(1, 40))
def test_utf16_lines_are_the_utf8_lines_of_the_same_text(tmp_path, monkeypatch, text, small, codec, limit):
    """Whatever the text (CR alone, CRLF, surrogate pairs), across chunk ends too: the same lines, byte for byte."""
    from ragscore.loaders import input_file

    monkeypatch.setattr(input_file, "_CHUNK_BYTES", 7 if small else 1 << 20)  # chunks that cut characters in two
    path = tmp_path / "t"
    path.write_bytes((b"\xff\xfe" if codec.endswith("le") else b"\xfe\xff") + text.encode(codec))
    data = text.encode("utf-8")
    ends = data.split(b"\n")
    assert list(input_file.InputFile(str(path)).raw_lines()) == [end + b"\n" for end in ends[:-1]] + [ends[-1]] * (
        ends[-1] != b"")
    stream = input_file.InputFile(str(path))._open()
    pieces = list(iter(lambda: stream.readline(limit), b""))
    stream.close()
    assert b"".join(pieces) == data
    assert all(piece.endswith(b"\n") or len(piece) == limit for piece in pieces[:-1])  # bytes, as a file's readline
