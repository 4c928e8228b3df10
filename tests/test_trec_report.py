"""ragscore trec's reports, gates and comparisons of several runs (issue 16).

The text output stays trec_eval's, byte for byte; the reports hold the same values under score's
names; the paired tests are those of ``ragscore compare`` (metrics/stats.py) on the queries'
values paired by qid; gates are read and worded as score's and the stage commands' are.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import DATA, EXAMPLES
from ragscore.metrics.stats import PairSums, holm, paired_bootstrap, paired_normal
from ragscore.trec.document import load_trec_schema
from ragscore.trec.files import read_qrels, read_run
from ragscore.trec.measures import evaluate, parse_measures
from ragscore.trec.names import resolve

TREC = DATA / "trec_eval_test"

try:
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(load_trec_schema())
    VALIDATOR = Draft202012Validator(load_trec_schema())
except ImportError:  # the test extra is not installed
    VALIDATOR = None


def report(text: str) -> dict:
    """Parse a JSON trec report and check it against the shipped schema."""
    doc = json.loads(text)
    if VALIDATOR is not None:
        errors = sorted(VALIDATOR.iter_errors(doc), key=str)
        assert not errors, f"the trec report breaks its schema: {errors[0].message}"
    return doc


@pytest.fixture
def trec_dir(monkeypatch):
    monkeypatch.chdir(TREC)
    return TREC


def _all_lines(text: str) -> dict[str, str]:
    """trec_eval's summary lines: measure -> value as printed."""
    return {name.rstrip(): value for name, topic, value in (line.split("\t") for line in text.splitlines())
            if topic == "all"}


def _printed(value: float | int) -> str:
    return str(value) if isinstance(value, int) else f"{value:6.4f}"


# --- the text output stays trec_eval's ----------------------------------------------------------------

def test_gates_leave_the_text_output_byte_for_byte(ragscore, trec_dir):
    run = ragscore("trec", "--gates", "ndcg@10>=0.2,P_5>=0.9", "qrels.test", "results.test")
    assert run.out == (TREC / "out.test").read_text()
    assert run.status == 1  # precision@5 is 0.2667
    assert run.err.splitlines()[-1] == "ragscore: FAIL: 1 of 2 gates failed: precision@5"


def test_a_gated_measure_outside_m_is_computed_not_printed(ragscore, trec_dir):
    plain = ragscore("trec", "-q", "-m", "P.5", "qrels.test", "results.test")
    gated = ragscore("trec", "-q", "-m", "P.5", "--gates", "P_10>=0,ndcg@10>=0", "qrels.test", "results.test")
    assert gated.out == plain.out and "P_10" not in gated.out
    assert (gated.status, plain.err) == (0, "")


# --- the reports hold trec_eval's values ------------------------------------------------------------------

@pytest.mark.parametrize("options", [
    ["-m", "all_trec"],
    ["-m", "all_trec", "-c", "-M", "100"],
    ["-m", "all_trec", "-l", "2"],
    [],
    ["-m", "iprec_at_recall_nearest", "-m", "iprec_at_recall.0.25", "-m", "P.7", "-m", "map_cut.3,20"],
])
@pytest.mark.parametrize("run_file", ["results.test", "results.trunc"])
def test_report_values_are_the_text_outputs(ragscore, trec_dir, options, run_file):
    qrels = "qrels.rel_level" if "-l" in options else "qrels.test"
    text = ragscore("trec", "-q", *options, qrels, run_file)
    doc = report(ragscore("trec", "-q", *options, "--format", "json", qrels, run_file).out)
    printed = _all_lines(text.out)
    assert {doc["trec_names"][name]: _printed(value) for name, value in doc["metrics"].items()
            if name in doc["trec_names"]} == {k: v for k, v in printed.items() if k not in ("runid", "num_q")}
    assert doc["counts"]["scored"] == int(printed.get("num_q", doc["counts"]["scored"]))
    # exactly the values trec_eval's evaluation gives, not only to four decimals
    q, r = read_qrels(qrels), read_run(run_file, 100 if "-M" in options else None)
    measures = [value for option, value in zip(options, options[1:], strict=False) if option == "-m"]
    ev = evaluate(q.topics, r.topics, r.name, parse_measures(measures),
                  2 if "-l" in options else 1, "-c" in options)
    names = [name for name in doc["metrics"] if name in doc["trec_names"]]
    assert [doc["metrics"][name] for name in names] == [value for _, value, _ in ev.summary[1:]]
    # -q: each query's values, as trec_eval prints them (gm_map is not printed per query)
    per_query = {(name.rstrip(), topic): value for name, topic, value in (line.split("\t") for line in
                                                                          text.out.splitlines()) if topic != "all"}
    assert per_query == {(doc["trec_names"][name], entry["qid"]): _printed(value)
                         for entry in doc["queries"] for name, value in entry["metrics"].items()}


