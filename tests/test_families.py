"""Packed per-question rows: put, replace and remove behave like a plain dict; their totals average them."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from ragscore.metrics.families import Columns

operations = st.lists(
    st.tuples(st.integers(0, 7), st.none() | st.tuples(st.floats(0, 1), st.floats(0, 1))), max_size=40
)


@given(operations)
def test_columns_behave_like_a_dict_of_rows(ops):
    columns, model = Columns(2), {}
    columns.reserve(8)
    for position, row in ops:
        columns.put(position, row)
        if row is None:
            model.pop(position, None)
        else:
            model[position] = row
        rows = [columns.row(p) for p in range(8)]
        assert [None if r is None else tuple(r) for r in rows] == [model.get(p) for p in range(8)]
    assert columns.counted == len(model)
    totals = columns.totals((False, True), None, "0", 10)
    means = totals.means()
    if model:
        assert totals.counted == len(model)
        assert means == [math.fsum(r[j] for r in model.values()) / len(model) for j in (0, 1)]
        assert totals.columns[0].squares is None and totals.columns[1].squares is not None
    else:
        assert means == [None, None]


def test_text_family_names_are_the_overlap_modules_names():
    from ragscore.metrics.families import FAMILIES
    from ragscore.metrics.overlap import corpus_metric_names, text_metric_names
    from ragscore.settings import Settings

    assert FAMILIES["text"].names(Settings()) == text_metric_names() + corpus_metric_names()


def test_config_knows_the_overlap_tokenizers():
    from ragscore.config import TEXT_TOKENIZERS
    from ragscore.metrics.overlap import TOKENIZERS

    assert TEXT_TOKENIZERS == TOKENIZERS
