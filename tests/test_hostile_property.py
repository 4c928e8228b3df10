"""Property: whatever text the inputs hold, ragscore's output stays ragscore's, for every command and format.

Random hostile strings (control characters, ANSI sequences, forged workflow commands, the
escapes of the workflow-command syntax itself) go into every text field of every input: gold
items, traces, a scores file, stage files, qrels and runs, annotators' files, a suite and its
history, the settings file and the file names. Every command runs under ``GITHUB_ACTIONS=true``
in every format its ``--format`` offers, with every report file it can write, valid input or not.
The rows come from the command line itself (``ragscore.cli.COMMANDS``, each parser's
``--format`` choices and report options), so a command or format is covered the day it is added;
``INVOCATIONS`` says how each command is given the hostile inputs, and a command it lacks fails.

Then no run ends in an internal error, every line written to standard output or standard error
or into any file the command wrote that starts with ``::`` is one of ragscore's own annotations,
no line holds ``##[``, every JUnit file parses, every JSON (and SARIF) report parses, and no output
holds a raw control character (``test_report_safety.assert_safe``).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragscore.cli import COMMANDS
from ragscore.cli.common import REPORT_OPTIONS
from ragscore.external import name_problem
from test_report_safety import assert_safe, run

PIECES = ("\n::error::forged", "\r\n::warning::x", "::add-mask::secret", "\n::stop-commands::tok", "%0A::error::",
          "##[error]forged", "\n ::warning::x", "##[add-mask]y", "::error::",
          "\x1b[2J", "\x1b]0;title\x07", "\x9b31m", "\u202e", "\u2028", "\x00", "\x7f", "\t", "\\", '"', "|", "<b>",
          "`", "#", "&amp;", "*", "[x](y)", ",", ":", "é", "東京")
hostile_text = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=4).map("".join)
# A file name cannot hold NUL or a slash; anything else goes.
file_name = hostile_text.map(lambda s: s.replace("\x00", "").replace("/", ""))
# A TREC file is split at white space: a qid, docno or run tag holds anything else (but NUL: a binary file).
token = hostile_text.map(lambda s: "".join(c for c in s if not c.isspace() and c != "\x00"))
# Score names are restricted (letters, digits, "_ . @ : / -", first a letter, digit or "_"): the
# hostile part is what the rule still lets through, ":" and "@" included.
score_name = st.from_regex(r"[a-z_][a-z0-9_.@:/-]{0,12}", fullmatch=True).filter(
    lambda name: name_problem(name) is None and name not in {"under", "over"})
kb_id = hostile_text.map(lambda s: "Q" + s)


def _gold(draw: Any, qids: list[str]) -> list[dict[str, Any]]:
    items = []
    for i, qid in enumerate(qids):
        item: dict[str, Any] = {"qid": qid, "question": f"question {i} {draw(hostile_text)}",
                                "answerable": draw(st.booleans()), "category": draw(hostile_text)}
        if item["answerable"]:
            item["gold_citations"] = [draw(hostile_text) or "d"]
            item["gold_claim_substr"] = [f"needle {draw(hostile_text)}"]
            item["gold_answers"] = [draw(hostile_text)]
        if draw(st.booleans()):
            item["forbidden_substr"] = [f"bad {draw(hostile_text)}"]
        items.append(item)
    return items


@st.composite
def hostile_inputs(draw: Any) -> dict[str, Any]:
    """Every input of every command, each text field drawn hostile."""
    qids = [f"q{i}{draw(hostile_text)}" for i in range(draw(st.integers(1, 4)))]
    traces = []
    for qid in qids + [f"u{draw(hostile_text)}"]:  # one more: an unknown trace
        cited = [draw(hostile_text) for _ in range(draw(st.integers(0, 2)))]
        traces.append({"qid": qid, "retrieved_ids": cited + [draw(hostile_text)], "ts": draw(st.sampled_from(
            [1763856184, 1763942547, "2026-11-24T09:00:00Z", draw(hostile_text)])),
                       "answer_json": {"claim": draw(hostile_text), "citations": cited}})
    ids = [f"i{n}{draw(hostile_text)}" for n in range(draw(st.integers(1, 3)))]
    texts = [f"word {draw(hostile_text)} end" for _ in ids]
    topics = [f"t{n}{draw(token)}" for n in range(draw(st.integers(1, 3)))]
    docs = [f"d{n}{draw(token)}" for n in range(3)]
    span_docs = [draw(hostile_text) or "d" for _ in range(2)]
    return {
        "gold_name": draw(file_name.map(lambda s: f"./{s}" if s.startswith("-") else s)) + ".jsonl",  # not an option
        "gold": _gold(draw, qids),
        "annotator": _gold(draw, qids),
        "traces": traces,
        "scores": [(qids[0], "0.5")] + [(draw(st.sampled_from([*qids, f"s{draw(hostile_text)}"])),
                                          draw(st.sampled_from(["0.25", "", "nan"]))) for _ in range(draw(st.integers(0, 3)))],
        "score_name": draw(score_name),
        # Human labels of the scores' criterion, on its 0-1 scale (agree --judge): the same qids and some others.
        "human": [(q, draw(st.sampled_from(["0", "1", "0.75", ""]))) for q in [qids[0], f"h{draw(hostile_text)}",
                                                                            *draw(st.lists(st.sampled_from(qids)))]],
        "refusal": "refused " + draw(hostile_text),
        "seed": draw(hostile_text),
        "cause": "cause " + draw(hostile_text),
        "explain": draw(st.sampled_from(qids)),
        "ner_gold": [{"id": i, "text": t, "entities": [{"start": 0, "end": 4, "type": draw(hostile_text) or "T"}]}
                     for i, t in zip(ids, texts, strict=True)],
        "ner_pred": [{"id": i, "entities": [{"start": 0, "end": 4, "type": draw(hostile_text) or "T"}]} for i in ids],
        "classify_gold": [{"id": i, "label": draw(hostile_text) or "L"} for i in ids],
        "classify_pred": [{"id": draw(st.sampled_from(ids + ["other"])), "label": draw(hostile_text) or "L"} for _ in ids],
        "link_gold": [{"id": i, "mention": draw(hostile_text), "kb_id": draw(st.one_of(st.none(), kb_id))}
                      for i in ids],
        "link_pred": [{"id": i, "candidates": [{"kb_id": draw(kb_id), "score": 0.5}], "nil": draw(st.booleans())}
                      for i in ids],
        # ragscore qrels: the gold items (the first answerable), each answerable one with a span of a document the
        # chunking cuts in two; a qid or chunk id a qrels line cannot hold is refused, so some ids are plainer.
        "spans": [{**item, "answerable": True, "gold_spans": [{"doc": draw(st.sampled_from(span_docs)),
                                                               "start": draw(st.integers(0, 9)),
                                                               "end": draw(st.integers(9, 30)),
                                                               "grade": draw(st.integers(1, 3))}]}
                  if item["answerable"] or not n else item for n, item in enumerate(_gold(draw, qids))],
        "chunks": [{"id": f"c{n}{draw(st.one_of(token, hostile_text))}", "doc": doc, "start": start, "end": end}
                   for n, (doc, start, end) in enumerate((doc, *cut) for doc in span_docs for cut in ((0, 10), (10, 30)))],
        "qrels": [(topic, draw(st.sampled_from(docs)), draw(st.integers(0, 2))) for topic in topics for _ in range(2)],
        "runs": [(draw(token) or "r", {topic: draw(st.permutations(docs))[:draw(st.integers(1, 3))]
                                       for topic in draw(st.lists(st.sampled_from([*topics, f"x{draw(token)}"]),
                                                                  min_size=1, max_size=3))}) for _ in range(2)],
        "out_name": "o" + draw(file_name),
        "suite_name": draw(hostile_text),
        # A task's name is restricted (letters, digits, "_", "-" and "."): a hostile one is refused, now and then.
        "task": draw(st.sampled_from(["qa", "qa.1", "Q-x", "_", "9", "a.b", "x-y", draw(hostile_text)])),
        "labels": [f"v{draw(hostile_text)}" for _ in range(2)],
        "schema": draw(st.sampled_from(["score", "stage", "trec", "monitor"])),
    }


def _lines(path: Path, objects: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path.name


def _toml(text: str) -> str:
    """Write a TOML basic string (JSON's escapes are TOML's, but DEL must be escaped and astral characters not)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _write(folder: Path, case: dict[str, Any]) -> None:
    _lines(folder / case["gold_name"], case["gold"])
    _lines(folder / "gold.jsonl", case["gold"])  # for a suite, which refuses a path with a control character
    _lines(folder / "annotator.jsonl", case["annotator"])
    _lines(folder / "t.jsonl", case["traces"])
    _lines(folder / "spans.jsonl", case["spans"])
    _lines(folder / "chunks.jsonl", case["chunks"])
    for name in ("ner_gold", "ner_pred", "classify_gold", "classify_pred", "link_gold", "link_pred"):
        _lines(folder / f"{name}.jsonl", case[name])
    with open(folder / "s.csv", "w", encoding="utf-8", newline="") as scores:  # no NUL: a file with one is binary
        csv.writer(scores).writerows([("qid", case["score_name"]), *((q.replace("\x00", ""), v) for q, v in case["scores"])])
    with open(folder / "h.csv", "w", encoding="utf-8", newline="") as human:
        csv.writer(human).writerows([("qid", case["score_name"]), *((q.replace("\x00", ""), v) for q, v in case["human"])])
    (folder / "qrels").write_text("".join(f"{t} 0 {d} {g}\n" for t, d, g in case["qrels"]), encoding="utf-8")
    for n, (tag, ranked) in enumerate(case["runs"], 1):
        (folder / f"run{n}").write_text("".join(f"{topic} Q0 {doc} {r} {1 / r} {tag}\n" for topic, docs in ranked.items()
                                                for r, doc in enumerate(docs, 1)), encoding="utf-8")
    (folder / "gates.toml").write_text(
        f"[scoring]\nrefusal_tokens = [{_toml(case['refusal'])}]\nseed = {_toml(case['seed'])}\n"
        "[gates]\nprecision = 0.99\n[slice_gates]\nmin_n = 1\nprecision = 0.99\n"
        f"[diagnose.precision]\nwarning = 0.999\ncauses = [{_toml(case['cause'])}]\n"
        "[ner.gates]\nstrict_f1 = 0.99\n[classify.gates]\naccuracy = 0.99\n[link.gates]\nmrr = 0.99\n"
        "[trec.gates]\nmap = 0.99\n[monitor]\ngates = { refusal_rate = 0.01 }\n", encoding="utf-8")
    (folder / "ragscore.toml").write_text(
        f"name = {_toml(case['suite_name'])}\n"
        f"[tasks.{_toml(case['task'])}]\ncommand = \"score\"\ngold = \"gold.jsonl\"\ntrace = \"t.jsonl\"\n"
        "[tasks.retrieval]\ncommand = \"trec\"\nqrels = \"qrels\"\nruns = \"run1\"\n"
        "[tasks.ner]\ngold = \"ner_gold.jsonl\"\npred = \"ner_pred.jsonl\"\n", encoding="utf-8")
    (folder / "rubric.toml").write_text(  # a judge's rubric whose template holds hostile text (braces doubled)
        '[judge]\nmodel = "m"\n[criteria.faithful]\ntemplate = '
        + _toml(case["refusal"].replace("{", "{{").replace("}", "}}") + " {answer} {contexts}") + '\nscale = "0-1"\n',
        encoding="utf-8")
    # The history's suite: its name hostile, its task's a name the suite takes.
    (folder / "history.toml").write_text(f"name = {_toml(case['suite_name'])}\n[tasks.qa]\ncommand = \"score\"\n"
                                         "gold = \"gold.jsonl\"\ntrace = \"t.jsonl\"\n", encoding="utf-8")


