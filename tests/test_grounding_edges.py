"""Edges of --metrics grounding and --corpus a second reader found (issue 34): each a case that was misread."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write
from ragscore.loaders.corpus import Corpus, CorpusUse, entry_texts
from ragscore.loaders.trace import parse_trace
from ragscore.metrics.figures import numbers, unsupported
from ragscore.metrics.grounding import grounding_findings
from ragscore.metrics.leaks import leaks, placed
from ragscore.text import fold, fold_text

PASSAGE = 'Revenue grew 87.3% in 2021, "driven by exports to Asia".'


@pytest.fixture
def run_files(isolated):
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "question": "How did revenue change?", "answerable": True}
                                 for i in range(4)])
    write(isolated / "corpus.jsonl", [{"_id": "d1", "text": PASSAGE}, {"_id": "d2", "text": "Other text."}])
    write(isolated / "t.jsonl", [{"qid": f"q{i}", "retrieved_ids": ["d1", "d2"],
                                  "answer_json": {"claim": "Revenue grew 87% in 2021.", "citations": ["d1"]}}
                                 for i in range(4)])
    return isolated


def test_a_corpus_must_be_a_file_that_can_be_read_again(ragscore, run_files):
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--corpus", "-", "--metrics", "grounding")
    assert run.status == 2 and run.err == ("ragscore: error: <stdin>: a corpus is read by every part of a run and by "
                                           "each run compared: give a file, not standard input or a pipe\n")
    # A pipe, as a shell's process substitution gives one: the same error, whatever --jobs.
    script = ("import sys, ragscore.cli as c; sys.exit(c.main(['--gold', 'g.jsonl', '--trace', 't.jsonl', "
              "'--corpus', '/dev/stdin', '--metrics', 'grounding', '--jobs', '2']))")
    done = subprocess.run([sys.executable, "-c", script], input=(run_files / "corpus.jsonl").read_bytes(),
                          capture_output=True, cwd=run_files)
    assert done.returncode == 2 and b"give a file, not standard input or a pipe" in done.stderr


def test_merge_refuses_parts_read_with_other_corpora(ragscore, run_files):
    write(run_files / "other.jsonl", [{"_id": "d1", "text": "Revenue fell."}])
    args = ("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "grounding")
    assert ragscore("partial", *args, "--corpus", "corpus.jsonl", "--part", "1/2", "-o", "a.json").status == 0
    assert ragscore("partial", *args, "--corpus", "other.jsonl", "--part", "2/2", "-o", "b.json").status == 0
    assert ragscore("partial", *args, "--part", "2/2", "-o", "c.json").status == 0
    other = ragscore("merge", "a.json", "b.json")
    assert other.status == 2 and "are not parts of one run: other corpora (sha256" in other.err
    none = ragscore("merge", "a.json", "c.json")
    assert none.status == 2 and "not parts of one run: one read a --corpus, the other none" in none.err


def test_monitor_reads_a_corpus_for_traces_joined_to_nothing(ragscore, run_files):
    write(run_files / "m.jsonl", [{"ts": 1_764_000_000, "retrieved_ids": ["d1"],
                                   "answer_json": {"claim": "It grew 85%.", "citations": ["d1"]}}])
    run = ragscore("monitor", "--trace", "m.jsonl", "--corpus", "corpus.jsonl", "--metrics", "grounding")
    assert run.status == 0 and json.loads(run.out)["metrics"]["number_unsupported_rate"] == 1.0


def test_a_number_inside_a_leak_is_the_leak_and_explain_prints_neither(ragscore, isolated):
    claim = "Your card 4111111111111111 and phone +15551234567 are on file; it grew 3%."
    found = grounding_findings(claim, ["d1"], [], ["it grew 3%"], None)
    assert found.numbers == 1 and [f.kind for f in found.items] == ["leak", "leak"]
    write(isolated / "g.jsonl", [{"qid": "q1", "question": "Card?", "answerable": True}])
    write(isolated / "t.jsonl", [{"qid": "q1", "retrieved_ids": ["d1"], "retrieved_chunks": ["nothing here"],
                                  "answer": "Key AKIAIOSFODNN7EXAMPLE is not mentioned in the context."},
                                 ])
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "grounding", "--explain", "q1", "-q",
                   "--no-fail")
    assert "akiaiosfodnn7example" not in run.out.lower()
    assert "(it matched text that holds a leaked value, not shown)" in run.out


@pytest.mark.parametrize(("text", "read"), [
    ("grew 2.5x", []),                               # decimals glued to a letter: no number, not 2
    ("$1.5B", []),
    ("3.5 Million", [("3.5E+6", "")]),               # a magnitude word in any case
    ("87 Percent", [("87", "%")]),
    ("between 10%-20%", [("10", "%"), ("20", "%")]),  # a range's dash is no minus sign
    ("2023/-2024", [("2023", ""), ("2024", "")]),
    ("it was -5 degrees", [("-5", "")]),
    ("(-3%)", [("-3", "%")]),
    ("grew \uff18\uff17\uff05", [("87", "%")]),      # full-width, as NFKC reads it
])
def test_numbers_are_read_as_written(text, read):
    assert [(str(n.value), n.unit) for n in numbers(text)] == read


def test_changed_digits_are_never_supported_and_ranges_support_their_ends():
    assert unsupported("It grew 20%.", ["between 10%-20%"]) == []
    assert [str(n.value) for n in unsupported("It is 3.5 Million.", ["3,456,789"])] == []
    assert len(unsupported("It is 21%.", ["between 10%-20%"])) == 1


def test_a_retrieved_null_keeps_the_other_texts_and_no_text_is_not_judged():
    assert entry_texts({"retrieved_chunks": ["It is 42.", None]}) == ["It is 42.", None]
    corpus = Corpus(CorpusUse("c", "0" * 64, 1), {"d2": "Other."}, {})
    view = parse_trace({"qid": "q", "retrieved_ids": ["d1", "d2"], "retrieved_chunks": ["It is 42.", None],
                        "answer": "42"}, "t", 1)
    _, obj = corpus.resolve(view, {"retrieved_ids": ["d1", "d2"], "retrieved_chunks": ["It is 42.", None]})
    assert obj["retrieved_chunks"] == ["It is 42.", "Other."]  # the trace's own text wins, the corpus fills
    # Ids the corpus does not have, and no text of the trace's own: no passage text, nothing judged.
    nothing = parse_trace({"qid": "q", "retrieved_ids": ["x", "y"], "answer": "42"}, "t", 1)
    _, same = corpus.resolve(nothing, {"retrieved_ids": ["x", "y"]})
    assert "retrieved_chunks" not in same and corpus.use.untexted == 2


def test_an_empty_text_names_no_passage():
    corpus = Corpus(CorpusUse("c", "0" * 64, 1), {}, {})
    view = parse_trace({"qid": "q", "retrieved_chunks": [""], "answer": "x"}, "t", 1)
    resolved, _ = corpus.resolve(view, {"retrieved_chunks": [""]})
    assert resolved.retrieved == ("(passage 1: no corpus entry)",)


@pytest.mark.parametrize(("claim", "passage"), [
    ("mail Bob.Smith@Corp.com", "bob.smith@corp.com"),  # an address in any case
    ("call +15551234567", "call +1 555-123 4567"),     # a phone number with its separators
    ("call +15551234567", "call +1 (555) 123.4567"),
])
def test_a_leak_is_found_in_the_context_however_it_is_written_there(claim, passage):
    assert [placed(leak, [passage], None) for leak in leaks(claim)] == ["from_context"]


def test_compare_against_a_report_leaves_the_rates_of_counts_untested(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "question": "?", "answerable": True} for i in range(20)])
    claims = ["It grew 87% and 5% and 6% and 7% in 2021."] + ["It grew 87%."] * 19
    write(isolated / "t.jsonl", [{"qid": f"q{i}", "retrieved_ids": ["d1"], "retrieved_chunks": [PASSAGE],
                                  "answer_json": {"claim": c, "citations": ["d1"]}} for i, c in enumerate(claims)])
    assert ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "grounding", "--per-question",
                    "--no-fail", "--json", "base.json", "-q").status == 0
    doc = json.loads(ragscore("compare", "--gold", "g.jsonl", "--trace", "t.jsonl", "--baseline-report",
                              "base.json", "--metrics", "grounding", "--no-fail").out)
    row = doc["metrics"]["number_unsupported_rate"]
    assert row["delta"] == 0.0 and row.get("p_value") is None  # the report's per-question rates are no counts


def test_an_annotation_names_every_question_with_only_failures(ragscore, isolated, monkeypatch):
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "question": "?", "answerable": True,
                                  "gold_claim_substr": ["write"]} for i in range(4)])
    write(isolated / "t.jsonl", [{"qid": f"q{i}", "retrieved_ids": ["d1"], "retrieved_chunks": ["x"],
                                  "answer": "Write to a@example.com." if i < 3 else "nothing"} for i in range(4)])
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    run = ragscore("--gold", "g.jsonl", "--trace", "t.jsonl", "--gates", "leak_rate<=0.1", "--only-failures", "-q")
    assert "expected <= 0.1: in q0, q1, q2" in run.err


def test_merge_refuses_a_forged_finding(ragscore, isolated):
    write(isolated / "g.jsonl", [{"qid": f"q{i}", "question": "?", "answerable": True} for i in range(4)])
    write(isolated / "t.jsonl", [{"qid": f"q{i}", "retrieved_ids": ["d1"], "retrieved_chunks": [PASSAGE],
                                  "answer": '"driven by exports to Asia", it said.'} for i in range(4)])
    args = ("--gold", "g.jsonl", "--trace", "t.jsonl", "--metrics", "grounding", "--per-question")
    for part in (1, 2):
        assert ragscore("partial", *args, "--part", f"{part}/2", "-o", f"p{part}.json").status == 0
    assert ragscore("merge", "p1.json", "p2.json", "--no-fail").status == 0
    data = json.loads((isolated / "p1.json").read_text())
    row = next(r for r in data["result"]["rows"] if r[-1] is not None)
    findings = row[-1][3]
    for change, error in [
        (lambda: findings[0].__setitem__(0, "rumour"), "a finding: [kind (quote, number or leak)"),
        (lambda: findings[0].__setitem__(3, "totally-bogus"), "a quote finding with one of its verdicts"),
        (lambda: findings.append(["number", 0, 1, "unsupported", ""]), "do not match the row's grounding counts"),
    ]:
        findings[0][:] = ["quote", *findings[0][1:3], "verified", ""]
        del findings[1:]
        change()
        (isolated / "p1.json").write_text(json.dumps(data))
        damaged = ragscore("merge", "p1.json", "p2.json", "--per-question")
        assert damaged.status == 2 and error in damaged.err


def test_a_number_of_any_length_is_read_and_compared_exactly():
    digits = "1234567890123456789012345678901234567"  # past the 28 digits of Python's default decimal context
    assert unsupported(f"It is {digits}.", [f"it is {digits}"]) == []
    changed = digits[:-1] + "8"
    assert [str(n.value) for n in unsupported(f"It is {changed}.", [f"it is {digits}"])] == [changed]
    assert numbers(f"-{digits} million")[0].value == -int(digits) * 10**6


def test_what_a_second_reader_found_in_the_number_search():
    """A negative claim past 28 digits is supported by itself (its bounds were negated in 28 digits); a claim of
    more than 4,300 digits is judged (Python refuses to write so long an int); a magnitude word is read in
    ASCII's cases only ("mıllıon" case-folds to "million": it raised a KeyError)."""
    negative = "-" + "1" * 29
    assert unsupported(negative, [negative]) == []
    assert unsupported("-1.2345678901234567890123456789", ["it was -1.2345678901234567890123456789"]) == []
    long = "1" * 4301
    assert unsupported(long, [long]) == [] and len(unsupported(long, ["x"])) == 1
    assert [(n.value, n.end) for n in numbers("5 m\u0131ll\u0131on")] == [(5, 1)]
    assert len(unsupported("5 million", ["5 m\u0131ll\u0131on"])) == 1 and unsupported("5", ["5 m\u0131ll\u0131on"]) == []


@given(st.lists(st.sampled_from(["a", "B", " ", "  ", "\u0301", "\u0308", "\u0327", "e", "\u00e9", "\u2019", "\u201c",
                                 "\u2013", "\uff21", "\u00a0", "\u0130", "\u00df", "\ufb01", "\n", "\u212b", "1"]),
                max_size=16))
@settings(max_examples=500, deadline=None)
def test_fold_with_offsets_gives_the_text_fold_text_gives(pieces):
    text = "".join(pieces)
    folded = fold(text)
    assert folded.text == fold_text(text)
    for i in range(len(folded.text)):  # each folded character points at characters of the original
        assert 0 <= folded.offsets[i] < folded.ends[i] <= len(text)
