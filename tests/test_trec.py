"""TREC qrels and runs scored as trec_eval scores them: its own test data, and pytrec_eval (issue 16).

trec_eval's test folder holds outputs of two versions. ``out.test`` (and pytrec_eval, which
bundles trec_eval 9.0.x) turn a recall level into a number of relevant documents as
(long)(level * R + 0.9); the other files were printed by a trec_eval that rounds to the nearest
(its source says so: "In v9 and prior, this was done by adding 0.9 ..."). Every line of those
files is matched with ``iprec_at_recall_nearest`` in place of ``iprec_at_recall``; everything
else is the same measure.
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import hashlib
import io
import lzma
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
    ("1 Q0 d1 1 high r\n", 'expected a number as the score, got "high"'),
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
    assert (run.status, run.err) == (2, "ragscore: error: r.txt:2:6: docno 'd1' is ranked twice for topic '1' "
                                        "(trec_eval refuses it too)\n")
    assert ragscore("trec", "-m", "ndgc", "q.txt", "r.txt").status == 2


# --- the fast reader reads what the line-by-line reader reads ------------------------------------------

def _reference_run(text):
    """The run as trec_eval ranks it, read the plain way: every line's fields, a dict per topic, two sorts."""
    scored, name = {}, None
    for line in text.removeprefix("\ufeff").split("\n"):
        fields = line.split()
        if not fields:
            continue
        name = fields[5] if name is None else name
        scored.setdefault(fields[0], {})[fields[2]] = float(fields[4])
    ranked = {}
    for qid, docs in scored.items():
        order = sorted(docs, key=lambda doc: doc.encode("utf-8"), reverse=True)
        ranked[qid] = sorted(order, key=docs.__getitem__, reverse=True)
    return name or "", ranked


def _random_run(rng, layout):
    """A random run: ties, topics in pieces and out of order, the separators and line ends of ``layout``."""
    lines = []
    for t in range(rng.randint(1, 12)):
        qid = rng.choice(["1", "2", "10", "q\u00e9", f"t{t}"])
        docs = rng.sample(range(300), rng.randint(1, 120))
        for rank, d in enumerate(docs, 1):
            doc = f"d{d}" if d % 7 else f"d\u00e9{d}"
            score = rng.choice([f"{rng.randint(0, 9)}", f"{rng.uniform(-5, 5):.3f}", "1e1", "-0.0", "0"])
            lines.append([qid, "Q0", doc, str(rank), score, rng.choice(["tag", "other"])])
    seen, kept = set(), []
    for fields in lines:  # a docno once per topic
        if (fields[0], fields[2]) not in seen:
            seen.add((fields[0], fields[2]))
            kept.append(fields)
    if layout == "shuffled":
        rng.shuffle(kept)
    sep = {"tabs": "\t", "spaces": "  "}.get(layout, " ")
    end = "\r\n" if layout == "crlf" else "\n"
    text = end.join(sep.join(fields) for fields in kept) + (end if rng.random() < 0.5 else "")
    if layout == "blank lines":
        text = "\n" + text.replace("\n", "\n\n", 3)
    if layout == "bom":
        text = "\ufeff" + text
    return text


@pytest.mark.parametrize("layout", ["plain", "shuffled", "tabs", "spaces", "crlf", "blank lines", "bom"])
@pytest.mark.parametrize("seed", range(6))
def test_the_run_reader_ranks_as_trec_eval_ranks(tmp_path, monkeypatch, layout, seed):
    import ragscore.trec.files as files

    text = _random_run(random.Random(seed), layout)
    path = tmp_path / "run.txt"
    path.write_bytes(text.encode("utf-8"))
    name, ranked = _reference_run(text)
    if layout != "blank lines":  # read by the fast reader (a blank line sends a file to the line-by-line one)
        monkeypatch.setattr(files, "_read_run_lines", None)
    for block in (17, 300, 1 << 16):  # blocks that cut topics anywhere
        monkeypatch.setattr(files, "_BLOCK_BYTES", block)
        run = read_run(str(path))
        assert (run.name, dict(run.topics), run.sha256) == (name, ranked, hashlib.sha256(path.read_bytes()).hexdigest())
    for most in (1, 3, 119, 120, 121):
        truncated = read_run(str(path), max_docs=most)
        assert dict(truncated.topics) == {qid: docs[:most] for qid, docs in ranked.items()}


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_a_compressed_run_reads_as_the_plain_file(tmp_path, compress):
    text = _random_run(random.Random(3), "plain").encode()
    (tmp_path / "plain").write_bytes(text)
    (tmp_path / "packed").write_bytes(compress(text))
    plain, packed = read_run(str(tmp_path / "plain")), read_run(str(tmp_path / "packed"))
    assert (packed.name, dict(packed.topics), packed.sha256) == (plain.name, dict(plain.topics), plain.sha256)


def test_a_run_on_standard_input(monkeypatch):
    text = _random_run(random.Random(4), "plain")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    run = read_run("-")
    assert (run.source, run.name, dict(run.topics)) == ("<stdin>", *_reference_run(text))


