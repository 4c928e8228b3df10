"""Per-question rows past a few thousand go to temporary files and come back in gold order, byte for byte."""

from __future__ import annotations

import errno
import gc
import os
import pickle
import tempfile
from pathlib import Path

import pytest

from ragscore import rows as rows_module
from ragscore.rows import RowFile, Rows, RowWriter, SpillError, SpillFolder
from test_parallel import _make


def _row(place: int) -> tuple[int, str]:
    return place, f"Q{place}"  # rows are written and merged as tuples that start with their gold place


def _written(folder: Path, rows: int, chunk: int, monkeypatch: pytest.MonkeyPatch) -> RowFile:
    """Write rows 0..rows-1 as one part, ``chunk`` at a time, to part-0.rows in ``folder``."""
    monkeypatch.setattr(rows_module, "CHUNK", chunk)
    writer = RowWriter(str(folder), "part-0.rows")
    for place in range(rows):
        writer.append(_row(place))  # type: ignore[arg-type]
    return writer.finish()


def test_a_writer_spills_full_chunks_and_reads_them_back_on_every_pass(tmp_path, monkeypatch):
    file = _written(tmp_path, 10, 4, monkeypatch)
    assert (file.count, len(file.offsets), len(file.tail)) == (10, 2, 2)  # two chunks of 4 on disk, 2 in memory
    assert file.path == str(tmp_path / "part-0.rows") and os.path.getsize(file.path) > 0
    assert list(file) == list(file) == [_row(p) for p in range(10)]
    assert len(file) == 10


def test_without_a_folder_or_up_to_a_chunk_nothing_touches_the_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(rows_module, "CHUNK", 4)
    kept = RowWriter(None, "x")  # engines on other machines and partials keep their rows
    small = RowWriter(str(tmp_path), "y")
    for place in range(9):
        kept.append(_row(place))  # type: ignore[arg-type]
    for place in range(4):
        small.append(_row(place))  # type: ignore[arg-type]
    assert kept.finish().path is None and small.finish().path is None
    assert list(tmp_path.iterdir()) == []


def test_parts_merge_by_gold_place(tmp_path, monkeypatch):
    monkeypatch.setattr(rows_module, "CHUNK", 3)
    writers = [RowWriter(str(tmp_path), f"part-{n}.rows") for n in range(3)]
    for place in range(30):
        writers[(place * 7) % 3].append(_row(place))  # type: ignore[arg-type]
    merged = Rows([w.finish() for w in writers])
    assert list(merged) == [_row(p) for p in range(30)] == list(merged)
    assert len(merged) == 30
    assert list(Rows([merged, RowFile()])) == list(merged)  # merged rows merge again


def test_the_folder_goes_with_the_last_rows_that_read_it(monkeypatch):
    monkeypatch.setattr(rows_module, "CHUNK", 2)
    folder = SpillFolder()
    writer = RowWriter(folder, "part-0.rows")
    for place in range(5):
        writer.append(_row(place))  # type: ignore[arg-type]
    rows = Rows([writer.finish()])
    path = Path(folder.path)
    del folder, writer
    gc.collect()
    assert path.is_dir() and list(rows) == [_row(p) for p in range(5)]
    del rows
    gc.collect()
    assert not path.exists()


def test_a_spill_folder_never_leaves_its_process_but_its_rows_do():
    with pytest.raises(TypeError, match="stays in its process"):
        pickle.dumps(SpillFolder())
    file = RowFile(2, None, [], [_row(0), _row(1)], owner=SpillFolder())  # type: ignore[list-item]
    back = pickle.loads(pickle.dumps(file))
    assert back.owner is None and list(back) == [_row(0), _row(1)]
    assert list(pickle.loads(pickle.dumps(Rows([file])))) == list(file)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_spilled_rows_give_the_same_reports_as_rows_in_memory(ragscore, isolated, monkeypatch, jobs):
    _make(isolated, n=1200)
    args = ["--gold", "g.jsonl", "--trace", "t.jsonl", "--jobs", jobs, "--per-question", "--metrics", "all",
            "--bootstrap", "50", "--by", "answerable"]
    reports = []
    made = []
    real_folder = SpillFolder.path.fget  # type: ignore[attr-defined]

    def watched(self: SpillFolder) -> str:
        path = real_folder(self)
        made.append(path)
        return path

    monkeypatch.setattr(SpillFolder, "path", property(watched))
    read_from = set()
    real_iter = RowFile.__iter__

    def reading(self: RowFile):  # type: ignore[no-untyped-def]
        read_from.add(self.path)
        return real_iter(self)

    monkeypatch.setattr(RowFile, "__iter__", reading)
    for chunk in (10**9, 50):  # in memory, then 24 chunks per process (forked workers inherit the setting)
        monkeypatch.setattr(rows_module, "CHUNK", chunk)
        run = ragscore(*args, "--markdown", f"r{chunk}.md", "--html", f"r{chunk}.html", "--junit", f"r{chunk}.xml")
        reports.append((run.status, run.out, run.err, *(Path(f"r{chunk}.{ext}").read_bytes()
                                                         for ext in ("md", "html", "xml"))))
    assert reports[0] == reports[1]
    assert made and len(read_from - {None}) == int(jobs)  # the second run spilled, in each process
    gc.collect()
    assert not any(Path(path).exists() for path in made)  # and left nothing behind


