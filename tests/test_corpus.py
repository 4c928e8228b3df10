"""--corpus (issue 34): passage texts by id, and ids for texts, read from a corpus file.

A BEIR corpus (``_id``, ``title``, ``text``: the title and the text joined by a newline) or JSON
Lines with ``id``/``doc_id`` and ``text``/``contents``/``page_content``; streamed, keeping only the
passages the traces use; a trace's own texts win; the report names the corpus with its sha256.
"""

from __future__ import annotations

import gzip
import hashlib
import json

import pytest

import ragscore
from conftest import write
from ragscore.loaders.corpus import entry_texts, load_corpus, text_key
from ragscore.loaders.jsonl import InputFile

GOLD = [
    {"qid": "q1", "question": "How did revenue change in 2021?", "answerable": True, "gold_citations": ["d1"],
     "gold_claim_substr": ["87%"]},
    {"qid": "q2", "question": "Who founded Acme?", "answerable": True, "gold_citations": ["d2"],
     "gold_claim_substr": ["Jane Roe"]},
]
CORPUS = [
    {"_id": "d1", "title": "Annual report", "text": 'Revenue grew by 87.3% in 2021; "growth was driven by exports".',
     "metadata": {}},
    {"_id": "d2", "title": "", "text": "Acme was founded by Jane Roe in 1999.", "metadata": {}},
    {"_id": "d3", "title": "Weather", "text": "It rained all week in Basel.", "metadata": {}},
]
CLAIMS = {"q1": 'Revenue grew 87% in 2021: "growth was driven by exports".', "q2": "Jane Roe founded Acme in 1998."}
# The passages as a pipeline that keeps no ids logs them (another spacing and case: matched once folded).
TEXTS = {"q1": ["Annual report\nRevenue grew by 87.3% in 2021;  \"growth was driven by exports\".", "Not in it."],
         "q2": ["ACME was founded by Jane Roe in 1999."]}
IDS = {"q1": ["d1", "d3"], "q2": ["d2"]}


@pytest.fixture
def corpus_run(isolated):
    write(isolated / "g.jsonl", GOLD)
    write(isolated / "corpus.jsonl", CORPUS)
    write(isolated / "ids.jsonl", [{"qid": q, "retrieved_ids": IDS[q], "answer_json": {"claim": CLAIMS[q],
                                                                                       "citations": IDS[q][:1]}}
                                   for q in IDS])
    write(isolated / "texts.jsonl", [{"qid": q, "retrieved_chunks": TEXTS[q], "answer_json": {"claim": CLAIMS[q],
                                                                                              "citations": []}}
                                     for q in TEXTS])
    return isolated


ARGS = ("--gold", "g.jsonl", "--corpus", "corpus.jsonl", "--metrics", "grounding,retrieval", "--no-fail")


def test_ids_get_their_texts_from_the_corpus(ragscore, corpus_run):
    without = ragscore("--gold", "g.jsonl", "--trace", "ids.jsonl", "--metrics", "grounding", "--no-fail").json()
    # Without passage texts nothing is judged (numbers are counted only against texts).
    assert without["grounding"]["numbers"] == 0 and without["metrics"]["number_unsupported_rate"] is None
    doc = ragscore(*ARGS, "--trace", "ids.jsonl").json()
    # 87% (by d1's 87.3%) and 2021 are supported by the cited d1; 1998 is not. The quote is in d1.
    assert doc["grounding"]["numbers_unsupported"] == 1 and doc["metrics"]["quote_verified_rate"] == 1.0
    raw = (corpus_run / "corpus.jsonl").read_bytes()
    assert doc["inputs"]["corpus"] == {"path": "corpus.jsonl", "sha256": hashlib.sha256(raw).hexdigest(),
                                       "documents": 3}


def test_texts_without_ids_get_ids_by_their_folded_text(ragscore, corpus_run):
    by_ids = ragscore(*ARGS, "--trace", "ids.jsonl").json()["metrics"]
    run = ragscore(*ARGS, "--trace", "texts.jsonl")
    by_texts = run.json()["metrics"]
    # Ranked as the ids are: d1 then a text no entry has (relevant to nothing, like d3), d2.
    assert {m: by_texts[m] for m in by_texts if "@" in m} == {m: by_ids[m] for m in by_ids if "@" in m}
    assert by_texts["recall@1"] == 1.0
    assert ("ragscore: 2 traces log passage texts without ids: their ids come from corpus.jsonl by text; 1 text has "
            "no corpus entry (ranked, relevant to nothing): texts.jsonl, line 1") in run.err
    # Without the corpus the texts are no ids: nothing is retrieved.
    assert ragscore("--gold", "g.jsonl", "--trace", "texts.jsonl", "--metrics", "retrieval",
                    "--no-fail").json()["metrics"]["recall@1"] == 0.0


