"""Scores files from other tools (ragas exports, LLM judges): CSV and JSON Lines, joins, gaps, errors."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from conftest import write
from ragscore.errors import InputError
from ragscore.loaders.scores import ScoreFile, ScoreRow, load_scores


def put(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return str(path)


def error(spec: str, known: frozenset[str] = frozenset()) -> str:
    with pytest.raises(InputError) as caught:
        load_scores(spec, known)
    return str(caught.value)


def values(scores: ScoreFile) -> dict[str, dict[str, float | None]]:
    return {key: row.values for key, row in scores.rows.items()}


# CSV ------------------------------------------------------------------------------------------


def test_csv_joined_on_qid(tmp_path):
    spec = put(tmp_path, "s.csv", "qid,faithfulness,answer_relevancy\nq1,0.5,1\nq2,.25,5e-1\n")
    scores = load_scores(spec)
    assert scores.source == spec
    assert (scores.join, scores.names) == ("qid", ("faithfulness", "answer_relevancy"))
    assert scores.rows["q1"] == ScoreRow("q1", 2, {"faithfulness": 0.5, "answer_relevancy": 1.0})
    assert scores.rows["q2"] == ScoreRow("q2", 3, {"faithfulness": 0.25, "answer_relevancy": 0.5})
    assert scores.duplicates == []
    assert scores.skipped == {"faithfulness": 0, "answer_relevancy": 0}


def test_csv_joined_on_question_text(tmp_path):
    scores = load_scores(put(tmp_path, "s.csv", "question,faithfulness\nWhat is X?,0.75\n"))
    assert (scores.join, list(scores.rows), scores.rows["What is X?"].values) == ("question", ["What is X?"], {"faithfulness": 0.75})


def test_csv_user_input_joins_as_question(tmp_path):
    scores = load_scores(put(tmp_path, "s.csv", "user_input,faithfulness\nWhat is X?,1\n"))
    assert (scores.join, scores.names, values(scores)) == ("question", ("faithfulness",), {"What is X?": {"faithfulness": 1.0}})


def test_csv_qid_wins_over_question_and_join_columns_are_never_scores(tmp_path):
    spec = put(tmp_path, "s.csv", "question,qid,user_input,faithfulness\n7,1,8,0.5\n")
    scores = load_scores(spec)
    assert (scores.join, scores.names, values(scores)) == ("qid", ("faithfulness",), {"1": {"faithfulness": 0.5}})


def test_ragas_csv_export(tmp_path):
    # DataFrame.to_csv() as ragas' result.to_pandas() writes it: an unnamed index column, lists of
    # contexts with commas, quotes and newlines in quoted cells, and NaN as an empty cell or "nan".
    text = (
        ",user_input,retrieved_contexts,response,reference,faithfulness,answer_relevancy,context_recall\n"
        '0,What is the capital of France?,"[\'Paris is the capital, and largest city,\n'
        'of France.\', \'It has 2.1 million \"\"residents\"\".\']",Paris.,Paris is the capital.,1.0,0.9731,1.0\n'
        '1,"Who wrote ""Hamlet""?","[\'Hamlet is a tragedy\n\nby Shakespeare.\']","Shakespeare,\nin 1600.",'
        "William Shakespeare,,0.8812,nan\n"
        "2,How tall is K2?,[],I do not know.,8611 m,0.0,NaN,0.5\n"
    )
    scores = load_scores(put(tmp_path, "ragas.csv", text))
    assert scores.join == "question"
    assert scores.names == ("faithfulness", "answer_relevancy", "context_recall")
    assert list(scores.rows) == ["What is the capital of France?", 'Who wrote "Hamlet"?', "How tall is K2?"]
    assert [row.line for row in scores.rows.values()] == [2, 4, 8]
    assert values(scores) == {
        "What is the capital of France?": {"faithfulness": 1.0, "answer_relevancy": 0.9731, "context_recall": 1.0},
        'Who wrote "Hamlet"?': {"faithfulness": None, "answer_relevancy": 0.8812, "context_recall": None},
        "How tall is K2?": {"faithfulness": 0.0, "answer_relevancy": None, "context_recall": 0.5},
    }
    assert scores.skipped == {"faithfulness": 1, "answer_relevancy": 1, "context_recall": 1}


def test_a_reexported_pandas_index_column_is_ignored(tmp_path):
    scores = load_scores(put(tmp_path, "s.csv", "Unnamed: 0,qid,faithfulness\n0,a,1\n1,b,0\n"))
    assert scores.names == ("faithfulness",)


def test_csv_no_value_cells_and_numbers_with_spaces(tmp_path):
    cells = ["", "  ", "nan", " NaN ", "NAN", "null", "None", "NA", "n/a", "N/A"]
    lines = [f"q{i},{cell}" for i, cell in enumerate(cells)] + ["x, 0.5 ", "y,-1", "z,+2E-1"]
    scores = load_scores(put(tmp_path, "s.csv", "qid,score\n" + "\n".join(lines) + "\n"))
    assert all(scores.rows[f"q{i}"].values == {"score": None} for i in range(len(cells)))
    assert [scores.rows[key].values["score"] for key in "xyz"] == [0.5, -1.0, 0.2]
    assert scores.skipped == {"score": len(cells)}


def test_csv_text_columns_are_ignored(tmp_path):
    text = (
        "qid,response,mixed,blank,answer relevancy text,faithfulness\n"
        "a,yes,1,,fine,0.5\n"
        "b,no,high,,also fine,0.25\n"
    )
    scores = load_scores(put(tmp_path, "s.csv", text))
    assert scores.names == ("faithfulness",)


def test_csv_known_column_is_a_score_even_when_all_empty(tmp_path):
    spec = put(tmp_path, "s.csv", "qid,context_recall,faithfulness\na,,1\nb,nan,0\n")
    assert load_scores(spec).names == ("faithfulness",)
    scores = load_scores(spec, frozenset({"context_recall"}))
    assert scores.names == ("context_recall", "faithfulness")
    assert scores.skipped == {"context_recall": 2, "faithfulness": 0}


def test_csv_short_rows_are_padded_and_blank_lines_skipped(tmp_path):
    scores = load_scores(put(tmp_path, "s.csv", "\nqid,a,b\n\nq1,1\n\r\nq2,2,3\n"))
    assert {key: (row.line, row.values) for key, row in scores.rows.items()} == {
        "q1": (4, {"a": 1.0, "b": None}),
        "q2": (6, {"a": 2.0, "b": 3.0}),
    }
    assert scores.skipped == {"a": 0, "b": 1}


def test_csv_crlf_and_bom(tmp_path):
    spec = put(tmp_path, "s.csv", b"\xef\xbb\xbfqid,faithfulness\r\nq1,0.5\r\nq2,\r\n")
    scores = load_scores(spec)
    assert (scores.join, values(scores)) == ("qid", {"q1": {"faithfulness": 0.5}, "q2": {"faithfulness": None}})


def test_csv_duplicates_later_row_wins(tmp_path):
    spec = put(tmp_path, "s.csv", "qid,f\nk,0.1\nj,\nj,0.3\nk,0.4\nk,0.5\n")
    scores = load_scores(spec)
    assert values(scores) == {"k": {"f": 0.5}, "j": {"f": 0.3}}
    assert (scores.rows["k"].line, scores.rows["j"].line) == (6, 4)
    assert scores.duplicates == [(2, "k"), (3, "j"), (5, "k")]
    assert scores.skipped == {"f": 0}  # counted over the rows kept: the empty j was replaced


def test_csv_a_long_cell_is_read(tmp_path):
    long = "x" * 300_000
    scores = load_scores(put(tmp_path, "s.csv", f'qid,contexts,f\na,"{long}",1\n'))
    assert values(scores) == {"a": {"f": 1.0}}


# JSON Lines -----------------------------------------------------------------------------------


def test_jsonl_joined_on_integer_and_string_qids(tmp_path):
    lines = [
        {"qid": 1, "faithfulness": 0.5, "response": "x", "contexts": ["a"], "meta": {"judge": 1}},
        {"qid": "2", "faithfulness": 1, "response": "y", "answer_relevancy": 0.25},
    ]
    spec = put(tmp_path, "s.jsonl", "\n".join(map(json.dumps, lines)) + "\n")
    scores = load_scores(spec)
    assert (scores.join, scores.names) == ("qid", ("faithfulness", "answer_relevancy"))
    assert scores.rows["1"] == ScoreRow("1", 1, {"faithfulness": 0.5})  # a field the line lacks: no value, no null
    assert scores.rows["2"] == ScoreRow("2", 2, {"faithfulness": 1.0, "answer_relevancy": 0.25})
    assert scores.skipped == {"faithfulness": 0, "answer_relevancy": 0}


@pytest.mark.parametrize("field", ["question", "user_input"])
def test_jsonl_joined_on_question_text(tmp_path, field):
    spec = put(tmp_path, "s.ndjson", json.dumps({field: "Why?", "faithfulness": 0.5}) + "\n")
    scores = load_scores(spec)
    assert (scores.join, values(scores)) == ("question", {"Why?": {"faithfulness": 0.5}})


def test_jsonl_nan_and_null_are_skipped_values_and_absent_fields_are_no_values(tmp_path):
    text = (
        '{"qid": "a", "f": NaN, "g": 1}\n'
        "\n"
        '{"qid": "b", "f": null}\n'
        '   \n'
        '{"qid": "c", "f": 0.5, "g": NaN, "text": NaN}\n'
        '{"qid": "d", "f": 0, "text": "words"}\n'
    )
    scores = load_scores(put(tmp_path, "s.jsonl", text))
    assert scores.names == ("f", "g")  # a NaN does not make "text" a score
    assert {key: (row.line, row.values) for key, row in scores.rows.items()} == {
        "a": (1, {"f": None, "g": 1.0}),
        "b": (3, {"f": None}),
        "c": (5, {"f": 0.5, "g": None}),
        "d": (6, {"f": 0.0}),
    }
    assert scores.skipped == {"f": 2, "g": 1}


def test_jsonl_names_in_order_of_first_appearance(tmp_path):
    text = '{"qid": 1, "b": null, "note": "x"}\n{"qid": 2, "a": 1, "b": 2}\n'
    assert load_scores(put(tmp_path, "s.jsonl", text)).names == ("b", "a")


def test_jsonl_duplicates_and_bom(tmp_path):
    text = '{"qid": 1, "f": 0.1}\n{"qid": "1", "f": 0.2}\n{"qid": 2, "f": 0.3}\n'
    scores = load_scores(put(tmp_path, "s.jsonl", b"\xef\xbb\xbf" + text.encode()))
    assert values(scores) == {"1": {"f": 0.2}, "2": {"f": 0.3}}
    assert scores.duplicates == [(1, "1")]


def test_jsonl_known_field_of_nulls_is_a_score(tmp_path):
    spec = put(tmp_path, "s.jsonl", '{"qid": 1, "f": 1, "context_recall": null}\n')
    assert load_scores(spec).names == ("f",)
    assert load_scores(spec, frozenset({"context_recall"})).names == ("f", "context_recall")


# Format --------------------------------------------------------------------------------------


def test_format_is_sniffed_for_other_names(tmp_path):
    assert load_scores(put(tmp_path, "s.txt", '\n  {"qid": 1, "f": 1}\n')).rows["1"].line == 2
    assert load_scores(put(tmp_path, "scores", "qid,f\n1,1\n")).names == ("f",)
    assert load_scores(put(tmp_path, "S.CSV", "qid,f\n1,1\n")).names == ("f",)


def test_standard_input(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"qid": 1, "f": 0.5}\n')))
    scores = load_scores("-")
    assert (scores.source, values(scores)) == ("<stdin>", {"1": {"f": 0.5}})
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"qid,f\n1,oops\n")))
    assert error("-", frozenset({"f"})) == '<stdin>:2: expected "f" to be a number (or empty, null, NaN), got "oops"'


# Errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("content", [b"", b"\n \n\t\r\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf\n\n"])
@pytest.mark.parametrize("name", ["s.csv", "s.jsonl", "s.txt"])
def test_empty_file(tmp_path, content, name):
    spec = put(tmp_path, name, content)
    assert error(spec) == f"{spec}: the scores file is empty"


def test_missing_file(tmp_path):
    spec = str(tmp_path / "nope.csv")
    assert error(spec) == f"{spec}: no such file"


@pytest.mark.parametrize(
    ("name", "content", "line"),
    [
        ("s.csv", "id,faithfulness\n1,0.5\n", 1),
        ("s.csv", "\n\nQID,faithfulness\n1,0.5\n", 3),
        ("s.jsonl", '{"id": 1, "faithfulness": 0.5}\n{"qid": 2, "faithfulness": 0.5}\n', 1),
        ("s.jsonl", '\n{"id": 1, "faithfulness": 0.5}\n', 2),
    ],
)
def test_no_join_column(tmp_path, name, content, line):
    spec = put(tmp_path, name, content)
    assert error(spec) == f'{spec}:{line}: expected a "qid", "question" or "user_input" column to join the scores on'


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("s.csv", "qid,response\n1,yes\n2,no\n"),
        ("s.csv", "qid,faithfulness\n1,\n2,nan\n"),
        ("s.jsonl", '{"qid": 1, "response": "yes", "f": null, "g": NaN, "h": true, "i": [1], "j": {"k": 1}}\n'),
    ],
)
def test_no_score_column(tmp_path, name, content):
    spec = put(tmp_path, name, content)
    assert error(spec) == f"{spec}: no numeric score column found (expected columns such as faithfulness or answer_relevancy)"


def test_csv_empty_key(tmp_path):
    spec = put(tmp_path, "s.csv", 'qid,f\na,1\n"",2\n')
    assert error(spec) == f'{spec}:3: expected a "qid" in every row, got an empty cell'
    spec = put(tmp_path, "t.csv", "f,user_input\n1,Why?\n2\n")
    assert error(spec) == f'{spec}:3: expected a "user_input" in every row, got an empty cell'


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ('{"f": 1}', 'missing "qid" (the first record has it, so every record is joined on it)'),
        ('{"qid": "", "f": 1}', 'expected "qid" to be a non-empty string or an integer, got ""'),
        ('{"qid": null, "f": 1}', 'expected "qid" to be a non-empty string or an integer, got null'),
        ('{"qid": true, "f": 1}', 'expected "qid" to be a non-empty string or an integer, got true'),
        ('{"qid": 1.5, "f": 1}', 'expected "qid" to be a non-empty string or an integer, got 1.5'),
        ('{"qid": ["a"], "f": 1}', 'expected "qid" to be a non-empty string or an integer, got an array'),
    ],
)
def test_jsonl_bad_key(tmp_path, record, message):
    spec = put(tmp_path, "s.jsonl", '{"qid": "a", "f": 1}\n\n' + record + "\n")
    assert error(spec) == f"{spec}:3: {message}"


def test_csv_known_column_with_text(tmp_path):
    spec = put(tmp_path, "s.csv", "qid,faithfulness\na,0.5\nb,high\nc,low\n")
    assert error(spec).endswith("no numeric score column found (expected columns such as faithfulness or answer_relevancy)")
    assert error(spec, frozenset({"faithfulness"})) == (
        f'{spec}:3: expected "faithfulness" to be a number (or empty, null, NaN), got "high"'
    )


def test_csv_text_in_an_unknown_column_only_hides_it(tmp_path):
    spec = put(tmp_path, "s.csv", "qid,faithfulness,f\na,0.5,1\nb,high,1\n")
    assert load_scores(spec).names == ("f",)


@pytest.mark.parametrize("cell", ["inf", "-inf", " Infinity ", "-INFINITY", "1e400"])
def test_csv_infinite_value(tmp_path, cell):
    spec = put(tmp_path, "s.csv", f"qid,faithfulness\na,0.5\n\nb,{cell}\n")
    assert error(spec) == (
        f'{spec}:4: expected "faithfulness" to be a finite number (or empty, null, NaN), got "{cell.strip()}"'
    )


def test_csv_error_lines_count_from_the_record_start(tmp_path):
    spec = put(tmp_path, "s.csv", 'qid,notes,faithfulness\na,"one\ntwo\nthree",0.5\nb,"x\ny",bad\n')
    assert error(spec, frozenset({"faithfulness"})) == (
        f'{spec}:5: expected "faithfulness" to be a number (or empty, null, NaN), got "bad"'
    )


def test_csv_too_many_cells(tmp_path):
    spec = put(tmp_path, "s.csv", 'qid,f\na,1\nb,"2\n",3\n')
    assert error(spec) == f"{spec}:3: expected at most 2 cells (one per header column), got 3"


def test_csv_unclosed_quote(tmp_path):
    spec = put(tmp_path, "s.csv", 'qid,f\na,1\nb,"2\nc,3\n')
    assert error(spec) == f'{spec}:3: invalid CSV: a quoted cell is never closed (its " is in the record that starts here)'


def test_csv_text_after_a_closing_quote(tmp_path):
    spec = put(tmp_path, "s.csv", 'qid,f\na,"1"x\n')
    assert error(spec) == (
        f'{spec}:2: invalid CSV: a quoted cell must end at a comma or at the end of the line (write a " inside it as "")'
    )


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("qid,answer relevancy", 'the score column "answer relevancy" cannot be a metric name: it holds whitespace'),
        ("qid,f1%", 'the score column "f1%" cannot be a metric name: it holds the character "%"'),
        ("qid,\u00e9tat", 'the score column "\u00e9tat" cannot be a metric name: it holds the character "\u00e9"'),
        ("qid,x,", "a score column has no name"),
    ],
)
def test_csv_bad_score_name(tmp_path, header, message):
    spec = put(tmp_path, "s.csv", f"{header}\na,1,2\n" if header.endswith(",") else f"{header}\na,1\n")
    suffix = "" if message.endswith("no name") else " (use letters, digits and _ . @ : / -)"
    assert error(spec) == f"{spec}:1: {message}{suffix}"


def test_good_score_names(tmp_path):
    spec = put(tmp_path, "s.csv", "qid,ragas/faithfulness,ndcg@10,judge:gpt-4.1,A_b\na,1,2,3,4\n")
    assert load_scores(spec).names == ("ragas/faithfulness", "ndcg@10", "judge:gpt-4.1", "A_b")


def test_jsonl_bad_score_name_at_its_first_line(tmp_path):
    spec = put(tmp_path, "s.jsonl", '{"qid": 1, "f": 1}\n{"qid": 2, "my score": null}\n{"qid": 3, "my score": 2}\n')
    assert error(spec) == (
        f'{spec}:2: the score field "my score" cannot be a metric name: it holds whitespace (use letters, digits and _ . @ : / -)'
    )


def test_csv_repeated_column(tmp_path):
    spec = put(tmp_path, "s.csv", "qid,f,response,f\na,1,x,2\n")
    assert error(spec) == f'{spec}:1: the column "f" appears twice (columns 2 and 4)'


def test_jsonl_score_error_at_the_first_offending_line(tmp_path):
    # "f" holds a string before it holds a number: the string line is the error.
    text = '{"qid": 1, "f": null}\n{"qid": 2, "f": "0.5"}\n{"qid": 3, "f": "x"}\n{"qid": 4, "f": 0.5}\n'
    spec = put(tmp_path, "s.jsonl", text)
    assert error(spec) == f'{spec}:2: expected "f" to be a number or null, got a string ("0.5")'


@pytest.mark.parametrize(
    ("value", "got"),
    [
        ("true", "a boolean (true)"),
        ("[0.5]", "an array"),
        ('{"score": 0.5}', "an object"),
    ],
)
def test_jsonl_score_not_a_number(tmp_path, value, got):
    spec = put(tmp_path, "s.jsonl", f'{{"qid": 1, "f": 1}}\n{{"qid": 2, "f": {value}}}\n')
    assert error(spec) == f'{spec}:2: expected "f" to be a number or null, got {got}'


def test_jsonl_known_field_holding_text(tmp_path):
    spec = put(tmp_path, "s.jsonl", '{"qid": 1, "f": 1, "faithfulness": "high"}\n')
    assert load_scores(spec).names == ("f",)
    assert error(spec, frozenset({"faithfulness"})) == f'{spec}:1: expected "faithfulness" to be a number or null, got a string ("high")'


@pytest.mark.parametrize(
    ("value", "got"), [("Infinity", "Infinity"), ("-Infinity", "-Infinity"), ("1e400", "Infinity")]
)
def test_jsonl_infinite_value(tmp_path, value, got):
    spec = put(tmp_path, "s.jsonl", f'{{"qid": 1, "f": 1}}\n{{"qid": 2, "f": {value}}}\n')
    assert error(spec) == f'{spec}:2: expected "f" to be a finite number or null, got {got}'


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"qid": 2, "f": }', "invalid JSON: Expecting value"),
        ('{"qid": 2, "f": 1} {"qid": 3}', "invalid JSON: extra data after the value (one value per line)"),
        ('{"qid": 2, "f": nan}', "invalid JSON: Expecting value"),
        ('["qid", 2]', "expected a JSON object, got an array"),
        ("3", "expected a JSON object, got 3"),
    ],
)
def test_jsonl_malformed_line(tmp_path, line, message):
    spec = put(tmp_path, "s.jsonl", '{"qid": 1, "f": 1}\n' + line + "\n")
    assert error(spec).startswith(f"{spec}:2")
    assert error(spec).endswith(message)


def test_jsonl_json_array_is_refused_with_a_hint(tmp_path):
    spec = put(tmp_path, "s.json", '\n[{"qid": 1, "f": 1}]\n')
    assert error(spec) == (
        f"{spec}:2: expected JSON Lines (one object per line), got a JSON array "
        '(pandas writes JSON Lines with to_json(orient="records", lines=True))'
    )


@pytest.mark.parametrize(
    ("name", "body", "where"),
    [
        ("s.csv", b"qid,f\na,1\nb\xff,2\n", "3:2"),
        ("s.csv", b'qid,notes,f\na,"x\ny\xff",1\n', "3:2"),
        ("s.jsonl", b'{"qid": "a", "f": 1}\n{"qid": "b\xff", "f": 2}\n', "2:11"),
    ],
)
def test_invalid_utf8(tmp_path, name, body, where):
    spec = put(tmp_path, name, body)
    assert error(spec) == f"{spec}:{where}: expected UTF-8 text, got byte 0xff"


@pytest.mark.parametrize(("name", "text", "error"), [
    ("s.jsonl", '{"qid": "a", "f": 1e308}\n', 's.jsonl:1: expected "f" to be at most 1e+15 in magnitude, got 1e+308'),
    ("s.jsonl", '{"qid": "a", "f": -' + "9" * 20 + '}\n', 's.jsonl:1: expected "f" to be at most 1e+15 in magnitude, got -1e+20'),
    ("s.csv", "qid,f\na,0.5\nb,2e16\n", 's.csv:3: expected "f" to be at most 1e+15 in magnitude, got 2e+16'),
])
def test_scores_beyond_the_magnitude_bound_are_refused(tmp_path, name, text, error):
    with pytest.raises(InputError) as caught:
        load_scores(put(tmp_path, name, text))
    assert str(caught.value) == str(tmp_path / error)


# A header and no rows; more score columns than a run keeps ------------------------------------


@pytest.mark.parametrize("content", ["qid,faithfulness,response\n", "qid,faithfulness,response\n\n\n"])
def test_csv_header_without_rows_is_read_and_keeps_only_the_known_columns(tmp_path, content):
    # Without a row nothing shows which columns hold numbers: the known (gated, common) names are
    # scores that no question has; the score command says the file has no rows.
    scores = load_scores(put(tmp_path, "s.csv", content), frozenset({"faithfulness"}))
    assert (scores.names, scores.rows, scores.duplicates, scores.skipped) == (("faithfulness",), {}, [], {"faithfulness": 0})
    assert load_scores(put(tmp_path, "t.csv", "qid,myscore\n")).names == ()


def test_more_numeric_columns_than_a_run_keeps_is_an_error_before_any_row_is_kept(tmp_path):
    from ragscore.loaders.scores import MAX_NAMES

    header = "qid," + ",".join(f"s{i}" for i in range(MAX_NAMES + 1)) + ",response\n"
    spec = put(tmp_path, "s.csv", header + "a," + ",".join(["0.5"] * (MAX_NAMES + 1)) + ",text\n")
    assert error(spec) == f"{spec}: more than 256 score columns (one column is kept per name and question): 257"
    spec = put(tmp_path, "s.jsonl", json.dumps({"qid": "a", **{f"s{i}": 0.5 for i in range(MAX_NAMES + 1)}}) + "\n")
    assert error(spec) == f"{spec}: more than 256 score fields (one column is kept per name and question): 257"
    spec = put(tmp_path, "ok.csv", header.replace(",response", "") + "a," + ",".join(["0.5"] * MAX_NAMES) + ",text\n")
    assert len(load_scores(spec).names) == MAX_NAMES  # the last column holds text: ignored


def _scores_run(ragscore, isolated, csv: str, *args: str):
    write(isolated / "g.jsonl", [{"qid": "a", "answerable": True, "gold_citations": ["d"]},
                                 {"qid": "b", "answerable": False}])
    write(isolated / "t.jsonl", [{"qid": "a", "retrieved_ids": ["d"], "answer_json": {"claim": "x", "citations": ["d"]}},
                                 {"qid": "b", "answer_json": {"claim": "not in context", "citations": []}}])
    write(isolated / "s.csv", csv)
    return ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--scores", "s.csv", "--format", "none", *args)


@pytest.mark.parametrize("gate", ["faithfulness=0.7", "my_judge=0.7"])
def test_a_header_without_rows_is_noted_and_its_gate_fails_when_strict(ragscore, isolated, gate):
    name = gate.split("=")[0]
    note = 'ragscore: scores file "s.csv" has a header and no rows: no question has a score from it\n'
    # Before, the gate was skipped without a word and the run passed.
    run = _scores_run(ragscore, isolated, f"qid,{name}\n", "--gates", gate)
    assert run.status == 0
    unseen = f""": the run never saw "{name}" (no trace's "scores" and no --scores row gave it)\n"""
    assert note in run.err and f"ragscore: SKIPPED {name} = n/a (gate >= 0.7){unseen}" in run.err
    # --strict: a gate on a score no question has fails, as a gate on any undefined metric does.
    run = _scores_run(ragscore, isolated, f"qid,{name}\n", "--gates", gate, "--strict")
    assert run.status == 1
    assert note in run.err and f"ragscore: FAIL    {name} = n/a (gate >= 0.7){unseen}" in run.err
    assert run.err.endswith(f"ragscore: FAIL: 1 of 6 gates failed: {name}\n")


def test_a_header_without_rows_and_no_gate_is_only_noted(ragscore, isolated):
    run = _scores_run(ragscore, isolated, "qid,my_judge,response\n", "--json", "r.json")
    assert run.status == 0
    assert run.err.startswith('ragscore: scores file "s.csv" has a header and no rows: no question has a score from it\n')
    doc = json.loads((isolated / "r.json").read_text(encoding="utf-8"))
    assert doc["scores_file"]["rows"] == 0 and "scores" not in doc and "my_judge" not in doc["metrics"]
