"""Property: whatever text the inputs hold, ragscore's output stays ragscore's.

Random hostile strings (control characters, ANSI sequences, forged workflow commands, the
escapes of the workflow-command syntax itself) go into every text field of every input: gold
items, traces, a scores file, stage files, the settings file and the gold file's name. Every
command runs under ``GITHUB_ACTIONS=true``, valid input or not. Then every line written to
standard output or standard error that starts with ``::`` is one of ragscore's own annotations,
every JUnit file parses, every JSON report parses, and no report or message holds a raw control
character (``test_report_safety.assert_safe``).
"""

from __future__ import annotations

import json
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragscore.external import name_problem
from test_report_safety import assert_safe, run

PIECES = ("\n::error::forged", "\r\n::warning::x", "::add-mask::secret", "\n::stop-commands::tok", "%0A::error::",
          "##[error]forged", "\n ::warning::x", "##[add-mask]y",
          "\x1b[2J", "\x1b]0;title\x07", "\x9b31m", "\u202e", "\u2028", "\x00", "\x7f", "\t", "\\", '"', "|", "<b>",
          "`", "#", "&amp;", "*", "[x](y)", ",", ":", "é", "東京")
hostile_text = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)), max_size=4).map("".join)
# A file name cannot hold NUL or a slash; anything else goes.
file_name = hostile_text.map(lambda s: s.replace("\x00", "").replace("/", "") + ".jsonl")
# Score names are restricted (letters, digits, "_ . @ : / -", first a letter, digit or "_"): the
# hostile part is what the rule still lets through, ":" and "@" included.
score_name = st.from_regex(r"[a-z_][a-z0-9_.@:/-]{0,12}", fullmatch=True).filter(
    lambda name: name_problem(name) is None and name not in {"under", "over"})
kb_id = hostile_text.map(lambda s: "Q" + s)


def _gold(draw: Any, n: int) -> tuple[list[dict[str, Any]], list[str]]:
    qids = [f"q{i}{draw(hostile_text)}" for i in range(n)]
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
    return items, qids


@st.composite
def hostile_inputs(draw: Any) -> dict[str, Any]:
    """Every input of every command, each text field drawn hostile."""
    gold, qids = _gold(draw, draw(st.integers(1, 4)))
    traces = []
    for qid in qids + [f"u{draw(hostile_text)}"]:  # one more: an unknown trace
        cited = [draw(hostile_text) for _ in range(draw(st.integers(0, 2)))]
        traces.append({"qid": qid, "retrieved_ids": cited + [draw(hostile_text)],
                       "answer_json": {"claim": draw(hostile_text), "citations": cited}})
    ids = [f"i{n}{draw(hostile_text)}" for n in range(draw(st.integers(1, 3)))]
    texts = [f"word {draw(hostile_text)} end" for _ in ids]
    return {
        "gold_name": draw(file_name),
        "gold": gold,
        "traces": traces,
        "scores": [(qids[0], "0.5")] + [(draw(st.sampled_from([*qids, f"s{draw(hostile_text)}"])),
                                          draw(st.sampled_from(["0.25", "", "nan"]))) for _ in range(draw(st.integers(0, 3)))],
        "score_name": draw(score_name),
        "refusal": "refused " + draw(hostile_text),
        "seed": draw(hostile_text),
        "cause": "cause " + draw(hostile_text),
        "explain": draw(st.sampled_from(qids + [draw(hostile_text)])),
        "ner_gold": [{"id": i, "text": t, "entities": [{"start": 0, "end": 4, "type": draw(hostile_text) or "T"}]}
                     for i, t in zip(ids, texts, strict=True)],
        "ner_pred": [{"id": i, "entities": [{"start": 0, "end": 4, "type": draw(hostile_text) or "T"}]} for i in ids],
        "classify_gold": [{"id": i, "label": draw(hostile_text) or "L"} for i in ids],
        "classify_pred": [{"id": draw(st.sampled_from(ids + ["other"])), "label": draw(hostile_text) or "L"} for _ in ids],
        "link_gold": [{"id": i, "mention": draw(hostile_text), "kb_id": draw(st.one_of(st.none(), kb_id))}
                      for i in ids],
        "link_pred": [{"id": i, "candidates": [{"kb_id": draw(kb_id), "score": 0.5}], "nil": draw(st.booleans())}
                      for i in ids],
    }


