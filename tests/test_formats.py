"""examples/formats/: one pipeline run written in every trace shape --trace-format reads (issue 14).

The run: a docs assistant for *Tidepool*, a made-up self-hosted feature-flag service, answers the
ten questions of ``gold.jsonl`` (TP-01 .. TP-07 answerable, TP-08 .. TP-10 not). Every file holds
the same nine traces (TP-07 has none); the traces carry no qid and join by question text, and the
citations are written in the answer text (``... citations: [install#1]``), since none of the
foreign shapes has a citations field:

- ``native.jsonl``          ragscore's own contract (``question``, ``answer``, ``retrieved_ids``, ``retrieved_chunks``)
- ``ragas.jsonl``           ragas ``EvaluationDataset.to_jsonl()`` (``SingleTurnSample`` fields)
- ``ragas.csv``             ragas ``EvaluationDataset.to_csv()`` (pandas: list cells as Python list reprs)
- ``langchain.jsonl``       RetrievalQA outputs (``query``/``result``/``source_documents``); TP-04 and TP-09
                            in the create_retrieval_chain shape (``input``/``context``/``answer``); one
                            document with its id in ``metadata.doc_id`` (TP-05), one with only the
                            Document's own top-level ``id`` (TP-10)
- ``openinference.jsonl``   Phoenix span export, spans of two concurrent workers interleaved; attributes
                            nested (TP-01, 02, 04, 06, 09) or flattened (TP-03, 05, 08, 10); TP-03 has a
                            router LLM call before retrieval (two LLM spans: tokens add up); TP-05's root
                            span holds JSON (``{"query": ...}`` / ``{"result": ...}``, as LangChain's
                            instrumentation writes it); TP-10's root span has no output.value (the claim
                            comes from the LLM span)
- ``otel-genai.jsonl``      OTLP/JSON from the collector's file exporter: several spans per line, a trace's
                            spans on different lines; TP-03 has a router chat span too; TP-09's retrieval
                            span has no ``gen_ai.retrieval.query.text`` (the question comes from the last
                            user message of the chat span)
- ``llamaindex.jsonl``      llama-index-core ``Response`` objects dumped as ``{"query", "response",
                            "source_nodes": [NodeWithScore.to_dict()]}``, each node's ``id_`` the retrieved id
- ``mlflow.jsonl``          MLflow 3 ``Trace.to_json()``: a CHAIN span, a RETRIEVER span returning Documents,
                            an LLM span with the token counts (twin: native-with-tokens.jsonl)
(both written by the libraries from native-with-tokens.jsonl: tests/data/formats/make_library_examples.py)

Both span formats carry token usage, which the readers sum into the trace's ``input_tokens`` and
``output_tokens`` (the operational metrics tokens_in_mean, ...): their native twin is
``tests/data/formats/native-with-tokens.jsonl``, native.jsonl with both fields per line (a separate
file, so that the ragas and langchain runs compare with the plain native run field for field). The
span formats also time each trace, from its first span's start to its last span's end: the latency
metrics, which the twin lacks and ``comparable`` leaves out (checked against the files below).

What the readers may change in the report, and nothing else:
- ``settings``: ``trace_format`` names the format the traces were read in;
- ``signature``: it carries ``|trace:NAME`` for a format other than native, so that runs read in
  different shapes never compare silently (`compare` checks the signature);
- ``inputs``: the trace file's path and sha256 (the gold entry is the same);
- each question's ``trace_line``: where its record starts in that file (a CSV's header is line 1;
  langchain.jsonl is in completion order; a span format's trace is at its first span's line).

Hand derivation of the native run (default settings: k = 5, refusal token "not in context",
require_claim and scope_citations on). A = answerable, U = unanswerable, S = answered, R = refused
(the missing trace counts as refused); H = a cited id is gold and every cited id was retrieved;
C = the claim contains a gold_claim_substr entry.

TP-01 A  cites [install#1] (retrieved, gold) -> H; "... port 8420 ..." -> C.          OK
TP-02 A  cites [install#2] (retrieved, gold) -> H; "PostgreSQL 13" -> C.             OK
         gold {install#1, install#2}; install#1 never retrieved (full recall miss, recall@5 = 1/2)
TP-03 A  cites [rollouts#2], retrieved but not gold (rollouts#1) -> no H.          NO_CITATION_HIT
         (the claim does contain "hashing the flag key": C, which counts in containment)
TP-04 A  cites [sdk-python#3] (gold) -> H; says "every 60 seconds", not "30 seconds" -> no C.
                                                                                      CLAIM_MISMATCH
TP-05 A  cites [sdk-python#4, sdk-python#3]: one gold -> H, citation share 1/2; "last flag
         definitions" -> C.                                                          OK
TP-06 A  "not in context" although audit-log#1 was retrieved (rank 2).              OVER_REFUSAL
TP-07 A  no trace.                                                                   MISSING_TRACE
TP-08 U  answers "Yes, SAML single sign-on ..." citing pricing#1.                    HALLUCINATION
TP-09 U  "Not in context" (casefolded, equals the token).                            REFUSAL_OK
TP-10 U  "not in context citations: []" (the citation list is taken out first).      REFUSAL_OK

A = 7, U = 3; S = {01, 02, 03, 04, 05, 08} = 6; R = {06, 07, 09, 10} = 4.
precision      = |S∩A with H and C| / |S| = |{01, 02, 05}| / 6        = 3/6 = 0.5
chr            = |S∩A with H| / |S|       = |{01, 02, 04, 05}| / 6    = 4/6
chr_answerable = 4/7;  containment = |{01, 02, 03, 05}| / 7 = 4/7
under_refusal  = |S∩U| / |U| = |{08}| / 3                              = 1/3
over_refusal   = |R∩A| / |A| = |{06, 07}| / 7                          = 2/7
compliance     = 9 traces, each refuses or carries a citation list     = 9/9 = 1
citation_precision = (01: 1 + 02: 1 + 03: 0 + 04: 1 + 05: 1/2) / 5     = 3.5/5 = 0.7
top-level recall@k (full_recall@5): gold ⊆ top 5 for {01, 03, 04, 05, 06} (not 02: install#1
  missing; not 07: no trace)                                           = 5/7
recall@5 (--metrics retrieval; mean over the 7 answerable questions, all with gold citations):
  01: 1, 02: 1/2, 03: 1, 04: 1, 05: 1, 06: 1 (refusing does not undo retrieval), 07: 0
                                                                       = 5.5/7 = 11/14
Tokens (native-with-tokens.jsonl; per trace, LLM/chat calls summed):
  input  611 + 598 + (142 + 633) + 590 + 702 + 585 + 561 + 472 + 689 = 5583 -> mean 5583/9
  output  27 +  31 + (  3 +  34) +  24 +  41 +   5 +  19 +   5 +   9 =  198 -> mean 22
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from conftest import DATA, EXAMPLES

FORMATS = EXAMPLES / "formats"
GOLD = FORMATS / "gold.jsonl"
NATIVE = FORMATS / "native.jsonl"
NATIVE_TOKENS = DATA / "formats" / "native-with-tokens.jsonl"

LABELS = {
    "TP-01": "OK", "TP-02": "OK", "TP-03": "NO_CITATION_HIT", "TP-04": "CLAIM_MISMATCH", "TP-05": "OK",
    "TP-06": "OVER_REFUSAL", "TP-07": "MISSING_TRACE", "TP-08": "HALLUCINATION", "TP-09": "REFUSAL_OK",
    "TP-10": "REFUSAL_OK",
}


def score(ragscore, trace: Path, *options: str) -> dict:
    run = ragscore("--gold", GOLD, "--trace", trace, "--per-question", "--no-fail", *options)
    assert run.status == 0, run.err
    return run.json()


def comparable(doc: dict) -> dict:
    """The report without what legitimately differs between shapes (see the module docstring)."""
    out = {key: value for key, value in doc.items() if key not in ("settings", "signature", "inputs")}
    out["metrics"] = {name: value for name, value in doc["metrics"].items() if not name.startswith("latency_")}
    if "operations" in doc:
        out["operations"] = {key: value for key, value in doc["operations"].items() if key != "latency_ms"}
    out["questions"] = [{k: v for k, v in q.items() if k != "trace_line"} for q in doc["questions"]]
    return out


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --- the native run, by hand ---------------------------------------------------------------------

def test_native_run_gives_the_hand_checked_values(ragscore, isolated):
    doc = score(ragscore, NATIVE, "-q")
    assert {q["qid"]: q["label"] for q in doc["questions"]} == LABELS
    head = {key: doc[key] for key in ("answered", "refused", "answerable", "unanswerable", "k", "pass")}
    assert head == {"answered": 6, "refused": 4, "answerable": 7, "unanswerable": 3, "k": 5, "pass": False}
    assert doc["precision"] == 3 / 6
    assert doc["chr"] == pytest.approx(4 / 6)
    assert doc["under_refusal"] == pytest.approx(1 / 3)
    assert doc["over_refusal"] == pytest.approx(2 / 7)
    assert doc["recall@k"] == pytest.approx(5 / 7)
    metrics = doc["metrics"]
    assert metrics["chr_answerable"] == pytest.approx(4 / 7)
    assert metrics["containment"] == pytest.approx(4 / 7)
    assert metrics["compliance"] == 1.0
    assert metrics["citation_precision"] == pytest.approx(0.7)
    assert metrics["fabricated_citation_rate"] == 0.0 and metrics["forbidden_rate"] == 0.0
    assert doc["counts"]["missing"] == 1 and doc["counts"]["traced"] == 9
    assert doc["labels"] == {"OK": 3, "REFUSAL_OK": 2, "OVER_REFUSAL": 1, "HALLUCINATION": 1,
                             "NO_CITATION_HIT": 1, "CLAIM_MISMATCH": 1, "FORBIDDEN": 0, "MISSING_TRACE": 1}
    contained = {q["qid"] for q in doc["questions"] if q["answerable"] and q["contained"]}
    assert contained == {"TP-01", "TP-02", "TP-03", "TP-05"}  # TP-03: right claim, wrong citation
    # (TP-08 reads as contained too: an empty gold_claim_substr always passes; it is unanswerable,
    # so containment, over A, does not count it)
    assert doc["settings"]["trace_format"] == "native"


def test_native_retrieval_recall_at_5(ragscore, isolated):
    doc = score(ragscore, NATIVE, "-q", "--metrics", "retrieval")
    assert doc["metrics"]["recall@5"] == pytest.approx(11 / 14)
    per_question = {q["qid"]: q["metrics"].get("recall@5") for q in doc["questions"]}
    assert per_question == {"TP-01": 1.0, "TP-02": 0.5, "TP-03": 1.0, "TP-04": 1.0, "TP-05": 1.0,
                            "TP-06": 1.0, "TP-07": 0.0, "TP-08": None, "TP-09": None, "TP-10": None}


def test_native_with_tokens_is_native_plus_token_counts(ragscore, isolated):
    plain, with_tokens = read_jsonl(NATIVE), read_jsonl(NATIVE_TOKENS)
    assert [{k: v for k, v in t.items() if not k.endswith("_tokens")} for t in with_tokens] == plain
    assert sum(t["input_tokens"] for t in with_tokens) == 5583 and sum(t["output_tokens"] for t in with_tokens) == 198
    doc = score(ragscore, NATIVE_TOKENS, "-q")
    assert doc["metrics"]["tokens_in_mean"] == 5583 / 9 and doc["metrics"]["tokens_out_mean"] == 22.0
    assert doc["metrics"]["tokens_total"] == 5583 + 198
    native = score(ragscore, NATIVE, "-q")
    assert {q["qid"]: q["label"] for q in doc["questions"]} == LABELS
    assert {k: v for k, v in doc["metrics"].items() if k in native["metrics"]} == native["metrics"]


def test_examples_are_one_run():
    """Every file holds the same questions, answers and retrieved ids as native.jsonl (read directly,
    without ragscore), so a difference in the reports can only come from a reader."""
    gold = read_jsonl(GOLD)
    questions = [g["question"] for g in gold]
    assert len(set(questions)) == len(questions) == 10
    native = {t["question"]: (t["answer"], t["retrieved_ids"]) for t in read_jsonl(NATIVE)}
    assert set(native) == set(questions) - {"How are webhook requests signed?"}  # TP-07 has no trace
    ragas = {r["user_input"]: (r["response"], r["retrieved_context_ids"]) for r in read_jsonl(FORMATS / "ragas.jsonl")}
    assert ragas == native
    with open(FORMATS / "ragas.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows[0].keys() == {"user_input", "retrieved_contexts", "retrieved_context_ids", "response", "reference"}
    assert {r["user_input"]: (r["response"], r["retrieved_context_ids"]) for r in rows} == \
        {q: (a, str(ids)) for q, (a, ids) in native.items()}
    langchain = {}
    for r in read_jsonl(FORMATS / "langchain.jsonl"):
        docs = r.get("source_documents", r.get("context"))
        ids = [d["metadata"].get("id") or d["metadata"].get("doc_id") or d["id"] for d in docs]
        langchain[r.get("query", r.get("input"))] = (r.get("result", r.get("answer")), ids)
    assert langchain == native


# --- the presets: each file gives the native report ------------------------------------------------
# These runs need the trace readers of issue 14 (--trace-format); every preset must read its file
# exactly as the native file is read.

PRESETS = [
    ("native.jsonl", "native", NATIVE),
    ("ragas.jsonl", "ragas", NATIVE),
    ("ragas.csv", "ragas", NATIVE),
    ("langchain.jsonl", "langchain", NATIVE),
    ("openinference.jsonl", "openinference", NATIVE_TOKENS),
    ("otel-genai.jsonl", "otel-genai", NATIVE_TOKENS),
    ("llamaindex.jsonl", "llamaindex", NATIVE),
    ("mlflow.jsonl", "mlflow", NATIVE_TOKENS),
]
# Where each question's record starts in each file (hand-read from the files); native and ragas.jsonl
# keep the gold order, one line per trace.
TRACE_LINES = {
    "native.jsonl": dict(zip(LABELS, [1, 2, 3, 4, 5, 6, None, 7, 8, 9], strict=True)),
    "ragas.jsonl": dict(zip(LABELS, [1, 2, 3, 4, 5, 6, None, 7, 8, 9], strict=True)),
    # line 1 is the header; TP-05's response holds a line break, so its quoted cell spans lines 6-7
    "ragas.csv": dict(zip(LABELS, [2, 3, 4, 5, 6, 8, None, 9, 10, 11], strict=True)),
    "langchain.jsonl": dict(zip(LABELS, [2, 1, 4, 3, 6, 5, None, 8, 7, 9], strict=True)),    # completion order
    "openinference.jsonl": dict(zip(LABELS, [1, 2, 8, 7, 15, 12, None, 21, 18, 26], strict=True)),  # first span
    "otel-genai.jsonl": dict(zip(LABELS, [1, 1, 2, 2, 3, 3, None, 5, 4, 6], strict=True)),  # first line with a span
    "llamaindex.jsonl": dict(zip(LABELS, [1, 2, 3, 4, 5, 6, None, 7, 8, 9], strict=True)),
    "mlflow.jsonl": dict(zip(LABELS, [1, 2, 3, 4, 5, 6, None, 7, 8, 9], strict=True)),
}


@pytest.mark.parametrize("name, preset, twin", PRESETS, ids=[p[0] for p in PRESETS])
@pytest.mark.parametrize("how", ["named", "auto", "default"])
def test_preset_reads_its_example_as_the_native_twin(ragscore, isolated, name, preset, twin, how):
    native = score(ragscore, twin, "-q")
    options = {"named": ("--trace-format", preset), "auto": ("--trace-format", "auto"), "default": ()}[how]
    doc = score(ragscore, FORMATS / name, "-q", *options)
    assert comparable(doc) == comparable(native)
    assert {q["qid"]: q["trace_line"] for q in doc["questions"]} == TRACE_LINES[name]
    assert doc["settings"]["trace_format"] == preset  # "auto" is reported as the format it found
    assert {k: v for k, v in doc["settings"].items() if k != "trace_format"} == \
        {k: v for k, v in native["settings"].items() if k != "trace_format"}
    suffix = "" if preset == "native" else f"|trace:{preset}"
    assert doc["signature"].replace(suffix, "") == native["signature"] and suffix in doc["signature"]
    assert doc["inputs"]["gold"] == native["inputs"]["gold"]


@pytest.mark.parametrize("name, preset", [(p[0], p[1]) for p in PRESETS[1:]], ids=[p[0] for p in PRESETS[1:]])
def test_auto_says_which_format_it_read(ragscore, isolated, name, preset):
    run = ragscore("--gold", GOLD, "--trace", FORMATS / name, "--no-fail", "--format", "none")
    assert f"traces read as {preset}" in run.err
    assert "traces read as" not in ragscore("--gold", GOLD, "--trace", FORMATS / name, "--no-fail", "--format", "none",
                                            "--trace-format", preset).err


def _span_extents(name: str) -> dict[str, float]:
    """Each trace's first start to last end in milliseconds, read from the span file by hand."""
    from datetime import datetime

    starts: dict[str, list[int]] = {}
    ends: dict[str, list[int]] = {}
    for record in read_jsonl(FORMATS / name):
        if "resourceSpans" in record:  # OTLP: nanoseconds as strings
            spans = [s for r in record["resourceSpans"] for sc in r["scopeSpans"] for s in sc["spans"]]
            for s in spans:
                starts.setdefault(s["traceId"], []).append(int(s["startTimeUnixNano"]))
                ends.setdefault(s["traceId"], []).append(int(s["endTimeUnixNano"]))
        else:  # Phoenix: ISO 8601 to the microsecond
            trace = record["context"]["trace_id"]
            for key, into in (("start_time", starts), ("end_time", ends)):
                moment = datetime.fromisoformat(record[key])
                micros = (moment.toordinal() * 86_400 + moment.hour * 3600 + moment.minute * 60 + moment.second) \
                    * 1_000_000 + moment.microsecond
                into.setdefault(trace, []).append(micros * 1000)
    return {trace: (max(ends[trace]) - min(starts[trace])) / 1e6 for trace in starts}


