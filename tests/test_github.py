"""GitHub Actions output: workflow-command annotations for gates, and the appended job summary."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, checked_report
from ragscore.cli import main
from ragscore.reports.files import ReportWriteError
from ragscore.reports.github import annotation_lines, append_step_summary, escape_data, escape_property
from ragscore.reports.markdown import render_markdown


def product_doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Score the product example in-process, as the README runs it, and return the JSON report."""
    monkeypatch.chdir(ROOT)  # relative paths and the project's own gates.toml
    out = tmp_path / "product.json"
    main(["--gold", "examples/product/gold.jsonl", "--trace", "examples/product/trace.jsonl", "--json", str(out),
          "--format", "none", "--per-question", "--no-fail", "-q"])
    return checked_report(out.read_text(encoding="utf-8"))


def gate(status: str, value: float | int | None, op: str = ">=", threshold: float = 0.8,
         warn: float | None = None) -> dict[str, Any]:
    """Build one gate entry as the report document holds it."""
    return {"op": op, "threshold": threshold, "warn": warn, "value": value, "status": status, "source": "test"}


def test_product_example_annotations_are_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert annotation_lines(product_doc(tmp_path, monkeypatch)) == [
        "::error title=ragscore gate under_refusal::under_refusal = 0.2500, expected <= 0.05",
        "::error title=ragscore gate missing::missing = 1, expected <= 0",
    ]


def test_failed_and_warned_gates_only_in_gate_order() -> None:
    doc = {"gates": {
        "chr": gate("pass", 0.9),
        "compliance": gate("warn", 0.93, ">=", 0.9, 0.95),
        "precision": gate("fail", 0.7),
        "recall": gate("skipped", None),
    }}
    assert annotation_lines(doc) == [
        "::warning title=ragscore gate compliance::compliance = 0.9300, expected >= 0.95 to pass without a warning"
        " (the gate requires >= 0.9)",
        "::error title=ragscore gate precision::precision = 0.7000, expected >= 0.8",
    ]


def test_no_gates_no_annotations() -> None:
    assert annotation_lines({"gates": {}}) == []


def test_data_escaping() -> None:
    assert escape_data("100% a\r\nb: c, d") == "100%25 a%0D%0Ab: c, d"
    assert escape_data("%0A") == "%250A"  # an escape already in the text stays literal


def test_property_escaping() -> None:
    assert escape_property("a:b,c%d\r\ne") == "a%3Ab%2Cc%25d%0D%0Ae"
    assert escape_property("::") == "%3A%3A"


def test_annotation_escapes_title_and_message_from_input() -> None:
    (line,) = annotation_lines({"gates": {"odd:name,50%\nx": gate("fail", 0.5)}})
    assert line == "::error title=ragscore gate odd%3Aname%2C50%25%0Ax::odd:name,50%25%0Ax = 0.5000, expected >= 0.8"
    # Exactly one "::" separates the properties from the message, and the line stays one line.
    assert line.count("::") == 2 and "\n" not in line and "\r" not in line


def test_summary_appended_twice_keeps_both_texts_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = product_doc(tmp_path, monkeypatch)
    summary = tmp_path / "step_summary.md"
    first = "".join(render_markdown(doc))
    append_step_summary(render_markdown(doc), str(summary))
    append_step_summary(["## Second run\n", "Ünïcode ✓\n"], str(summary))
    assert summary.read_text(encoding="utf-8") == first + "## Second run\nÜnïcode ✓\n"


def test_summary_appends_to_what_the_file_already_has(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    append_step_summary(iter(["# ragscore\n"]), str(summary))
    assert summary.read_bytes() == b"earlier step\n# ragscore\n"


def test_summary_in_a_missing_folder_raises_a_report_error(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "summary.md"
    with pytest.raises(ReportWriteError, match=r"summary\.md: cannot append the GitHub step summary"):
        append_step_summary(["text\n"], str(path))
    assert not path.parent.exists()


def test_summary_renders_before_it_opens_the_file(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("kept\n", encoding="utf-8")

    def broken() -> Iterator[str]:
        yield "partial\n"
        raise RuntimeError("renderer failed")

    with pytest.raises(RuntimeError):
        append_step_summary(broken(), str(summary))
    assert summary.read_text(encoding="utf-8") == "kept\n"


@pytest.mark.parametrize("rows", [False, True])
def test_merge_reports_to_github_as_score_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str], rows: bool) -> None:
    # merge promises score's report: the same annotations and the same job summary, byte for byte.
    monkeypatch.chdir(ROOT)  # the project's own gates.toml, as the README runs the example
    inputs = ["--gold", "examples/product/gold.jsonl", "--trace", "examples/product/trace.jsonl"]
    listed = ["--per-question", "--markdown", str(tmp_path / "r.md")] if rows else []
    parts = [str(tmp_path / f"part-{i}.json") for i in (1, 2)]
    for i, part in enumerate(parts, 1):
        assert main(["partial", *inputs, "--part", f"{i}/2", "-o", part, "-q", *(["--rows"] if rows else [])]) == 0
    capsys.readouterr()
    outputs = {}
    for command in ([*inputs, *listed], ["merge", *parts, *listed]):
        summary = tmp_path / f"{command[0]}-summary.md"
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
        assert main([*command, "--format", "none", "-q"]) == 1
        err = capsys.readouterr().err
        outputs[command[0]] = (err, summary.read_bytes(), (tmp_path / "r.md").read_bytes() if rows else b"")
    assert outputs["merge"] == outputs["--gold"]
    annotations, summary, _ = outputs["merge"]
    assert annotations == ("::error title=ragscore gate under_refusal::under_refusal = 0.2500, expected <= 0.05\n"
                           "::error title=ragscore gate missing::missing = 1, expected <= 0\n")
    assert summary.startswith(b"# ragscore report\n\n**FAIL**: 2 of 6 gates failed: `under_refusal`, `missing`.\n")
    assert (b"\n## Questions\n" in summary) is rows  # score's summary lists them with --per-question