# ---- how each command is given the hostile inputs -------------------------------------------------

# An invocation: the commands that make its inputs (checked as well), then the command's own arguments
# (its format and report options are added from its parser).
Invocation = tuple[list[list[str]], list[str]]


class Way(NamedTuple):
    """One way of running a command: how its arguments are built from a case, and what it takes."""

    build: Callable[[dict[str, Any]], Invocation]
    formats: bool = True  # run in each --format (False: a mode that prints something else instead)
    without: tuple[str, ...] = ()  # report options and formats this way refuses
    runs: int = 1  # the commands it runs (its setup's too): fewer examples where one costs more


def _score_inputs(case: dict[str, Any]) -> list[str]:
    return ["--gold", case["gold_name"], "--trace", "t.jsonl", "--scores", "s.csv", "--by", "category",
            "--metrics", "all"]


def _stage(stage: str) -> dict[str, Way]:
    return {"": Way(lambda case: ([], [stage, "--gold", f"{stage}_gold.jsonl", "--pred", f"{stage}_pred.jsonl"]))}


def _merge(case: dict[str, Any]) -> Invocation:
    parts = [["partial", *_score_inputs(case), "--part", f"{i}/2", "-o", f"p{i}.json", "--rows"] for i in (1, 2)]
    return parts, ["merge", "p1.json", "p2.json", "--scores", "s.csv", "--per-question"]


