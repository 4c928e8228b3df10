"""Build the report document: the JSON report's data, which every report format renders."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ragscore.diagnose import Diagnosis
from ragscore.gates import GateResult, pass_bound
from ragscore.intervals import Interval
from ragscore.loaders.jsonl import InputFile
from ragscore.loaders.shards import Shards
from ragscore.metrics.answer import CITING, LABEL_ORDER, PASSING_LABELS, answer_metric_names, outcome_values
from ragscore.metrics.families import enabled, tools_counts
from ragscore.metrics.grounding import Findings
from ragscore.metrics.repeats import RepeatTotals, repeat_metric_names
from ragscore.reports.common import gate_table, shown_path
from ragscore.reports.reasons import reason
from ragscore.results import EXAMPLES, Evaluation
from ragscore.slices import SliceResult
from ragscore.version import __version__

if TYPE_CHECKING:
    from ragscore.loaders.records import Records
    from ragscore.loaders.scores import ScoreFile
    from ragscore.settings import Settings

SCHEMA_VERSION: Final = 1


def display_path(file: InputFile | Records) -> str:
    """Show an input path without leaking the machine's folders (no absolute paths in reports);
    several files read as one show as the paths, globs and folders named, comma-separated."""
    if isinstance(file.spec, Shards):
        return ", ".join(map(shown_path, file.spec.specs))
    return shown_path(file.spec)


def input_paths(ev: Evaluation) -> dict[str, dict[str, Any]]:
    """The inputs' paths and sha256; several trace files read as one list each file too."""
    trace = input_entry(ev.traces, ev.digests[1])
    if ev.ids_read_elsewhere():
        trace["document_ids"] = ev.ids_read_elsewhere()
    out = {"gold": input_entry(ev.gold, ev.digests[0]), "trace": trace}
    if ev.corpus is not None:
        out["corpus"] = {"path": shown_path(ev.corpus.path), "sha256": ev.corpus.sha256,
                         "documents": ev.corpus.documents}
    if ev.chunks is not None:
        out["chunks"] = {"path": shown_path(ev.chunks.path), "sha256": ev.chunks.sha256, "chunks": ev.chunks.chunks}
    return out


def input_entry(file: InputFile | Records, digest: str) -> dict[str, Any]:
    """One input's path and sha256 as reports show them, and each file of several read as one."""
    entry: dict[str, Any] = {"path": display_path(file), "sha256": digest}
    if isinstance(file, InputFile) and file.members:
        entry["files"] = [{"path": shown_path(path), "sha256": sha} for path, sha in file.members]
    return entry


def repeats_section(totals: RepeatTotals, settings: Settings, results: Sequence[GateResult]) -> dict[str, Any]:
    """What a report says of repeated samples beyond the metrics: how many, and the questions
    left out of a metric or below a ``min_pass_rate`` gate."""
    bound = pass_bound(results)
    below, first = totals.below(*bound) if bound is not None else (0, ())
    return {
        "samples": totals.samples,
        "questions": totals.questions,
        "single": totals.single,
        "fewer_than_k": {str(k): short for k, short in zip(settings.pass_k, totals.short, strict=True)},
        "below_min_pass_rate": below,
        "below_examples": [{"qid": b.qid, "correct": b.correct, "samples": b.n} for b in first],
    }


class Questions:
    """The per-question entries, built afresh on each pass so that no report holds them all."""

    def __init__(self, ev: Evaluation, only_failures: bool) -> None:
        self.ev, self.only_failures = ev, only_failures

    def __iter__(self) -> Iterator[dict[str, Any]]:
        settings = self.ev.settings
        names = answer_metric_names(settings)
        families = list(enabled(settings.families))
        repeat_names = repeat_metric_names(settings)
        cites = not self.ev.tally.cites_nothing
        grounded = "grounding" in settings.families
        for row in self.ev.rows or ():
            o = row.outcome
            if self.only_failures and (o.label in PASSING_LABELS if row.sampled is None
                                       else row.sampled.correct == row.sampled.n):
                continue
            entry: dict[str, Any] = {"qid": row.qid}
            if row.question is not None:
                entry["question"] = row.question
            entry.update(
                label=o.label.value,
                reason=reason(o, row),
                answerable=row.answerable,
                answered=o.answered,
                refused=not o.answered,
                hit=o.hit,
                contained=o.contained,
                claim=row.claim,
                cited=None if row.cited is None else list(row.cited),
                trace_line=o.line or None,
                metrics=dict(zip(names, outcome_values(o, row.answerable, settings, cites), strict=True)),
            )
            if row.sampled is not None:  # means over the question's samples, then its repeat metrics
                q = row.sampled
                entry["metrics"] = dict(zip(names, q.answer, strict=True))
                if not cites:  # each sample was judged by its citations: undefined, as for the run
                    entry["metrics"].update(dict.fromkeys((*CITING, "precision")))
                entry["metrics"].update(zip(repeat_names, (*q.repeats, q.pass_rate), strict=True))
                entry["samples"] = {"n": q.n, "correct": q.correct, "labels": {
                    label.value: count for label, count in zip(LABEL_ORDER, q.labels, strict=True) if count}}
            for family, values in zip(families, row.family_rows, strict=True):
                entry["metrics"].update(family.question_metrics(values, settings))
            for name in self.ev.scores:  # scores from other evaluators; null where the question has none
                entry["metrics"][name] = row.scores.get(name)
            if grounded:
                entry["grounding"] = None if row.grounding is None else findings_entry(row.grounding)
            yield entry


