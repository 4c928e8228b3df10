"""Every output of every command goes through the one overwrite check, and every input is known to it.

The rows come from the command line itself: every command of ``ragscore.cli.COMMANDS``, every
option its parser declares as an output, every input its parser declares, and every way of
naming an input again (the same spelling, ``./x``, ``sub/../x``, ``new/../x`` through a folder yet
to be made, a hard link, a symbolic link, a FIFO). A command added tomorrow gets its rows the day
it is added; one whose command line this file does not know yet fails ``test_every_command_has_a_command_line``,
and an option that names a file without saying whether it is read or written fails the contract test.
A suite's tasks name their own inputs, known once the suite is read: run's outputs are checked against them too.
"""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import EXAMPLES, write
from ragscore.cli import COMMANDS, main
from ragscore.cli.common import INPUT, OUTPUT, PathArg, path_actions

# Metavars of the values that name a file (each such option must be a PathArg), and of those that do not.
PATH_METAVARS = {"PATH", "DIR", "GOLD", "RUN", "QRELS", "PARTIAL", "SUITE", "HISTORY", "SCORES", "LABELS"}
VALUE_METAVARS = {"N", "NAME", "FIELD", "QID", "SPEC", "FAMILIES", "K,K,...", "C", "TEXT", "REGEX", "CONCEPT=PATH",
                  "NAME,NAME,...", "METRIC,METRIC,...", "I/N", "CHANGE", "P", "WIDTH", "TIME", "R,R,...", "FORMAT",
                  "URL", "SECONDS", "NAME=SCALE", "KEY", "METRIC"}

# A command line of each command that runs to completion on the files `template` makes, outputs left out.
COMMAND_LINES: dict[str, list[list[str]]] = {
    "score": [["--gold", "gold.jsonl", "--trace", "trace.jsonl", "--scores", "scores.jsonl",
               "--gates-file", "gates.toml"]],
    "validate": [["--gold", "gold.jsonl", "--trace", "trace.jsonl", "--gates-file", "gates.toml"]],
    "init": [[]],
    "schema": [[]],
    "compare": [["--gold", "gold.jsonl", "--trace", "trace.jsonl", "--baseline", "base.jsonl",
                 "--gates-file", "gates.toml"],
                ["--gold", "gold.jsonl", "--trace", "trace.jsonl", "--baseline-report", "base.json"],
                ["--gold", "several.jsonl", "v1.jsonl", "v2.jsonl"]],
    "ner": [["--gold", "ner_gold.jsonl", "--pred", "ner_pred.jsonl", "--gates-file", "gates.toml"]],
    "classify": [["--gold", "classify_gold.jsonl", "--pred", "classify_pred.jsonl", "--gates-file", "gates.toml"]],
    "link": [["--gold", "link_gold.jsonl", "--pred", "link_pred.jsonl", "--gates-file", "gates.toml"]],
    "trec": [["qrels.txt", "run.txt", "run2.txt", "--gates-file", "gates.toml"]],
    "qrels": [["--gold", "spans.jsonl", "--chunks", "chunks.jsonl"]],
    "partial": [["--gold", "gold.jsonl", "--trace", "trace.jsonl", "--scores", "scores.jsonl",
                 "--gates-file", "gates.toml", "--part", "1/1"]],
    "merge": [["part.json", "--scores", "scores.jsonl", "--gates-file", "gates.toml"]],
    "monitor": [["--trace", "today.jsonl", "--baseline", "baseline.jsonl", "--gates-file", "gates.toml"]],
    "judge": [["--gold", "gold.jsonl", "--trace", "trace.jsonl", "--rubric", "rubric.toml", "--replay"]],
    "agree": [["gold.jsonl", "gold2.jsonl"], ["--judge", "judge.jsonl", "--human", "labels.jsonl"]],
    "split": [["--gold", "train.jsonl"]],
    "power": [["--gold", "several.jsonl", "--trace", "v1.jsonl", "--gates-file", "gates.toml"]],
    "run": [["suite.toml"]],
    "dashboard": [["history.jsonl"]],
}
# An output a command needs to run (not argparse-required, as it also runs with that one alone): given with every
# other output tested.
NEEDED_OUTPUTS = {"judge": ("--ledger", "ledger.jsonl")}


def needed(command: str, output: str) -> list[str]:
    """The outputs a command line needs besides ``output`` (the one tested)."""
    pair = NEEDED_OUTPUTS.get(command)
    return list(pair) if pair is not None and pair[0] != output else []


