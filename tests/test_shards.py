"""Several trace files read as one (issue 16): --trace given more than once, a quoted glob, a folder."""

from __future__ import annotations

import gzip
import hashlib
import json
import random

import pytest

import ragscore
from conftest import EXAMPLES, write

PRODUCT = EXAMPLES / "product"


def _gold_and_traces(n=300, seed=7):
    """A gold set and a trace file with duplicates, unknown qids, unreadable traces and blank lines."""
    rng = random.Random(seed)
    gold, traces = [], []
    for i in range(n):
        qid = f"q{i:04d}"
        answerable = rng.random() < 0.8
        gold.append({"qid": qid, "question": f"question {i}?", "answerable": answerable,
                     "gold_claim_substr": [f"fact {i}"] if answerable else [],
                     "gold_citations": [f"d{i}"] if answerable else []})
    for i in rng.sample(range(n), n - 20) + [rng.randrange(n) for _ in range(30)]:
        roll = rng.random()
        if roll < 0.05:
            traces.append(_trace(f"stray{i}", "x"))
        elif roll < 0.08:
            traces.append({"qid": f"q{i:04d}", "answer_text": "no claim field"})
        elif roll < 0.2:
            traces.append(_trace(f"q{i:04d}", "not in context"))
        else:
            right = rng.random() < 0.7
            traces.append(_trace(f"q{i:04d}", f"It is fact {i}." if right else "Something else.",
                                 [f"d{i}"] if right else [f"d{i + 1}"],
                                 retrieved_ids=[f"d{j}" for j in rng.sample(range(n), 4)] + [f"d{i}"]))
    return gold, traces


def _trace(qid, claim, citations=(), **fields):
    """A trace in the native contract: the answer under answer_json."""
    return {"qid": qid, "answer_json": {"claim": claim, "citations": list(citations)}, **fields}


def _lines(records):
    return "".join(json.dumps(r) + "\n" for r in records)


