"""One-line notes for standard error: the accounting of traces and the gate verdicts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ragscore.finish import unreadable_hint
from ragscore.gates import GateResult, Status
from ragscore.loaders.gold import KEY_SAMPLE_LINES
from ragscore.loaders.shards import Shards
from ragscore.metrics.answer import CITING, answer_metric_names
from ragscore.metrics.families import tools_counts
from ragscore.metrics.names import lookup
from ragscore.metrics.repeats import RepeatTotals
from ragscore.metrics.stats import RESAMPLING_BUDGET, resampling_is_cheap
from ragscore.quoting import quote, shorten
from ragscore.reports.common import clean, fmt, gate_bound
from ragscore.results import EXAMPLES, Evaluation
from ragscore.slices import SliceResult

if TYPE_CHECKING:
    from ragscore.loaders.jsonl import InputFile
    from ragscore.loaders.records import Records
    from ragscore.loaders.scores import ScoreFile
    from ragscore.settings import Settings


def _listed(ids: list[str], total: int) -> str:
    """List the ids, or say they are examples when there are more lines than ids shown."""
    return ", ".join(ids) if total <= len(ids) else "e.g. " + ", ".join(ids)


def plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def format_notes(asked: Settings, used: Settings, ev: Evaluation | None = None) -> list[str]:
    """Say which format "auto" read the traces in (when not the native contract), and name a
    mapping whose path no record had."""
    notes = []
    if asked.trace_format == "auto" and used.trace_format != "native":
        notes.append(f"traces read as {used.trace_format} (detected from the first record's keys; "
                     f"--trace-format {used.trace_format} says so, --trace-format native reads them as the contract)")
    if ev is not None and ev.gold_ragas:
        notes.append("the gold set was read as a ragas dataset: reference -> the gold claim and answer, "
                     "reference_context_ids -> the relevant documents of --metrics retrieval (not citations: "
                     '[gold.fields] gold_citations = "reference_context_ids" makes them citations)')
    if ev is not None and ev.accounting.lines:
        paths = dict(used.trace_fields)
        for concept, found in sorted(ev.mapped_found.items()):
            if not found and concept in paths:
                notes.append(f"the mapping {concept}={quote(paths[concept])} found nothing in any of "
                             f"{plural(ev.accounting.lines, 'trace', 'traces')} (a typo in the path?)")
        ids = ids_note(ev)
        if ids is not None:
            notes.append(ids)
    return notes


def ids_note(ev: Evaluation) -> str | None:
    """Name the fields a trace format read the retrieved documents' ids from, when any is not the contract's own
    (none when the user mapped document_id: the path is their own choice)."""
    elsewhere = ev.ids_read_elsewhere()
    if not elsewhere or "document_id" in dict(ev.settings.trace_fields):
        return None
    counts = ", ".join(f"{path} ({plural(n, 'document', 'documents')})" for path, n in elsewhere.items())
    source = (": llama-index node ids (node.relationships.1.node_id is each node's source document)"
              if "node.id_" in elsewhere else "")
    return f"the retrieved documents' ids were read from {counts}{source}; --map document_id=PATH reads them from " \
           "another field"


def key_notes(ev: Evaluation) -> list[str]:
    """Name the keys of the gold set and traces that are a typo away from a contract field ("gold_citation")."""
    notes = []
    for where, what, keys in ((ev.gold.where, "gold", ev.gold_keys), (ev.traces.where, "trace", ev.trace_keys)):
        for key, (suggestion, line) in sorted(keys.items(), key=lambda pair: (pair[1][1], pair[0])):
            notes.append(f"{where(line)}: {quote(key)} is not a field of the {what} contract (ignored): did you "
                         f"mean {quote(suggestion)}? (score checks the first {KEY_SAMPLE_LINES:,} lines; "
                         "ragscore validate checks every record)")
    return notes


def lines_of(file: InputFile | Records, lines: list[int], total: int) -> str:
    """Name the first lines of ``total`` in an input: "file, lines 3, 9, ..."; of several files read
    as one, "a:3, b:9, ..."."""
    more = ", ..." if total > len(lines) else ""
    if isinstance(file.spec, Shards):
        return ", ".join(map(file.where, lines)) + more
    return f"{file.name}, line{'s' * (total > 1)} {', '.join(map(str, lines))}{more}"


def no_citations_note(settings: Settings, sampled: bool = False) -> str:
    """Say that no answered trace cites anything, how to make them, and what the run reports instead."""
    names = [name for name in answer_metric_names(settings) if name in CITING]
    undefined = ", ".join(names[:-1]) + " and " + names[-1]
    precision = ("precision is n/a too (each question's samples were judged by their citations)" if sampled else
                 "precision counts the claims alone: answerable, the claim contained, nothing forbidden")
    return (f"no trace cites anything: write answer_json.citations, or --map citations=PATH; {undefined} are n/a, "
            f"{precision}")


def accounting_notes(ev: Evaluation, scores: ScoreFile | None = None) -> list[str]:
    """Summarise missing, unknown and duplicate traces, one line each (none when all is well).

    The ids and names come from the input: control characters in them show as escapes (``\\x1b``).
    """
    notes = []
    missing = ev.tally.missing
    if missing:
        notes.append(
            f"{plural(missing, 'gold question has', 'gold questions have')} no trace "
            f"(MISSING_TRACE, scored as refusals): {_listed(ev.missing_ids, missing)}"
        )
    acc = ev.accounting
    if acc.unknown:
        notes.append(
            f"{plural(acc.unknown, 'trace line matches', 'trace lines match')} no gold question (ignored): "
            f"{_listed([q for _, q in acc.unknown_ids], acc.unknown)}"
        )
    if acc.duplicates:
        notes.append(
            f"{plural(acc.duplicates, 'trace line was', 'trace lines were')} replaced by a later line for the "
            f"same question (the last counts): {_listed([q for _, q in acc.duplicate_ids], acc.duplicates)}"
        )
    if acc.unreadable:
        line, example = acc.unreadable_examples[0]
        notes.append(
            f"{plural(acc.unreadable, 'trace has', 'traces have')} no claim or refusal field (scored as empty "
            f"answers; counts.unreadable): {ev.traces.where(line)}: "
            f"{unreadable_hint(example, ev.settings.trace_format)}"
        )
    notes += _retrieval_notes(ev) + _corpus_notes(ev) + _tools_notes(ev) + _session_notes(ev)
    if ev.tally.cites_nothing:
        notes.append(no_citations_note(ev.settings, ev.repeats is not None))
    if acc.bad_refused:
        notes.append(
            f"{plural(acc.bad_refused, 'trace has', 'traces have')} a \"refused\" field that is neither true nor "
            f"false (read as absent: the claim decides; write a boolean): "
            f"{lines_of(ev.traces, acc.bad_refused_lines, acc.bad_refused)}"
        )
    if scores is not None:
        notes += _scores_file_notes(ev, scores)
    notes += _operations_notes(ev)
    return [clean(note) for note in notes]


def _retrieval_notes(ev: Evaluation) -> list[str]:
    """Say which traces' retrieved lists could not be read, or that none retrieved anything readable."""
    notes: list[str] = []
    acc = ev.accounting
    # Nothing readable retrieved: one note, unless the only lists are unreadable ones and no likely field is
    # known (the note on them names their lines).
    nothing_retrieved = bool(acc.lines and not acc.retrieving and (acc.retrieval_fields or not acc.bad_retrieved))
    if acc.bad_retrieved and not nothing_retrieved:  # else the note below says it, once
        notes.append(
            f"{plural(acc.bad_retrieved, 'trace has', 'traces have')} a retrieved list with an entry that gives no id "
            f"(read as nothing retrieved; entries that are objects need an id, doc_id or document.id, or "
            f"--map document_id=PATH): {lines_of(ev.traces, acc.bad_retrieved_lines, acc.bad_retrieved)}"
        )
    if nothing_retrieved:
        unreadable = (f", {plural(acc.bad_retrieved, 'trace', 'traces')} with an unreadable list "
                      f"(counts.unreadable_retrieved)" if acc.bad_retrieved else "")
        held = (f"the traces hold {', '.join(acc.retrieval_fields)}" if acc.retrieval_fields
                else "no trace holds a list ragscore reads as retrieved documents")
        notes.append(
            f"no trace retrieved anything readable (every retrieved list is empty or absent{unreadable}, so recall "
            f"is 0): {held}; write retrieved_ids, or read ids with --map retrieved_ids=PATH (and "
            f"--map document_id=PATH inside objects) or the --trace-format that writes them; texts without ids "
            f"count only against gold_chunks (--metrics retrieval)"
        )
    return notes