def _history(case: dict[str, Any]) -> list[list[str]]:
    return [["run", "history.toml", "--history", "h.jsonl", "--label", label, "--time", f"2026-11-2{n}T09:00:00Z",
             "--format", "none"] for n, label in enumerate(case["labels"], 1)]


# Every command (the test of a command missing here fails), each way of running it by name ("" the usual one).
INVOCATIONS: dict[str, dict[str, Way]] = {
    "score": {"": Way(lambda case: ([], ["score", *_score_inputs(case), "--per-question"])),
              "explain": Way(lambda case: ([], ["score", *_score_inputs(case), "--explain", case["explain"]]),
                             formats=False)},
    "validate": {"": Way(lambda case: ([], ["validate", "--gold", case["gold_name"], "--trace", "t.jsonl"]))},
    "init": {"": Way(lambda case: ([], ["init", case["out_name"] + ".toml"]))},
    "schema": {"": Way(lambda case: ([], ["schema", case["schema"]]))},
    "compare": {"": Way(lambda case: ([], ["compare", "--gold", case["gold_name"], "t.jsonl", "t.jsonl", "--names",
                                           ",".join(f"{n}{label.replace(',', '')}" for n, label in enumerate(case["labels"])),
                                           "--bootstrap", "20"]), without=("pr-comment",)),
                "baseline": Way(lambda case: ([], ["compare", "--gold", case["gold_name"], "--baseline", "t.jsonl",
                                                   "--trace", "t.jsonl", "--bootstrap", "20"]), without=("html",))},
    "ner": _stage("ner"),
    "classify": _stage("classify"),
    "link": _stage("link"),
    "trec": {"": Way(lambda case: ([], ["trec", "-q", "qrels", "run1"])),
             "runs": Way(lambda case: ([], ["trec", "-q", f"--seed={case['seed']}", "--bootstrap", "20", "qrels", "run1",
                                            "run2"]))},
    "qrels": {"": Way(lambda case: ([], ["qrels", "--gold", "spans.jsonl", "--chunks", "chunks.jsonl", "-o",
                                         case["out_name"] + ".txt"])),
              "stdout": Way(lambda case: ([], ["qrels", "--gold", "spans.jsonl", "--chunks", "chunks.jsonl", "-o", "-"]))},
    "partial": {"": Way(lambda case: ([], ["partial", *_score_inputs(case), "--part", "1/2", "-o",
                                           case["out_name"] + ".json", "--rows"]))},
    "merge": {"": Way(_merge, runs=3)},
    "monitor": {"": Way(lambda case: ([], ["monitor", "--trace", "t.jsonl", "--baseline", "t.jsonl", "--window", "1d",
                                           "--min-n", "1", "--refusal-token", case["refusal"]]))},
    "judge": {"": Way(lambda case: ([], ["judge", "--gold", case["gold_name"], "--trace", "t.jsonl", "--rubric",
                                         "rubric.toml", "--ledger", "l.jsonl", "--replay", "-o", "judged.jsonl"]))},
    "agree": {"": Way(lambda case: ([], ["agree", case["gold_name"], "annotator.jsonl", "--field", "category",
                                         "--gates", "kappa=0.99"])),
              "judge": Way(lambda case: ([], ["agree", "--judge", "s.csv", "--human", "h.csv", "--scale",
                                              f"{case['score_name']}=0-1", "--gates",
                                              f"alpha_{case['score_name']}=0.99"]))},
    "split": {"": Way(lambda case: ([], ["split", "--gold", case["gold_name"], "--by", "category",
                                         f"--seed={case['seed']}", "--out", case["out_name"]]))},
    "power": {"": Way(lambda case: ([], ["power", "--gold", case["gold_name"], "--trace", "t.jsonl"]))},
    "run": {"": Way(lambda case: ([], ["run", "--history", "h.jsonl", "--label", case["labels"][0], "--time",
                                       "2026-11-24T09:00:00Z"]))},
    "dashboard": {"": Way(lambda case: (_history(case), ["dashboard", "h.jsonl"]), runs=3)},
}
# Files a command writes that are its input's data, not a report: split copies each gold line as it is.
DATA_FILES: dict[str, Callable[[dict[str, Any], Path], bool]] = {
    "split": lambda case, path: path.parent.name == case["out_name"] and path.suffix == ".jsonl",
}
@cache
def _parser(command: str) -> argparse.ArgumentParser:
    build, _ = COMMANDS[command]
    return build(f"ragscore {command}")


