"""TREC qrels and runs scored as trec_eval scores them: its own test data, and pytrec_eval (issue 16).

trec_eval's test folder holds outputs of two versions. ``out.test`` (and pytrec_eval, which
bundles trec_eval 9.0.x) turn a recall level into a number of relevant documents as
(long)(level * R + 0.9); the other files were printed by a trec_eval that rounds to the nearest
(its source says so: "In v9 and prior, this was done by adding 0.9 ..."). Every line of those
files is matched with ``iprec_at_recall_nearest`` in place of ``iprec_at_recall``; everything
else is the same measure.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from conftest import DATA
from ragscore.errors import InputError, UsageError
from ragscore.trec.files import read_qrels, read_run
from ragscore.trec.measures import MEASURES, evaluate, headed, parse_measures, render

TREC = DATA / "trec_eval_test"


def _output(qrels, run, measures, per_query=False, complete=False, max_docs=None, level=1, nearest=False):
    q, r = read_qrels(str(TREC / qrels)), read_run(str(TREC / run), max_docs)
    chosen = parse_measures(measures)
    if nearest:
        chosen = [(MEASURES["iprec_at_recall_nearest"], p) if m.name == "iprec_at_recall" else (m, p) for m, p in chosen]
    ev = dataclasses.replace(evaluate(q.topics, r.topics, r.name, chosen, level, complete), headed=headed(measures))
    return render(ev, per_query)


def _lines_of(expected, printed):
    """The lines of a trec_eval output file for the measures ragscore printed."""
    names = {line.split("\t")[0].rstrip() for line in printed.splitlines()}
    return "".join(line for line in expected.splitlines(True) if line.split("\t")[0].rstrip() in names)


def test_the_default_output_line_for_line():
    assert _output("qrels.test", "results.test", []) == (TREC / "out.test").read_text()


@pytest.mark.parametrize(("expected", "args"), [
    ("out.test.aq", dict(qrels="qrels.test", run="results.test", measures=["all_trec"], per_query=True)),
    ("out.test.aqc", dict(qrels="qrels.test", run="results.trunc", measures=["all_trec"], per_query=True,
                          complete=True)),
    ("out.test.aqcM", dict(qrels="qrels.test", run="results.trunc", measures=["all_trec"], per_query=True,
                           complete=True, max_docs=100)),
    ("out.test.aql", dict(qrels="qrels.rel_level", run="results.test", measures=["all_trec"], per_query=True,
                          level=2)),
    ("out.test.meas_params", dict(qrels="qrels.test", run="results.test", per_query=True, measures=[
        "iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000", "ndcg_cut.10,20,23.4", "success.2,5,20"])),
])
def test_every_line_of_every_measure_ragscore_implements(expected, args):
    printed = _output(**args, nearest=True)
    assert printed == _lines_of((TREC / expected).read_text(), printed)
    assert len(printed.splitlines()) > 20


def test_the_two_iprec_roundings_differ_on_this_data():
    default = _output("qrels.test", "results.test", ["iprec_at_recall"], per_query=True)
    nearest = _output("qrels.test", "results.test", ["iprec_at_recall"], per_query=True, nearest=True)
    assert "iprec_at_recall_0.10  \t301\t0.2096" in default and "iprec_at_recall_0.10  \t301\t0.2098" in nearest


# --- pytrec_eval on random judgments and runs with ties ---------------------------------------------

PYTREC = {"map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P", "recall", "ndcg", "ndcg_cut", "map_cut",
          "success", "set_P", "set_recall", "set_F", "num_ret", "num_rel", "num_rel_ret", "infAP"}


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("negative", [False, True])
def test_equals_pytrec_eval(seed, negative):
    """Random graded judgments (negative grades too: judged but pooled-unjudged) and runs with ties."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(seed)
    grades = [-1, 0, 0, 0, 1, 1, 2, 3] if negative else [0, 0, 0, 1, 1, 2, 3]
    # pytrec_eval's nDCG never returns on a negative grade (trec_eval's own output, checked
    # above on qrels.rel_level, gives it no gain): nDCG is compared without them.
    measures = PYTREC - {"ndcg", "ndcg_cut"} if negative else PYTREC
    qrels, run = {}, {}
    for t in range(rng.randint(1, 8)):
        docs = [f"d{rng.randint(0, 80)}" for _ in range(rng.randint(1, 60))]
        qrels[f"q{t}"] = {doc: rng.choice(grades) for doc in docs}
        ranked = rng.sample(range(100), rng.randint(0, 100))
        # Few distinct scores: many ties, broken by docno descending.
        run[f"q{t}"] = {f"d{i}": float(rng.randint(0, 5)) for i in ranked}
    run = {qid: docs for qid, docs in run.items() if docs}
    level = rng.choice([1, 2])
    reference = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=level).evaluate(run)
    ranked = {qid: sorted(sorted(docs, reverse=True), key=docs.__getitem__, reverse=True) for qid, docs in run.items()}
    ours = evaluate(qrels, ranked, "r", parse_measures(sorted(measures)), level)
    assert set(ours.per_query) == set(reference)
    for qid, values in ours.per_query.items():
        for name, value, _ in values:
            assert value == pytest.approx(reference[qid][name], abs=1e-9), (qid, name)


