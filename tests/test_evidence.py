"""The evidence family (issue 35): gold evidence as spans of documents, counted in characters.

Every metric against a brute-force reference that marks characters; gold_spans read and checked; a trace's
retrieved entries read as spans in each shape that writes them; chunk ids through --chunks; one corpus chunked
three ways scoring the same; the family on by itself when the gold file holds spans; a span past its document's
end an error at the gold line.
"""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import DATA, write
from ragscore.errors import InputError
from ragscore.loaders.chunks import Chunk, ChunkIndex, entry_span, trace_spans
from ragscore.loaders.gold import KEEP_SPANS, has_spans, parse_gold_item_checked
from ragscore.metrics import METRICS
from ragscore.metrics.spans import evidence_row

DOCUMENTS = ("a", "b")
CUTOFFS = (1, 2, 3, 5)


def _span(size: int = 30):
    return st.tuples(st.sampled_from(DOCUMENTS), st.integers(0, size), st.integers(0, size)).map(
        lambda t: (t[0], min(t[1], t[2]), max(t[1], t[2])))


def _chars(spans) -> set[tuple[str, int]]:
    return {(doc, i) for doc, start, end in spans for i in range(start, end)}


def _reference(gold, ranked, cited, cutoffs):
    """Each metric by its definition, on sets of characters."""
    g = _chars(gold)
    if not g:
        return None
    rows: dict[str, list[float]] = {"recall": [], "precision": [], "iou": [], "hit": []}
    for k in cutoffs:
        r = _chars([s for s in ranked[:k] if s is not None])
        rows["recall"].append(len(g & r) / len(g))
        rows["precision"].append(len(g & r) / len(r) if r else 0.0)
        rows["iou"].append(len(g & r) / len(g | r))
        rows["hit"].append(1.0 if g & r else 0.0)
    c = _chars(cited)
    return (*rows["recall"], *rows["precision"], *rows["iou"], *rows["hit"], len(g & c) / len(g),
            len(g & c) / len(c) if c else 0.0)


@given(st.lists(_span(), max_size=4), st.lists(st.none() | _span(), max_size=8), st.lists(_span(), max_size=3))
@settings(max_examples=3000, deadline=None)
def test_every_metric_counts_characters_as_the_reference_does(gold, ranked, cited):
    got = evidence_row(gold, ranked, cited, CUTOFFS)
    want = _reference(gold, ranked, cited, CUTOFFS)
    if want is None:
        assert got is None
    else:
        assert got == pytest.approx(want, abs=1e-12)
        assert len(got) == len(METRICS.names("evidence", CUTOFFS))


def test_empty_documents_and_spans_at_the_ends():
    gold = [("a", 0, 0), ("b", 0, 5)]  # an empty document's only span holds nothing
    assert evidence_row(gold, [("b", 4, 5), ("a", 0, 0), ("b", 0, 1)], [], (1, 3)) == (
        0.2, 0.4, 1.0, 1.0, 0.2, 0.4, 1.0, 1.0, 0.0, 0.0)
    assert evidence_row([("a", 0, 0)], [("a", 0, 10)], [], (1,)) is None


# -- gold_spans as the gold loader reads them --

def _item(spans: object):
    obj = {"qid": "q", "answerable": True, "gold_spans": spans}
    return parse_gold_item_checked(obj, "gold.jsonl", 3, 1, json.dumps(obj), frozenset({KEEP_SPANS}))


def test_gold_spans_are_read_with_their_grades():
    item = _item([{"doc": "d", "start": 0, "end": 5}, {"doc": 7, "start": 2, "end": 2, "grade": 3}])
    assert item.spans == (("d", 0, 5, 1), ("7", 2, 2, 3))


