"""Render the report document as Markdown, for a pull-request comment or a job summary."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final

from ragscore.metrics.names import lookup
from ragscore.metrics.registry import split_cutoff
from ragscore.reports.common import (
    cell,
    code,
    cut_for_table,
    diagnosis_heading,
    fmt,
    gate_rule,
    gates_verdict,
    signature_line,
    verdict,
)

# cell, code and fmt are re-exported: callers outside the reports have long taken them from here.
__all__ = ["cell", "code", "fmt", "render_markdown", "repeats_notes", "unreadable_lines"]


def _table(header: list[str], rows: list[list[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


def _interval(intervals: dict[str, list[float] | None], name: str) -> str:
    """Show a metric's interval as low–high; n/a when undefined, blank when it has none (counts)."""
    if name not in intervals:
        return ""
    bounds = intervals[name]
    return "n/a" if bounds is None else f"{fmt(bounds[0])}–{fmt(bounds[1])}"


def _family_section(
    family: str, values: dict[str, float | None], intervals: dict[str, list[float] | None], level: str
) -> list[str]:
    """Show a family's metrics: those with a cutoff as a metric × cutoff table, then the rest."""
    grid: dict[str, dict[int, float | None]] = {}
    single: dict[str, float | None] = {}
    for name, value in values.items():
        stem, k = split_cutoff(name)
        if k is None:
            single[name] = value
        else:
            grid.setdefault(stem, {})[k] = value  # "ndcg@K": not the "ndcg" of the whole list below
    out = ["", f"## {family.capitalize()}", ""]
    if grid:
        cutoffs = sorted({k for row in grid.values() for k in row})
        out += ["| metric | " + " | ".join(f"@{k}" for k in cutoffs) + " |", "|---" * (len(cutoffs) + 1) + "|"]
        out += [f"| {code(stem)} | " + " | ".join(fmt(row.get(k)) for k in cutoffs) + " |"
                for stem, row in grid.items()]
        out.append("")
    if single:
        out += [f"| metric | value | {level} |", "|---|---|---|"]
        out += [f"| {code(name)} | {fmt(v)} | {_interval(intervals, name)} |" for name, v in single.items()]
    return out


_SLICE_COLUMNS: Final = ("precision", "chr", "under_refusal", "over_refusal")


def _slices_section(slices: dict[str, dict[str, Any]]) -> list[str]:
    """Show each slice's size, its gated metrics (else the four core ones) and its gate verdicts."""
    out = []
    for path, groups in slices.items():
        gated = list(dict.fromkeys(name for group in groups.values() for name in group["gates"]))
        names = gated or list(_SLICE_COLUMNS)
        out += ["", f"## Slices by {cell(path)}", ""]
        out.append("| value | n | " + " | ".join(code(name) for name in names) + (" | gates |" if gated else " |"))
        out.append("|---|---|" + "---|" * len(names) + ("---|" if gated else ""))
        for label, group in groups.items():
            values = " | ".join(fmt(group["metrics"].get(name)) for name in names)
            statuses = [g["status"] for g in group["gates"].values()]
            verdict = ("fail" if "fail" in statuses else "skipped (small)" if statuses and set(statuses) == {"skipped"}
                       else "pass") if gated else ""
            out.append(f"| {cell(label)} | {group['n']} | {values} |" + (f" {verdict} |" if gated else ""))
    return out


def _diagnoses_section(diagnoses: list[dict[str, Any]]) -> list[str]:
    """List each diagnosis: what crossed which threshold, likely causes, what to try, the worst questions."""
    if not diagnoses:
        return []
    out = ["", "## Diagnosis"]
    for d in diagnoses:
        out += ["", f"### {d['severity']}: {cell(diagnosis_heading(d))}", ""]
        if d["root_causes"]:
            out += ["Likely causes:", "", *(f"- {cell(c)}" for c in d["root_causes"]), ""]
        if d["suggested_actions"]:
            out += ["Try:", "", *(f"- {cell(a)}" for a in d["suggested_actions"]), ""]
        if d["low_samples"]:
            out += ["| worst questions | question | claim | value |", "|---|---|---|---|"]
            out += [f"| {cell(s['qid'])} | {cell(cut_for_table(s['question']))} | "
                    f"{cell(cut_for_table(s['claim'])) if s['claim'] is not None else '(no trace)'} | "
                    f"{fmt(s['value'])} |"
                    for s in d["low_samples"]]
        if out[-1] == "":
            out.pop()
    return out


def unreadable_lines(counts: dict[str, Any]) -> list[str]:
    """Say what the traces held that could not be read (nothing when all was read)."""
    parts = []
    if counts.get("unreadable"):
        n = counts["unreadable"]
        parts.append(f"{n} trace{'s' * (n != 1)} had no claim or refusal field (scored as empty answers)")
    if counts.get("unreadable_retrieved"):
        n = counts["unreadable_retrieved"]
        parts.append(f"{n} trace{'s' * (n != 1)} had a retrieved list with an entry that gives no id (read as "
                     "nothing retrieved)")
    return [f"**Unreadable:** {'; '.join(parts)}.", ""] if parts else []


def _samples_line(repeats: dict[str, Any]) -> str:
    """Say how the answer metrics read samples."""
    return (f"Samples: {repeats['samples']} samples of {repeats['questions']} questions. Each answer metric is the "
            "mean, over "
            "the questions it counts, of each question's mean over its samples: every question weighs the same. "
            "The counts of answered, refused, answerable and unanswerable, and the labels, are of samples.")


