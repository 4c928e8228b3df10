"""Several processes give the same bytes as one; small inputs never start a worker."""

from __future__ import annotations

import json
import random

import pytest

from conftest import EXAMPLES, write
from ragscore import parallel


def _make(folder, n=3000, seed=7, text_join=False):
    rng = random.Random(seed)
    gold, traces = [], []
    for i in range(n):
        qid = f"Q{i:05d}" if i % 7 else i  # some integer qids
        cites = [f"d{rng.randrange(50)}#{p}" for p in range(rng.randint(0, 2))]
        gold.append({"qid": qid, "question": f"Question {i} über Größe?", "answerable": rng.random() > 0.2,
                     "gold_claim_substr": [f"fact {i} straße"], "gold_citations": cites,
                     "gold_relevance": {c: rng.randint(1, 3) for c in cites},
                     **({"forbidden_substr": ["secret"]} if i % 11 == 0 else {})})
        if rng.random() < 0.03:
            continue  # missing
        retrieved = [f"d{rng.randrange(50)}#{rng.randint(0, 2)}" for _ in range(8)] + cites[:1]
        line = {"qid": qid, "retrieved_ids": retrieved,
                "answer_json": {"claim": rng.choice([f"The FACT {i} STRASSE.", "not in context", "secret fact",
                                                     f"fact {i} Straße"]),
                                "citations": rng.choice([cites[:1], [], [retrieved[0]], "bad"])}}
        if text_join and i % 5 == 0:
            line = {"q": gold[-1]["question"], **{k: v for k, v in line.items() if k != "qid"}}
        traces.append(line)
        if rng.random() < 0.02:
            traces.append(dict(line, answer_json={"claim": "changed my mind", "citations": []}))  # duplicate
        if rng.random() < 0.02:
            traces.append(dict(line, qid=f"X{i}"))  # unknown
    rng.shuffle(traces)
    write(folder / "g.jsonl", gold)
    write(folder / "t.jsonl", traces)


@pytest.mark.parametrize("text_join", [False, True])
def test_parallel_and_single_process_reports_are_identical(ragscore, isolated, text_join):
    _make(isolated, text_join=text_join)
    outputs = []
    for jobs in ("1", "2", "3"):
        args = ["--gold", "g.jsonl", "--trace", "t.jsonl", "--jobs", jobs, "--per-question", "--metrics", "all", "--bootstrap", "50",
                "--markdown", f"r{jobs}.md"]
        run = ragscore(*args)
        outputs.append((run.status, run.out, run.err, (isolated / f"r{jobs}.md").read_text()))
    assert outputs[0] == outputs[1] == outputs[2]
    doc = json.loads(outputs[0][1])
    assert doc["counts"]["duplicate_traces"] > 0 and doc["counts"]["unknown_traces"] > 0 and doc["counts"]["missing"] > 0


