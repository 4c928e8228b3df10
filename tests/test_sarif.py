"""SARIF 2.1.0 from ``validate --sarif`` and ``score --sarif`` (issue 38): valid against the SARIF JSON schema
(tests/data/sarif/) and to a second validator, Microsoft's SARIF Multitool (the schema, and the SARIF and GitHub
ingestion rules; .ci/run installs it from the npm registry); a rule per kind of result with its metadata;
fingerprints that stay when lines are added above a result; paths relative to the working folder; the same
bytes for the same inputs; hostile text kept as text.
"""

from __future__ import annotations

import ast
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import ragscore as ragscore_package
from conftest import DATA, ROOT, write
from ragscore.reports.sarif import (
    FINGERPRINT,
    GITHUB_FINGERPRINT,
    SCHEMA_URI,
    SCORE_RULES,
    SRCROOT,
    VALIDATE_RULES,
)
from test_report_safety import assert_safe

SCHEMA = json.loads((DATA / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
SCHEMA_VALIDATOR = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)

GOLD = {"qid": "q1", "question": "What is the refund window?", "answerable": True, "gold_citations": ["d1"],
        "gold_claim_substr": ["30 days"]}
PASSAGES = ['The policy says "refunds are accepted within 30 days" of purchase.',
            "Revenue grew 87.3% in 2021. Write to jane.doe@example.com."]


def trace(qid: str, claim: str, cited: list[str] | None = None, **more: Any) -> dict[str, Any]:
    return {"qid": qid, "retrieved_ids": ["d1", "d2"], "retrieved_chunks": PASSAGES,
            "answer_json": {"claim": claim, "citations": ["d1"] if cited is None else cited}, **more}


# Claims with grounding findings: q1 verified and unsupported numbers; q2 a misattributed quote, numbers and leaks;
# q3 an unverified quote and an invented key.
GROUNDED = [
    ({**GOLD, "qid": "q1"}, trace("q1", 'It says "refunds are accepted within 30 days"; revenue grew 85% in 2022.')),
    ({**GOLD, "qid": "q2"}, trace("q2", '"revenue grew 87.3% in 2021", and mail jane.doe@example.com.')),
    ({**GOLD, "qid": "q3"}, trace("q3", '"a quotation made up from nothing" AKIAIOSFODNN7EXAMPLE', [])),
]


def checked(path: Path) -> dict[str, Any]:
    """Read a SARIF log, check it against the SARIF 2.1.0 schema, and check what every log of ragscore's holds."""
    text = path.read_text(encoding="utf-8")
    assert_safe(text, str(path))
    log = json.loads(text)
    errors = sorted(SCHEMA_VALIDATOR.iter_errors(log), key=str)
    assert not errors, f"{path.name} breaks the SARIF schema: {errors[0].message} at {list(errors[0].path)}"
    assert log["version"] == "2.1.0" and log["$schema"] == SCHEMA_URI == SCHEMA["id"]
    [run] = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning")
        fingerprints = result["partialFingerprints"]
        assert fingerprints[FINGERPRINT] == fingerprints[GITHUB_FINGERPRINT]
        [location] = result["locations"]  # GitHub refuses a log with a result that has none
        artifact = location["physicalLocation"]["artifactLocation"]
        assert not artifact["uri"].startswith(("/", "file:")), artifact
    assert str(Path.cwd()) not in text and str(ROOT) not in text  # no absolute path
    return log


def results(log: dict[str, Any]) -> list[dict[str, Any]]:
    return list(log["runs"][0]["results"])


def where(result: dict[str, Any]) -> tuple[str, int | None, int | None]:
    """A result's uri, line and column."""
    physical = result["locations"][0]["physicalLocation"]
    region = physical.get("region", {})
    return physical["artifactLocation"]["uri"], region.get("startLine"), region.get("startColumn")


def fingerprints(log: dict[str, Any]) -> dict[str, tuple[str, str, int | None]]:
    """Each result's fingerprint, with its rule, file and line."""
    out = {}
    for result in results(log):
        uri, line, _ = where(result)
        out[result["partialFingerprints"][FINGERPRINT]] = (result["ruleId"], uri, line)
    assert len(out) == len(results(log)), "two results share a fingerprint"
    return out


# --- rules -------------------------------------------------------------------------------------------


def test_each_rule_has_its_metadata() -> None:
    for rules in (VALIDATE_RULES, SCORE_RULES):
        for rule_id, rule in rules.items():
            assert rule.id == rule_id and re.fullmatch(r"[a-z]+/[a-z]+(?:-[a-z]+)*", rule_id), rule_id
            assert re.fullmatch(r"[A-Z][A-Za-z]+", rule.name), rule.name
            assert rule.level in ("error", "warning")
            assert rule.short.endswith(".") and len(rule.short) <= 80 and "\n" not in rule.short, rule.short
            assert rule.full.endswith(".") and len(rule.full) > len(rule.short), rule_id
            descriptor = rule.descriptor()
            assert descriptor["help"]["text"] and descriptor["defaultConfiguration"]["level"] == rule.level
    assert not set(VALIDATE_RULES) & set(SCORE_RULES)
    names = [rule.name for rules in (VALIDATE_RULES, SCORE_RULES) for rule in rules.values()]
    assert len(set(names)) == len(names)


def test_validate_s_kinds_are_the_rules() -> None:
    # Every kind validate.py gives a problem has a rule, and every rule is a kind it gives.
    source = (ROOT / "src" / "ragscore" / "validate.py").read_text(encoding="utf-8")
    kinds = {node.value for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Constant)
             and isinstance(node.value, str) and re.fullmatch(r"(?:input|gold|trace|contract)/[a-z-]+", node.value)}
    assert kinds == set(VALIDATE_RULES)


