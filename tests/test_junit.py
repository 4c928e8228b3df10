"""JUnit XML report: golden files for the shipped examples, counts, schema shape and hostile input.

Regenerate the golden files after an intended change with:
    REGENERATE_GOLDEN=1 pytest tests/test_junit.py
(then review the diff like any other code change).
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import DATA, ROOT, checked_report
from ragscore.cli import main
from ragscore.reports.junit import clean, render_junit

GOLDEN = DATA / "golden" / "junit"
REGENERATE = os.environ.get("REGENERATE_GOLDEN") == "1"

EXAMPLES = {
    "reference": ("examples/gold.jsonl", "examples/trace.jsonl"),
    "alt-shape": ("examples/alt-shape/gold.json", "examples/alt-shape/trace.jsonl"),
    "product": ("examples/product/gold.jsonl", "examples/product/trace.jsonl"),
}
PASSING = {"OK", "REFUSAL_OK"}
HOSTILE = 'a<script>alert("x")</script> ]]> & \'q\' "dq" \x07bell'

# The shape of the Jenkins JUnit schema (xunit-plugin junit-10.xsd) for the elements this report
# uses, written out: which children each element may have, in order, and its required and
# allowed attributes. The XSD below says the same for a real validator when lxml is present.
_CHILDREN = {
    "testsuites": ["testsuite"],
    "testsuite": ["properties", "testcase", "system-out", "system-err"],
    "properties": ["property"],
    "testcase": ["skipped", "error", "failure", "system-out", "system-err"],
}
_REQUIRED = {"testsuite": {"name", "tests"}, "testcase": {"name"}, "property": {"name", "value"}}
_ALLOWED = {
    "testsuites": {"name", "time", "tests", "failures", "disabled", "errors"},
    "testsuite": {"name", "tests", "failures", "errors", "time", "disabled", "skipped", "timestamp", "hostname", "id",
                  "package"},
    "properties": set(),
    "property": {"name", "value"},
    "testcase": {"name", "assertions", "time", "classname", "status", "class", "file", "line"},
    "failure": {"type", "message"},
    "error": {"type", "message"},
    "skipped": {"message"},
    "system-out": set(),
    "system-err": set(),
}
JUNIT_XSD = """<?xml version="1.0" encoding="UTF-8"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" elementFormDefault="qualified">
  <xs:complexType name="message" mixed="true">
    <xs:attribute name="type" type="xs:string"/>
    <xs:attribute name="message" type="xs:string"/>
  </xs:complexType>
  <xs:element name="failure" type="message"/>
  <xs:element name="error" type="message"/>
  <xs:element name="skipped">
    <xs:complexType mixed="true"><xs:attribute name="message" type="xs:string"/></xs:complexType>
  </xs:element>
  <xs:element name="system-out" type="xs:string"/>
  <xs:element name="system-err" type="xs:string"/>
  <xs:element name="property">
    <xs:complexType>
      <xs:attribute name="name" type="xs:string" use="required"/>
      <xs:attribute name="value" type="xs:string" use="required"/>
    </xs:complexType>
  </xs:element>
  <xs:element name="properties">
    <xs:complexType><xs:sequence><xs:element ref="property" maxOccurs="unbounded"/></xs:sequence></xs:complexType>
  </xs:element>
  <xs:element name="testcase">
    <xs:complexType>
      <xs:choice minOccurs="0" maxOccurs="unbounded">
        <xs:element ref="skipped"/><xs:element ref="error"/><xs:element ref="failure"/>
        <xs:element ref="system-out"/><xs:element ref="system-err"/>
      </xs:choice>
      <xs:attribute name="name" type="xs:string" use="required"/>
      <xs:attribute name="assertions" type="xs:string"/>
      <xs:attribute name="time" type="xs:string"/>
      <xs:attribute name="classname" type="xs:string"/>
      <xs:attribute name="status" type="xs:string"/>
      <xs:attribute name="class" type="xs:string"/>
      <xs:attribute name="file" type="xs:string"/>
      <xs:attribute name="line" type="xs:string"/>
    </xs:complexType>
  </xs:element>
  <xs:element name="testsuite">
    <xs:complexType>
      <xs:sequence>
        <xs:element ref="properties" minOccurs="0"/>
        <xs:element ref="testcase" minOccurs="0" maxOccurs="unbounded"/>
        <xs:element ref="system-out" minOccurs="0"/>
        <xs:element ref="system-err" minOccurs="0"/>
      </xs:sequence>
      <xs:attribute name="name" type="xs:string" use="required"/>
      <xs:attribute name="tests" type="xs:string" use="required"/>
      <xs:attribute name="failures" type="xs:string"/>
      <xs:attribute name="errors" type="xs:string"/>
      <xs:attribute name="time" type="xs:string"/>
      <xs:attribute name="disabled" type="xs:string"/>
      <xs:attribute name="skipped" type="xs:string"/>
      <xs:attribute name="timestamp" type="xs:string"/>
      <xs:attribute name="hostname" type="xs:string"/>
      <xs:attribute name="id" type="xs:string"/>
      <xs:attribute name="package" type="xs:string"/>
    </xs:complexType>
  </xs:element>
  <xs:element name="testsuites">
    <xs:complexType>
      <xs:sequence><xs:element ref="testsuite" minOccurs="0" maxOccurs="unbounded"/></xs:sequence>
      <xs:attribute name="name" type="xs:string"/>
      <xs:attribute name="time" type="xs:string"/>
      <xs:attribute name="tests" type="xs:string"/>
      <xs:attribute name="failures" type="xs:string"/>
      <xs:attribute name="disabled" type="xs:string"/>
      <xs:attribute name="errors" type="xs:string"/>
    </xs:complexType>
  </xs:element>