# What the message of a refused output says it never does.
REPORT_RULE = "a report never overwrites an input or another report"
RULES = {("run", "--history"): "a history never overwrites an input or a report",
         ("split", "--out"): "a split never overwrites an input",
         ("qrels", "--output"): "the qrels never overwrite an input",
         ("judge", "--ledger"): "the ledger is never an input or the scores file",
         ("judge", "--output"): "the scores file never overwrites an input or the ledger"}
# How a test names an input or an output again; each makes its files and returns the path to give.
KINDS = ("same", "dot", "dotdot", "new-folder", "hard-link", "symlink", "fifo")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every input of every command line above, made once (a partial and a report by ragscore itself)."""
    folder = tmp_path_factory.mktemp("inputs")
    for name in ("gold.jsonl", "trace.jsonl"):
        shutil.copy(EXAMPLES / name, folder / name)
    shutil.copy(EXAMPLES / "gold.jsonl", folder / "gold2.jsonl")
    shutil.copy(EXAMPLES / "gold.jsonl", folder / "train.jsonl")
    shutil.copy(EXAMPLES / "trace.jsonl", folder / "base.jsonl")
    for stage in ("ner", "classify", "link"):
        for part in ("gold", "pred"):
            shutil.copy(EXAMPLES / "stages" / f"{stage}_{part}.jsonl", folder / f"{stage}_{part}.jsonl")
    shutil.copy(EXAMPLES / "several" / "gold.jsonl", folder / "several.jsonl")
    for run in ("v1", "v2"):
        shutil.copy(EXAMPLES / "several" / f"{run}.jsonl", folder / f"{run}.jsonl")
    shutil.copy(EXAMPLES / "retrieval" / "qrels.txt", folder / "qrels.txt")
    shutil.copy(EXAMPLES / "retrieval" / "run.txt", folder / "run.txt")
    shutil.copy(EXAMPLES / "retrieval" / "run.txt", folder / "run2.txt")
    shutil.copy(EXAMPLES / "monitor" / "today.jsonl", folder / "today.jsonl")
    shutil.copy(EXAMPLES / "monitor" / "baseline.jsonl", folder / "baseline.jsonl")
    shutil.copy(EXAMPLES / "suite" / "history.jsonl", folder / "history.jsonl")
    shutil.copy(EXAMPLES / "judge" / "calibration.jsonl", folder / "judge.jsonl")
    shutil.copy(EXAMPLES / "judge" / "labels.jsonl", folder / "labels.jsonl")
    write(folder / "scores.jsonl", [{"qid": qid, "judge": 0.5} for qid in ("A0001", "A0002", "A0003")])
    write(folder / "gates.toml", "")
    write(folder / "rubric.toml", '[judge]\nmodel = "m"\n\n[criteria.faithful]\ntemplate = "{question} {answer}"\n'
                                  'scale = "0-1"\n')
    write(folder / "spans.jsonl", [{"qid": "q1", "answerable": True, "gold_spans": [{"doc": "d", "start": 2, "end": 9}]}])
    write(folder / "chunks.jsonl", [{"id": "c1", "doc": "d", "start": 0, "end": 10}])
    write(folder / "suite.toml", '[tasks.qa]\ncommand = "score"\ngold = "gold.jsonl"\ntrace = "trace.jsonl"\n')
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        assert main(["partial", *COMMAND_LINES["partial"][0], "-o", "part.json", "--rows", "-q"]) == 0
        assert main(["--gold", "gold.jsonl", "--trace", "base.jsonl", "--per-question", "--json", "base.json",
                     "--format", "none", "-q"]) == 0
    finally:
        os.chdir(cwd)
    return folder


def parser_of(command: str) -> argparse.ArgumentParser:
    build, _ = COMMANDS[command]
    return build(f"ragscore {command}")


def option_name(action: argparse.Action) -> str:
    return max(action.option_strings, key=len) if action.option_strings else str(action.metavar)


def inputs_of(command: str, line: list[str]) -> list[tuple[argparse.Action, str]]:
    """The inputs a command line names, by the parser's own account: (the option, the path given)."""
    parser = parser_of(command)
    required = [arg for action, kind in path_actions(parser) if kind.role == OUTPUT and action.required
                for arg in (option_name(action), "placeholder")]
    args = parser.parse_args([*line, *required])
    found = []
    for action, kind in path_actions(parser):
        value = getattr(args, action.dest)
        if kind.role == INPUT and value is not None:
            found += [(action, path) for path in (value if isinstance(value, list) else [value])]
    return found