# --- files -------------------------------------------------------------------------------------------

def test_beir_qrels_with_a_header(tmp_path):
    (tmp_path / "q.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tdoc1\t1\nq1\tdoc2\t0\nq2\tdoc3\t2.0\n")
    assert read_qrels(str(tmp_path / "q.tsv")).topics == {"q1": {"doc1": 1, "doc2": 0}, "q2": {"doc3": 2}}


@pytest.mark.parametrize(("text", "message"), [
    ("1 Q0 d1 1 2.0 r\n1 Q0 d1 2 1.0 r\n", "docno 'd1' is ranked twice for topic '1' (trec_eval refuses it too)"),
    ("1 Q0 d1 1 high r\n", "expected a number as the score, got 'high'"),
    ("1 Q0 d1 1\n", "expected a TREC run line (qid iter docno rank score run_tag), got 4 fields"),
])
def test_a_bad_run_is_an_error_at_its_line(tmp_path, text, message):
    (tmp_path / "r.txt").write_text(text)
    with pytest.raises(InputError) as caught:
        read_run(str(tmp_path / "r.txt"))
    assert caught.value.message == message


def test_ties_are_broken_by_docno_descending(tmp_path):
    (tmp_path / "r.txt").write_text("1 Q0 b 1 1.0 r\n1 Q0 a 2 1.0 r\n1 Q0 c 3 1.0 r\n1 Q0 z 4 2.0 r\n")
    assert read_run(str(tmp_path / "r.txt")).topics == {"1": ["z", "c", "b", "a"]}


def test_unknown_measures_are_usage_errors():
    with pytest.raises(UsageError, match="unknown measure 'ndgc'"):
        parse_measures(["ndgc"])
    with pytest.raises(UsageError, match="map takes no parameters"):
        parse_measures(["map.5"])


# --- the command -------------------------------------------------------------------------------------

def test_ragscore_trec_prints_what_trec_eval_prints(ragscore, monkeypatch):
    monkeypatch.chdir(TREC)
    run = ragscore("trec", "qrels.test", "results.test")
    assert (run.status, run.out, run.err) == (0, (TREC / "out.test").read_text(), "")
    picked = ragscore("trec", "-q", "-c", "-M100", "-m", "P.5,10", "-m", "ndcg_cut.10", "qrels.test", "results.trunc")
    expected = (TREC / "out.test.aqcM").read_text()
    assert picked.out == "".join(line for line in expected.splitlines(True)
                                 if line.split("\t")[0].rstrip() in ("P_5", "P_10", "ndcg_cut_10"))


def test_ragscore_trec_input_errors_exit_2(ragscore, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.txt").write_text("1 0 d1 1\n")
    (tmp_path / "r.txt").write_text("1 Q0 d1 1 1.0 r\n1 Q0 d1 2 0.5 r\n")
    run = ragscore("trec", "q.txt", "r.txt")
    assert (run.status, run.err) == (2, "ragscore: error: r.txt:2:3: docno 'd1' is ranked twice for topic '1' "
                                        "(trec_eval refuses it too)\n")
    assert ragscore("trec", "-m", "ndgc", "q.txt", "r.txt").status == 2