def test_a_trace_s_own_text_wins_and_a_missing_one_is_noted(ragscore, corpus_run):
    write(corpus_run / "own.jsonl", [
        # d1's own text says 85%: the claim's 85% is supported by it, whatever the corpus says.
        {"qid": "q1", "retrieved_ids": [{"id": "d1", "page_content": "Revenue grew 85%."}, "d3"],
         "answer_json": {"claim": "Revenue grew 85%.", "citations": ["d1"]}},
        {"qid": "q2", "retrieved_ids": ["d9"], "answer_json": {"claim": "It was 1999.", "citations": ["d9"]}},
    ])
    run = ragscore(*ARGS, "--trace", "own.jsonl")
    # 85% is supported by d1's own text; d9 has no text anywhere: q2 has no passage text, so its 1999 is not judged.
    assert (run.json()["grounding"]["numbers"], run.json()["grounding"]["numbers_unsupported"]) == (1, 0)
    assert ("1 retrieved id has no text in the trace or corpus.jsonl (an empty passage for --metrics grounding): "
            "own.jsonl, line 2") in run.err


def test_the_corpus_shapes_and_compression(ragscore, corpus_run):
    plain = ragscore(*ARGS, "--trace", "texts.jsonl").json()["metrics"]
    for name, rows in [
        ("ids.jsonl.gz", [{"id": c["_id"], "text": (c["title"] + "\n" if c["title"] else "") + c["text"]}
                          for c in CORPUS]),
        ("docs.jsonl", [{"doc_id": c["_id"], "contents": (c["title"] + "\n" if c["title"] else "") + c["text"]}
                        for c in CORPUS]),
        ("lc.jsonl", [{"id": c["_id"], "page_content": (c["title"] + "\n" if c["title"] else "") + c["text"],
                       "metadata": {}} for c in CORPUS]),
    ]:
        body = "".join(json.dumps(r) + "\n" for r in rows).encode()
        (corpus_run / name).write_bytes(gzip.compress(body, mtime=0) if name.endswith(".gz") else body)
        doc = ragscore("--gold", "g.jsonl", "--corpus", name, "--trace", "texts.jsonl", "--metrics",
                       "grounding,retrieval", "--no-fail").json()
        assert doc["metrics"] == plain, name
        assert doc["inputs"]["corpus"]["sha256"] == hashlib.sha256(body).hexdigest()  # of the content, decompressed


def test_a_part_keeps_only_the_passages_its_traces_use(corpus_run):
    keep = load_corpus(InputFile(str(corpus_run / "corpus.jsonl")), {"d2"}, {text_key("it rained ALL week in basel.")})
    assert keep.texts == {"d2": "Acme was founded by Jane Roe in 1999."}
    assert list(keep.ids.values()) == ["d3"]  # by its text without the title
    everything = load_corpus(InputFile(str(corpus_run / "corpus.jsonl")), None, None)
    assert set(everything.texts) == {"d1", "d2", "d3"} and everything.texts["d1"].startswith("Annual report\nRevenue")
    assert everything.use.documents == 3


def test_entry_texts_are_read_from_the_retrieved_objects():
    assert entry_texts({"retrieved_chunks": ["a", "b"]}) == ["a", "b"]
    assert entry_texts({"retrieved_ids": [{"id": "x", "text": "a"}, "y", {"id": "z", "content": "c"}]}) == [
        "a", None, "c"]
    assert entry_texts({"chunks": [{"id": "x", "page_content": "a"}]}) == ["a"]
    assert entry_texts({"retrieved_ids": ["x", "y"]}) == []


