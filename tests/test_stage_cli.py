"""The stage commands end to end: exit statuses, input errors, gates, reports, accounting, determinism."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conftest import EXAMPLES, validated, write

try:
    from jsonschema import Draft202012Validator

    from ragscore.stages.document import load_stage_schema

    VALIDATOR: Any = Draft202012Validator(load_stage_schema())
except ImportError:  # the test extra is not installed
    VALIDATOR = None

STAGES_DIR = EXAMPLES / "stages"
EXAMPLE_GATES = STAGES_DIR / "gates.toml"


def stage_report(text: str) -> dict[str, Any]:
    """Parse a stage JSON report and check it against the shipped stage schema."""
    return validated(text, VALIDATOR, "the stage report")


def example(stage: str) -> list[str]:
    return ["--gold", str(STAGES_DIR / f"{stage}_gold.jsonl"), "--pred", str(STAGES_DIR / f"{stage}_pred.jsonl"),
            "--gates-file", str(EXAMPLE_GATES)]


@pytest.mark.parametrize("stage", ["ner", "classify", "link"])
def test_examples_pass_their_gates_and_the_report_has_the_documented_shape(ragscore, isolated, stage):
    run = ragscore(stage, *example(stage))
    assert run.status == 0, run.err
    doc = stage_report(run.out)
    assert doc["stage"] == stage and doc["pass"] is True
    keys = list(doc)
    assert keys[:10] == ["stage", "pass", "schema", "version", "signature", "settings", "inputs", "counts", "metrics", "gates"]
    assert keys[-1] == "accounting"
    assert doc["inputs"]["gold"]["path"] == f"{stage}_gold.jsonl"  # an absolute path outside the folder: its name only
    assert all(gate["status"] in ("pass", "warn") for gate in doc["gates"].values())


def test_example_values_hand_checked(ragscore, isolated):
    ner = stage_report(ragscore("ner", *example("ner")).out)
    # 18 gold and 15 predicted entities; 9 exact; 3 more overlap with the same type.
    assert ner["metrics"]["strict_precision"] == pytest.approx(9 / 15)
    assert ner["metrics"]["strict_recall"] == pytest.approx(9 / 18)
    assert ner["metrics"]["partial_precision"] == pytest.approx(12 / 15)
    assert ner["metrics"]["partial_recall"] == pytest.approx(12 / 18)
    assert ner["gates"]["partial_f1"]["status"] == "warn"
    assert ner["type_distribution"]["ORG"] == {"gold": 5, "predicted": 5, "over_prediction": 0}
    link = stage_report(ragscore("link", *example("link")).out)
    # 7 linkable mentions with ranks 1, 1, 2, 1, 4, 1 (a tie at 0.5 keeps file order), none (m10 flagged NIL);
    # NIL: 3 gold, 3 flags, 2 right.
    assert link["metrics"]["hits@1"] == pytest.approx(4 / 7)
    assert link["metrics"]["hits@3"] == pytest.approx(5 / 7)
    assert link["metrics"]["mrr"] == pytest.approx((1 + 1 + 0.5 + 1 + 0.25 + 1 + 0) / 7)
    assert link["nil"] == {"gold": 3, "predicted": 3, "correct": 2, "linked_mentions": 7}


def test_a_failed_gate_exits_1_and_no_fail_exits_0(ragscore, isolated):
    args = [*example("classify"), "--gates", "accuracy=0.99"]
    run = ragscore("classify", *args)
    assert run.status == 1
    assert "ragscore: FAIL: 1 of 4 gates failed: accuracy" in run.err
    assert stage_report(run.out)["pass"] is False
    assert ragscore("classify", *args, "--no-fail").status == 0


def _ner_files(tmp: Path, gold: list[dict[str, Any]], pred: list[dict[str, Any]]) -> list[str]:
    write(tmp / "g.jsonl", gold)
    write(tmp / "p.jsonl", pred)
    return ["--gold", "g.jsonl", "--pred", "p.jsonl"]


def test_missing_unknown_and_duplicate_predictions_are_counted_and_reported(ragscore, isolated):
    gold = [{"id": i, "label": "A"} for i in ("a", "b", "c")]
    pred = [{"id": "a", "label": "B"}, {"id": "x", "label": "A"}, {"id": "a", "label": "A"}, {"id": "y", "label": "A"}]
    args = _ner_files(isolated, gold, pred)
    run = ragscore("classify", *args)
    assert run.status == 1  # the built-in gate missing <= 0
    doc = stage_report(run.out)
    assert doc["counts"] == {"gold": 3, "predicted": 1, "missing": 2, "prediction_lines": 4,
                             "unknown_predictions": 2, "duplicate_predictions": 1}
    assert doc["accounting"] == {"missing_ids": ["b", "c"], "unknown_ids": ["x", "y"], "duplicate_ids": ["a"]}
    assert doc["metrics"]["accuracy"] == pytest.approx(1 / 3)  # the last line for "a" counts; b and c are wrong
    assert doc["per_class"]["A"]["missing"] == 2
    assert run.err.splitlines()[:3] == [
        "ragscore: 2 gold items have no prediction (scored as an empty prediction): b, c",
        "ragscore: 2 prediction lines have an id not in the gold file (ignored): x, y",
        "ragscore: 1 prediction line was replaced by a later line with the same id (the last counts): a",
    ]
    relaxed = ragscore("classify", *args, "--gates", "missing=off,unknown_predictions=2,duplicate_predictions=0")
    assert relaxed.status == 1
    gates = stage_report(relaxed.out)["gates"]
    assert "missing" not in gates
    assert (gates["unknown_predictions"]["op"], gates["unknown_predictions"]["status"]) == ("<=", "pass")
    assert (gates["duplicate_predictions"]["op"], gates["duplicate_predictions"]["status"]) == ("<=", "fail")
    assert ragscore("classify", *args, "-q", "--no-fail").err == ""


def test_missing_ner_and_link_predictions_score_as_empty(ragscore, isolated):
    gold = [{"id": 1, "text": "Ada Lovelace", "entities": [{"start": 0, "end": 12, "type": "PER"}]}]
    doc = stage_report(ragscore("ner", *_ner_files(isolated, gold, []), "--no-fail").out)
    assert (doc["metrics"]["strict_recall"], doc["metrics"]["strict_precision"], doc["metrics"]["missing"]) == (0.0, 0.0, 1)
    write(isolated / "g.jsonl", [{"id": "m", "mention": "Ada", "kb_id": "Q7259"}, {"id": "n", "mention": "?", "kb_id": None}])
    write(isolated / "p.jsonl", "")
    doc = stage_report(ragscore("link", "--gold", "g.jsonl", "--pred", "p.jsonl", "--no-fail").out)
    assert (doc["metrics"]["hits@10"], doc["metrics"]["mrr"], doc["metrics"]["nil_recall"]) == (0.0, 0.0, 0.0)


BAD_INPUTS = [
    ("ner", 'g', '{"id": "a", "text": "Hi there", "entities": [{"start": 0, "end": 2, "type": "X"}]}\n'
                 '{"id": "b", "text": "Hi", "entities": [{"start": 0, "end": "2", "type": "X"}]}\n',
     'g.jsonl:2:39: expected entities[0].end to be an integer >= 0, got "2"'),
    ("ner", 'g', '{"id": "a", "text": "Hello", "entities": [{"start": 0, "end": 9, "type": "X"}]}\n',
     "g.jsonl:1:42: expected entities[0].end (9) to be at most the text's length (5)"),
    ("ner", 'g', '{"id": "a", "text": "Hello", "entities": [{"start": 3, "end": 3, "type": "X"}]}\n',
     "g.jsonl:1:42: expected entities[0].end (3) to be greater than its start (3)"),
    ("ner", 'p', '{"id": "a", "entities": [{"start": 0, "end": 1}]}\n',
     'p.jsonl:1:25: missing "type" in entities[0] (each entity is {"start", "end", "type"})'),
    ("ner", 'g', '{"id": "a", "entities": []}\n', 'g.jsonl:1:1: missing required field "text" (a string)'),
    ("classify", 'g', '{"id": "a", "label": "X"}\n{"id": "a", "label": "Y"}\n', 'g.jsonl:2:8: duplicate id "a" (first defined on line 1)'),
    ("classify", 'g', '{"id": "a", "label": "X"}\n{"label": "Y"}\n',
     'g.jsonl:2:1: missing required field "id" (a non-empty string or an integer)'),
    ("classify", 'p', '{"id": "zz", "label": true}\n', 'p.jsonl:1:23: expected "label" to be a non-empty string or an integer, got true'),
    ("classify", 'p', '{"id": "a", "label": "X"}\n["a"]\n', "p.jsonl:2:1: expected a JSON object, got an array"),
    ("classify", 'p', '{"id": "a", "label": "X"\n', "p.jsonl:1:25: invalid JSON: Expecting ',' delimiter"),
    ("classify", 'p', b'{"id": "a", "label": "\xff"}\n', "p.jsonl:1:23: expected UTF-8 text, got byte 0xff"),
    ("classify", 'p', '{"id": "a", "label": NaN}\n', "p.jsonl:1:22: invalid JSON: NaN is not a number JSON allows (use null)"),
    ("classify", 'g', "", "g.jsonl: no items: a gold file needs at least one (JSON Lines, or a JSON array of objects)"),
    ("link", 'p', '{"id": "m", "candidates": [{"kb_id": "Q1", "score": "high"}]}\n',
     'p.jsonl:1:27: expected candidates[0].score to be a number, got "high"'),
    ("link", 'p', '{"id": "m", "candidates": [{"kb_id": null, "score": 1}]}\n',
     "p.jsonl:1:27: expected candidates[0].kb_id to be a non-empty string or an integer, got null"),
    ("link", 'p', '{"id": "m", "candidates": [], "nil": 1}\n', 'p.jsonl:1:38: expected "nil" to be true or false, got 1'),
    ("link", 'p', '{"id": "m", "nil": true}\n', 'p.jsonl:1:1: missing required field "candidates" (a list of {kb_id, score})'),
    ("link", 'g', '{"id": "m", "mention": "x"}\n', 'g.jsonl:1:1: missing required field "kb_id" (a string, an integer, or null for NIL)'),
    ("link", 'p', '{"id": "m", "candidates": [{"kb_id": "Q1", "score": 1' + "0" * 400 + '}]}\n',
     "p.jsonl:1:27: expected candidates[0].score to be a number within a double's range (at most 1.8e308 in size), "
     "got 1000000000000000000000000000000000000..."),
    ("link", 'p', '{"id": "m", "candidates": [{"kb_id": "Q1", "score": 1}, {"kb_id": "Q2", "score": -1' + "0" * 309 + '}]}\n',
     "p.jsonl:1:27: expected candidates[1].score to be a number within a double's range (at most 1.8e308 in size), "
     "got -100000000000000000000000000000000000..."),
    ("ner", 'p', '{"id": "a", "entities": [{"start": 0, "end": 5, "type": "X"}, {"start": 2, "end": 9, "type": "X"}]}\n',
     "p.jsonl:1:25: expected entities[1].end (9) to be at most the gold text's length (5)"),
    ("ner", 'p', '{"id": "a", "entities": []}\n{"id": "a", "entities": [{"start": 5, "end": 6, "type": "X"}]}\n',
     "p.jsonl:2:25: expected entities[0].end (6) to be at most the gold text's length (5)"),
    ("ner", 'p', '{"id": "a", "text": "Hello!", "entities": []}\n',
     "p.jsonl:1:21: the prediction's text differs from the gold text: offsets would not refer to the same characters"),
    ("ner", 'p', '{"id": "zz", "text": 5, "entities": []}\n', 'p.jsonl:1:22: expected "text" to be a string, got 5'),
]
GOOD = {
    "ner": ('{"id": "a", "text": "Hello", "entities": []}\n', '{"id": "a", "entities": []}\n'),
    "classify": ('{"id": "a", "label": "X"}\n', '{"id": "a", "label": "X"}\n'),
    "link": ('{"id": "m", "mention": "x", "kb_id": null}\n', '{"id": "m", "candidates": [], "nil": true}\n'),
}


@pytest.mark.parametrize(("stage", "which", "content", "message"), BAD_INPUTS)
def test_bad_input_is_one_positioned_line_exit_2_and_no_report(ragscore, isolated, stage, which, content, message):
    gold, pred = GOOD[stage]
    write(isolated / "g.jsonl", content if which == "g" else gold)
    write(isolated / "p.jsonl", content if which == "p" else pred)
    run = ragscore(stage, "--gold", "g.jsonl", "--pred", "p.jsonl", "--json", "r.json", "--markdown", "r.md")
    assert run.status == 2
    assert run.err == f"ragscore: error: {message}\n"
    assert run.out == ""
    assert sorted(p.name for p in isolated.iterdir()) == ["g.jsonl", "p.jsonl"]


def test_crlf_bom_blank_lines_and_json_arrays_are_read(ragscore, isolated):
    write(isolated / "g.jsonl", b'\xef\xbb\xbf{"id": "a", "label": "X"}\r\n\r\n{"id": 2, "label": 7}\r\n')
    write(isolated / "p.json", '[\n  {"id": "a", "label": "X"},\n  {"id": "2", "label": "7"}\n]\n')
    doc = stage_report(ragscore("classify", "--gold", "g.jsonl", "--pred", "p.json").out)
    assert doc["metrics"]["accuracy"] == 1.0 and doc["counts"]["predicted"] == 2


def test_both_inputs_on_standard_input_is_a_usage_error(ragscore, isolated):
    run = ragscore("ner", "--gold", "-", "--pred", "-")
    assert (run.status, run.err) == (2, "ragscore: error: only one of --gold and --pred can be '-' (standard input)\n")


GATE_ERRORS = [
    ("link", ["--gates", "hits@7=0.5"],
     '--gates: metric "hits@7" is not computed with these settings: add 7 to the cutoffs (--cutoffs)'),
    ("link", ["--gates", "mrrr=0.5"], '--gates: unknown link metric "mrrr"; did you mean "mrr"?'),
    ("ner", ["--gates", "precision=0.5"], '--gates: unknown ner metric "precision"; did you mean "token_precision"?'),
    ("classify", ["--gates", "accuracy>>0.5"], '--gates: expected a number for "accuracy", got ">0.5"'),
]


@pytest.mark.parametrize(("stage", "extra", "message"), GATE_ERRORS)
def test_gate_errors_name_the_problem(ragscore, isolated, stage, extra, message):
    run = ragscore(stage, *example(stage), *extra)
    assert (run.status, run.err) == (2, f"ragscore: error: {message}\n")


def test_category_gates_need_a_hierarchy(ragscore, isolated):
    gold, pred = GOOD["classify"]
    write(isolated / "g.jsonl", gold)
    write(isolated / "p.jsonl", pred)
    run = ragscore("classify", "--gold", "g.jsonl", "--pred", "p.jsonl", "--gates", "category_accuracy=0.5")
    assert run.status == 2
    assert run.err == 'ragscore: error: --gates: metric "category_accuracy" needs a [classify.hierarchy] table (label = "category")\n'


GATE_FILE_ERRORS = [
    ("ner", "[ner.gates]\nstrict_f2 = 0.5\n", 'gates.toml:2: unknown ner metric "strict_f2"; did you mean "strict_f1"?'),
    ("ner", "[ner]\ngate = 1\n", 'gates.toml:2: [ner] unknown key "gate"; did you mean "gates"? (known: gates, strict)'),
    ("classify", '[classify.hierarchy]\nA = 3\n',
     'gates.toml:2: [classify.hierarchy] expected the category of "A" to be a non-empty string, got 3'),
    ("link", "[link]\ncutoffs = [0]\n",
     'gates.toml:2: [link] expected "cutoffs" to be a non-empty list of positive integers, got [0]'),
    ("link", "[link.gates]\nmrr = { min = 0.5, warn = 0.4 }\n", 'gates.toml:2: "mrr": warn must be at or above the threshold 0.5'),
    ("link", "link = 1\n", 'gates.toml: expected "[link]" to be a table'),
]


@pytest.mark.parametrize(("stage", "toml", "message"), GATE_FILE_ERRORS)
def test_gate_file_errors_point_at_the_line(ragscore, isolated, stage, toml, message):
    (isolated / "gates.toml").write_text(toml, encoding="utf-8")
    gold, pred = GOOD[stage]
    write(isolated / "g.jsonl", gold)
    write(isolated / "p.jsonl", pred)
    run = ragscore(stage, "--gold", "g.jsonl", "--pred", "p.jsonl")
    assert (run.status, run.err) == (2, f"ragscore: error: {message}\n")


def test_gates_come_from_pyproject_then_gates_toml_then_the_command_line(ragscore, isolated):
    (isolated / "pyproject.toml").write_text('[tool.ragscore.classify.gates]\naccuracy = 0.9\nmacro_f1 = 0.1\n', encoding="utf-8")
    (isolated / "gates.toml").write_text('[classify]\nstrict = true\n[classify.gates]\naccuracy = 0.5\n', encoding="utf-8")
    write(isolated / "g.jsonl", [{"id": "a", "label": "X"}, {"id": "b", "label": "Y"}])
    write(isolated / "p.jsonl", [{"id": "a", "label": "X"}, {"id": "b", "label": "X"}])
    doc = stage_report(ragscore("classify", "--gold", "g.jsonl", "--pred", "p.jsonl").out)
    assert {name: (g["op"], g["threshold"], g["source"]) for name, g in doc["gates"].items()} == {
        "missing": ("<=", 0.0, "default"), "accuracy": (">=", 0.5, "gates.toml"), "macro_f1": (">=", 0.1, "pyproject.toml")}
    assert doc["settings"]["strict"] is True and "strict:yes" in doc["signature"]
    run = ragscore("classify", "--gold", "g.jsonl", "--pred", "p.jsonl", "--gates", "accuracy=0.75")
    assert run.status == 1 and stage_report(run.out)["gates"]["accuracy"]["source"] == "--gates"


def test_score_reads_a_gates_file_with_stage_tables_and_ignores_them(ragscore, isolated):
    run = ragscore("--gold", EXAMPLES / "gold.jsonl", "--trace", EXAMPLES / "trace.jsonl", "--gates-file", EXAMPLE_GATES)
    assert run.status == 0, run.err
    assert set(json.loads(run.out)["gates"]) == {"precision", "chr", "under_refusal", "over_refusal", "missing"}


def test_link_cutoffs_from_the_option_and_the_settings_file(ragscore, isolated):
    doc = stage_report(ragscore("link", *example("link"), "--cutoffs", "2,20,5,1", "--gates", "hits@20=0.1").out)
    assert [name for name in doc["metrics"] if name.startswith("hits@")] == ["hits@1", "hits@2", "hits@5", "hits@20"]
    assert doc["settings"]["cutoffs"] == [1, 2, 5, 20] and "cutoffs:1,2,5,20" in doc["signature"]
    (isolated / "gates.toml").write_text("[link]\ncutoffs = [3]\n", encoding="utf-8")
    doc = stage_report(ragscore("link", "--gold", STAGES_DIR / "link_gold.jsonl", "--pred", STAGES_DIR / "link_pred.jsonl").out)
    assert [name for name in doc["metrics"] if name.startswith("hits@")] == ["hits@3"]


def test_strict_fails_a_gate_on_an_undefined_metric(ragscore, isolated):
    write(isolated / "g.jsonl", GOOD["link"][0])  # a NIL mention, and a candidate for it: no linked mention
    write(isolated / "p.jsonl", '{"id": "m", "candidates": [{"kb_id": "Q1", "score": 1}]}\n')
    args = ["--gold", "g.jsonl", "--pred", "p.jsonl", "--gates", "mrr=0.5"]
    assert stage_report(ragscore("link", *args).out)["gates"]["mrr"]["status"] == "skipped"
    run = ragscore("link", *args, "--strict")
    assert run.status == 1 and stage_report(run.out)["gates"]["mrr"]["status"] == "fail"


@pytest.mark.parametrize("stage", ["ner", "classify", "link"])
def test_every_report_format_and_same_bytes_twice(ragscore, isolated, stage):
    outputs = []
    for attempt in ("1", "2"):
        folder = isolated / attempt
        folder.mkdir()
        run = ragscore(stage, *example(stage), "--format", "text", "--json", folder / "r.json", "--markdown",
                       folder / "r.md", "--html", folder / "r.html", "--junit", folder / "r.xml")
        assert run.status == 0
        outputs.append([run.out] + [(folder / name).read_bytes() for name in ("r.json", "r.md", "r.html", "r.xml")])
    assert outputs[0] == outputs[1]
    text, as_json, markdown, html, junit = outputs[0]
    assert text.startswith(f"ragscore {stage} PASS")
    assert stage_report(as_json.decode())["stage"] == stage
    assert as_json.decode() == ragscore(stage, *example(stage)).out
    assert markdown.decode().startswith(f"# ragscore {stage} report\n\n**PASS**")
    assert markdown.decode() == ragscore(stage, *example(stage), "--format", "markdown").out
    assert html.decode().startswith("<!DOCTYPE html>") and "<script" not in html.decode()
    suite = ET.fromstring(junit).find("testsuite")
    assert suite is not None and int(suite.get("failures", "-1")) == 0
    assert [case.get("name") for case in suite.iter("testcase")][0] == "missing"
    assert ragscore(stage, *example(stage), "--format", "none").out == ""


def test_hostile_labels_are_escaped_in_markdown_and_html(ragscore, isolated):
    label = "X|1\n## injected <img src=x onerror=alert(1)>"
    write(isolated / "g.jsonl", [{"id": "a|b", "label": label}, {"id": "c", "label": "Y"}])
    write(isolated / "p.jsonl", [{"id": "c", "label": label}])
    args = ["--gold", "g.jsonl", "--pred", "p.jsonl", "--no-fail", "--html", "r.html"]
    markdown = ragscore("classify", *args, "--format", "markdown").out
    assert "\n## injected" not in markdown and "<img" not in markdown.replace("\\<img", "")
    assert "| Y | X\\|1<br>## injected \\<img src=x onerror=alert(1)\\> | 1 |" in markdown  # the top confusion
    assert "a\\|b" in markdown  # the missing id, in the accounting table
    page = (isolated / "r.html").read_text(encoding="utf-8")
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_stage_schema_ships_with_the_package():
    from ragscore.stages.document import load_stage_schema

    schema = load_stage_schema()
    assert schema["properties"]["stage"] == {"enum": ["ner", "classify", "link"]}


@pytest.mark.parametrize("stage", ["ner", "classify", "link"])
def test_the_docs_show_the_real_output_of_each_example(ragscore, monkeypatch, stage):
    from docs import doc_block

    monkeypatch.chdir(EXAMPLES.parent)
    run = ragscore(stage, "--gold", f"examples/stages/{stage}_gold.jsonl", "--pred", f"examples/stages/{stage}_pred.jsonl",
                   "--gates-file", "examples/stages/gates.toml", "--format", "text", "-q")
    block = doc_block(f"$ ragscore {stage} --gold examples/stages/{stage}_gold.jsonl")
    assert block.endswith(f"--format text -q\n{run.out}")


def test_a_prediction_with_the_gold_text_or_an_unknown_id_is_read(ragscore, isolated):
    gold = [{"id": "a", "text": "Hello", "entities": [{"start": 0, "end": 5, "type": "X"}]}]
    pred = [{"id": "a", "text": "Hello", "entities": [{"start": 0, "end": 5, "type": "X"}]},
            {"id": "zz", "text": "a longer text", "entities": [{"start": 0, "end": 13, "type": "X"}]}]
    doc = stage_report(ragscore("ner", *_ner_files(isolated, gold, pred)).out)
    assert doc["metrics"]["strict_f1"] == 1.0 and doc["counts"]["unknown_predictions"] == 1


def test_macro_averages_are_the_same_bytes_under_any_hash_seed(tmp_path):
    rng = random.Random(5)
    types = [f"T{n:02d}" for n in range(40)]
    gold, pred = [], []
    for doc in range(60):
        text = " ".join(f"w{k}" for k in range(40))
        spans = [(4 * k, 4 * k + 2) for k in range(10)]
        gold.append({"id": doc, "text": text,
                     "entities": [{"start": s, "end": e, "type": rng.choice(types)} for s, e in spans]})
        pred.append({"id": doc, "entities": [{"start": s, "end": e, "type": rng.choice(types)} for s, e in spans
                                             if rng.random() < 0.8]})
    write(tmp_path / "g.jsonl", gold)
    write(tmp_path / "p.jsonl", pred)
    outputs = set()
    for seed in ("1", "11", "123", "4567"):
        run = subprocess.run([sys.executable, "-m", "ragscore", "ner", "--gold", "g.jsonl", "--pred", "p.jsonl",
                              "--no-fail", "-q"], cwd=tmp_path, env={**os.environ, "PYTHONHASHSEED": seed},
                             capture_output=True, check=True)
        outputs.add(run.stdout)
    assert len(outputs) == 1


def test_stderr_notes_show_control_characters_in_ids_as_escapes(ragscore, isolated):
    gold = [{"id": "a\x1b[2J", "label": "A"}, {"id": "b", "label": "A"}]
    pred = [{"id": "b", "label": "A"}, {"id": "x\x1b]0;title\x07", "label": "A"}, {"id": "b", "label": "A"}]
    run = ragscore("classify", *_ner_files(isolated, gold, pred), "--no-fail")
    assert "\x1b" not in run.err and "\x07" not in run.err
    assert run.err.splitlines()[:3] == [
        "ragscore: 1 gold item has no prediction (scored as an empty prediction): a\\x1b[2J",
        "ragscore: 1 prediction line has an id not in the gold file (ignored): x\\x1b]0;title\\x07",
        "ragscore: 1 prediction line was replaced by a later line with the same id (the last counts): b",
    ]


def test_labels_starting_with_a_hash_stay_text_in_the_html_report(ragscore, isolated):
    gold = [{"id": "a", "label": "#1"}, {"id": "b", "label": "1"}, {"id": "#3", "label": "#2"}]
    pred = [{"id": "a", "label": "#1"}, {"id": "b", "label": "#1"}]
    ragscore("classify", *_ner_files(isolated, gold, pred), "--no-fail", "--html", "r.html", "--format", "none")
    page = (isolated / "r.html").read_text(encoding="utf-8")
    per_class = page.split('<table id="detail-0">', 1)[1].split("</table>", 1)[0]
    assert [row.split("</td>", 1)[0] for row in per_class.split("<tr><td")[1:]] == [">&#35;1", ">&#35;2", ">1"]
    assert '<td class="num">1</td><td class="num">0.5000</td>' not in per_class  # "#1" is no number 1
    assert "<td>&#35;3</td>" in page  # the missing id, in the accounting table


@pytest.mark.parametrize(("stage", "gold", "pred", "message"), [
    ("ner", GOOD["ner"][0], '{"id": "a", "entities": []}\n{"id": "b", "entities": [{"start": 0, "end": 1, "type": "X"}]}\n',
     'g.jsonl: no entity, in the gold file or in the predictions ("p.jsonl"): nothing to score (every metric of it '
     "would be n/a)"),
    ("link", GOOD["link"][0], GOOD["link"][1],
     'g.jsonl: no link (every gold kb_id is null and no prediction lists a candidate), in the gold file or in the '
     'predictions ("p.jsonl"): nothing to score (every metric of it would be n/a)'),
])
def test_a_run_with_nothing_to_score_is_an_input_error(ragscore, isolated, stage, gold, pred, message):
    """Neither side holds an entity (ner) or a link: every metric n/a would pass every gate (issue 32). An
    entity of an unknown prediction counts for nothing. (classify cannot have no label: each gold line has one.)"""
    write(isolated / "g.jsonl", gold)
    write(isolated / "p.jsonl", pred)
    run = ragscore(stage, "--gold", "g.jsonl", "--pred", "p.jsonl", "--json", "r.json")
    assert (run.status, run.out, run.err) == (2, "", f"ragscore: error: {message}\n")
    assert not (isolated / "r.json").exists()


CONLL2003 = Path(__file__).parent / "data" / "conll2003"


def test_scheme_is_told_from_the_tags_noted_and_recorded(ragscore, isolated):
    gold, pred = str(CONLL2003 / "eng.conll"), str(CONLL2003 / "pred.conll")
    run = ragscore("ner", "--gold", gold, "--pred", pred, "--json", "r.json", "--format", "none")
    assert (run.status, run.err) == (0, f"ragscore: {gold}: tags read as IOB1, CoNLL-2003's (an I- tag starts an entity "
                                        'unless it follows its own type: "I-ORG" at the start of its sentence at line 3); '
                                        "--scheme iob2 reads such a tag as no entity\n"
                                        "ragscore: pass: 1 gate checked, none failed\n")
    doc = stage_report((isolated / "r.json").read_text(encoding="utf-8"))
    assert [doc["inputs"][role]["scheme"] for role in ("gold", "pred")] == ["iob1", "iob2"]
    assert doc["metrics"]["strict_f1"] == 0.75
    forced = stage_report(ragscore("ner", "--gold", gold, "--pred", pred, "--scheme", "iob2", "--no-fail").out)
    assert forced["inputs"]["gold"]["scheme"] == "iob2" and forced["metrics"]["strict_recall"] == 0.0
    plain = stage_report(ragscore("ner", *example("ner")).out)
    assert "scheme" not in plain["inputs"]["gold"]  # JSON Lines: no tags, no scheme


def test_a_scheme_without_conll_files_is_a_usage_error(ragscore):
    run = ragscore("ner", *example("ner"), "--scheme", "iob1")
    assert (run.status, run.err) == (2, "ragscore: error: --scheme iob1 reads CoNLL tags, and neither input is a "
                                        "CoNLL file\n")
    run = ragscore("ner", *example("ner"), "--scheme", "iob5")
    assert (run.status, run.err.splitlines()[-1]) == (2, "ragscore ner: error: argument --scheme: invalid choice: "
                                                         "'iob5' (choose from 'auto', 'iob1', 'iob2', 'iobes', 'bilou')")


def test_a_scheme_that_contradicts_the_format_is_a_usage_error(ragscore):
    gold, pred = str(CONLL2003 / "eng.conll"), str(CONLL2003 / "pred.conll")
    run = ragscore("ner", "--gold", gold, "--pred", pred, "--input-format", "iob2", "--scheme", "iob1")
    assert (run.status, run.err) == (2, "ragscore: error: --scheme iob1 contradicts --input-format iob2 (which reads "
                                        "IOB2 tags): give one of them\n")


def test_the_schema_holds_an_inputs_scheme(ragscore):
    from jsonschema import Draft202012Validator

    from ragscore.stages.document import load_stage_schema

    validator = Draft202012Validator(load_stage_schema())
    doc = json.loads(ragscore("ner", "--gold", str(CONLL2003 / "eng.conll"), "--pred", str(CONLL2003 / "pred.conll")).out)
    assert not list(validator.iter_errors(doc))
    doc["inputs"]["gold"]["scheme"] = "ioe2"
    assert [e.message for e in validator.iter_errors(doc)] == [
        "'ioe2' is not one of ['iob1', 'iob2', 'iobes', 'bilou']"]


def test_a_suite_task_takes_the_scheme(ragscore, isolated):
    for name in ("eng.conll", "pred.conll"):
        (isolated / name).write_bytes((CONLL2003 / name).read_bytes())
    (isolated / "ragscore.toml").write_text('[tasks.ner]\ngold = "eng.conll"\npred = "pred.conll"\nscheme = "iob2"\n'
                                            '[tasks.ner.gates]\nstrict_f1 = 0.5\n', encoding="utf-8")
    import ragscore as package

    outcome = package.run_suite(str(isolated / "ragscore.toml")).outcomes[0]
    assert outcome.result is not None and outcome.result.document["inputs"]["gold"]["scheme"] == "iob2"
    (isolated / "ragscore.toml").write_text('[tasks.ner]\ngold = "eng.conll"\npred = "pred.conll"\nscheme = "ioe"\n',
                                            encoding="utf-8")
    run = ragscore("run", "ragscore.toml")
    assert (run.status, run.err) == (2, 'ragscore: error: ragscore.toml:4: [tasks.ner] scheme: expected one of auto, '
                                        'iob1, iob2, iobes, bilou, got "ioe"\n')
