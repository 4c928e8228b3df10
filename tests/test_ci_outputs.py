"""JUnit and GitHub Actions outputs through the command line."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from conftest import EXAMPLES, write

PRODUCT = ("--gold", EXAMPLES / "product" / "gold.jsonl", "--trace", EXAMPLES / "product" / "trace.jsonl")


def test_junit_file_has_a_case_per_gate_and_with_per_question_per_question(ragscore, isolated):
    ragscore(*PRODUCT, "--junit", "gates.xml", "--format", "none", "-q")
    suite = ET.parse(isolated / "gates.xml").getroot().find("testsuite")
    assert [case.get("name") for case in suite.iter("testcase")] == [
        "precision", "chr", "under_refusal", "over_refusal", "missing"]
    assert suite.get("failures") == "2"
    ragscore(*PRODUCT, "--junit", "all.xml", "--per-question", "--format", "none", "-q")
    suite = ET.parse(isolated / "all.xml").getroot().find("testsuite")
    assert suite.get("tests") == str(5 + 40) and suite.get("failures") == str(2 + 9)


def test_github_annotations_and_step_summary(ragscore, isolated, monkeypatch):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(isolated / "summary.md"))
    write(isolated / "summary.md", "earlier step\n")
    run = ragscore(*PRODUCT, "-q")
    assert run.err.splitlines() == [
        "::error title=ragscore gate under_refusal::under_refusal = 0.2500, expected <= 0.05",
        "::error title=ragscore gate missing::missing = 1, expected <= 0",
    ]
    summary = (isolated / "summary.md").read_text()
    assert summary.startswith("earlier step\n# ragscore report\n") and "## Questions" not in summary
    assert run.json()["pass"] is False  # the JSON report on standard output is untouched


def test_no_annotations_outside_github(ragscore, isolated, monkeypatch):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert "::error" not in ragscore(*PRODUCT, "-q").err


def test_html_file_holds_the_question_table(ragscore, isolated):
    run = ragscore(*PRODUCT, "--html", "report.html", "--format", "none", "-q")
    assert run.status == 1
    page = (isolated / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count('data-label="HALLUCINATION"') == 2