</xs:schema>
"""


def report(example: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> dict[str, Any]:
    """Score a shipped example in-process, as the README runs it, and return the JSON report."""
    monkeypatch.chdir(ROOT)  # relative paths and the project's own gates.toml, as in test_golden
    gold, trace = EXAMPLES[example]
    out = tmp_path / f"{example}.json"
    main(["--gold", gold, "--trace", trace, "--json", str(out), "--format", "none", "--no-fail", "-q", *extra])
    return checked_report(out.read_text(encoding="utf-8"))


def make_doc(gates: dict[str, dict[str, Any]], questions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Build a small report document by hand, with only the keys the JUnit report reads."""
    doc: dict[str, Any] = {
        "signature": "ragscore:0.1.0|k:5",
        "version": "0.1.0",
        "settings": {"k": 5, "refusal_tokens": ["not in context"], "strict": False, "text_tokenizer": "reference"},
        "gates": gates,
    }
    if questions is not None:
        doc["questions"] = questions
    return doc


def gate(status: str, value: float | int | None, op: str = ">=", threshold: float = 0.8,
         warn: float | None = None) -> dict[str, Any]:
    """Build one gate entry as the report document holds it."""
    return {"op": op, "threshold": threshold, "warn": warn, "value": value, "status": status, "source": "test"}


def question(qid: str, label: str, reason: str = "because", text: str | None = None) -> dict[str, Any]:
    """Build one per-question entry with the keys the JUnit report reads."""
    entry: dict[str, Any] = {"qid": qid, "label": label, "reason": reason}
    if text is not None:
        entry["question"] = text
    return entry


def parse(xml: str) -> ET.Element:
    """Parse the report as a CI server would: from its UTF-8 bytes, declaration included."""
    return ET.fromstring(xml.encode("utf-8"))


def suite_of(root: ET.Element) -> ET.Element:
    assert root.tag == "testsuites"
    (suite,) = list(root)
    return suite