def formats(command: str) -> list[str | None]:
    """The choices of the command's --format (None: it has none)."""
    for action in _parser(command)._actions:
        if "--format" in action.option_strings:
            assert action.choices is not None, f"ragscore {command} --format: no choices"
            return list(action.choices)
    return [None]


def report_options(command: str) -> list[str]:
    """The report files the command can write (--json PATH, --openmetrics PATH, ...)."""
    return [action.dest for action in _parser(command)._actions
            if action.dest in REPORT_OPTIONS and f"--{action.dest}" in action.option_strings]


def _rows() -> list[tuple[str, str, str | None]]:
    """(command, way, format): every command from the command line, each way of running it, each format."""
    rows = []
    for command in COMMANDS:
        for name, way in INVOCATIONS.get(command, {"": None}).items():
            rows += [(command, name, fmt) for fmt in (formats(command) if way is None or way.formats else [None])
                     if way is None or fmt not in way.without]  # a format this way refuses (several RUNs' comment)
    return rows


ROWS = _rows()
REPORT_FILES = {"json": "r.json", "markdown": "r.md", "html": "r.html", "junit": "r.xml", "openmetrics": "r.prom",
                "sarif": "r.sarif"}
RUNS_PER_COMMAND = 24  # examples over each command's rows: a few seconds each


