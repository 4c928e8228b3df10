"""Fuzzing every parser through the command line: exit 0, 1 or 2 with one line, never 3, bounded.

Each parser starts from a valid file of its kind (the examples', or a small one written here) and
Hypothesis mutates it (``fuzzing.mutated``: structure-aware changes of JSON values, table fields and
TOML keys, and byte-level damage: cuts, flipped bytes, hostile tokens such as NaN, 1e400, a
5,000-digit integer, nesting 100,000 deep, lone surrogates, BOMs, CR-only line ends, NUL, lines
repeated thousands of times), and now and then replaces it with random bytes. The real command
reads it, in-process (``ragscore.cli.main``), in a folder of its own. Every run must end with
status 0, 1 or 2; an error (2) is exactly one line on standard error, ``ragscore: error: ...``,
nothing on standard output and no report written; status 3 (an internal error, a traceback)
fails the test, and so does a run that writes to one of its inputs.

Bounds, per run (``fuzzing.bounded_run``): the address space may grow by 512 MiB at most (RLIMIT_AS
lowered for the run and restored after it, Linux only: a pathological allocation becomes a
MemoryError, reported as status 3, instead of taking the machine down; address space is the
resource the kernel refuses reliably, where resident size is only measured after the fact), and
each example has Hypothesis's deadline (DEADLINE, far above the few milliseconds a run takes, so a
busy machine does not make it flaky); a run that would never end is stopped after a minute by
SIGALRM. Each parser's examples also may not grow the process's peak resident size by more than
the same bound.

Runs are deterministic: each parser's examples come from a fixed seed (the CRC of its name) and
no example database. The default run draws 20 to 100 examples per parser (``examples``), about
20 s in all on one core; ``pytest -m slow`` draws 20 times as many. Against the code before
issue 31 (01553f7) the default run fails 8 parsers (merge, history, monitor, OpenInference spans,
TSV and CSV tables); what the fuzzing found is kept, minimized, in REGRESSIONS below with its
exact outcome.
"""
from __future__ import annotations

import json
import re
import resource
import shutil
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings

import fuzzing
from conftest import DATA, EXAMPLES
from fuzzing import (
    COMPRESSORS,
    MEMORY_BOUND,
    Draw,
    Outcome,
    Raw,
    bounded_run,
    check_outcome,
    dump,
    json_op,
    memory_bound,
    mutated,
    table_op,
    toml_keys,
    toml_op,
    utf16,
)

DEADLINE = timedelta(seconds=10)  # one example, on a slow and busy machine; the inputs are a few kilobytes to 2 MB
SLOW_FACTOR = 20
REPORTS = ("--json", "--markdown", "--html", "--junit", "--openmetrics", "--out", "--output")


def _example(path: str, lines: int | None = None) -> bytes:
    data = (EXAMPLES / path).read_bytes()
    return data if lines is None else b"".join(data.splitlines(keepends=True)[:lines])


GOLD = _example("gold.jsonl")
TRACE = _example("trace.jsonl")
PRODUCT_GOLD = _example("product/gold.jsonl", 8)
PRODUCT_TRACE = _example("product/trace.jsonl", 8)
FORMATS_GOLD = _example("formats/gold.jsonl")
QRELS = _example("retrieval/qrels.txt")
RUN = _example("retrieval/run.txt", 60)
STAGES = {name: _example(f"stages/{name}") for name in ("ner_gold.jsonl", "ner_pred.jsonl", "classify_gold.jsonl",
                                                       "classify_pred.jsonl", "link_gold.jsonl", "link_pred.jsonl")}
STAGE_GATES = _example("stages/gates.toml")
SCORE_GATES = (EXAMPLES.parent / "gates.toml").read_bytes() + b"\n[slice_gates]\nmin_n = 1\nprecision = 0.5\n" \
    b"\n[diagnose.precision]\nwarning = 0.9\ncauses = [\"the retriever\"]\n"
SUITE_GATES = _example("suite/gates.toml")
MONITOR_GATES = _example("monitor/gates.toml")
TODAY = _example("monitor/today.jsonl", 40)
BASELINE = _example("monitor/baseline.jsonl", 40)
HISTORY = _example("suite/history.jsonl", 2)
JUDGE_SCORES = _example("judge/calibration.jsonl")  # ragscore judge's header, then a record per question
JUDGE_LABELS = _example("judge/labels.jsonl")
SPANS_GOLD = (DATA / "qrels" / "gold.jsonl").read_bytes()
QRELS_CHUNKS = (DATA / "qrels" / "chunks.jsonl").read_bytes()