def _lines(path: Path, objects: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")
    return path.name


def _toml(text: str) -> str:
    """Write a TOML basic string (JSON's escapes are TOML's, but DEL must be escaped and astral characters not)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _write(folder: Path, case: dict[str, Any]) -> None:
    _lines(folder / case["gold_name"], case["gold"])
    _lines(folder / "t.jsonl", case["traces"])
    for name in ("ner_gold", "ner_pred", "classify_gold", "classify_pred", "link_gold", "link_pred"):
        _lines(folder / f"{name}.jsonl", case[name])
    rows = "".join(f"{json.dumps(qid)},{value}\n" for qid, value in case["scores"])
    (folder / "s.csv").write_text(f"qid,{case['score_name']}\n{rows}", encoding="utf-8")
    (folder / "gates.toml").write_text(
        f"[scoring]\nrefusal_tokens = [{_toml(case['refusal'])}]\nseed = {_toml(case['seed'])}\n"
        "[gates]\nprecision = 0.99\n[slice_gates]\nmin_n = 1\nprecision = 0.99\n"
        f"[diagnose.precision]\nwarning = 0.999\ncauses = [{_toml(case['cause'])}]\n"
        "[ner.gates]\nstrict_f1 = 0.99\n[classify.gates]\naccuracy = 0.99\n[link.gates]\nmrr = 0.99\n",
        encoding="utf-8")


REPORTS = ("--json", "r.json", "--markdown", "r.md", "--html", "r.html", "--junit", "r.xml")


def _commands(case: dict[str, Any]) -> list[list[str]]:
    gold = case["gold_name"]
    score = ["--gold", gold, "--trace", "t.jsonl", "--per-question", "--by", "category", "--metrics", "all"]
    return [
        [*score, "--scores", "s.csv", *REPORTS, "--format", "text"],
        [*score, "--format", "markdown"],
        ["--gold", gold, "--trace", "t.jsonl", "--explain", case["explain"]],
        ["validate", "--gold", gold, "--trace", "t.jsonl"],
        ["compare", "--gold", gold, "--baseline", "t.jsonl", "--trace", "t.jsonl", "--json", "r.json",
         "--markdown", "r.md", "--format", "markdown"],
        *(["ner" if s == "ner" else s, "--gold", f"{s}_gold.jsonl", "--pred", f"{s}_pred.jsonl", *REPORTS,
           "--format", "text"] for s in ("ner", "classify", "link")),
    ]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_inputs())
def test_no_input_text_becomes_a_command_or_a_raw_control_character(case: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _write(folder, case)
        for command in _commands(case):
            for report in ("r.json", "r.md", "r.html", "r.xml", "summary.md"):
                (folder / report).unlink(missing_ok=True)
            env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(folder / "summary.md")}
            status, out, err = run(folder, *command, env=env)
            where = f"{command[0]} (exit {status})"
            assert status in (0, 1, 2), f"{where}: {err}"
            assert_safe(out, f"{where}: standard output")
            assert_safe(err, f"{where}: standard error")
            assert err.count("\n") == len(err.splitlines())  # every message ends its own line
            for report in ("r.json", "r.md", "r.html", "r.xml", "summary.md"):
                path = folder / report
                if path.exists():
                    text = path.read_text(encoding="utf-8")
                    assert_safe(text, f"{where}: {report}")
                    if report == "r.xml":
                        ET.fromstring(text.encode("utf-8"))
                    elif report == "r.json":
                        json.loads(text)
            if status != 2 and "--format" in command and command[command.index("--format") + 1] == "json":
                json.loads(out)
