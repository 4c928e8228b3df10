"""`ragscore validate`: every problem listed with its position; errors exit 2, warnings do not."""

from __future__ import annotations

from conftest import EXAMPLES, write


def test_every_error_is_listed_not_just_the_first(ragscore, isolated):
    write(isolated / "g.jsonl", b'{"qid": "a", "answerable": "yes"}\n{oops\n{"qid": "b", "answerable": true, '
                                b'"gold_citations": ["d"], "gold_claim_substr": ["fine claim"]}\n'
                                b'{"qid": "b", "answerable": false}\n\xff\n')
    run = ragscore("validate", "--gold", "g.jsonl")
    assert run.status == 2
    assert run.out.splitlines() == [
        'g.jsonl:1:28: error: expected "answerable" to be true or false, got "yes"',
        "g.jsonl:2:2: error: invalid JSON: Expecting property name enclosed in double quotes",
        'g.jsonl:4: error: duplicate qid "b" (first defined on line 3)',
        "g.jsonl:5:1: error: expected UTF-8 text, got byte 0xff",
    ]
    assert run.err == "ragscore: 4 errors, 0 warnings\n"


def test_warnings_for_data_that_can_never_score_well(ragscore, isolated):
    write(isolated / "g.jsonl", [
        {"qid": "Q1", "answerable": True, "gold_claim_substr": ["abc", "long enough"], "gold_citations": ["d1"]},
        {"qid": "Q2", "answerable": True, "gold_claim": "Not in context, sadly."},
        {"qid": "q1 ", "answerable": False},
    ])
    write(isolated / "t.jsonl", [
        {"qid": "Q1", "retrieved_ids": ["d1"], "answer_json": {"claim": "x", "citations": ["d1", "d9"]}},
        {"qid": "Q1", "retrieved_ids": ["d1"], "answer_json": {"claim": "x", "citations": "d1"}},
        {"qid": "Q7", "answer_json": {"claim": "x"}},
    ])
    run = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl")
    assert run.status == 0
    assert run.out.splitlines() == [
        'g.jsonl:1: warning: "gold_claim_substr" entry "abc" is shorter than 5 characters and never matches',
        'g.jsonl:2: warning: answerable item without "gold_citations": a citation can only hit by citing nothing',
        'g.jsonl:2: warning: the gold claim of an answerable item contains the refusal phrase "not in context"',
        'g.jsonl:3: warning: qids differ only by case or white space: "Q1", "q1 "',
        "t.jsonl: warning: 2 gold question(s) have no trace: Q2, q1 ",
        "t.jsonl:1: warning: cites ids that are not among the retrieved ids: d9",
        't.jsonl:2: warning: another trace for "Q1" (line 1); the last one counts',
        "t.jsonl:2: warning: answer_json.citations is not a list of ids",
        "t.jsonl:3: warning: the trace matches no gold question (ignored)",
    ]
    assert run.err == "ragscore: 0 errors, 9 warnings\n"
    quiet = ragscore("validate", "--gold", "g.jsonl", "--trace", "t.jsonl", "-q")
    assert (quiet.status, quiet.out, quiet.err) == (0, "", "")


def test_shipped_examples_have_no_errors(ragscore, isolated):
    for gold, trace in (("gold.jsonl", "trace.jsonl"), ("alt-shape/gold.json", "alt-shape/trace.jsonl"),
                        ("product/gold.jsonl", "product/trace.jsonl")):
        assert ragscore("validate", "--gold", EXAMPLES / gold, "--trace", EXAMPLES / trace).status == 0


def test_missing_and_empty_files(ragscore, isolated):
    assert ragscore("validate", "--gold", "nope.jsonl").out == "nope.jsonl: error: no such file\n"
    write(isolated / "g.jsonl", "\n")
    assert ragscore("validate", "--gold", "g.jsonl").out == "g.jsonl: error: no questions: a gold set needs at least one\n"


def test_init_writes_a_starter_that_ragscore_reads_and_never_overwrites(ragscore, isolated):
    run = ragscore("init")
    assert run.status == 0 and run.err.startswith("ragscore: wrote gates.toml; next: ragscore --gold")
    scored = ragscore("--gold", EXAMPLES / "gold.jsonl", "--trace", EXAMPLES / "trace.jsonl")
    assert scored.status == 0 and set(scored.json()["gates"]) == {"precision", "chr", "under_refusal", "over_refusal", "missing"}
    again = ragscore("init")
    assert (again.status, again.err) == (2, "ragscore: error: gates.toml: already exists; ragscore init never overwrites a file\n")
