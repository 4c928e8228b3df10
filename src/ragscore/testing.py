"""Assertions for a pipeline's own test suite (pytest or unittest): ``assert_passes(run)``.

    import ragscore
    from ragscore.testing import assert_passes

    def test_rag_quality():
        assert_passes(ragscore.score("tests/gold.jsonl", run_pipeline_on_gold_questions()))

A failure says which gates failed, by how much, and which questions did worst, so the test log
reads like the command line's report. Nothing here imports pytest.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RagscoreAssertionError", "assert_passes"]

WORST = 5  # questions listed per failed gate


class RagscoreAssertionError(AssertionError):
    """A run failed a gate (an AssertionError, so test runners report it as a failed test)."""


def assert_passes(run: Any, *, worst: int = WORST) -> None:
    """Raise ``RagscoreAssertionError`` unless every gate of ``run`` (from ``ragscore.score``, ``compare``,
    ``ner``, ``classify`` or ``link``) passed; the message lists the failed gates, the diagnoses and
    the worst questions."""
    if run.passed:
        return
    raise RagscoreAssertionError(failure_message(run, worst))


def failure_message(run: Any, worst: int = WORST) -> str:
    """Say why ``run`` failed, in a few lines."""
    from ragscore.gates import format_threshold
    from ragscore.reports.markdown import fmt

    lines = ["ragscore: the run failed its gates"]
    for result in getattr(run, "gate_results", ()):
        if result.status.value == "fail":
            gate = result.gate
            threshold = format_threshold(gate.threshold)
            lines.append(f"  FAIL {gate.metric} = {fmt(result.value)} (gate {gate.op} {threshold})")
    for regression in getattr(run, "regressions", ()):
        if regression.status == "fail":
            lines.append(f"  REGRESSION {regression.metric}: worse by {fmt(regression.worse_by)} "
                         f"(allowed {regression.allowed:g})")
    for slice_path, groups in getattr(run, "slices", {}).items():
        for label, result in groups.items():
            for gate in result.gates:
                if gate.status.value == "fail":
                    lines.append(f"  FAIL {gate.gate.metric}[{slice_path}={label}] = {fmt(gate.value)} "
                                 f"(gate {gate.gate.op} {format_threshold(gate.gate.threshold)})")
    for diagnosis in getattr(run, "diagnoses", ()):
        found = diagnosis.as_dict()
        lines.append(f"  {found['severity']}: {found['metric']} = {fmt(found['value'])}: "
                     + "; ".join(found["root_causes"][:1]))
        for sample in found.get("low_samples", [])[:worst]:
            claim = sample.get("claim")
            shown = "" if claim is None else f": {claim[:80]!r}"
            lines.append(f"    worst: {sample['qid']} ({fmt(sample['value'])}){shown}")
    return "\n".join(lines)