def test_compare_reads_spilled_rows_of_both_runs(ragscore, isolated, monkeypatch):
    _make(isolated, n=600)
    args = ["compare", "--gold", "g.jsonl", "--baseline", "t.jsonl", "--trace", "t.jsonl", "--bootstrap", "50",
            "--per-question"]
    outputs = []
    for chunk in (10**9, 16):
        monkeypatch.setattr(rows_module, "CHUNK", chunk)
        run = ragscore(*args)
        outputs.append((run.status, run.out, run.err))
    assert outputs[0] == outputs[1]


def test_a_folder_that_cannot_be_written_is_one_error(tmp_path, monkeypatch):
    monkeypatch.setattr(rows_module, "CHUNK", 2)
    writer = RowWriter(str(tmp_path / "gone"), "part-0.rows")
    with pytest.raises(SpillError, match="cannot write the per-question rows .*No such file"):
        for place in range(3):
            writer.append(_row(place))  # type: ignore[arg-type]


def _no_temporary_folder(*args, **kwargs):
    raise FileNotFoundError(errno.ENOENT, "No usable temporary directory found in ['/tmp']")


def test_no_usable_temporary_folder(ragscore, isolated, monkeypatch):
    _make(isolated, n=300)
    args = ["--gold", "g.jsonl", "--trace", "t.jsonl", "--per-question", "--bootstrap", "50"]
    expected = ragscore(*args, "--jobs", "1")
    monkeypatch.setattr(tempfile, "TemporaryDirectory", _no_temporary_folder)
    monkeypatch.setattr(rows_module, "CHUNK", 50)
    one = ragscore(*args, "--jobs", "1")  # one process that must spill: an error, status 2
    assert one.status == 2 and one.out == ""
    assert "ragscore: error: cannot write the per-question rows to a temporary folder (TMPDIR): No usable " in one.err
    assert "Traceback" not in one.err
    small = ragscore(*args, "--jobs", "2")  # the parent cannot make one: the workers keep their rows
    assert (small.status, small.out, small.err) == (expected.status, expected.out, expected.err)


def test_a_full_disk_in_a_worker_is_one_error_and_leaves_nothing(ragscore, isolated, monkeypatch):
    _make(isolated, n=300)
    monkeypatch.setattr(rows_module, "CHUNK", 50)
    monkeypatch.setenv("TMPDIR", str(isolated))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pickle, "dump", full)  # forked workers inherit it
    for jobs in ("1", "2"):
        run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--per-question", "--jobs", jobs,
                       "--json", "r.json")
        assert run.status == 2 and "No space left on device; set TMPDIR to a folder with room" in run.err
        assert "Traceback" not in run.err
        gc.collect()
        assert sorted(p.name for p in isolated.iterdir()) == ["g.jsonl", "t.jsonl"]  # no report, no folder


def test_a_merge_holds_one_partial_at_a_time_and_gives_the_same_reports(ragscore, isolated, monkeypatch):
    _make(isolated, n=900)
    paths = []
    for k in (1, 2, 3):
        assert ragscore("partial", "--gold", "g.jsonl", "--trace", "t.jsonl", "--part", f"{k}/3", "-o", f"p{k}.json",
                        "--rows", "--bootstrap", "50").status == 0
        paths.append(f"p{k}.json")
    reports = []
    spilled = []
    real = RowWriter._spill

    def spill(self: RowWriter) -> None:
        spilled.append(self._name)
        real(self)

    monkeypatch.setattr(RowWriter, "_spill", spill)
    for chunk in (10**9, 40):
        monkeypatch.setattr(rows_module, "CHUNK", chunk)
        run = ragscore("merge", *paths, "--per-question", "--markdown", f"m{chunk}.md", "--html", f"m{chunk}.html")
        reports.append((run.status, run.out, run.err, Path(f"m{chunk}.md").read_bytes(),
                        Path(f"m{chunk}.html").read_bytes()))
    assert reports[0] == reports[1]
    assert set(spilled) == {"partial-1.rows", "partial-2.rows", "partial-3.rows"}  # each partial's rows, on disk
    spilled.clear()
    totals = ragscore("merge", *paths, "--format", "json")  # the totals need no rows: none goes to disk
    assert spilled == [] and totals.out == ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--bootstrap", "50").out
    expected = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--per-question", "--bootstrap", "50")
    assert reports[1][1] == expected.out  # and the merge is the whole run's report


