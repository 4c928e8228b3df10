"""Several runs compared (issue 19, part 2): the table of 4 runs equals the pairwise compare results,
marks and wins follow the adjusted p-values, and the options and errors."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from conftest import write

RUNS = ("run_a", "run_b", "run_c", "run_d")


def _runs(folder, seed=7, n=60):
    rng = random.Random(seed)
    gold, runs = [], {name: [] for name in RUNS}
    for i in range(n):
        qid = f"q{i:02d}"
        answerable = i % 6 != 0
        gold.append({"qid": qid, "answerable": answerable, "gold_citations": ["d1"] if answerable else [],
                     "gold_claim_substr": ["alpha"] if answerable else []})
        for name, p in zip(RUNS, (0.4, 0.5, 0.8, 0.85), strict=True):
            right = rng.random() < p
            claim = "alpha" if right else ("not in context" if rng.random() < 0.4 else "beta")
            runs[name].append({"qid": qid, "retrieved_ids": ["d1", "d2"],
                               "answer_json": {"claim": claim, "citations": ["d1"]}})
    write(folder / "g.jsonl", gold)
    for name, traces in runs.items():
        write(folder / f"{name}.jsonl", traces)


@pytest.mark.parametrize("test", ["bootstrap", "t", "sign"])
def test_the_table_of_four_runs_equals_the_pairwise_comparisons(ragscore, isolated, test):
    _runs(isolated)
    run = ragscore("compare", "--gold", "g.jsonl", *(f"{name}.jsonl" for name in RUNS), "--test", test,
                   "--columns", "precision,chr,over_refusal,under_refusal,compliance")
    assert run.status == 0, run.err
    doc = json.loads(run.out)
    assert [r["name"] for r in doc["runs"]] == list(RUNS) and [r["letter"] for r in doc["runs"]] == list("ABCD")
    pairs = {(p["baseline"], p["candidate"]): p for p in doc["pairs"]}
    assert list(pairs) == list(itertools.combinations(RUNS, 2))
    for (a, b), pair in pairs.items():
        alone = json.loads(ragscore("compare", "--gold", "g.jsonl", "--baseline", f"{a}.jsonl", "--trace",
                                    f"{b}.jsonl", "--test", test, "--no-fail").out)
        for name, m in alone["metrics"].items():
            got = pair["metrics"][name]
            assert (got["delta"], got["p_value"], got["p_adjusted"], got["method"]) == (
                m["delta"], m["p_value"], m["p_adjusted"], m["method"]), (a, b, name)
        # Wins and losses: the table's metrics where one run is significantly better.
        wins = sum(pair["metrics"][c]["better"] == a for c in doc["columns"])
        losses = sum(pair["metrics"][c]["better"] == b for c in doc["columns"])
        assert (pair["wins"], pair["losses"], pair["ties"]) == (wins, losses, len(doc["columns"]) - wins - losses)
    # A mark is a pair whose adjusted p is below 0.05, on the better side for the metric's direction.
    for name in RUNS:
        for column in doc["columns"]:
            beaten = doc["table"][name][column]["better_than"]
            for other in RUNS:
                if other == name:
                    continue
                pair = pairs.get((name, other)) or pairs[(other, name)]
                m = pair["metrics"][column]
                assert (other in beaten) == (m["better"] == name)
                if m["better"] is not None:
                    assert m["p_adjusted"] < 0.05
    if test == "sign":
        assert any(doc["table"][name]["precision"]["better_than"] for name in RUNS)  # the data have a winner


def test_names_columns_reports_and_errors(ragscore, isolated):
    _runs(isolated, n=30)
    args = ("compare", "--gold", "g.jsonl", "run_a.jsonl", "run_c.jsonl", "run_d.jsonl")
    run = ragscore(*args, "--names", "old,new,newest", "--columns", "precision", "--format", "markdown",
                   "--html", "t.html")
    assert run.status == 0 and "| A: old |" in run.out and "| C: newest |" in run.out
    assert run.err.splitlines()[0].startswith("ragscore: old vs new: ")
    page = (isolated / "t.html").read_text()
    assert "<script" not in page and "Content-Security-Policy" in page and "<code>newest</code>" in page
    for extra, message in (
        (("--names", "a,a,b"), "expected 3 distinct run names"),
        (("--columns", "precisoin"), "the runs report no metric 'precisoin'; did you mean \"precision\"?"),
        (("--trace", "run_a.jsonl"), "give several RUNs, or --trace and --baseline, not both"),
    ):
        bad = ragscore(*args, *extra)
        assert bad.status == 2 and message in bad.err, bad.err
    bad = ragscore("compare", "--gold", "g.jsonl", "--trace", "run_a.jsonl", "--baseline", "run_b.jsonl",
                   "--html", "x.html")
    assert bad.status == 2 and "--html, --names and --columns are for several RUNs" in bad.err
    bad = ragscore("compare", "--gold", "g.jsonl", "--trace", "run_a.jsonl")
    assert bad.status == 2 and "give --trace and --baseline" in bad.err
    bad = ragscore("compare", "--gold", "g.jsonl", "run_a.jsonl")
    assert bad.status == 2 and "give from 2 to 26 runs, got 1" in bad.err


def test_the_python_api(isolated):
    import ragscore

    _runs(isolated, n=30)
    table = ragscore.compare_several("g.jsonl", ["run_a.jsonl", "run_b.jsonl"], test="t", correction="none")
    assert table.passed and table.document["test"]["name"] == "t"
    assert table.report("markdown").startswith("# ragscore compare: 2 runs")


def test_the_docs_example(ragscore, monkeypatch):
    from conftest import ROOT
    from docs import doc_block

    monkeypatch.chdir(ROOT)
    block = doc_block("$ ragscore compare --gold examples/several/gold.jsonl")
    shown = block.split("\n", 2)[2]  # after the command's two lines
    run = ragscore("compare", "--gold", "examples/several/gold.jsonl",
                   *(f"examples/several/v{i}.jsonl" for i in range(1, 5)), "--format", "markdown", "-q")
    assert run.status == 0 and run.out == shown


def test_notes_escape_run_names(isolated):
    import ragscore

    _runs(isolated, n=20)
    table = ragscore.compare_several("g.jsonl", ["run_a.jsonl", "run_b.jsonl"], names=["a\x1bb", "c"])
    assert table.notes()[0].startswith("a\\x1bb vs c: ")