def test_every_command_has_an_invocation() -> None:
    missing = [command for command in COMMANDS if command not in INVOCATIONS]
    assert not missing, f"the property test cannot drive {missing}: add it to INVOCATIONS"
    assert not (set(INVOCATIONS) | set(DATA_FILES)) - set(COMMANDS)


def test_the_rows_come_from_the_command_line() -> None:
    # The introspection finds what the parsers offer (so the rows are not vacuous).
    assert formats("trec") == ["text", "json", "markdown", "html", "none"] and formats("validate") == [None]
    assert report_options("monitor") == ["json", "markdown", "html", "openmetrics"]
    assert report_options("score") == ["json", "markdown", "html", "junit", "sarif"] and report_options("split") == []
    assert report_options("validate") == ["sarif"]
    assert ("trec", "runs", "text") in ROWS and ("score", "explain", None) in ROWS and ("init", "", None) in ROWS


def _snapshot(folder: Path) -> dict[Path, str]:
    return {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in folder.rglob("*") if path.is_file()}


def _check(folder: Path, case: dict[str, Any], args: list[str], tabs: bool) -> int:
    """Run one command, check what it printed and every file it wrote, and return its exit status."""
    before = _snapshot(folder)
    (folder / "summary.md").unlink(missing_ok=True)
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(folder / "summary.md")}
    status, out, err = run(folder, *args, env=env)
    where = f"ragscore {' '.join(map(repr, args[:2]))} ... (exit {status})"
    assert status in (0, 1, 2), f"{where}: {err}"
    assert_safe(out, f"{where}: standard output", tabs=tabs)
    assert_safe(err, f"{where}: standard error")
    assert err.count("\n") == len(err.splitlines())  # every message ends its own line
    data = DATA_FILES.get(args[0], lambda case, path: False)
    for path, digest in _snapshot(folder).items():
        if before.get(path) == digest or data(case, path.relative_to(folder)):
            continue
        text = path.read_text(encoding="utf-8")
        assert_safe(text, f"{where}: {path.relative_to(folder)}")
        if path.suffix == ".xml":
            ET.fromstring(text.encode("utf-8"))
        elif path.suffix in (".json", ".sarif"):
            json.loads(text)
    if status != 2 and "--format" in args and args[args.index("--format") + 1] == "json":
        json.loads(out)
    return status


@pytest.mark.parametrize(("command", "way", "fmt"), ROWS, ids=["-".join(filter(None, row)) for row in ROWS])
def test_no_input_text_becomes_a_command_or_a_raw_control_character(command: str, way: str, fmt: str | None) -> None:
    ways = INVOCATIONS.get(command)
    assert ways is not None, f"ragscore {command}: the property test cannot drive it: add it to INVOCATIONS"
    build, _, without, runs = ways[way]
    reports = [arg for option in report_options(command) if option not in without
               for arg in (f"--{option}", REPORT_FILES.get(option, f"r.{option}"))]
    rows = sum(1 for row in ROWS if row[0] == command)
    statuses: list[int] = []

    @settings(max_examples=max(3, RUNS_PER_COMMAND // (rows * runs)), deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(hostile_inputs())
    def check(case: dict[str, Any]) -> None:
        setup, args = build(case)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            _write(folder, case)
            for step in setup:
                _check(folder, case, step, tabs=False)
            statuses.append(_check(folder, case, [*args, *(["--format", fmt] if fmt else []), *reports],
                                   tabs=(command, fmt) == ("trec", "text")))

    check()
    # Not vacuous: the command read the hostile inputs and reported on them at least once (not only
    # refused them, as a way that cannot write one of its reports would).
    assert {0, 1} & set(statuses), f"ragscore {command} {way} {fmt}: every run exited {statuses}"