def test_names_are_scores_where_score_has_them(ragscore, trec_dir):
    doc = report(ragscore("trec", "-m", "all_trec", "--format", "json", "qrels.test", "results.test").out)
    names = doc["trec_names"]
    for ours, theirs in [("precision@10", "P_10"), ("recall@100", "recall_100"), ("hit@5", "success_5"),
                         ("ndcg@10", "ndcg_cut_10"), ("map@10", "map_cut_10"), ("mrr", "recip_rank"),
                         ("rprec", "Rprec"), ("map", "map"), ("bpref", "bpref"), ("ndcg", "ndcg"),
                         ("gm_map", "gm_map"), ("iprec_at_recall_0.10", "iprec_at_recall_0.10"), ("set_F", "set_F"),
                         ("infAP", "infAP"), ("num_rel_ret", "num_rel_ret")]:
        assert names[ours] == theirs
    assert list(doc["metrics"])[-2:] == ["missing", "unjudged"]
    assert doc["metrics"]["num_ret"] == 1500 and isinstance(doc["metrics"]["num_ret"], int)
    # every name resolves back to its measure, both ways
    for ours, theirs in names.items():
        assert resolve(ours).name == ours and resolve(theirs).name == ours


def test_inputs_counts_and_settings(ragscore, trec_dir):
    doc = report(ragscore("trec", "-c", "-M", "10", "--format", "json", str(TREC / "qrels.test"), "results.trunc").out)
    assert doc["kind"] == "trec" and doc["run_id"] == "STANDARD"
    assert doc["inputs"] == {
        "qrels": {"path": "qrels.test", "sha256": hashlib.sha256((TREC / "qrels.test").read_bytes()).hexdigest()},
        "run": {"path": "results.trunc", "sha256": hashlib.sha256((TREC / "results.trunc").read_bytes()).hexdigest()},
    }
    assert doc["counts"] == {"judged": 3, "ranked": 2, "scored": 3, "missing": 1, "unjudged": 0}
    assert doc["settings"] == {"measures": ["official"], "level": 1, "complete": True, "max_docs": 10}
    assert doc["signature"].endswith('|trec|measures:["official"]|level:1|complete:yes|max_docs:10')