@pytest.mark.parametrize("cores", [1, 2])
def test_a_large_run_is_read_in_two_processes_as_in_one(tmp_path, monkeypatch, cores):
    import ragscore.trec.files as files

    monkeypatch.setattr(files, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(files, "available_cores", lambda: cores)
    in_two = []
    read_in_two = files._read_in_two
    monkeypatch.setattr(files, "_read_in_two", lambda *args: in_two.append(read_in_two(*args)) or in_two[-1])
    for layout in ("plain", "shuffled", "tabs"):  # shuffled: topics on both sides of the middle
        text = _random_run(random.Random(5), layout)
        if layout != "shuffled":  # each topic's lines together
            text = "\n".join(sorted(text.splitlines(), key=lambda line: line.split()[0])) + "\n"
        (tmp_path / "run.txt").write_text(text, encoding="utf-8")
        run = read_run(str(tmp_path / "run.txt"))
        assert (run.name, dict(run.topics)) == _reference_run(text)
        assert run.sha256 == hashlib.sha256(text.encode()).hexdigest()
    # Two processes read the plain and tab-separated files; the shuffled one is read again in one.
    assert [read is not None for read in in_two] == ([True, False, True] if cores == 2 else [])


@pytest.mark.parametrize(("line", "message", "column"), [
    ("7 Q0 d5 9 1.0 r", "docno 'd5' is ranked twice for topic '7' (trec_eval refuses it too)", 6),  # columns of
    ("7 Q0 x 9 inf r", 'expected a finite score, got "inf"', 10),                                  # characters
    ("7 Q0 x 9 1,5 r", 'expected a number as the score, got "1,5"', 10),
    ("7 Q0 x 9", "expected a TREC run line (qid iter docno rank score run_tag), got 4 fields", None),
])
@pytest.mark.parametrize("cores", [1, 2])
def test_an_error_far_into_a_run_names_its_line(tmp_path, monkeypatch, line, message, column, cores):
    import ragscore.trec.files as files

    monkeypatch.setattr(files, "_PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(files, "available_cores", lambda: cores)
    lines = [f"{q} Q0 d{d} {d} {1 / (d + 1)} r" for q in range(1, 9) for d in range(400)]
    lines.insert(3000, line)
    (tmp_path / "r.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as caught:
        read_run(str(tmp_path / "r.txt"))
    assert (caught.value.message, caught.value.line, caught.value.column) == (message, 3001, column)


def test_qrels_read_fast_as_line_by_line(tmp_path, monkeypatch):
    import ragscore.trec.files as files

    rng = random.Random(6)
    lines = [f"{rng.choice(['1', '2', '10'])}{rng.choice([' ', chr(9)])}0 d{rng.randint(0, 50)} {rng.choice([-1, 0, 1, 2, 3])}"
             for _ in range(500)]
    (tmp_path / "q.txt").write_text("\n".join(lines) + "\n")
    expected = {}
    for line in lines:
        qid, _, doc, grade = line.split()
        expected.setdefault(qid, {})[doc] = int(grade)  # the last grade counts
    monkeypatch.setattr(files, "_BLOCK_BYTES", 100)
    qrels = read_qrels(str(tmp_path / "q.txt"))
    assert qrels.topics == expected and qrels.sha256 == hashlib.sha256((tmp_path / "q.txt").read_bytes()).hexdigest()


def test_review_fixes_names_columns_and_a_lone_header(ragscore, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.txt").write_text("1 0 d1 1\n", encoding="utf-8")
    (tmp_path / "other.txt").write_text("9 Q0 a 1 1.0 r\n", encoding="utf-8")
    # A run that scores no topic still names every line (trec_eval prints its zeros named).
    out = ragscore("trec", "q.txt", "other.txt").out.splitlines()
    assert out[:3] == ["runid                 \tall\tr", "num_q                 \tall\t0",
                       "num_ret               \tall\t0"]
    assert all(line.split("\t")[0].strip() for line in out)
    # Columns are characters, not field numbers.
    (tmp_path / "bad.txt").write_text("1 0 d1   high\n", encoding="utf-8")
    assert ragscore("trec", "bad.txt", "other.txt").err == (
        'ragscore: error: bad.txt:1:10: expected an integer relevance grade, got "high"\n')
    # One line of three fields whose third is not a number reads as BEIR's header: with nothing
    # after it there is no judgment, which is an error, not an empty evaluation.
    (tmp_path / "three.txt").write_text("1 0 d1\n", encoding="utf-8")
    run = ragscore("trec", "-m", "map", "three.txt", "other.txt")
    assert (run.status, run.out) == (2, "")
    assert run.err == ("ragscore: error: three.txt:1: no judgments: the only line reads as the header of BEIR qrels "
                       "(query-id corpus-id score); TREC qrels have four fields (qid iter docno rel)\n")


def test_fields_are_split_at_c_white_space_only_as_trec_eval_splits_them(ragscore, tmp_path):
    # trec_eval reads fields with C's isspace: a no-break space, U+0085 or U+3000 is part of a field,
    # where Python's str.split cuts there (a docno in two: 5 fields; a run tag's end dropped).
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("q1 0 doc\u00a0one 1\nq1 0 d2 1\n", encoding="utf-8")
    run.write_text("q1 Q0 doc\u00a0one 1 2 tag\u0085x\nq1 Q0 d2 2 1 tag\u0085x\n", encoding="utf-8")
    done = ragscore("trec", "-m", "num_rel_ret", "-m", "P.1", qrels, run)
    assert (done.status, done.err) == (0, "")
    assert done.out == "num_rel_ret           \tall\t2\nP_1                   \tall\t1.0000\n"
    done = ragscore("trec", qrels, run)
    assert done.out.splitlines()[0] == "runid                 \tall\ttag\\x85x"  # a C1 control shows as its escape
    # the same through the fast block reader: a file large enough for it
    qrels.write_text("".join(f"q{i} 0 doc\u00a0{i} 1\n" for i in range(5000)), encoding="utf-8")
    run.write_text("".join(f"q{i} Q0 doc\u00a0{i} 1 2 t\u3000x\n" for i in range(5000)), encoding="utf-8")
    done = ragscore("trec", "-m", "num_rel_ret", qrels, run)
    assert (done.status, done.out) == (0, "num_rel_ret           \tall\t5000\n")
