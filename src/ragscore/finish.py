"""Adding up the parts of a run (``combine``) and finishing the judged run (``finish``): one process's
result, several workers', or partials merged, all end here, so they report the same."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import reduce
from itertools import chain
from operator import add
from typing import Final

from ragscore.diagnose.samples import Picked, keep_worst
from ragscore.errors import InputError
from ragscore.external import check_name_count, merge_totals
from ragscore.loaders.gold import NO_QUESTIONS
from ragscore.loaders.jsonl import InputFile
from ragscore.loaders.records import Records, no_trace_records
from ragscore.loaders.trace import path_key
from ragscore.metrics.answer import AnswerTally
from ragscore.metrics.families import Totals
from ragscore.metrics.moments import Moments
from ragscore.metrics.names import lookup
from ragscore.metrics.repeats import RepeatTotals
from ragscore.metrics.sessions import sessions
from ragscore.operations import Operations
from ragscore.quoting import quote
from ragscore.results import (
    CLAIM_PICKS,
    EXAMPLES,
    Evaluation,
    PartResult,
    Unreadable,
    Wants,
)
from ragscore.rows import Rows
from ragscore.settings import Settings


def unreadable_hint(example: Unreadable, fmt: str) -> str:
    """Say what an unreadable trace holds and how it could be read."""
    keys = ", ".join(map(quote, example.keys[:8])) + (", ..." if len(example.keys) > 8 else "")
    shown = f"its keys are {keys}" if example.keys else "it has no keys"
    if example.looks_like != fmt and example.looks_like != "native":
        return f"{shown}: did you mean --trace-format {example.looks_like}?"
    claim_like = next((key for key in example.keys if key.lower() in CLAIM_LIKE), None)
    if claim_like is not None:
        return f"{shown}: did you mean --map claim={path_key(claim_like)}?"
    return f"{shown}: map the claim with --map claim=PATH (see \"Your traces\" in the README)"


# Keys that usually hold a pipeline's answer, for the hint of an unreadable trace.
CLAIM_LIKE: Final = frozenset({
    "answer", "claim", "result", "response", "output", "text", "completion", "generation", "content", "prediction",
    "reply",
    "final_answer", "answer_text", "response_text", "output_text", "generated_text", "llm_output", "prediction_text",
})


def per_question_metric(name: str) -> bool:
    spec = lookup(name)
    return spec is None or spec.kind not in ("count", "corpus")


def combine(parts: Sequence[PartResult]) -> PartResult:
    """Add up the results of disjoint parts of the questions into one: in any grouping and any
    order, the same result (counts and the exact summaries of values add; examples and picks
    keep what the whole would keep). Input errors keep the one that comes first."""
    if len(parts) == 1:
        return parts[0]
    # The format the traces were read in: a part that read none (records of an engine) detected nothing.
    read = next((p for p in parts if p.accounting.lines), parts[0])
    out = PartResult(questions=sum(p.questions for p in parts), one_process=any(p.one_process for p in parts),
                     trace_format=read.trace_format, gold_ragas=parts[0].gold_ragas, digests=parts[0].digests)
    errors = [p.error for p in parts if p.error is not None]
    if errors:  # finish() raises it (or says that there are no questions): nothing else is needed
        out.error = min(errors)
        return out
    out.tally = AnswerTally.total(p.tally for p in parts)
    out.accounting = parts[0].accounting
    for p in parts[1:]:
        out.accounting = out.accounting + p.accounting
    out.columns = [Totals.total(columns) for columns in zip(*(p.columns for p in parts), strict=True)]
    out.missing_ids = sorted(pair for p in parts for pair in p.missing_ids)[:EXAMPLES]
    out.rows = Rows([p.rows for p in parts])
    out.explained = {qid: e for p in parts for qid, e in p.explained.items()}
    out.samples = {name: sorted(chain.from_iterable(p.samples.get(name, ()) for p in parts), key=_pick_order)
                   for name in dict.fromkeys(name for p in parts for name in p.samples)}
    out.scores = merge_totals([p.scores for p in parts])
    if any(p.operations is not None for p in parts):  # a part whose traces carry none: its questions lack them all
        out.operations = reduce(add, (p.operations or Operations.none(p.tally.traced) for p in parts))
    if any(p.repeats is not None for p in parts):
        out.repeats = reduce(add, (p.repeats or RepeatTotals() for p in parts))
    out.matched_scores = sorted({key for p in parts for key in p.matched_scores})
    # The first line of each score name; names first met on one line stay in that line's order.
    first: dict[str, tuple[int, int]] = {}
    for p in parts:
        for index, (name, line) in enumerate(p.score_lines.items()):
            first[name] = min(first.get(name, (line, index)), (line, index))
    out.score_lines = {name: first[name][0] for name in sorted(first, key=first.__getitem__)}
    out.mapped_found = {concept: sum(p.mapped_found.get(concept, 0) for p in parts)
                        for concept in parts[0].mapped_found}
    out.document_ids = {path: sum(p.document_ids.get(path, 0) for p in parts)
                        for path in sorted({path for p in parts for path in p.document_ids})}
    uses = [p.corpus for p in parts if p.corpus is not None]
    out.corpus = reduce(add, uses) if uses else None
    out.chunks = next((p.chunks for p in parts if p.chunks is not None), None)  # every part read the same file
    if any(p.turns is not None for p in parts):
        out.turns = sorted(chain.from_iterable(p.turns or () for p in parts))
    if all(p.answer_moments is not None for p in parts):
        out.answer_moments = [Moments.total_of(column) for column in zip(*(p.answer_moments or () for p in parts),
                                                                         strict=True)]
    out.gold_keys = _first_lines(p.gold_keys for p in parts)
    out.trace_keys = _first_lines(p.trace_keys for p in parts)
    return out


def _pick_order(pick: Picked) -> tuple[float, str]:
    return pick[0], pick[1]


def merge(
    parts: list[PartResult], gold: InputFile | Records, traces: InputFile | Records, settings: Settings, wants: Wants,
    digests: tuple[str, str] | None = None,
) -> Evaluation:
    """Add up the parts; raise the error that comes first in the files, as one process would."""
    return finish(combine(parts), gold, traces, settings, wants, digests)


def finish(
    part: PartResult, gold: InputFile | Records, traces: InputFile | Records, settings: Settings, wants: Wants,
    digests: tuple[str, str] | None = None,
) -> Evaluation:
    """Turn the result of every part, added up, into the judged run (or raise its input error)."""
    if part.error is not None and (part.error.phase == 0 or part.questions):
        raise part.error.raised()
    if not part.questions:
        raise InputError(gold.name, NO_QUESTIONS)
    accounting = part.accounting
    if not accounting.lines:  # every question MISSING_TRACE would report a run that never happened
        raise no_trace_records(traces)
    settings = replace(settings, trace_format=part.trace_format)
    if accounting.unreadable_bare * 2 > accounting.lines:
        examples = accounting.unreadable_examples
        line, example = next(((n, e) for n, e in examples if e.bare), examples[0])
        raise traces.located(InputError(
            traces.name, f"{accounting.unreadable_bare:,} of {accounting.lines:,} traces have nothing ragscore reads "
                         f"(no claim, refusal, retrieved list, scores or tool calls; read as {settings.trace_format} "
                         f"format): {unreadable_hint(example, settings.trace_format)}", line))
    check_name_count([part.score_lines], wants.scores.names if wants.scores else (), traces.name)
    unmatched: list[tuple[int, str]] = []
    if wants.scores is not None:
        matched = set(part.matched_scores)
        unmatched = sorted((row.line, key) for key, row in wants.scores.rows.items() if key not in matched)
    digests = digests or part.digests
    assert digests is not None  # a single part reads both files whole; parallel runs pass them
    samples = keep_worst([part.samples], wants.samples)
    claims_alone = samples.pop(CLAIM_PICKS, [])
    if part.tally.cites_nothing and any(name == "precision" for name, _, _ in wants.targets):  # claims alone
        samples["precision"] = claims_alone
    return Evaluation(
        gold, traces, digests, settings, part.questions, part.tally, accounting, [q for _, q in part.missing_ids],
        part.rows if wants.rows else None, part.explained, part.columns, samples,
        part.scores, unmatched, gold_keys=part.gold_keys, trace_keys=part.trace_keys, mapped_found=part.mapped_found,
        document_ids=part.document_ids, gold_ragas=part.gold_ragas, operations=part.operations, repeats=part.repeats,
        corpus=part.corpus, chunks=part.chunks,
        sessions=None if part.turns is None else sessions(part.turns, settings.pass_k if settings.sampled else ()),
        answer_moments=part.answer_moments, turns=part.turns,
    )


def _first_lines(found: Iterable[dict[str, tuple[str, int]]]) -> dict[str, tuple[str, int]]:
    """Merge the near misses of several parts (the earliest line of each key)."""
    out: dict[str, tuple[str, int]] = {}
    for keys in found:
        for key, (suggestion, line) in keys.items():
            if key not in out or line < out[key][1]:
                out[key] = (suggestion, line)
    return out
