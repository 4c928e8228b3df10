"""No raw control character from the input in any report, and GitHub annotations nobody can forge.

Every kind of control character (C0, DEL, C1, ANSI escape sequences, line and paragraph
separators, bidirectional controls) goes into every input text field that reaches a report:
qids, questions, claims, citations, slice labels, file names, refusal tokens and the seed (in the
settings signature), diagnosis text, and the stage reports' ids, types, labels, mentions and kb
ids. Each report format must show them as escapes: the only raw control character any report
may hold is the newline that ends its own lines, and no line of input starts a line of its own
(under GitHub Actions a line starting with ``::`` is a workflow command).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import checked_report
from ragscore.cli import main
from ragscore.comparing.report import render_compare_markdown
from ragscore.reports.github import annotation_lines, append_step_summary
from ragscore.reports.html import esc, esc_lines
from ragscore.reports.json_report import render_json
from ragscore.reports.junit import clean as junit_clean
from ragscore.reports.markdown import cell, code
from ragscore.reports.text import clean as text_clean

# One of each kind: C0 (NUL, bell, backspace, vertical tab, form feed, CR, tab), ANSI sequences
# (clear screen, set the window title, colour), DEL, C1 (NEL, CSI), the Arabic letter mark, the
# bidi marks, embeddings, overrides and isolates, and the line and paragraph separators.
CONTROLS = ("\x00\x01\x07\x08\x0b\x0c\r\x1b[2J\x1b]0;pwned\x07\x1b[31m\x7f\x80\x85\x9b31m\x9f"
            "\u061c\u200e\u200f\u202a\u202e\u2066\u2069\u2028\u2029\t")
# What no report may hold raw: the set above, written out here so that the test does not trust
# the code it tests. A tab is in it: no report format needs one.
RAW_RE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
# ragscore's own annotations: the title (whose ":" and "," are escaped) names a gate, or a suite's task.
OWN_ANNOTATION_RE = re.compile(r"::(error|warning) title=ragscore [^:,]+::.+")
PROBE = "E\x1b[2J\u202e\x00"  # a short qid whose rendering each format is checked for exactly


def hostile(tag: str) -> str:
    """Return input text holding every kind of control character, then a forged workflow command."""
    return f"{tag}{CONTROLS}\n::error::forged {tag}"


def assert_safe(text: str, where: str, *, tabs: bool = False) -> None:
    """Check that ``text`` holds no raw control character and that no input line starts a line of its own.

    With ``tabs``, a tab may separate fields (trec_eval's text output: input text holds none).
    """
    found = RAW_RE.search(text.replace("\t", " ") if tabs else text)
    assert found is None, f"{where}: raw {found.group()!r} in {text[max(0, found.start() - 60):found.start() + 10]!r}"
    # The runner reads a command at the start of a line (after white space), and the older form
    # "##[command]" anywhere in it.
    forged = [line for line in text.split("\n")
              if (line.lstrip().startswith("::") and not OWN_ANNOTATION_RE.fullmatch(line)) or "##[" in line]
    assert not forged, f"{where}: {forged[0]!r}"


def run(folder: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run the command line in-process in ``folder`` (arguments may hold NUL: no exec) and capture its output."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        patch.chdir(folder)
        for key, value in (env or {}).items():
            patch.setenv(key, value)
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


def write_lines(path: Path, objects: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path.name


# ---- ragscore score: every report of one run -----------------------------------------------------

GOLD_NAME = "gold\x1b[31m\u202e\x07\x7f\x85\u2028\t\n::error::forged file.jsonl"  # a file name is input too


def score_inputs(folder: Path) -> None:
    """Write a gold set, traces and gates.toml whose every text field is hostile."""
    gold = [
        {"qid": hostile("Q1"), "question": hostile("question 1"), "answerable": True, "gold_citations": [hostile("cit1")],
         "gold_claim_substr": [hostile("needle")], "tags": {"lang": hostile("lang")}},
        {"qid": hostile("Q2"), "question": hostile("question 2"), "answerable": False, "tags": {"lang": hostile("lang")}},
        {"qid": hostile("Q3"), "question": hostile("question 3"), "answerable": True, "gold_citations": [hostile("cit3")],
         "gold_claim_substr": ["plain needle"], "forbidden_substr": [hostile("forbidden")]},
        {"qid": hostile("Q4"), "question": hostile("question 4"), "answerable": True, "gold_citations": [hostile("cit4")]},
        {"qid": hostile("missing"), "question": hostile("question 5"), "answerable": True},
        {"qid": PROBE, "question": PROBE, "answerable": True, "gold_citations": ["d"]},
    ]
    traces = [
        {"qid": hostile("Q1"), "retrieved_ids": [hostile("cit1")],
         "answer_json": {"claim": "x " + hostile("needle"), "citations": [hostile("other")]}},
        {"qid": hostile("Q2"), "retrieved_ids": [], "answer_json": {"claim": hostile("claim 2"), "citations": []}},
        {"qid": hostile("Q3"), "retrieved_ids": [hostile("cit3")],
         "answer_json": {"claim": "plain needle " + hostile("forbidden"), "citations": [hostile("cit3")]}},
        {"qid": hostile("Q4"), "retrieved_ids": [hostile("other")], "answer_json": {"claim": "c", "citations": [hostile("other")]}},
        {"qid": hostile("unknown"), "refused": True},
        {"qid": PROBE, "retrieved_ids": ["d"], "answer_json": {"claim": "e", "citations": ["x"]}},
        {"qid": PROBE, "retrieved_ids": ["d"], "answer_json": {"claim": PROBE, "citations": ["d"]}},
    ]
    write_lines(folder / GOLD_NAME, gold)
    write_lines(folder / "trace.jsonl", traces)
    (folder / "scores.csv").write_text(f"qid,judge\n{json.dumps(hostile('no such qid'))},0.5\n{json.dumps(PROBE)},1\n",
                                       encoding="utf-8")
    (folder / "gates.toml").write_text(
        "[gates]\nprecision = 0.99\n[slice_gates]\nmin_n = 1\nprecision = 0.99\n"
        "[diagnose.under_refusal]\nwarning = 0.01\ncritical = 0.02\n"
        f"causes = [{json.dumps(hostile('cause'))}]\nactions = [{json.dumps(hostile('action'))}]\n", encoding="utf-8")


SCORE_ARGS = ("--gold", GOLD_NAME, "--trace", "trace.jsonl", "--scores", "scores.csv", "--per-question",
              "--by", "tags.lang", "--refusal-token", hostile("token"), "--seed", hostile("seed"))
SCORE_OUTPUTS = ["json file", "markdown file", "html file", "junit file", "text stdout", "notes and annotations",
                 "step summary", "json stdout", "markdown stdout", "explain stdout"]


@pytest.fixture(scope="module")
def score_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Score the hostile inputs once per output and return every text ragscore wrote, by name."""
    folder = tmp_path_factory.mktemp("score")
    score_inputs(folder)
    github = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(folder / "summary.md")}
    status, text, notes = run(folder, *SCORE_ARGS, "--json", "r.json", "--markdown", "r.md", "--html", "r.html",
                              "--junit", "r.xml", "--format", "text", env=github)
    assert status == 1, notes
    outputs = {"text stdout": text, "notes and annotations": notes}
    for name, file in (("json file", "r.json"), ("markdown file", "r.md"), ("html file", "r.html"),
                       ("junit file", "r.xml"), ("step summary", "summary.md")):
        outputs[name] = (folder / file).read_text(encoding="utf-8")
    for fmt in ("json", "markdown"):
        outputs[f"{fmt} stdout"] = run(folder, *SCORE_ARGS, "--format", fmt, "-q")[1]
    outputs["explain stdout"] = run(folder, *SCORE_ARGS, "--explain", hostile("Q1"), "--explain", PROBE, "-q")[1]
    return outputs