def outputs_of(command: str) -> list[argparse.Action]:
    return [action for action, kind in path_actions(parser_of(command)) if kind.role == OUTPUT]


def input_label(action: argparse.Action, path: str) -> str:
    return option_name(action) if action.option_strings else f'{action.metavar} "{path}"'


def clash_rows() -> Iterator[object]:
    for command, lines in COMMAND_LINES.items():
        for number, line in enumerate(lines):
            outputs = [(option_name(action), isinstance(action.type, PathArg) and action.type.files is not None)
                       for action in outputs_of(command)]
            outputs.append(("GITHUB_STEP_SUMMARY", False))
            for action, path in inputs_of(command, line):
                for output, folder in outputs:
                    if folder and not Path(path).name.endswith(".jsonl"):
                        continue  # a folder's files are named NAME.jsonl: an input of that name can be one
                    for kind in KINDS:
                        yield pytest.param(command, number, output, folder, input_label(action, path), path, kind,
                                           id=f"{command}{number or ''}-{output}-{input_label(action, path)}-{kind}")


def test_every_command_has_a_command_line() -> None:
    assert list(COMMAND_LINES) == list(COMMANDS)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_option_that_names_a_file_says_whether_it_is_read_or_written(command: str) -> None:
    for action in parser_of(command)._actions:
        if action.nargs == 0 or action.choices is not None:
            continue  # a flag, --help, --version; or a value from a list
        name = option_name(action) if action.option_strings else action.dest
        if isinstance(action.type, PathArg):
            assert action.type.role in (INPUT, OUTPUT), name
            assert action.metavar in PATH_METAVARS, f"{command} {name}: a path's metavar is one of {PATH_METAVARS}"
        else:
            assert action.metavar in VALUE_METAVARS, (
                f"{command} {name} ({action.metavar}): a path must be type=INPUT_PATH, REPORT_PATH or a PathArg; "
                "another value's metavar goes in VALUE_METAVARS")


def test_the_table_covers_every_output_and_every_kind_of_input() -> None:
    rows = list(clash_rows())
    for command in COMMAND_LINES:
        for action in outputs_of(command):
            if command != "init":  # init reads nothing
                assert any(r.values[0] == command and r.values[2] == option_name(action) for r in rows), command
    labels = {(r.values[0], r.values[4]) for r in rows}
    assert {("agree", 'GOLD "gold2.jsonl"'), ("agree", "--judge"), ("agree", "--human"), ("merge", 'PARTIAL "part.json"'), ("trec", 'RUN "run2.txt"'),
            ("compare", 'RUN "v2.jsonl"'), ("run", 'SUITE "suite.toml"'), ("dashboard", 'HISTORY "history.jsonl"'),
            ("compare", "--baseline-report"), ("merge", "--scores"), ("split", "--gold")} <= labels


def name_again(folder: Path, path: str, kind: str, *, in_folder: bool) -> str:
    """Make what ``kind`` needs and return another name of the file ``path`` (in_folder: a folder holding it)."""
    if kind == "fifo":  # the input itself is a FIFO: the check must not open it (nothing would answer)
        (folder / path).unlink()
        os.mkfifo(folder / path)
    if kind in ("hard-link", "symlink"):
        link = folder / "d" / path if in_folder else folder / "link"
        link.parent.mkdir(exist_ok=True)
        if kind == "hard-link":
            os.link(folder / path, link)
        else:
            link.symlink_to(os.path.relpath(folder / path, link.parent))
        return "d" if in_folder else "link"
    (folder / "sub").mkdir()
    spelling = {"same": "", "dot": "./", "dotdot": "sub/../", "new-folder": "new/../", "fifo": ""}[kind]
    if in_folder:
        return {"same": ".", "dot": "./", "dotdot": "sub/..", "new-folder": "new/..", "fifo": "."}[kind]
    return spelling + path


