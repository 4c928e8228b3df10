"""Work that must grow with the input, not faster: each case here once hung or took gigabytes.

No timing assertions: each test runs a case at a size that was hopeless before (minutes, or
hundreds of megabytes), or measures peak memory with tracemalloc under a generous bound.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from typing import TypeVar

import pytest

from conftest import validated, write
from ragscore.errors import InputError
from ragscore.loaders.scores import load_scores
from ragscore.stages.classify import score_classify
from ragscore.stages.ner import Entity, match_entities

T = TypeVar("T")


def peak_mb(work: Callable[[], T]) -> tuple[T, float]:
    """Run ``work`` and return its result and the peak of traced memory in megabytes."""
    tracemalloc.start()
    try:
        result = work()
        return result, tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


# ner: the partial matching follows the overlaps there are ----------------------------------------


def test_ner_a_million_overlapping_pairs_take_memory_in_proportion():
    # 1,000 x 1,000 spans that all overlap (and none strictly): a million candidate pairs. Sorting
    # every pair as a tuple took 150 MB here (600 MB at 2,000 x 2,000); one index per pair is 8 MB.
    n = 1000
    gold = [Entity(i, i + 2 * n, "T") for i in range(n)]
    pred = [Entity(i, i + 2 * n + 1, "T") for i in range(n)]
    m, peak = peak_mb(lambda: match_entities(gold, pred))
    assert (len(m.strict), len(m.partial)) == (0, n)
    assert peak < 40


def test_ner_unmatchable_gold_entities_do_not_search_again_and_again():
    # 2,000 gold spans over 1,000 predictions, all overlapping: 1,000 gold entities stay unpaired.
    # Each searched the whole graph for an augmenting path (74 s); the matching is known to be
    # maximum after the greedy step, so none searches now.
    gold = [Entity(i, i + 4000, "T") for i in range(2000)]
    pred = [Entity(i, i + 4001, "T") for i in range(1000)]
    assert len(match_entities(gold, pred).partial) == 1000


def test_ner_one_long_prediction_does_not_make_every_lookup_scan_all_predictions():
    # A prediction spanning the whole text widened every lookup window to the start of the text:
    # 20,000 small gold spans each scanned every prediction before them (10 s at 20,000).
    n = 50_000
    gold = [Entity(10 * i + 1, 10 * i + 5, "T") for i in range(n)]
    pred = [Entity(0, 10 * n, "T")] + [Entity(10 * i + 2, 10 * i + 6, "T") for i in range(n)]
    m = match_entities(gold, pred)
    assert len(m.partial) == n  # the long prediction takes the first gold span (4 shared characters against 3)


def test_ner_identical_copies_pair_strictly_in_linear_time():
    # 20,000 copies of one entity on each side: each strict pair took the first waiting copy off
    # the front of a list (quadratic); no candidate list is needed at all once all pair strictly.
    m = match_entities([Entity(0, 10, "T")] * 20_000, [Entity(0, 10, "T")] * 20_000)
    assert m.strict == m.partial == tuple((i, i) for i in range(20_000))


# classify: the confusion matrix is sparse ---------------------------------------------------------


def test_classify_20000_labels_keep_the_cells_there_are():
    # A dense matrix of 20,000 labels is 400 million counts (killed at 6 GB); the cells are 20,000.
    pairs: list[tuple[str, str | None]] = [(f"L{i}", f"L{(i * 7) % 20_000 if i % 2 else i}") for i in range(20_000)]
    result, peak = peak_mb(lambda: score_classify(pairs))
    assert len(result.labels) == 20_000 and len(result.cells) == 20_000
    assert peak < 30
    metrics, peak = peak_mb(result.metrics)
    assert metrics["accuracy"] == 0.5 and peak < 30


def test_classify_reports_of_5000_labels_list_cells_and_draw_no_matrix(ragscore, isolated):
    # 4,000 labels took 1.5 GB and 19 s, for a JSON report of 177 MB (a dense matrix).
    pytest.importorskip("jsonschema")
    from jsonschema import Draft202012Validator

    from ragscore.stages.document import load_stage_schema

    n = 5000
    write(isolated / "g.jsonl", "".join(json.dumps({"id": i, "label": f"L{i}"}) + "\n" for i in range(n)))
    write(isolated / "p.jsonl", "".join(json.dumps({"id": i, "label": f"L{(i + 1) % n if i % 4 == 0 else i}"}) + "\n"
                                        for i in range(n)))
    run = ragscore("classify", "--gold", "g.jsonl", "--pred", "p.jsonl", "--markdown", "r.md", "--html", "r.html", "-q")
    assert run.status == 0
    doc = validated(run.out, Draft202012Validator(load_stage_schema()), "the stage report")
    confusion = doc["confusion"]
    assert list(confusion) == ["labels", "cells"] and len(confusion["cells"]) == n
    assert confusion["cells"][:2] == [[0, 1, 1], [1, 1, 1]]  # labels by code point: L0, L1, L10, ...
    assert doc["metrics"]["accuracy"] == 0.75
    markdown = (isolated / "r.md").read_text(encoding="utf-8")
    assert "\n5,000 labels: its 5,000 nonzero cells are in the JSON report.\n" in markdown
    assert max(map(len, markdown.splitlines())) < 200  # one row per label at most, never a column per label
    assert "5,000 labels: its 5,000 nonzero cells are in the JSON report." in (isolated / "r.html").read_text(encoding="utf-8")


# --by: a slice costs in proportion to its questions ------------------------------------------------


def _questions(n: int, category: Callable[[int], object], unanswerable: int = 5
                ) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Gold items and traces that every metric family can score, with a ``category`` per question
    (every ``unanswerable``-th question is unanswerable; 0: none is)."""
    gold, traces = [], []
    for i in range(n):
        answerable = not unanswerable or i % unanswerable != 0
        item: dict[str, object] = {"qid": f"q{i}", "question": f"question {i}?", "answerable": answerable,
                                   "category": category(i)}
        if answerable:
            item.update(gold_claim_substr=[f"answer {i}"], gold_citations=[f"d{i}"], gold_answers=[f"the answer {i} is here"],
                        gold_relevance={f"d{i}": 2, f"d{i + 1}": 1}, gold_embeddings=[[1.0, (i % 7) / 7]])
        gold.append(item)
        ids = [f"d{i + k}" for k in range(i % 4, i % 4 + 3)]
        traces.append({"qid": f"q{i}", "retrieved_ids": ids, "retrieved_embeddings": [[1.0, (i % 3) / 3], [0.0, 1.0]],
                       "answer_json": {"claim": f"the answer {i} is here", "citations": ids[:1]},
                       "scores": {"faithfulness": (i % 10) / 10}})
    return gold, traces


