"""`ragscore run`: a suite of tasks from one file, its reports, its errors and its history.

The central promise: a task's report inside the suite's JSON is the report its command gives,
run by hand from the suite's folder with the same options (checked for every command, with
options that change each report).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT
from ragscore.suite import history

FOLDERS = ("product", "retrieval", "stages", "suite", "several")


@pytest.fixture
def examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the examples the suite reads, the working directory outside them."""
    root = tmp_path / "examples"
    for name in FOLDERS:
        shutil.copytree(EXAMPLES / name, root / name)
    (root / "suite" / "history.jsonl").unlink()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    monkeypatch.delenv("GITHUB_SHA", raising=False)
    return root


def suite_file(folder: Path, text: str, name: str = "ragscore.toml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


# Each task of a rich suite, and the command line that gives its report by hand (from the suite's folder).
RICH = """\
    name = "rich"

    [tasks.qa]
    command = "score"
    gold = "../product/gold.jsonl"
    trace = ["../product/trace.jsonl"]
    metrics = ["retrieval", "text"]
    per_question = true
    by = ["category"]
    cutoffs = [1, 3, 10]
    refusal_token = ["no idea"]
    require_claim = false
    bootstrap = 200
    seed = 7

    [tasks.qa-samples]
    command = "score"
    gold = "../product/gold.jsonl"
    trace = "../product/*.jsonl"
    repeats = "samples"
    pass_k = "1,2"
    gates = {precision = 0.5, "pass@2" = 0.6}

    [tasks.release]
    command = "compare"
    gold = "../product/gold.jsonl"
    baseline = "../product/baseline.jsonl"
    trace = "../product/trace.jsonl"
    test = "sign"
    correction = "bonferroni"

    [tasks.versions]
    command = "compare"
    gold = "../several/gold.jsonl"
    runs = ["../several/v1.jsonl", "../several/v2.jsonl", "../several/v3.jsonl"]
    names = "one,two,three"

    [tasks.retrieval]
    command = "trec"
    qrels = "../retrieval/qrels.txt"
    runs = "../retrieval/run.txt"
    measures = ["ndcg_cut.10", "P.5,10"]
    per_query = true
    complete = true
    max_docs = 4
    gates = "ndcg@10>=0.5"

    [tasks.ner]
    gold = "../stages/ner_gold.jsonl"
    pred = "../stages/ner_pred.jsonl"
    gates_file = "../stages/gates.toml"

    [tasks.classify]
    gold = "../stages/classify_gold.jsonl"
    pred = "../stages/classify_pred.jsonl"
    gates = "accuracy=0.9"

    [tasks.link]
    gold = "../stages/link_gold.jsonl"
    pred = "../stages/link_pred.jsonl"
    cutoffs = [1, 2]
    strict = true
"""
BY_HAND = {
    "qa": ["--gold", "../product/gold.jsonl", "--trace", "../product/trace.jsonl", "--metrics", "retrieval,text",
           "--per-question", "--by", "category", "--cutoffs", "1,3,10", "--refusal-token", "no idea",
           "--no-require-claim", "--bootstrap", "200", "--seed", "7"],
    "qa-samples": ["--gold", "../product/gold.jsonl", "--trace", "../product/*.jsonl", "--repeats", "samples",
                   "--pass-k", "1,2", "--gates", "precision=0.5,pass@2=0.6"],
    "release": ["compare", "--gold", "../product/gold.jsonl", "--baseline", "../product/baseline.jsonl", "--trace",
                "../product/trace.jsonl", "--test", "sign", "--correction", "bonferroni"],
    "versions": ["compare", "--gold", "../several/gold.jsonl", "../several/v1.jsonl", "../several/v2.jsonl",
                 "../several/v3.jsonl", "--names", "one,two,three"],
    "retrieval": ["trec", "-m", "ndcg_cut.10", "-m", "P.5,10", "-q", "-c", "-M", "4", "--gates", "ndcg@10>=0.5",
                  "--format", "json", "../retrieval/qrels.txt", "../retrieval/run.txt"],
    "ner": ["ner", "--gold", "../stages/ner_gold.jsonl", "--pred", "../stages/ner_pred.jsonl", "--gates-file",
            "../stages/gates.toml"],
    "classify": ["classify", "--gold", "../stages/classify_gold.jsonl", "--pred", "../stages/classify_pred.jsonl",
                 "--gates", "accuracy=0.9"],
    "link": ["link", "--gold", "../stages/link_gold.jsonl", "--pred", "../stages/link_pred.jsonl", "--cutoffs", "1,2",
             "--strict"],
}


def test_every_task_report_equals_its_command_run_by_hand(examples, ragscore, monkeypatch, tmp_path):
    suite = suite_file(examples / "suite", RICH, "rich.toml")
    run = ragscore("run", suite, "--json", tmp_path / "suite.json", "--format", "none")
    assert run.status == 1, run.err  # classify's accuracy gate fails
    doc = json.loads((tmp_path / "suite.json").read_text(encoding="utf-8"))
    assert list(doc["tasks"]) == list(BY_HAND)
    monkeypatch.chdir(examples / "suite")
    for name, argv in BY_HAND.items():
        alone = ragscore(*argv)
        assert alone.status in (0, 1), (name, alone.err)
        assert doc["tasks"][name]["report"] == json.loads(alone.out), name
        assert doc["tasks"][name]["status"] == ("pass" if alone.status == 0 else "fail"), name
    assert doc["tasks"]["qa"]["report"]["questions"]  # the options reached the command: per_question ...
    assert doc["tasks"]["qa"]["report"]["settings"]["require_claim"] is False  # ... and a --no-X flag
    assert [row["task"] for row in doc["summary"]] == list(BY_HAND)


def test_the_shipped_suite_runs_every_kind_of_task(ragscore, monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    run = ragscore("run", EXAMPLES / "suite" / "ragscore.toml")
    assert run.status == 1  # the release regresses on under_refusal
    lines = run.out.splitlines()
    assert lines[0].split() == ["task", "command", "status", "key", "metrics"]
    table = {line.split()[0]: line.split()[1:3] for line in lines[1:-1]}
    assert table == {"qa": ["score", "PASS"], "release": ["compare", "FAIL"], "retrieval": ["trec", "PASS"],
                     "ner": ["ner", "PASS"], "classify": ["classify", "PASS"], "link": ["link", "PASS"]}
    assert "strict_f1 0.5455  partial_f1 0.7273" in run.out and "ndcg@10 0.9439" in run.out
    assert lines[-1] == "suite Stashwell support bot: FAIL: 1 of 6 tasks failed a gate: release"
    assert "ragscore: release: REGRESSION under_refusal" in run.err


def test_an_input_error_ends_its_task_alone_and_the_suite_exits_2(examples, ragscore, tmp_path):
    suite = suite_file(examples / "suite", """\
        [tasks.first]
        command = "classify"
        gold = "../stages/classify_gold.jsonl"
        pred = "../stages/classify_pred.jsonl"

        [tasks.broken]
        command = "score"
        gold = "../product/gold.jsonl"
        trace = "no-such-trace.jsonl"

        [tasks.last]
        command = "link"
        gold = "../stages/link_gold.jsonl"
        pred = "../stages/link_pred.jsonl"
        """)
    run = ragscore("run", suite, "--json", tmp_path / "s.json")
    assert run.status == 2
    doc = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert [(t["status"], t["report"] is None) for t in doc["tasks"].values()] == [
        ("pass", False), ("error", True), ("pass", False)]
    assert "no-such-trace.jsonl" in doc["tasks"]["broken"]["error"]
    assert "ragscore: broken: error: " in run.err and "Traceback" not in run.err
    assert [line.split()[:3] for line in run.out.splitlines()[1:4]] == [
        ["first", "classify", "PASS"], ["broken", "score", "ERROR"], ["last", "link", "PASS"]]


def test_no_fail_reports_a_failing_task_without_failing_the_suite(examples, ragscore):
    suite = suite_file(examples / "suite", """\
        [tasks.classify]
        gold = "../stages/classify_gold.jsonl"
        pred = "../stages/classify_pred.jsonl"
        gates = "accuracy=0.99"
        no_fail = true
        """)
    run = ragscore("run", suite)
    assert run.status == 0
    assert "classify  classify  FAIL (no_fail)" in run.out
    suite.write_text(suite.read_text().replace("no_fail = true\n", ""))
    assert ragscore("run", suite).status == 1
    assert ragscore("run", suite, "--no-fail").status == 0


@pytest.mark.parametrize(("text", "message"), [
    ("[tasks.qa]\ncommand = \"score\"\ngold = \"g\"\ntrace = \"t\"\nper_questoin = true\n",
     'bad.toml:5: [tasks.qa] unknown option "per_questoin" for score; did you mean "per_question"?'),
    ("[tasks.qa]\ncommand = \"score\"\ngold = \"g\"\ntrace = \"t\"\nk = \"five\"\n",
     'bad.toml:5: [tasks.qa] k: expected a positive integer, got "five"'),
    ("[tasks.qa]\ncommand = \"scroe\"\n", 'bad.toml:2: [tasks.qa] command: expected one of score, compare, trec, '
                                         'ner, classify, link, got "scroe"; did you mean "score"?'),
    ("[tasks.qa]\ngold = \"g\"\n", "bad.toml:1: [tasks.qa] names no command"),
    ("[tasks.ner]\ngold = \"g\"\n", "bad.toml:1: [tasks.ner] (ner) needs pred"),
    ("[tasks.ner]\ngold = \"g\"\npred = \"p\"\njson = \"out.json\"\n",
     "bad.toml:4: [tasks.ner] json: a task writes no report of its own"),
    ("[tasks.ner]\ngold = \"-\"\npred = \"p\"\n", "bad.toml:2: [tasks.ner] gold: standard input"),
    ("[tasks.\"a b\"]\ncommand = \"ner\"\n", "bad.toml:1: [tasks.\"a b\"]: a task's name is letters"),
    ("[tasks.cmp]\ncommand = \"compare\"\ngold = \"g\"\ntrace = \"t\"\n",
     "bad.toml:1: [tasks.cmp] (compare) needs trace and baseline (or baseline_report), or runs"),
    ("name = \"x\"\ntask = {}\n", 'bad.toml:2: unknown key "task"; did you mean "tasks"?'),
    ("name = \"x\"\n", "bad.toml: no tasks"),
    ("[tasks.qa\n", "bad.toml:1:10: invalid TOML"),
    # A gate whose name --gates cannot read (a newline, a space) is refused where the suite is read, at its line.
    ("[tasks.qa]\ncommand = \"score\"\ngold = \"g\"\ntrace = \"t\"\n[tasks.qa.gates]\n\"pre\\ncision\" = 0.7\n",
     'bad.toml:5: [tasks.qa] gates: expected METRIC=VALUE or METRIC>=VALUE (also >, <=, <), got "pre\\ncision=0.7"'),
    ("[tasks.qa]\ncommand = \"score\"\ngold = \"g\"\ntrace = \"t\"\ngates = \"pre cision=0.7\"\n",
     'bad.toml:5: [tasks.qa] gates: expected METRIC=VALUE or METRIC>=VALUE (also >, <=, <), got "pre cision=0.7"'),
])
def test_a_wrong_suite_file_is_one_error_at_its_line_and_nothing_runs(tmp_path, ragscore, monkeypatch, text, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.toml").write_text(text, encoding="utf-8")
    run = ragscore("run", "bad.toml", "--json", "out.json", "--history", "h.jsonl", "--label", "v1")
    assert run.status == 2
    assert run.err.startswith(f"ragscore: error: {message}"), run.err
    assert run.err.count("\n") == 1 and run.out == ""
    assert not (tmp_path / "out.json").exists() and not (tmp_path / "h.jsonl").exists()


def test_the_suite_is_found_in_ragscore_toml_then_pyproject(tmp_path, ragscore, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert "no suite: give a suite file" in ragscore("run").err
    shutil.copy(EXAMPLES / "stages" / "classify_gold.jsonl", tmp_path / "g.jsonl")
    (tmp_path / "pyproject.toml").write_text('[tool.ragscore.suite]\nname = "from pyproject"\n'
                                             '[tool.ragscore.suite.tasks.classify]\ngold = "g.jsonl"\n'
                                             'pred = "g.jsonl"\n', encoding="utf-8")
    assert ragscore("run").out.splitlines()[-1] == "suite from pyproject: PASS: all 1 tasks passed"
    (tmp_path / "ragscore.toml").write_text('name = "own file"\n[tasks.classify]\ngold = "g.jsonl"\npred = "g.jsonl"\n',
                                            encoding="utf-8")
    assert ragscore("run").out.splitlines()[-1] == "suite own file: PASS: all 1 tasks passed"
    run = ragscore("run", "pyproject.toml", "--format", "json")
    assert json.loads(run.out)["suite"] == "from pyproject"
    (tmp_path / "pyproject.toml").write_text("[tool.other]\n", encoding="utf-8")
    assert "pyproject.toml: has no [tool.ragscore.suite] table" in ragscore("run", "pyproject.toml").err


def test_task_option_runs_only_the_tasks_named_in_the_files_order(ragscore):
    runs = [ragscore("run", EXAMPLES / "suite" / "ragscore.toml", "--task", a, "--task", b, "--format", "json")
            for a, b in (("ner", "link"), ("link", "ner"))]
    assert runs[0].status == 0 and list(json.loads(runs[0].out)["tasks"]) == ["ner", "link"]
    assert runs[0].out == runs[1].out
    run = ragscore("run", EXAMPLES / "suite" / "ragscore.toml", "--task", "nr")
    assert run.status == 2 and 'no task "nr" in ' in run.err and 'did you mean "ner"?' in run.err


def _reports(ragscore, folder: Path, suite: Path) -> dict[str, bytes]:
    names = {"json": "s.json", "markdown": "s.md", "html": "s.html", "junit": "s.xml"}
    args = [x for option, name in names.items() for x in (f"--{option}", folder / name)]
    ragscore("run", suite, *args, "--format", "none")
    return {option: (folder / name).read_bytes() for option, name in names.items()}


def test_reports_are_the_same_bytes_twice_and_hold_no_absolute_path(ragscore, tmp_path):
    suite = EXAMPLES / "suite" / "ragscore.toml"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = _reports(ragscore, tmp_path / "a", suite), _reports(ragscore, tmp_path / "b", suite)
    assert first == second
    for data in first.values():
        assert str(ROOT).encode() not in data and str(tmp_path).encode() not in data


def test_junit_has_a_test_suite_per_task(ragscore, tmp_path):
    ragscore("run", EXAMPLES / "suite" / "ragscore.toml", "--junit", tmp_path / "s.xml", "--format", "none")
    root = ET.parse(tmp_path / "s.xml").getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["qa (score)", "release (compare)", "retrieval (trec)", "ner (ner)",
                                                "classify (classify)", "link (link)"]
    for s in suites:
        cases = s.findall("testcase")
        assert int(s.get("tests")) == len(cases) > 0
        assert int(s.get("failures")) == sum(c.find("failure") is not None for c in cases)
    release = {c.get("name"): c.find("failure") is not None for c in suites[1].findall("testcase")}
    assert release == {"precision": False, "under_refusal": True}
    assert int(root.get("tests")) == sum(int(s.get("tests")) for s in suites)
    assert int(root.get("failures")) == 1


def test_markdown_and_html_hold_each_task_report(ragscore, tmp_path):
    reports = _reports(ragscore, tmp_path, EXAMPLES / "suite" / "ragscore.toml")
    markdown = reports["markdown"].decode()
    assert markdown.startswith("# ragscore suite `Stashwell support bot`\n\n**FAIL**")
    sections = [line for line in markdown.splitlines() if line.startswith("## ")]
    assert sections == ["## Task `qa` (score): PASS", "## Task `release` (compare): FAIL",
                        "## Task `retrieval` (trec): PASS", "## Task `ner` (ner): PASS",
                        "## Task `classify` (classify): PASS", "## Task `link` (link): PASS"]
    assert "\n# " not in markdown.split("\n", 1)[1]  # every task's headings moved one level down
    page = reports["html"].decode()
    assert page.count('<section class="task"') == 6 and "<script" not in page
    ids = [part.split('"', 1)[0] for part in page.split(' id="')[1:]]
    assert len(ids) == len(set(ids))
    assert 'id="t0-gates"' in page and 'id="t3-gates"' in page and "<h1>" in page and page.count("<h1>") == 1


def test_history_appends_a_line_per_run_with_label_time_and_hashes(examples, ragscore, tmp_path, monkeypatch):
    suite = examples / "suite" / "ragscore.toml"
    log = tmp_path / "history.jsonl"
    assert ragscore("run", suite, "--history", log, "--label", "v1", "--time", "2026-11-24T10:00:00+01:00",
                    "--format", "none").status == 1
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    monkeypatch.setenv("GITHUB_SHA", "0123456789abcdef0123456789abcdef01234567")
    assert ragscore("run", suite, "--history", log, "--format", "none").status == 1
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(r["label"], r["time"]) for r in records] == [
        ("v1", "2026-11-24T09:00:00Z"), ("0123456789abcdef0123456789abcdef01234567", "2023-11-14T22:13:20Z")]
    qa = records[0]["tasks"]["qa"]
    assert qa["inputs"]["trace"]["sha256"] == json.loads(
        ragscore("--gold", EXAMPLES / "product" / "gold.jsonl", "--trace", EXAMPLES / "product" / "trace.jsonl").out
    )["inputs"]["trace"]["sha256"]
    assert qa["metrics"]["precision"] == pytest.approx(25 / 31) and qa["intervals"]["precision"][0] < 25 / 31
    assert qa["signature"].startswith("ragscore:0.1.0|k:5") and records[0]["signature"].startswith("ragscore:0.1.0|")
    assert records[0]["tasks"]["release"]["changes"]["precision"]["significant"] in (True, False)
    assert records[0]["tasks"] == records[1]["tasks"]  # the same inputs give the same line, but for label and time


def test_history_needs_a_label_and_a_readable_time(examples, ragscore, tmp_path, monkeypatch):
    suite = examples / "suite" / "ragscore.toml"
    monkeypatch.setenv("PATH", str(tmp_path))  # no git to describe the folder with
    run = ragscore("run", suite, "--history", tmp_path / "h.jsonl")
    assert run.status == 2 and "--history needs a version label: give --label" in run.err
    run = ragscore("run", suite, "--history", tmp_path / "h.jsonl", "--label", "v1", "--time", "yesterday")
    assert run.status == 2 and "--time \"yesterday\": expected seconds since 1970 or an ISO 8601 time" in run.err
    run = ragscore("run", suite, "--history", tmp_path / "h.jsonl", "--label", "v1", "--time", "2026-11-24T10:00:00")
    assert run.status == 2 and "give a UTC offset" in run.err
    assert ragscore("run", suite, "--label", "v1").status == 2
    assert not (tmp_path / "h.jsonl").exists()


def test_the_label_defaults_to_git_describe(examples, ragscore, tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    folder = examples / "suite"
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    for argv in (["init", "-q"], ["add", "."], ["commit", "-qm", "x"], ["tag", "v9.9"]):
        subprocess.run(["git", *argv], cwd=folder, check=True, env=env)
    ragscore("run", folder / "ragscore.toml", "--history", tmp_path / "h.jsonl")
    assert json.loads((tmp_path / "h.jsonl").read_text())["label"] == "v9.9"


def test_a_torn_last_line_is_skipped_and_the_next_append_stands_alone(tmp_path):
    log = tmp_path / "h.jsonl"
    record = {"ragscore_history": 1, "label": "v1", "time": None, "pass": True, "tasks": {}}
    history.append(log, record)
    with open(log, "ab") as stream:
        stream.write(history.encode({**record, "label": "v2"})[:30])  # a run killed in the middle of its line
    read = history.read(log)
    assert [r["label"] for r in read.records] == ["v1"] and read.skipped == [2]
    assert "1 incomplete line skipped" in read.notes()[0]
    history.append(log, {**record, "label": "v3"})  # cuts the torn line off first
    read = history.read(log)
    assert [r["label"] for r in read.records] == ["v1", "v3"] and read.skipped == []
    assert log.read_bytes() == history.encode(record) + history.encode({**record, "label": "v3"})
    with open(log, "ab") as stream:  # a whole record without its newline (an editor's doing) is kept
        stream.write(history.encode({**record, "label": "v4"}).rstrip(b"\n"))
    history.append(log, {**record, "label": "v5"})
    assert [r["label"] for r in history.read(log).records] == ["v1", "v3", "v4", "v5"]


@pytest.mark.parametrize(("line", "message"), [
    ('{"label": "v1"}', "not a ragscore history record"),
    ('{"ragscore_history": 2, "label": "v1", "time": null, "pass": true, "tasks": {}}', "a history record of format 2"),
    ('{"ragscore_history": 1, "time": null, "pass": true, "tasks": {}}', "a history record without 'label'"),
    ('{"ragscore_history": 1, "label": "v", "time": null, "pass": true, "tasks": {"a": {"command": "score", '
     '"status": "pass", "metrics": []}}}', 'task "a": metrics must be an object'),
])
def test_a_record_of_the_wrong_shape_is_an_error_at_its_line(tmp_path, ragscore, line, message):
    log = tmp_path / "h.jsonl"
    history.append(log, {"ragscore_history": 1, "label": "v0", "time": None, "pass": True, "tasks": {}})
    log.write_text(log.read_text() + line + "\n")
    run = ragscore("dashboard", log)
    assert run.status == 2 and f"h.jsonl:2: {message}" in run.err


APPENDER = """\
import sys
from ragscore.suite import history
record = {"ragscore_history": 1, "label": "v", "time": None, "pass": True,
          "tasks": {"qa": {"command": "score", "status": "pass", "metrics": {"precision": 0.5},
                           "padding": "x" * int(sys.argv[2])}}}
print("ready", flush=True)
n = 0
while True:
    n += 1
    history.append(sys.argv[1], {**record, "label": f"v{n}"})
"""


@pytest.mark.parametrize("padding", [10, 300_000])
def test_appends_survive_a_killed_process(tmp_path, padding):
    """Kill appenders at random moments (lines of a few bytes to 300 kB): every line read is whole,
    at most the last is torn and skipped, and the next append stands alone."""
    log = tmp_path / "h.jsonl"
    script = tmp_path / "append.py"
    script.write_text(APPENDER, encoding="utf-8")
    for kills, delay in enumerate((0.05, 0.11, 0.23), 1):
        process = subprocess.Popen([sys.executable, str(script), str(log), str(padding)], stdout=subprocess.PIPE)
        assert process.stdout is not None and process.stdout.readline() == b"ready\n"
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        read = history.read(log)
        assert len(read.records) > 0
        assert len(read.skipped) <= kills  # a kill tears at most the line being written
        history.append(log, {"ragscore_history": 1, "label": "after", "time": None, "pass": True, "tasks": {}})
        assert history.read(log).records[-1]["label"] == "after"
    final = history.read(log)
    assert all(r["tasks"]["qa"]["padding"] == "x" * padding for r in final.records if r["label"] != "after")


def test_the_python_api_runs_a_suite_from_its_folder(monkeypatch):
    import ragscore

    monkeypatch.chdir(ROOT)
    assert ragscore.run_suite("examples/suite/ragscore.toml", only="ner").outcomes[0].task.name == "ner"
    run = ragscore.run_suite("examples/suite/ragscore.toml", only=["ner", "classify"])
    assert Path.cwd() == ROOT  # the working directory is restored
    assert run.passed and [o.task.name for o in run.outcomes] == ["ner", "classify"]
    assert run.outcomes[0].result is not None and run.outcomes[0].result.document["inputs"]["gold"]["path"] == (
        "../stages/ner_gold.jsonl")
    assert run.report("text").splitlines()[-1] == "suite Stashwell support bot: PASS: all 2 tasks passed"


def test_the_docs_example(ragscore, monkeypatch):
    from docs import doc_block

    monkeypatch.chdir(ROOT)
    command = "$ ragscore run examples/suite/ragscore.toml -q\n"
    shown = doc_block(command).split(command, 1)[1]
    run = ragscore("run", "examples/suite/ragscore.toml", "-q")
    assert run.status == 1 and run.out == shown


def test_the_example_history_is_what_its_script_writes(tmp_path, monkeypatch):
    """examples/suite/make_history.py writes the committed history, byte for byte (run it after a change)."""
    copy = tmp_path / "examples"
    for name in FOLDERS:
        shutil.copytree(EXAMPLES / name, copy / name)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    monkeypatch.delenv("GITHUB_SHA", raising=False)
    done = subprocess.run([sys.executable, str(copy / "suite" / "make_history.py")], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (copy / "suite" / "history.jsonl").read_bytes() == (EXAMPLES / "suite" / "history.jsonl").read_bytes()


def test_a_suite_in_pyproject_leaves_the_settings_of_score_alone(tmp_path, ragscore, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("gold.jsonl", "trace.jsonl", "baseline.jsonl"):
        shutil.copy(EXAMPLES / "product" / name, tmp_path / name)
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.ragscore.gates]
        precision = 0.5
        [tool.ragscore.suite.tasks.qa]
        command = "score"
        gold = "gold.jsonl"
        trace = "trace.jsonl"
        [tool.ragscore.suite.tasks.release]
        command = "compare"
        gold = "gold.jsonl"
        baseline = "baseline.jsonl"
        trace = "trace.jsonl"
        """), encoding="utf-8")
    run = ragscore("run", "--format", "json")
    assert run.status in (0, 1) and [t["status"] for t in json.loads(run.out)["tasks"].values()] != ["error"] * 2
    assert json.loads(run.out)["tasks"]["qa"]["report"]["gates"]["precision"]["threshold"] == 0.5
    assert ragscore("--gold", "gold.jsonl", "--trace", "trace.jsonl").status in (0, 1)  # score alone reads it too


@pytest.mark.parametrize(("option", "target", "message"), [
    ("--json", "suite/ragscore.toml", "is the same file as SUITE"),
    ("--html", "stages/ner_gold.jsonl", "is ner's gold"),
    ("--history", "stages/ner_pred.jsonl", "is ner's pred"),
    ("--markdown", "suite/gates.toml", "is gates.toml"),
])
def test_no_report_or_history_overwrites_what_the_suite_reads(examples, ragscore, option, target, message):
    before = (examples / target).read_bytes()
    run = ragscore("run", examples / "suite" / "ragscore.toml", option, examples / target, "--label", "v1")
    assert run.status == 2 and message in run.err and run.out == ""
    assert (examples / target).read_bytes() == before


@pytest.mark.parametrize("text", ["shopping list\n", "\nhello\n", '{\n  "kind": "suite"\n}\n'])
def test_a_history_that_is_not_one_is_refused_before_anything_runs(examples, ragscore, tmp_path, text):
    other = tmp_path / "notes.txt"
    other.write_text(text)
    run = ragscore("run", examples / "suite" / "ragscore.toml", "--history", other, "--label", "v1",
                   "--json", tmp_path / "s.json")
    assert run.status == 2 and "is not a ragscore history" in run.err and not (tmp_path / "s.json").exists()
    assert other.read_text() == text


def test_history_refuses_a_device_a_partial_run_and_a_time_out_of_range(examples, ragscore, tmp_path):
    suite = examples / "suite" / "ragscore.toml"
    run = ragscore("run", suite, "--history", "/dev/null", "--label", "v1")
    assert run.status == 2 and "is not a regular file" in run.err and run.out == ""
    run = ragscore("run", suite, "--history", tmp_path / "h.jsonl", "--label", "v1", "--task", "ner")
    assert run.status == 2 and "--task runs part of a suite, and a history records whole runs" in run.err
    for moment in ("0001-01-01T00:00:00+01:00", "9999-12-31T23:00:00-05:00"):
        run = ragscore("run", suite, "--history", tmp_path / "h.jsonl", "--label", "v1", "--time", moment)
        assert run.status == 2 and "between the years 1 and 9999" in run.err
    assert history.parse_time("0999-06-01T00:00:00Z") == "0999-06-01T00:00:00Z"
    assert not (tmp_path / "h.jsonl").exists()
    run = ragscore("run", examples / "suite" / "ragscore.toml", "--history", tmp_path / "no" / "h.jsonl",
                   "--label", "v1")
    assert run.status == 2 and "no such folder" in run.err


@pytest.mark.parametrize(("lines", "message"), [
    ('trace = "t"\nruns = ["a", "b"]', 's.toml:4: [tasks.c] trace: give runs (several runs), or trace and baseline'),
    ('trace = "t"\nbaseline = "b"\nnames = "x,y"', "s.toml:6: [tasks.c] names: is for several runs"),
    ('trace = "t"\nbaseline = "b"\nbaseline_report = "r"', "s.toml:6: [tasks.c] baseline_report: give baseline or"),
    ('trace = "t"\nbaseline = "b"\nrepeats = "sample"', 's.toml:6: [tasks.c] repeats: expected one of last, samples'),
    ('trace = "t"\nbaseline = "b"\nconfidence = 1.5', "s.toml:6: [tasks.c] confidence: expected a number strictly"),
    ('trace = "t"\nbaseline = "b\\u0000"', "s.toml:5: [tasks.c] baseline: a path with a control character"),
    ('trace = "t"\nbaseline = "b"\ntest = "z"', "s.toml:6: [tasks.c] test: expected one of bootstrap, t,"),
])
def test_compare_options_are_checked_at_their_line(tmp_path, ragscore, monkeypatch, lines, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.toml").write_text(f'[tasks.c]\ncommand = "compare"\ngold = "g"\n{lines}\n', encoding="utf-8")
    run = ragscore("run", "s.toml")
    assert run.status == 2 and run.err.startswith(f"ragscore: error: {message}"), run.err


@pytest.mark.parametrize(("lines", "message"), [
    ('refusal_pattern = "("', 'refusal_pattern: "(": '),
    ("cutoffs = [2000000]", "cutoffs: expected cutoffs of at most 1,000,000"),
    ("gates = {precision = {min = 0.7, warn = 0.8}}", "gates: precision: a rule with a warn level"),
    ("per_question = true\nper-question = false", "per-question: given twice"),
    ('trace_format = "json"', "trace_format: expected one of auto, native"),
    ('gates = {precision = "garbage"}', 'gates: expected precision: a number, a rule such as ">= 0.6" or "off"'),
    ('metrics = "nonsense"', 'metrics: unknown metric family "nonsense"'),
    ('map = {nosuch = "x"}', 'map: --map "nosuch=x": unknown concept "nosuch"'),
])
def test_score_options_are_checked_before_anything_runs(tmp_path, ragscore, monkeypatch, lines, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.toml").write_text(f'[tasks.qa]\ncommand = "score"\ngold = "g"\ntrace = "t"\n{lines}\n',
                                     encoding="utf-8")
    run = ragscore("run", "s.toml")
    assert run.status == 2 and run.err.startswith("ragscore: error: s.toml:") and message in run.err, run.err


def test_score_trec_checks_its_arguments():
    import ragscore
    from ragscore.errors import UsageError

    qrels, runs = EXAMPLES / "retrieval" / "qrels.txt", EXAMPLES / "retrieval" / "run.txt"
    for bad in ({"level": "x"}, {"confidence": 1.5}, {"bootstrap": 10 ** 12}, {"max_docs": 0}, {"measures": [3]}):
        with pytest.raises(UsageError):
            ragscore.score_trec(qrels, [runs, runs], **bad)
    assert ragscore.score_trec(qrels, runs, measures=["map"]).metrics["map"] > 0.9


def test_under_github_actions_the_run_annotates_and_summarises(examples, ragscore, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    run = ragscore("run", examples / "suite" / "ragscore.toml", "--format", "none")
    assert "::error title=ragscore release%3A gate under_refusal::" in run.err
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# ragscore suite `Stashwell support bot`") and "## Task" not in summary