def test_span_formats_sum_the_token_counts_and_time_each_trace(ragscore, isolated):
    for name in ("openinference.jsonl", "otel-genai.jsonl"):
        doc = score(ragscore, FORMATS / name, "-q", "--trace-format", name.removesuffix(".jsonl"))
        assert doc["metrics"]["tokens_in_mean"] == 5583 / 9, name
        assert doc["metrics"]["tokens_out_mean"] == 22.0, name
        extents = sorted(_span_extents(name).values())
        assert doc["metrics"]["latency_max"] == extents[-1], name
        assert doc["metrics"]["latency_mean"] == pytest.approx(sum(extents) / len(extents), rel=1e-15), name
        assert doc["operations"]["latency_ms"] == {"questions": 9, "missing": 0}, name


# --- a ragas dataset as its own gold set ------------------------------------------------------------
# ragas.jsonl read as the gold set too: every sample is answerable, `reference` is the reference
# claim (gold_claim: the claim must contain one of its phrases) and answer, `reference_context_ids`
# the relevant documents of the retrieval metrics (not gold citations, unless mapped). TP-07 is not
# in the dataset, so the gold set has 9 questions, all answerable; S = {01, 02, 03, 04, 05, 08},
# R = {06, 09, 10}.
#
# Gold phrases (runs of letters, digits, '-' and spaces of 5+ characters, split at punctuation):
#   01 "port 8420" ...                             claim "... on port 8420; ..."            -> C
#   02 "postgresql 13 or newer", ...               claim "... PostgreSQL 13 or newer ..."   -> C
#   03 "users are bucketed 0 to 99 by hashing the flag key with the user id" (one phrase) -> no C
#   04 "every 30 seconds by default", ...          claim says 60 seconds                    -> no C
#   05 "the last flag definitions it fetched", ... claim "It keeps serving the last flag definitions it fetched" -> C
#   08 "not covered by the tidepool documentation"                                          -> no C
# containment = 3/9; over_refusal = 3/9 (06, 09, 10 refuse answerable questions).