# Each validate rule, from the smallest inputs that give it: (gold records or text, trace records or text).
G = json.dumps(GOLD)
T = json.dumps(trace("q1", "Refunds are accepted within 30 days."))
VALIDATE_CASES: dict[str, tuple[str, str | None]] = {
    "input/malformed": ('{"qid": "q1", "answerable": tru}\n' + G, None),
    "gold/invalid-item": ('{"qid": "q0", "answerable": "yes"}\n' + G, None),
    "gold/duplicate-qid": (G + "\n" + G, None),
    "gold/empty": ("\n\n", None),
    "gold/short-claim-substring": (json.dumps({**GOLD, "gold_claim_substr": ["ab"]}), None),
    "gold/nothing-to-cite": (json.dumps({**GOLD, "gold_citations": []}), None),
    "gold/refusal-in-claim": (json.dumps({**GOLD, "gold_claim": "I don't know"}), None),
    "gold/similar-qids": (G + "\n" + json.dumps({**GOLD, "qid": "Q1"}), None),
    "contract/near-miss-field": (json.dumps({**{k: v for k, v in GOLD.items() if k != "gold_citations"},
                                             "gold_citation": ["d1"]}), None),
    "trace/invalid-record": (G, T + "\n" + json.dumps({**trace("q1", "x"), "qid": ["q1"]})),
    "trace/no-answer": (G, json.dumps({"qid": "q1", "retrieved_ids": ["d1"]})),
    "trace/invalid-refused": (G, json.dumps(trace("q1", "x", refused="maybe"))),
    "trace/retrieved-without-id": (G, json.dumps({**trace("q1", "x"), "retrieved_ids": [{"text": "no id"}]})),
    "trace/ambiguous-question": (G + "\n" + json.dumps({**GOLD, "qid": "q2"}),
                                 T + "\n" + json.dumps({**trace("", "x"), "qid": None, "question": GOLD["question"]})),
    "trace/unmatched": (G, T + "\n" + json.dumps(trace("q9", "x"))),
    "trace/duplicate": (G, T + "\n" + T),
    "trace/cites-unretrieved": (G, json.dumps(trace("q1", "x", ["d7"]))),
    "trace/invalid-citations": (G, json.dumps({"qid": "q1", "retrieved_ids": ["d1"],
                                               "answer_json": {"claim": "x", "citations": "d1"}})),
    "trace/nothing-read": (G, json.dumps({"qid": "q1"}) + "\n" + json.dumps({"qid": "q1", "other": 1})),
    "trace/nothing-joins": (G, json.dumps(trace("q9", "x"))),
    "trace/untraced-questions": (G + "\n" + json.dumps({**GOLD, "qid": "q2"}), T),
}