CONLL = b"Ada B-PER\nLovelace I-PER\nwrote O\nin O\nLondon B-LOC\n.\tO\n\nCharles B-PER\nBabbage I-PER\nmet O\nher O\n"
CONLL_PRED = b"Ada B-PER\nLovelace O\nwrote O\nin O\nLondon B-LOC\n. O\n\nCharles B-PER\nBabbage I-PER\nmet O\nher O\n"
BRAT_TEXT = b"Ada Lovelace met Charles Babbage in London."
BRAT_GOLD = (b"T1\tPER 0 12\tAda Lovelace\nT2\tPER 17 32\tCharles Babbage\nT3\tLOC 36 42\tLondon\n"
             b"R1\tMet Arg1:T1 Arg2:T2\n#1\tNote T1\tchecked\nA1\tNegated T3\n")
BRAT_PRED = b"T1\tPER 0 3\tAda\nT2\tPER 17 32\tCharles Babbage\nT3\tLOC 36 38;40 42\tLo on\n"
CLASSIFY_TSV = b"id\tlabel\nm1\tPER\nm2\tLOC\nm3\tORG\nm4\tPER\n"
CLASSIFY_CSV = b"id,label\nm1,PER\nm2,ORG\nm3,ORG\n\"m4\",\"PER\"\n"
LINK_GOLD_TSV = b"id\tmention\tkb_id\nm1\tAda\tQ7259\nm2\tFoo\tNIL\nm3\tParis\tQ90\n"
LINK_PRED_TSV = b"id\tkb_id\tscore\nm1\tQ1\t0.9\nm1\tQ7259\t0.8\nm2\tNIL\t\nm3\tQ90\t0.5\nm3\tQ91\t0.25\n"
BEIR_QRELS = b"query-id\tcorpus-id\tscore\nQ001\tmanual#1.1\t1\nQ002\tmanual#1.2\t2\nQ003\tfaq#1\t0\n"
SCORES_CSV = b"qid,faithfulness,answer_relevancy\nA0001,0.9,0.8\nA0002,,0.5\n\"A0003\",0.25,1\n"
SCORES_JSONL = (b'{"qid": "A0001", "faithfulness": 0.9, "answer_relevancy": 0.8}\n'
                b'{"qid": "A0002", "faithfulness": null}\n{"qid": "A0003", "faithfulness": 0.25, "custom": 1}\n')
SUITE = b"""name = "fuzz"

[tasks.qa]
command = "score"
gold = "gold.jsonl"
trace = "trace.jsonl"
metrics = ["retrieval"]

[tasks.release]
command = "compare"
gold = "gold.jsonl"
baseline = "trace.jsonl"
trace = "trace.jsonl"
bootstrap = 50

[tasks.retrieval]
command = "trec"
qrels = "qrels.txt"
runs = "run.txt"
measures = ["ndcg_cut.10", "map"]

[tasks.ner]
gold = "ner_gold.jsonl"
pred = "ner_pred.jsonl"

[tasks.classify]
command = "classify"
gold = "classify_gold.jsonl"
pred = "classify_pred.jsonl"
"""
CLASSIFY_SUITE = b'name = "fuzz"\n\n[tasks.classify]\ngold = "classify_gold.jsonl"\npred = "classify_pred.jsonl"\n'
# Keys of every settings file, to add where they do not belong (or where they do, with a bad value).
SETTINGS_KEYS = [key.encode() for key in (
    "refusal_tokens", "refusal_patterns", "k", "cutoffs", "require_claim", "scope_citations", "strict", "metrics",
    "hybrid_alpha", "hybrid_gamma", "similarity_threshold", "stemmer", "text_tokenizer", "confidence", "bootstrap",
    "seed", "trace_format", "trace_fields", "gold_fields", "precision", "chr", "missing", "min_n", "window",
    "require_significance", "warning", "causes", "command", "gold", "trace", "pred", "qrels", "runs", "measures",
    "baseline", "name", "repeats", "pass_k", "correction", "by", "per_question", "gates", "no_fail", "hierarchy")]


@dataclass(frozen=True)
class Parser:
    """A parser under fuzzing: the command that reads it, the file that is mutated, what it starts from."""

    name: str
    argv: tuple[str, ...]
    target: str  # the mutated file, in the run's folder
    seed: bytes  # the valid file it starts from (empty: made by ``prepare``)
    files: dict[str, bytes] = field(default_factory=dict)  # the other inputs, as they are
    ops: tuple[Callable[[Draw, bytes], bytes], ...] = ()  # structure-aware mutations
    encode: Callable[[bytes], bytes] | None = None
    examples: int = 60  # the default run's examples
    prepare: Callable[[Path], bytes] | None = None  # makes the seed in the folder (after ``files``)
    task_errors: bool = False  # ragscore run: a task's error is reported among the others' output
    findings: bool = False  # ragscore validate: the findings on standard output, their count on standard error
    appends: str | None = None  # the input the command appends to (ragscore run --history)

    def __str__(self) -> str:
        return self.name