RAGAS = FORMATS / "ragas.jsonl"


def ragas_self(ragscore, *options: str) -> dict:
    run = ragscore("--gold", RAGAS, "--trace", RAGAS, "--trace-format", "ragas", "--per-question", "--no-fail", "-q",
                   "--metrics", "retrieval", *options)
    assert run.status == 0, run.err
    return run.json()


def test_ragas_dataset_as_its_own_gold_set(ragscore, isolated):
    """By default the reference context ids are relevance only: the gold set has no citations, so
    every answer that cites anything misses (all six here cite: precision 0/6)."""
    doc = ragas_self(ragscore)
    assert (doc["answerable"], doc["unanswerable"], doc["answered"], doc["refused"]) == (9, 0, 6, 3)
    assert doc["precision"] == 0.0 and doc["chr"] == 0.0
    assert doc["under_refusal"] is None
    assert doc["over_refusal"] == pytest.approx(3 / 9)
    assert doc["metrics"]["containment"] == pytest.approx(3 / 9)
    # recall@5 over the 6 samples with reference context ids: 01 1, 02 1/2, 03-06 1 each
    assert doc["metrics"]["recall@5"] == pytest.approx(5.5 / 6)
    assert doc["labels"]["NO_CITATION_HIT"] == 6 and doc["labels"]["OVER_REFUSAL"] == 3


def test_ragas_dataset_with_reference_context_ids_as_citations(ragscore, isolated):
    """[gold.fields] gold_citations = "reference_context_ids": the citations now hit as in the
    native run, and the reference claims decide containment.
    01 OK, 02 OK (install#2 is a reference context), 03 NO_CITATION_HIT (rollouts#2 is not),
    04 CLAIM_MISMATCH, 05 OK, 08 NO_CITATION_HIT (cites, no reference context) ->
    precision = 3/6, chr = 4/6; full recall@5: all but 02 (install#1 not retrieved) = 8/9."""
    (isolated / "gates.toml").write_text('[gold.fields]\ngold_citations = "reference_context_ids"\n', encoding="utf-8")
    doc = ragas_self(ragscore)
    assert doc["precision"] == 0.5
    assert doc["chr"] == pytest.approx(4 / 6)
    assert doc["over_refusal"] == pytest.approx(3 / 9)
    assert doc["recall@k"] == pytest.approx(8 / 9)
    assert [q["label"] for q in doc["questions"]] == [
        "OK", "OK", "NO_CITATION_HIT", "CLAIM_MISMATCH", "OK", "OVER_REFUSAL", "NO_CITATION_HIT", "OVER_REFUSAL",
        "OVER_REFUSAL"]