def validate_sarif(ragscore: Any, folder: Path, gold: str, traces: str | None, *more: str) -> dict[str, Any]:
    (folder / "gold.jsonl").write_text(gold + "\n", encoding="utf-8")
    args = ["validate", "--gold", "gold.jsonl", "--sarif", "v.sarif", *more]
    if traces is not None:
        (folder / "trace.jsonl").write_text(traces + "\n", encoding="utf-8")
        args += ["--trace", "trace.jsonl"]
    assert ragscore(*args).status in (0, 2)
    return checked(folder / "v.sarif")


@pytest.mark.parametrize("kind", sorted(VALIDATE_RULES))
def test_each_validate_rule_is_a_result_at_its_line(ragscore: Any, isolated: Path, kind: str) -> None:
    if kind == "input/unreadable":
        assert ragscore("validate", "--gold", "none.jsonl", "--sarif", "v.sarif").status == 2
        [result] = results(checked(isolated / "v.sarif"))
        assert (result["ruleId"], where(result)) == (kind, ("none.jsonl", None, None))
        return
    gold, traces = VALIDATE_CASES[kind]
    log = validate_sarif(ragscore, isolated, gold, traces)
    found = [r for r in results(log) if r["ruleId"] == kind]
    assert found, f"{kind}: {[r['ruleId'] for r in results(log)]}"
    rule = VALIDATE_RULES[kind]
    assert {r["level"] for r in found} == {rule.level}
    uri = "trace.jsonl" if kind.startswith("trace/") else "gold.jsonl"
    assert {where(r)[0] for r in found} == {uri}
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == SRCROOT for r in found)
    # Each at the line (and column) validate prints: "gold.jsonl:3:55: error: ..."
    printed = ragscore("validate", "--gold", "gold.jsonl", *(["--trace", "trace.jsonl"] if traces else [])).out
    for r in found:
        uri, line, column = where(r)
        at = ":".join(str(part) for part in (uri, line, column) if part is not None)
        assert f"{at}: {r['level']}: {r['message']['text']}" in printed.splitlines()


def test_a_near_miss_under_lenient_is_a_warning_of_its_rule(ragscore: Any, isolated: Path) -> None:
    gold, _ = VALIDATE_CASES["contract/near-miss-field"]
    [result] = [r for r in results(validate_sarif(ragscore, isolated, gold, None, "--lenient"))
                if r["ruleId"] == "contract/near-miss-field"]
    assert result["level"] == "warning" and VALIDATE_RULES["contract/near-miss-field"].level == "error"
    assert where(result) == ("gold.jsonl", 1, gold.index('"gold_citation"') + 1)


# --- score -------------------------------------------------------------------------------------------


def grounded(folder: Path, rows: list[tuple[dict[str, Any], dict[str, Any]]] = GROUNDED) -> None:
    write(folder / "gold.jsonl", [g for g, _ in rows])
    write(folder / "trace.jsonl", [t for _, t in rows])


SCORE = ("--gold", "gold.jsonl", "--trace", "trace.jsonl", "--metrics", "grounding", "--format", "none", "-q")


