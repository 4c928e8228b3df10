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
