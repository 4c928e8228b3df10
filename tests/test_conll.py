"""CoNLL files as ner records: entities decoded as seqeval's strict mode decodes them (issue 16)."""

from __future__ import annotations

import random

import pytest

from ragscore.errors import InputError
from ragscore.stages.conll import SCHEMES, decode, records

SEQEVAL = {"IOB2": "IOB2", "IOBES": "IOBES", "IOE2": "IOE2", "BILOU": "BILOU"}


@pytest.mark.parametrize("scheme", sorted(SEQEVAL))
@pytest.mark.parametrize("seed", range(10))
def test_entities_equal_seqevals_strict_mode(scheme, seed):
    seqeval_scheme = pytest.importorskip("seqeval.scheme")
    rng = random.Random(seed)
    prefixes = SCHEMES[scheme].prefixes
    sentences = [[("O" if p == "O" else f"{p}-{rng.choice(['PER', 'LOC'])}") for p in
                  (rng.choice(prefixes) for _ in range(rng.randint(0, 12)))] for _ in range(200)]
    expected = seqeval_scheme.Entities(sentences, getattr(seqeval_scheme, SEQEVAL[scheme])).entities
    for tags, theirs in zip(sentences, expected, strict=True):
        assert decode(tags, SCHEMES[scheme]) == [(e.tag, e.start, e.end) for e in theirs], tags


def test_the_invalid_sequence_rule():
    iob2, iobes = SCHEMES["IOB2"], SCHEMES["IOBES"]
    assert decode(["I-PER", "I-PER", "B-LOC", "I-LOC", "I-PER"], iob2) == [("LOC", 2, 4)]
    assert decode(["B-PER", "I-LOC"], iob2) == [("PER", 0, 1)]
    assert decode(["B-PER", "I-PER", "O", "S-LOC", "B-ORG", "E-ORG"], iobes) == [("LOC", 3, 4), ("ORG", 4, 6)]


def test_a_conll_file_becomes_records(tmp_path):
    (tmp_path / "g.conll").write_text(
        "-DOCSTART- -X- O O\n\nAda NNP B-PER\nLovelace NNP I-PER\nwrote VBD O\n\nin IN O\nLondon NNP B-LOC\n")
    assert records(str(tmp_path / "g.conll")) == [
        {"id": "1", "text": "Ada Lovelace wrote", "entities": [{"start": 0, "end": 12, "type": "PER"}]},
        {"id": "2", "text": "in London", "entities": [{"start": 3, "end": 9, "type": "LOC"}]},
    ]


def test_a_tag_outside_the_scheme_is_an_error_at_its_line(tmp_path):
    (tmp_path / "g.conll").write_text("Ada B-PER\nLovelace E-PER\n")
    with pytest.raises(InputError) as caught:
        records(str(tmp_path / "g.conll"))
    assert (caught.value.line, caught.value.message) == (2, "tag 'E-PER' is not a IOB2 tag (prefixes: I, O, B)")
    assert records(str(tmp_path / "g.conll"), "IOBES")[0]["entities"] == [{"start": 0, "end": 12, "type": "PER"}]