JSON = (json_op,)
TSV, CSV, SPACES = table_op(b"\t"), table_op(b","), table_op(b" ")
TOML_KEYS = sorted(set(toml_keys([SCORE_GATES, STAGE_GATES, SUITE_GATES, MONITOR_GATES, SUITE]) + SETTINGS_KEYS))
TOML = (toml_op(TOML_KEYS),)
SCORE = ("--format", "json", "--per-question", "-q")
REPORTED = (*SCORE, "--html", "out.html", "--markdown", "out.md", "--junit", "out.xml")  # every report of a run
STAGE = ("--format", "json", "-q", "--html", "out.html")


def _partial(folder: Path) -> bytes:
    """A partial result of the whole of a small run, as ragscore partial writes it."""
    outcome = bounded_run(folder, ["partial", "--gold", "gold.jsonl", "--trace", "trace.jsonl", "--part", "1/1",
                                   "-o", "seed.json", "--per-question", "--by", "category", "--metrics", "all", "--bootstrap", "10",
                                   "-q"])
    assert outcome.status == 0, outcome.err
    return (folder / "seed.json").read_bytes()


def _report(folder: Path) -> bytes:
    """A JSON report of a small run, as score writes it (a baseline compare reads)."""
    outcome = bounded_run(folder, ["--gold", "gold.jsonl", "--trace", "trace.jsonl", "--per-question", "--no-fail",
                                   "--json", "seed.json", "--format", "none", "-q"])
    assert outcome.status == 0, outcome.err
    return (folder / "seed.json").read_bytes()


def _gold_array(data: bytes) -> bytes:
    return json.dumps([json.loads(line) for line in data.splitlines()], indent=1).encode()