def _tools_notes(ev: Evaluation) -> list[str]:
    """Say which traces of questions with gold tool calls said nothing of tool calls, and which listed entries
    that are no call."""
    totals = ev.family_totals("tools")
    if totals is None:
        return []
    counts = tools_counts(totals)
    notes = []
    if counts["unsaid"]:
        notes.append(f"{plural(counts['unsaid'], 'trace', 'traces')} of questions with gold_tool_calls "
                     f"{'holds' if counts['unsaid'] == 1 else 'hold'} no tool calls in a shape ragscore reads (no "
                     f"\"tool_calls\" list, no provider response under \"response\"): scored as calling no tool; "
                     f"write \"tool_calls\": [] for a trace that called none, or --map tool_calls=PATH: "
                     f"{_first(ev, counts['unsaid_line'], counts['unsaid'])}")
    if counts["unreadable"]:
        notes.append(f"{plural(counts['unreadable'], 'entry', 'entries')} of \"tool_calls\" lists "
                     f"{'is' if counts['unreadable'] == 1 else 'are'} no call in a shape ragscore reads (left out; a "
                     f"call is {{\"name\", \"arguments\"}}, OpenAI's {{\"function\": {{\"name\", \"arguments\"}}}}, "
                     f"an Anthropic tool_use block or a Responses function_call): "
                     f"{_first(ev, counts['unreadable_line'], counts['unreadable'])}")
    return notes