@pytest.mark.parametrize(("spans", "message"), [
    ({"doc": "d"}, 'expected "gold_spans" to be a list'),
    (["d"], 'expected "gold_spans" entry 1 to be an object'),
    ([{"doc": "d", "start": 0, "ned": 5}], 'unknown key "ned" in "gold_spans" entry 1; did you mean "end"?'),
    ([{"start": 0, "end": 5}], 'expected "gold_spans" entry 1 to name its document'),
    ([{"doc": "", "start": 0, "end": 5}], "to name its document"),
    ([{"doc": "d", "start": -1, "end": 5}], 'expected "start" of "gold_spans" entry 1 to be a character offset'),
    ([{"doc": "d", "start": 0, "end": 5.0}], 'expected "end" of "gold_spans" entry 1 to be a character offset'),
    ([{"doc": "d", "start": 0, "end": 5}, {"doc": "d", "start": 6, "end": 5}],
     "expected \"gold_spans\" entry 2 to end where it starts or after (end is exclusive), got start 6 and end 5"),
    ([{"doc": "d", "start": 0, "end": 5, "grade": 0}], 'expected "grade" of "gold_spans" entry 1 to be a positive'),
    ([{"doc": "d", "start": 0, "end": 5, "grade": True}], 'expected "grade"'),
])
def test_a_malformed_gold_span_is_an_error_at_its_line(spans, message):
    with pytest.raises(InputError) as caught:
        _item(spans)
    assert caught.value.line == 3 and message in caught.value.message


# -- a trace's retrieved entries as spans --

def test_each_shape_that_writes_offsets_is_read_as_a_span():
    assert entry_span({"id": "c1", "doc": "d", "start": 3, "end": 9}) == ("d", 3, 9)
    assert entry_span({"doc_id": 4, "start": 0, "end": 0}) == ("4", 0, 0)
    langchain = {"id": None, "metadata": {"source": "fr.txt", "start_index": 44}, "page_content": "museums.",
                 "type": "Document"}
    assert entry_span(langchain) == ("fr.txt", 44, 52)
    assert entry_span({**langchain, "metadata": {"source": "fr.txt", "id": "chunk-1", "start_index": 0}}) == (
        "fr.txt", 0, 8)  # metadata.id is the chunk's own id in the langchain preset
    assert entry_span({**langchain, "metadata": {"id": "doc-1", "start_index": 0}}) == ("doc-1", 0, 8)
    assert entry_span({**langchain, "metadata": {"source": "fr.txt", "start_index": -1}}) is None  # not found
    for entry in ("c1", {"id": "c1"}, {"doc": "d", "start": 5, "end": 2}, {"doc": "d", "start": 1}, None,
                  {"metadata": {"start_index": 0}, "page_content": "x"}):
        assert entry_span(entry) is None


def test_llama_index_nodes_are_spans_of_their_source_document():
    lines = (DATA / "llamaindex" / "responses.jsonl").read_text(encoding="utf-8").splitlines()
    nodes = [node for line in lines for node in json.loads(line)["source_nodes"]]
    assert nodes
    for node in nodes:
        inner = node["node"]
        assert entry_span(node) == (inner["relationships"]["1"]["node_id"], inner["start_char_idx"],
                                    inner["end_char_idx"])


def test_chunk_ids_are_spans_through_the_chunking_and_citations_name_entries_or_chunks():
    index = ChunkIndex([Chunk("k1", "d", 0, 10), Chunk("k2", "d", 10, 20), Chunk("k3", "e", 0, 4)])
    entries = [{"id": "own", "doc": "x", "start": 0, "end": 3}, "k2", "gone"]
    ranked, cited = trace_spans(entries, ("own", "k2", "gone"), ("k2", "own", "k3", "nothing"), index)
    assert ranked == [("x", 0, 3), ("d", 10, 20), None]
    assert cited == [("d", 10, 20), ("x", 0, 3), ("e", 0, 4)]
    assert trace_spans(None, (), ("k1",), None) == ([], [])


# -- end to end --

TEXT = ("Refunds are issued within 30 days. Shipping is free over 50 euros. Returns need a receipt. "
        "Gift cards never expire. Support answers within a day. ") * 4


def _chunkings() -> dict[str, list[tuple[int, int]]]:
    n = len(TEXT)
    fixed = [(s, min(s + 64, n)) for s in range(0, n, 64)]
    windows = [(s, min(s + 96, n)) for s in range(0, n, 48)]
    sentences, start = [], 0
    while start < n:
        end = TEXT.find(". ", start)
        end = n if end < 0 else end + 2
        sentences.append((start, end))
        start = end
    return {"fixed": fixed, "windows": windows, "sentences": sentences}