@pytest.mark.parametrize("name", SCORE_OUTPUTS)
def test_no_score_output_holds_a_raw_control_character(score_outputs: dict[str, str], name: str) -> None:
    assert_safe(score_outputs[name], name)


def test_score_outputs_hold_the_input_text_they_should(score_outputs: dict[str, str]) -> None:
    # Each hostile field reaches the reports (so the check above is not vacuous), escaped.
    md, html, text = score_outputs["markdown file"], score_outputs["html file"], score_outputs["text stdout"]
    for tag in ("Q1", "question 1", "needle", "lang", "cause", "action", "token", "seed", "other"):
        assert f"forged {tag}" in md, tag
    for tag in ("Q1", "question 1", "needle", "cause", "action", "token", "seed", "file"):
        assert f"forged {tag}" in html, tag
    assert "forged cause" in text and "forged Q1" in text
    notes = score_outputs["notes and annotations"]
    for tag in ("missing", "unknown", "lang", "no such qid"):
        assert f"forged {tag}" in notes, tag
    assert "forged question 1" in score_outputs["explain stdout"] and "forged token" in score_outputs["explain stdout"]


def test_score_outputs_render_a_control_character_as_its_escape(score_outputs: dict[str, str]) -> None:
    shown = "E\\x1b[2J\\u202e\\x00"
    md = score_outputs["markdown file"]
    assert "| E\\\\x1b\\[2J\\\\u202e\\\\x00 | yes | yes | no | `OK` |" in md  # Markdown shows \x1b once rendered
    assert f"<tr data-label=\"OK\"><td class=\"word\"><code>{shown}</code></td><td>{shown}</td>" in score_outputs["html file"]
    assert f'<testcase classname="ragscore.questions" name="{shown}"' in score_outputs["junit file"]
    assert "replaced by a later line for the same question (the last counts): " + shown in score_outputs["notes and annotations"]
    report = score_outputs["json file"]
    assert '{"qid": "E\\u001b[2J\\u202e\\u0000", "question": "E\\u001b[2J\\u202e\\u0000", "label": "OK"' in report
    assert f"qid: {shown}\n" in score_outputs["explain stdout"]
    # The JSON keeps every value exactly: escapes are JSON's own, read back to the same text.
    doc = checked_report(report)
    assert doc["questions"][0]["qid"] == hostile("Q1") and doc["inputs"]["gold"]["path"] == GOLD_NAME
    assert doc["settings"]["seed"] == hostile("seed") and hostile("token") in doc["settings"]["refusal_tokens"]
    assert "\\u2028" in report and "\\u007f" in report and "\\u202e" in report
    assert json.loads(score_outputs["json stdout"])["questions"] == doc["questions"]