def test_missing_and_unjudged_queries_are_counted_and_noted(ragscore, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.txt").write_text("1 0 a 1\n2 0 b 1\n3 0 c 1\n")
    (tmp_path / "r.txt").write_text("1 Q0 a 1 1.0 r\n9 Q0 a 1 1.0 r\n")
    run = ragscore("trec", "--format", "json", "q.txt", "r.txt")
    doc = report(run.out)
    assert doc["counts"] == {"judged": 3, "ranked": 2, "scored": 1, "missing": 2, "unjudged": 1}
    assert (doc["metrics"]["missing"], doc["metrics"]["unjudged"], doc["metrics"]["map"]) == (2, 1, 1.0)
    assert run.err.splitlines() == [
        "ragscore: r: 2 judged queries have no ranking (missing: left out of the means as trec_eval leaves them; "
        "-c scores them 0): 2, 3",
        "ragscore: r: 1 ranked query has no judgments (unjudged: ignored, as trec_eval ignores them): 9"]
    assert ragscore("trec", "--format", "json", "--quiet", "q.txt", "r.txt").err == ""
    assert ragscore("trec", "q.txt", "r.txt").err == ""  # trec_eval's text: nothing on standard error
    gated = ragscore("trec", "--format", "none", "--quiet", "--gates", "missing=0", "q.txt", "r.txt")
    assert gated.status == 1  # a bare number is a maximum for a count


# --- gates -------------------------------------------------------------------------------------------

def test_gates_pass_fail_warn_and_exit_statuses(ragscore, trec_dir):
    def doc_of(*args):
        run = ragscore("trec", "-m", "map", "-m", "ndcg_cut.10", "--format", "json", *args, "qrels.test", "results.test")
        return run.status, report(run.out)

    status, doc = doc_of("--gates", "map>=0.15,ndcg@10=0.3")
    assert status == 0 and doc["pass"] is True
    assert doc["gates"]["ndcg@10"] == {"op": ">=", "threshold": 0.3, "warn": None, "value": doc["metrics"]["ndcg@10"],
                                       "status": "pass", "source": "--gates"}
    status, doc = doc_of("--gates", "map>=0.2")
    assert (status, doc["pass"], doc["gates"]["map"]["status"]) == (1, False, "fail")
    assert doc_of("--gates", "map>=0.2", "--no-fail")[0] == 0
    assert doc_of("--gates", "map>=0.2,map=off")[1]["gates"] == {}
    # trec_eval's name gates the same metric, under score's name
    status, doc = doc_of("--gates", "recip_rank<0.5,P_5>=0.25")
    assert status == 0 and set(doc["gates"]) == {"mrr", "precision@5"} and doc["metrics"]["precision@5"] == 0.8 / 3


def test_gates_from_gates_toml_pyproject_and_a_gates_file(ragscore, tmp_path, monkeypatch):
    for name in ("qrels.test", "results.test"):
        (tmp_path / name).write_bytes((TREC / name).read_bytes())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.ragscore.trec.gates]\nmap = 0.1\nbpref = 0.1\n')
    (tmp_path / "gates.toml").write_text('[trec.gates]\nmap = { min = 0.15, warn = 0.2 }\nP_10 = ">= 0.25"\n')
    run = ragscore("trec", "--format", "json", "--gates", "bpref=off", "qrels.test", "results.test")
    doc = report(run.out)
    assert run.status == 0
    assert {name: (g["op"], g["threshold"], g["warn"], g["status"], g["source"]) for name, g in doc["gates"].items()} == {
        "map": (">=", 0.15, 0.2, "warn", "gates.toml"), "precision@10": (">=", 0.25, None, "pass", "gates.toml")}
    assert "ragscore: WARN    map = 0.1785 (gate >= 0.15)" in run.err
    (tmp_path / "other.toml").write_text("[trec.gates]\nndcg = 0.9\n")
    other = ragscore("trec", "--gates-file", "other.toml", "--format", "json", "qrels.test", "results.test")
    assert other.status == 1 and set(report(other.out)["gates"]) == {"map", "bpref", "ndcg"}
    # ragscore score reads the same gates.toml and ignores its [trec] table
    (tmp_path / "pyproject.toml").unlink()
    scored = ragscore("score", "--gold", EXAMPLES / "gold.jsonl", "--trace", EXAMPLES / "trace.jsonl", "-q")
    assert scored.status == 0, scored.err


@pytest.mark.parametrize(("gates", "message"), [
    ("ndgc@10>=0.5", '--gates: unknown trec metric "ndgc@10"; did you mean "ndcg@10"?'),
    ("P10>=0.5", '--gates: unknown trec metric "P10"; did you mean "P_10"?'),
    ("precision>=0.5", '--gates: unknown trec metric "precision"; did you mean "precision@10"?'),
    ("map=5", '--gates: "map" is from 0 to 1: a bound of 5 cannot be meant (0.05, not 5?)'),
    ("P_5=40", '--gates: "P_5" is from 0 to 1: a bound of 40 cannot be meant (0.4, not 40?)'),
    ("map", '--gates: expected METRIC=VALUE or METRIC>=VALUE (also >, <=, <), got "map"'),
    ("map>=high", '--gates: expected a number for "map", got "high"'),
])
def test_a_bad_gate_is_a_usage_error(ragscore, trec_dir, gates, message):
    run = ragscore("trec", "--format", "json", "--gates", gates, "qrels.test", "results.test")
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {message}\n")