def test_one_corpus_chunked_three_ways_scores_the_same_recall(tmp_path, ragscore):
    """The same evidence retrieved under each chunking (the chunks that hold any of it, first, then the rest in
    order) gives the same evidence_recall@K wherever the top K hold the whole of it, and evidence_hit@K alike."""
    evidence = {"q1": [(35, 67)], "q2": [(92, 115), (300, 330)], "q3": [(0, 5)]}
    gold = write(tmp_path / "gold.jsonl", [
        {"qid": q, "answerable": True, "gold_claim_substr": ["x" * 8],
         "gold_spans": [{"doc": "policy", "start": s, "end": e} for s, e in spans]} for q, spans in evidence.items()])
    seen = set()
    for name, chunks in _chunkings().items():
        ids = {f"{name}-{i}": span for i, span in enumerate(chunks)}
        write(tmp_path / f"{name}.jsonl", [{"id": i, "doc": "policy", "start": s, "end": e} for i, (s, e) in ids.items()])
        traces = []
        for q, spans in evidence.items():
            holding = [i for i, (s, e) in ids.items() if any(s < ge and gs < e for gs, ge in spans)]
            traces.append({"qid": q, "answer": "x", "retrieved_ids": holding + [i for i in ids if i not in holding],
                           "citations": holding})
        write(tmp_path / f"trace-{name}.jsonl", traces)
        run = ragscore("--gold", gold, "--trace", tmp_path / f"trace-{name}.jsonl", "--chunks",
                       tmp_path / f"{name}.jsonl", "--cutoffs", "3,10", "--format", "json", "--no-fail")
        metrics = run.json()["metrics"]
        assert run.json()["settings"]["metrics"] == ["answer", "evidence"]
        seen.add((metrics["evidence_recall@10"], metrics["evidence_hit@3"], metrics["cited_evidence_recall"]))
    assert seen == {(1.0, 1.0, 1.0)}


def test_the_family_turns_on_by_itself_only_when_the_gold_file_has_spans(tmp_path, ragscore):
    plain = write(tmp_path / "plain.jsonl", [{"qid": "q", "answerable": True, "gold_claim_substr": ["x" * 8],
                                             "question": 'what is "gold_spans"?'}])
    spans = {"qid": "q", "answerable": True, "gold_claim_substr": ["x" * 8],
             "gold_spans": [{"doc": "d", "start": 0, "end": 4}]}
    (tmp_path / "spans.jsonl.gz").write_bytes(gzip.compress((json.dumps(spans) + "\n").encode()))
    assert not has_spans(str(plain)) and has_spans(str(tmp_path / "spans.jsonl.gz"))
    assert has_spans(str(plain), (("gold_spans", "evidence"),))
    trace = write(tmp_path / "trace.jsonl", [{"qid": "q", "answer": "x", "retrieved_ids": [
        {"id": "c", "doc": "d", "start": 2, "end": 8}]}])
    for gold, families in ((plain, ["answer"]), (tmp_path / "spans.jsonl.gz", ["answer", "evidence"])):
        report = ragscore("--gold", gold, "--trace", trace, "--format", "json", "--no-fail").json()
        assert report["settings"]["metrics"] == families
    report = ragscore("--gold", tmp_path / "spans.jsonl.gz", "--trace", trace, "--format", "json",
                      "--no-fail").json()
    assert report["metrics"]["evidence_recall@1"] == 0.5 and report["metrics"]["evidence_precision@1"] == 2 / 6


def test_a_gold_span_past_its_documents_end_is_an_error_at_the_gold_line(tmp_path, ragscore):
    corpus = write(tmp_path / "corpus.jsonl", [{"_id": "d", "title": "A title", "text": "0123456789"}])
    gold = write(tmp_path / "gold.jsonl", [
        {"qid": "q1", "answerable": True, "gold_claim_substr": ["x" * 8],
         "gold_spans": [{"doc": "d", "start": 0, "end": 10}]},
        {"qid": "q2", "answerable": True, "gold_claim_substr": ["x" * 8],
         "gold_spans": [{"doc": "d", "start": 5, "end": 11}]}])
    trace = write(tmp_path / "trace.jsonl", [{"qid": "q1", "answer": "x", "retrieved_ids": ["d"]}])
    out = tmp_path / "report.json"
    run = ragscore("--gold", gold, "--trace", trace, "--corpus", corpus, "--json", out)
    assert run.status == 2 and not out.exists()
    assert run.err.strip().splitlines()[-1] == (
        f'ragscore: error: {gold}:2:1: "gold_spans" entry 1 ends at 11, past the end of document "d" '
        "(10 characters)")
    write(gold, [{"qid": "q1", "answerable": True, "gold_claim_substr": ["x" * 8],
                  "gold_spans": [{"doc": "e", "start": 0, "end": 1}]}])
    run = ragscore("--gold", gold, "--trace", trace, "--corpus", corpus)
    assert run.status == 2 and 'gold.jsonl:1:1: document "e" of "gold_spans" entry 1 is not in the corpus' in run.err