PARSERS: list[Parser] = [
    # The gold set and the traces, as score reads them.
    Parser("gold-jsonl", ("--gold", "g.jsonl", "--trace", "trace.jsonl", *REPORTED), "g.jsonl", GOLD,
           {"trace.jsonl": TRACE}, JSON),
    Parser("gold-json-array", ("--gold", "g.json", "--trace", "trace.jsonl", *SCORE), "g.json", _gold_array(GOLD),
           {"trace.jsonl": TRACE}, JSON),
    Parser("gold-utf16", ("--gold", "g.jsonl", "--trace", "trace.jsonl", *SCORE), "g.jsonl", GOLD,
           {"trace.jsonl": TRACE}, JSON, utf16),
    *(Parser(f"gold-compressed{suffix}", ("--gold", f"g.jsonl{suffix}", "--trace", "trace.jsonl", *SCORE),
             f"g.jsonl{suffix}", GOLD, {"trace.jsonl": TRACE}, JSON, COMPRESSORS[suffix], examples=30)
      for suffix in (".gz", ".bz2", ".xz")),
    Parser("trace-jsonl", ("--gold", "gold.jsonl", "--trace", "t.jsonl", *REPORTED), "t.jsonl", TRACE,
           {"gold.jsonl": GOLD}, JSON),
    Parser("trace-compressed.gz", ("--gold", "gold.jsonl", "--trace", "t.jsonl.gz", *SCORE), "t.jsonl.gz", TRACE,
           {"gold.jsonl": GOLD}, JSON, COMPRESSORS[".gz"], examples=30),
    Parser("trace-utf16", ("--gold", "gold.jsonl", "--trace", "t.jsonl", *SCORE), "t.jsonl", TRACE,
           {"gold.jsonl": GOLD}, JSON, utf16, examples=30),
    # The trace presets: each format's example, its first lines.
    *(Parser(f"trace-{name}{'-csv' if suffix == 'csv' else ''}", ("--gold", "gold.jsonl", "--trace", f"t.{suffix}", *SCORE), f"t.{suffix}",
             _example(f"formats/{name}.{suffix}", lines), {"gold.jsonl": FORMATS_GOLD},
             JSON if suffix == "jsonl" else (CSV,))
      for name, suffix, lines in (("openinference", "jsonl", 10), ("otel-genai", "jsonl", 3), ("langchain", "jsonl", 4),
                                  ("ragas", "jsonl", 4), ("ragas", "csv", 5), ("native", "jsonl", 4))),
    Parser("trace-map", ("--gold", "gold.jsonl", "--trace", "t.jsonl", "--map", "claim=answer_json.claim",
                         "--map", "citations=answer_json.citations[*]", *SCORE), "t.jsonl", TRACE,
           {"gold.jsonl": GOLD}, JSON, examples=30),
    # Other evaluators' scores.
    Parser("scores-csv", ("--gold", "gold.jsonl", "--trace", "trace.jsonl", "--scores", "s.csv", *REPORTED), "s.csv",
           SCORES_CSV, {"gold.jsonl": GOLD, "trace.jsonl": TRACE}, (CSV,)),
    Parser("scores-jsonl", ("--gold", "gold.jsonl", "--trace", "trace.jsonl", "--scores", "s.jsonl", *SCORE),
           "s.jsonl", SCORES_JSONL, {"gold.jsonl": GOLD, "trace.jsonl": TRACE}, JSON),
    # Settings files.
    Parser("gates-toml", ("--gold", "gold.jsonl", "--trace", "trace.jsonl", "--gates-file", "gates.toml", "--by",
                          "category", *REPORTED), "gates.toml", SCORE_GATES,
           {"gold.jsonl": PRODUCT_GOLD, "trace.jsonl": PRODUCT_TRACE}, TOML, examples=80),
    Parser("pyproject-toml", ("--gold", "gold.jsonl", "--trace", "trace.jsonl", *SCORE), "pyproject.toml",
           b"[project]\nname = \"x\"\n\n[tool.ragscore.scoring]\nk = 3\nrefusal_tokens = [\"not in context\"]\n"
           b"\n[tool.ragscore.gates]\nprecision = 0.5\n", {"gold.jsonl": GOLD, "trace.jsonl": TRACE}, TOML, examples=40),
    Parser("stage-gates-toml", ("classify", "--gold", "g.jsonl", "--pred", "p.jsonl", "--gates-file", "gates.toml",
                                "--format", "json", "-q"), "gates.toml", STAGE_GATES,
           {"g.jsonl": STAGES["classify_gold.jsonl"], "p.jsonl": STAGES["classify_pred.jsonl"]}, TOML, examples=80),
    Parser("monitor-gates-toml", ("monitor", "--trace", "today.jsonl", "--gates-file", "gates.toml", "--format",
                                  "json", "-q"), "gates.toml", MONITOR_GATES, {"today.jsonl": TODAY}, TOML),
    # Partial results, as merge reads them.
    Parser("partial-json", ("merge", "p.json", "--per-question", "--format", "json", "-q", "--html", "out.html"),
           "p.json", b"", {"gold.jsonl": PRODUCT_GOLD, "trace.jsonl": PRODUCT_TRACE}, JSON, examples=80,
           prepare=_partial),
    # Suites and their history.
    Parser("suite-toml", ("run", "suite.toml", "--format", "text", "-q"), "suite.toml", SUITE,
           {"gold.jsonl": GOLD, "trace.jsonl": TRACE, "qrels.txt": QRELS, "run.txt": RUN, **STAGES}, TOML,
           examples=30, task_errors=True),
    Parser("history-dashboard", ("dashboard", "h.jsonl", "--format", "json", "-q", "--html", "out.html"), "h.jsonl",
           HISTORY, {}, JSON, examples=80),
    Parser("history-append", ("run", "suite.toml", "--history", "h.jsonl", "--label", "v9", "--time",
                              "2026-11-25T00:00:00Z", "--format", "none", "-q"), "h.jsonl", HISTORY,
           {"suite.toml": CLASSIFY_SUITE, **STAGES}, JSON, examples=40, task_errors=True, appends="h.jsonl"),
    # qrels: a chunking and a gold set's spans, as ragscore qrels reads them.
    Parser("chunks-qrels", ("qrels", "--gold", "gold.jsonl", "--chunks", "c.jsonl", "--output", "q.txt", "-q"),
           "c.jsonl", QRELS_CHUNKS, {"gold.jsonl": SPANS_GOLD}, JSON, examples=60),
    Parser("gold-spans-qrels", ("qrels", "--gold", "g.jsonl", "--chunks", "chunks.jsonl", "--min-overlap", "10",
                                "--output", "q.txt"), "g.jsonl", SPANS_GOLD, {"chunks.jsonl": QRELS_CHUNKS}, JSON,
           examples=60),
    # trec: qrels (TREC and BEIR) and runs.
    Parser("qrels", ("trec", "q.txt", "run.txt", "-q", "-m", "all_trec"), "q.txt", QRELS, {"run.txt": RUN},
           (SPACES,), examples=100),
    Parser("qrels-beir-tsv", ("trec", "q.tsv", "run.txt", "-m", "ndcg_cut.10", "--format", "json"), "q.tsv",
           BEIR_QRELS, {"run.txt": RUN}, (TSV,), examples=60),
    Parser("run", ("trec", "qrels.txt", "r.txt", "-q", "-m", "all_trec"), "r.txt", RUN, {"qrels.txt": QRELS},
           (SPACES,), examples=100),
    Parser("runs-paired", ("trec", "qrels.txt", "run.txt", "r.txt", "-m", "map", "--bootstrap", "50", "--format",
                           "markdown"), "r.txt", RUN, {"qrels.txt": QRELS, "run.txt": RUN}, (SPACES,), examples=40),
    # The stages: CoNLL, BRAT, TSV/CSV tables and JSON Lines.
    Parser("conll", ("ner", "--gold", "g.conll", "--pred", "p.conll", *STAGE), "g.conll", CONLL,
           {"p.conll": CONLL_PRED}, (SPACES,), examples=80),
    Parser("conll-iobes", ("ner", "--gold", "g.iobes", "--pred", "p.iobes", *STAGE), "g.iobes",
           CONLL.replace(b"I-PER", b"E-PER").replace(b"B-LOC", b"S-LOC"),
           {"p.iobes": CONLL_PRED.replace(b"B-LOC", b"S-LOC")}, (SPACES,), examples=40),
    Parser("brat", ("ner", "--gold", "gold", "--pred", "pred", *STAGE), "gold/doc1.ann", BRAT_GOLD,
           {"gold/doc1.txt": BRAT_TEXT, "pred/doc1.txt": BRAT_TEXT, "pred/doc1.ann": BRAT_PRED}, (TSV, SPACES),
           examples=80),
    Parser("brat-text", ("ner", "--gold", "gold", "--pred", "pred", *STAGE), "gold/doc1.txt", BRAT_TEXT,
           {"gold/doc1.ann": BRAT_GOLD, "pred/doc1.txt": BRAT_TEXT, "pred/doc1.ann": BRAT_PRED}, (), examples=30),
    Parser("classify-tsv", ("classify", "--gold", "g.tsv", "--pred", "p.csv", *STAGE), "g.tsv", CLASSIFY_TSV,
           {"p.csv": CLASSIFY_CSV}, (TSV,), examples=80),
    Parser("classify-csv", ("classify", "--gold", "g.tsv", "--pred", "p.csv", *STAGE), "p.csv", CLASSIFY_CSV,
           {"g.tsv": CLASSIFY_TSV}, (CSV,), examples=60),
    Parser("link-gold-tsv", ("link", "--gold", "g.tsv", "--pred", "p.tsv", *STAGE), "g.tsv", LINK_GOLD_TSV,
           {"p.tsv": LINK_PRED_TSV}, (TSV,), examples=60),
    Parser("link-pred-tsv", ("link", "--gold", "g.tsv", "--pred", "p.tsv", *STAGE), "p.tsv", LINK_PRED_TSV,
           {"g.tsv": LINK_GOLD_TSV}, (TSV,), examples=60),
    *(Parser(f"{stage}-{role}-jsonl", (stage, "--gold", "g.jsonl", "--pred", "p.jsonl", *STAGE), f"{role[0]}.jsonl",
             STAGES[f"{stage}_{role}.jsonl"], {f"{other[0]}.jsonl": STAGES[f"{stage}_{other}.jsonl"]}, JSON,
             examples=50)
      for stage in ("ner", "classify", "link") for role, other in (("gold", "pred"), ("pred", "gold"))),
    # monitor: the traces it watches and the baseline.
    Parser("monitor", ("monitor", "--trace", "t.jsonl", "--baseline", "baseline.jsonl", "--min-n", "5", "--format",
                       "json", "-q", "--html", "out.html"), "t.jsonl", TODAY, {"baseline.jsonl": BASELINE}, JSON,
           examples=60),
    Parser("monitor-openmetrics", ("monitor", "--trace", "t.jsonl", "--window", "1m", "--format", "openmetrics", "-q"),
           "t.jsonl", TODAY, {}, JSON, examples=40),
    # Paths of score, compare, validate and power past the readers: repeats, operations, every metric, a baseline.
    Parser("trace-repeats", ("--gold", "gold.jsonl", "--trace", "t.jsonl", "--repeats", "samples", "--pass-k", "1,3",
                             "--gates", "pass^3=0.5,min_pass_rate=0.6", *REPORTED), "t.jsonl",
           _example("repeats/trace.jsonl"), {"gold.jsonl": _example("repeats/gold.jsonl")}, JSON, examples=40),
    Parser("trace-operations", ("--gold", "gold.jsonl", "--trace", "t.jsonl", "--gates",
                                "latency_p95=1000,cost_total=0.01", *REPORTED), "t.jsonl",
           _example("operations/trace.jsonl", 8), {"gold.jsonl": _example("operations/gold.jsonl", 8)}, JSON,
           examples=40),
    Parser("trace-every-metric", ("--gold", "gold.jsonl", "--trace", "t.jsonl", "--metrics", "all", "--by", "category",
                                  "--bootstrap", "50", "--explain", "Q003", *REPORTED), "t.jsonl", PRODUCT_TRACE,
           {"gold.jsonl": PRODUCT_GOLD}, JSON, examples=30),
    Parser("gold-every-metric", ("--gold", "g.jsonl", "--trace", "trace.jsonl", "--metrics", "all", "--by",
                                 "tags.lang", "--bootstrap", "50", "--only-failures", *REPORTED), "g.jsonl", PRODUCT_GOLD,
           {"trace.jsonl": PRODUCT_TRACE}, JSON, examples=40),
    Parser("compare-baseline", ("compare", "--gold", "gold.jsonl", "--baseline", "b.jsonl", "--trace", "trace.jsonl",
                                "--bootstrap", "50", "--format", "markdown", "-q", "--json", "out.json"), "b.jsonl",
           _example("product/baseline.jsonl", 8), {"gold.jsonl": PRODUCT_GOLD, "trace.jsonl": PRODUCT_TRACE}, JSON,
           examples=40),
    Parser("compare-baseline-report", ("compare", "--gold", "gold.jsonl", "--baseline-report", "base.json", "--trace",
                                       "trace.jsonl", "--format", "json", "-q"), "base.json", b"",
           {"gold.jsonl": PRODUCT_GOLD, "trace.jsonl": PRODUCT_TRACE}, JSON, examples=40, prepare=_report),
    Parser("compare-several", ("compare", "--gold", "gold.jsonl", "v1.jsonl", "v2.jsonl", "v3.jsonl", "--bootstrap",
                               "50", "--format", "markdown", "-q", "--html", "out.html"), "v3.jsonl",
           _example("several/v3.jsonl", 12),
           {"gold.jsonl": _example("several/gold.jsonl", 12), "v1.jsonl": _example("several/v1.jsonl", 12),
            "v2.jsonl": _example("several/v2.jsonl", 12)}, JSON, examples=30),
    Parser("validate-gold", ("validate", "--gold", "g.jsonl", "--trace", "trace.jsonl"), "g.jsonl", PRODUCT_GOLD,
           {"trace.jsonl": PRODUCT_TRACE}, JSON, examples=40, findings=True),
    Parser("validate-trace", ("validate", "--gold", "gold.jsonl", "--trace", "t.jsonl"), "t.jsonl", PRODUCT_TRACE,
           {"gold.jsonl": PRODUCT_GOLD}, JSON, examples=40, findings=True),
    Parser("power", ("power", "--gold", "gold.jsonl", "--trace", "t.jsonl", "--format", "markdown", "-q"), "t.jsonl",
           PRODUCT_TRACE, {"gold.jsonl": PRODUCT_GOLD}, JSON, examples=30),
    # The gold set as agree and split read it.
    Parser("split", ("split", "--gold", "g.jsonl", "--by", "category", "--out", "out", "-q"), "g.jsonl", PRODUCT_GOLD,
           {}, JSON, examples=30),
    Parser("agree", ("agree", "a.jsonl", "b.jsonl", "--field", "category", "--format", "json", "-q"), "b.jsonl",
           PRODUCT_GOLD, {"a.jsonl": PRODUCT_GOLD}, JSON, examples=40),
    # A judge's scores (its header: the scales) and human labels, as agree --judge reads them.
    Parser("agree-judge", ("agree", "--judge", "j.jsonl", "--human", "h.jsonl", "--gates", "kappa_relevance=0.5",
                           "--format", "markdown", "--json", "out.json"), "j.jsonl", JUDGE_SCORES,
           {"h.jsonl": JUDGE_LABELS}, JSON, examples=40),
    Parser("agree-labels", ("agree", "--judge", "j.jsonl", "--human", "h.jsonl", "--format", "json", "-q"), "h.jsonl",
           JUDGE_LABELS, {"j.jsonl": JUDGE_SCORES}, JSON, examples=40),
]


