"""Provider citations (issue 34): the citations in a model provider's own response, read from the shapes
its SDK dumps and judged against the trace's passages and the answer.

The fixtures in tests/data/providers/ were built with the providers' SDK types (anthropic, openai,
google-genai, cohere; Bedrock's Converse response checked against botocore's service model) by
make_provider_examples.py, next to them; ``EXPECTED`` holds each citation's verdict, derived by hand from
how each one was made (at its offsets, its offsets shifted, the wrong document, a document not retrieved).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA, write
from ragscore.loaders.provider_responses import (
    NOT_PLACED,
    Location,
    ProviderCitation,
    cited_ids,
    provider_response,
)
from ragscore.loaders.trace import Cites, parse_trace
from ragscore.metrics.provider_citations import (
    INVALID,
    MISPLACED,
    UNCHECKED,
    VALID,
    judge,
    judge_response,
    provider_counts,
)

PROVIDERS = DATA / "providers"
TRACES = [json.loads(line) for line in (PROVIDERS / "traces.jsonl").read_text(encoding="utf-8").splitlines()]
BY_QID = {t["qid"]: t for t in TRACES}

# qid: the provider, then each citation's (verdict, retrieved), in the response's order.
EXPECTED = {
    # the first cites the first sentence of d1 at 0-49, the second all of d3
    "anthropic-valid": ("anthropic", [(VALID, True), (VALID, True)]),
    # the same sentence, its offsets 7 characters on: the text is in d1, at 0-49
    "anthropic-shifted": ("anthropic", [(MISPLACED, True)]),
    # d1's sentence said to be in document 1 (d2)
    "anthropic-wrong-document": ("anthropic", [(INVALID, True)]),
    # document 3 (three were retrieved): no text to check it against; then a page_location of d2 whose text
    # is in d2 (pages have no character offsets: in the document is all it says)
    "anthropic-not-retrieved": ("anthropic", [(UNCHECKED, False), (VALID, True)]),
    # a URL citation quotes nothing: only its answer offsets are checked (inside the answer)
    "openai-url-citation": ("openai", [(UNCHECKED, True)]),
    # a URL not retrieved whose answer offsets run past the answer; a file citation, not retrieved
    "openai-off-the-answer": ("openai", [(INVALID, False), (UNCHECKED, False)]),
    # byte offsets past an em dash (3 bytes, 1 character); each chunk's text is its passage
    "gemini-valid": ("gemini", [(VALID, True), (VALID, True)]),
    # the segment's offsets written in characters: 2 short of its bytes, so the text there is another
    "gemini-character-offsets": ("gemini", [(MISPLACED, True)]),
    # the REST JSON as text; chunk 1 holds d1's text, the trace's passage 1 is d2
    "gemini-wrong-document": ("gemini", [(INVALID, True)]),
    "cohere-valid": ("cohere", [(VALID, True)]),
    # start and end 4 characters on
    "cohere-shifted": ("cohere", [(MISPLACED, True)]),
    # d9 was not retrieved; doc:1 is Cohere's own id for the second document (d2)
    "cohere-not-retrieved": ("cohere", [(VALID, False), (VALID, True)]),
    "cohere-v1": ("cohere", [(VALID, True)]),
    "bedrock-valid": ("bedrock", [(VALID, True)]),
    "bedrock-shifted": ("bedrock", [(MISPLACED, True)]),
    "bedrock-wrong-document": ("bedrock", [(INVALID, True)]),
    "bedrock-page": ("bedrock", [(VALID, True)]),
}


def judged(trace: dict) -> list[tuple[str, bool]]:
    response = provider_response(trace)
    assert response is not None
    return [(j.verdict, j.retrieved) for j in judge_response(response, trace["retrieved_ids"],
                                                              trace["retrieved_chunks"])]


@pytest.mark.parametrize("qid", list(EXPECTED))
def test_each_fixture_citation_gets_its_hand_derived_verdict(qid):
    trace = BY_QID[qid]
    response = provider_response(trace)
    assert response is not None
    provider, verdicts = EXPECTED[qid]
    assert response.provider == provider
    assert response.answer == trace["answer"]  # the text parts joined as the SDK joins them
    assert judged(trace) == verdicts


def test_every_fixture_is_expected():
    assert list(BY_QID) == list(EXPECTED)


def test_a_changed_letter_or_a_moved_offset_is_caught():
    trace = json.loads(json.dumps(BY_QID["anthropic-valid"]))
    citation = trace["response"]["content"][1]["citations"][0]
    citation["cited_text"] = citation["cited_text"].replace("30", "60")
    assert judged(trace)[0] == (INVALID, True)
    trace = json.loads(json.dumps(BY_QID["bedrock-valid"]))
    place = trace["response"]["output"]["message"]["content"][1]["citationsContent"]["citations"][0]["location"][
        "documentChar"]
    place["end"] += 1  # a space more: the same text once folded
    assert judged(trace) == [(VALID, True)]
    place["start"] += 1  # a letter less
    assert judged(trace) == [(MISPLACED, True)]
    trace = json.loads(json.dumps(BY_QID["cohere-valid"]))
    trace["response"]["message"]["citations"][0]["text"] = "Refunds are accepted within 60 days"
    assert judged(trace) == [(INVALID, True)]


def test_typography_and_spacing_at_the_offsets_still_count_as_the_text():
    citation = ProviderCitation("anthropic", "char_location", 0, "It\u2019s  FINAL", None, None, None, None)
    texts = ["Sale items: it's final. No returns."]
    assert judge(citation._replace(location=None), "", ["d1"], texts).verdict == VALID
    at = judge(citation._replace(location=Location("characters", 12, 22)), "", ["d1"], texts)
    assert (at.verdict, at.document) == (VALID, VALID)


def test_a_citation_with_no_text_of_its_document_is_unchecked_whatever_it_cites():
    citation = ProviderCitation("anthropic", "char_location", 0, "Refunds are accepted", None, None, None, None)
    assert judge(citation, "", ["d1"], []).verdict == UNCHECKED  # the trace has no passage texts
    assert judge(citation._replace(cited=None), "", ["d1"], ["Refunds are accepted."]).verdict == UNCHECKED


# --- reading the shapes -----------------------------------------------------------------------------

def test_gemini_offsets_are_bytes_of_their_part_and_one_inside_a_character_is_off_the_answer():
    text = "Caf\u00e9 \u2014 open at nine."
    segment = {"part_index": 1, "start_index": len("Caf\u00e9 \u2014 ".encode()), "end_index": len(text.encode()),
               "text": "open at nine."}
    response = {"candidates": [{"content": {"parts": [{"text": "thinking", "thought": True}, {"text": text}]},
                                "grounding_metadata": {"grounding_chunks": [{"web": {"uri": "https://x"}}],
                                                       "grounding_supports": [{"segment": segment,
                                                                               "grounding_chunk_indices": [0]}]}}]}
    read = provider_response({"response": response})
    assert read is not None and read.answer == text  # the thought is no part of the answer
    [citation] = read.citations
    assert text[slice(*citation.span)] == "open at nine." and citation.given.unit == "bytes"
    assert judge(citation, read.answer, [], []).verdict == VALID  # the segment: a web chunk quotes nothing
    segment["start_index"] = 4  # the second byte of "é"
    [inside] = provider_response({"response": response}).citations
    assert inside.span == NOT_PLACED
    assert judge(inside, read.answer, [], []).segment == MISPLACED  # its text is in the answer, elsewhere


def test_camel_case_and_json_text_are_read_as_the_sdk_dump():
    trace = BY_QID["gemini-wrong-document"]
    assert isinstance(trace["raw_response"], str) and "groundingSupports" in trace["raw_response"]
    read = provider_response(trace)
    assert read is not None and (read.key, read.provider, len(read.citations)) == ("raw_response", "gemini", 1)


def test_other_shapes_and_broken_ones_read_as_no_response():
    for value in ({"answer": "x"}, {"response": "The refund window is 30 days."}, {"response": "{not json"},
                  {"raw_response": '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"},
                  {"response": {"id": "x"}}, {"raw_response": ["a"]}, {"response": None}):
        assert provider_response(value) is None
    broken = {"type": "message", "content": [{"type": "text", "text": "a", "citations": [{"type": "char_location"}]},
                                             {"type": "text", "text": 3}, "x", {"type": "text", "citations": 5}]}
    read = provider_response({"response": broken})
    assert read is not None and read.answer == "a"
    assert [(c.document, c.cited, c.location) for c in read.citations] == [(None, None, None)]
    assert judge_response(read, [], []) and judge_response(read, [], [])[0].verdict == UNCHECKED


def test_chat_completions_url_citations_and_anthropic_web_results():
    chat = {"object": "chat.completion", "choices": [{"message": {"content": "See [x](https://x).", "annotations": [
        {"type": "url_citation", "url_citation": {"url": "https://x", "title": "x", "start_index": 4,
                                                  "end_index": 18}}]}}]}
    [c] = provider_response({"response": chat}).citations
    assert (c.provider, c.kind, c.document, c.span) == ("openai", "url_citation", "https://x", (4, 18))
    web = {"type": "message", "content": [{"type": "text", "text": "It opens at nine.", "citations": [
        {"type": "web_search_result_location", "url": "https://x", "cited_text": "Open at nine.",
         "encrypted_index": "e", "title": "x"}]}]}
    [c] = provider_response({"response": web}).citations
    assert judge(c, "It opens at nine.", ["https://x"], ["Open at nine. Closed Sundays."]) \
        ._replace(position=None) == (VALID, True, None, VALID, None, None, None)


def test_the_cited_ids_are_the_retrieved_ids_at_the_indices_and_the_ids_as_given():
    read = provider_response(BY_QID["anthropic-not-retrieved"])
    assert cited_ids(read, ["d1", "d2", "d3"]) == ["d2"]  # index 3 names no id: left out
    assert cited_ids(provider_response(BY_QID["cohere-not-retrieved"]), ["d1", "d2", "d3"]) == ["d9", "d2"]
    assert cited_ids(provider_response(BY_QID["anthropic-valid"]), []) == []


def test_a_trace_without_a_citations_field_cites_its_provider_s_documents():
    view = parse_trace(BY_QID["anthropic-valid"], "t.jsonl", 1)
    assert (view.citations, view.cites, view.citations_from) == (("d1", "d3"), Cites.LIST,
                                                                 "response's anthropic citations")
    own = parse_trace({**BY_QID["anthropic-valid"], "citations": ["d2"]}, "t.jsonl", 1)
    assert (own.citations, own.citations_from) == (["d2"], "citations")  # a citations field wins
    text = parse_trace({**BY_QID["anthropic-valid"], "answer": "Refunds. citations: [d3]"}, "t.jsonl", 1)
    assert (text.citations, text.citations_from) == (("d3",), "answer text")
    none = {**BY_QID["anthropic-valid"], "response": {**BY_QID["anthropic-valid"]["response"], "content": []}}
    assert parse_trace(none, "t.jsonl", 1).cites is Cites.ABSENT  # a response that cites nothing: no citations


def test_provider_counts_add_up_to_the_verdicts():
    trace = BY_QID["anthropic-not-retrieved"]
    assert provider_counts(trace, trace["retrieved_ids"], trace["retrieved_chunks"]) == (2, 1, 0, 0, 1)
    assert provider_counts({"answer": "x"}, [], []) == (0, 0, 0, 0, 0)


# --- the family: --metrics grounding ----------------------------------------------------------------

@pytest.fixture
def provider_run(isolated):
    for name in ("gold.jsonl", "traces.jsonl"):
        (isolated / name).write_bytes((PROVIDERS / name).read_bytes())
    return isolated


ARGS = ("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--metrics", "grounding", "--no-fail")


def test_the_run_counts_every_provider_citation(ragscore, provider_run):
    doc = ragscore(*ARGS, "--per-question").json()
    counts = {k: v for k, v in doc["grounding"].items() if k.startswith("provider")}
    # EXPECTED: 22 citations; 11 valid, 4 misplaced, 4 invalid (3 unchecked); 4 not retrieved (anthropic's
    # document 3, openai's two, cohere's d9).
    assert counts == {"provider_citations": 22, "provider_citations_valid": 11, "provider_citations_misplaced": 4,
                      "provider_citations_invalid": 4, "provider_citations_retrieved": 18}
    assert sum(len(v) for _, v in EXPECTED.values()) == 22
    metrics = doc["metrics"]
    assert (metrics["provider_citation_valid_rate"], metrics["provider_citation_retrieved_rate"]) == (11 / 19, 18 / 22)
    rows = {q["qid"]: q["metrics"] for q in doc["questions"]}
    assert (rows["anthropic-not-retrieved"]["provider_citation_valid_rate"],
            rows["anthropic-not-retrieved"]["provider_citation_retrieved_rate"]) == (1.0, 0.5)
    assert rows["openai-url-citation"]["provider_citation_valid_rate"] is None  # nothing it gives could be checked
    gated = ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--gates", "provider_citation_valid_rate>=0.9")
    assert gated.status == 1 and "FAIL    provider_citation_valid_rate = 0.5789 (gate >= 0.9)" in gated.err


def test_the_provider_s_documents_are_the_citations_of_a_trace_without_a_citations_field(ragscore, provider_run):
    # Cited ids that hit the gold: all but anthropic-wrong-document (d2), openai-off-the-answer (two ids not
    # retrieved), gemini-wrong-document (d2), cohere-not-retrieved (d9 not retrieved) and bedrock-wrong-document
    # (d3): 12 of 17. The gold sets no claim substring, so precision is chr.
    doc = ragscore(*ARGS).json()
    assert (doc["chr"], doc["precision"]) == (12 / 17, 12 / 17)
    write(provider_run / "traces.jsonl", [{k: v for k, v in t.items() if k not in ("response", "raw_response")}
                                          for t in TRACES])
    bare = ragscore(*ARGS).json()
    assert (bare["chr"], bare["precision"]) == (None, 1.0)  # no trace cites: precision by the claims alone
    assert bare["grounding"]["provider_citations"] == 0


def test_jobs_and_partials_count_the_same(ragscore, provider_run):
    whole = ragscore(*ARGS)
    assert ragscore(*ARGS, "--jobs", "2").out == whole.out
    for part in (1, 2):
        assert ragscore("partial", *ARGS[:-1], "--part", f"{part}/2", "-o", f"p{part}.json").status == 0
    merged = ragscore("merge", "p1.json", "p2.json", "--no-fail").json()
    assert (merged["metrics"], merged["grounding"]) == (whole.json()["metrics"], whole.json()["grounding"])


def test_explain_lists_each_provider_citation_as_the_docs_show(ragscore, provider_run):
    from docs import doc_block

    run = ragscore(*ARGS, "-q", "--format", "none", *(a for q in EXPECTED for a in ("--explain", q)))
    lines = run.out.splitlines()
    shown = [line for line in lines if line.startswith("provider citation")]
    assert len(shown) == len(EXPECTED) + 22
    assert "citations (from response's anthropic citations): \"d1\" (rank 1), \"d3\" (rank 3)" in lines
    assert ('provider citation 1: char_location of document 3 (not retrieved) characters 0-27; answer characters '
            "0-29: unchecked (the trace has no text of its document)") in lines
    assert ('provider citation 2: citation of "doc:1" ("d2", rank 2); answer characters 49-83: valid') in lines
    example = doc_block("provider citations: 1 in response (anthropic)").splitlines()
    assert example and all(line in lines for line in example)
    assert "Refunds are accepted within 30 days of purchase" not in run.out  # offsets, never a cited text


# --- the fixtures, made again -----------------------------------------------------------------------

def test_the_fixtures_are_what_the_sdks_make(tmp_path: Path):
    for module in ("anthropic", "openai", "google.genai", "cohere", "botocore"):
        pytest.importorskip(module, reason=f"{module} is in the test extra: it remakes tests/data/providers/")
    subprocess.run([sys.executable, str(PROVIDERS / "make_provider_examples.py"), str(tmp_path)], check=True)
    remade = [json.loads(line) for line in (tmp_path / "traces.jsonl").read_text(encoding="utf-8").splitlines()]
    # Whatever the SDKs' versions, the responses they make read alike; with the recorded versions, byte for byte.
    assert [provider_response(t) for t in remade] == [provider_response(t) for t in TRACES]
    assert [judged(t) for t in remade] == [v for _, v in EXPECTED.values()]
    assert (tmp_path / "gold.jsonl").read_bytes() == (PROVIDERS / "gold.jsonl").read_bytes()
    if (tmp_path / "sdk-versions.txt").read_bytes() == (PROVIDERS / "sdk-versions.txt").read_bytes():
        assert (tmp_path / "traces.jsonl").read_bytes() == (PROVIDERS / "traces.jsonl").read_bytes()