def test_score_lists_failed_gates_then_each_grounding_finding_at_its_trace_line(ragscore: Any, isolated: Path) -> None:
    grounded(isolated)
    (isolated / "gates.toml").write_text("# gates\n\n[gates]\nprecision = 0.99\nleak_rate = {max = 0.1}\n",
                                         encoding="utf-8")
    assert ragscore(*SCORE, "--sarif", "s.sarif").status == 1
    found = [(r["ruleId"], r["level"], where(r), r["message"]["text"]) for r in results(checked(isolated / "s.sarif"))]
    assert found == [
        ("gate/failed", "error", ("gates.toml", 4, None),
         'ragscore gate precision: precision = 0.3333, expected >= 0.99 (set in "gates.toml" line 4)'),
        ("gate/failed", "error", ("trace.jsonl", None, None),
         "ragscore gate chr: chr = 0.6667, expected >= 0.75 (a built-in default gate)"),
        ("gate/failed", "error", ("gates.toml", 5, None),
         'ragscore gate leak_rate: leak_rate = 0.6667, expected <= 0.1 (set in "gates.toml" line 5)'),
        ("grounding/unsupported-number", "warning", ("trace.jsonl", 1, None),
         '"q1": the number at claim characters 60-63 is supported by no number of its evidence (the passage it '
         "cites)"),
        ("grounding/unsupported-number", "warning", ("trace.jsonl", 1, None),
         '"q1": the number at claim characters 67-71 is supported by no number of its evidence (the passage it '
         "cites)"),
        ("grounding/misattributed-quote", "warning", ("trace.jsonl", 2, None),
         '"q2": the quote at claim characters 1-27 is not in the passages it cites, but in another passage it '
         "retrieved"),
        ("grounding/unsupported-number", "warning", ("trace.jsonl", 2, None),
         '"q2": the number at claim characters 14-19 is supported by no number of its evidence (the passage it '
         "cites)"),
        ("grounding/unsupported-number", "warning", ("trace.jsonl", 2, None),
         '"q2": the number at claim characters 23-27 is supported by no number of its evidence (the passage it '
         "cites)"),
        ("grounding/leak", "error", ("trace.jsonl", 2, None),
         '"q2": a leaked email at claim characters 39-59, copied from a retrieved passage'),
        ("grounding/unverified-quote", "warning", ("trace.jsonl", 3, None),
         '"q3": the quote at claim characters 1-33 is not in its evidence (the 2 passages it retrieved)'),
        ("grounding/leak", "error", ("trace.jsonl", 3, None),
         '"q3": a leaked aws access key at claim characters 35-55, in no retrieved passage and not in the question'),
    ]
    text = (isolated / "s.sarif").read_text(encoding="utf-8")
    assert "jane.doe" not in text and "AKIA" not in text  # a leak's value is never written


def test_without_grounding_only_the_gates(ragscore: Any, isolated: Path) -> None:
    grounded(isolated)
    assert ragscore("--gold", "gold.jsonl", "--trace", "trace.jsonl", "--sarif", "s.sarif", "-q").status == 1
    assert {r["ruleId"] for r in results(checked(isolated / "s.sarif"))} == {"gate/failed"}
    # A run that passes writes a log with no result, and every rule.
    assert ragscore("--gold", "gold.jsonl", "--trace", "trace.jsonl", "--sarif", "s.sarif",
                    "--gates", "precision=0,chr=0", "-q").status == 0
    log = checked(isolated / "s.sarif")
    assert results(log) == []
    assert [rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]] == list(SCORE_RULES)


def test_invalid_provider_citations_are_a_result_per_question(ragscore: Any, isolated: Path) -> None:
    for name in ("gold.jsonl", "traces.jsonl"):
        shutil.copy(DATA / "providers" / name, isolated / name)
    assert ragscore("--gold", "gold.jsonl", "--trace", "traces.jsonl", "--metrics", "grounding", "--no-fail",
                    "--sarif", "s.sarif", "--format", "none").status == 0
    found = [r for r in results(checked(isolated / "s.sarif")) if r["ruleId"] == "grounding/invalid-provider-citation"]
    assert sum(r["properties"]["invalid"] for r in found) == 4  # as the run counts them (test_provider_citations)
    lines = (isolated / "traces.jsonl").read_text(encoding="utf-8").splitlines()
    for r in found:
        _, line, _ = where(r)
        assert json.loads(lines[line - 1])["qid"] == r["properties"]["qid"]