@pytest.mark.parametrize(("command", "number", "output", "folder", "label", "path", "kind"), list(clash_rows()))
def test_no_output_of_any_command_overwrites_an_input(
        template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ragscore, command: str, number: int,
        output: str, folder: bool, label: str, path: str, kind: str) -> None:
    work = tmp_path / "w"
    work.mkdir()
    line = list(COMMAND_LINES[command][number])
    for name in line:  # the files this command line names (the check reads none of them)
        if (template / name).is_file():
            shutil.copy(template / name, work / name)
    monkeypatch.chdir(work)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    before = {p.name: p.read_bytes() for p in work.iterdir()}
    target = name_again(work, path, kind, in_folder=folder)
    if output == "GITHUB_STEP_SUMMARY":
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", target)
        required = [a for a in outputs_of(command) if a.required]
        line += [arg for action in required for arg in (option_name(action), "out")] + needed(command, output)
    else:
        line += [output, target, *needed(command, output)]
    written = os.path.join(target, Path(path).name) if folder else target
    run = ragscore(command, *line)
    rule = RULES.get((command, output), REPORT_RULE)
    assert (run.status, run.out) == (2, "")
    assert run.err == f'ragscore: error: {output} "{written}": is the same file as {label}; {rule}\n'
    for name, data in before.items():
        if (work / name).is_file() and not (work / name).is_symlink():
            assert (work / name).read_bytes() == data, name
    assert not (work / "new").exists()


def devnull_rows() -> Iterator[object]:
    for command, lines in COMMAND_LINES.items():
        for number, line in enumerate(lines):
            for action in outputs_of(command):
                if command == "compare" and action.dest == "html" and "--trace" in line:
                    continue  # compare --html is for several RUNs only
                if command == "compare" and action.dest in ("pr_comment", "badge") and "--trace" not in line:
                    continue  # ... and its comment and badge for two runs only
                name = option_name(action)
                yield pytest.param(command, number, name, id=f"{command}{number or ''}-{name}")


# Where /dev/null as an output is not written: what each says instead (the rest run to the end).
NOT_DEVNULL = {
    ("init", "PATH"): "ragscore: error: /dev/null: already exists; ragscore init never overwrites a file\n",
    ("split", "--out"): 'ragscore: error: --out "/dev/null": not a folder; split writes NAME.jsonl files in the '
                        "folder it names (made when missing)\n",
    ("run", "--history"): 'ragscore: error: --history "/dev/null": is not a regular file\n',
    ("judge", "--ledger"): 'ragscore: error: --ledger "/dev/null": is not a regular file\n',
}


@pytest.mark.parametrize(("command", "number", "output"), list(devnull_rows()))
def test_the_null_device_may_be_any_output(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ragscore,
                                           command: str, number: int, output: str) -> None:
    work = tmp_path / "w"
    shutil.copytree(template, work)
    monkeypatch.chdir(work)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    before = {p.name: p.read_bytes() for p in work.iterdir()}
    line = [*COMMAND_LINES[command][number], *([output] if output.startswith("-") else []), "/dev/null",
            *needed(command, output)]
    quiet = any("--quiet" in action.option_strings for action in parser_of(command)._actions)
    run = ragscore(command, *line, *(["--quiet"] if quiet else []))
    if (command, output) in NOT_DEVNULL:
        assert (run.status, run.err) == (2, NOT_DEVNULL[command, output])
    else:
        assert run.status in (0, 1) and run.err == "", run.err
    assert {p.name: p.read_bytes() for p in work.iterdir()} == before


def suite_rows() -> Iterator[object]:
    for action in outputs_of("run"):
        for key, path in (("gold", "gold.jsonl"), ("trace", "trace.jsonl")):
            for kind in ("same", "dot", "dotdot", "hard-link", "symlink"):
                name = option_name(action)
                yield pytest.param(name, key, path, kind, id=f"{name}-{key}-{kind}")


@pytest.mark.parametrize(("output", "key", "path", "kind"), list(suite_rows()))
def test_no_output_of_a_suite_run_overwrites_what_its_tasks_read(
        template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ragscore, output: str, key: str, path: str,
        kind: str) -> None:
    work = tmp_path / "w"
    work.mkdir()
    for name in ("suite.toml", "gold.jsonl", "trace.jsonl"):
        shutil.copy(template / name, work / name)
    monkeypatch.chdir(work)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    before = {p.name: p.read_bytes() for p in work.iterdir()}
    target = name_again(work, path, kind, in_folder=False)
    run = ragscore("run", "suite.toml", output, target, *(["--label", "v1"] if output == "--history" else []))
    rule = RULES.get(("run", output), REPORT_RULE)
    assert (run.status, run.out) == (2, "")
    assert run.err == f'ragscore: error: {output} "{target}": is qa\'s {key}; {rule}\n'
    assert {p.name: p.read_bytes() for p in work.iterdir() if p.name in before} == before