def test_a_pass_keeps_no_file_open_between_chunks(tmp_path, monkeypatch):
    import resource

    monkeypatch.setattr(rows_module, "CHUNK", 2)
    writers = [RowWriter(str(tmp_path), f"part-{n}.rows") for n in range(40)]
    for place in range(400):
        writers[place % 40].append(_row(place))  # type: ignore[arg-type]
    files = [w.finish(spill_rest=True) for w in writers]
    assert all(f.tail == [] and len(f.offsets) == 5 for f in files)  # every row on disk
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    open_now = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 20
    resource.setrlimit(resource.RLIMIT_NOFILE, (open_now + 8, hard))  # far fewer than 40 parts
    try:
        assert list(Rows(files)) == [_row(p) for p in range(400)]
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_rows_whose_file_went_are_one_error(tmp_path, monkeypatch):
    file = _written(tmp_path, 5, 2, monkeypatch)
    os.remove(tmp_path / "part-0.rows")
    with pytest.raises(SpillError, match="cannot read the per-question rows back"):
        list(file)


@pytest.mark.parametrize("edit, message", [
    (lambda rows: rows.reverse(), '"result.rows[1]" (question "Q00058") is out of gold order: it comes after question "Q00059"'),
    (lambda rows: rows[1].__setitem__(0, rows[0][0]), '"result.rows[1]" (question "Q00001") is out of gold order: it comes after question "0"'),
    (lambda rows: rows[0].__setitem__(0, 1.5), '"result.rows[0][0]" (a row\'s place): expected a place in the gold set (an integer of at least 0), got 1.5'),
    (lambda rows: rows[0].__setitem__(0, "7"), '"result.rows[0][0]" (a row\'s place): expected a place in the gold set (an integer of at least 0), got "7"'),
    (lambda rows: rows[0].__setitem__(3, "yes"), '"result.rows[0][3]" (a row\'s answerable): expected true or false, got "yes"'),
    (lambda rows: rows[0].__setitem__(1, 17), '"result.rows[0][1]" (a row\'s qid): expected text, got 17'),
])
def test_a_partial_whose_rows_are_not_in_gold_order_is_refused(ragscore, isolated, monkeypatch, edit, message):
    import json

    _make(isolated, n=60)
    assert ragscore("partial", "--gold", "g.jsonl", "--trace", "t.jsonl", "--part", "1/1", "-o", "p.json",
                    "--rows").status == 0
    data = json.loads(Path("p.json").read_text())
    edit(data["result"]["rows"])
    Path("p.json").write_text(json.dumps(data))
    monkeypatch.setattr(rows_module, "CHUNK", 8)
    run = ragscore("merge", "p.json", "--per-question")
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: p.json: a damaged ragscore partial: {message}\n")


def re_search(pattern: str, text: str) -> bool:
    import re

    return re.search(pattern, text) is not None


def test_from_json_with_a_spill_folder_reads_the_same_partial(isolated, monkeypatch):
    import ragscore
    from ragscore.partials import Partial

    _make(isolated, n=300)
    text = ragscore.partial("g.jsonl", "t.jsonl", part=(0, 1), keep_rows=True, bootstrap=50).to_json()
    monkeypatch.setattr(rows_module, "CHUNK", 16)
    folder = SpillFolder()
    spilled = Partial.from_json(text, "p.json", folder)
    assert spilled.result.rows.tail == [] and len(spilled.result.rows.offsets) > 10  # type: ignore[union-attr]
    assert spilled.to_json() == text == Partial.from_json(text).to_json()
    assert ragscore.finalize(spilled).render("markdown") is not None
    assert "".join(ragscore.finalize(spilled, per_question=True).render("json")) == "".join(
        ragscore.finalize(Partial.from_json(text), per_question=True).render("json"))


def test_a_merge_that_lists_no_question_reads_rows_only_for_its_slices(ragscore, isolated, monkeypatch):
    from ragscore import partial_rows

    _make(isolated, n=200)
    read: list[object] = []
    real = partial_rows.RowReader.read

    def counted(self, n, v):  # type: ignore[no-untyped-def]
        read.append(v)
        return real(self, n, v)

    monkeypatch.setattr(partial_rows.RowReader, "read", counted)
    for by in ((), ("--by", "answerable")):
        for k in (1, 2):
            assert ragscore("partial", "--gold", "g.jsonl", "--trace", "t.jsonl", "--part", f"{k}/2", "-o",
                            f"p{k}.json", "--rows", "--bootstrap", "50", *by).status == 0
        read.clear()
        merged = ragscore("merge", "p1.json", "p2.json", "--format", "json")
        assert len(read) == (200 if by else 0)  # slices are made from the rows; nothing else here needs them
        assert merged.out == ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--bootstrap", "50", *by).out


def test_a_hostile_place_is_quoted_on_one_short_line(ragscore, isolated):
    import json

    _make(isolated, n=20)
    assert ragscore("partial", "--gold", "g.jsonl", "--trace", "t.jsonl", "--part", "1/1", "-o", "p.json",
                    "--rows").status == 0
    data = json.loads(Path("p.json").read_text())
    data["result"]["rows"][0][0] = "\x1b[2J\n" + "z" * 10_000
    Path("p.json").write_text(json.dumps(data))
    run = ragscore("merge", "p.json", "--per-question")
    assert run.status == 2 and "\x1b" not in run.err and run.err.count("\n") == 1 and len(run.err) < 300
    assert '"result.rows[0][0]" (a row\'s place): expected a place' in run.err and "characters]" in run.err