def test_several_trace_files_place_each_finding_in_its_own_file(ragscore: Any, isolated: Path) -> None:
    grounded(isolated)
    (isolated / "traces").mkdir()
    rows = (isolated / "trace.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (isolated / "traces" / "a.jsonl").write_text(rows[0], encoding="utf-8")
    (isolated / "traces" / "b.jsonl").write_text("\n" + "".join(rows[1:]), encoding="utf-8")
    for jobs in ("1", "2"):
        assert ragscore("--gold", "gold.jsonl", "--trace", "traces", "--metrics", "grounding", "--no-fail",
                        "--sarif", f"s{jobs}.sarif", "-j", jobs, "--format", "none").status == 0
    found = {(r["properties"]["qid"], where(r)) for r in results(checked(isolated / "s1.sarif"))
             if r["ruleId"].startswith("grounding/")}
    assert found == {("q1", ("traces/a.jsonl", 1, None)), ("q2", ("traces/b.jsonl", 2, None)),
                     ("q3", ("traces/b.jsonl", 3, None))}
    assert (isolated / "s1.sarif").read_bytes() == (isolated / "s2.sarif").read_bytes()


# --- fingerprints ----------------------------------------------------------------------------------


def insert_above(path: Path, line: int, text: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:line - 1]) + text + "".join(lines[line - 1:]), encoding="utf-8")


def test_score_fingerprints_stay_when_lines_are_added_above(ragscore: Any, isolated: Path) -> None:
    grounded(isolated)
    args = (*SCORE, "--no-fail", "--gates-file", "gates.toml", "--sarif")
    (isolated / "gates.toml").write_text("[gates]\nleak_rate = 0\n", encoding="utf-8")
    ragscore(*args, "before.sarif")
    # (A default gate the new question makes pass is no result then: the gate set in gates.toml fails still.)
    before = {fp: found for fp, found in fingerprints(checked(isolated / "before.sarif")).items()
              if found[1] != "trace.jsonl" or found[2] is not None}
    # Lines above every finding: another question (gold and trace), blank lines, and a line above the gate.
    insert_above(isolated / "gold.jsonl", 1, json.dumps({**GOLD, "qid": "q0"}) + "\n\n")
    insert_above(isolated / "trace.jsonl", 1, json.dumps(trace("q0", "Refunds: 30 days.")) + "\n\n\n")
    insert_above(isolated / "trace.jsonl", 5, "\n")  # between q1's and q2's traces
    insert_above(isolated / "gates.toml", 1, "# the gates\n\n")
    ragscore(*args, "after.sarif")
    after = fingerprints(checked(isolated / "after.sarif"))
    assert set(before) <= set(after)
    moved = {fp: (before[fp][2], after[fp][2]) for fp in before}
    assert {rule for rule, _, _ in before.values()} >= {"gate/failed", "grounding/leak", "grounding/unverified-quote"}
    for fp, (rule, uri, line) in before.items():
        assert after[fp][:2] == (rule, uri)
        assert line is None or after[fp][2] != line, (rule, moved[fp])  # the same result, at another line
    # q1's findings moved 3 lines down, q2's and q3's 4, the gate 2.
    assert sorted({b - a for a, b in moved.values() if a is not None}) == [2, 3, 4]


def test_validate_fingerprints_stay_when_lines_are_added_above(ragscore: Any, isolated: Path) -> None:
    broken = json.dumps({**GOLD, "qid": "q2", "gold_citation": ["d1"]})
    gold = "\n".join([G, broken, '{"qid": "q3", "answerable": tru}', G, json.dumps({**GOLD, "qid": "Q1"})])
    traces = "\n".join([T, json.dumps(trace("q9", "x")), "not json", T, json.dumps(trace("q1", "x", ["d7"]))])
    before = fingerprints(validate_sarif(ragscore, isolated, gold, traces))
    assert len({rule for rule, _, _ in before.values()}) >= 7
    insert_above(isolated / "gold.jsonl", 1, "\n" + json.dumps({**GOLD, "qid": "q0"}) + "\n")
    insert_above(isolated / "trace.jsonl", 1, json.dumps(trace("q2", "x")) + "\n\n")
    gold_after = (isolated / "gold.jsonl").read_text(encoding="utf-8")
    trace_after = (isolated / "trace.jsonl").read_text(encoding="utf-8")
    after = fingerprints(validate_sarif(ragscore, isolated, gold_after.rstrip("\n"), trace_after.rstrip("\n")))
    for fp, (rule, uri, line) in before.items():
        if rule == "trace/untraced-questions":  # names the questions with no trace: q2 has one now
            continue
        assert fp in after, (rule, uri, line)
        assert after[fp][:2] == (rule, uri) and (line is None or after[fp][2] == line + 2), (rule, line, after[fp])