def repeats_notes(
    repeats: dict[str, Any], name: Callable[[str], str] = str, text: Callable[[str], str] = str
) -> list[str]:
    """Say which questions a repeat metric leaves out, and which fail min_pass_rate (``name``
    formats a metric's name and ``text`` a qid: for Markdown, as code and escaped; for HTML, as
    they are, for the page to escape)."""
    out = []
    for k, short in repeats["fewer_than_k"].items():
        if short:
            out.append(f"{short} of {repeats['questions']} questions have fewer than {k} samples: left out of "
                       f"{name(f'pass@{k}')} and {name(f'pass^{k}')}.")
    single = repeats["single"]
    if single:
        out.append(f"{single} question{' has' if single == 1 else 's have'} one sample: left out of "
                   f"{name('consistency')} and {name('flip_rate')}.")
    below = repeats["below_min_pass_rate"]
    if below:
        listed = ", ".join(f"{text(b['qid'])} ({b['correct']}/{b['samples']})" for b in repeats["below_examples"])
        more = ", ..." if below > len(repeats["below_examples"]) else ""
        out.append(f"{below} question{' fails' if below == 1 else 's fail'} {name('min_pass_rate')} "
                   f"(correct/samples): {listed}{more}.")
    return out


def render_markdown(doc: dict[str, Any]) -> Iterator[str]:
    """Render the summary, gates, metrics, labels and per-question tables, line by line."""
    gates = doc["gates"]
    counts = doc["counts"]
    out = [
        "# ragscore report",
        "",
        f"**{verdict(doc['pass'])}**: {gates_verdict(gates, code)}.",
        "",
        *_table(
            ["questions", "answered", "refused", "answerable", "unanswerable", "missing", "unknown traces",
             "duplicate traces"],
            [[doc["counts"]["total"], doc["answered"], doc["refused"], doc["answerable"], doc["unanswerable"],
              counts["missing"], counts["unknown_traces"], counts["duplicate_traces"]]],
        ),
        "",
        *unreadable_lines(counts),
        "## Gates",
        "",
    ]
    if gates:
        out += [
            "| metric | rule | value | status |",
            "|---|---|---|---|",
            *(f"| {code(name)} | {gate_rule(g)} | {fmt(g['value'])} | {g['status']} |" for name, g in gates.items()),
        ]
    else:
        out.append("No gates are set.")
    out += _diagnoses_section(doc.get("diagnoses", []))
    by_family: dict[str, dict[str, float | None]] = {}
    for name, value in doc["metrics"].items():
        spec = lookup(name)
        by_family.setdefault(spec.family if spec else "scores", {})[name] = value  # unregistered: external scores
    intervals = doc.get("intervals", {})
    level = f"{doc['settings'].get('confidence', 0.95) * 100:g}% interval"
    out += ["", "## Metrics", "", f"| metric | value | {level} | better | meaning |", "|---|---|---|---|---|"]
    for family in ("answer", "counts"):
        for name, value in by_family.pop(family, {}).items():
            spec = lookup(name)
            direction, meaning = (spec.direction.value, spec.description) if spec else ("", "")
            out.append(f"| {code(name)} | {fmt(value)} | {_interval(intervals, name)} | {direction} | "
                       f"{cell(meaning)} |")
    repeats = doc.get("repeats")
    if repeats is not None:
        out += ["", _samples_line(repeats)]
    for family, values in by_family.items():
        out += _family_section(family, values, intervals, level)
        if family == "repeats" and repeats is not None and (notes := repeats_notes(repeats, code, cell)):
            out += ["", *(f"- {note}" for note in notes)]
        quantiles = doc.get("operations", {}).get("quantiles", "exact")
        if family == "operations" and quantiles != "exact":  # merged from partials
            out += ["", f"Latency quantiles: {cell(quantiles)}."]
    out += _slices_section(doc.get("slices", {}))
    out += ["", "## Labels", "", "| label | count |", "|---|---|"]
    out += [f"| {code(label)} | {count} |" for label, count in doc["labels"].items()]
    yield from (line + "\n" for line in out)
    if "questions" in doc:
        f1 = "text" in doc["settings"]["metrics"]  # the text family adds each question's token F1
        sampled = repeats is not None  # each question's correct samples, of its samples
        extra = (" f1 |" if f1 else "") + (" correct |" if sampled else "")
        yield "\n## Questions\n\n"
        if sampled:
            yield "With samples, a row shows its question's last sample; *correct* counts all of them.\n\n"
        yield "| qid | answered | hit | refusal | label |" + extra + " reason |\n"
        yield "|---|---|---|---|---|" + "---|" * extra.count("|") + "---|\n"
        empty = True
        for q in doc["questions"]:
            empty = False
            f1_cell = f" {fmt(q['metrics']['token_f1'])} |" if f1 else ""
            correct = f" {q['samples']['correct']}/{q['samples']['n']} |" if sampled else ""
            yield (
                f"| {cell(q['qid'])} | {cell(q['answered'])} | {cell(q['hit'])} | {cell(q['refused'])} "
                f"| {code(q['label'])} |{f1_cell}{correct} {cell(q['reason'])} |\n"
            )
        if empty:
            yield "| | | | | |" + " |" * extra.count("|") + " no question to list |\n"
    yield signature_line(doc["signature"])