def check_shape(element: ET.Element) -> None:
    """Assert the Jenkins JUnit schema's element order and attributes, recursively."""
    tag = element.tag
    assert tag in _ALLOWED, tag
    assert set(element.attrib) <= _ALLOWED[tag], (tag, element.attrib)
    assert _REQUIRED.get(tag, set()) <= set(element.attrib), (tag, element.attrib)
    order = _CHILDREN.get(tag, [])
    positions = [order.index(child.tag) if child.tag in order else -1 for child in element]
    assert -1 not in positions, (tag, [child.tag for child in element])
    if tag == "testsuite":  # a sequence there; testcase children are a free choice
        assert positions == sorted(positions), [child.tag for child in element]
        assert positions.count(0) <= 1
    for child in element:
        check_shape(child)


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_report_matches_golden_file(example: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    xml = render_junit(report(example, tmp_path, monkeypatch, "--per-question"))
    path = GOLDEN / f"{example}.xml"
    if REGENERATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(xml, encoding="utf-8", newline="\n")
    assert xml == path.read_text(encoding="utf-8"), f"regenerate with REGENERATE_GOLDEN=1 if intended: {path}"


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_counts_match_the_report(example: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = report(example, tmp_path, monkeypatch, "--per-question")
    suite = suite_of(parse(render_junit(doc)))
    gates, questions = doc["gates"], doc["questions"]
    statuses = [g["status"] for g in gates.values()]
    failed_questions = sum(count for label, count in doc["labels"].items() if label not in PASSING)
    cases = suite.findall("testcase")
    assert suite.get("name") == "ragscore"
    assert suite.get("tests") == str(len(cases)) == str(len(gates) + len(questions))
    assert suite.get("failures") == str(statuses.count("fail") + failed_questions) == str(len(suite.findall("testcase/failure")))
    assert suite.get("skipped") == str(statuses.count("skipped")) == str(len(suite.findall("testcase/skipped")))
    assert suite.get("errors") == "0"
    assert [c.get("name") for c in cases if c.get("classname") == "ragscore.gates"] == list(gates)
    assert [c.get("name") for c in cases if c.get("classname") == "ragscore.questions"] == [q["qid"] for q in questions]


def test_gate_failure_names_value_operator_and_threshold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = suite_of(parse(render_junit(report("product", tmp_path, monkeypatch))))
    failure = suite.find("testcase[@name='under_refusal']/failure")
    assert failure is not None
    assert failure.attrib == {"message": "under_refusal = 0.2500, expected <= 0.05", "type": "gate"}
    assert failure.text == "under_refusal = 0.2500, expected <= 0.05"
    count = suite.find("testcase[@name='missing']/failure")
    assert count is not None and count.get("message") == "missing = 1, expected <= 0"  # a count stays an integer
    passed = suite.find("testcase[@name='precision']")
    assert passed is not None and len(passed) == 0  # a passing gate is a bare testcase


def test_without_per_question_only_gates_are_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = report("product", tmp_path, monkeypatch)
    assert "questions" not in doc
    suite = suite_of(parse(render_junit(doc)))
    assert {c.get("classname") for c in suite.findall("testcase")} == {"ragscore.gates"}
    assert suite.get("tests") == str(len(doc["gates"]))


def test_properties_carry_signature_version_and_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = report("product", tmp_path, monkeypatch)
    suite = suite_of(parse(render_junit(doc)))
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props["signature"] == doc["signature"]
    assert props["version"] == doc["version"]
    assert props["settings.k"] == str(doc["settings"]["k"])
    assert props["settings.refusal_tokens"] == json.dumps(doc["settings"]["refusal_tokens"])
    assert props["settings.strict"] == "false"
    assert set(props) == {"signature", "version", *(f"settings.{key}" for key in doc["settings"])}


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_report_has_the_jenkins_junit_schema_shape(example: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = parse(render_junit(report(example, tmp_path, monkeypatch, "--per-question")))
    check_shape(root)
    assert len(root) == 1


def test_report_validates_against_junit_xsd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    etree = pytest.importorskip("lxml.etree")
    schema = etree.XMLSchema(etree.fromstring(JUNIT_XSD.encode("utf-8")))
    docs = [report(example, tmp_path, monkeypatch, "--per-question") for example in sorted(EXAMPLES)]
    docs.append(hostile_doc())
    for doc in docs:
        tree = etree.fromstring(render_junit(doc).encode("utf-8"))
        assert schema.validate(tree), schema.error_log


def test_the_xsd_rejects_what_ci_servers_reject() -> None:
    etree = pytest.importorskip("lxml.etree")
    schema = etree.XMLSchema(etree.fromstring(JUNIT_XSD.encode("utf-8")))
    no_name = '<testsuites><testsuite name="s" tests="1"><testcase classname="c"/></testsuite></testsuites>'
    late_properties = ('<testsuites><testsuite name="s" tests="1"><testcase name="t"/>'
                       '<properties><property name="a" value="b"/></properties></testsuite></testsuites>')
    assert not schema.validate(etree.fromstring(no_name))
    assert not schema.validate(etree.fromstring(late_properties))


def hostile_doc() -> dict[str, Any]:
    """Build a document whose every input-derived string tries to break out of the XML."""
    return make_doc(
        {HOSTILE: gate("fail", 0.7), "skip<me>": gate("skipped", None), "w&rn": gate("warn", 0.82, warn=0.85)},
        [question(HOSTILE, "HALLUCINATION", HOSTILE, HOSTILE), question("ok", "OK")],
    )


def test_hostile_text_round_trips_safely() -> None:
    doc = hostile_doc()
    doc["settings"]["refusal_tokens"] = [HOSTILE]
    doc["signature"] = HOSTILE
    xml = render_junit(doc)
    assert "<script>" not in xml and "]]>" not in xml and "\x07" not in xml
    suite = suite_of(parse(xml))
    check_shape(suite)
    safe = HOSTILE.replace("\x07", "\\x07")  # the bell shows as an escape
    gate_case, question_case = suite.findall("testcase")[0], suite.findall("testcase")[3]
    assert gate_case.get("name") == safe
    failure = question_case.find("failure")
    assert question_case.get("name") == safe
    assert failure is not None
    assert failure.get("message") == f"HALLUCINATION: {safe}"
    assert failure.text == f"HALLUCINATION: {safe}\nquestion: {safe}"
    props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert props["signature"] == safe
    # JSON writes the control character as \u0007, which XML carries as it is: nothing is lost.
    assert json.loads(props["settings.refusal_tokens"]) == [HOSTILE]
    assert suite.findall("script") == [] and suite.find(".//script") is None  # no element was injected


def test_every_character_xml_forbids_shows_as_an_escape() -> None:
    forbidden = "".join(chr(c) for c in range(0x20) if chr(c) not in "\t\n\r") + "\ud800\ufffe\uffff"
    shown = "".join(f"\\x{c:02x}" for c in range(0x20) if chr(c) not in "\t\n\r") + "\\ud800\\ufffe\\uffff"
    assert clean(f"a{forbidden}b\t\n\r\x7f\x9b\u202e\U0001f600é") == f"a{shown}b\\t\\n\\r\\x7f\\x9b\\u202e\U0001f600é"
    xml = render_junit(make_doc({}, [question(f"q{forbidden}", "CLAIM_MISMATCH", f"r{forbidden}")]))
    case = suite_of(parse(xml)).find("testcase")
    assert case is not None and case.get("name") == f"q{shown}"
    failure = case.find("failure")
    assert failure is not None and failure.get("message") == f"CLAIM_MISMATCH: r{shown}"


def test_skipped_and_warned_gates() -> None:
    doc = make_doc({"precision": gate("skipped", None), "compliance": gate("warn", 0.93, ">=", 0.9, 0.95)})
    suite = suite_of(parse(render_junit(doc)))
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("2", "0", "1")
    skipped = suite.find("testcase[@name='precision']/skipped")
    assert skipped is not None and skipped.get("message") == "precision undefined (no questions counted)"
    warned = suite.find("testcase[@name='compliance']")
    assert warned is not None and warned.find("failure") is None and warned.find("skipped") is None
    out = warned.find("system-out")
    assert out is not None and out.text is not None
    assert out.text.startswith("warning: compliance = 0.9300, expected >= 0.95")
    assert "requires >= 0.9" in out.text


def test_question_labels_decide_failure_and_questions_may_be_a_one_pass_iterable() -> None:
    entries = [question("a", "OK"), question("b", "REFUSAL_OK"), question("c", "OVER_REFUSAL", "refused")]

    def once() -> Iterator[dict[str, Any]]:
        yield from entries  # the document's Questions is rebuilt on each pass; a generator is the strict case

    doc = make_doc({}, [])
    doc["questions"] = once()
    suite = suite_of(parse(render_junit(doc)))
    assert [c.find("failure") is not None for c in suite.findall("testcase")] == [False, False, True]
    failure = suite.find("testcase[@name='c']/failure")
    assert failure is not None and failure.attrib == {"message": "OVER_REFUSAL: refused", "type": "OVER_REFUSAL"}
    assert suite.get("failures") == "1" and suite.get("tests") == "3"


def test_output_is_deterministic_declared_and_indented(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = report("product", tmp_path, monkeypatch)
    xml = render_junit(doc)
    assert xml == render_junit(doc)
    assert xml.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')
    assert xml.endswith("</testsuites>\n")
    assert "\n  <testsuite " in xml and "\n    <testcase " in xml
    assert "timestamp" not in xml and "hostname" not in xml


def test_no_gates_and_no_questions_is_an_empty_valid_suite() -> None:
    suite = suite_of(parse(render_junit(make_doc({}, []))))
    check_shape(suite)
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("0", "0", "0")