def test_fingerprints_tell_apart_results_alike_but_for_their_place(ragscore: Any, isolated: Path) -> None:
    # Two near misses in one record, two identical broken lines: each its own result, with its own fingerprint.
    record = {"qid": "q1", "answerable": True, "gold_citation": ["d1"], "gold_claim_subst": ["30 days"]}
    gold = "\n".join([json.dumps(record), "{bad", "{bad"])
    log = validate_sarif(ragscore, isolated, gold, None)
    assert sorted(r["ruleId"] for r in results(log)) == ["contract/near-miss-field"] * 2 + ["gold/nothing-to-cite"] + [
        "input/malformed"] * 2
    assert len(fingerprints(log)) == 5


# --- paths, bytes, hostile text -------------------------------------------------------------------------


def test_paths_are_relative_to_the_working_folder(ragscore: Any, isolated: Path, tmp_path_factory: Any) -> None:
    (isolated / "eval dir").mkdir()
    grounded(isolated / "eval dir")
    outside = tmp_path_factory.mktemp("elsewhere")
    grounded(outside)
    for gold, traces, expected in [
        ("eval dir/gold.jsonl", "eval dir/trace.jsonl", {"uri": "eval%20dir/trace.jsonl", "uriBaseId": SRCROOT}),
        (str(isolated / "eval dir" / "gold.jsonl"), str(isolated / "eval dir" / "./trace.jsonl"),
         {"uri": "eval%20dir/trace.jsonl", "uriBaseId": SRCROOT}),
        ("eval dir/../eval dir/gold.jsonl", "eval dir/../eval dir/trace.jsonl",
         {"uri": "eval%20dir/trace.jsonl", "uriBaseId": SRCROOT}),
        (str(outside / "gold.jsonl"), str(outside / "trace.jsonl"), {"uri": "trace.jsonl"}),  # by its name alone
    ]:
        assert ragscore("--gold", gold, "--trace", traces, "--metrics", "grounding", "--no-fail", "--format", "none",
                        "--sarif", "s.sarif").status == 0
        log = checked(isolated / "s.sarif")
        assert {json.dumps(r["locations"][0]["physicalLocation"]["artifactLocation"]) for r in results(log)} == {
            json.dumps(expected)}
        assert str(outside) not in (isolated / "s.sarif").read_text(encoding="utf-8")
    # Standard input is "-".
    env = {**os.environ, "PYTHONPATH": str(Path(ragscore_package.__file__).parents[1])}
    subprocess.run([sys.executable, "-m", "ragscore", "validate", "--gold", "-", "--sarif", "v.sarif"],
                   input="{bad\n", text=True, capture_output=True, env=env, cwd=isolated, timeout=60)
    assert [where(r) for r in results(checked(isolated / "v.sarif"))] == [("-", 1, 2)]


