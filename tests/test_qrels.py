"""``ragscore qrels`` (issue 35): the TREC qrels of one chunking, from a gold set's spans.

A hand-checked case (the whole-span rule, the half rule, --min-overlap, overlapping and empty chunks, grades,
the order of the lines, the notes); then, on random cases, the qrels scored by ``ragscore trec`` give the
evidence family's hit@K where the two definitions coincide (one gold span inside one chunk of a chunking
without overlaps: recall@K is then whether that chunk is in the top K), and pytrec_eval scores those qrels
and that run as ``ragscore trec`` does; last, every error exits 2 at its file, line and column, writing nothing.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

import ragscore as api
from conftest import write
from ragscore.trec.files import read_qrels

# --- a case worked by hand -------------------------------------------------------------------------
#
# d1:  a [0,20)  b [20,40)  c [40,60)  e [60,100);  w [10,50) overlaps a, b and c;  n [25,25) is empty
# d2:  x [0,10)  y [10,30)

CHUNKS = [
    {"id": "e", "doc": "d1", "start": 60, "end": 100},  # the file's order is not the qrels' order
    {"id": "b", "doc": "d1", "start": 20, "end": 40},
    {"id": "y", "doc": "d2", "start": 10, "end": 30},
    {"id": "a", "doc": "d1", "start": 0, "end": 20},
    {"id": "w", "doc": "d1", "start": 10, "end": 50},
    {"id": "n", "doc": "d1", "start": 25, "end": 25},
    {"id": "c", "doc": "d1", "start": 40, "end": 60, "text": "not read"},
    {"id": "x", "doc": "d2", "start": 0, "end": 10},
]
GOLD = [
    # [32,52): c holds 12 gold of its 20 characters (half or more); b 8 of 20 and w 18 of 40 (less than half),
    # and neither holds the whole span.
    {"qid": "q2", "question": "two?", "answerable": True, "gold_spans": [{"doc": "d1", "start": 32, "end": 52}]},
    # [22,30) lies whole in b (8 of its 20 characters) and in w (8 of 40): the whole-span rule; the empty n
    # inside it shares no character.
    {"qid": "q1", "question": "one?", "answerable": True,
     "gold_spans": [{"doc": "d1", "start": 22, "end": 30, "grade": 2}]},
    # x shares 5 characters with a span of grade 1 and 5 with one of grade 3: the higher grade; y shares 10 of
    # its 20 with the span of grade 2; e holds the d1 span whole. Lines by document, then start.
    {"qid": "q3", "question": "three?", "answerable": True,
     "gold_spans": [{"doc": "d2", "start": 12, "end": 22, "grade": 2}, {"doc": "d2", "start": 0, "end": 5},
                    {"doc": "d2", "start": 5, "end": 10, "grade": 3}, {"doc": "d1", "start": 60, "end": 100}]},
    # [8,14) straddles x (2 of 10 gold) and y (4 of 20): no chunk qualifies by the default rule.
    {"qid": "q4", "question": "four?", "answerable": True, "gold_spans": [{"doc": "d2", "start": 8, "end": 14}]},
    # A document the chunking has no chunk of.
    {"qid": "q5", "question": "five?", "answerable": True, "gold_spans": [{"doc": "d9", "start": 0, "end": 9}]},
    {"qid": "q6", "question": "six?", "answerable": False},
    {"qid": "q7", "question": "seven?", "answerable": True, "gold_citations": ["x"]},
    # Spans that hold no character: no evidence to judge a chunk by, so no line, and not a chunking's fault.
    {"qid": "q8", "question": "eight?", "answerable": True, "gold_spans": [{"doc": "d1", "start": 5, "end": 5}]},
]
EXPECTED = "q2 0 c 1\nq1 0 w 2\nq1 0 b 2\nq3 0 e 1\nq3 0 x 3\nq3 0 y 2\n"
UNMATCHED_NOTE = ('ragscore: qrels: 2 answerable questions with gold spans have no chunk that qualifies, so no line '
                  "(a run that ranks them is unjudged there); --min-overlap 1 judges a chunk by fewer gold characters: "
                  '"q4", "q5"\n')
DOCUMENT_NOTE = 'ragscore: qrels: 1 document of their gold spans has no chunk in chunks.jsonl: "d9"\n'


@pytest.fixture
def hand(isolated: Path) -> Path:
    write(isolated / "gold.jsonl", GOLD)
    write(isolated / "chunks.jsonl", CHUNKS)
    return isolated


def test_the_qrels_of_a_case_worked_by_hand(ragscore, hand):
    run = ragscore("qrels", "--gold", "gold.jsonl", "--chunks", "chunks.jsonl", "-o", "qrels.txt")
    assert (run.status, run.out) == (0, "")
    assert (hand / "qrels.txt").read_text(encoding="utf-8") == EXPECTED
    assert run.err == ("ragscore: qrels: 6 relevant chunks of 3 questions; no lines for 1 unanswerable and 2 "
                       "answerable without gold_spans (or with empty ones)\n" + UNMATCHED_NOTE + DOCUMENT_NOTE)
    # trec's own reader reads them back, and ragscore trec scores a run against them.
    assert read_qrels(str(hand / "qrels.txt")).topics == {"q2": {"c": 1}, "q1": {"w": 2, "b": 2},
                                                          "q3": {"e": 1, "x": 3, "y": 2}}
    (hand / "run.txt").write_text("q1 Q0 b 1 2.0 r\nq1 Q0 a 2 1.0 r\nq2 Q0 w 1 1.0 r\n", encoding="utf-8")
    scored = ragscore("trec", "-q", "-m", "P.1", "qrels.txt", "run.txt")
    assert scored.status == 0 and "P_1                   \tq1\t1.0000\n" in scored.out
    assert "P_1                   \tq2\t0.0000\n" in scored.out


def test_standard_output_the_python_api_and_quiet(ragscore, hand):
    run = ragscore("qrels", "--gold", "gold.jsonl", "--chunks", "chunks.jsonl", "-o", "-", "--quiet")
    assert (run.status, run.out, run.err) == (0, EXPECTED, "")
    result = api.qrels("gold.jsonl", hand / "chunks.jsonl")
    assert isinstance(result, api.ChunkQrels)
    assert (result.text, result.judgments, result.unmatched, result.unchunked) == (EXPECTED, 6, ("q4", "q5"), ("d9",))
    assert (result.questions, result.unanswerable, result.without_spans) == (8, 1, 2)


@pytest.mark.parametrize(("overlap", "expected", "unmatched"), [
    # Any chunk with 8 gold characters: b and w for q2 too; q4's x (2) and y (4) not yet.
    ("8", "q2 0 w 1\nq2 0 b 1\nq2 0 c 1\nq1 0 w 2\nq1 0 b 2\nq3 0 e 1\nq3 0 x 3\nq3 0 y 2\n", '"q4", "q5"'),
    # With 2, a chunk that holds none of its span whole but shares 2 characters: q4's x and y.
    ("2", "q2 0 w 1\nq2 0 b 1\nq2 0 c 1\nq1 0 w 2\nq1 0 b 2\nq3 0 e 1\nq3 0 x 3\nq3 0 y 2\nq4 0 x 1\nq4 0 y 1\n",
     '"q5"'),
    # With 10, a chunk must share 10 characters: b holds q1's span whole but shares its 8 only, c 12 of q2's.
    ("10", "q2 0 w 1\nq2 0 c 1\nq3 0 e 1\nq3 0 x 3\nq3 0 y 2\n", '"q1", "q4", "q5"'),
])
def test_min_overlap_counts_gold_characters_only(ragscore, hand, overlap, expected, unmatched):
    run = ragscore("qrels", "--gold", "gold.jsonl", "--chunks", "chunks.jsonl", "--min-overlap", overlap, "-o", "q.txt")
    assert run.status == 0 and (hand / "q.txt").read_text(encoding="utf-8") == expected
    assert f"; a lower --min-overlap judges a chunk by fewer gold characters: {unmatched}\n" in run.err


# --- random cases: trec's recall@K over the qrels is the evidence family's hit@K --------------------

CUTOFFS = (1, 2, 3, 5, 10)


def _random_case(folder: Path, seed: int, rich: bool = False) -> None:
    """Documents cut into chunks without overlaps (``rich``: overlapping windows as well, and several gold spans
    a question, anywhere), a gold set whose answerable questions each have one gold span inside one chunk (and a
    grade), unanswerable questions, and a run that ranks chunk ids for every question: as a TREC run and as
    traces."""
    rng = random.Random(seed)
    chunks: list[dict[str, Any]] = []
    for d in range(rng.randint(1, 4)):
        length = rng.randint(50, 400)
        cuts = sorted({0, length, *(rng.randrange(1, length) for _ in range(rng.randint(1, 12)))})
        chunks += [{"id": f"doc{d}-{n}", "doc": f"doc{d}", "start": s, "end": e}
                   for n, (s, e) in enumerate(zip(cuts, cuts[1:], strict=False))]
        if rich:
            chunks += [{"id": f"win{d}-{n}", "doc": f"doc{d}", "start": s, "end": min(s + 60, length)}
                       for n, s in enumerate(range(0, length, 35))]
    rng.shuffle(chunks)
    gold, traces, run = [], [], []
    ids = [c["id"] for c in chunks]
    for q in range(rng.randint(5, 30)):
        qid = f"Q{q:03d}"
        item: dict[str, Any] = {"qid": qid, "question": f"question {q}?", "answerable": rng.random() < 0.8}
        if item["answerable"]:
            spans = []
            for _ in range(rng.randint(1, 3) if rich else 1):
                holder = rng.choice([c for c in chunks if c["end"] > c["start"]])
                if rich:
                    start = rng.randrange(0, holder["end"])
                    end = rng.randint(start + 1, start + 80)
                else:
                    start = rng.randrange(holder["start"], holder["end"])
                    end = rng.randint(start + 1, holder["end"])
                spans.append({"doc": holder["doc"], "start": start, "end": end, "grade": rng.randint(1, 3)})
            item["gold_spans"] = spans
        gold.append(item)
        ranked = rng.sample(ids, rng.randint(1, min(len(ids), 15)))
        if "gold_spans" in item and not rich and rng.random() < 0.6:  # its chunk ranked, somewhere
            ranked = [c for c in ranked if c != holder["id"]]
            ranked.insert(rng.randint(0, len(ranked)), holder["id"])
        traces.append({"qid": qid, "answer": "an answer", "retrieved_ids": ranked})
        run += [f"{qid} Q0 {chunk} {rank} {len(ranked) - rank + 1} run\n" for rank, chunk in enumerate(ranked, 1)]
    if not any("gold_spans" in item for item in gold):
        gold[0] = {**gold[0], "answerable": True, "gold_spans": [{"doc": chunks[0]["doc"], "start": chunks[0]["start"],
                                                                  "end": chunks[0]["end"]}]}
    write(folder / "gold.jsonl", gold)
    write(folder / "chunks.jsonl", chunks)
    write(folder / "traces.jsonl", traces)
    (folder / "run.txt").write_text("".join(run), encoding="utf-8")


def _scored(ragscore, *args: str) -> dict[str, Any]:
    run = ragscore(*args)
    assert run.status in (0, 1), run.err
    return run.json() if args[0] != "trec" else json.loads(run.out)


@pytest.mark.parametrize("seed", range(8))
def test_trec_recall_at_k_over_the_qrels_is_evidence_hit_at_k(ragscore, isolated, seed):
    _random_case(isolated, seed)
    assert ragscore("qrels", "--gold", "gold.jsonl", "--chunks", "chunks.jsonl", "-o", "qrels.txt", "-q").status == 0
    trec = _scored(ragscore, "trec", "-m", "recall." + ",".join(map(str, CUTOFFS)), "--format", "json", "--quiet",
                   "qrels.txt", "run.txt")
    score = _scored(ragscore, "--gold", "gold.jsonl", "--trace", "traces.jsonl", "--chunks", "chunks.jsonl",
                    "--cutoffs", ",".join(map(str, CUTOFFS)), "--quiet", "--no-fail")
    answerable = sum(1 for line in (isolated / "gold.jsonl").read_text().splitlines() if '"gold_spans"' in line)
    assert trec["counts"]["scored"] == answerable  # every answerable question judged, ranked, in the mean
    for k in CUTOFFS:
        assert trec["metrics"][f"recall@{k}"] == pytest.approx(score["metrics"][f"evidence_hit@{k}"], abs=1e-12), k
    assert 0 < trec["metrics"]["recall@10"] and trec["metrics"]["recall@1"] < 1  # not vacuous


# --- pytrec_eval on the same qrels and run -------------------------------------------------------

MEASURES = ("map", "ndcg", "Rprec", "bpref", "recip_rank", "P.1,2,3,5,10", "recall.1,2,3,5,10", "ndcg_cut.1,3,5,10",
            "map_cut.5,10", "success.1,5", "num_rel", "num_rel_ret")


@pytest.mark.parametrize("rich", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_pytrec_eval_scores_the_qrels_as_ragscore_trec_does(ragscore, isolated, seed, rich):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    _random_case(isolated, seed, rich)
    assert ragscore("qrels", "--gold", "gold.jsonl", "--chunks", "chunks.jsonl", "-o", "qrels.txt", "-q").status == 0
    with open(isolated / "qrels.txt", encoding="utf-8") as q, open(isolated / "run.txt", encoding="utf-8") as r:
        qrels, run = pytrec_eval.parse_qrel(q), pytrec_eval.parse_run(r)
    args = [arg for measure in MEASURES for arg in ("-m", measure)]
    ours = _scored(ragscore, "trec", "-q", *args, "--format", "json", "--quiet", "qrels.txt", "run.txt")
    trec_name = ours["trec_names"]
    reference = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES)).evaluate(run)
    assert {query["qid"] for query in ours["queries"]} == set(reference) == set(qrels)
    compared = 0
    for query in ours["queries"]:
        for name, value in query["metrics"].items():
            assert value == pytest.approx(reference[query["qid"]][trec_name[name]], abs=1e-9), (query["qid"], name)
            compared += 1
    assert compared == 25 * len(reference)  # every measure asked, on every query
    if rich:  # graded, several relevant chunks a question: nDCG is not recall
        assert any(len(judged) > 1 and len(set(judged.values())) > 1 for judged in qrels.values())


# --- errors: exit 2 at the file, line and column; nothing written ---------------------------------

@pytest.mark.parametrize(("file", "lines", "message"), [
    ("chunks.jsonl", '{"id": "a", "doc": "d1", "start": 0, "end": 20}\n{"id": "b", "doc": "d1", "start": 20}\n',
     'chunks.jsonl:2:1: expected "end" to be a character offset (an integer of 0 or more), got none'),
    ("chunks.jsonl", '{"id": "a", "doc": "d1", "start": 0, "end": 20}\n{"id": "b", "doc": "d1", "start": 20, "end": 9}\n',
     "chunks.jsonl:2:46: expected the chunk to end where it starts or after (end is exclusive), got start 20 and end 9"),
    ("chunks.jsonl", '{"id": "a", "doc": "d1", "start": 0, "end": 20}\n\n{"id": "a", "doc": "d1", "start": 20, "end": 40}\n',
     'chunks.jsonl:3:8: duplicate chunk id "a" (first at line 1)'),
    ("chunks.jsonl", '{"id": "a", "doc": "d1", "start": 0, "end": 20}\n{"id": "b c", "doc": "d1", "start": 20, "end": 40}\n',
     'chunks.jsonl:2:8: chunk id "b c" holds white space, at which TREC files are split into fields'),
    ("chunks.jsonl", '{"id": "a", "doc": "d1", "start": 0, "end": 20}\n{"id": "b\\u001b[2J", "doc": "d1", "start": 20, '
                     '"end": 40}\n',
     'chunks.jsonl:2:8: chunk id "b\\x1b[2J" holds a control character, which a qrels file does not hold'),
    ("chunks.jsonl", '{"id": "a##[error]x", "doc": "d1", "start": 0, "end": 20}\n',
     'chunks.jsonl:1:8: chunk id "a#\\x23[error]x" holds two number signs before a bracket, which GitHub Actions '
     "reads as a command in any line"),
    ("chunks.jsonl", '{"id": "a", "doc": "d1", "start": 0, "end": 20, "url": "x"}\n',
     'chunks.jsonl:1:56: unknown key "url" in a chunk (a chunk has "id", "doc", "start" and "end"; "text" is allowed '
     "and not read)"),
    ("chunks.jsonl", "", 'chunks.jsonl: no chunks: expected JSON Lines of {"id", "doc", "start", "end"}'),
    ("gold.jsonl", '{"qid": "q1", "answerable": true, "gold_spans": [{"doc": "d1", "start": 5, "end": 2}]}\n',
     'gold.jsonl:1:49: expected "gold_spans" entry 1 to end where it starts or after (end is exclusive), got start 5 '
     "and end 2"),
    ("gold.jsonl", '{"qid": "q1", "answerable": true, "gold_spans": []}\n{"qid": "q 2", "answerable": true, '
                   '"gold_spans": [{"doc": "d1", "start": 0, "end": 2}]}\n',
     'gold.jsonl:2:1: qid "q 2" holds white space, at which TREC files are split into fields (an item without a '
     '"qid" is known by its question)'),
    ("gold.jsonl", '{"qid": "::error::x", "answerable": true, "gold_spans": [{"doc": "d1", "start": 0, "end": 2}]}\n',
     'gold.jsonl:1:1: qid "::error::x" starts with "::": a qrels line starts with its qid, and GitHub Actions reads '
     "such a line as a command"),
    ("gold.jsonl", '{"qid": "q1", "answerable": true, "gold_citations": ["a"]}\n{"qid": "q2", "answerable": false}\n',
     'gold.jsonl: no answerable question has "gold_spans": no qrels to write (ragscore qrels judges chunks by the gold '
     "spans of documents)"),
    ("gold.jsonl", '{"qid": "q1", "answerable": true, "gold_spans": [{"doc": "elsewhere", "start": 0, "end": 2}]}\n',
     'chunks.jsonl: no chunk qualifies for the gold spans of the 1 answerable question that has them (1 of their '
     'documents has no chunk: "elsewhere"): are these chunks of the same documents, their offsets into the same '
     "texts?"),
])
def test_an_input_error_exits_2_at_its_place_and_writes_nothing(ragscore, hand, file, lines, message):
    (hand / file).write_text(lines, encoding="utf-8")
    run = ragscore("qrels", "--gold", "gold.jsonl", "--chunks", "chunks.jsonl", "-o", "qrels.txt")
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {message}\n")
    assert not (hand / "qrels.txt").exists()
    (hand / "kept.txt").write_text("before\n", encoding="utf-8")  # an output that was there stays as it was
    assert ragscore("qrels", "--gold", "gold.jsonl", "--chunks", "chunks.jsonl", "-o", "kept.txt").status == 2
    assert (hand / "kept.txt").read_text(encoding="utf-8") == "before\n"
    assert sorted(path.name for path in hand.iterdir()) == ["chunks.jsonl", "gold.jsonl", "kept.txt"]


@pytest.mark.parametrize("value", ["0", "-1", "x", "1.5", "1_0", ""])
def test_min_overlap_must_be_a_positive_integer(ragscore, hand, value):
    run = ragscore("qrels", "--gold", "gold.jsonl", "--chunks", "chunks.jsonl", "--min-overlap", value, "-o", "q.txt")
    assert (run.status, run.out) == (2, "")
    assert run.err.endswith(f'ragscore qrels: error: argument --min-overlap: expected a positive integer, got "{value}"\n')
    assert not (hand / "q.txt").exists()
    for bad in (0, -1, 1.5, True, "3"):
        with pytest.raises(api.UsageError, match="min_overlap: expected a positive integer or None"):
            api.qrels("gold.jsonl", "chunks.jsonl", min_overlap=bad)


def test_the_output_is_never_an_input_and_two_inputs_are_not_both_standard_input(ragscore, hand):
    run = ragscore("qrels", "--gold", "gold.jsonl", "--chunks", "chunks.jsonl", "-o", "./chunks.jsonl")
    assert (run.status, run.err) == (2, 'ragscore: error: --output "./chunks.jsonl": is the same file as --chunks; '
                                        "the qrels never overwrite an input\n")
    run = ragscore("qrels", "--gold", "-", "--chunks", "-", "-o", "q.txt")
    assert (run.status, run.err) == (2, "ragscore: error: only one of the gold set and the chunks can be '-' "
                                        "(standard input)\n")