def test_annotations_are_ragscores_own_and_one_line_each(score_outputs: dict[str, str]) -> None:
    lines = [line for line in score_outputs["notes and annotations"].split("\n") if line.startswith("::")]
    assert lines == [
        "::error title=ragscore gate precision::precision = 0.2000, expected >= 0.99",
        "::error title=ragscore gate chr::chr = 0.4000, expected >= 0.75",
        "::error title=ragscore gate under_refusal::under_refusal = 1.0000, expected <= 0.05",
        "::error title=ragscore gate over_refusal::over_refusal = 0.2000, expected <= 0.1",
        "::error title=ragscore gate missing::missing = 1, expected <= 0",
    ]


def test_every_junit_report_parses(score_outputs: dict[str, str]) -> None:
    suite = ET.fromstring(score_outputs["junit file"].encode("utf-8"))
    names = [case.get("name") for case in suite.iter("testcase")]
    assert "Q1\\x00\\x01\\x07\\x08\\x0b\\x0c\\r\\x1b[2J" + "\\x1b]0;pwned\\x07\\x1b[31m\\x7f\\x80\\x85\\x9b31m\\x9f" \
        "\\u061c\\u200e\\u200f\\u202a\\u202e\\u2066\\u2069\\u2028\\u2029\\t\\n::error::forged Q1" in names