def test_a_settings_file_named_by_an_absolute_path_is_named_without_its_folders(ragscore: Any, isolated: Path,
                                                                                tmp_path_factory: Any) -> None:
    # The gate's source was written as given, in SARIF's message and the JSON report's gates.
    outside = tmp_path_factory.mktemp("settings")
    (outside / "gates.toml").write_text("[gates]\nprecision = 0.99\n", encoding="utf-8")
    for gates in (outside / "gates.toml", isolated / "gates.toml"):
        if gates.parent == isolated:
            gates.write_text("[gates]\nprecision = 0.99\n", encoding="utf-8")
        run = ragscore("--gold", ROOT / "examples/product/gold.jsonl", "--trace", ROOT / "examples/product/trace.jsonl",
                       "--gates-file", gates, "--sarif", "s.sarif", "--html", "r.html", "--no-fail", "-q")
        assert run.status == 0
        gate = next(r for r in results(checked(isolated / "s.sarif")) if r["properties"]["metric"] == "precision")
        assert gate["message"]["text"].endswith('(set in "gates.toml" line 2)')
        assert json.loads(run.out)["gates"]["precision"]["source"] == "gates.toml"
        for report in ("s.sarif", "r.html"):
            assert str(gates.parent) not in (isolated / report).read_text(encoding="utf-8")


def test_the_same_inputs_give_the_same_bytes(ragscore: Any, isolated: Path) -> None:
    grounded(isolated)
    for n in (1, 2):
        ragscore(*SCORE, "--no-fail", "--sarif", f"s{n}.sarif")
    gold, traces = VALIDATE_CASES["trace/duplicate"]
    for n in (1, 2):
        validate_sarif(ragscore, isolated, gold, traces)
        (isolated / "v.sarif").rename(isolated / f"v{n}.sarif")
    assert (isolated / "s1.sarif").read_bytes() == (isolated / "s2.sarif").read_bytes()
    assert (isolated / "v1.sarif").read_bytes() == (isolated / "v2.sarif").read_bytes()
    text = (isolated / "s1.sarif").read_text(encoding="utf-8")
    assert text.endswith("}\n") and "\r" not in text and "Time" not in text


HOSTILE = 'q"\n::error::forged\r\n::warning file=x::y\x1b[2J\x00\x7f\u2028##[error]\\ \'; $(touch pwned) é 東京 %0A'


def test_hostile_text_stays_text(ragscore: Any, isolated: Path) -> None:
    rows = [({**GOLD, "qid": HOSTILE}, trace(HOSTILE, '"a quotation made up from nothing" AKIAIOSFODNN7EXAMPLE', [])),
            ({**GOLD, "qid": "::error::x"}, trace("::error::x", "x"))]
    grounded(isolated, rows)
    assert ragscore(*SCORE, "--sarif", "s.sarif").status == 1
    found = results(checked(isolated / "s.sarif"))
    assert {r["properties"]["qid"] for r in found if "properties" in r and "qid" in r["properties"]} == {HOSTILE}
    for r in found:
        assert "\n" not in r["message"]["text"] and "\x1b" not in r["message"]["text"]
    # validate: hostile keys and file names.
    name = "::error::g \"x\"\n#.jsonl"
    (isolated / name).write_text(json.dumps({**GOLD, HOSTILE: 1, "gold_citation": ["d1"]}) + "\n" + HOSTILE + "\n",
                                 encoding="utf-8")
    assert ragscore("validate", "--gold", name, "--sarif", "v.sarif").status == 2
    log = checked(isolated / "v.sarif")
    assert {where(r)[0] for r in results(log)} == {"%3A%3Aerror%3A%3Ag%20%22x%22%0A%23.jsonl"}
    assert not list(isolated.glob("pwned"))


# --- the second validator: Microsoft's SARIF Multitool ----------------------------------------------------

# Warnings of the Multitool's own rules that ragscore's logs may get: SARIF2005, the tool gives no
# informationUri (ragscore names no home page); SARIF2017, a result of a whole file has no region.
ALLOWED_WARNINGS = {"SARIF2005", "SARIF2017"}
MULTITOOL_PATH = ROOT / ".ci" / "sarif-multitool" / "node_modules" / "@microsoft" / "sarif-multitool-linux"


@pytest.fixture(scope="module")
def multitool() -> str:
    """The SARIF Multitool's binary: skipped on a developer machine without it, a failure in CI (.ci/run installs it
    where its binary runs: Linux on x86-64)."""
    found = os.environ.get("RAGSCORE_SARIF_MULTITOOL") or str(MULTITOOL_PATH / "Sarif.Multitool")
    if not os.access(found, os.X_OK):
        if os.environ.get("CI") and (platform.system(), platform.machine()) == ("Linux", "x86_64"):
            pytest.fail(f"the SARIF Multitool is not installed at {found} (.ci/run installs it)")
        pytest.skip("the SARIF Multitool is not installed (npm install @microsoft/sarif-multitool; "
                    "RAGSCORE_SARIF_MULTITOOL names its binary)")
    return found


