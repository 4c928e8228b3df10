"""BRAT standoff and TSV/CSV tables as stage records, scored to hand-checked values (issue 16)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import ragscore as rs
from ragscore.errors import InputError
from ragscore.stages.standoff import brat, classify_table, link_gold_table, link_pred_table

TEXT = "Ada Lovelace met Charles Babbage in London."


def _brat(folder, name, lines):
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.txt").write_text(TEXT)
    (folder / f"{name}.ann").write_text("".join(line + "\n" for line in lines))


def test_brat_scores_to_hand_checked_values(tmp_path):
    _brat(tmp_path / "gold", "doc1", ["T1\tPER 0 12\tAda Lovelace", "T2\tPER 17 32\tCharles Babbage",
                                      "T3\tLOC 36 42\tLondon", "R1\tMet Arg1:T1 Arg2:T2", "#1\tNote T1\tchecked"])
    _brat(tmp_path / "pred", "doc1", ["T1\tPER 0 3\tAda", "T2\tPER 17 32\tCharles Babbage",
                                      "T3\tLOC 36 38;40 42\tLo on", "A1\tNegated T3"])
    gold, pred = brat(str(tmp_path / "gold")), brat(str(tmp_path / "pred"))
    assert pred[0]["entities"][2] == {"start": 36, "end": 42, "type": "LOC"}  # a discontinuous span: its extent
    run = rs.ner(gold, pred)
    # Strict: T2 and T3 (by extent) match exactly, T1 does not: 2 of 3 both ways.
    assert run.metrics["strict_precision"] == run.metrics["strict_recall"] == pytest.approx(2 / 3)
    # Partial: T1 overlaps Ada Lovelace with the same type too: 3 of 3.
    assert run.metrics["partial_f1"] == 1.0


def test_brat_errors_point_at_the_line(tmp_path):
    _brat(tmp_path / "g", "doc1", ["T1\tPER 0 99\tAda"])
    with pytest.raises(InputError) as caught:
        brat(str(tmp_path / "g" / "doc1.ann"))
    assert (caught.value.line, caught.value.message) == (1, "span 0-99 is outside the text of doc1.txt (43 characters)")
    (tmp_path / "g" / "doc1.txt").unlink()
    with pytest.raises(InputError, match="expected its text beside it, in doc1.txt"):
        brat(str(tmp_path / "g" / "doc1.ann"))


def test_classify_and_link_tables(tmp_path):
    (tmp_path / "gold.tsv").write_text("id\tlabel\nm1\tPER\nm2\tLOC\nm3\tORG\n")
    (tmp_path / "pred.csv").write_text("id,label\nm1,PER\nm2,ORG\nm3,ORG\n")
    run = rs.classify(classify_table(str(tmp_path / "gold.tsv")), classify_table(str(tmp_path / "pred.csv")))
    assert run.metrics["accuracy"] == pytest.approx(2 / 3)
    (tmp_path / "lg.tsv").write_text("id\tmention\tkb_id\nm1\tAda\tQ7259\nm2\tFoo\tNIL\n")
    (tmp_path / "lp.tsv").write_text("id\tkb_id\tscore\nm1\tQ1\t0.9\nm1\tQ7259\t0.8\nm2\tNIL\t\n")
    gold, pred = link_gold_table(str(tmp_path / "lg.tsv")), link_pred_table(str(tmp_path / "lp.tsv"))
    assert gold[1]["kb_id"] is None and pred[1] == {"id": "m2", "candidates": [], "nil": True}
    run = rs.link(gold, pred)
    assert run.metrics["hits@1"] == 0.0 and run.metrics["hits@3"] == 1.0 and run.metrics["mrr"] == 0.5


def test_a_table_without_its_columns(tmp_path):
    (tmp_path / "g.tsv").write_text("id\tclass\nm1\tPER\n")
    with pytest.raises(InputError, match="expected the columns id, label in the header, missing label"):
        classify_table(str(tmp_path / "g.tsv"))


def test_the_stage_commands_read_files_in_their_formats(ragscore, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.conll").write_text("Ada B-PER\nLovelace I-PER\nwrote O\n\nin O\nLondon B-LOC\n")
    (tmp_path / "p.iob").write_text("Ada B-PER\nLovelace O\nwrote O\n\nin O\nLondon B-LOC\n")
    run = ragscore("ner", "--gold", "g.conll", "--pred", "p.iob", "--no-fail")
    doc = json.loads(run.out)
    assert run.status == 0 and doc["metrics"]["strict_f1"] == 0.5  # London matches, Ada Lovelace does not
    assert doc["inputs"]["gold"]["path"] == "g.conll"
    _brat(tmp_path / "gb", "d", ["T1\tPER 0 12\tAda Lovelace"])
    _brat(tmp_path / "pb", "d", ["T1\tPER 0 12\tAda Lovelace"])
    assert json.loads(ragscore("ner", "--gold", "gb", "--pred", "pb", "--no-fail").out)["metrics"]["strict_f1"] == 1.0
    (tmp_path / "g.tsv").write_text("id\tlabel\nm1\tPER\n")
    (tmp_path / "p.tsv").write_text("id\tlabel\nm1\tLOC\n")
    assert json.loads(ragscore("classify", "--gold", "g.tsv", "--pred", "p.tsv", "--no-fail").out)["metrics"]["accuracy"] == 0.0
    wrong = ragscore("classify", "--gold", "g.tsv", "--pred", "p.tsv", "--input-format", "brat")
    assert (wrong.status, wrong.err) == (2, "ragscore: error: classify does not read brat files (it reads JSON Lines, "
                                            "TSV and CSV)\n")


# --- hostile input (issue 31) -----------------------------------------------------------------


@pytest.mark.parametrize(("line", "where", "message"), [
    ("T1\tPER 0 3;99999 2\tAda", (1, 12), "expected a span's start before its end, got 99999-2"),
    ("T1\tPER 0 3;40 99999\tAda", (1, 12), "span 40-99999 is outside the text of doc1.txt (43 characters)"),
    ("T1\tPER 5 5\tx", (1, 8), "expected a span's start before its end, got 5-5"),
    ("T1\tPER 0 1_0\tAda", (1, 8), 'expected START END offsets (separated by \';\'), got "0 1_0"'),
    ("T12\tLOC  36 -1\tx", (1, 10), 'expected START END offsets (separated by \';\'), got " 36 -1"'),
    ("T1\t 0 3\tAda", (1, 4), "expected a text-bound annotation: ID<tab>TYPE START END<tab>TEXT, got no type"),
])
def test_a_bad_brat_fragment_is_an_error_at_its_line_and_column(tmp_path, line, where, message):
    _brat(tmp_path / "g", "doc1", ["#1\tNote T1\ta note with a form feed \x0c and a U+2028 \u2028 in it", line])
    with pytest.raises(InputError) as caught:
        brat(str(tmp_path / "g" / "doc1.ann"))
    # The note's form feed and U+2028 end no line: the annotation is on line 2.
    assert (caught.value.line, caught.value.column, caught.value.message) == (where[0] + 1, where[1], message)


def test_fragments_in_any_order_count_by_their_extent(tmp_path):
    _brat(tmp_path / "g", "doc1", ["T1\tPER 4 12;0 3\tLovelace Ada", "T2\tLOC 40 42;36 38;38 40\ton Lo nd"])
    assert brat(str(tmp_path / "g" / "doc1.ann"))[0]["entities"] == [
        {"start": 0, "end": 12, "type": "PER"}, {"start": 36, "end": 42, "type": "LOC"}]


@pytest.mark.parametrize(("name", "text", "where"), [
    ("g.tsv", "id\tlabel\tlabel\nm1\tA\tB\n", "g.tsv:1:10"),
    ("g.csv", "id, label , label\nm1,A,B\n", "g.csv:1:13"),
    ("g.csv", 'id,"label",label\nm1,A,B\n', "g.csv:1"),  # a quoted cell: no column
])
def test_a_column_read_twice_is_an_error_at_its_second_place(tmp_path, name, text, where):
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError) as caught:
        classify_table(str(tmp_path / name))
    assert str(caught.value) == f'{tmp_path / where}: the column "label" appears twice (columns 2 and 3)'


def test_a_column_not_read_may_repeat(tmp_path):
    (tmp_path / "g.tsv").write_text("id\tnote\tlabel\tnote\nm1\tx\tA\ty\n")
    assert classify_table(str(tmp_path / "g.tsv")) == [{"id": "m1", "label": "A"}]


@pytest.mark.parametrize("score", ["nan", "inf", "-Infinity", "1_0", "0x1p3", " ", "1e400"])
def test_a_link_score_that_is_no_finite_number_is_an_error_at_its_cell(ragscore, tmp_path, monkeypatch, score):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lg.tsv").write_text("id\tmention\tkb_id\nm1\tAda\tQ1\n")
    (tmp_path / "lp.tsv").write_text(f"id\tkb_id\tscore\nm1\tQ7\t0.5\nm1\tQ1\t{score}\n")
    run = ragscore("link", "--gold", "lg.tsv", "--pred", "lp.tsv")
    shown = json.dumps(score.strip())
    assert (run.status, run.out, run.err) == (
        2, "", f"ragscore: error: lp.tsv:3:7: expected the score to be a finite number (such as 0.87), got {shown}\n")


def test_a_table_with_lines_ended_by_cr_alone_is_an_error(ragscore, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.tsv").write_text("id\tlabel\rm1\tA\r", newline="")
    run = ragscore("classify", "--gold", "g.tsv", "--pred", "g.tsv")
    assert (run.status, run.err) == (2, "ragscore: error: g.tsv:1: invalid TSV: a line ends with a carriage return "
                                        "alone (expected LF or CRLF line ends)\n")


def test_a_brat_folder_leaves_out_what_is_no_regular_file_with_a_note(ragscore, tmp_path, monkeypatch):
    import os

    monkeypatch.chdir(tmp_path)
    _brat(tmp_path / "g", "doc1", ["T1\tPER 0 12\tAda Lovelace"])
    os.mkfifo(tmp_path / "g" / "x.ann")  # reading it would wait for ever
    (tmp_path / "g" / "y.ann").symlink_to(tmp_path / "nowhere.ann")
    (tmp_path / "g" / "z.ann").mkdir()  # a folder: no document, and no note
    notes: list[str] = []
    assert [doc["id"] for doc in brat("g", notes)] == ["doc1"]
    note = ("g: left out 2 entries that are not regular files (reading one could wait for ever): g/x.ann (a named pipe), "
            "g/y.ann (a link that leads nowhere)")
    assert notes == [note]
    run = ragscore("ner", "--gold", "g", "--pred", "g", "--format", "none")
    assert (run.status, run.err) == (0, f"ragscore: {note}\nragscore: pass: 1 gate checked, none failed\n")
    os.mkfifo(tmp_path / "g" / "doc2.txt")
    (tmp_path / "g" / "doc2.ann").write_text("T1\tPER 0 3\tAda\n")
    with pytest.raises(InputError) as caught:
        brat("g")
    assert str(caught.value) == "g/doc2.ann: expected its text beside it, in doc2.txt (a regular file; it is a named pipe)"
    for name in ("doc1.ann", "doc2.ann", "y.ann"):
        (tmp_path / "g" / name).unlink()
    with pytest.raises(InputError) as caught:
        brat("g")
    assert str(caught.value) == "g: expected .ann files in this folder (regular files)"


@pytest.mark.parametrize(("name", "text", "error"), [
    ("lg.tsv", "id\tmention\tkb_id\nm1\tAda\tQ1\nm2\n", 'lg.tsv:3: expected a "mention" cell (column 2), got 1 cell'),
    ("lg.csv", "id,mention,kb_id\nm1,Ada\n", 'lg.csv:2: expected a "kb_id" cell (column 3), got 2 cells'),
])
def test_a_row_without_a_cell_it_needs_is_an_error_at_its_line(tmp_path, name, text, error):
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError) as caught:
        link_gold_table(str(tmp_path / name))
    assert str(caught.value) == f"{tmp_path}/{error}"


def test_a_row_may_leave_out_the_columns_after_those_read(tmp_path):
    (tmp_path / "g.tsv").write_text("id\tlabel\tnote\nm1\tPER\tchecked\nm2\tLOC\n")
    assert classify_table(str(tmp_path / "g.tsv")) == [{"id": "m1", "label": "PER"}, {"id": "m2", "label": "LOC"}]


def test_errors_about_a_record_name_the_line_of_the_file_it_came_from(ragscore, tmp_path, monkeypatch):
    # A record read from a table, CoNLL or BRAT was named by its number (a table's line 3 was "line 2").
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.tsv").write_text("id\tlabel\n\nm1\tA\nm2\tB\nm1\tC\n")
    run = ragscore("classify", "--gold", "g.tsv", "--pred", "g.tsv")
    assert run.err == 'ragscore: error: g.tsv:5:1: duplicate id "m1" (first defined on line 3)\n'
    (tmp_path / "g.csv").write_text('label,id\nA,m1\nB, \n')
    run = ragscore("classify", "--gold", "g.csv", "--pred", "g.csv")
    assert run.err == 'ragscore: error: g.csv:3:3: expected "id" to be a non-empty string or an integer, got ""\n'
    (tmp_path / "g.conll").write_text("Ada B-PER\nLovelace I-PER\n\nin O\nLondon B-LOC\n")
    (tmp_path / "p.conll").write_text("Ada B-PER\nLovelace I-PER\n\n\nin O\nParis B-LOC\n")
    run = ragscore("ner", "--gold", "g.conll", "--pred", "p.conll")
    assert run.err == ("ragscore: error: p.conll:5: the prediction's text differs from the gold text: offsets would "
                       "not refer to the same characters\n")
    _brat(tmp_path / "gb", "d", ["T1\tPER 0 3\tAda"])
    _brat(tmp_path / "pb", "d", ["T1\tPER 0 3\tAda"])
    (tmp_path / "pb" / "d.txt").write_text("Ada Lovelace")
    run = ragscore("ner", "--gold", "gb", "--pred", "pb")
    assert run.err == ("ragscore: error: pb/d.ann: the prediction's text differs from the gold text: offsets would "
                       "not refer to the same characters\n")


# --- the text column against the .txt (issue 32) ---------------------------------------------

BRAT = Path(__file__).parent / "data" / "brat"  # brat's own example: CoNLL-ST_2002/esp.train-doc-503
DOC = "esp.train-doc-503"


def _example(folder: Path, ann: str | None = None, txt: str | None = None) -> Path:
    """brat's example document in ``folder``, its .ann or .txt replaced when given."""
    folder.mkdir()
    for suffix, text in ((".ann", ann), (".txt", txt)):
        if text is None:
            shutil.copyfile(BRAT / f"{DOC}{suffix}", folder / f"{DOC}{suffix}")
        else:
            (folder / f"{DOC}{suffix}").write_text(text, encoding="utf-8", newline="")
    return folder / f"{DOC}.ann"