def _session_notes(ev: Evaluation) -> list[str]:
    """Say when no question names a session, and when the intervals could not resample whole sessions."""
    if ev.sessions is None:
        return []
    field = quote(ev.settings.session or "")
    notes = []
    if not ev.sessions:
        notes.append(f"no gold item or trace names a session in {field}: the session metrics are n/a (give "
                     f"--session FIELD, the field that holds each question's session)")
    if not resampling_is_cheap(ev.questions, ev.settings.bootstrap):
        notes.append(f"the intervals take the turns of a session as independent (too narrow when they are not): "
                     f"{ev.questions:,} questions × {ev.settings.bootstrap:,} resamples is past the bootstrap's "
                     f"budget of {RESAMPLING_BUDGET:,}; --bootstrap {max(RESAMPLING_BUDGET // ev.questions, 1):,} "
                     f"or fewer resamples whole sessions")
    return notes


def _first(ev: Evaluation, line: int, total: int) -> str:
    """Where the first of ``total`` findings is (a run keeps no other line of them)."""
    return ("" if total == 1 else "the first at ") + lines_of(ev.traces, [line], 1)


def _corpus_notes(ev: Evaluation) -> list[str]:
    """Say what the corpus gave the traces, and what it could not."""
    use = ev.corpus
    if use is None:
        return []
    notes = []
    if use.identified:
        unmatched = (f"; {plural(use.unmatched, 'text has', 'texts have')} no corpus entry (ranked, relevant to "
                     f"nothing): {lines_of(ev.traces, use.unmatched_lines, use.unmatched)}" if use.unmatched else "")
        notes.append(f"{plural(use.identified, 'trace logs', 'traces log')} passage texts without ids: their ids "
                     f"come from {use.path} by text{unmatched}")
    if use.untexted:
        notes.append(f"{plural(use.untexted, 'retrieved id has', 'retrieved ids have')} no text in the trace or "
                     f"{use.path} (an empty passage for --metrics grounding): "
                     f"{lines_of(ev.traces, use.untexted_lines, use.untexted)}")
    return notes