def test_a_bad_trec_table_is_an_error_at_its_line(ragscore, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.txt").write_text("1 0 a 1\n")
    (tmp_path / "r.txt").write_text("1 Q0 a 1 1.0 r\n")
    (tmp_path / "gates.toml").write_text("[trec]\ngate = 1\n")
    assert ragscore("trec", "q.txt", "r.txt").err == (
        'ragscore: error: gates.toml:2: [trec] unknown key "gate"; did you mean "gates"? (known: gates)\n')
    (tmp_path / "gates.toml").write_text("[trec.gates]\nmap = 0.1\n[trec.other]\nx = 1\n")
    assert ragscore("trec", "q.txt", "r.txt").err == (
        'ragscore: error: gates.toml:3: [trec] unknown key "other" (known: gates)\n')
    (tmp_path / "gates.toml").write_text("[trec.gates]\nmap = 0.5\nmrrr = 0.5\n")
    assert ragscore("trec", "q.txt", "r.txt").err == (
        'ragscore: error: gates.toml:3: unknown trec metric "mrrr"; did you mean "mrr"?\n')


# --- several runs ------------------------------------------------------------------------------------

def _synthetic(folder: Path, queries: int = 40, runs: int = 3, seed: int = 7, skip: bool = True) -> list[str]:
    """Write graded qrels and runs with ties; with ``skip`` each run leaves a few judged queries out."""
    rng = random.Random(seed)
    with open(folder / "qrels.txt", "w") as qrels:
        for q in range(queries):
            for d in rng.sample(range(60), 25):
                qrels.write(f"q{q} 0 d{d} {rng.choice([0, 0, 1, 1, 2, 3])}\n")
    names = []
    for n in range(runs):
        name = f"run{n}.txt"
        with open(folder / name, "w") as run:
            for q in range(queries):
                if skip and rng.random() < 0.1:
                    continue
                for rank, d in enumerate(rng.sample(range(80), 30), 1):
                    run.write(f"q{q} Q0 d{d} {rank} {rng.randint(0, 9) + n * rng.random():.3f} tag{n}\n")
        names.append(name)
    return names


def _mean(values):
    present = [v for v in values if v is not None]
    return math.fsum(present) / len(present) if present else None


@pytest.mark.parametrize("complete", [False, True])
def test_paired_p_values_are_stats_on_the_queries_paired_by_qid(ragscore, tmp_path, monkeypatch, complete):
    monkeypatch.chdir(tmp_path)
    runs = _synthetic(tmp_path)
    flags = ["-c"] if complete else []
    measures = ["-m", "map", "-m", "P.5,10", "-m", "ndcg_cut.10", "-m", "recip_rank", "-m", "gm_map"]
    doc = report(ragscore("trec", *flags, *measures, "--format", "json", "--bootstrap", "300", "--seed", "s",
                          "qrels.txt", *runs).out)
    assert doc["kind"] == "trec_compare" and [c["candidate"] for c in doc["comparisons"]] == [1, 2]
    qrels = read_qrels("qrels.txt")
    evs = [evaluate(qrels.topics, (r := read_run(name)).topics, r.name, parse_measures(measures[1::2]), 1, complete)
           for name in runs]
    qids = sorted(q for q in qrels.topics if complete or any(q in ev.per_query for ev in evs))
    assert doc["counts"] == {"judged": 40, "paired": len(qids)}
    index = {doc["trec_names"][name]: name for name in doc["trec_names"]}

    def column(ev, printed):
        return [None if q not in ev.per_query else dict((n, v) for n, v, _ in ev.per_query[q])[printed] for q in qids]

    for comparison in doc["comparisons"]:
        candidate = evs[comparison["candidate"]]
        tested = [p for p in ("map", "P_5", "P_10", "ndcg_cut_10", "recip_rank")]
        expected = {}
        for printed in tested:
            base, cand = column(evs[0], printed), column(candidate, printed)
            assert (None in base + cand) is not complete
            expected[index[printed]] = paired_bootstrap(base, cand, _mean, 0.95, 300, f"s:{index[printed]}")
            # the bootstrap's statistic on the queries as they are is the reported value
            assert _mean(cand) == doc["runs"][comparison["candidate"]]["metrics"][index[printed]]
        adjusted = holm([p for _, p in expected.values()])
        for (name, (interval, p)), p_holm in zip(expected.items(), adjusted, strict=True):
            got = comparison["metrics"][name]
            assert (got["delta_interval"], got["p_value"], got["p_adjusted"], got["method"]) == (
                list(interval), p, p_holm, "bootstrap")
        for untested in ("gm_map", "missing", "unjudged"):
            assert comparison["metrics"][untested]["p_value"] is None
    assert [r["run_id"] for r in doc["runs"]] == ["tag0", "tag1", "tag2"]


def test_many_queries_take_the_normal_approximation(ragscore, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runs = _synthetic(tmp_path, queries=2100, runs=2, skip=False)
    doc = report(ragscore("trec", "-c", "-m", "map", "--format", "json", "qrels.txt", *runs).out)
    qrels = read_qrels("qrels.txt")
    evs = [evaluate(qrels.topics, (r := read_run(name)).topics, r.name, parse_measures(["map"]), 1, True)
           for name in runs]
    base, cand = ([v for q in sorted(ev.per_query) for n, v, _ in ev.per_query[q]] for ev in evs)
    got = doc["comparisons"][0]["metrics"]["map"]
    interval, p = paired_normal(PairSums.of(base, cand), got["delta"], 0.95)
    assert (got["method"], got["delta_interval"], got["p_value"]) == ("normal", list(interval), p)


def test_the_text_output_of_several_runs_is_each_runs_trec_eval_output(ragscore, trec_dir):
    both = ragscore("trec", "-q", "-m", "all_trec", "qrels.test", "results.test", "results.trunc").out
    single = [ragscore("trec", "-q", "-m", "all_trec", "qrels.test", name).out for name in ("results.test",
                                                                                              "results.trunc")]
    lines = [line.split("\t") for line in both.splitlines()]
    assert lines[0] == ["runid                 ", "all", "STANDARD", "STANDARD"]
    for column, text in enumerate(single, 2):
        expected = [line for line in text.splitlines() if not line.startswith("runid")]
        shown = ["\t".join([name, topic, values[column - 2]]) for name, topic, *values in lines[1:]
                 if values[column - 2] != "-"]
        assert shown == expected
    assert "P_5                   \t302\t0.8000\t-" in both  # results.trunc ranks nothing for topic 302
    # without -q nor the default set: no num_q, and a runid header all the same
    picked = ragscore("trec", "-m", "P.5", "qrels.test", "results.test", "results.trunc").out
    assert picked == "runid                 \tall\tSTANDARD\tSTANDARD\nP_5                   \tall\t0.2667\t0.3000\n"


def test_several_runs_are_each_gated(ragscore, trec_dir, tmp_path):
    junit = tmp_path / "gates.xml"
    run = ragscore("trec", "-m", "map", "--gates", "map>=0.16", "--format", "json", "--junit", junit,
                   "qrels.test", "results.test", "results.trunc")
    doc = report(run.out)
    assert run.status == 1 and doc["pass"] is False
    assert [(r["pass"], r["gates"]["map"]["status"]) for r in doc["runs"]] == [(True, "pass"), (False, "fail")]
    cases = {case.get("name"): case.find("failure") is not None for case in ET.parse(junit).iter("testcase")}
    assert cases == {"results.test: map": False, "results.trunc: map": True}
    assert "ragscore: results.trunc: FAIL: 1 of 1 gate failed: map" in run.err


# --- the reports: formats, files, determinism, escaping ------------------------------------------------

@pytest.mark.parametrize("runs", [["results.test"], ["results.test", "results.trunc"]])
def test_same_input_same_bytes_in_every_format(ragscore, trec_dir, tmp_path, runs):
    outputs = []
    for attempt in range(2):
        files = {fmt: tmp_path / f"{attempt}.{fmt}" for fmt in ("json", "markdown", "html", "junit")}
        run = ragscore("trec", "-q", "--gates", "ndcg@10>=0.2", "--format", "none",
                       *(f"--{fmt}={path}" for fmt, path in files.items()), "qrels.test", *runs)
        assert (run.status, run.out) == (0, "")
        outputs.append({fmt: path.read_bytes() for fmt, path in files.items()})
    assert outputs[0] == outputs[1]
    for fmt in ("json", "markdown", "html"):
        assert ragscore("trec", "-q", "--gates", "ndcg@10>=0.2", "--format", fmt, "qrels.test", *runs).out.encode() \
            == outputs[0][fmt]
    report(outputs[0]["json"].decode())
    assert str(TREC) not in "".join(o.decode() for o in outputs[0].values())
    ET.fromstring(outputs[0]["junit"])


def test_markdown_and_html_escape_what_the_input_says(ragscore, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.txt").write_text("1 0 a 1\n2 0 b 1\n")
    (tmp_path / "r1.txt").write_text("1 Q0 a 1 1.0 <script>x</script>|`\n2 Q0 b 1 1.0 <script>x</script>|`\n")
    (tmp_path / "r2.txt").write_text("1 Q0 a 1 1.0 <b>two</b>\n2 Q0 a 1 1.0 <b>two</b>\n")
    for runs in (["r1.txt"], ["r1.txt", "r2.txt"]):
        page = ragscore("trec", "--format", "html", "q.txt", *runs).out
        assert "<script>x" not in page and "<b>two" not in page and "&lt;script&gt;x" in page
        markdown = ragscore("trec", "--format", "markdown", "q.txt", *runs).out
        # in inline code, as compare shows names; elsewhere escaped
        assert not re.search(r"(?<!\\)<", markdown.replace("`<b>two</b>`", ""))
        assert "\\<script\\>x\\</script\\>\\|\\`" in markdown


def test_the_comparison_in_markdown(ragscore, trec_dir):
    text = ragscore("trec", "-m", "map", "-m", "P.5", "--format", "markdown", "qrels.test", "results.test",
                    "results.trunc").out
    assert "| run | path | queries | map | precision@5 | missing | unjudged |" in text
    assert "| `results.test` (baseline) | `results.test` | 3 | 0.1785 | 0.2667 | 0 | 0 |" in text
    assert "## `results.trunc` against `results.test`" in text
    assert "| `missing` | 0 | 1 | +1 ▲ worse |  |  |" in text
    assert "paired bootstrap over 3 queries, paired by qid" in text
    # 0.3 as a mean of three queries and of two differs in its last bit: no change for a reader
    tens = ragscore("trec", "-m", "P.10", "--format", "markdown", "qrels.test", "results.test", "results.trunc").out
    assert "| `precision@10` | 0.3000 | 0.3000 | +0.0000 = |" in tens


@pytest.mark.parametrize(("args", "message"), [
    (["-", "-"], "only one of QRELS and RUN can be '-' (standard input)"),
    (["--json", "results.test", "qrels.test", "results.test"],
     '--json "results.test": is the same file as RUN "results.test"; a report never overwrites an input or another '
     "report"),
    (["--format", "json", "-m", "ndgc", "qrels.test", "results.test"],
     "-m ndgc: unknown measure 'ndgc' (known: num_ret, num_rel, num_rel_ret, map, gm_map, Rprec, bpref, recip_rank, "
     "iprec_at_recall, iprec_at_recall_nearest, P, recall, ndcg, ndcg_cut, map_cut, success, set_P, set_recall, "
     "set_F, infAP, all_trec)"),
])
def test_usage_errors(ragscore, trec_dir, args, message):
    run = ragscore("trec", *args)
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {message}\n")


def test_input_errors_keep_their_place_in_every_format(ragscore, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.txt").write_text("1 0 d1 1\n")
    (tmp_path / "r.txt").write_text("1 Q0 d1 1 1.0 r\n1 Q0 d2 2 x r\n")
    for fmt in ("text", "json", "html"):
        for runs in (["r.txt"], ["r.txt", "r.txt"]):
            run = ragscore("trec", "--format", fmt, "--json", "out.json", "q.txt", *runs)
            assert (run.status, run.out, run.err) == (
                2, "", 'ragscore: error: r.txt:2:11: expected a number as the score, got "x"\n')
            assert not (tmp_path / "out.json").exists()


def test_runs_that_score_no_query(ragscore, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.txt").write_text("1 0 a 1\n2 0 b 1\n")
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "other.txt").write_text("9 Q0 a 1 1.0 r\n")
    text = ragscore("trec", "-m", "map", "-m", "P.5", "q.txt", "empty.txt", "other.txt")
    assert (text.status, text.out) == (0, "runid                 \tall\t\tr\nmap                   \tall\t0.0000\t0.0000\n"
                                          "P_5                   \tall\t0.0000\t0.0000\n")
    doc = report(ragscore("trec", "-m", "map", "--format", "json", "--quiet", "q.txt", "empty.txt", "other.txt").out)
    assert doc["counts"] == {"judged": 2, "paired": 0}
    assert doc["comparisons"][0]["metrics"]["map"]["p_value"] is None
    assert [r["counts"]["missing"] for r in doc["runs"]] == [2, 2]
    markdown = ragscore("trec", "-m", "map", "--format", "markdown", "--quiet", "q.txt", "empty.txt", "other.txt").out
    assert "| `empty.txt` (baseline) | `empty.txt` | 0 | 0.0000 | 2 | 0 |" in markdown  # no run id: its path
    complete = report(ragscore("trec", "-c", "-m", "map", "--format", "json", "q.txt", "empty.txt", "other.txt").out)
    assert complete["counts"]["paired"] == 2 and complete["comparisons"][0]["metrics"]["map"]["p_value"] == 1.0


def test_the_docs_console_example(ragscore, monkeypatch):
    """The docs' `ragscore trec` session is what the commands print, byte for byte."""
    from docs import doc_block

    block = doc_block("$ cd tests/data/trec_eval_test\n")
    commands = re.split(r"^\$ ", block, flags=re.M)[1:]
    monkeypatch.chdir(TREC)
    session = []
    for command in commands:
        line, _, shown = command.partition("\n")
        while line.endswith("\\"):
            more, _, shown = shown.partition("\n")
            line = line[:-1] + more.strip()
        session.append((line, shown))
    assert [line for line, _ in session][0] == "cd tests/data/trec_eval_test"
    status = None
    for line, shown in session[1:]:
        if line == "echo $?":
            assert shown == f"{int(status)}\n"
            continue
        args = [a.strip('"') for a in re.findall(r'"[^"]*"|\S+', line)]
        assert args[:2] == ["ragscore", "trec"]
        run = ragscore(*args[1:])
        status = run.status
        assert run.out == shown, line


def test_runs_shown_alike_keep_their_own_gates(ragscore, monkeypatch):
    # The same run twice (or runs in other folders shown by their file name): every run is named
    # apart, so no run's gates replace another's in the verdict, the tables or JUnit.
    monkeypatch.chdir(TREC)
    run = ragscore("trec", "-m", "ndcg_cut.10", "--gates", "ndcg@10>=0.28", "--format", "markdown", "--quiet",
                   "qrels.test", "results.test", "results.trunc", "results.test")
    assert run.status == 1
    assert "**FAIL**: 1 of 3 gates failed: `results.trunc: ndcg@10`." in run.out
    assert "| results.test (1): ndcg@10 |" in run.out and "| results.test (3): ndcg@10 |" in run.out
