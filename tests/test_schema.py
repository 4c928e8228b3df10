"""The shipped JSON Schema accepts every report ragscore writes and rejects broken ones."""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

from ragscore.cli import main
from ragscore.schema import load_schema, schema_text

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GOLDEN = Path(__file__).resolve().parent / "data" / "golden"

EXAMPLE_INPUTS: dict[str, tuple[Path, Path]] = {
    "reference": (EXAMPLES / "gold.jsonl", EXAMPLES / "trace.jsonl"),
    "alt-shape": (EXAMPLES / "alt-shape" / "gold.json", EXAMPLES / "alt-shape" / "trace.jsonl"),
    "product": (EXAMPLES / "product" / "gold.jsonl", EXAMPLES / "product" / "trace.jsonl"),
}
VARIANTS: dict[str, list[str]] = {
    "plain": [],
    "per-question": ["--per-question"],
    "metrics-all": ["--metrics", "all"],
    "metrics-all-per-question": ["--metrics", "all", "--per-question"],
    "only-failures": ["--only-failures"],
    "gates": ["--per-question", "--metrics", "all", "--gates", "precision=0.8,ndcg@10>=0.6,chr>0.99,missing<1"],
    "strict": ["--strict", "--metrics", "retrieval", "--gates", "ndcg@3>=0.5,hit@1=0.9"],
}
RATES = ("precision", "chr", "under_refusal", "over_refusal", "recall@k")


@cache
def _validator() -> Any:
    """Build one validator for the shipped schema."""
    return jsonschema.Draft202012Validator(load_schema())


def report_errors(doc: dict[str, Any]) -> list[str]:
    """List every schema violation of a report, with where it is."""
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in _validator().iter_errors(doc)]


def assert_valid_report(doc: dict[str, Any]) -> None:
    """Fail with every problem listed unless the report satisfies the shipped schema."""
    errors = report_errors(doc)
    assert not errors, "report does not match report.schema.json:\n" + "\n".join(errors)


def run_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gold: Path, trace: Path, *extra: str
) -> dict[str, Any]:
    """Run the command line in an empty folder and return the JSON report it wrote."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "report.json"
    argv = ["--gold", str(gold), "--trace", str(trace), "--json", str(out), "--format", "none", "--no-fail", "-q"]
    status = main([*argv, *extra])
    assert status == 0
    doc: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return doc


@pytest.fixture(scope="module")
def golden_report() -> dict[str, Any]:
    """Load a golden report with a per-question list, as a base for breaking it."""
    doc: dict[str, Any] = json.loads((GOLDEN / "product.json").read_text(encoding="utf-8"))
    return doc


def test_schema_is_valid_draft_2020_12() -> None:
    """Check the schema against the draft 2020-12 meta-schema."""
    schema = load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] and schema["title"]


def test_every_property_is_described() -> None:
    """Require a description on every top-level property."""
    props = load_schema()["properties"]
    assert [name for name, sub in props.items() if not sub.get("description")] == []


def test_schema_is_shipped_in_the_package() -> None:
    """Find the schema file as package data, and its text parses to the loaded schema."""
    assert files("ragscore").joinpath("report.schema.json").is_file()
    assert json.loads(schema_text()) == load_schema()
    assert schema_text().endswith("\n")


def test_required_keys_match_the_report_document() -> None:
    """Require every key the report always has; only external scores, operations, grounding and tools counts, slices and
    questions are optional."""
    schema = load_schema()
    doc = json.loads((GOLDEN / "reference.json").read_text(encoding="utf-8"))
    assert schema["required"] == [key for key in doc if key != "questions"]
    optional = ["repeats", "scores", "operations", "grounding", "tools", "sessions", "scores_file", "slices",
                "questions"]
    assert list(schema["properties"]) == [key for key in doc if key != "questions"] + optional


@pytest.mark.parametrize("example", sorted(EXAMPLE_INPUTS))
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_example_reports_are_valid(
    example: str, variant: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Validate the report of every shipped example in every report shape."""
    gold, trace = EXAMPLE_INPUTS[example]
    doc = run_report(tmp_path, monkeypatch, gold, trace, *VARIANTS[variant])
    assert_valid_report(doc)
    assert ("questions" in doc) == any(flag in VARIANTS[variant] for flag in ("--per-question", "--only-failures"))