def _scores_file_notes(ev: Evaluation, scores: ScoreFile) -> list[str]:
    """Say what of a --scores file joined no question, or was replaced."""
    notes: list[str] = []
    # A header alone: every score it names is undefined (a gate on one is skipped, or fails when strict).
    if not scores.rows:
        notes.append(f"scores file {quote(scores.source)} has a header and no rows: "
                     "no question has a score from it")
    unmatched = ev.unmatched_scores
    if unmatched:
        notes.append(f"{plural(len(unmatched), 'row', 'rows')} of {scores.source} "
                      f"{'matches' if len(unmatched) == 1 else 'match'} no gold question (ignored): "
                      f"{_listed([key for _, key in unmatched[:EXAMPLES]], len(unmatched))}")
    if scores.duplicates:
        notes.append(f"{plural(len(scores.duplicates), 'row', 'rows')} of {scores.source} "
                     f"{'was' if len(scores.duplicates) == 1 else 'were'} replaced by a later row for the same "
                     "question (the last counts): "
                     f"{_listed([k for _, k in scores.duplicates[:EXAMPLES]], len(scores.duplicates))}")
    return notes


def _operations_notes(ev: Evaluation) -> list[str]:
    """Say which latency, token and cost fields are missing or unreadable, and which scores are null."""
    notes: list[str] = []
    if ev.operations is not None:
        if ev.operations.method != "exact":
            notes.append("operations: the latency quantiles come from the partials' sketches (each within 1% of the "
                         "exact quantile)")
        for concept, count in ev.operations.counts().items():
            if count["questions"] and count["missing"]:
                what = "samples" if ev.repeats is not None else "questions"
                notes.append(f"operations: {count['missing']} of {ev.operations.traced} traced {what} have no "
                             f"{concept} (left out of its metrics, not counted as 0)")
    if ev.operations is not None and ev.operations.bad:
        fields = plural(ev.operations.bad, "latency, token or cost field", "latency, token or cost fields")
        notes.append(f"operations: {fields} could not be read (not a number from 0 to 1e15, or an end before its "
                     "start); counted as missing")
    for name, totals in ev.scores.items():
        if totals.nulls:
            notes.append(f"score {name}: {plural(totals.nulls, 'question has', 'questions have')} null or NaN "
                         f"(skipped); the mean is over {totals.values.n}")
    return notes


def repeat_notes(totals: RepeatTotals, pass_k: Sequence[int], bound: tuple[str, float] | None) -> list[str]:
    """Say which questions repeated samples leave out of a metric, and which fail min_pass_rate."""
    notes = [f"samples: {plural(totals.samples, 'sample', 'samples')} of "
             f"{plural(totals.questions, 'question', 'questions')}; every metric weighs each question the same"]
    for k, short in zip(pass_k, totals.short, strict=True):
        if short:
            notes.append(f"samples: {short:,} of {totals.questions:,} questions have fewer than {k} samples "
                         f"(left out of pass@{k} and pass^{k})")
    if totals.single:
        notes.append(f"samples: {plural(totals.single, 'question has', 'questions have')} one sample (left out of "
                     "consistency and flip_rate)")
    below, first = totals.below(*bound) if bound is not None else (0, ())
    if below:
        shown = ", ".join(f"{b.qid} ({b.correct} of {b.n} correct)" for b in first[:EXAMPLES])
        more = ", ..." if below > min(EXAMPLES, len(first)) else ""
        notes.append(f"min_pass_rate: {plural(below, 'question fails', 'questions fail')} the gate: {shown}{more}")
    return [clean(note) for note in notes]  # qids come from the input