def test_a_bad_chunks_file_is_an_error_at_its_line(tmp_path, ragscore):
    gold = write(tmp_path / "gold.jsonl", [{"qid": "q", "answerable": True, "gold_claim_substr": ["x" * 8],
                                            "gold_spans": [{"doc": "d", "start": 0, "end": 4}]}])
    trace = write(tmp_path / "trace.jsonl", [{"qid": "q", "answer": "x", "retrieved_ids": ["c"]}])
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text('{"id": "c", "doc": "d", "start": 0, "end": 4}\n{"id": "c", "doc": "d", "start": 4, '
                      '"end": 8}\n', encoding="utf-8")
    run = ragscore("--gold", gold, "--trace", trace, "--chunks", chunks)
    assert run.status == 2 and 'chunks.jsonl:2:8: duplicate chunk id "c" (first at line 1)' in run.err
    chunks.write_text('{"id": "c", "doc": "d", "start": 0, "edn": 4}\n', encoding="utf-8")
    run = ragscore("--gold", gold, "--trace", trace, "--chunks", chunks)
    assert run.status == 2 and 'unknown key "edn" in a chunk; did you mean "end"?' in run.err


def test_langchain_text_splitter_output_is_read_as_spans_with_no_glue(tmp_path, ragscore):
    """Chunks as RecursiveCharacterTextSplitter(add_start_index=True) writes them, logged by a LangChain chain as
    Document.model_dump(): no chunk id, the document in metadata.source, the offset in metadata.start_index."""
    splitters = pytest.importorskip("langchain_text_splitters")
    from langchain_core.documents import Document

    texts = {"refunds.md": TEXT, "shipping.md": TEXT[::-1]}
    splitter = splitters.RecursiveCharacterTextSplitter(chunk_size=80, chunk_overlap=20, add_start_index=True)
    chunks = splitter.split_documents([Document(page_content=t, metadata={"source": s}) for s, t in texts.items()])
    assert all(texts[c.metadata["source"]][c.metadata["start_index"]:].startswith(c.page_content) for c in chunks)
    gold_spans = {"q1": ("refunds.md", 35, 67), "q2": ("shipping.md", 100, 180)}
    gold = write(tmp_path / "gold.jsonl", [
        {"qid": q, "answerable": True, "gold_claim_substr": ["x" * 8], "gold_spans": [
            {"doc": d, "start": s, "end": e}]} for q, (d, s, e) in gold_spans.items()])
    traces, want = [], {}
    for q, (d, s, e) in gold_spans.items():
        retrieved = [c for c in chunks if c.metadata["source"] == d][:4]
        traces.append({"qid": q, "question": q, "context": [c.model_dump() for c in retrieved], "answer": "x"})
        spans = [(d, c.metadata["start_index"], c.metadata["start_index"] + len(c.page_content)) for c in retrieved]
        want[q] = evidence_row([(d, s, e)], spans, [], (1, 3))
    trace = write(tmp_path / "trace.jsonl", traces)
    report = ragscore("--gold", gold, "--trace", trace, "--cutoffs", "1,3", "--format", "json",
                      "--no-fail").json()
    assert report["settings"]["trace_format"] == "langchain"
    names = METRICS.names("evidence", (1, 3))
    mean = [sum(w[i] for w in want.values()) / 2 for i in range(len(names))]
    assert [report["metrics"][n] for n in names] == pytest.approx(mean, abs=1e-12)
    assert report["metrics"]["evidence_recall@3"] > 0


