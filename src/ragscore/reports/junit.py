"""Render the report document as JUnit XML, so that any CI server shows the gates as tests."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from typing import Any, Final

from ragscore.metrics.answer import PASSING_LABELS
from ragscore.quoting import unicode_escape, visible
from ragscore.reports.common import gate_finding

SUITE: Final = "ragscore"
GATE_CLASS: Final = "ragscore.gates"
QUESTION_CLASS: Final = "ragscore.questions"
_DECLARATION: Final = '<?xml version="1.0" encoding="UTF-8"?>\n'

# XML 1.0 has no way to write these at all, not even as character references, so a report that
# carried one would not parse: control characters (but tab, newline, CR), lone surrogates, FFFE, FFFF.
_FORBIDDEN_RE: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def clean(value: object) -> str:
    """Turn a value from the input into text that XML 1.0 can carry, each control character shown as an escape.

    ``visible`` escapes every control character (tab and newline too: one value, one line);
    U+FFFE and U+FFFF, which XML cannot carry either, are escaped the same way.
    """
    return _FORBIDDEN_RE.sub(unicode_escape, visible(str(value)))


def _gate_case(metric: str, gate: Mapping[str, Any]) -> ET.Element:
    """Build one gate's testcase: a failure, a skip, a pass with a warning, or a plain pass."""
    case = ET.Element("testcase", classname=GATE_CLASS, name=clean(metric))
    status = gate["status"]
    if status == "fail":
        message = gate_finding(metric, gate, clean)
        ET.SubElement(case, "failure", message=message, type="gate").text = message
    elif status == "skipped":
        ET.SubElement(case, "skipped", message=f"{clean(metric)} undefined (no questions counted)")
    elif status == "warn":
        # JUnit has no "passed with a warning": the test passes and its output says why it warned.
        ET.SubElement(case, "system-out").text = f"warning: {gate_finding(metric, gate, clean)}"
    return case


def _question_case(question: Mapping[str, Any]) -> tuple[ET.Element, bool]:
    """Build one question's testcase, failed unless its label passes (with repeated samples: unless
    every sample's does); say whether it failed."""
    case = ET.Element("testcase", classname=QUESTION_CLASS, name=clean(question["qid"]))
    label = clean(question["label"])
    samples = question.get("samples")
    if samples is not None:
        if samples["correct"] == samples["n"]:
            return case, False
        counts = ", ".join(f"{clean(name)} {count}" for name, count in samples["labels"].items())
        message = (f"{samples['correct']} of {samples['n']} samples correct ({counts}); the last: {label}: "
                   f"{clean(question['reason'])}")
        label = "SAMPLES"
    elif label in PASSING_LABELS:
        return case, False
    else:
        message = f"{label}: {clean(question['reason'])}"
    failure = ET.SubElement(case, "failure", message=message, type=label)
    # The body is what a CI server shows on the failed test's page: the question helps find it.
    body = [message]
    if question.get("question") is not None:
        body.append(f"question: {clean(question['question'])}")
    failure.text = "\n".join(body)
    return case, True


def _property_value(value: object) -> str:
    """Show a setting as text: strings as they are, anything else as JSON (true, [1, 3], null)."""
    return clean(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _properties(doc: Mapping[str, Any]) -> ET.Element:
    properties = ET.Element("properties")
    pairs: list[tuple[str, object]] = [("signature", doc["signature"]), ("version", doc["version"])]
    pairs += [(f"settings.{key}", value) for key, value in doc["settings"].items()]
    for name, value in pairs:
        ET.SubElement(properties, "property", name=clean(name), value=_property_value(value))
    return properties


def _cases(doc: Mapping[str, Any]) -> tuple[list[ET.Element], int, int]:
    """Build every testcase, gates first, and count the failures and skips among them."""
    cases: list[ET.Element] = []
    failures = skipped = 0
    for metric, gate in doc["gates"].items():
        cases.append(_gate_case(metric, gate))
        failures += gate["status"] == "fail"
        skipped += gate["status"] == "skipped"
    questions: Iterable[Mapping[str, Any]] = doc.get("questions", ())
    for question in questions:
        case, failed = _question_case(question)
        cases.append(case)
        failures += failed
    return cases, failures, skipped


def render_junit(doc: dict[str, Any]) -> str:
    """Render the gates (and questions, when listed) as one JUnit test suite, UTF-8 XML text."""
    cases, failures, skipped = _cases(doc)
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": "0"}
    root = ET.Element("testsuites", {"name": SUITE, **counts})
    suite = ET.SubElement(root, "testsuite", {"name": SUITE, **counts, "skipped": str(skipped)})
    # The schema wants properties before the testcases.
    suite.append(_properties(doc))
    suite.extend(cases)
    ET.indent(root)
    return _DECLARATION + ET.tostring(root, encoding="unicode") + "\n"