def _why_unseen(metric: str) -> str:
    """Say why a gated name has no value: which traces or settings would give it."""
    family = spec.family if (spec := lookup(metric)) is not None else None
    if family == "operations":
        return "(no trace carries latency, tokens or cost)"
    if family == "repeats":
        return """(a metric of repeated samples, --repeats samples; no trace's "scores" gave it either)"""
    if family == "monitor":
        return """(a metric of ragscore monitor; no trace's "scores" gave it either)"""
    return """(no trace's "scores" and no --scores row gave it)"""


def gate_lines(results: list[GateResult], passed: bool, slice_failed: list[str] | None = None) -> list[str]:
    """Give one verdict line per gate when any gate did not pass, and a closing verdict.

    ``slice_failed`` names the failed slice gates (``precision[tags.lang=de]``), listed by
    ``slice_notes`` above; they count in the verdict. Their slice labels come from the input:
    control characters in them show as escapes.
    """
    lines = []
    if any(r.status is not Status.PASS for r in results):
        for r in results:
            unseen = "" if r.seen else f": the run never saw {quote(r.gate.metric)} " + _why_unseen(r.gate.metric)
            lines.append(f"{r.status.value.upper():7} {r.gate.metric} = {fmt(r.value)} "
                         f"(gate {gate_bound(r.gate.op, r.gate.threshold)}){unseen}")
    slice_failed = slice_failed or []
    shown = slice_failed[:EXAMPLES] + ([f"{len(slice_failed) - EXAMPLES} more"] if len(slice_failed) > EXAMPLES else [])
    failed = [r.gate.metric for r in results if r.status is Status.FAIL] + shown
    if passed:
        lines.append(f"pass: {plural(len(results), 'gate', 'gates')} checked, none failed")
    elif slice_failed:
        lines.append(f"FAIL: {len(failed) - len(shown)} of {plural(len(results), 'gate', 'gates')} failed, "
                     f"and {plural(len(slice_failed), 'slice gate', 'slice gates')}: {', '.join(failed)}")
    else:
        lines.append(f"FAIL: {len(failed)} of {plural(len(results), 'gate', 'gates')} failed: {', '.join(failed)}")
    return [clean(line) for line in lines]


def slice_notes(slices: Mapping[str, Mapping[str, SliceResult]], min_n: int) -> list[str]:
    """Name each failed slice gate, and the slices too small to gate, one line each.

    Past ``EXAMPLES`` lines of one kind for a field (a field may have thousands of slices), one
    summary line names the first few instead.
    """
    notes = []
    for path, groups in slices.items():
        small = [f"slice {path}={label} has {result.n} questions (fewer than min_n {min_n}): its gates are skipped"
                 for label, result in groups.items() if result.small and result.gates]
        if len(small) > EXAMPLES:
            first = [f"{shorten(label, 40)} ({result.n})" for label, result in groups.items()
                     if result.small and result.gates][:EXAMPLES]
            small = [f"{len(small)} slices of {path} have fewer than min_n {min_n} questions: their gates are skipped "
                     f"(e.g. {', '.join(first)})"]
        failed = [(label, r) for label, result in groups.items() for r in result.gates if r.status is Status.FAIL]
        lines = [f"FAIL    {r.gate.metric}[{path}={label}] = {fmt(r.value)} "
                 f"(gate {gate_bound(r.gate.op, r.gate.threshold)})" for label, r in failed]
        if len(lines) > EXAMPLES:
            lines = lines[:EXAMPLES] + [f"FAIL    {len(lines) - EXAMPLES} more slice gates of {path} failed "
                                        "(every one is in the reports)"]
        notes += small + lines
    return [clean(note) for note in notes]  # slice labels come from the input