# ---- ragscore compare --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compare_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Compare two runs over hostile qids (some fixed, some broken) with hostile settings; return every output."""
    folder = tmp_path_factory.mktemp("compare")
    qids = [hostile(f"Q{i}") for i in range(4)]
    write_lines(folder / "gold.jsonl", [{"qid": q, "question": hostile(f"question {i}"), "answerable": True,
                                         "gold_citations": ["d"]} for i, q in enumerate(qids)])
    good = {"retrieved_ids": ["d"], "answer_json": {"claim": "c", "citations": ["d"]}}
    bad = {"retrieved_ids": ["d"], "answer_json": {"claim": "c", "citations": ["x"]}}
    write_lines(folder / "a.jsonl", [{"qid": q, **(good if i % 2 else bad)} for i, q in enumerate(qids)])
    write_lines(folder / "b.jsonl", [{"qid": q, **(bad if i % 2 else good)} for i, q in enumerate(qids)])
    (folder / "gates.toml").write_text(f"[scoring]\nrefusal_tokens = [{json.dumps(hostile('token'))}]\n"
                                       f"seed = {json.dumps(hostile('seed'))}\n[regression]\nprecision = 0.01\n",
                                       encoding="utf-8")
    args = ("compare", "--gold", "gold.jsonl", "--baseline", "a.jsonl", "--trace", "b.jsonl", "--bootstrap", "20")
    status, md, notes = run(folder, *args, "--format", "markdown", "--json", "c.json", "--markdown", "c.md")
    assert status in (0, 1), notes
    outputs = {"markdown stdout": md, "notes": notes, "json stdout": run(folder, *args, "--no-fail")[1]}
    for name, file in (("json file", "c.json"), ("markdown file", "c.md")):
        outputs[name] = (folder / file).read_text(encoding="utf-8")
    return outputs


@pytest.mark.parametrize("name", ["markdown stdout", "markdown file", "json stdout", "json file", "notes"])
def test_no_compare_output_holds_a_raw_control_character(compare_outputs: dict[str, str], name: str) -> None:
    assert_safe(compare_outputs[name], name)


def test_compare_outputs_hold_the_qids_and_settings_escaped(compare_outputs: dict[str, str]) -> None:
    md = compare_outputs["markdown file"]
    assert "**Broken** (2): Q1\\\\x00\\\\x01" in md and "**Fixed** (2): Q0\\\\x00" in md
    assert "seed:seed\\x00\\x01\\x07" in md and "forged token" in md
    doc = json.loads(compare_outputs["json file"])
    assert doc["changed"] == {"fixed": [hostile("Q0"), hostile("Q2")], "broken": [hostile("Q1"), hostile("Q3")]}


def test_compare_markdown_escapes_metric_names_from_a_baseline_report() -> None:
    # A baseline report is input: its metric names reach the table, as code only when code can hold them.
    metric = {"baseline": 0.5, "candidate": 0.5, "delta": 0.0, "delta_interval": None, "p_value": None,
              "p_adjusted": None, "method": None}
    doc = {"pass": False, "signature": hostile("sig"), "metrics": {hostile("m"): metric, "a\x1bb": metric},
           "mcnemar": {"fixed": 0, "broken": 0, "p_value": 1.0}, "changed": {"fixed": [], "broken": []},
           "regressions": {hostile("r"): {"allowed": 0.1, "worse_by": 0.2, "p_adjusted": None, "status": "fail"}}}
    md = "".join(render_compare_markdown(doc, 0.05))
    assert_safe(md, "compare markdown")
    assert "| `a\\x1bb` | 0.5000 | 0.5000 | +0.0000 = |" in md


# ---- the stage commands ------------------------------------------------------------------------