def _byte_offsets(ann: str, text: str) -> str:
    """The .ann as a tool that counts UTF-8 bytes writes it."""
    def at(offset: str) -> str:
        return str(len(text[:int(offset)].encode("utf-8")))

    lines = []
    for line in ann.splitlines():
        ident, spans, written = line.split("\t")
        kind, start, end = spans.split()
        lines.append(f"{ident}\t{kind} {at(start)} {at(end)}\t{written}\n")
    return "".join(lines)


def test_brats_own_example_reads_and_scores(tmp_path):
    """68 entities, each text column the text at its character offsets (Spanish: é, ñ, ¡ before most)."""
    found = brat(str(_example(tmp_path / "g")))
    assert len(found[0]["entities"]) == 68
    run = rs.ner(found, found)
    assert run.metrics["strict_f1"] == 1.0 and run.document["type_distribution"]["PER"]["gold"] == 28


def test_byte_offsets_are_an_error_at_their_line_naming_both_texts(tmp_path):
    ann, text = (BRAT / f"{DOC}.ann").read_text(encoding="utf-8"), (BRAT / f"{DOC}.txt").read_text(encoding="utf-8")
    path = _example(tmp_path / "g", ann=_byte_offsets(ann, text))
    with pytest.raises(InputError) as caught:
        brat(str(path))
    # T1-T3 come before the first accent ("futbolística"): their byte offsets are their character offsets.
    assert (caught.value.line, caught.value.column, caught.value.message) == (4, 16, (
        'the annotation\'s text "La Primera de TVE" is not the text of esp.train-doc-503.txt at 132-149: '
        '"Primera de TVE co" (byte offsets? brat counts characters)'))
    # Past the text's last character (3,967 of them; 4,061 bytes), still byte offsets, not "outside the text".
    last = _byte_offsets(ann, text).splitlines()[-1]
    with pytest.raises(InputError) as caught:
        brat(str(_example(tmp_path / "h", ann=last + "\n")))
    assert caught.value.message == ('the annotation\'s text "Japón" is not the text of esp.train-doc-503.txt at '
                                    '4053-4059: "" (byte offsets? brat counts characters)')