def findings_entry(found: Findings) -> dict[str, Any]:
    """A question's grounding findings as the JSON report lists them (a leak by its kind, never its value)."""
    return {"evidence": found.evidence, "passages": found.passages, "numbers": found.numbers,
            "findings": [{"kind": f.kind, "start": f.start, "end": f.end, "verdict": f.verdict,
                          **({"leak": f.detail} if f.kind == "leak" else {})} for f in found.items]}


GROUNDING_COUNTS: Final = ("quotes_judged", "quotes_verified", "quotes_misattributed", "quotes_unverified",
                            "quotes_short", "numbers", "numbers_unsupported", "answered", "leaked",
                            "leaked_from_context", "provider_citations", "provider_citations_valid",
                            "provider_citations_misplaced", "provider_citations_invalid",
                            "provider_citations_retrieved")


def grounding_counts(ev: Evaluation) -> dict[str, int] | None:
    """The grounding family's counts over the run (None when the family is off): what its rates divide."""
    for family, totals in zip(enabled(ev.settings.families), ev.columns, strict=True):
        if family.name == "grounding":
            return dict(zip(GROUNDING_COUNTS, (round(m.fsum) for m in totals.columns), strict=True))
    return None


def build_document(
    ev: Evaluation,
    results: list[GateResult],
    passed: bool,
    intervals: Mapping[str, Interval] | None = None,
    slices: Mapping[str, Mapping[str, SliceResult]] | None = None,
    *,
    questions: bool = False,
    only_failures: bool = False,
    diagnoses: Sequence[Diagnosis] = (),
    scores_file: ScoreFile | None = None,
) -> dict[str, Any]:
    """Assemble the report: reference-compatible keys first, then the detail, in a fixed order."""
    metrics = ev.metrics()
    tally, acc = ev.tally, ev.accounting
    doc: dict[str, Any] = {
        "answered": tally.answered,
        "refused": tally.refused,
        "answerable": tally.answerable,
        "unanswerable": tally.unanswerable,
        "precision": metrics["precision"],
        "chr": metrics["chr"],
        "under_refusal": metrics["under_refusal"],
        "over_refusal": metrics["over_refusal"],
        "recall@k": metrics[f"full_recall@{ev.settings.k}"],
        "k": ev.settings.k,
        "pass": passed,
        "schema": SCHEMA_VERSION,
        "version": __version__,
        "signature": ev.settings.signature(),
        "settings": ev.settings.as_dict(),
        "inputs": input_paths(ev),
        "counts": {
            "total": ev.questions,
            "traced": ev.questions - tally.missing,
            "missing": tally.missing,
            "trace_lines": acc.lines,
            "unknown_traces": acc.unknown,
            "duplicate_traces": acc.duplicates,
            "unreadable": acc.unreadable,
            "unreadable_retrieved": acc.bad_retrieved,
        },
        "metrics": metrics,
        "intervals": {name: None if i is None else [i[0], i[1]] for name, i in (intervals or {}).items()},
        "interval_methods": {name: None if i is None else i[2] for name, i in (intervals or {}).items()},
        "gates": gate_table(results),
        "labels": {label.value: tally.labels[label] for label in LABEL_ORDER},
        "diagnoses": [d.as_dict() for d in diagnoses],
    }
    if ev.repeats is not None:
        doc["repeats"] = repeats_section(ev.repeats, ev.settings, results)
    if ev.scores:
        doc["scores"] = {name: {"questions": t.values.n, "nulls": t.nulls} for name, t in ev.scores.items()}
    if ev.operations is not None:
        doc["operations"] = {"quantiles": ev.operations.method, "bad": ev.operations.bad, **ev.operations.counts()}
    grounding = grounding_counts(ev)
    if grounding is not None:
        doc["grounding"] = grounding
    tools = ev.family_totals("tools")
    if tools is not None:
        doc["tools"] = tools_counts(tools)
    if ev.sessions is not None:
        doc["sessions"] = {"field": ev.settings.session, "sessions": len(ev.sessions),
                           "passed": sum(s.first_error is None for s in ev.sessions),
                           "turns": sum(s.turns for s in ev.sessions)}
    if scores_file is not None:
        doc["scores_file"] = {
            "path": display_path(InputFile(scores_file.source)),
            "join": scores_file.join,
            "rows": len(scores_file.rows) + len(scores_file.duplicates),
            "unmatched": len(ev.unmatched_scores),
            "unmatched_keys": [key for _, key in ev.unmatched_scores[:EXAMPLES]],
            "duplicates": len(scores_file.duplicates),
        }
    if slices:
        doc["slices"] = {
            path: {
                label: {
                    "n": result.n,
                    "metrics": result.metrics,
                    "intervals": {name: None if i is None else [i[0], i[1]] for name, i in result.intervals.items()},
                    "gates": gate_table(result.gates),
                }
                for label, result in groups.items()
            }
            for path, groups in slices.items()
        }
    if questions:
        doc["questions"] = Questions(ev, only_failures)
    return doc