def test_compare_says_when_the_baseline_report_read_another_corpus(tmp_path, ragscore):
    gold = write(tmp_path / "gold.jsonl", [
        {"qid": "q", "answerable": True, "gold_claim_substr": ["x" * 8], "gold_citations": ["d"],
         "gold_spans": [{"doc": "d", "start": 0, "end": 4}]}])
    trace = write(tmp_path / "trace.jsonl", [{"qid": "q", "answer": "x" * 8, "citations": ["d"], "retrieved_ids": [
        {"id": "d", "doc": "d", "start": 0, "end": 8}]}])
    corpus = write(tmp_path / "corpus.jsonl", [{"id": "d", "text": "0123456789"}])
    baseline = tmp_path / "baseline.json"
    assert ragscore("--gold", gold, "--trace", trace, "--corpus", corpus, "--json", baseline,
                    "--per-question").status == 0
    same = ragscore("compare", "--gold", gold, "--baseline-report", baseline, "--trace", trace, "--corpus", corpus)
    assert same.status == 0 and "different corpora" not in same.err
    write(corpus, [{"id": "d", "text": "0123456789, again"}])
    worse = write(tmp_path / "worse.jsonl", [{"qid": "q", "answer": "x" * 8, "citations": ["d"], "retrieved_ids": [
        {"id": "d", "doc": "d", "start": 0, "end": 16}]}])
    write(tmp_path / "gates.toml", "[regression]\n\"evidence_precision@1\" = 0.01\n")
    other = ragscore("compare", "--gold", gold, "--baseline-report", baseline, "--trace", worse, "--corpus", corpus,
                     "--gates-file", tmp_path / "gates.toml")
    assert other.status == 1 and "the runs used different corpora: the baseline's " in other.err
    assert "REGRESSION evidence_precision@1: worse by 0.2500 (allowed 0.01) (the corpora differ)" in other.err
    none = ragscore("compare", "--gold", gold, "--baseline-report", baseline, "--trace", trace)
    assert "the candidate's none" in none.err


def test_parts_and_processes_give_the_one_process_report(tmp_path, ragscore, monkeypatch):
    """The family in partials merged, and with --jobs 2, as in one process (byte for byte but for the inputs)."""
    import random

    monkeypatch.chdir(tmp_path)
    rng = random.Random(35)
    gold, traces, chunks = [], [], []
    for d in range(5):
        chunks += [{"id": f"d{d}-{s}", "doc": f"d{d}", "start": s, "end": s + 80} for s in range(0, 800, 40)]
    for q in range(60):
        doc, start = f"d{rng.randrange(5)}", rng.randrange(700)
        gold.append({"qid": f"q{q}", "answerable": q % 7 != 0, "gold_claim_substr": ["answer"],
                     "gold_spans": [{"doc": doc, "start": start, "end": start + rng.randrange(1, 100)}]})
        ids = rng.sample([c["id"] for c in chunks], 6)
        traces.append({"qid": f"q{q}", "answer": "the answer", "retrieved_ids": ids, "citations": ids[:2]})
    write(tmp_path / "gold.jsonl", gold)
    write(tmp_path / "trace.jsonl", traces)
    write(tmp_path / "chunks.jsonl", chunks)
    common = ("--gold", "gold.jsonl", "--trace", "trace.jsonl", "--chunks", "chunks.jsonl", "--metrics", "retrieval")
    one = ragscore(*common, "--format", "json", "--jobs", "1", "--no-fail").json()
    two = ragscore(*common, "--format", "json", "--jobs", "2", "--no-fail").json()
    for index in (1, 2):
        assert ragscore("partial", *common, "--part", f"{index}/2", "-o", f"p{index}.json").status == 0
    merged = ragscore("merge", "p2.json", "p1.json", "--format", "json", "--no-fail").json()
    assert one["metrics"]["evidence_recall@5"] is not None and one["metrics"]["ndcg@10"] is not None
    for report in (two, merged):
        assert report["metrics"] == one["metrics"] and report["intervals"] == one["intervals"]


def _relevant_by_definition(gold, chunks, min_overlap):
    """The qrels rule, chunk by chunk over every chunk, on sets of characters."""
    gold_chars = _chars([(d, s, e) for d, s, e, _ in gold])
    out = {}
    for chunk in chunks:
        mine = _chars([(chunk.doc, chunk.start, chunk.end)])
        shared = len(mine & gold_chars)
        if not shared:
            continue
        overlaps = [(len(mine & _chars([(d, s, e)])), g, s, e) for d, s, e, g in gold if d == chunk.doc]
        whole = any(e > s and chunk.start <= s and e <= chunk.end and n for n, _, s, e in overlaps)
        if (shared >= min_overlap) if min_overlap is not None else (2 * shared >= len(mine) or whole):
            out[chunk.id] = max((n, g) for n, g, s, e in overlaps if n)[1]
    return out


@given(st.lists(st.tuples(_span(), st.integers(1, 3)).map(lambda t: (*t[0], t[1])), max_size=4),
       st.lists(_span(), min_size=1, max_size=10), st.none() | st.integers(1, 20))