def multitool_results(multitool: str, tmp: Path, *logs: Path) -> list[tuple[str, str, str]]:
    """Validate SARIF logs with the Multitool's validate (the schema, the SARIF rules and GitHub's ingestion rules):
    each error and warning as (rule, level, message)."""
    out = tmp / "multitool.sarif"
    env = {**os.environ, "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT": "1", "DOTNET_CLI_TELEMETRY_OPTOUT": "1",
           "HOME": str(tmp)}
    run = subprocess.run([multitool, "validate", "--rule-kind", "Sarif;Gh", "--log", "ForceOverwrite", "-o", str(out),
                          *map(str, logs)], capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    found = json.loads(out.read_text(encoding="utf-8-sig"))["runs"][0]["results"]
    assert json.loads(out.read_text(encoding="utf-8-sig"))["runs"][0]["invocations"][0]["executionSuccessful"]
    return [(r["ruleId"], r.get("level", "warning"), r["message"].get("text", "")) for r in found
            if r.get("level", "warning") in ("error", "warning")]


def test_the_multitool_really_validates(multitool: str, tmp_path: Path) -> None:
    # Not vacuous: a log without a result's message breaks the schema, one without a location GitHub's rules.
    result = {"ruleId": "x/y", "level": "error", "locations": [{"physicalLocation": {"artifactLocation": {
        "uri": "a.jsonl", "uriBaseId": SRCROOT}, "region": {"startLine": 1}}}]}
    for name, broken, rule in [("no-message", result, "JSON1002"),
                               ("no-location", {"ruleId": "x/y", "message": {"text": "m."}}, "GH1015")]:
        log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [{"tool": {"driver": {
            "name": "t", "version": "1", "informationUri": "https://example.org/",
            "rules": [{"id": "x/y", "shortDescription": {"text": "s."}}]}}, "results": [broken]}]}
        (tmp_path / f"{name}.sarif").write_text(json.dumps(log), encoding="utf-8")
        assert rule in {r for r, level, _ in multitool_results(multitool, tmp_path, tmp_path / f"{name}.sarif")
                        if level == "error"}


def test_every_log_passes_the_multitool(multitool: str, ragscore: Any, isolated: Path) -> None:
    logs = []
    for n, kind in enumerate(sorted(VALIDATE_CASES)):
        gold, traces = VALIDATE_CASES[kind]
        validate_sarif(ragscore, isolated, gold, traces)
        logs.append((isolated / "v.sarif").rename(isolated / f"v{n}.sarif"))
    grounded(isolated)
    (isolated / "gates.toml").write_text("[gates]\nleak_rate = 0\n", encoding="utf-8")
    ragscore(*SCORE, "--sarif", "score.sarif")
    for name in ("gold.jsonl", "traces.jsonl"):
        shutil.copy(DATA / "providers" / name, isolated / f"p-{name}")
    ragscore("--gold", "p-gold.jsonl", "--trace", "p-traces.jsonl", "--metrics", "grounding", "--sarif", "p.sarif",
             "--format", "none")
    rows = [({**GOLD, "qid": HOSTILE}, trace(HOSTILE, '"a quotation made up from nothing" AKIAIOSFODNN7EXAMPLE', []))]
    grounded(isolated, rows)
    ragscore(*SCORE, "--sarif", "hostile.sarif")
    logs += [isolated / "score.sarif", isolated / "p.sarif", isolated / "hostile.sarif"]
    assert sum(len(results(checked(log))) for log in logs) > 40
    found = multitool_results(multitool, isolated, *logs)
    assert [r for r in found if r[1] == "error"] == []
    assert {rule for rule, _, _ in found} <= ALLOWED_WARNINGS, found