def test_jobs_partials_standard_input_and_the_api_agree(ragscore, corpus_run, monkeypatch):
    import io
    import sys

    whole = ragscore(*ARGS, "--trace", "texts.jsonl")
    assert ragscore(*ARGS, "--trace", "texts.jsonl", "--jobs", "2").out == whole.out
    for part in (1, 2):
        assert ragscore("partial", *ARGS[:-1], "--trace", "texts.jsonl", "--part", f"{part}/2", "-o",
                        f"p{part}.json").status == 0
    merged = ragscore("merge", "p1.json", "p2.json", "--no-fail")
    assert merged.json()["metrics"] == whole.json()["metrics"] and merged.err == whole.err
    assert merged.json()["inputs"]["corpus"] == whole.json()["inputs"]["corpus"]
    # Traces from standard input are read once: the whole corpus is kept, and the numbers are the same.
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((corpus_run / "texts.jsonl").read_bytes())))
    assert ragscore(*ARGS, "--trace", "-").json()["metrics"] == whole.json()["metrics"]
    assert _api_run(corpus_run).metrics == whole.json()["metrics"]


def _api_run(folder):
    """The Python API, which takes the corpus as a keyword setting (the module: ``ragscore`` is a fixture in tests)."""
    return ragscore.score(str(folder / "g.jsonl"), str(folder / "texts.jsonl"), corpus=folder / "corpus.jsonl",
                          metrics=["grounding", "retrieval"])


def test_compare_reads_both_runs_with_the_corpus(ragscore, corpus_run):
    doc = json.loads(ragscore("compare", "--gold", "g.jsonl", "--trace", "texts.jsonl", "--baseline", "ids.jsonl",
                              "--corpus", "corpus.jsonl", "--metrics", "grounding,retrieval", "--no-fail").out)
    assert doc["inputs"]["corpus"]["documents"] == 3
    assert doc["metrics"]["recall@1"]["baseline"] == doc["metrics"]["recall@1"]["candidate"] == 1.0


@pytest.mark.parametrize(("lines", "error"), [
    ([{"_id": "d1", "text": "a"}, {"_id": "d1", "text": "b"}],
     'c.jsonl:2:9: duplicate id "d1" (first at line 1): each passage needs its own id'),
    ([{"_id": "d1", "text": "a"}, {"title": "t", "text": "b"}],
     'c.jsonl:2:1: expected an id: "_id" (BEIR), "id" or "doc_id"'),
    ([{"_id": "d1", "text": 5}], 'c.jsonl:1:23: expected "text" to be a string, got 5'),
    ([{"_id": "d1", "body": "x"}], 'c.jsonl:1:1: expected a text: "text" (BEIR), "contents" or "page_content"'),
    ('["d1", "a"]\n', "c.jsonl:1:1: expected a JSON object (a passage with an id and a text), got an array"),
])
def test_a_bad_corpus_line_is_an_error_at_its_line_and_writes_no_report(ragscore, corpus_run, lines, error):
    write(corpus_run / "c.jsonl", lines)
    run = ragscore("--gold", "g.jsonl", "--trace", "ids.jsonl", "--corpus", "c.jsonl", "--metrics", "grounding",
                   "--json", "report.json")
    assert (run.status, run.err.strip()) == (2, f"ragscore: error: {error}")
    assert not (corpus_run / "report.json").exists()


def test_a_duplicate_id_no_trace_uses_is_not_looked_for(ragscore, corpus_run):
    write(corpus_run / "c.jsonl", [*CORPUS, CORPUS[2]])  # d3 twice; ids.jsonl uses it, texts.jsonl does not
    assert ragscore(*ARGS[:3], "c.jsonl", *ARGS[4:], "--trace", "texts.jsonl").status == 0
    assert "duplicate id \"d3\"" in ragscore(*ARGS[:3], "c.jsonl", *ARGS[4:], "--trace", "ids.jsonl").err


def test_inputs_corpus_in_a_settings_file_is_relative_to_its_folder(ragscore, corpus_run):
    (corpus_run / "conf").mkdir()
    (corpus_run / "conf" / "gates.toml").write_text('[inputs]\ncorpus = "../corpus.jsonl"\n', encoding="utf-8")
    doc = ragscore("--gold", "g.jsonl", "--trace", "ids.jsonl", "--gates-file", "conf/gates.toml", "--metrics",
                   "grounding", "--no-fail").json()
    assert doc["inputs"]["corpus"]["path"] == "corpus.jsonl"
    (corpus_run / "gates.toml").write_text('[inputs]\ncorpsu = "corpus.jsonl"\n', encoding="utf-8")
    run = ragscore("--gold", "g.jsonl", "--trace", "ids.jsonl")
    assert run.status == 2 and run.err == ('ragscore: error: gates.toml:2: [inputs] unknown setting "corpsu"; did you '
                                           'mean "corpus"? (the gold set and the traces are named on the command '
                                           'line)\n')