@settings(max_examples=2000, deadline=None)
def test_the_qrels_rule_judges_every_chunk_as_its_definition_does(gold, spans, min_overlap):
    chunks = [Chunk(f"c{i}", *span) for i, span in enumerate(spans)]
    from ragscore.metrics.spans import relevant_chunks

    assert relevant_chunks(gold, ChunkIndex(chunks), min_overlap) == _relevant_by_definition(gold, chunks,
                                                                                               min_overlap)


def test_a_retrieved_list_read_as_nothing_retrieved_covers_nothing(tmp_path, ragscore):
    """An entry that gives no id (nor a span) makes the list read as nothing retrieved, as the note says and the
    other metrics count it: its other entries' spans cover nothing either."""
    gold = write(tmp_path / "gold.jsonl", [{"qid": "q", "answerable": True, "gold_claim_substr": ["x" * 8],
                                            "gold_spans": [{"doc": "d", "start": 0, "end": 4}]}])
    trace = write(tmp_path / "trace.jsonl", [{"qid": "q", "answer": "x", "retrieved_ids": [
        {"doc": "d", "start": 0, "end": 4}, {"text": "no id, no span"}]}])
    run = ragscore("--gold", gold, "--trace", trace, "--format", "json", "--no-fail")
    report = run.json()
    assert report["counts"]["unreadable_retrieved"] == 1 and "read as nothing retrieved" in run.err
    assert report["metrics"]["evidence_recall@10"] == 0.0 and report["metrics"]["evidence_hit@10"] == 0.0


def test_a_chunking_from_standard_input_is_refused_as_a_corpus_is(tmp_path, ragscore, monkeypatch):
    """Every part of a run reads the chunking (--jobs 2 here): standard input would give the first part all of it and
    the others nothing ("no chunks"), so it is refused with the reason, whatever the number of parts."""
    import io

    gold = write(tmp_path / "gold.jsonl", [{"qid": f"q{i}", "answerable": True, "gold_claim_substr": ["x" * 8],
                                            "gold_spans": [{"doc": "d", "start": 0, "end": 4}]} for i in range(8)])
    trace = write(tmp_path / "trace.jsonl", [{"qid": f"q{i}", "answer": "x", "retrieved_ids": ["c"]}
                                             for i in range(8)])
    chunks = '{"id": "c", "doc": "d", "start": 0, "end": 4}\n'
    for jobs in ("1", "2"):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(chunks.encode())))
        run = ragscore("--gold", gold, "--trace", trace, "--chunks", "-", "--jobs", jobs, "--no-fail")
        assert run.status == 2 and "a chunking is read by every part of a run" in run.err, run.err
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(chunks.encode())))
    assert ragscore("qrels", "--gold", gold, "--chunks", "-", "-o", tmp_path / "q.txt").status == 0  # read once


