"""CoNLL files as ner records: entities decoded as seqeval's strict mode decodes them (issue 16); IOB1,
CoNLL-2003's own tagging, as seqeval's default mode decodes it, and the scheme told from the tags (issue 32)."""

from __future__ import annotations

import random

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from ragscore.errors import InputError, UsageError
from ragscore.stages.conll import SCHEMES, decode, read, records

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
        records(str(tmp_path / "g.conll"), "IOB2")
    assert (caught.value.line, caught.value.message) == (2, "tag 'E-PER' is not a IOB2 tag (prefixes: I, O, B)")
    assert records(str(tmp_path / "g.conll"), "IOBES")[0]["entities"] == [{"start": 0, "end": 12, "type": "PER"}]


CONLL2003 = ROOT / "tests" / "data" / "conll2003"
TYPES = ["PER", "LOC", "ORG"]
_TAG = st.sampled_from(["O"] + [f"{p}-{t}" for p in "BI" for t in TYPES])
_TAGS = st.lists(_TAG, max_size=12)


def _theirs(tags: list[str]) -> list[tuple[str, int, int]]:
    from seqeval.metrics.sequence_labeling import get_entities

    return [(kind, start, end + 1) for kind, start, end in get_entities(tags)]  # seqeval's ends are inclusive


@settings(max_examples=500, deadline=None)
@given(tags=_TAGS)
def test_iob1_entities_equal_seqevals_default_mode(tags):
    """Any B-, I- and O tags, valid in IOB1 or not: conlleval's rule, as seqeval's default mode reads it."""
    pytest.importorskip("seqeval")
    assert decode(tags, SCHEMES["IOB1"]) == _theirs(tags)


def _iob1(entities: list[tuple[int, str]], gaps: list[int]) -> list[str]:
    """Tags of entities (length, type) separated by gaps of O, written as IOB1 writes them:
    I- throughout, B- on the first tag of an entity that follows one of its own type."""
    tags: list[str] = []
    last = None
    for (length, kind), gap in zip(entities, gaps, strict=True):
        tags += ["O"] * gap
        first = "B" if gap == 0 and last == kind else "I"
        tags += [f"{first}-{kind}"] + [f"I-{kind}"] * (length - 1)
        last = kind
    return tags


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_valid_iob1_entities_equal_seqevals_strict_iob1(data):
    """On tags IOB1 writes (B- only between two entities of a type), seqeval's strict IOB1 scheme agrees too.
    (On other tags it does not decode IOB1: ["B-PER", "I-PER"] is one entity from token 1 there.)"""
    seqeval_scheme = pytest.importorskip("seqeval.scheme")
    entities = data.draw(st.lists(st.tuples(st.integers(1, 3), st.sampled_from(TYPES)), max_size=5))
    gaps = data.draw(st.lists(st.integers(0, 2), min_size=len(entities), max_size=len(entities)))
    tags = _iob1(entities, gaps) + ["O"] * data.draw(st.integers(0, 2))
    expected = [(e.tag, e.start, e.end) for e in seqeval_scheme.Entities([tags], seqeval_scheme.IOB1).entities[0]]
    assert decode(tags, SCHEMES["IOB1"]) == expected == _theirs(tags)
    assert len(expected) == len(entities)


def _write(path, sentences: list[list[str]]) -> str:
    path.write_text("".join("".join(f"w{n} {tag}\n" for n, tag in enumerate(tags)) + "\n" for tags in sentences),
                    encoding="utf-8")
    return str(path)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_iob1_scores_equal_seqevals_to_1e_9(tmp_path_factory, data):
    """Entity P/R/F1 (micro and per type) of IOB1 files equal seqeval's default mode, on random tags."""
    metrics = pytest.importorskip("seqeval.metrics")
    from ragscore.stages import api

    gold = data.draw(st.lists(_TAGS.filter(bool), min_size=1, max_size=6))
    pred = [data.draw(st.lists(_TAG, min_size=len(g), max_size=len(g))) for g in gold]  # same tokens
    assume(any(tag != "O" for tags in gold + pred for tag in tags))  # else nothing to score: an input error
    folder = tmp_path_factory.mktemp("iob1")
    run = api.ner(_write(folder / "g.conll", gold), _write(folder / "p.conll", pred), scheme="iob1")
    assert run.document["inputs"]["gold"]["scheme"] == run.document["inputs"]["pred"]["scheme"] == "iob1"
    for name, theirs in (("strict_precision", metrics.precision_score), ("strict_recall", metrics.recall_score),
                         ("strict_f1", metrics.f1_score)):
        assert run.metrics[name] == pytest.approx(theirs(gold, pred, zero_division=0), abs=1e-9)
    report = metrics.classification_report(gold, pred, output_dict=True, zero_division=0)
    for kind, row in run.document["per_type"].items():
        assert (row["strict_precision"], row["strict_recall"], row["strict_f1"], row["gold"]) == pytest.approx(
            (report[kind]["precision"], report[kind]["recall"], report[kind]["f1-score"], report[kind]["support"]),
            abs=1e-9)