def test_relative_paths_from_the_repository_root_are_valid(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Validate a report whose input paths are relative folders, run from the repository root."""
    monkeypatch.chdir(ROOT)
    out = tmp_path / "report.json"
    argv = ["--gold", "examples/product/gold.jsonl", "--trace", "examples/product/trace.jsonl"]
    assert main([*argv, "--json", str(out), "--format", "none", "--no-fail", "-q", "--per-question"]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["inputs"]["gold"]["path"] == "examples/product/gold.jsonl"
    assert_valid_report(doc)


@pytest.mark.parametrize("extra", [[], ["--per-question"], ["--metrics", "all", "--per-question"]], ids=str)
def test_an_all_missing_report_is_valid(
    extra: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Validate the report of traces that join no question: every question missing, undefined rates null
    (an empty trace file is an input error)."""
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b'{"qid": "no such question", "answer": "x"}\n')
    doc = run_report(tmp_path, monkeypatch, EXAMPLES / "gold.jsonl", empty, *extra)
    assert_valid_report(doc)
    assert doc["counts"]["missing"] == doc["counts"]["total"] == doc["labels"]["MISSING_TRACE"]
    assert doc["precision"] is None
    assert any(value is None for value in doc["metrics"].values())


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.json")), ids=lambda p: p.name)
def test_golden_reports_are_valid(path: Path) -> None:
    """Validate every golden JSON report the test suite compares against."""
    assert_valid_report(json.loads(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize(
    "key", ["answered", "pass", "schema", "inputs", "counts", "metrics", "gates", "labels", "recall@k"]
)
def test_rejects_a_missing_required_key(golden_report: dict[str, Any], key: str) -> None:
    """Reject a report without one of its always-present keys."""
    doc = copy.deepcopy(golden_report)
    del doc[key]
    assert report_errors(doc)


@pytest.mark.parametrize("key", RATES)
@pytest.mark.parametrize("value", [1.5, -0.1, "0.5"])
def test_rejects_a_rate_out_of_range(golden_report: dict[str, Any], key: str, value: object) -> None:
    """Reject a rate outside [0, 1] or of the wrong type."""
    doc = copy.deepcopy(golden_report)
    doc[key] = value
    assert report_errors(doc)


@pytest.mark.parametrize(
    "path", ["/home/me/gold.jsonl", "C:/data/gold.jsonl", "c:\\data\\gold.jsonl", "\\\\server\\share\\gold.jsonl"]
)
def test_rejects_an_absolute_input_path(golden_report: dict[str, Any], path: str) -> None:
    """Reject an input path that would leak the machine's folders."""
    doc = copy.deepcopy(golden_report)
    doc["inputs"]["gold"]["path"] = path
    assert report_errors(doc)


@pytest.mark.parametrize("path", ["-", "gold.jsonl", "examples/gold.jsonl", "../data/gold.jsonl"])
def test_accepts_relative_input_paths(golden_report: dict[str, Any], path: str) -> None:
    """Accept standard input and relative paths."""
    doc = copy.deepcopy(golden_report)
    doc["inputs"]["trace"]["path"] = path
    assert_valid_report(doc)


def test_rejects_a_bad_gate_status(golden_report: dict[str, Any]) -> None:
    """Reject a gate status outside pass, warn, fail, skipped."""
    doc = copy.deepcopy(golden_report)
    doc["gates"]["precision"]["status"] = "ok"
    assert report_errors(doc)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda d: d.update(schema=2), id="schema-version"),
        pytest.param(lambda d: d.update(schema="1"), id="schema-string"),
        pytest.param(lambda d: d.update(extra=1), id="unknown-top-level-key"),
        pytest.param(lambda d: d.update(answered=-1), id="negative-count"),
        pytest.param(lambda d: d["counts"].update(missing=1.5), id="fractional-count"),
        pytest.param(lambda d: d["counts"].update(other=0), id="unknown-count"),
        pytest.param(lambda d: d["metrics"].update(missing=0.5), id="float-missing-metric"),
        pytest.param(lambda d: d["metrics"].update(precision="high"), id="string-metric"),
        pytest.param(lambda d: d["metrics"].update({"bad name": 0.5}), id="metric-name"),
        pytest.param(lambda d: d["gates"]["precision"].update(op="=="), id="gate-op"),
        pytest.param(lambda d: d["gates"]["precision"].update(threshold=None), id="gate-threshold-null"),
        pytest.param(lambda d: d["gates"]["precision"].update(note="x"), id="gate-extra-key"),
        pytest.param(lambda d: d["gates"]["precision"].pop("source"), id="gate-missing-source"),
        pytest.param(lambda d: d["labels"].pop("OK"), id="label-missing"),
        pytest.param(lambda d: d["labels"].update(WRONG=0), id="label-unknown"),
        pytest.param(lambda d: d["inputs"]["gold"].update(sha256="AB" * 32), id="sha256-uppercase"),
        pytest.param(lambda d: d["inputs"]["gold"].update(sha256="ab" * 31), id="sha256-short"),
        pytest.param(lambda d: d["inputs"].update(extra={"path": "x", "sha256": "0" * 64}), id="input-extra"),
        pytest.param(lambda d: d["questions"][0].update(label="GOOD"), id="question-label"),
        pytest.param(lambda d: d["questions"][0].update(trace_line=0), id="question-trace-line-zero"),
        pytest.param(lambda d: d["questions"][0].update(hit=1), id="question-hit-int"),
        pytest.param(lambda d: d["questions"][0].pop("reason"), id="question-missing-reason"),
        pytest.param(lambda d: d["questions"][0].update(extra=True), id="question-extra-key"),
        pytest.param(lambda d: d["questions"][0]["metrics"].update(precision="1"), id="question-metric-string"),
    ],
)
def test_rejects_damaged_reports(golden_report: dict[str, Any], damage: Any) -> None:
    """Reject a report broken in one place that matters."""
    doc = copy.deepcopy(golden_report)
    damage(doc)
    assert report_errors(doc)