def test_the_chunking_is_an_input_of_the_report_of_its_parts_and_of_compare(tmp_path, ragscore, monkeypatch):
    """--chunks changes what the evidence and retrieval metrics count, as --corpus does: the report names it under
    inputs.chunks (path, sha256, chunks), merge refuses parts made with another chunking or none, and compare says
    when a baseline report was made with another one."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "gold.jsonl", [{"qid": f"q{i}", "answerable": True, "gold_claim_substr": ["x" * 8],
                                     "gold_spans": [{"doc": "d", "start": 0, "end": 4}]} for i in range(6)])
    write(tmp_path / "trace.jsonl", [{"qid": f"q{i}", "answer": "x", "retrieved_ids": ["c"]} for i in range(6)])
    write(tmp_path / "chunks.jsonl", [{"id": "c", "doc": "d", "start": 0, "end": 8}])
    common = ("--gold", "gold.jsonl", "--trace", "trace.jsonl")
    report = ragscore(*common, "--chunks", "chunks.jsonl", "--format", "json", "--per-question", "--json",
                      "base.json", "--no-fail").json()
    assert report["inputs"]["chunks"]["path"] == "chunks.jsonl" and report["inputs"]["chunks"]["chunks"] == 1
    assert len(report["inputs"]["chunks"]["sha256"]) == 64  # and the report meets its schema (Run.json checks)
    assert "chunks" not in ragscore(*common, "--format", "json", "--no-fail").json()["inputs"]

    assert ragscore("partial", *common, "--chunks", "chunks.jsonl", "--part", "1/2", "-o", "p1.json").status == 0
    assert ragscore("partial", *common, "--part", "2/2", "-o", "p2.json").status == 0
    mixed = ragscore("merge", "p1.json", "p2.json", "--no-fail")
    assert mixed.status == 2 and "one read a --chunks, the other none" in mixed.err
    assert ragscore("partial", *common, "--chunks", "chunks.jsonl", "--part", "2/2", "-o", "p2.json").status == 0
    merged = ragscore("merge", "p1.json", "p2.json", "--format", "json", "--no-fail").json()
    assert merged["inputs"]["chunks"] == report["inputs"]["chunks"] and merged["metrics"] == report["metrics"]

    same = ragscore("compare", *common, "--chunks", "chunks.jsonl", "--baseline-report", "base.json")
    assert same.status == 0 and "chunkings" not in same.err
    assert json.loads(same.out)["inputs"]["chunks"] == report["inputs"]["chunks"]
    other = ragscore("compare", *common, "--baseline-report", "base.json", "--no-fail")
    assert ("the runs used different chunkings (--chunks): the baseline's \"chunks.jsonl\" (sha256 "
            f"{report['inputs']['chunks']['sha256'][:12]}, 1 chunks), the candidate's none") in other.err


def test_the_word_gold_spans_as_a_value_does_not_turn_the_family_on(tmp_path):
    """Only the key (with its colon) says a gold set holds spans: a tag or a question that ends in "gold_spans" is
    a value, and a key cut by the blocks the file is searched in is still found."""
    tagged = write(tmp_path / "tagged.jsonl", [{"qid": "q", "answerable": True, "gold_claim_substr": ["x" * 8],
                                                "tags": ["gold_spans"], "question": 'what is "gold_spans'}])
    assert b'"gold_spans"' in tagged.read_bytes() and not has_spans(str(tagged))
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text('{"qid": "q", "answerable": true, "gold_spans" : [{"doc": "d", "start": 0, "end": 4}]}\n',
                      encoding="utf-8")
    assert has_spans(str(spaced))
    line = json.dumps({"qid": "q", "answerable": True, "gold_spans": [{"doc": "d", "start": 0, "end": 4}]})
    for cut in range(-16, 4):  # the key and its colon across the first 1 MiB block's end
        padding = (1 << 20) - line.index('"gold_spans"') + cut - 1
        cut_file = tmp_path / "cut.jsonl"
        cut_file.write_text(" " * padding + "\n" + line + "\n", encoding="utf-8")
        assert has_spans(str(cut_file)), cut


@pytest.mark.parametrize("command", ["score", "partial", "compare"])
def test_the_help_of_metrics_names_every_family(command, ragscore):
    import re

    from ragscore.metrics.families import FAMILIES

    run = ragscore(command, "--help")
    assert run.status == 0
    described = " ".join(re.search(r"\n  --metrics FAMILIES(.*?)\n  -", run.out, re.S).group(1).split())
    assert [name for name in FAMILIES if name not in described] == []


@given(st.lists(_span(200), max_size=30), _span(200))
@settings(max_examples=1000, deadline=None)
def test_the_chunks_overlapping_a_span_are_those_that_share_a_character(spans, query):
    chunks = [Chunk(f"c{i}", *span) for i, span in enumerate(spans)]
    doc, start, end = query
    want = sorted((c for c in chunks if c.doc == doc and _chars([c[1:]]) & _chars([query])),
                  key=lambda c: (c.start, c.end, c.id))
    assert ChunkIndex(chunks).overlapping(doc, start, end) == want


def test_one_long_chunk_does_not_make_every_search_walk_a_document():
    """A chunking with a whole-document chunk beside 200,000 short ones (parents and children): each search looks
    at the chunks near the span, not at every chunk that starts before it (seconds for a few thousand questions)."""
    import time

    chunks = [Chunk(f"c{i}", "d", i * 400, i * 400 + 512) for i in range(200_000)]
    index = ChunkIndex([*chunks, Chunk("whole", "d", 0, 200_000 * 400 + 512)])
    began = time.perf_counter()
    for start in range(0, 80_000_000, 40_000):  # 2,000 searches
        assert len(index.overlapping("d", start, start + 100)) in (2, 3)
    assert time.perf_counter() - began < 1.0  # milliseconds; seconds when each search walked the chunks before it