def test_by_2500_one_question_slices_with_every_family_draws_nothing(ragscore, isolated):
    # Each 1-question slice bootstrapped each of its ~60 means 1,000 times: 2,500 slices took
    # 92 s (126 s here). A slice of one value, or of equal values, needs no draw at all. (Every
    # question is answerable, so that the run's own means get the normal interval: 2,500 x 1,000
    # draws are past the budget.)
    gold, traces = _questions(2500, lambda i: f"v{i}", unanswerable=0)
    write(isolated / "g.jsonl", gold)
    write(isolated / "t.jsonl", traces)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--by", "category", "--metrics", "all", "--no-fail", "-q")
    slices = json.loads(run.out)["slices"]["category"]  # (not checked against the schema: that alone takes 10 s)
    assert len(slices) == 2500
    one = slices["v7"]
    assert one["n"] == 1 and one["intervals"]["faithfulness"] == [0.7, 0.7] and one["metrics"]["faithfulness"] == 0.7
    assert one["intervals"]["token_f1"] == [1.0, 1.0]


def test_by_5000_slices_of_two_questions_share_one_resampling_budget(ragscore, isolated):
    # 10,000 questions in pairs: all the slices together would draw ten million values for each
    # mean (25 s at 20,000 slices before), more than the run's budget: each gets the normal interval.
    gold, traces = _questions(10_000, lambda i: f"v{i // 2}")
    write(isolated / "g.jsonl", gold)
    write(isolated / "t.jsonl", traces)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--by", "category", "--no-fail", "-q")
    pair = json.loads(run.out)["slices"]["category"]["v1"]  # faithfulness 0.2 and 0.3
    assert pair["n"] == 2 and pair["intervals"]["faithfulness"] == pytest.approx([0.25 - 1.959964 * 0.05, 0.25 + 1.959964 * 0.05])


def test_by_a_field_with_a_value_per_question_is_refused_past_10000_values(ragscore, isolated):
    # 1,000,000 distinct values never finished (gigabytes of slices); the limit is 10,000 per field.
    gold, traces = _questions(10_001, lambda i: i)
    write(isolated / "g.jsonl", gold)
    write(isolated / "t.jsonl", traces)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--by", "category", "--no-fail")
    assert (run.status, run.out) == (2, "")
    assert run.err == ('ragscore: error: --by "category": 10,001 distinct values, more than the 10,000 slices a field '
                       "may have (slice by a field that groups questions, such as a language or a topic)\n")


# --scores: a CSV of 100,000 columns is read in time linear in its size ------------------------------


def test_scores_100000_numeric_columns_fail_at_once(tmp_path):
    # Each score column's name was compared with every other column's (10^10 comparisons: more
    # than two minutes) before the limit of 256 score names was checked.
    n = 100_000
    path = tmp_path / "s.csv"
    path.write_text("qid," + ",".join(f"s{i}" for i in range(n)) + "\n" + "a," + ",".join(["0.5"] * n) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_scores(str(path))
    assert str(caught.value) == f"{path}: more than 256 score columns (one column is kept per name and question): 100000"


def test_scores_100000_text_columns_stay_cheap(tmp_path):
    n = 100_000
    path = tmp_path / "s.csv"
    path.write_text("qid,faithfulness," + ",".join(f"t{i}" for i in range(n)) + "\n"
                    + "".join(f"q{r},0.5," + ",".join(["some text"] * n) + "\n" for r in range(3)), encoding="utf-8")
    scores, peak = peak_mb(lambda: load_scores(str(path)))
    assert scores.names == ("faithfulness",) and len(scores.rows) == 3
    assert peak < 120  # the rows of cells, read once (about 2.4 MB of text in 300,000 cells)