def _fuzz(parser: Parser, folder: Path, examples: int) -> None:
    for name, data in parser.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    start = parser.prepare(folder) if parser.prepare is not None else parser.seed
    target = folder / parser.target
    target.parent.mkdir(parents=True, exist_ok=True)
    where = f"{parser.name}: ragscore {' '.join(parser.argv)}"
    reports = [folder / path for option, path in zip(parser.argv, parser.argv[1:], strict=False) if option in REPORTS]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    @seed(zlib.crc32(parser.name.encode()))
    @settings(max_examples=examples, deadline=DEADLINE, database=None, print_blob=False,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
    @given(mutated(start, parser.ops, parser.encode))
    def run(data: bytes) -> None:
        target.write_bytes(data)
        for report in reports:
            shutil.rmtree(report) if report.is_dir() else report.unlink(missing_ok=True)
        outcome = bounded_run(folder, parser.argv)
        check_outcome(outcome, where, parser.task_errors, parser.findings)
        # No input is written to, whatever the mutated file says (a suite's task may name any path).
        changed = [name for name, data in parser.files.items() if (folder / name).read_bytes() != data]
        if parser.target != parser.appends and target.read_bytes() != data:
            changed.append(parser.target)
        assert not changed, f"{where}: wrote to its input {changed[0]}"
        if outcome.status == 2 and not parser.task_errors:  # an error writes no report, not even half of one
            assert not [r.name for r in reports if r.exists()], f"{where}: {outcome.err}"

    run()
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) * 1024  # kilobytes on Linux
    assert grown < MEMORY_BOUND, f"{where}: the peak resident size grew by {grown >> 20} MiB"