def test_the_scheme_is_told_from_the_tags(tmp_path):
    def told(*sentences: list[str]) -> tuple[str, list[str]]:
        notes: list[str] = []
        found, scheme = read(_write(tmp_path / "t.conll", list(sentences)), notes=notes)
        return scheme, notes

    assert told(["B-PER", "I-PER", "O", "B-LOC"]) == ("iob2", [])  # valid IOB2: IOB1 reads it the same
    assert told(["O"], ["O", "O"]) == ("iob2", [])
    assert told(["B-PER", "E-PER", "S-LOC"]) == ("iobes", [])
    assert told(["U-PER", "B-LOC", "L-LOC"]) == ("bilou", [])
    name = str(tmp_path / "t.conll")
    assert told(["I-PER", "I-PER", "B-PER", "O", "I-LOC"]) == ("iob1", [
        f"{name}: tags read as IOB1, CoNLL-2003's (an I- tag starts an entity unless it follows its own type: "
        '"I-PER" at the start of its sentence at line 1); --scheme iob2 reads such a tag as no entity'])
    assert told(["O", "B-PER", "I-PER"], ["O", "I-LOC"], ["B-ORG", "I-PER"]) == ("iob2", [
        f"{name}: tags read as IOB2 (a B- tag starts an entity after O or another type, as at line 2); 2 I- tags "
        'start no entity, following neither B- nor I- of the same type (the first: "I-LOC" after "O" at line 6); '
        "--scheme iob1 reads them as entities"])


@pytest.mark.parametrize(("sentences", "line", "message"), [
    ([["B-PER", "E-PER"], ["U-LOC"]], 4, 'tag "U-LOC" mixes BILOU and IOBES tags ("E-PER" at line 2): choose one '
                                         "with --scheme"),
    ([["I-PER", "E-PER"]], 2, 'tag "E-PER": E- tags without B- or S- tags are IOE tags, which ragscore does not read '
                              "(it reads IOB1, IOB2, IOBES and BILOU)"),
    ([["O", "X-PER"]], 2, 'tag "X-PER" is not a CoNLL tag (prefixes: B, I, O, E, S, L, U)'),
])
def test_tags_no_scheme_reads_are_an_error_at_their_line(tmp_path, sentences, line, message):
    with pytest.raises(InputError) as caught:
        read(_write(tmp_path / "t.conll", sentences))
    assert (caught.value.line, caught.value.message) == (line, message)


def test_a_scheme_given_reads_the_tags_as_it_says(tmp_path):
    path = _write(tmp_path / "t.conll", [["I-PER", "I-PER", "O", "I-LOC"]])
    assert [r["entities"] for r in read(path, scheme="iob1")[0]] == [
        [{"start": 0, "end": 5, "type": "PER"}, {"start": 9, "end": 11, "type": "LOC"}]]
    assert read(path, scheme="iob2") == ([{"id": "1", "text": "w0 w1 w2 w3", "entities": []}], "iob2")
    assert read(path, "iobes")[1] == "iobes"  # the format names the scheme
    with pytest.raises(UsageError) as caught:
        read(path, "iob2", "iob1")
    assert str(caught.value) == "--scheme iob1 contradicts --input-format iob2 (which reads IOB2 tags): give one of them"


def test_conll2003s_own_files_are_read_as_iob1_and_score_as_seqeval_scores_them():
    """The first sentences of CoNLL-2003's eng.train and eng.testb as published (IOB1, 4 columns), against
    IOB2 predictions: every entity as seqeval's default mode counts it; read as IOB2 the gold has none."""
    metrics = pytest.importorskip("seqeval.metrics")
    from ragscore.stages import api

    gold, pred = CONLL2003 / "eng.conll", CONLL2003 / "pred.conll"
    run = api.ner(gold, pred)
    assert {role: run.document["inputs"][role]["scheme"] for role in ("gold", "pred")} == {"gold": "iob1",
                                                                                          "pred": "iob2"}
    tags = [[[line.split()[-1] for line in block.splitlines()] for block in path.read_text().split("\n\n")
             if block.strip() and not block.startswith("-DOCSTART-")] for path in (gold, pred)]
    assert [len(t) for t in tags] == [5, 5]
    assert run.document["counts"]["gold"] == 5
    assert run.document["type_distribution"] == {
        "LOC": {"gold": 2, "predicted": 3, "over_prediction": 1}, "MISC": {"gold": 2, "predicted": 2, "over_prediction": 0},
        "ORG": {"gold": 1, "predicted": 1, "over_prediction": 0}, "PER": {"gold": 3, "predicted": 2, "over_prediction": -1}}
    for name, theirs in (("strict_precision", metrics.precision_score), ("strict_recall", metrics.recall_score),
                         ("strict_f1", metrics.f1_score)):
        assert run.metrics[name] == pytest.approx(theirs(*tags), abs=1e-9)
    assert run.metrics["strict_f1"] == 0.75  # CHINA typed LOC, "Nadim Ladki" cut short: 6 of 8 on either side
    assert run.notes()[0] == (f"{gold}: tags read as IOB1, CoNLL-2003's (an I- tag starts an entity unless it "
                              'follows its own type: "I-ORG" at the start of its sentence at line 3); --scheme iob2 '
                              "reads such a tag as no entity")
    assert api.ner(gold, pred, scheme="iob2").document["type_distribution"]["PER"]["gold"] == 0