def test_accepts_extra_metric_names_and_a_missing_question_text(golden_report: dict[str, Any]) -> None:
    """Accept names optional families add, null metrics, and a question without its text."""
    doc = copy.deepcopy(golden_report)
    doc["metrics"].update({"ndcg@10": 0.5, "rougeLsum_f": None, "corpus_bleu": 0.25})
    doc["questions"][0]["metrics"].update({"token_f1": 1.0, "hit@3": None})
    doc["questions"][0].pop("question")
    doc["questions"][0]["trace_line"] = None
    assert_valid_report(doc)


def test_schema_command_prints_either_report_schema(ragscore) -> None:
    from importlib.resources import files

    assert ragscore("schema").out == schema_text()
    assert ragscore("schema", "score").out == schema_text()
    stage = ragscore("schema", "stage").out
    assert stage == files("ragscore.stages").joinpath("stage_report.schema.json").read_text(encoding="utf-8")
    assert json.loads(stage)["$schema"].startswith("https://json-schema.org/")
    trec = ragscore("schema", "trec").out
    assert trec == files("ragscore.trec").joinpath("trec_report.schema.json").read_text(encoding="utf-8")
    assert json.loads(trec)["$schema"].startswith("https://json-schema.org/")
    assert ragscore("schema", "other").status == 2