@pytest.mark.parametrize("parser", PARSERS, ids=str)
def test_parser_exits_0_1_or_2_with_one_line(parser: Parser, tmp_path: Path) -> None:
    _fuzz(parser, tmp_path, parser.examples)


@pytest.mark.slow
@pytest.mark.parametrize("parser", PARSERS, ids=str)
def test_parser_exits_0_1_or_2_with_one_line_at_length(parser: Parser, tmp_path: Path) -> None:
    _fuzz(parser, tmp_path, parser.examples * SLOW_FACTOR)


def test_every_parser_starts_from_a_valid_file(tmp_path: Path) -> None:
    """The seeds are valid: a mutation, not the seed, is what a failure comes from."""
    for parser in PARSERS:
        folder = tmp_path / parser.name
        folder.mkdir()
        for name, data in parser.files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        start = parser.prepare(folder) if parser.prepare is not None else parser.seed
        (folder / parser.target).parent.mkdir(parents=True, exist_ok=True)
        (folder / parser.target).write_bytes(parser.encode(start) if parser.encode else start)
        outcome = bounded_run(folder, parser.argv)
        assert outcome.status in (0, 1), f"{parser.name}: {outcome.err}"


def test_the_parsers_are_distinct() -> None:
    assert len({p.name for p in PARSERS}) == len(PARSERS)


