"""The report of ``ragscore agree``: annotators' agreement on a gold set, as JSON and Markdown."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragscore.gates import GateResult
from ragscore.goldset.agreement import EXAMPLES
from ragscore.reports.common import cell, clean, code, fmt, gate_rule, gate_table, verdict
from ragscore.reports.console import gate_lines
from ragscore.version import __version__

if TYPE_CHECKING:
    from ragscore.goldset.calibration import Calibration
    from ragscore.loaders.scores import Judge


def build_agree_document(
    inputs: Sequence[Mapping[str, Any]], fields: Sequence[str], shared: int, partial: Sequence[str],
    metrics: Mapping[str, float | None], disagreeing: Mapping[str, Sequence[str]], results: list[GateResult],
    passed: bool,
) -> dict[str, Any]:
    """Assemble the agreement report: verdict, inputs, measures, gates, then the disagreements."""
    return {
        "pass": passed,
        "schema": 1,
        "kind": "agree",
        "version": __version__,
        "inputs": [dict(entry) for entry in inputs],
        "fields": ["answerable", *fields, "gold_citations"],
        "counts": {"questions": shared, "in_some_files_only": len(partial)},
        "in_some_files_only": list(partial[:EXAMPLES]),
        "metrics": dict(metrics),
        "gates": gate_table(results),
        "disagreeing": {name: {"count": len(qids), "qids": list(qids[:EXAMPLES])}
                        for name, qids in disagreeing.items()},
    }


def render_agree_markdown(doc: Mapping[str, Any]) -> Iterator[str]:
    """Render the agreement for a pull request: verdict, measures, gates, disagreeing questions."""
    files = ", ".join(code(entry["path"]) for entry in doc["inputs"])
    yield (f"# ragscore agree\n\n**{verdict(doc['pass'])}**: {len(doc['inputs'])} annotators ({files}), "
           f"{doc['counts']['questions']} questions in every file.\n\n")
    yield "| measure | value |\n|---|---|\n"
    for name, value in doc["metrics"].items():
        yield f"| {code(name)} | {fmt(value)} |\n"
    if doc["gates"]:
        yield "\n| gate | rule | value | status |\n|---|---|---|---|\n"
        for name, g in doc["gates"].items():
            yield f"| {code(name)} | {gate_rule(g)} | {fmt(g['value'])} | {g['status']} |\n"
    yield "\n| field | questions in disagreement | first of them |\n|---|---|---|\n"
    for name, d in doc["disagreeing"].items():
        yield f"| {code(name)} | {d['count']} | {', '.join(cell(q) for q in d['qids'])} |\n"


def agree_notes(doc: Mapping[str, Any], results: list[GateResult]) -> list[str]:
    """One line per field in disagreement, the qids in some files only, then the gates."""
    notes = []
    if doc["counts"]["in_some_files_only"]:
        shown = ", ".join(doc["in_some_files_only"][:5])
        notes.append(f"{doc['counts']['in_some_files_only']} qids are in some files only (left out): {shown}")
    for name, d in doc["disagreeing"].items():
        if d["count"]:
            notes.append(f"{name}: the annotators disagree on {d['count']} of {doc['counts']['questions']} "
                         f"questions: {', '.join(d['qids'][:5])}" + (", ..." if d["count"] > 5 else ""))
    return [clean(note) for note in notes] + (gate_lines(results, doc["pass"]) if results else [])  # qids: input


# --- the judge against human labels (agree --judge SCORES --human LABELS) ------------------------


def build_judge_document(
    inputs: Sequence[Mapping[str, Any]], judge: Judge | None, calibration: Calibration, results: list[GateResult],
    passed: bool,
) -> dict[str, Any]:
    """Assemble the calibration report: verdict, inputs (the judge's scores, then the labels), the judge, each
    criterion's scale and n, measures, gates, then the disagreements, each with both values."""
    return {
        "pass": passed,
        "schema": 1,
        "kind": "agree",
        "version": __version__,
        "inputs": [dict(entry) for entry in inputs],
        "judge": None if judge is None else judge.signed(),
        "criteria": {c.name: {"scale": c.scale, "n": c.n} for c in calibration.criteria},
        "counts": {"questions": calibration.shared, "in_some_files_only": len(calibration.one_file_only)},
        "in_some_files_only": list(calibration.one_file_only[:EXAMPLES]),
        "metrics": calibration.metrics,
        "gates": gate_table(results),
        "disagreeing": {c.name: {"count": len(c.disagreeing),
                                 "questions": [{"qid": qid, "judge": _value(c.scale, j), "human": _value(c.scale, h)}
                                               for qid, j, h in c.disagreeing[:EXAMPLES]]}
                        for c in calibration.criteria},
    }


def _value(scale: str, value: float) -> float | int:
    """A value as the report holds it: an integer on the pass/fail and 1-5 scales."""
    return value if scale == "0-1" else int(value)


def render_judge_markdown(doc: Mapping[str, Any]) -> Iterator[str]:
    """Render the calibration for a pull request: verdict, a row per criterion, gates, disagreeing questions."""
    judge, human = (code(entry["path"]) for entry in doc["inputs"])
    who = "" if doc["judge"] is None else (f" ({code(doc['judge']['model'])} at {code(doc['judge']['endpoint'])}, "
                                           f"rubric {code(doc['judge']['rubric'][:12])})")
    yield (f"# ragscore agree: judge against human labels\n\n**{verdict(doc['pass'])}**: the judge's scores {judge}"
           f"{who} against the human labels {human}, {doc['counts']['questions']} questions in both files.\n\n")
    yield "| criterion | scale | n | kappa | alpha | disagreeing |\n|---|---|---|---|---|---|\n"
    for name, c in doc["criteria"].items():
        yield (f"| {code(name)} | {c['scale']} | {c['n']} | {fmt(doc['metrics'][f'kappa_{name}'])} | "
               f"{fmt(doc['metrics'][f'alpha_{name}'])} | {doc['disagreeing'][name]['count']} |\n")
    yield ("\nkappa: Cohen's, unweighted on pass/fail, quadratic-weighted on 1-5, unweighted on 0-1 binarised at 0.5; "
           "alpha: Krippendorff's, nominal on pass/fail, ordinal on 1-5, interval on 0-1.\n")
    if doc["gates"]:
        yield "\n| gate | rule | value | status |\n|---|---|---|---|\n"
        for name, g in doc["gates"].items():
            yield f"| {code(name)} | {gate_rule(g)} | {fmt(g['value'])} | {g['status']} |\n"
    if any(d["count"] for d in doc["disagreeing"].values()):
        yield "\n| criterion | question | judge | human |\n|---|---|---|---|\n"
        for name, d in doc["disagreeing"].items():
            for q in d["questions"]:
                yield f"| {code(name)} | {cell(q['qid'])} | {q['judge']} | {q['human']} |\n"  # numbers, as given


def judge_notes(doc: Mapping[str, Any], results: list[GateResult], before: Sequence[str]) -> list[str]:
    """The notes of reading the files (``before``), the qids in one file only, one line per criterion in
    disagreement (worst first, each with both values), then the gates."""
    notes = list(before)
    if doc["counts"]["in_some_files_only"]:
        shown = ", ".join(doc["in_some_files_only"][:5])
        notes.append(f"{doc['counts']['in_some_files_only']} qids are in one file only (left out): {shown}"
                     + (", ..." if doc["counts"]["in_some_files_only"] > 5 else ""))
    for name, d in doc["disagreeing"].items():
        if d["count"]:
            pairs = ", ".join(f"{q['qid']} ({q['judge']} vs {q['human']})" for q in d["questions"][:5])
            n = doc["criteria"][name]["n"]
            notes.append(f"{name}: the judge and the human labels differ on {d['count']} of {n} questions: {pairs}"
                         + (", ..." if d["count"] > 5 else ""))
    return [clean(note) for note in notes] + (gate_lines(results, doc["pass"]) if results else [])  # qids: input


def render_markdown(doc: Mapping[str, Any]) -> Iterator[str]:
    """Render either report of agree: annotators' gold files, or a judge against human labels."""
    return render_judge_markdown(doc) if "criteria" in doc else render_agree_markdown(doc)