def stage_inputs(folder: Path, stage: str) -> tuple[str, str]:
    """Write hostile gold and prediction files for a stage: ids, types, labels, mentions and kb ids."""
    ids = [hostile(f"id{i}") for i in range(3)]
    if stage == "ner":
        text = "Ada Lovelace " + hostile("text")
        gold = [{"id": i, "text": text, "entities": [{"start": 0, "end": 3, "type": hostile("type A")}]} for i in ids]
        pred = [{"id": i, "entities": [{"start": 0, "end": 3, "type": hostile("type B")}]} for i in ids[1:]]
    elif stage == "classify":
        gold = [{"id": i, "label": hostile("label A")} for i in ids]
        pred = [{"id": i, "label": hostile("label B")} for i in ids[1:]]
    else:
        gold = [{"id": i, "mention": hostile("mention"), "kb_id": hostile("kb")} for i in ids]
        pred = [{"id": i, "candidates": [{"kb_id": hostile("kb"), "score": 1.0}], "nil": False} for i in ids[1:]]
    extra = {**pred[0], "id": hostile("unknown id")}
    write_lines(folder / f"{stage}_gold.jsonl", gold)
    write_lines(folder / f"{stage}_pred.jsonl", [*pred, pred[0], extra])  # a duplicate and an unknown id
    return f"{stage}_gold.jsonl", f"{stage}_pred.jsonl"