# ---- what the fuzzing found, minimized ---------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    """One input the fuzzing found (minimized), and its exact outcome: the status and standard
    error (whole, or its start where the message's wording is the fix's to choose). The input is
    bytes, or an edit of the parser's seed (a partial, which ragscore makes): a JSON path and the
    text of the value put there."""

    parser: str
    data: bytes | tuple[tuple[str | int, ...], str]
    status: int
    err: str

    def __str__(self) -> str:
        return f"{self.parser}:{self.data[0] if isinstance(self.data, tuple) else self.data[:40]!r}"

    def input(self, seed: bytes) -> bytes:
        if isinstance(self.data, bytes):
            return self.data
        path, value = self.data
        doc = json.loads(seed)
        container = doc
        for key in path[:-1]:
            container = container[key]
        container[path[-1]] = Raw(value)
        return dump(doc).encode()


SPAN_ID_LIST = json.loads(_example("formats/openinference.jsonl", 1))
SPAN_ID_LIST["context"]["span_id"] = ["5fed0cfd42b14477"]

REGRESSIONS: list[Case] = [
    # A row shorter than the header (stages/standoff.py: KeyError, status 3).
    Case("link-gold-tsv", b"id\tmention\tkb_id\nm", 2, "ragscore: error: g.tsv:2:"),
    Case("link-pred-tsv", b"id\tkb_id\tscore\nm1\tQ1\t0.9\nm", 2, "ragscore: error: p.tsv:3:"),
    Case("classify-csv", b"id,label\nm1,PER\nNaN", 2, "ragscore: error: p.csv:3:"),
    Case("classify-tsv", b"id\tlabel\nPER\nm2\tLOC\n", 2, "ragscore: error: g.tsv:2:"),
    # A header naming a column twice (the last one was read).
    Case("classify-tsv", b"id\tid\tlabel\nm1\tPER\n", 2,
         'ragscore: error: g.tsv:1:4: the column "id" appears twice (columns 1 and 2)\n'),
    # An OpenInference span whose span_id is a list (TypeError, status 3).
    # A history line holding an integer of 5,000 digits, or nested 100,000 deep (ValueError and
    # RecursionError, status 3, before issue 31); torn off as the last line, it is a run cut short.
    Case("history-dashboard", HISTORY.splitlines()[0][:-1] + b', "x": ' + b"9" * 5000 + b"}\n", 2,
         "ragscore: error: h.jsonl:1: JSON with an integer of too many digits to read: not a ragscore history line\n"),
    Case("history-dashboard", HISTORY.splitlines()[0][:-1] + b', "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n", 2,
         "ragscore: error: h.jsonl:1: JSON nested too deeply to read: not a ragscore history line\n"),
    Case("history-append", HISTORY.splitlines()[0][:-1] + b', "x": ' + b"9" * 5000 + b"}\n", 2,
         'ragscore: error: --history "h.jsonl": is not a ragscore history (h.jsonl:1: JSON with an integer of too many '
         "digits to read: not a ragscore history line); name a new file or a history ragscore run wrote\n"),
    Case("history-dashboard", HISTORY.splitlines()[0] + b"\n" + HISTORY.splitlines()[1][:-1] + b', "x": ' + b"9" * 5000,
         0, ""),
    # A trace at ts 147 among traces of 2025 (MemoryError past the bound, before issue 31).
    Case("monitor", TODAY.replace(b'"ts": 1763942547', b'"ts": 147', 1), 2,
         "ragscore: error: --window: the traces of t.jsonl span 489,985 windows of 3,600 seconds (from "
         "1970-01-01T00:00:00Z to 2025-11-24T01:00:00Z), more than the 20,000 a report holds: choose a wider window\n"),
    # Partials edited by hand (before issue 31: OverflowError, StopIteration, MemoryError, status 3).
    Case("partial-json", (("result", "rows", 1, 7, 0, 11), "-Infinity"), 2,
         'ragscore: error: p.json: a damaged ragscore partial: "result.rows[1][7][0][11]" (a row\'s family_rows): '
         'expected a number (null for NaN, "inf" or "-inf"), got -Infinity\n'),
    Case("partial-json", (("traces",), "{}"), 2,
         'ragscore: error: p.json: a damaged ragscore partial: "traces" name the traces of 0 parts, for the 1 it covers\n'),
    Case("partial-json", (("parts",), "1000000000000"), 2,
         'ragscore: error: p.json: a damaged ragscore partial: "parts": expected a count of at most 4,294,967,296, '
         "got 1000000000000\n"),
    Case("partial-json", (("settings", "hybrid_alpha"), "NaN"), 2,
         'ragscore: error: p.json: a damaged ragscore partial: [settings] expected "hybrid_alpha" to be a number from 0 '
         "to 1, got nan\n"),
    Case("trace-openinference", json.dumps(SPAN_ID_LIST).encode() + b"\n", 2,
         'ragscore: error: t.jsonl:1: expected the span id ("context": {"span_id": ...}, "context.span_id", "span_id" or '
         '"spanId") to be a string, got an array (read as openinference, detected from the first record; '
         "--trace-format names the format)\n"),
]


@pytest.mark.parametrize("case", REGRESSIONS, ids=str)
def test_what_the_fuzzing_found(case: Case, tmp_path: Path) -> None:
    parser = next(p for p in PARSERS if p.name == case.parser)
    for name, data in parser.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    start = parser.prepare(tmp_path) if parser.prepare is not None else parser.seed
    (tmp_path / parser.target).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / parser.target).write_bytes(case.input(start))
    outcome = bounded_run(tmp_path, parser.argv)
    check_outcome(outcome, case.parser, parser.task_errors, parser.findings)
    assert outcome.status == case.status and outcome.err.startswith(case.err), outcome.err


# ---- the harness's own teeth ------------------------------------------------------------------------

@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is enforced on Linux")
def test_the_memory_bound_stops_a_runaway_allocation() -> None:
    with pytest.raises(MemoryError), memory_bound():
        bytearray(2 * MEMORY_BOUND)
    assert len(bytearray(2 * MEMORY_BOUND)) == 2 * MEMORY_BOUND  # and it is lifted after


def test_the_alarm_stops_a_run_that_would_not_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fuzzing, "HANG_SECONDS", 0.2)
    monkeypatch.setattr(fuzzing, "main", lambda argv: time.sleep(5))
    with pytest.raises(fuzzing.Hung, match="the run took more than 0.2 s"):
        bounded_run(tmp_path, [])


@pytest.mark.parametrize(("outcome", "fault"), [
    (Outcome(3, "", "ragscore: internal error (a bug in ragscore; please report it with this output):\n"), "exit 3"),
    (Outcome(2, "", "ragscore: error: a\nragscore: error: b\n"), "exit 2"),
    (Outcome(2, "", "ragscore: note: x\nragscore: error: a\n"), "exit 2"),
    (Outcome(2, "{}", "ragscore: error: a\n"), "exit 2"),
    (Outcome(2, "", "usage: ragscore\nragscore: error: a\n"), "exit 2"),
    (Outcome(2, "", "ragscore: error: a"), "exit 2"),
    (Outcome(0, "", "Traceback (most recent call last):\n"), "exit 0"),
    (Outcome(1, "", "warning: x\n"), "exit 1"),
    (Outcome(3, "", "ragscore: internal error\nMemoryError\n"), "beyond the memory bound (512 MiB)"),
])
def test_a_run_breaking_a_promise_fails_the_check(outcome: Outcome, fault: str) -> None:
    with pytest.raises(AssertionError, match=re.escape(f"where: {fault}")):
        check_outcome(outcome, "where")


@pytest.mark.parametrize("outcome", [Outcome(0, "{}", ""), Outcome(1, "", "ragscore: note: x\nragscore: fail: y\n"),
                                     Outcome(2, "", "ragscore: error: g.jsonl:1: expected JSON\n")])
def test_a_run_keeping_the_promises_passes_the_check(outcome: Outcome) -> None:
    check_outcome(outcome, "where")


def test_a_suite_reports_a_task_error_among_the_others() -> None:
    check_outcome(Outcome(2, "table\n", "ragscore: qa: error: g.jsonl:1: x\n"), "run", task_errors=True)
    with pytest.raises(AssertionError):
        check_outcome(Outcome(2, "table\n", "ragscore: qa: note\n"), "run", task_errors=True)
