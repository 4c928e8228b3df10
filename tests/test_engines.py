"""The engine examples of examples/distributed/ (issue 17): Dask, Spark and Ray route each trace to
``ragscore.owner(qid, n)`` with their own shuffle, score the parts and merge them; the report is
``ragscore score``'s on the same files, byte for byte but its "inputs".

The engines hand ragscore records, not files: the report's "inputs.trace" names "<trace records>"
(its sha256 the digest of the parts' digests), and the notes quote a trace by its place in its part
and their examples in another order. Everything else is compared as bytes.

Dask runs here (the test extra); Spark runs when pyspark and a Java runtime are installed, Ray when
ray[data] is (the engines extra); they are skipped otherwise, saying which is missing.
"""

from __future__ import annotations

import ast
import gzip
import importlib.util
import os
import random
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, checked_report, write
from test_shards import _gold_and_traces, _lines, _trace

EXAMPLES = ROOT / "examples" / "distributed"
SCRIPTS = ("dask_score.py", "spark_score.py", "ray_score.py")
# A local Spark or Ray listens on the loopback only, and Ray sends no usage statistics.
QUIET = {"SPARK_LOCAL_IP": "127.0.0.1", "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


def _data(folder, n=300, files=6, seed=17):
    """A run over several .jsonl and .jsonl.gz files (a folder deep too): duplicates within and across
    files, unknown qids (an integer one too), missing traces, unreadable ones, blank lines, slices."""
    rng = random.Random(seed)
    gold, traces = _gold_and_traces(n, seed)
    for item in gold:
        item["category"] = rng.choice(["billing", "shipping", "returns"])
        item["reference_answer"] = f"It is fact {item['qid'][1:]}."
    traces += [_trace(4242, "x"), _trace("q0003", "It is fact 3.", ["d3"]), _trace("q0003", "not in context")]
    write(folder / "gold.jsonl", gold)
    lines = _lines(traces).splitlines(keepends=True)
    lines.insert(40, "\n")
    size = -(-len(lines) // files)
    (folder / "logs" / "deep").mkdir(parents=True)
    for k in range(files):
        chunk = "".join(lines[k * size:(k + 1) * size]).encode()
        name = f"logs/{'deep/' if k == files - 1 else ''}t{k}.jsonl"
        if k % 2:
            (folder / f"{name}.gz").write_bytes(gzip.compress(chunk, mtime=0))
        else:
            (folder / name).write_bytes(chunk)
    return "logs/**/*.jsonl*"


INPUTS = re.compile(r'^  "inputs": \{\n(?:    .*\n)*?  \},\n', re.M)
WHERE = re.compile(r"(<trace records>|[\w./-]+\.jsonl(\.gz)?):\d+")


def _same_as_score(ragscore, folder, script, traces, out, status, err, *options):
    """Check the example's report and exit status against ragscore score's on the same files."""
    expected = ragscore("score", "--gold", "gold.jsonl", "--trace", traces, "--json", "expected.json",
                        "--format", "none", *options)
    assert status == expected.status == 1, err  # the default gates fail on this run
    want = (folder / "expected.json").read_text(encoding="utf-8")
    got = (folder / out).read_text(encoding="utf-8")
    assert INPUTS.sub("", got) == INPUTS.sub("", want)  # byte for byte, the inputs aside
    doc, one = checked_report(got), checked_report(want)
    assert doc["inputs"]["gold"] == one["inputs"]["gold"]
    assert doc["inputs"]["trace"]["path"] == "<trace records>"
    assert len(one["inputs"]["trace"]["files"]) == 6
    assert doc["counts"]["duplicate_traces"] > 0 and doc["counts"]["unknown_traces"] > 0 and doc["counts"]["missing"] > 0

    def shown(text, prefix):  # the notes, but where they quote a trace and their examples
        notes = [line.removeprefix(prefix) for line in text.splitlines() if line.startswith(prefix)]
        return [WHERE.sub("TRACE:N", note.split(": e.g.")[0]) for note in notes]

    assert shown(err, f"{script.removesuffix('.py')}: ") == shown(expected.err, "ragscore: ") != []


def _example(folder, script, *args, timeout=300):
    env = {**os.environ, **QUIET, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run([sys.executable, str(EXAMPLES / script), *map(str, args)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stderr


@pytest.mark.parametrize(("parts", "scheduler"), [(5, "processes"), (1, "synchronous"), (3, "threads")])
def test_the_dask_example_gives_the_score_report(ragscore, isolated, parts, scheduler):
    traces = _data(isolated)
    status, err = _example(isolated, "dask_score.py", "gold.jsonl", traces, "dask.json", "--parts", parts,
                           "--metrics", "all", "--scheduler", scheduler)
    _same_as_score(ragscore, isolated, "dask_score.py", traces, "dask.json", status, err, "--metrics", "all")


def test_a_trace_without_a_qid_stops_the_dask_example_naming_its_line(isolated):
    traces = _data(isolated)
    (isolated / "logs" / "t9.jsonl.gz").write_bytes(
        gzip.compress(b'{"qid": "q0001", "answer": "no"}\n{"question": "question 3?", "answer": "It is fact 3."}\n'))
    status, err = _example(isolated, "dask_score.py", "gold.jsonl", traces, "out.json", "--parts", 2,
                           "--scheduler", "synchronous")
    assert status == 2
    assert ('ValueError: logs/t9.jsonl.gz:2: a trace without a "qid" cannot be routed to its part; give every trace '
            "a qid, or score the run in one process (ragscore score)") in err
    assert not (isolated / "out.json").exists()


def _missing_spark():
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (pip install 'ragscore-cli[engines]')"
    if shutil.which("java") is None:
        return "no Java runtime (java) on PATH: Spark needs one"
    return None


@pytest.mark.skipif(_missing_spark() is not None, reason=str(_missing_spark()))
def test_the_spark_example_gives_the_score_report(ragscore, isolated):
    traces = _data(isolated)
    status, err = _example(isolated, "spark_score.py", "gold.jsonl", traces, "spark.json", "--parts", 4,
                           "--metrics", "all", "--master", "local[2]")
    _same_as_score(ragscore, isolated, "spark_score.py", traces, "spark.json", status, err, "--metrics", "all")


def _missing_ray():
    if importlib.util.find_spec("ray") is None or importlib.util.find_spec("pyarrow") is None:
        return "ray[data] is not installed (pip install 'ragscore-cli[engines]')"
    return None


@pytest.mark.skipif(_missing_ray() is not None, reason=str(_missing_ray()))
def test_the_ray_example_gives_the_score_report(ragscore, isolated):
    traces = _data(isolated)
    status, err = _example(isolated, "ray_score.py", "gold.jsonl", traces, "ray.json", "--parts", 4,
                           "--metrics", "all")
    _same_as_score(ragscore, isolated, "ray_score.py", traces, "ray.json", status, err, "--metrics", "all")


def test_the_examples_read_and_route_alike():
    """Each example stands alone (users copy one); what they share is the same code in each."""
    shared = {}
    for script in SCRIPTS:
        source = (EXAMPLES / script).read_text(encoding="utf-8")
        functions = {node.name: ast.get_source_segment(source, node) for node in ast.parse(source).body
                     if isinstance(node, ast.FunctionDef) and node.name != "main"}
        shared[script] = functions
    assert set(shared["dask_score.py"]) == {"lines", "routed", "score_part"}
    assert shared["dask_score.py"] == shared["spark_score.py"] == shared["ray_score.py"]