def test_parallel_reports_the_first_error_in_the_files(ragscore, isolated):
    _make(isolated, n=500)
    lines = (isolated / "t.jsonl").read_text().splitlines()
    lines[300] = lines[300][:-1]  # a truncated line
    lines[400] = '{"qid": ["bad"]}'
    (isolated / "t.jsonl").write_text("\n".join(lines) + "\n")
    errors = {ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--jobs", j).err for j in ("1", "2", "3")}
    assert len(errors) == 1 and errors.pop().startswith("ragscore: error: t.jsonl:301:")


def test_small_inputs_never_start_worker_processes(ragscore, isolated, monkeypatch):
    def no_workers(*_args, **_kwargs):
        raise AssertionError("a worker process was started")

    import multiprocessing

    monkeypatch.setattr(multiprocessing, "get_context", no_workers)
    run = ragscore("--gold", EXAMPLES / "gold.jsonl", "--trace", EXAMPLES / "trace.jsonl")
    assert run.status == 0
    assert parallel.choose_jobs(None, str(EXAMPLES / "gold.jsonl"), str(EXAMPLES / "trace.jsonl")) == 1


def test_large_inputs_use_every_core(isolated, monkeypatch):
    write(isolated / "g.jsonl", "x" * (parallel.PARALLEL_MIN_BYTES + 1))
    write(isolated / "t.jsonl", "")
    monkeypatch.setattr(parallel, "available_cores", lambda: 4)
    assert parallel.choose_jobs(None, "g.jsonl", "t.jsonl") == 4
    assert parallel.choose_jobs(2, "g.jsonl", "t.jsonl") == 2
    assert parallel.choose_jobs(None, "-", "t.jsonl") == 1


def test_a_repeated_qid_key_is_read_as_json_reads_it(ragscore, isolated):
    _make(isolated, n=400)
    lines = (isolated / "t.jsonl").read_text().splitlines()
    # JSON keeps the last of repeated keys: this line is a trace for Q00002, whatever its first key says.
    lines.append('{"qid": "Q00001", "retrieved_ids": [], "qid": "Q00002", "answer_json": {"claim": "x"}}')
    (isolated / "t.jsonl").write_text("\n".join(lines) + "\n")
    (isolated / "g.jsonl").write_text((isolated / "g.jsonl").read_text()
                                      + '{"qid": "dup1", "answerable": true, "qid": "dup2"}\n')
    outputs = {ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--per-question", "--jobs", j).out for j in "123"}
    assert len(outputs) == 1
    assert '"qid": "dup2"' in outputs.pop()


def test_pipes_are_read_by_one_process(isolated):
    import os

    trace = (EXAMPLES / "trace.jsonl").read_bytes()
    read, write_end = os.pipe()
    os.write(write_end, trace)
    os.close(write_end)
    try:
        assert parallel.choose_jobs(4, str(EXAMPLES / "gold.jsonl"), f"/dev/fd/{read}") == 1
    finally:
        os.close(read)


def test_items_sharing_a_line_keep_file_order(ragscore, isolated):
    write(isolated / "g.json", '[{"qid": "d", "answerable": true}, {"qid": "a", "answerable": true}, '
                               '{"qid": "m", "answerable": false}]\n')
    write(isolated / "t.jsonl", [{"qid": "no such question", "answer": "x"}])  # every question missing
    for jobs in ("1", "2", "3"):
        run = ragscore("--gold", "g.json", "--trace", "t.jsonl", "--per-question", "--jobs", jobs)
        assert [q["qid"] for q in run.json()["questions"]] == ["d", "a", "m"]
        assert "no trace (MISSING_TRACE, scored as refusals): d, a, m" in run.err


def test_huge_integer_qids(ragscore, isolated):
    write(isolated / "g.jsonl", '{"qid": 123456789012345678901234567890, "answerable": true}\n')
    write(isolated / "t.jsonl", '{"qid": ' + "1" * 5000 + ', "answer": "x"}\n')
    for jobs in ("1", "2"):
        run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--jobs", jobs)
        assert (run.status, run.err) == (2, "ragscore: error: t.jsonl:1: invalid JSON: a number has too many digits\n")


@pytest.mark.parametrize("text_join", [False, True])
@pytest.mark.parametrize("resamples", ["50", "1000"])  # 3,000 questions: resampled, then the normal approximation
def test_parallel_compare_gives_the_same_bytes(ragscore, isolated, text_join, resamples):
    _make(isolated, text_join=text_join)
    (isolated / "t.jsonl").rename(isolated / "base.jsonl")
    _make(isolated, seed=8, text_join=text_join)
    outputs = []
    for jobs in ("1", "2", "3"):
        run = ragscore("compare", "--gold", "g.jsonl", "--baseline", "base.jsonl", "--trace", "t.jsonl", "--jobs", jobs,
                       "--metrics", "all", "--bootstrap", resamples, "--markdown", f"c{jobs}.md")
        outputs.append((run.status, run.out, run.err, (isolated / f"c{jobs}.md").read_text()))
    assert outputs[0] == outputs[1] == outputs[2]
    doc = json.loads(outputs[0][1])
    methods = {m["method"] for m in doc["metrics"].values()} - {None}
    assert methods == {"bootstrap" if resamples == "50" else "normal"}
    assert doc["mcnemar"]["fixed"] > 100 and doc["mcnemar"]["broken"] > 100
    assert doc["metrics"]["ndcg@10"]["p_value"] is not None and doc["metrics"]["bleu"]["p_value"] is None


def test_parallel_compare_reports_the_candidates_error_first(ragscore, isolated):
    _make(isolated, n=500)
    lines = (isolated / "t.jsonl").read_text().splitlines()
    broken_base = lines[:]
    broken_base[100] = "{"
    lines[300] = '{"qid": ["bad"]}'
    write(isolated / "base.jsonl", "\n".join(broken_base) + "\n")
    write(isolated / "cand.jsonl", "\n".join(lines) + "\n")
    args = ("compare", "--gold", "g.jsonl", "--baseline", "base.jsonl")
    errors = {ragscore(*args, "--trace", "cand.jsonl", "--jobs", j).err for j in "123"}
    assert len(errors) == 1 and errors.pop().startswith("ragscore: error: cand.jsonl:301:")
    errors = {ragscore(*args, "--trace", "t.jsonl", "--jobs", j).err for j in "123"}
    assert len(errors) == 1 and errors.pop().startswith("ragscore: error: base.jsonl:101:")