def _split(text, parts):
    lines = text.splitlines(keepends=True)
    size = -(-len(lines) // parts)
    return ["".join(lines[i * size:(i + 1) * size]) for i in range(parts)]


def _without_inputs(doc):
    return {key: value for key, value in doc.items() if key != "inputs"}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_seven_gzip_shards_as_a_glob_give_the_plain_files_report(ragscore, isolated, jobs):
    gold, traces = _gold_and_traces()
    write(isolated / "gold.jsonl", gold)
    text = _lines(traces)
    (isolated / "trace.jsonl").write_text(text, encoding="utf-8")
    (isolated / "logs").mkdir()
    for n, shard in enumerate(_split(text, 7)):
        (isolated / "logs" / f"trace-{n}.jsonl.gz").write_bytes(gzip.compress(shard.encode(), mtime=0))
    options = ["--no-fail", "-q", "--per-question", "--metrics", "all"]
    plain = ragscore("--gold", "gold.jsonl", "--trace", "trace.jsonl", *options)
    sharded = ragscore("--gold", "gold.jsonl", "--trace", "logs/trace-*.jsonl.gz", "--jobs", jobs, *options)
    assert sharded.status == plain.status == 0, sharded.err
    doc, expected = sharded.json(), plain.json()
    assert _without_inputs(doc) == _without_inputs(expected)
    assert doc["counts"]["duplicate_traces"] > 0 and doc["counts"]["unknown_traces"] > 0
    assert doc["counts"]["unreadable"] > 0
    # The stream's digest is the plain file's; each file is listed with its own.
    assert doc["inputs"]["trace"]["sha256"] == expected["inputs"]["trace"]["sha256"]
    assert doc["inputs"]["trace"]["path"] == "logs/trace-*.jsonl.gz"
    assert [f["path"] for f in doc["inputs"]["trace"]["files"]] == [f"logs/trace-{n}.jsonl.gz" for n in range(7)]
    assert [f["sha256"] for f in doc["inputs"]["trace"]["files"]] == [
        hashlib.sha256(shard.encode()).hexdigest() for shard in _split(text, 7)]
    # The same, byte for byte, with the other number of processes, from a folder, and as options.
    again = ragscore("--gold", "gold.jsonl", "--trace", "logs", "--jobs", "3" if jobs == "1" else "1", *options)
    assert _without_inputs(again.json()) == _without_inputs(doc)
    assert again.json()["inputs"]["trace"]["files"] == doc["inputs"]["trace"]["files"]
    listed = ragscore("--gold", "gold.jsonl", *[x for n in range(7) for x in ("--trace", f"logs/trace-{n}.jsonl.gz")],
                      "--jobs", jobs, *options)
    assert _without_inputs(listed.json()) == _without_inputs(doc)


def test_the_order_of_files_is_the_order_of_the_last_line_that_counts(ragscore, isolated):
    write(isolated / "gold.jsonl", [{"qid": "q1", "answerable": True, "gold_claim_substr": ["paris"],
                                     "gold_citations": ["d1"]}])
    write(isolated / "b.jsonl", [_trace("q1", "Paris", ["d1"], retrieved_ids=["d1"])])
    write(isolated / "a.jsonl", [_trace("q1", "Lyon", ["d1"], retrieved_ids=["d1"])])
    # sorted: a then b, so b's (correct) trace counts; given as options: the order given.
    by_glob = ragscore("--gold", "gold.jsonl", "--trace", "[ab].jsonl", "-q", "--no-fail").json()
    assert by_glob["labels"]["OK"] == 1
    reversed_ = ragscore("--gold", "gold.jsonl", "--trace", "b.jsonl", "--trace", "a.jsonl", "-q", "--no-fail").json()
    assert reversed_["labels"]["OK"] == 0 and reversed_["counts"]["duplicate_traces"] == 1


def test_a_file_without_a_last_line_end_does_not_run_into_the_next(ragscore, isolated):
    write(isolated / "gold.jsonl", [{"qid": f"q{i}", "answerable": False} for i in range(3)])
    (isolated / "t1.jsonl").write_text('{"qid": "q0", "answer_json": {"claim": "not in context"}}', encoding="utf-8")
    # A later file's UTF-8 byte-order mark is left out, as a first file's is.
    (isolated / "t2.jsonl").write_bytes(b'\xef\xbb\xbf{"qid": "q1", "answer_json": {"claim": "not in context"}}\n'
                                        b'{"qid": "q2", "answer_json": {"claim": "not in context"}}')
    run = ragscore("--gold", "gold.jsonl", "--trace", "t1.jsonl", "--trace", "t2.jsonl", "-q")
    assert run.status == 0, run.err
    assert run.json()["counts"]["trace_lines"] == 3 and run.json()["refused"] == 3


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_error_names_the_file_and_its_own_line(ragscore, isolated, jobs):
    gold, traces = _gold_and_traces(n=40)
    write(isolated / "gold.jsonl", gold)
    shards = _split(_lines(traces), 4)
    broken = shards[2].splitlines(keepends=True)
    broken[1] = '{"qid": "q0001", "claim": "x",}\n'
    shards[2] = "".join(broken)
    for n, shard in enumerate(shards):
        (isolated / f"t{n}.jsonl").write_text(shard, encoding="utf-8")
    run = ragscore("--gold", "gold.jsonl", "--trace", "t*.jsonl", "--jobs", jobs)
    assert run.status == 2 and run.out == ""
    assert run.err.startswith("ragscore: error: t2.jsonl:2:31: invalid JSON"), run.err
    # validate says the same, at the same place.
    checked = ragscore("validate", "--gold", "gold.jsonl", "--trace", "t*.jsonl", "-q")
    assert checked.status == 2 and "t2.jsonl:2:31: error: invalid JSON" in checked.out, checked.out


def test_notes_and_explanations_name_the_file_and_its_own_line(ragscore, isolated):
    write(isolated / "gold.jsonl", [{"qid": f"q{i}", "answerable": False} for i in range(4)])
    write(isolated / "t1.jsonl", [_trace("q0", "not in context"), _trace("q1", "not in context")])
    write(isolated / "t2.jsonl", [_trace("q2", "not in context"), {"qid": "q3", "output_text": "no claim"},
                                  _trace("q2", "not in context", retrieved_ids=[{"score": 1}])])
    run = ragscore("--gold", "gold.jsonl", "--trace", "t1.jsonl", "--trace", "t2.jsonl", "--no-fail")
    assert "counts.unreadable): t2.jsonl:2: its keys are" in run.err, run.err
    assert "or --map document_id=PATH): t2.jsonl:3\n" in run.err, run.err
    explained = ragscore("--gold", "gold.jsonl", "--trace", "t1.jsonl", "--trace", "t2.jsonl", "--explain", "q2")
    assert "trace: t2.jsonl line 3 (the last of 2 lines for this question)" in explained.out, explained.out


def test_what_cannot_be_read_as_several_files_is_an_error(ragscore, isolated):
    write(isolated / "gold.jsonl", [{"qid": "q0", "answerable": False}])
    write(isolated / "t.jsonl", [_trace("q0", "not in context")])
    cases = [
        (["--trace", "nothing-*.jsonl"], "nothing-*.jsonl: no file matches this pattern"),
        (["--trace", "t.jsonl", "--trace", "./t.jsonl"], "--trace: t.jsonl and ./t.jsonl are the same file (a "
                                                         "link?); each file is read once"),
        (["--trace", "t.jsonl", "--trace", "t.jsonl"], "--trace: t.jsonl is named twice; each file is read once"),
        (["--trace", "t.jsonl", "--trace", "gone.jsonl"], "gone.jsonl: no such file"),
        (["--trace", "t.jsonl", "--trace", "-"], "--trace -: standard input cannot be one of several trace inputs"),
    ]
    (isolated / "empty").mkdir()
    (isolated / "empty" / "_SUCCESS").write_text("")
    (isolated / "empty" / ".part-0.crc").write_bytes(b"\x00\x01")
    cases.append((["--trace", "empty"], "empty: the folder holds no file to read (hidden files and names starting "
                                        "with _ are left out)"))
    (isolated / "arr.json").write_text('[{"qid": "q0", "claim": "x"}]')
    cases.append((["--trace", "t.jsonl", "--trace", "arr.json"], "arr.json:1: a JSON array cannot be read as one of "
                                                                 "several trace files: write JSON Lines"))
    (isolated / "r1.csv").write_text("user_input,response\nq,not in context\n")
    (isolated / "r2.csv").write_text("user_input,response\nq,not in context\n")
    cases.append((["--trace", "r*.csv", "--trace-format", "ragas"], "r1.csv: a CSV file cannot be read as one of "
                                                                    "several trace files"))
    for options, message in cases:
        run = ragscore("--gold", "gold.jsonl", *options)
        assert run.status == 2 and message in run.err, (options, run.err)
        assert "Traceback" not in run.err


def test_a_folder_skips_hidden_and_underscore_files(ragscore, isolated):
    write(isolated / "gold.jsonl", [{"qid": "q0", "answerable": False}, {"qid": "q1", "answerable": False}])
    out = isolated / "spark-out"
    out.mkdir()
    write(out / "part-00000.json", [_trace("q0", "not in context")])
    write(out / "part-00001.json", [_trace("q1", "not in context")])
    (out / "_SUCCESS").write_text("")
    (out / ".part-00000.json.crc").write_bytes(b"\x00\x01crc")
    doc = ragscore("--gold", "gold.jsonl", "--trace", "spark-out", "-q").json()
    assert doc["refused"] == 2
    assert [f["path"] for f in doc["inputs"]["trace"]["files"]] == ["spark-out/part-00000.json",
                                                                   "spark-out/part-00001.json"]


def test_a_glob_that_matches_one_file_reads_it_as_named(ragscore, isolated):
    write(isolated / "gold.jsonl", [{"qid": "q0", "answerable": False}])
    write(isolated / "t.jsonl", [_trace("q0", "not in context")])
    doc = ragscore("--gold", "gold.jsonl", "--trace", "t.*", "-q").json()
    assert doc["inputs"]["trace"] == {"path": "t.jsonl", "sha256": doc["inputs"]["trace"]["sha256"]}


def test_the_python_api_and_compare_take_several_files(isolated):
    text = (PRODUCT / "trace.jsonl").read_text(encoding="utf-8")
    for n, shard in enumerate(_split(text, 3)):
        (isolated / f"t{n}.jsonl").write_text(shard, encoding="utf-8")
    base = (PRODUCT / "baseline.jsonl").read_text(encoding="utf-8")
    for n, shard in enumerate(_split(base, 2)):
        (isolated / f"b{n}.jsonl").write_text(shard, encoding="utf-8")
    plain = ragscore.score(PRODUCT / "gold.jsonl", PRODUCT / "trace.jsonl")
    listed = ragscore.score(PRODUCT / "gold.jsonl", [isolated / "t0.jsonl", "t1.jsonl", "t[2].jsonl"])
    globbed = ragscore.score(PRODUCT / "gold.jsonl", "t*.jsonl")
    assert listed.metrics == globbed.metrics == plain.metrics
    compared = ragscore.compare(PRODUCT / "gold.jsonl", "b*.jsonl", "t*.jsonl")
    expected = ragscore.compare(PRODUCT / "gold.jsonl", PRODUCT / "baseline.jsonl", PRODUCT / "trace.jsonl")
    assert compared.deltas == expected.deltas


def test_a_report_never_overwrites_a_file_of_a_folder_or_glob(ragscore, isolated):
    write(isolated / "gold.jsonl", [{"qid": "q0", "answerable": False}])
    (isolated / "t").mkdir()
    write(isolated / "t" / "a.jsonl", [_trace("q0", "not in context")])
    write(isolated / "t" / "b.jsonl", [_trace("q0", "not in context")])
    before = (isolated / "t" / "b.jsonl").read_bytes()
    for trace in ("t", "t/*.jsonl"):
        for report in ("--markdown", "--json", "--html"):
            run = ragscore("--gold", "gold.jsonl", "--trace", trace, report, "t/b.jsonl", "--format", "none")
            assert run.status == 2 and "a report never overwrites an input" in run.err, (trace, report, run.err)
    run = ragscore("compare", "--gold", "gold.jsonl", "--trace", "t", "--baseline", "t/a.jsonl", "--json", "t/a.jsonl")
    assert run.status == 2 and "a report never overwrites an input" in run.err
    assert (isolated / "t" / "b.jsonl").read_bytes() == before


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_earlier_files_error_comes_before_a_later_file_that_cannot_be_opened(ragscore, isolated, jobs):
    write(isolated / "gold.jsonl", [{"qid": f"q{i}", "answerable": False} for i in range(4)])
    (isolated / "t").mkdir()
    (isolated / "t" / "a.jsonl").write_text('{"qid": "q1", "answer_json": {"claim": "x"}}\n{"qid":"q2",bad}\n',
                                            encoding="utf-8")
    (isolated / "t" / "b.jsonl").write_bytes(b'{"qid":"q3","answer_json":{"claim":"caf\xe9"}}\n')
    run = ragscore("--gold", "gold.jsonl", "--trace", "t", "--jobs", jobs)
    assert run.err.startswith("ragscore: error: t/a.jsonl:2:13: invalid JSON"), run.err
    (isolated / "t" / "a.jsonl").write_text('{"qid": "q1", "answer_json": {"claim": "x"}}\n', encoding="utf-8")
    run = ragscore("--gold", "gold.jsonl", "--trace", "t", "--jobs", jobs)
    assert run.err.startswith("ragscore: error: t/b.jsonl:1:40: expected UTF-8 text, got byte 0xe9"), run.err
    (isolated / "t" / "c.jsonl").write_bytes(b"\x00\x01binary")
    (isolated / "t" / "b.jsonl").write_text('{"qid": "q3", "answer_json": {"claim": "x"}}\n', encoding="utf-8")
    run = ragscore("--gold", "gold.jsonl", "--trace", "t", "--jobs", jobs)
    assert run.err == "ragscore: error: t/c.jsonl:1:1: expected text, got a binary file (a NUL byte)\n", run.err


def test_validate_names_an_earlier_trace_by_its_own_file_and_line(ragscore, isolated):
    write(isolated / "gold.jsonl", [{"qid": f"q{i}", "answerable": False} for i in range(1, 5)])
    write(isolated / "a.jsonl", [_trace("q1", "not in context")])
    write(isolated / "b.jsonl", [_trace("q2", "not in context"), _trace("q3", "not in context")])
    write(isolated / "c.jsonl", [_trace("q3", "not in context")])
    run = ragscore("validate", "--gold", "gold.jsonl", "--trace", "a.jsonl", "--trace", "b.jsonl", "--trace", "c.jsonl")
    assert 'c.jsonl:1: warning: another trace for "q3" (b.jsonl:2); the last one counts' in run.out.splitlines()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_error_says_how_auto_read_the_traces_whatever_the_jobs(ragscore, isolated, jobs):
    lines = (EXAMPLES / "formats" / "ragas.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (isolated / "r1.jsonl").write_text("".join(lines[:2]), encoding="utf-8")
    (isolated / "r2.jsonl").write_text(lines[2] + "{bad\n", encoding="utf-8")
    run = ragscore("--gold", EXAMPLES / "formats" / "gold.jsonl", "--trace", "r*.jsonl", "--jobs", jobs)
    assert run.err == ("ragscore: error: r2.jsonl:2:2: invalid JSON: Expecting property name enclosed in double "
                       "quotes (read as ragas, detected from the first record; --trace-format names the format)\n"), run.err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_compare_lists_each_file_of_both_runs(ragscore, isolated, jobs):
    for name, source in (("t", "trace.jsonl"), ("b", "baseline.jsonl")):
        (isolated / name).mkdir()
        for n, shard in enumerate(_split((PRODUCT / source).read_text(encoding="utf-8"), 2)):
            (isolated / name / f"{n}.jsonl").write_text(shard, encoding="utf-8")
    run = ragscore("compare", "--gold", PRODUCT / "gold.jsonl", "--trace", "t", "--baseline", "b/*.jsonl",
                   "--jobs", jobs, "--no-fail", "-q")
    doc = json.loads(run.out)
    assert [f["path"] for f in doc["inputs"]["trace"]["files"]] == ["t/0.jsonl", "t/1.jsonl"]
    assert [f["path"] for f in doc["inputs"]["baseline"]["files"]] == ["b/0.jsonl", "b/1.jsonl"]
    plain = json.loads(ragscore("compare", "--gold", PRODUCT / "gold.jsonl", "--trace", PRODUCT / "trace.jsonl",
                                "--baseline", PRODUCT / "baseline.jsonl", "--no-fail", "-q").out)
    assert doc["metrics"] == plain["metrics"]
    assert doc["inputs"]["trace"]["sha256"] == plain["inputs"]["trace"]["sha256"]


def test_validate_keeps_what_it_found_before_a_file_that_cannot_be_read(ragscore, isolated):
    write(isolated / "gold.jsonl", [{"qid": f"q{i}", "answerable": False} for i in range(1, 3)])
    (isolated / "a.jsonl").write_text('{"qid": "q1", "answer_json": {"claim": "not in context"}}\n{"qid":"q9",bad}\n',
                                      encoding="utf-8")
    (isolated / "b.jsonl").write_bytes(b"\x00\x01binary")
    run = ragscore("validate", "--gold", "gold.jsonl", "--trace", "a.jsonl", "--trace", "b.jsonl")
    assert run.status == 2
    assert run.out.splitlines()[1:] == [
        "a.jsonl:2:13: error: invalid JSON: Expecting property name enclosed in double quotes",
        "b.jsonl:1:1: error: expected text, got a binary file (a NUL byte)"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_refused_field_that_is_not_a_boolean_is_counted_and_named(ragscore, isolated, jobs):
    write(isolated / "gold.jsonl", [{"qid": f"q{i}", "answerable": False} for i in range(3)])
    write(isolated / "t.jsonl", [{"qid": "q0", "answer_json": {"claim": "x"}, "refused": "yes"},
                                 {"qid": "q1", "answer_json": {"claim": "x", "refused": 1}},
                                 {"qid": "q2", "answer_json": {"claim": "not in context"}, "refused": None}])
    run = ragscore("--gold", "gold.jsonl", "--trace", "t.jsonl", "--no-fail", "--format", "none", "--jobs", jobs)
    assert ('2 traces have a "refused" field that is neither true nor false (read as absent: the claim decides; '
            "write a boolean): t.jsonl, lines 1, 2") in run.err, run.err
    # mapped from another field, as read
    write(isolated / "m.jsonl", [{"qid": "q0", "result": "x", "flag": "yes"}])
    run = ragscore("--gold", "gold.jsonl", "--trace", "m.jsonl", "--map", "claim=result", "--map", "refused=flag",
                   "--no-fail", "--format", "none")
    assert 'a "refused" field that is neither true nor false' in run.err
    checked = ragscore("validate", "--gold", "gold.jsonl", "--trace", "t.jsonl")
    assert 't.jsonl:1: warning: "refused" is neither true nor false: read as absent (the claim decides)' in checked.out