def test_a_txt_changed_after_annotation_is_an_error_at_the_first_line_it_moves(tmp_path):
    text = (BRAT / f"{DOC}.txt").read_text(encoding="utf-8").replace("(EFE)", "(Agencia EFE)")
    with pytest.raises(InputError) as caught:
        brat(str(_example(tmp_path / "g", txt=text)))
    assert (caught.value.line, caught.value.column, caught.value.message) == (3, 14, (
        'the annotation\'s text "EFE" is not the text of esp.train-doc-503.txt at 36-39: "Age" '
        "(esp.train-doc-503.txt changed after annotation?)"))


def test_a_long_text_is_shortened_and_white_space_is_aside(tmp_path):
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "d.txt").write_text("Ada\nLovelace " + "x" * 100, encoding="utf-8")
    (tmp_path / "g" / "d.ann").write_text("T1\tPER 0 12\tAda Lovelace\nT2\tX 13 113\t" + "y" * 100 + "\n",
                                          encoding="utf-8")
    with pytest.raises(InputError) as caught:
        brat(str(tmp_path / "g" / "d.ann"))  # T1's newline written as a space is the same text
    assert (caught.value.line, caught.value.message) == (2, (
        'the annotation\'s text "' + "y" * 26 + "…[60 characters]…" + "y" * 14 + '" is not the text of d.txt at 13-113: '
        '"' + "x" * 26 + "…[60 characters]…" + "x" * 14 + '" (d.txt changed after annotation?)'))