@pytest.fixture(scope="module", params=["ner", "classify", "link"])
def stage_outputs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Run one stage over hostile inputs with every report; return every output."""
    stage = request.param
    folder = tmp_path_factory.mktemp(stage)
    gold, pred = stage_inputs(folder, stage)
    args = (stage, "--gold", gold, "--pred", pred, "--gates", "missing<=0", "--no-fail")
    _, text, notes = run(folder, *args, "--format", "text", "--json", "r.json", "--markdown", "r.md",
                         "--html", "r.html", "--junit", "r.xml")
    outputs = {"text stdout": text, "notes": notes}
    for name, file in (("json file", "r.json"), ("markdown file", "r.md"), ("html file", "r.html"), ("junit file", "r.xml")):
        outputs[name] = (folder / file).read_text(encoding="utf-8")
    for fmt in ("json", "markdown"):
        outputs[f"{fmt} stdout"] = run(folder, *args, "--format", fmt, "-q")[1]
    outputs["stage"] = stage
    return outputs


@pytest.mark.parametrize("name", ["json file", "markdown file", "html file", "junit file", "text stdout", "notes",
                                  "json stdout", "markdown stdout"])
def test_no_stage_output_holds_a_raw_control_character(stage_outputs: dict[str, str], name: str) -> None:
    assert_safe(stage_outputs[name], f"{stage_outputs['stage']} {name}")


def test_stage_outputs_hold_the_input_text_escaped(stage_outputs: dict[str, str]) -> None:
    stage = stage_outputs["stage"]
    md, html, notes = stage_outputs["markdown file"], stage_outputs["html file"], stage_outputs["notes"]
    assert "forged id0" in md and "forged id0" in html and "forged unknown id" in notes  # the accounting
    if stage == "ner":
        assert "| type A\\\\x00\\\\x01" in md and "forged type B" in html
    if stage == "classify":
        assert "| label A\\\\x00\\\\x01" in md and "forged label B" in html
    ET.fromstring(stage_outputs["junit file"].encode("utf-8"))
    doc = json.loads(stage_outputs["json file"])
    assert doc["accounting"]["missing_ids"] == [hostile("id0")]


# ---- each format's escaping helper, exactly ---------------------------------------------------


def test_each_format_shows_control_characters_as_escapes() -> None:
    text = "a\x1b[31mb\u202ec\x00d\x7fe\x85f\u2028g\th"
    shown = "a\\x1b[31mb\\u202ec\\x00d\\x7fe\\x85f\\u2028g\\th"
    assert text_clean(text) == shown
    assert esc(text) == shown and esc_lines("1\n2" + text) == "1<br>2" + shown
    assert cell(text) == "a\\\\x1b\\[31mb\\\\u202ec\\\\x00d\\\\x7fe\\\\x85f\\\\u2028g\\\\th"
    assert cell("line1\r\nline2\x1b") == "line1<br>line2\\\\x1b"
    assert code(text) == f"`{shown}`" and code("a`b") == "a\\`b" and code("a|\x1b") == "a\\|\\\\x1b"
    assert junit_clean(text + "\ufffe") == shown + "\\ufffe"
    assert text_clean("\u061c\u200f\u2069\udcff") == "\\u061c\\u200f\\u2069\\udcff"  # bidi marks, a lone surrogate
    assert "".join(render_json({"k\x7f": text})) == \
        '{\n  "k\\u007f": "a\\u001b[31mb\\u202ec\\u0000d\\u007fe\\u0085f\\u2028g\\th"\n}\n'


def test_json_escapes_what_json_dumps_leaves_raw_and_keeps_every_value() -> None:
    values = {"c1": "".join(map(chr, range(0x7f, 0xa0))), "separators": "\u2028\u2029", "bidi": "\u202a\u202e\u2066\u2069",
              "surrogate": "\udcff", "plain": "é ✓ 😀"}
    text = "".join(render_json(values))
    assert_safe(text, "json")
    assert json.loads(text) == values and "é ✓ 😀" in text  # other non-ASCII text stays readable


@pytest.mark.skipif(sys.platform != "linux", reason="a file name that is not UTF-8 needs a Linux file system")
def test_a_file_name_that_is_not_utf8_shows_as_an_escape(tmp_path: Path) -> None:
    name = os.fsdecode(b"gold\xff.jsonl")  # Python reads the byte 0xff as the lone surrogate U+DCFF
    write_lines(tmp_path / name, [{"qid": "a", "answerable": True}])
    write_lines(tmp_path / "t.jsonl", [{"qid": "a", "refused": True}])
    status, out, err = run(tmp_path, "--gold", name, "--trace", "t.jsonl", "--html", "r.html", "--junit", "r.xml", "-q")
    assert (status, err) == (1, "")
    assert '"path": "gold\\udcff.jsonl"' in out and checked_report(out)["inputs"]["gold"]["path"] == name
    assert "<code>gold\\udcff.jsonl</code>" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_annotations_escape_every_piece_of_input() -> None:
    gate = {"op": ">=", "threshold": 0.8, "warn": None, "value": 0.5, "status": "fail", "source": "test"}
    (line,) = annotation_lines({"gates": {"m\x1b[31m\u202e,:%\r\n::error::x\t": gate}})
    assert line == ("::error title=ragscore gate m\\x1b[31m\\u202e%2C%3A%25%0D%0A%3A%3Aerror%3A%3Ax\\t"
                    "::m\\x1b[31m\\u202e,:%25%0D%0A::error::x\\t = 0.5000, expected >= 0.8")
    assert_safe(line, "annotation")
    for metric in (hostile("metric"), "\u2028::error::x", "\x85::warning::y"):
        (line,) = annotation_lines({"gates": {metric: {**gate, "status": "warn", "warn": 0.9}}})
        assert_safe(line, "annotation")
        command, _, message = line[2:].partition("::")  # the runner ends the properties at the first "::"
        assert re.fullmatch("warning title=ragscore gate [^:,]+", command) and message.endswith("requires >= 0.8)")


def test_step_summary_holds_no_raw_control_character(tmp_path: Path) -> None:
    def markdown() -> Iterator[str]:
        yield "# report\n"
        yield f"| {cell(hostile('qid'))} |\n"

    append_step_summary(markdown(), str(tmp_path / "summary.md"))
    assert_safe((tmp_path / "summary.md").read_text(encoding="utf-8"), "step summary")


# ---- ragscore trec: trec_eval's text output and the reports ---------------------------------------

# A qid or run tag holds no white space (the files are split at it), but anything else.
TREC_QIDS = ("##[error]pwned", "q\x1b[2J\u202e", "::x", "plain")
TREC_TAG = "##[warning]tag\x7f"


def trec_inputs(folder: Path) -> None:
    (folder / "qrels").write_text("".join(f"{qid} 0 d1 1\n" for qid in TREC_QIDS), encoding="utf-8")
    for name, tag in (("run", TREC_TAG), ("run2", "::error::" + TREC_TAG)):
        (folder / name).write_text("".join(f"{qid} Q0 {'d2' if qid == 'plain' else 'd1'} 1 1.0 {tag}\n"
                                           for qid in TREC_QIDS), encoding="utf-8")


def test_trec_text_shows_a_qid_or_run_tag_that_is_a_command_as_an_escape(tmp_path: Path) -> None:
    trec_inputs(tmp_path)
    status, out, err = run(tmp_path, "trec", "-q", "-m", "P.5", "qrels", "run", env={"GITHUB_ACTIONS": "true"})
    assert (status, err) == (0, "")
    assert out == ("P_5                   \t#\\x23[error]pwned\t0.2000\n"  # trec_eval's order: the qids' bytes
                   "P_5                   \t::x\t0.2000\n"  # no qid starts a line: a measure's name does
                   "P_5                   \tplain\t0.0000\n"
                   "P_5                   \tq\\x1b[2J\\u202e\t0.2000\n"
                   "P_5                   \tall\t0.1500\n")
    status, out, err = run(tmp_path, "trec", "-q", "-m", "map", "qrels", "run", "run")
    assert (status, err) == (0, "")
    assert out == ("runid                 \tall\t#\\x23[warning]tag\\x7f\t#\\x23[warning]tag\\x7f\n"
                   "map                   \t#\\x23[error]pwned\t1.0000\t1.0000\n"
                   "map                   \t::x\t1.0000\t1.0000\n"
                   "map                   \tplain\t0.0000\t0.0000\n"
                   "map                   \tq\\x1b[2J\\u202e\t1.0000\t1.0000\n"
                   "map                   \tall\t0.7500\t0.7500\n")


def test_trec_text_of_plain_qids_is_trec_eval_s_bytes(tmp_path: Path) -> None:
    # Only a qid or tag that needs it is escaped: another qid of the same output stays as it is.
    (tmp_path / "qrels").write_text("a\\x1b 0 d1 1\nb#[x] 0 d1 1\n", encoding="utf-8")
    (tmp_path / "run").write_text("a\\x1b Q0 d1 1 1.0 r#\nb#[x] Q0 d1 1 1.0 r#\n", encoding="utf-8")
    status, out, _ = run(tmp_path, "trec", "-q", "-m", "recip_rank", "qrels", "run")
    assert (status, out) == (0, "recip_rank            \ta\\x1b\t1.0000\nrecip_rank            \tb#[x]\t1.0000\n"
                                "recip_rank            \tall\t1.0000\n")


@pytest.mark.parametrize("fmt", ["json", "markdown", "html", "junit"])
def test_no_trec_report_holds_a_raw_control_character_or_a_command(tmp_path: Path, fmt: str) -> None:
    trec_inputs(tmp_path)
    for runs in (["run"], ["run", "run2"]):
        status, out, err = run(tmp_path, "trec", "-q", "--gates", "map>=0.9", f"--{fmt}", "r", "qrels", *runs,
                               env={"GITHUB_ACTIONS": "true"})
        assert status == 1, err
        assert_safe(out, "text stdout", tabs=True)
        assert_safe(err, "notes")
        report = (tmp_path / "r").read_text(encoding="utf-8")
        assert_safe(report, f"{fmt} report")
        assert "[warning]tag" in report or (fmt, runs) == ("junit", ["run"])  # not vacuous (JUnit: the gates)
